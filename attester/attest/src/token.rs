//! Reading a token contract for the judgment: what its instance runs (`getLedgerEntries` of the instance and
//! the code), the WASM's host imports and spec functions, the powers its functions were seen to exercise on a
//! fork of the network (`assay_powers`: nothing signed, nothing sent), its `admin()` (by simulation), and the
//! admin account's home domain and stellar.toml. The core judges the facts ([`assay_core::contract`]);
//! nothing here decides anything.

use assay_chain::address::account_id;
use assay_chain::strkey_of;
use assay_chain::tx::{ContractCode as Executable, NetworkClient, ReadOutcome};
use assay_core::contract::{
    AdminOutcome, CodeOutcome, ContractCode, ContractSubject, PowersOutcome,
};
use assay_core::parse::parse_wasm_imports;
use assay_core::{Attempt, FailureCategory, FetchFailure, HomeDomain, Observed, TomlOutcome};
use sha2::{Digest, Sha256};
use stellar_xdr::{ContractId, Hash, ScAddress, ScVal};

use crate::scanning::{account_domain, ScanSettings};
use crate::{AttestError, SnapshotError};

/// What a `C…` address turned out to be.
#[derive(Debug, Clone)]
pub enum TokenRead {
    /// A custom token: the facts for [`assay_core::contract::evaluate_contract`], and the fork snapshot
    /// its power discovery read (the `--fork-cache` format), kept for the evidence bundle's replay.
    Custom {
        subject: Box<ContractSubject>,
        powers_snapshot: Option<serde_json::Value>,
    },
    /// A Stellar Asset Contract: the classic asset it wraps (`CODE:ISSUER` from its `name()`, or `native`)
    /// and its current `admin()`.
    StellarAsset {
        /// `name()` as the SAC answers it.
        name: String,
        /// `admin()`, when it answered with an address.
        admin: Option<String>,
    },
}

/// Reads `function()` of `contract` by simulation from the all-zero account (nothing is signed).
fn read_address(
    net: &NetworkClient,
    contract: &ScAddress,
    function: &str,
) -> Result<String, AttestError> {
    let answer = match net.read(&account_id([0; 32]), contract, function, vec![]) {
        Ok(ReadOutcome::Value(ScVal::Address(a))) => return Ok(strkey_of(&a)),
        Ok(ReadOutcome::Value(other)) => format!("{function}() returned {other:?}, not an address"),
        Ok(ReadOutcome::Trapped(e)) => format!("{function}() trapped: {e}"),
        Ok(ReadOutcome::Archived) => format!("{function}() needs archived state restored"),
        Err(e) => format!("{function}(): {e}"),
    };
    Err(AttestError::Chain(answer))
}

/// Reads the token contract `contract` on the network at `rpc_url`. `Err` only when there is no contract at
/// the address (nothing to judge) or the network cannot be asked at all.
pub fn read_token(
    settings: &ScanSettings,
    rpc_url: &str,
    passphrase: &str,
    contract: [u8; 32],
) -> Result<TokenRead, AttestError> {
    let net = NetworkClient::new(rpc_url, passphrase);
    let address = ScAddress::Contract(ContractId(Hash(contract)));
    let id = crate::sac::contract_strkey(contract);
    let failed = |category: FailureCategory, detail: String| Attempt {
        url: rpc_url.to_string(),
        retrieved_at: assay_core::Timestamp::now(),
        failure: FetchFailure::with_detail(category, detail),
    };
    let code = match net.contract_code(&address) {
        Ok(Executable::Missing) => {
            return Err(AttestError::Chain(format!(
                "no contract at {id} on this network (getLedgerEntries found no instance); check the address and --network"
            )))
        }
        Ok(Executable::StellarAsset) => {
            let name = match net.read(&account_id([0; 32]), &address, "name", vec![]) {
                Ok(ReadOutcome::Value(ScVal::String(s))) => s.to_utf8_string_lossy(),
                other => return Err(AttestError::Chain(format!("{id} is a Stellar Asset Contract but name() did not answer: {other:?}"))),
            };
            let admin = read_address(&net, &address, "admin").ok();
            return Ok(TokenRead::StellarAsset { name, admin });
        }
        Ok(Executable::Archived) => CodeOutcome::Failed(failed(
            FailureCategory::UnknownFailure,
            format!("the instance or code of {id} is archived"),
        )),
        Ok(Executable::ExternalRef(owner)) => CodeOutcome::Read(Observed {
            url: rpc_url.to_string(),
            retrieved_at: assay_core::Timestamp::now(),
            value: ContractCode {
                wasm_hash: String::new(),
                imports: vec![],
                functions: vec![],
                external_owner: Some(strkey_of(&owner)),
            },
        }),
        Ok(Executable::Wasm(wasm)) => match read_code(&wasm, &id) {
            Ok(code) => CodeOutcome::Read(Observed {
                url: rpc_url.to_string(),
                retrieved_at: assay_core::Timestamp::now(),
                value: code,
            }),
            Err(e) => CodeOutcome::Failed(failed(FailureCategory::Malformed, e.to_string())),
        },
        Err(e) => {
            return Err(AttestError::Chain(format!(
                "cannot read {id} from {rpc_url}: {e}"
            )))
        }
    };
    let (powers, powers_snapshot) = match &code {
        CodeOutcome::Read(_) => survey_powers(rpc_url, passphrase, &address),
        CodeOutcome::Failed(_) => (PowersOutcome::NotRun, None),
    };
    let has_admin =
        matches!(&code, CodeOutcome::Read(c) if c.value.functions.iter().any(|f| f == "admin"));
    let admin = if !has_admin {
        AdminOutcome::NoAdminFunction
    } else {
        match read_address(&net, &address, "admin") {
            Ok(a) => AdminOutcome::Address(Observed {
                url: id.clone(),
                retrieved_at: assay_core::Timestamp::now(),
                value: a,
            }),
            Err(e) => AdminOutcome::Failed(failed(FailureCategory::UnknownFailure, e.to_string())),
        }
    };
    let (account_url, home_domain, stellar_toml) = match admin.account() {
        Some(account) => match account_domain(settings, account) {
            Ok((url, domain, toml)) => (Some(url), domain, toml),
            Err(_) => (None, HomeDomain::Unknown, TomlOutcome::NotFetched),
        },
        None => (None, HomeDomain::Absent, TomlOutcome::NotFetched),
    };
    let subject = Box::new(ContractSubject {
        contract: id,
        code,
        powers,
        admin,
        home_domain,
        account_url,
        stellar_toml,
        network: Some(passphrase.to_string()),
        scanner_version: Some(assay_scan::SCANNER_VERSION.to_string()),
        scanned_at: assay_core::Timestamp::now(),
    });
    Ok(TokenRead::Custom {
        subject,
        powers_snapshot,
    })
}

/// Runs power discovery for `contract` on a fork of the network at `rpc_url`, recording what it read into a
/// snapshot of its own (returned with the outcome, for the evidence bundle); a discovery that could not run
/// is a failed attempt (the report is then undetermined, never clean).
fn survey_powers(
    rpc_url: &str,
    passphrase: &str,
    contract: &ScAddress,
) -> (PowersOutcome, Option<serde_json::Value>) {
    let dir = tempfile::tempdir().ok();
    let cache = dir.as_ref().map(|d| d.path().join("powers-fork.json"));
    let request = assay_powers::fork::ForkRequest {
        rpc_url: Some(rpc_url.to_string()),
        passphrase: passphrase.to_string(),
        contract: contract.clone(),
        holder: None,
        bounds: assay_powers::Bounds::default(),
        cache: cache.clone(),
    };
    let outcome = match assay_powers::fork::discover_on_fork(&request) {
        Ok(found) => PowersOutcome::Observed(Observed {
            url: rpc_url.to_string(),
            retrieved_at: assay_core::Timestamp::now(),
            value: found.survey,
        }),
        Err(e) => PowersOutcome::Failed(Attempt {
            url: rpc_url.to_string(),
            retrieved_at: assay_core::Timestamp::now(),
            failure: FetchFailure::with_detail(FailureCategory::UnknownFailure, e.to_string()),
        }),
    };
    let snapshot = cache.and_then(|path| assay_chain::files::read_fork_cache(&path));
    (outcome, snapshot)
}

/// Replays power discovery for `contract` offline from `snapshot` (an evidence bundle's
/// [`assay_core::bundle::Bundle::powers_snapshot`]): the same fork ledger, the same entries, the same
/// holder candidates. Nothing reaches a network.
///
/// # Errors
/// [`SnapshotError`]: the snapshot cannot be written to a temporary file, or discovery cannot run from it.
pub fn replay_powers(
    contract: [u8; 32],
    passphrase: &str,
    snapshot: &serde_json::Value,
) -> Result<assay_core::powers::PowerSurvey, SnapshotError> {
    let (_dir, cache) = crate::sep41::snapshot_file(snapshot, "powers-fork.json")?;
    let request = assay_powers::fork::ForkRequest {
        rpc_url: None,
        passphrase: passphrase.to_string(),
        contract: ScAddress::Contract(ContractId(Hash(contract))),
        holder: None,
        bounds: assay_powers::Bounds::default(),
        cache: Some(cache),
    };
    Ok(assay_powers::fork::discover_on_fork(&request)?.survey)
}

/// The facts the core judges, from the WASM bytes: hash, host imports, spec functions.
pub fn read_code(wasm: &[u8], origin: &str) -> Result<ContractCode, AttestError> {
    let malformed = |e: &dyn std::fmt::Display| AttestError::Chain(e.to_string());
    let imports = parse_wasm_imports(wasm).map_err(|e| malformed(&e))?;
    let spec =
        assay_sep41::spec::ContractSpec::from_wasm(wasm, origin).map_err(|e| malformed(&e))?;
    Ok(ContractCode {
        wasm_hash: hex::encode(Sha256::digest(wasm)),
        imports,
        functions: spec.declared().into_iter().collect(),
        external_owner: None,
    })
}
