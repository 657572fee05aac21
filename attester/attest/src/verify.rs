//! `assay verify`: compare what the registry holds with a fresh scan, recomputing the hash in the preimage
//! version the on-chain value was written with.

use assay_core::{attestation_params, EvidenceVersion, Freshness, Report};
use serde::Serialize;
use stellar_xdr::{
    HostFunction, InvokeHostFunctionOp, Memo, MuxedAccount, Operation, OperationBody,
    Preconditions, SequenceNumber, Transaction, TransactionEnvelope, TransactionExt,
    TransactionV1Envelope, Uint256,
};

use crate::registry::{self, Safety};
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{contract_error_code, Simulated};

/// Exit codes (the earlier implementation's scheme).
pub mod exit {
    /// On-chain value equals the fresh scan and is within the age window.
    pub const AGREEMENT: u8 = 0;
    /// Anything else went wrong (RPC, Horizon, a malformed on-chain value).
    pub const ERROR: u8 = 1;
    /// The fresh scan could not be completed (undetermined or unevaluated): no comparison is possible.
    pub const UNVERIFIABLE: u8 = 2;
    /// The registry holds nothing for the asset.
    pub const ABSENT: u8 = 3;
    /// Severity, flags or hash differ (compared in that order).
    pub const MISMATCH: u8 = 4;
    /// Values agree but the attestation is older than the window.
    pub const STALE: u8 = 5;
}

/// The verdict of a verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Agreement.
    Agreement {
        /// Severity.
        severity: u32,
        /// Flags.
        flags: u32,
        /// Hash.
        evidence_hash: String,
        /// Version that matched.
        evidence_version: u8,
        /// Age in seconds.
        age_secs: u64,
    },
    /// Nothing on chain.
    Absent,
    /// The first field that differs.
    Mismatch {
        /// `severity`, `flags` or `evidence_hash`.
        field: String,
        /// On chain.
        on_chain: String,
        /// Fresh scan.
        scanned: String,
    },
    /// Agrees, but too old.
    Stale {
        /// Age in seconds.
        age_secs: u64,
        /// Window.
        max_age_secs: u64,
    },
    /// The fresh scan is incomplete; the comparison would mean nothing.
    Unverifiable {
        /// Why.
        reason: String,
    },
}

impl Verdict {
    /// Exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Verdict::Agreement { .. } => exit::AGREEMENT,
            Verdict::Absent => exit::ABSENT,
            Verdict::Mismatch { .. } => exit::MISMATCH,
            Verdict::Stale { .. } => exit::STALE,
            Verdict::Unverifiable { .. } => exit::UNVERIFIABLE,
        }
    }
}

/// Compares `on_chain` with `report`. `now` is the reference time for the age (ledger or wall clock).
pub fn compare(on_chain: Option<&Safety>, report: &Report, now: u64, max_age_secs: u64) -> Verdict {
    let Some(safety) = on_chain else {
        return Verdict::Absent;
    };
    if report.unevaluated() || report.undetermined {
        let reason = if report.unevaluated() {
            "the fresh scan never read the issuer flags".to_string()
        } else {
            format!(
                "the fresh scan is undetermined: {} could not complete",
                report.undetermined_checks.join(", ")
            )
        };
        return Verdict::Unverifiable { reason };
    }
    // Never age the fresh report itself: freshness here is about the on-chain value.
    let never = Freshness { window_secs: 0 };
    let as_of = report.scanned_at;
    let versions = EvidenceVersion::candidates_for(&report.asset);
    let derived: Vec<_> = versions
        .iter()
        .filter_map(|v| attestation_params(report, as_of, never, *v, false).ok())
        .collect();
    let Some(first) = derived.first() else {
        return Verdict::Unverifiable {
            reason: "the fresh scan cannot be attested (inconsistent)".into(),
        };
    };
    if first.severity != safety.severity {
        return Verdict::Mismatch {
            field: "severity".into(),
            on_chain: safety.severity.to_string(),
            scanned: first.severity.to_string(),
        };
    }
    if first.flags != safety.flags {
        return Verdict::Mismatch {
            field: "flags".into(),
            on_chain: safety.flags.to_string(),
            scanned: first.flags.to_string(),
        };
    }
    let on_chain_hash = hex::encode(safety.evidence_hash);
    let Some(matched) = derived.iter().find(|p| p.evidence_hash == on_chain_hash) else {
        return Verdict::Mismatch {
            field: "evidence_hash".into(),
            on_chain: on_chain_hash,
            scanned: first.evidence_hash.clone(),
        };
    };
    let age_secs = now.saturating_sub(safety.attested_at);
    if max_age_secs > 0 && age_secs > max_age_secs {
        return Verdict::Stale {
            age_secs,
            max_age_secs,
        };
    }
    Verdict::Agreement {
        severity: matched.severity,
        flags: matched.flags,
        evidence_hash: matched.evidence_hash.clone(),
        evidence_version: matched.evidence_version,
        age_secs,
    }
}

/// Reads `get_safety(asset)` by simulation only (nothing is signed or sent). The simulated transaction's
/// source is the all-zero key: simulation needs no real account for a read.
pub fn read_safety(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
) -> Result<Option<Safety>, String> {
    let f: HostFunction = registry::get_safety(registry_id, asset);
    let tx = Transaction {
        source_account: MuxedAccount::Ed25519(Uint256([0; 32])),
        fee: 100,
        seq_num: SequenceNumber(1),
        cond: Preconditions::None,
        memo: Memo::None,
        operations: vec![Operation {
            source_account: None,
            body: OperationBody::InvokeHostFunction(InvokeHostFunctionOp {
                host_function: f,
                auth: Default::default(),
            }),
        }]
        .try_into()
        .expect("one operation"),
        ext: TransactionExt::V0,
    };
    let env = TransactionEnvelope::Tx(TransactionV1Envelope {
        tx,
        signatures: Default::default(),
    });
    let response = rpc.simulate_transaction(&env).map_err(|e| e.to_string())?;
    let sim = Simulated::from_response(&response).map_err(|e| match contract_error_code(&e) {
        Some(code) => format!(
            "get_safety failed: {e} ({})",
            registry::registry_error(code)
        ),
        None => {
            format!("get_safety failed: {e} (is --registry an Assay registry on this network?)")
        }
    })?;
    match sim.result {
        Some(v) => registry::decode_safety(&v),
        None => Err("get_safety returned no value".into()),
    }
}

/// What the registry holds for each of `assets`, read in batches of `getLedgerEntries` (200 keys a call)
/// straight from its storage (`get_safety` is that read and nothing more), instead of one simulation each.
/// An asset with no entry maps to `None`. An archived entry is left out of the map: only a simulation
/// ([`read_safety`]) can say what the contract would answer for it.
pub fn read_safety_many(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    assets: &[[u8; 32]],
) -> Result<std::collections::BTreeMap<[u8; 32], Option<Safety>>, String> {
    use stellar_xdr::{
        ContractDataDurability, ContractId, Hash, LedgerEntryData, LedgerKey,
        LedgerKeyContractData, Limits, ScAddress, ScSymbol, ScVal, WriteXdr,
    };
    let key_of = |asset: [u8; 32]| {
        LedgerKey::ContractData(LedgerKeyContractData {
            contract: ScAddress::Contract(ContractId(Hash(registry_id))),
            key: ScVal::Vec(Some(
                vec![
                    ScVal::Symbol(ScSymbol("Safety".try_into().expect("short symbol"))),
                    ScVal::Address(ScAddress::Contract(ContractId(Hash(asset)))),
                ]
                .try_into()
                .expect("two elements"),
            )),
            durability: ContractDataDurability::Persistent,
        })
    };
    let mut held = std::collections::BTreeMap::new();
    for chunk in assets.chunks(200) {
        let keys: Vec<LedgerKey> = chunk.iter().map(|a| key_of(*a)).collect();
        let by_key: std::collections::BTreeMap<String, [u8; 32]> = keys
            .iter()
            .zip(chunk)
            .map(|(k, a)| (k.to_xdr_base64(Limits::none()).expect("a key encodes"), *a))
            .collect();
        let answer = rpc.get_ledger_entries(&keys).map_err(|e| e.to_string())?;
        let latest = u32::try_from(answer.latest_ledger).unwrap_or(u32::MAX);
        for asset in chunk {
            held.insert(*asset, None);
        }
        for entry in answer.entries.unwrap_or_default() {
            let Some(asset) = by_key.get(&entry.key) else {
                continue;
            };
            if entry
                .live_until_ledger_seq_ledger_seq
                .is_some_and(|live_until| live_until < latest)
            {
                held.remove(asset);
                continue;
            }
            let data: LedgerEntryData =
                assay_chain::submit::decode_rpc_xdr("entry xdr", Some(&entry.xdr))?;
            let LedgerEntryData::ContractData(d) = data else {
                return Err(
                    "getLedgerEntries answered a registry key with another entry type".into(),
                );
            };
            held.insert(*asset, registry::decode_safety(&d.val)?);
        }
    }
    Ok(held)
}

/// The latest ledger's close time, the clock the registry stamps `attested_at` with.
pub fn ledger_time(rpc: &RpcClient) -> Result<u64, String> {
    let r = rpc
        .call("getLatestLedger", serde_json::json!({}))
        .map_err(|e| e.to_string())?;
    if let Some(t) = r["closeTime"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| r["closeTime"].as_u64())
    {
        return Ok(t);
    }
    let h = rpc
        .call("getHealth", serde_json::json!({}))
        .map_err(|e| e.to_string())?;
    h["latestLedgerCloseTime"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| "stellar-rpc reported no ledger close time".to_string())
}

/// Wall clock seconds, for callers without a ledger time.
pub fn unix_now() -> u64 {
    assay_core::Timestamp::now().unix().unsigned_abs()
}
