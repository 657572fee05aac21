//! Reacting to the ledger between passes: every `react_every_ledgers` ledgers, one batched
//! `getLedgerEntries` reads what a verdict rests on for every watched asset — the issuer account of a
//! classic asset (its flags and home domain) and the contract instance of its Stellar Asset Contract or of
//! a token contract (its executable, so a code update, and its instance storage, where a SAC keeps its
//! admin, so `set_admin`) — and the assets whose entries changed are checked at once, under the same
//! freshness and revoke-on-stricter-floor rules as any pass. A SAC watched by its `C…` is judged by its
//! issuer's flags, so its issuer account, learned from the instance's `AssetInfo`, is followed too.
//! Reading the entries rather than following events keeps one call per poll for all three kinds of
//! change, and misses none across a restart. An entry seen for the first time only sets its baseline.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use assay_core::Token;
use serde_json::json;
use sha2::{Digest, Sha256};
use stellar_xdr::{
    ContractDataDurability, ContractExecutable, ContractId, Hash, LedgerEntryData, LedgerKey,
    LedgerKeyAccount, LedgerKeyContractData, Limits, ScAddress, ScSymbol, ScVal, WriteXdr,
};

use assay_chain::rpc::RpcClient;

use super::log::log;
use crate::registry::account_id;

/// Keys per `getLedgerEntries` call (stellar-rpc's limit is 200).
pub const KEYS_PER_CALL: usize = 200;

/// The shortest time between two polls, whatever the ledger rate: a ledger closes every ~5 s on the
/// public networks, so this only bounds the `getLatestLedger` calls.
pub const MIN_POLL_GAP: Duration = Duration::from_millis(200);

/// What a watched entry is, for the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watched {
    /// A classic asset's issuer account: flags and home domain.
    IssuerAccount,
    /// A token's contract instance: executable and instance storage (a SAC's admin).
    ContractInstance,
}

impl Watched {
    fn as_str(self) -> &'static str {
        match self {
            Watched::IssuerAccount => "issuer account (flags, home domain)",
            Watched::ContractInstance => "contract instance (code, admin)",
        }
    }
}

/// The reaction state of a watcher.
#[derive(Debug, Clone)]
pub struct Reaction {
    /// Poll every this many ledgers (at least 1).
    pub every_ledgers: u32,
    /// Whether the classic assets live on the registry's network, so their issuer accounts can be read
    /// through its stellar-rpc.
    pub issuers_readable: bool,
    /// The last fingerprint of each entry, by its key's XDR in base64.
    seen: BTreeMap<String, String>,
    /// Keys of `seen` changed since [`Reaction::take_unsaved`] last took them (workers sharing a
    /// database keep the baseline there, for the next leader).
    unsaved: std::collections::BTreeSet<String>,
    /// The issuer account of each watched Stellar Asset Contract, by contract, as its instance names it.
    sac_issuers: BTreeMap<[u8; 32], [u8; 32]>,
    polled_ledger: Option<u32>,
    polled_at: Option<Instant>,
}

impl Reaction {
    /// The ledger the last poll read at (none before the first poll).
    pub fn polled_ledger(&self) -> Option<u32> {
        self.polled_ledger
    }

    /// Takes another watcher's baseline (the last leader's, from the database): an entry it had seen that
    /// differs at the next poll is a change. Entries this reaction has seen itself are kept.
    pub fn adopt_baseline(&mut self, baseline: BTreeMap<String, String>) {
        for (key, fingerprint) in baseline {
            self.seen.entry(key).or_insert(fingerprint);
        }
    }

    /// The baseline entries `(key, fingerprint)` that changed since the last call.
    pub fn take_unsaved(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.unsaved)
            .into_iter()
            .filter_map(|key| self.seen.get(&key).map(|f| (key, f.clone())))
            .collect()
    }

    /// Reaction every `every_ledgers` ledgers (0 is taken as 1).
    pub fn new(every_ledgers: u32, issuers_readable: bool) -> Reaction {
        Reaction {
            every_ledgers: every_ledgers.max(1),
            issuers_readable,
            seen: BTreeMap::new(),
            unsaved: Default::default(),
            sac_issuers: BTreeMap::new(),
            polled_ledger: None,
            polled_at: None,
        }
    }
}

fn key_text(key: &LedgerKey) -> String {
    key.to_xdr_base64(Limits::none())
        .expect("a ledger key encodes")
}

fn instance_key(contract: [u8; 32]) -> LedgerKey {
    LedgerKey::ContractData(LedgerKeyContractData {
        contract: ScAddress::Contract(ContractId(Hash(contract))),
        key: ScVal::LedgerKeyContractInstance,
        durability: ContractDataDurability::Persistent,
    })
}

/// What of an entry can change a verdict: an account's flags and home domain (not its balance or
/// sequence number, which change with every payment), or a contract instance as a whole.
fn fingerprint(data: &LedgerEntryData) -> String {
    match data {
        LedgerEntryData::Account(a) => format!(
            "flags={} home_domain={}",
            a.flags,
            String::from_utf8_lossy(a.home_domain.as_slice())
        ),
        other => hex::encode(Sha256::digest(
            other.to_xdr(Limits::none()).unwrap_or_default(),
        )),
    }
}

/// The contract and issuer of a Stellar Asset Contract's instance entry, from the `AssetInfo` it keeps in
/// instance storage; `None` for any other entry and for the native asset's SAC.
fn sac_issuer(data: &LedgerEntryData) -> Option<([u8; 32], [u8; 32])> {
    let LedgerEntryData::ContractData(d) = data else {
        return None;
    };
    let (ScAddress::Contract(ContractId(Hash(contract))), ScVal::ContractInstance(instance)) =
        (&d.contract, &d.val)
    else {
        return None;
    };
    if instance.executable != ContractExecutable::StellarAsset {
        return None;
    }
    let symbol = |s: &str| ScVal::Symbol(ScSymbol(s.try_into().expect("short symbol")));
    let asset_info = ScVal::Vec(Some(vec![symbol("AssetInfo")].try_into().ok()?));
    let info = instance
        .storage
        .as_ref()?
        .iter()
        .find(|e| e.key == asset_info)?;
    // `AlphaNum4(..)` / `AlphaNum12(..)`: the variant's name, then `{asset_code, issuer}`.
    let ScVal::Vec(Some(variant)) = &info.val else {
        return None;
    };
    let ScVal::Map(Some(fields)) = variant.get(1)? else {
        return None;
    };
    let issuer = fields.iter().find_map(|f| match &f.val {
        ScVal::Bytes(b) if f.key == symbol("issuer") => b.as_slice().try_into().ok(),
        _ => None,
    })?;
    Some((*contract, issuer))
}

impl Reaction {
    /// The ledger entries a verdict of each watched asset (those `active` keeps) rests on.
    fn watched_entries(
        &self,
        assets: &[(Token, [u8; 32], Duration)],
        active: &dyn Fn(usize) -> bool,
    ) -> BTreeMap<String, (LedgerKey, Watched, Vec<usize>)> {
        let (issuers_readable, sac_issuers) = (self.issuers_readable, &self.sac_issuers);
        let mut entries: BTreeMap<String, (LedgerKey, Watched, Vec<usize>)> = BTreeMap::new();
        let mut add = |key: LedgerKey, what: Watched, index: usize| {
            entries
                .entry(key_text(&key))
                .or_insert_with(|| (key, what, Vec::new()))
                .2
                .push(index);
        };
        for (index, (token, contract, _)) in assets.iter().enumerate() {
            if !active(index) {
                continue;
            }
            let issuer = match token {
                Token::Classic(asset) if issuers_readable => {
                    stellar_strkey::ed25519::PublicKey::from_string(&asset.issuer)
                        .ok()
                        .map(|pk| pk.0)
                }
                // A SAC named by its C…: the contract, so its issuer too, is on the registry's network.
                Token::Contract(_) => sac_issuers.get(contract).copied(),
                _ => None,
            };
            if let Some(issuer) = issuer {
                let key = LedgerKey::Account(LedgerKeyAccount {
                    account_id: account_id(issuer),
                });
                add(key, Watched::IssuerAccount, index);
            }
            add(instance_key(*contract), Watched::ContractInstance, index);
        }
        entries
    }

    /// When a poll is due (every `every_ledgers` ledgers), reads the entries of the watched `assets` (those
    /// `active` keeps) through `rpc` and returns the indices of the assets whose entries changed since the
    /// last poll. The first poll only records.
    pub fn changes(
        &mut self,
        rpc: &RpcClient,
        assets: &[(Token, [u8; 32], Duration)],
        active: &dyn Fn(usize) -> bool,
    ) -> Vec<usize> {
        if self.polled_at.is_some_and(|t| t.elapsed() < MIN_POLL_GAP) {
            return Vec::new();
        }
        self.polled_at = Some(Instant::now());
        let latest = match rpc.get_latest_ledger() {
            Ok(l) => l.sequence,
            Err(e) => {
                log("react_failed", json!({"error": e.to_string()}));
                return Vec::new();
            }
        };
        if self
            .polled_ledger
            .is_some_and(|p| latest < p.saturating_add(self.every_ledgers))
        {
            return Vec::new();
        }
        let entries = self.watched_entries(assets, active);
        let mut learned = Vec::new();
        let keys: Vec<&LedgerKey> = entries.values().map(|(k, _, _)| k).collect();
        let mut now: BTreeMap<String, String> = BTreeMap::new();
        for chunk in keys.chunks(KEYS_PER_CALL) {
            let chunk: Vec<LedgerKey> = chunk.iter().map(|k| (*k).clone()).collect();
            let answer = match rpc.get_ledger_entries(&chunk) {
                Ok(a) => a,
                Err(e) => {
                    log("react_failed", json!({"error": e.to_string()}));
                    return Vec::new();
                }
            };
            for entry in answer.entries.unwrap_or_default() {
                match assay_chain::submit::decode_rpc_xdr::<LedgerEntryData>(
                    "entry xdr",
                    Some(&entry.xdr),
                ) {
                    Ok(data) => {
                        learned.extend(sac_issuer(&data));
                        now.insert(entry.key, fingerprint(&data));
                    }
                    Err(e) => log("react_failed", json!({"error": e})),
                }
            }
        }
        self.polled_ledger = Some(latest);
        // Followed from the next poll on (a SAC's issuer does not change; the map only grows).
        self.sac_issuers.extend(learned);
        let mut changed = Vec::new();
        for (key, (_, what, indices)) in &entries {
            let current = now.get(key).cloned().unwrap_or_else(|| "absent".into());
            let before = self.seen.insert(key.clone(), current.clone());
            if before.as_ref() != Some(&current) {
                self.unsaved.insert(key.clone());
            }
            // First seen (the first poll, a newly watched asset, a SAC's issuer just learned): a baseline.
            if before.is_none_or(|b| b == current) {
                continue;
            }
            for &i in indices {
                log(
                    "ledger_change",
                    json!({"asset": assets[i].0.to_string(), "entry": what.as_str(), "ledger": latest,
                    "note": "checking it now"}),
                );
                changed.push(i);
            }
        }
        changed.sort_unstable();
        changed.dedup();
        changed
    }
}
