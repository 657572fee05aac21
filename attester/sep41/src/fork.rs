//! Fork mode, the default for a contract on a network: the suite runs on an embedded network
//! forked from the network's ledger (see `assay_localnet::ForkConfig`). No secret is read,
//! nothing is signed for the real network, nothing is sent to it: the upstream only answers
//! reads (`getNetwork`, `getLatestLedger`, `getLedgerEntries`, `getHealth`, `getEvents`).
//!
//! The holder and spender are accounts created inside the fork with keys generated for it. The
//! holder's units come from the first premise that works: `--holder ADDRESS` (its balance moved
//! inside the fork, authorized as that address there only), a holder discovered from the
//! token's recent `transfer`/`mint` events, or `mint(holder, amount)` as the admin `admin()`
//! names. With none, the value-moving rows are UNVERIFIABLE and say to pass `--holder`.
//!
//! A permissioned token (allowlist, identity verification) refuses the move to a fresh account.
//! The suite's holder is then that existing holder's own address (premise `holder-address`): its
//! writes are authorized as that address by the fork's host, inside the fork only.
use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use assay_chain::holders::{holders_in_events, HolderScanError};
use assay_chain::{parse_address, rpc::RpcClient, strkey_of, NetworkClient, ReadOutcome, Signer};
use assay_localnet::{ForkConfig, LocalNet, LocalNetConfig, LocalNetError};
use stellar_xdr::{Asset, ScAddress, ScVal};

use crate::{
    chain::{ForkHolder, RpcChain},
    checks::{i128_of, i128_val, run_suite, Party},
    live::{contract_members, LiveError},
    model::{ForkFacts, Report},
    offline::{
        classic_asset, create_accounts, embedded_network, embedded_party, embedded_suite_config,
    },
};

/// Why a step of setting the fork's parties up did not work: the fork's own answer, or the
/// token's, named so the run can say which premise was tried and why it failed.
#[derive(Debug, thiserror::Error)]
pub enum PremiseError {
    /// The local network refused an admin write or an authorized call.
    #[error(transparent)]
    Fork(#[from] LocalNetError),
    /// The upstream the fork reads events from failed.
    #[error(transparent)]
    Upstream(#[from] assay_chain::rpc::RpcError),
    /// A Stellar Asset Contract's `name()` did not read as `CODE:ISSUER` text.
    #[error("the asset contract's name() read {0}")]
    SacName(String),
    /// The fork cache's recorded candidates do not decode.
    #[error("the cache's candidates: {0}")]
    CachedCandidates(String),
    /// A replayed cache without recorded candidates, and no upstream to ask.
    #[error("no upstream to ask for events (replaying a cache recorded without discovery)")]
    NoUpstream,
    /// A holder's balance does not read as an amount in the fork.
    #[error("its balance is unreadable in the fork")]
    UnreadableBalance,
    /// The spec lacks `mint` or `admin`.
    #[error("the contract's spec does not declare both mint and admin")]
    NoMint,
    /// `admin()` did not name an address.
    #[error("admin() did not name an address ({0})")]
    NoAdmin(String),
    /// The upstream answered getEvents with a value that does not decode within the limits of
    /// every RPC answer: it is broken or hostile, and the run does not rest on it.
    #[error("the upstream sent an event that does not decode: {0}")]
    UndecodableEvent(String),
}

/// Why a holder's balance was not moved to the fork's holder.
enum TakeOver {
    /// The token refused the transfer (a permissioned token refusing the fresh recipient, say):
    /// the holder holds `units` and may act as the suite's holder itself.
    Refused { units: i128, error: String },
    /// Its balance could not be read, or the fork failed.
    Premise(PremiseError),
}

/// Units minted to the holder under the `mint` premise.
pub const MINTED_UNITS: i128 = 1_000;
/// Times a run starts again at the upstream's latest ledger after drift before it reports drift.
const MAX_REPINS: usize = 1;
/// Where a run records drift it could not resolve in the fork cache, so a replay reports it too.
const DRIFT_NOTE: &str = "sep41.drifted";
/// Where a run records the discovered candidates in the fork cache, for a replay.
const CANDIDATES_NOTE: &str = "sep41.holder_candidates";
/// SAC trustline flag AUTHORIZED.
const TRUSTLINE_AUTHORIZED: u32 = 0x1;

/// How to fork and whom to use.
#[derive(Debug, Clone)]
pub struct ForkOptions {
    /// The network's stellar-rpc (not needed to replay an existing `cache`).
    pub rpc_url: Option<String>,
    pub passphrase: String,
    /// The ledger to fork at (the latest when `None`).
    pub ledger: Option<u32>,
    /// `--fork-cache FILE`: replayed offline when it exists, recorded when it does not.
    pub cache: Option<PathBuf>,
    /// `--holder ADDRESS`: an existing holder whose balance the suite's holder takes over.
    pub holder: Option<String>,
    /// The fork's ledger close interval.
    pub ledger_close_ms: u64,
    /// A step on the fork once the holder is funded (power discovery), whose exercised mint and clawback
    /// the event rows judge.
    pub before_suite: Option<crate::hook::BeforeSuite>,
}

/// A finished fork run and what it cost.
#[derive(Debug)]
pub struct ForkRun {
    pub report: Report,
    /// Calls to the upstream's stellar-rpc (ledger entries, events, network facts).
    pub upstream_round_trips: u64,
    /// The run replayed a cache file without the upstream.
    pub offline: bool,
    pub time: Duration,
    /// What the discovery before the suite found ([`ForkOptions::before_suite`]), when one ran.
    pub powers: Option<crate::hook::Discovered>,
    /// How long that discovery took (included in `time`).
    pub discovery_time: Duration,
}

/// Runs the suite against `contract` on a fork of the network. An entry read that changed
/// upstream after the fork ledger (drift) makes the run start again at the upstream's latest
/// ledger, once; drift that remains (or a ledger pinned by `--fork-ledger`, or a cache replay)
/// is recorded in the report, which is then undetermined.
pub fn run_fork(contract: &ScAddress, options: &ForkOptions) -> Result<ForkRun, LiveError> {
    let started = Instant::now();
    let contract_text = strkey_of(contract);
    if !matches!(contract, ScAddress::Contract(_)) {
        return Err(LiveError::Usage(format!(
            "{contract_text} is not a contract address (C…)"
        )));
    }
    let holder_given = match &options.holder {
        Some(text) => Some(
            parse_address(text)
                .map_err(|e| LiveError::Usage(format!("--holder: {e} (expected G… or C…)")))?,
        ),
        None => None,
    };
    let recording = options.cache.as_ref().is_some_and(|p| !p.exists());
    let mut repinned_from = Vec::new();
    let mut round_trips = 0;
    loop {
        let mut run = run_pinned(contract, options, holder_given.as_ref(), recording)?;
        round_trips += run.upstream_round_trips;
        let offline = run.offline;
        let facts = run
            .report
            .fork
            .as_mut()
            .expect("a fork run records its facts");
        let may_repin = options.ledger.is_none() && !offline && repinned_from.len() < MAX_REPINS;
        if facts.drifted.is_empty() || !may_repin {
            facts.repinned_from = repinned_from;
            run.upstream_round_trips = round_trips;
            run.time = started.elapsed();
            return Ok(run);
        }
        eprintln!(
            "fork: {} entries read changed upstream after ledger {}; starting again at the \
             upstream's latest ledger",
            facts.drifted.len(),
            facts.ledger
        );
        repinned_from.push(facts.ledger);
        if let Some(cache) = options.cache.as_ref().filter(|_| recording) {
            // Recorded at the abandoned ledger: the next attempt records its own.
            match std::fs::remove_file(cache) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(LiveError::Incomplete(format!(
                        "cannot remove the fork cache {} recorded at the drifted ledger: {e}",
                        cache.display()
                    )))
                }
                _ => {}
            }
        }
    }
}

/// A fork started for one attempt: the local network, its statistics at the start, and how its upstream is
/// named in messages (the RPC origin, or the cache file).
struct Pinned {
    localnet: LocalNet,
    stats: assay_localnet::ForkStats,
    upstream_shown: Option<String>,
    place: String,
}

impl Pinned {
    /// Starts the fork at the option's ledger (or the upstream's latest) and checks it serves the network
    /// the options name.
    fn start(options: &ForkOptions) -> Result<Pinned, LiveError> {
        let upstream_shown = options.rpc_url.as_deref().map(assay_core::redact::origin);
        let localnet = LocalNet::start_fork(
            LocalNetConfig {
                port: 0,
                ledger_close_ms: options.ledger_close_ms,
                passphrase: options.passphrase.clone(),
            },
            ForkConfig {
                rpc_url: options.rpc_url.clone(),
                ledger: options.ledger,
                cache: options.cache.clone(),
            },
        )
        .map_err(|e| match e {
            LocalNetError::ForkLedger(message) => LiveError::Usage(message),
            e => LiveError::Incomplete(format!("cannot start the fork: {e}")),
        })?;
        if localnet.passphrase() != options.passphrase {
            return Err(LiveError::Usage(format!(
                "the RPC server at {} serves {:?}, not {:?}; fix --rpc-url or --network-passphrase",
                upstream_shown.as_deref().unwrap_or("(cache file)"),
                localnet.passphrase(),
                options.passphrase
            )));
        }
        let stats = localnet.fork_stats().expect("a fork reports its stats");
        let place = match (&upstream_shown, stats.offline) {
            (_, true) | (None, _) => "the fork cache".to_string(),
            (Some(u), false) => u.clone(),
        };
        eprintln!("fork: ledger {} of {place}", stats.ledger);

        Ok(Pinned {
            localnet,
            stats,
            upstream_shown,
            place,
        })
    }
}

/// The suite's holder when the fork acts as an existing holder's own address.
fn adopted_party(address: &ScAddress) -> Party {
    Party {
        address: address.clone(),
        generated: false,
        can_sign: true,
        key_hint: "its writes are authorized as this address inside the fork only".into(),
        address_hint: "an existing holder of the token, acted for inside the fork".into(),
    }
}

/// One attempt of [`run_fork`]: a fork pinned at the option's ledger (or the upstream's latest),
/// the premises, the suite, and the entries that drifted.
fn run_pinned(
    contract: &ScAddress,
    options: &ForkOptions,
    holder_given: Option<&ScAddress>,
    recording: bool,
) -> Result<ForkRun, LiveError> {
    let started = Instant::now();
    let contract_text = strkey_of(contract);
    let Pinned {
        localnet,
        stats,
        upstream_shown,
        place,
    } = Pinned::start(options)?;
    let network = embedded_network(&localnet, options.ledger_close_ms);
    let (declared, is_sac) = contract_members(&network, contract, &place)?;
    let (holder, spender) = (Signer::generate(), Signer::generate());
    let setup =
        |e: &dyn std::fmt::Display| LiveError::Incomplete(format!("cannot set up the fork: {e}"));
    create_accounts(&localnet, &network, &[&holder, &spender]).map_err(|e| setup(&e))?;
    if is_sac {
        trust_sac(&localnet, &network, contract, &[&holder, &spender]).map_err(|e| setup(&e))?;
    }
    let discovery = Discovery {
        upstream: match (&options.rpc_url, stats.offline) {
            (Some(url), false) => RpcClient::new(url).ok(),
            _ => None,
        },
        ledger: stats.ledger,
        named: OnceCell::new(),
    };
    // Read before any premise is used: an upstream whose events do not decode ends the run.
    if let Err(e @ PremiseError::UndecodableEvent(_)) = discovery.candidates(&localnet, contract) {
        return Err(LiveError::Incomplete(format!(
            "cannot use the upstream at {}: {e}",
            upstream_shown.as_deref().unwrap_or("(cache file)")
        )));
    }
    let funder = Funder {
        localnet: &localnet,
        network: &network,
        contract,
        holder: &holder,
    };
    let Funding {
        premise,
        detail,
        adopted,
    } = funder.fund(holder_given, &discovery, declared.as_ref(), is_sac);

    let holder_party = match &adopted {
        Some(address) => adopted_party(address),
        None => embedded_party(&holder),
    };
    // Discovery watches the address that holds the units: the suite's holder, or the one it adopted.
    let discovery_started = Instant::now();
    let (powers, exercised) = crate::hook::BeforeSuite::run(
        options.before_suite.as_ref(),
        &localnet,
        contract,
        &[adopted.clone().unwrap_or_else(|| holder.sc_address())],
    );
    let mut config = embedded_suite_config(
        holder_party,
        embedded_party(&spender),
        declared,
        options.ledger_close_ms,
    );
    config.exercised_mint = exercised.mint;
    config.exercised_clawback = exercised.clawback;
    let discovery_time = discovery_started.elapsed();
    config.funding_hint = format!(
        "no premise gave the fork's holder units ({detail}); pass --holder ADDRESS (an account \
         holding this token) to move its balance to the suite's holder inside the fork"
    );
    let mut chain = RpcChain::embedded(&network, contract, &holder, &spender);
    chain.fork_holder = adopted.map(|address| ForkHolder {
        localnet: &localnet,
        address,
    });
    let results = run_suite(&mut chain, &config);
    let stats = localnet.fork_stats().expect("a fork reports its stats");
    let drifted = drifted(&localnet, &stats, recording).map_err(|e| setup(&e))?;
    Ok(ForkRun {
        report: Report {
            contract_id: contract_text,
            network: place,
            ran_at: assay_core::Timestamp::now().to_string(),
            results,
            fork: Some(ForkFacts {
                ledger: stats.ledger,
                premise,
                detail,
                repinned_from: Vec::new(),
                drifted,
            }),
        },
        upstream_round_trips: stats.upstream_round_trips
            + discovery
                .upstream
                .as_ref()
                .map_or(0, RpcClient::round_trips),
        offline: stats.offline,
        time: started.elapsed(),
        powers,
        discovery_time,
    })
}

/// The entries that drifted in this attempt, or those the replayed cache recorded as drifted.
/// A recording run notes its drift in the cache, so the replay is undetermined too.
fn drifted(
    localnet: &LocalNet,
    stats: &assay_localnet::ForkStats,
    recording: bool,
) -> Result<Vec<String>, LocalNetError> {
    if stats.offline {
        let noted = localnet.fork_noted(DRIFT_NOTE);
        return Ok(noted
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default());
    }
    if recording && !stats.drifted.is_empty() {
        localnet.fork_note(DRIFT_NOTE, serde_json::json!(stats.drifted))?;
    }
    Ok(stats.drifted.clone())
}

/// A Stellar Asset Contract pays only accounts with a trustline: give the fork's parties
/// authorized ones (an admin write inside the fork; the issuer's approval is not needed there).
fn trust_sac(
    localnet: &LocalNet,
    network: &NetworkClient,
    contract: &ScAddress,
    parties: &[&Signer],
) -> Result<(), PremiseError> {
    let reader = parties[0].account_id();
    let name = match network.read(&reader, contract, "name", vec![]) {
        Ok(ReadOutcome::Value(ScVal::String(s))) => {
            String::from_utf8_lossy(s.as_slice()).into_owned()
        }
        other => return Err(PremiseError::SacName(format!("{other:?}"))),
    };
    let Some(asset) = asset_of(&name) else {
        return Ok(()); // native XLM: every account holds it
    };
    for party in parties {
        localnet.admin_set_trustline(
            &party.account_id(),
            &asset,
            0,
            i64::MAX,
            TRUSTLINE_AUTHORIZED,
        )?;
    }
    Ok(())
}

/// The classic asset a SAC's `name()` ("CODE:ISSUER") names; `None` for "native".
fn asset_of(name: &str) -> Option<Asset> {
    let (code, issuer) = name.split_once(':')?;
    match parse_address(issuer).ok()? {
        ScAddress::Account(issuer) => classic_asset(code, issuer),
        _ => None,
    }
}

/// Where discovery asks for the token's events.
struct Discovery {
    /// `None` when replaying a cache file: the candidates come from the file's notes.
    upstream: Option<RpcClient>,
    ledger: u32,
    /// The addresses named, once read (the funder asks again after the run's own check).
    named: OnceCell<Vec<String>>,
}

impl Discovery {
    /// Addresses the token's recent `transfer` and `mint` events name, most recent first.
    fn candidates(
        &self,
        localnet: &LocalNet,
        contract: &ScAddress,
    ) -> Result<Vec<ScAddress>, PremiseError> {
        let texts = match self.named.get() {
            Some(texts) => texts.clone(),
            None => {
                let texts: Vec<String> = match &self.upstream {
                    None => match localnet.fork_noted(CANDIDATES_NOTE) {
                        Some(v) => serde_json::from_value(v)
                            .map_err(|e| PremiseError::CachedCandidates(e.to_string()))?,
                        None => return Err(PremiseError::NoUpstream),
                    },
                    Some(client) => {
                        let texts = self.named_in_events(client, contract)?;
                        localnet.fork_note(CANDIDATES_NOTE, serde_json::json!(texts))?;
                        texts
                    }
                };
                self.named.get_or_init(|| texts).clone()
            }
        };
        Ok(texts.iter().filter_map(|t| parse_address(t).ok()).collect())
    }

    /// Reads the newest events first (`assay_chain::holders`), decoding every topic within the limits
    /// of any RPC answer.
    fn named_in_events(
        &self,
        client: &RpcClient,
        contract: &ScAddress,
    ) -> Result<Vec<String>, PremiseError> {
        holders_in_events(client, contract, self.ledger).map_err(PremiseError::from)
    }
}

impl From<HolderScanError> for PremiseError {
    fn from(e: HolderScanError) -> PremiseError {
        match e {
            HolderScanError::Rpc(e) => PremiseError::Upstream(e),
            HolderScanError::UndecodableEvent(m) => PremiseError::UndecodableEvent(m),
        }
    }
}

/// How the fork's holder got its units.
struct Funding {
    /// `holder`, `discovered`, `holder-address`, `mint` or `none` ([`ForkFacts::premise`]).
    premise: &'static str,
    /// The premise in words: which address, how many units, or what was tried.
    detail: String,
    /// `holder-address`: the existing holder the suite acts as, its move to the fork's holder
    /// having been refused.
    adopted: Option<ScAddress>,
}

impl Funding {
    fn of(premise: &'static str, detail: String) -> Funding {
        Funding {
            premise,
            detail,
            adopted: None,
        }
    }
}

/// Gives the fork's holder units, inside the fork only.
struct Funder<'a> {
    localnet: &'a LocalNet,
    network: &'a NetworkClient,
    contract: &'a ScAddress,
    holder: &'a Signer,
}

impl Funder<'_> {
    /// The first premise that works: the given holder, a discovered one, then mint. A holder
    /// whose move to the fork's holder the token refused is adopted as the suite's holder when no
    /// premise funds the fork's own. Returns what worked (what was tried, when nothing did).
    fn fund(
        &self,
        given: Option<&ScAddress>,
        discovery: &Discovery,
        declared: Option<&BTreeSet<String>>,
        is_sac: bool,
    ) -> Funding {
        let mut tried = Vec::new();
        // An existing holder the token refused to move from: (address, units, refusal).
        let mut refused: Option<(ScAddress, i128, String)> = None;
        if let Some(address) = given {
            match self.take_over(address) {
                Ok(units) if units > 0 => {
                    return Funding::of(
                        "holder",
                        format!("{units} units moved from --holder {}", strkey_of(address)),
                    )
                }
                Ok(_) => tried.push(format!("--holder {} holds no units", strkey_of(address))),
                Err(TakeOver::Refused { units, error }) => {
                    tried.push(format!("--holder {}: {error}", strkey_of(address)));
                    refused = Some((address.clone(), units, error));
                }
                Err(TakeOver::Premise(e)) => {
                    tried.push(format!("--holder {}: {e}", strkey_of(address)))
                }
            }
        }
        match discovery.candidates(self.localnet, self.contract) {
            Ok(candidates) if candidates.is_empty() => {
                tried.push("the token's recent events name no holder".into())
            }
            Ok(candidates) => match self.richest(&candidates) {
                Some((address, _)) => match self.take_over(&address) {
                    Ok(units) if units > 0 => {
                        return Funding::of(
                            "discovered",
                            format!(
                                "{units} units moved from {}, the largest holder the token's recent events name",
                                strkey_of(&address)
                            ),
                        )
                    }
                    Ok(_) => tried.push("the discovered holder holds no units".into()),
                    Err(TakeOver::Refused { units, error }) => {
                        tried.push(format!("discovered holder {}: {error}", strkey_of(&address)));
                        refused = refused.or(Some((address.clone(), units, error)));
                    }
                    Err(TakeOver::Premise(e)) => {
                        tried.push(format!("discovered holder {}: {e}", strkey_of(&address)))
                    }
                },
                None => tried.push(format!(
                    "none of the {} holders the token's recent events name holds units",
                    candidates.len()
                )),
            },
            Err(e) => tried.push(format!("discovery: {e}")),
        }
        match self.mint(declared, is_sac) {
            Ok(admin) => {
                return Funding::of(
                    "mint",
                    format!(
                        "{MINTED_UNITS} units minted as the admin {}",
                        strkey_of(&admin)
                    ),
                )
            }
            Err(e) => tried.push(format!("mint: {e}")),
        }
        if let Some((address, units, error)) = refused {
            return Funding {
                premise: "holder-address",
                detail: format!(
                    "the token refused to move {units} units from {} to a fresh account ({error}), \
                     so the suite acts as {} itself, authorized as that address inside the fork \
                     only",
                    strkey_of(&address),
                    strkey_of(&address)
                ),
                adopted: Some(address),
            };
        }
        Funding::of("none", tried.join("; "))
    }

    fn balance(&self, address: &ScAddress) -> Option<i128> {
        let read = self.network.read(
            &self.holder.account_id(),
            self.contract,
            "balance",
            vec![ScVal::Address(address.clone())],
        );
        match read {
            Ok(ReadOutcome::Value(ScVal::I128(p))) => Some(i128_of(&p)),
            _ => None,
        }
    }

    /// The candidate with the largest positive balance in the fork.
    fn richest(&self, candidates: &[ScAddress]) -> Option<(ScAddress, i128)> {
        candidates
            .iter()
            .filter_map(|a| Some((a.clone(), self.balance(a)?)))
            .filter(|(_, b)| *b > 0)
            .max_by_key(|(_, b)| *b)
    }

    /// Moves `from`'s whole balance to the fork's holder, authorized as `from` in the fork only.
    fn take_over(&self, from: &ScAddress) -> Result<i128, TakeOver> {
        let units =
            (self.balance(from)).ok_or(TakeOver::Premise(PremiseError::UnreadableBalance))?;
        if units <= 0 {
            return Ok(0);
        }
        let args = vec![
            ScVal::Address(from.clone()),
            ScVal::Address(self.holder.sc_address()),
            i128_val(units),
        ];
        match (self.localnet).invoke_authorized_as(from, self.contract, "transfer", args) {
            Ok(_) => Ok(units),
            Err(LocalNetError::Invoke(error)) => Err(TakeOver::Refused { units, error }),
            Err(e) => Err(TakeOver::Premise(e.into())),
        }
    }

    /// `mint(holder, MINTED_UNITS)` as the admin `admin()` names, when the token has both.
    fn mint(
        &self,
        declared: Option<&BTreeSet<String>>,
        is_sac: bool,
    ) -> Result<ScAddress, PremiseError> {
        let has = |f: &str| declared.map_or(is_sac, |d| d.contains(f));
        if !has("mint") || !has("admin") {
            return Err(PremiseError::NoMint);
        }
        let admin =
            match self
                .network
                .read(&self.holder.account_id(), self.contract, "admin", vec![])
            {
                Ok(ReadOutcome::Value(ScVal::Address(a))) => a,
                other => return Err(PremiseError::NoAdmin(format!("{other:?}"))),
            };
        let args = vec![
            ScVal::Address(self.holder.sc_address()),
            i128_val(MINTED_UNITS),
        ];
        self.localnet
            .invoke_authorized_as(&admin, self.contract, "mint", args)?;
        Ok(admin)
    }
}
