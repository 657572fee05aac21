//! Offline mode: deploy a token on an embedded local network, fund the parties, run the suite.
//!
//! The suite itself is unchanged: it speaks stellar-rpc to the embedded network exactly as it
//! would to testnet.
use std::time::{Duration, Instant};

use assay_chain::{strkey_of, ChainError, NetworkClient, Signer};
use assay_localnet::{LocalNet, LocalNetConfig, MAX_ENTRY_TTL};
use serde_json::Value;
use stellar_xdr::{
    AccountId, Asset, ChangeTrustAsset, ChangeTrustOp, CreateAccountOp, OperationBody, ScAddress,
    ScVal, SetOptionsOp, SetTrustLineFlagsOp,
};

pub use crate::deployment::Deployment;
use crate::{
    chain::RpcChain,
    checks::{i128_of, i128_val, run_suite, Party, SuiteConfig},
    model::Report,
    spec::{ContractSpec, Placeholders, SpecError},
};

/// The token an offline run deploys on its embedded network.
#[derive(Debug, Clone)]
pub enum OfflineToken {
    /// A token WASM: constructor arguments (JSON), the admin-only mint function's name, and the
    /// contracts and calls around it ([`Deployment`], empty for a token that stands alone). A
    /// constructor or set-up call that credits the holder (`"@holder"` among its arguments) funds it
    /// instead, and the token then needs no mint function.
    Wasm {
        wasm: Vec<u8>,
        origin: String,
        constructor_args: Option<Value>,
        mint_fn: String,
        deployment: Deployment,
    },
    /// A Stellar Asset Contract for a fresh asset with this code.
    Sac { code: String },
}

impl OfflineToken {
    /// The token WASM deployed as `deployment` says, its constructor arguments the set-up file's, its
    /// holder funded by the file's calls or else through `mint`.
    pub fn with_setup(wasm: Vec<u8>, origin: impl Into<String>, deployment: Deployment) -> Self {
        OfflineToken::Wasm {
            wasm,
            origin: origin.into(),
            constructor_args: deployment.constructor_args.clone(),
            mint_fn: "mint".into(),
            deployment,
        }
    }
}

/// How the embedded network runs.
#[derive(Debug, Clone)]
pub struct OfflineOptions {
    pub ledger_close_ms: u64,
    /// Units minted to the holder (the suite needs 5).
    pub holder_units: i128,
    /// A step on the embedded network once the holder is funded (power discovery), whose exercised mint
    /// and clawback the event rows judge.
    pub before_suite: Option<crate::hook::BeforeSuite>,
}

impl Default for OfflineOptions {
    fn default() -> Self {
        OfflineOptions {
            ledger_close_ms: 100,
            holder_units: 1000,
            before_suite: None,
        }
    }
}

/// A finished offline run with its costs.
#[derive(Debug)]
pub struct OfflineRun {
    pub report: Report,
    /// RPC round trips for deployment and funding.
    pub setup_round_trips: u64,
    /// RPC round trips the suite made.
    pub suite_round_trips: u64,
    pub setup_time: Duration,
    pub suite_time: Duration,
    /// What the discovery before the suite found ([`OfflineOptions::before_suite`]), when one ran.
    pub powers: Option<crate::hook::Discovered>,
    /// How long that discovery took.
    pub discovery_time: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    #[error("cannot start the embedded network: {0}")]
    LocalNet(String),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Usage(String),
    #[error("cannot set up the token on the embedded network: {0}")]
    Setup(#[from] ChainError),
}

const XLM: i64 = 10_000_000;

/// Deploys `subject` on a fresh embedded network (with the native asset's contract deployed, as on
/// every real network) and runs the checks.
pub fn run_offline(
    subject: &OfflineToken,
    options: &OfflineOptions,
) -> Result<OfflineRun, OfflineError> {
    let localnet = LocalNet::start(LocalNetConfig {
        port: 0,
        ledger_close_ms: options.ledger_close_ms,
        passphrase: assay_localnet::STANDALONE_PASSPHRASE.to_string(),
    })
    .map_err(|e| OfflineError::LocalNet(e.to_string()))?;
    let network = embedded_network(&localnet, options.ledger_close_ms);
    let (admin, holder, spender) = (Signer::generate(), Signer::generate(), Signer::generate());

    let setup_started = Instant::now();
    create_accounts(&localnet, &network, &[&admin, &holder, &spender])?;
    // Every real network has the native asset's contract; a token may call it.
    network.deploy_sac(&admin, &Asset::Native)?;
    let parties = Parties {
        admin: &admin,
        holder: &holder,
        spender: &spender,
    };
    let Deployed { contract, declared } =
        deploy_token(&network, &parties, subject, options.holder_units)?;
    let setup_round_trips = network.rpc.round_trips();
    let setup_time = setup_started.elapsed();

    let discovery_started = Instant::now();
    let (powers, exercised) = crate::hook::BeforeSuite::run(
        options.before_suite.as_ref(),
        &localnet,
        &contract,
        &[holder.sc_address()],
    );
    let mut config = embedded_suite_config(
        embedded_party(&holder),
        embedded_party(&spender),
        declared,
        options.ledger_close_ms,
    );
    config.exercised_mint = exercised.mint;
    config.exercised_clawback = exercised.clawback;
    let discovery_time = discovery_started.elapsed();
    let mut chain = RpcChain::embedded(&network, &contract, &holder, &spender);
    let suite_started = Instant::now();
    let results = run_suite(&mut chain, &config);
    let suite_time = suite_started.elapsed();
    Ok(OfflineRun {
        report: Report {
            contract_id: strkey_of(&contract),
            network: format!("embedded local network ({})", localnet.passphrase()),
            ran_at: assay_core::Timestamp::now().to_string(),
            results,
            fork: None,
        },
        setup_round_trips,
        suite_round_trips: network.rpc.round_trips() - setup_round_trips,
        setup_time,
        suite_time,
        powers,
        discovery_time,
    })
}

/// The run's three parties, whose keys sign the deployment's calls.
pub struct Parties<'a> {
    pub admin: &'a Signer,
    pub holder: &'a Signer,
    pub spender: &'a Signer,
}

/// The token as deployed: its address and, for a WASM, the SEP-41 members its spec declares.
pub struct Deployed {
    pub contract: ScAddress,
    pub declared: Option<std::collections::BTreeSet<String>>,
}

/// Deploys `subject` on `network` (whose parties have accounts): a WASM token's deployment (contracts
/// first, then the token, then the set-up calls), then the holder funded with `holder_units` unless the
/// constructor or a call credited it. The same steps an offline run takes, for any network a test or a
/// benchmark wants the token on.
pub fn deploy_token(
    network: &NetworkClient,
    parties: &Parties,
    subject: &OfflineToken,
    holder_units: i128,
) -> Result<Deployed, OfflineError> {
    let (admin, holder, spender) = (parties.admin, parties.holder, parties.spender);
    match subject {
        OfflineToken::Wasm {
            wasm,
            origin,
            constructor_args,
            mint_fn,
            deployment,
        } => {
            deployment.check().map_err(OfflineError::Usage)?;
            let spec = ContractSpec::from_wasm(wasm, origin)?;
            let mut placeholders = Placeholders {
                admin: admin.address(),
                holder: holder.address(),
                spender: spender.address(),
                contracts: Default::default(),
            };
            let names_holder = deployment.names_holder(constructor_args.as_ref());
            check_mint_fn(&spec, origin, mint_fn, names_holder)?;
            let mut specs = std::collections::BTreeMap::new();
            for helper in &deployment.contracts {
                let helper_spec = ContractSpec::from_wasm(&helper.wasm, &helper.origin)?;
                let given = format!("contract \"{}\" of the set-up", helper.name);
                let args = helper_spec.constructor_args(
                    helper.constructor_args.as_ref(),
                    &given,
                    &placeholders,
                )?;
                let address = create(network, admin, &helper.wasm, args)?;
                // Progress on stderr, as a fork run reports its ledger: what the set-up file did.
                eprintln!(
                    "setup: @{} deployed at {}",
                    helper.name,
                    strkey_of(&address)
                );
                placeholders
                    .contracts
                    .insert(helper.name.clone(), strkey_of(&address));
                specs.insert(helper.name.clone(), (helper_spec, address));
            }
            let given = match deployment.constructor_args {
                Some(_) => "the set-up file's \"constructor_args\"",
                None => "--constructor-args",
            };
            let args = spec.constructor_args(constructor_args.as_ref(), given, &placeholders)?;
            let contract = create(network, admin, wasm, args)?;
            if !deployment.contracts.is_empty() || !deployment.calls.is_empty() {
                eprintln!("setup: @token deployed at {}", strkey_of(&contract));
            }
            (placeholders.contracts).insert("token".into(), strkey_of(&contract));
            specs.insert("token".into(), (spec, contract.clone()));
            for (n, call) in deployment.calls.iter().enumerate() {
                let step = format!("call {} ({}.{})", n + 1, call.contract, call.function);
                let label = format!("set-up {step}");
                let target = call.contract.trim_start_matches('@');
                let (target_spec, address) = &specs[target];
                let args =
                    target_spec.call_args(&call.function, &call.args, &label, &placeholders)?;
                let signer = match call.signer.as_str() {
                    "@holder" => holder,
                    "@spender" => spender,
                    _ => admin,
                };
                match network.invoke(signer, address, &call.function, args)? {
                    assay_chain::InvokeOutcome::Landed { .. } => {
                        eprintln!("setup: {step} landed, signed by {}", call.signer)
                    }
                    other => {
                        return Err(OfflineError::Usage(format!(
                        "{label}, signed by {}: {}; check the call against the contract, or the \
                             steps before it",
                        call.signer,
                        outcome_text(&other)
                    )))
                    }
                }
            }
            let (spec, contract) = specs.remove("token").expect("the token was deployed");
            // A constructor or call that credited the holder funded it: nothing is minted on top.
            let funded =
                names_holder && holder_balance(network, holder, &contract)?.is_some_and(|b| b > 0);
            if !funded {
                if !spec.declares(mint_fn) {
                    return Err(OfflineError::Usage(format!(
                        "{origin}: the deployment named \"@holder\" but credited it nothing, and \
                         the token declares no `{mint_fn}` function to fund it; pass \
                         --constructor-args or a set-up call that credits \"@holder\", or --mint-fn NAME"
                    )));
                }
                mint(network, admin, &contract, mint_fn, holder, holder_units)?;
            }
            Ok(Deployed {
                contract,
                declared: Some(spec.sep41_declared()),
            })
        }
        OfflineToken::Sac { code } => {
            let contract = deploy_sac(network, admin, holder, spender, code)?;
            mint(network, admin, &contract, "mint", holder, holder_units)?;
            Ok(Deployed {
                contract,
                declared: None,
            })
        }
    }
}

/// The holder can be funded: the deployment credits it, or `mint_fn` is declared as `(to: Address,
/// amount: i128)`.
fn check_mint_fn(
    spec: &ContractSpec,
    origin: &str,
    mint_fn: &str,
    names_holder: bool,
) -> Result<(), OfflineError> {
    if names_holder {
        return Ok(());
    }
    let how = "pass --mint-fn NAME (a function taking (to: Address, amount: i128)), \
               --constructor-args with \"@holder\" where the constructor credits an account, or \
               --setup FILE with a call that credits \"@holder\"";
    match spec.params(mint_fn) {
        None => Err(OfflineError::Usage(format!(
            "{origin} declares no `{mint_fn}` function to fund the holder; {how}"
        ))),
        Some(params)
            if !matches!(
                params.iter().map(|(_, ty)| ty).collect::<Vec<_>>()[..],
                [
                    stellar_xdr::ScSpecTypeDef::Address,
                    stellar_xdr::ScSpecTypeDef::I128
                ]
            ) =>
        {
            let shape: Vec<&str> = params.iter().map(|(name, _)| name.as_str()).collect();
            Err(OfflineError::Usage(format!(
                "{origin}: `{mint_fn}` takes ({}), not (to: Address, amount: i128), so it cannot \
                 fund the holder by itself; {how}",
                shape.join(", ")
            )))
        }
        Some(_) => Ok(()),
    }
}

/// Uploads `wasm` and creates a contract from it (a fresh salt) as `admin`.
fn create(
    network: &NetworkClient,
    admin: &Signer,
    wasm: &[u8],
    args: Vec<ScVal>,
) -> Result<ScAddress, ChainError> {
    let hash = network.upload_wasm(admin, wasm)?;
    let salt = Signer::generate().public_key();
    network.create_contract(admin, hash, salt, args)
}

fn outcome_text(outcome: &assay_chain::InvokeOutcome) -> String {
    use assay_chain::InvokeOutcome::*;
    match outcome {
        Refused(why) => format!("simulation refused it ({why})"),
        Archived(why) => format!("archived state stands in the way ({why})"),
        FailedOnChain { code, .. } => format!("it failed on the ledger ({code})"),
        Landed { .. } => "it landed".into(),
    }
}

/// A party whose key the embedded network generated.
pub(crate) fn embedded_party(who: &Signer) -> Party {
    Party {
        address: who.sc_address(),
        generated: false,
        can_sign: true,
        key_hint: "the embedded network generated this key".into(),
        address_hint: "the embedded network chose this address".into(),
    }
}

/// The suite's settings on an embedded network closing a ledger every `ledger_close_ms`.
pub(crate) fn embedded_suite_config(
    holder: Party,
    spender: Party,
    declared: Option<std::collections::BTreeSet<String>>,
    ledger_close_ms: u64,
) -> SuiteConfig {
    let mut config = SuiteConfig::live(holder, spender, declared);
    config.approve_ledgers = config.approve_ledgers.min(MAX_ENTRY_TTL / 2);
    // Ledgers close every few hundred ms here: leave the short grant ~1 s to land before it lapses.
    config.expiry_ledgers = (1_000 / ledger_close_ms.max(1)).max(2) as u32;
    config.expiry_poll = Duration::from_millis(ledger_close_ms.max(10));
    config
}

/// Connects to an embedded network, polling at its pace.
pub(crate) fn embedded_network(localnet: &LocalNet, ledger_close_ms: u64) -> NetworkClient {
    let mut network = NetworkClient::new(&localnet.rpc_url(), localnet.passphrase());
    network.poll_interval = Duration::from_millis((ledger_close_ms / 2).max(10));
    network.poll_timeout = Duration::from_secs(30);
    network
}

/// Creates `parties` with 1,000 XLM each from the embedded network's root account.
pub(crate) fn create_accounts(
    localnet: &LocalNet,
    network: &NetworkClient,
    parties: &[&Signer],
) -> Result<(), ChainError> {
    let root = Signer::from_bytes(localnet.root_secret());
    let create = |who: &&Signer| {
        OperationBody::CreateAccount(CreateAccountOp {
            destination: who.account_id(),
            starting_balance: 1_000 * XLM,
        })
    };
    network.submit_classic(&root, parties.iter().map(create).collect())?;
    Ok(())
}

/// The holder's balance right after deployment, when it reads as an amount (the suite judges a
/// balance that does not).
fn holder_balance(
    network: &NetworkClient,
    holder: &Signer,
    contract: &ScAddress,
) -> Result<Option<i128>, OfflineError> {
    let args = vec![ScVal::Address(holder.sc_address())];
    Ok(
        match network.read(&holder.account_id(), contract, "balance", args)? {
            assay_chain::ReadOutcome::Value(ScVal::I128(parts)) => Some(i128_of(&parts)),
            _ => None,
        },
    )
}

fn mint(
    network: &NetworkClient,
    admin: &Signer,
    contract: &ScAddress,
    mint_fn: &str,
    to: &Signer,
    units: i128,
) -> Result<(), ChainError> {
    let args = vec![ScVal::Address(to.sc_address()), i128_val(units)];
    match network.invoke(admin, contract, mint_fn, args)? {
        assay_chain::InvokeOutcome::Landed { .. } => Ok(()),
        other => Err(ChainError::Simulation(format!(
            "{mint_fn}(holder, {units}): {other:?}"
        ))),
    }
}

/// AUTH_REQUIRED | AUTH_REVOCABLE on the issuer; AUTHORIZED on a trustline.
const AUTH_REQUIRED_AND_REVOCABLE: u32 = 0x1 | 0x2;
const TRUSTLINE_AUTHORIZED: u32 = 0x1;

/// An issuer (`admin`) with authorization required, trustlines from both parties authorized by
/// the issuer, and the asset's SAC deployed.
fn deploy_sac(
    network: &NetworkClient,
    issuer: &Signer,
    holder: &Signer,
    spender: &Signer,
    code: &str,
) -> Result<ScAddress, OfflineError> {
    let asset = asset(code, issuer)?;
    network.submit_classic(
        issuer,
        vec![OperationBody::SetOptions(SetOptionsOp {
            set_flags: Some(AUTH_REQUIRED_AND_REVOCABLE),
            ..SetOptionsOp::default()
        })],
    )?;
    let line = match &asset {
        Asset::CreditAlphanum4(a) => ChangeTrustAsset::CreditAlphanum4(a.clone()),
        Asset::CreditAlphanum12(a) => ChangeTrustAsset::CreditAlphanum12(a.clone()),
        Asset::Native => unreachable!("asset() never builds native"),
    };
    for party in [holder, spender] {
        network.submit_classic(
            party,
            vec![OperationBody::ChangeTrust(ChangeTrustOp {
                line: line.clone(),
                limit: i64::MAX,
            })],
        )?;
    }
    let authorize = |who: &Signer| {
        OperationBody::SetTrustLineFlags(SetTrustLineFlagsOp {
            trustor: who.account_id(),
            asset: asset.clone(),
            clear_flags: 0,
            set_flags: TRUSTLINE_AUTHORIZED,
        })
    };
    network.submit_classic(issuer, vec![authorize(holder), authorize(spender)])?;
    Ok(network.deploy_sac(issuer, &asset)?)
}

fn asset(code: &str, issuer: &Signer) -> Result<Asset, OfflineError> {
    classic_asset(code, issuer.account_id()).ok_or_else(|| {
        OfflineError::Usage(format!(
            "--sac {code:?}: an asset code is 1 to 12 ASCII letters or digits"
        ))
    })
}

/// The credit asset `code` issued by `issuer`, through the one parser (core) and the one XDR conversion
/// (chain); `None` unless the code is 1 to 12 ASCII letters or digits.
pub(crate) fn classic_asset(code: &str, issuer: AccountId) -> Option<Asset> {
    let classic = assay_core::Asset::new(code, &strkey_of(&ScAddress::Account(issuer))).ok()?;
    assay_chain::asset::xdr_asset(&assay_core::Token::Classic(classic)).ok()
}
