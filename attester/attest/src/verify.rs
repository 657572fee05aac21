//! `assay verify`: compare what the registry holds with a fresh scan, recomputing the hash in the preimage
//! version the on-chain value was written with.

use assay_core::{attestation_params, EvidenceVersion, Freshness, Mechanics, Report};
use serde::Serialize;
use stellar_xdr::{
    HostFunction, InvokeHostFunctionOp, Memo, MuxedAccount, Operation, OperationBody,
    Preconditions, SequenceNumber, Transaction, TransactionEnvelope, TransactionExt,
    TransactionV1Envelope, Uint256,
};

use crate::attest::Target;
use crate::registry::{self, Safety};
use crate::scanning::ScanSettings;
use crate::sep41::Sep41Runner;
use crate::targets::evaluate_targets;
use crate::AttestError;
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{contract_error_code, Simulated};

/// Exit codes (the earlier implementation's scheme).
pub mod exit {
    /// On-chain value equals the fresh scan and is within the age window.
    pub const AGREEMENT: u8 = assay_core::exit::OK;
    /// Anything else went wrong (RPC, Horizon, a malformed on-chain value).
    pub const ERROR: u8 = assay_core::exit::ERROR;
    /// The fresh scan could not be completed (undetermined or unevaluated): no comparison is possible.
    pub const UNVERIFIABLE: u8 = assay_core::exit::UNDETERMINED;
    /// The registry holds nothing for the asset.
    pub const ABSENT: u8 = assay_core::exit::ABSENT;
    /// Severity, flags or hash differ (compared in that order).
    pub const MISMATCH: u8 = assay_core::exit::NEGATIVE;
    /// Values agree but the attestation is older than the window.
    pub const STALE: u8 = assay_core::exit::STALE;
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
    /// The registry holds a verdict, but it judged code that is no longer live (the token's WASM
    /// was replaced, or its SAC admin changed): no read admits the asset until it is judged again.
    CodeChanged,
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
            Verdict::CodeChanged => exit::MISMATCH,
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

/// Re-derives what the registry should hold for `target` and compares it with `on_chain`.
///
/// The registry keeps a hash, not the evidence, so whether the attestation's evidence carried
/// `sep41` lines shows in the hash: when a fresh evaluation without the suite does not reproduce
/// it, `suite` runs (keyless on a fork of the network unless keys were given) and the comparison is
/// made again. With `always_suite` (`verify --sep41`) only the comparison with the suite is made.
/// When neither agrees, the verdict shown is the suite's if the on-chain flags carry
/// sep41_violation (the evidence certainly held sep41 lines) or the plain scan could not conclude,
/// else the plain scan's. `now` reads the ledger clock.
#[allow(clippy::too_many_arguments)]
pub fn verify_target(
    settings: &ScanSettings,
    rpc_url: &str,
    passphrase: &str,
    target: &Target,
    on_chain: Option<&Safety>,
    suite: Option<&Sep41Runner>,
    always_suite: bool,
    now: &dyn Fn() -> Result<u64, AttestError>,
    max_age_secs: u64,
) -> Result<Verdict, AttestError> {
    let Some(safety) = on_chain else {
        return Ok(Verdict::Absent);
    };
    let agrees = |v: &Verdict| matches!(v, Verdict::Agreement { .. } | Verdict::Stale { .. });
    let fresh = |runner: Option<&Sep41Runner>| -> Result<Verdict, AttestError> {
        let targets = std::slice::from_ref(target);
        let mut evaluated = evaluate_targets(settings, rpc_url, passphrase, targets, runner)?;
        let report = evaluated.remove(0).0?;
        Ok(compare(Some(safety), &report, now()?, max_age_secs))
    };
    let plain = match (suite, always_suite) {
        (Some(_), true) => None,
        _ => Some(fresh(None)?),
    };
    let Some(runner) = suite else {
        return Ok(plain.expect("the plain comparison ran"));
    };
    if let Some(v) = plain.as_ref().filter(|v| agrees(v)) {
        return Ok(v.clone());
    }
    let with_suite = fresh(Some(runner))?;
    Ok(shown_verdict(plain, with_suite, safety.flags))
}

/// The verdict to show once the suite ran: the suite's when it agrees, when the on-chain `flags`
/// carry sep41_violation (the evidence certainly held sep41 lines), when the plain scan could not
/// conclude, or when there was no plain comparison; otherwise the plain scan's.
fn shown_verdict(plain: Option<Verdict>, with_suite: Verdict, flags: u32) -> Verdict {
    let agrees = matches!(
        with_suite,
        Verdict::Agreement { .. } | Verdict::Stale { .. }
    );
    let violation_on_chain = flags & Mechanics::SEP41_VIOLATION != 0;
    match plain {
        Some(plain)
            if !agrees && !violation_on_chain && !matches!(plain, Verdict::Unverifiable { .. }) =>
        {
            plain
        }
        _ => with_suite,
    }
}

/// Reads `get_safety(asset)` (the most recent verdict by a current attester) by simulation only
/// (nothing is signed or sent).
pub fn read_safety(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
) -> Result<Option<Safety>, AttestError> {
    let value = simulate_read(rpc, registry::get_safety(registry_id, asset), "get_safety")?;
    registry::decode_safety(&value)
}

/// Whether the registry refuses `asset` because a verdict that counts is bound to code that is no
/// longer live (`assess` answers `CodeChanged`), by simulation only. `get_safety` answers `None`
/// then, as for an asset nobody attested; this tells the two apart.
pub fn read_code_changed(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
) -> Result<bool, AttestError> {
    let f = registry::assess(registry_id, asset, 3, 0, u64::MAX);
    let value = simulate_read(rpc, f, "assess")?;
    Ok(registry::is_code_changed(&value))
}

/// Reads `get_safety_by(asset, attester)`: that attester's own verdict, by simulation only.
pub fn read_safety_by(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
    attester: [u8; 32],
) -> Result<Option<Safety>, AttestError> {
    let f = registry::get_safety_by(registry_id, asset, attester);
    let value = simulate_read(rpc, f, "get_safety_by")?;
    registry::decode_safety(&value)
}

/// Asks the registry's `is_safe_quorum`, by simulation only.
pub fn read_quorum(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
    attesters: &[[u8; 32]],
    threshold: u32,
    max_severity: u32,
    max_age_secs: u64,
) -> Result<bool, AttestError> {
    let f = registry::is_safe_quorum(
        registry_id,
        asset,
        attesters,
        threshold,
        max_severity,
        max_age_secs,
    );
    match simulate_read(rpc, f, "is_safe_quorum")? {
        stellar_xdr::ScVal::Bool(b) => Ok(b),
        other => Err(AttestError::Chain(format!(
            "is_safe_quorum returned {other:?}, expected a bool"
        ))),
    }
}

/// Simulates the read `f` of registry function `name`. The simulated transaction's source is the
/// all-zero key: simulation needs no real account for a read.
fn simulate_read(
    rpc: &RpcClient,
    f: HostFunction,
    name: &str,
) -> Result<stellar_xdr::ScVal, AttestError> {
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
    let chain = AttestError::Chain;
    let response = rpc
        .simulate_transaction(&env)
        .map_err(|e| chain(e.to_string()))?;
    let sim = Simulated::from_response(&response).map_err(|e| {
        chain(match contract_error_code(&e.to_string()) {
            Some(code) => format!("{name} failed: {e} ({})", registry::registry_error(code)),
            None => {
                format!("{name} failed: {e} (is --registry an Assay registry on this network?)")
            }
        })
    })?;
    sim.result
        .ok_or_else(|| chain(format!("{name} returned no value")))
}

/// What `attester` holds in the registry for each of `assets`, read in batches of `getLedgerEntries`
/// (200 keys a call) straight from its storage (interface 5: the asset's verdicts, one record per
/// attester, under the bare asset address), instead of one simulation each. An asset with no entry, or
/// no record of `attester`, maps to `None`. The record as stored: whether it still counts (a current
/// admission, a code binding that still holds) is the contract's to say, through a simulation
/// ([`read_safety_by`]). An archived entry is left out of the map: only a simulation can say what the
/// contract would answer for it.
pub fn read_safety_many(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    assets: &[[u8; 32]],
    attester: [u8; 32],
) -> Result<std::collections::BTreeMap<[u8; 32], Option<Safety>>, AttestError> {
    use stellar_xdr::{
        AccountId, ContractDataDurability, ContractId, Hash, LedgerEntryData, LedgerKey,
        LedgerKeyContractData, Limits, PublicKey, ScAddress, ScVal, Uint256, WriteXdr,
    };
    let attester = ScAddress::Account(AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(
        attester,
    ))));
    let key_of = |asset: [u8; 32]| {
        LedgerKey::ContractData(LedgerKeyContractData {
            contract: ScAddress::Contract(ContractId(Hash(registry_id))),
            key: ScVal::Address(ScAddress::Contract(ContractId(Hash(asset)))),
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
        let answer = rpc
            .get_ledger_entries(&keys)
            .map_err(|e| AttestError::Chain(e.to_string()))?;
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
                assay_chain::submit::decode_rpc_xdr("entry xdr", Some(&entry.xdr))
                    .map_err(|e| AttestError::Chain(e.to_string()))?;
            let LedgerEntryData::ContractData(d) = data else {
                return Err(AttestError::Chain(
                    "getLedgerEntries answered a registry key with another entry type".into(),
                ));
            };
            held.insert(*asset, registry::record_of(&d.val, &attester)?);
        }
    }
    Ok(held)
}

/// The latest ledger's close time, the clock the registry stamps `attested_at` with.
pub fn ledger_time(rpc: &RpcClient) -> Result<u64, AttestError> {
    let chain = |e: &dyn std::fmt::Display| AttestError::Chain(e.to_string());
    let r = rpc
        .call("getLatestLedger", serde_json::json!({}))
        .map_err(|e| chain(&e))?;
    if let Some(t) = r["closeTime"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| r["closeTime"].as_u64())
    {
        return Ok(t);
    }
    let h = rpc
        .call("getHealth", serde_json::json!({}))
        .map_err(|e| chain(&e))?;
    h["latestLedgerCloseTime"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| chain(&"stellar-rpc reported no ledger close time"))
}

/// Wall clock seconds, for callers without a ledger time.
pub fn unix_now() -> u64 {
    assay_core::Timestamp::now().unix().unsigned_abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mismatch(field: &str) -> Verdict {
        Verdict::Mismatch {
            field: field.into(),
            on_chain: "a".into(),
            scanned: "b".into(),
        }
    }

    fn agreement() -> Verdict {
        Verdict::Agreement {
            severity: 0,
            flags: 0,
            evidence_hash: "00".into(),
            evidence_version: 3,
            age_secs: 1,
        }
    }

    fn unverifiable() -> Verdict {
        Verdict::Unverifiable {
            reason: "a source did not answer".into(),
        }
    }

    fn eval_report(name: &str) -> Report {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/eval")
            .join(name);
        let read = |f: &str| std::fs::read(dir.join(f)).ok();
        assay_core::evaluate(&assay_core::replay::load_subject(&read).unwrap()).unwrap()
    }

    #[test]
    fn verify_accepts_v6_and_an_older_version_whose_verdict_did_not_change() {
        let never = Freshness { window_secs: 0 };
        let at = |r: &Report| r.scanned_at.unix().unsigned_abs();
        let held = |p: &assay_core::Params, attested_at: u64| {
            let mut evidence_hash = [0u8; 32];
            hex::decode_to_slice(&p.evidence_hash, &mut evidence_hash).unwrap();
            Safety {
                severity: p.severity,
                flags: p.flags,
                evidence_hash,
                attested_at,
            }
        };
        // USDC held auth_revocable before v6: its v3 attestation (no signers line) still verifies, as v3.
        let usdc = eval_report("usdc-revocable-regulated");
        for (version, number) in [(EvidenceVersion::V3, 3), (EvidenceVersion::V6, 6)] {
            let p = attestation_params(&usdc, usdc.scanned_at, never, version, false).unwrap();
            let v = compare(Some(&held(&p, at(&usdc))), &usdc, at(&usdc), 0);
            assert!(
                matches!(v, Verdict::Agreement { evidence_version, .. } if evidence_version == number),
                "{v:?}"
            );
        }
        // XRP was clear under the earlier rule; now it holds the freeze: the old entry is a severity mismatch.
        let xrp = eval_report("xrp-clear-unlocked");
        let old = Safety {
            severity: 0,
            flags: 0,
            evidence_hash: [0; 32],
            attested_at: at(&xrp),
        };
        assert_eq!(
            compare(Some(&old), &xrp, at(&xrp), 0),
            Verdict::Mismatch {
                field: "severity".into(),
                on_chain: "0".into(),
                scanned: "2".into(),
            }
        );
    }

    #[test]
    fn the_suites_verdict_is_shown_when_it_agrees_or_the_evidence_held_sep41_lines() {
        let violation = Mechanics::SEP41_VIOLATION;
        // The suite reproduces the hash: agreement, whatever the plain scan said.
        assert_eq!(
            shown_verdict(Some(mismatch("evidence_hash")), agreement(), 0),
            agreement()
        );
        // Neither agrees and nothing says sep41 lines were there: the plain scan's difference.
        assert_eq!(
            shown_verdict(Some(mismatch("flags")), mismatch("evidence_hash"), 0),
            mismatch("flags")
        );
        // Bit 8 on chain: the evidence held sep41 lines, so the suite's comparison is the one.
        assert_eq!(
            shown_verdict(
                Some(mismatch("severity")),
                mismatch("evidence_hash"),
                violation
            ),
            mismatch("evidence_hash")
        );
        // A plain scan that could not conclude says nothing: the suite's comparison is shown.
        assert_eq!(
            shown_verdict(Some(unverifiable()), mismatch("evidence_hash"), 0),
            mismatch("evidence_hash")
        );
        // `verify --sep41`: only the suite's comparison was made.
        assert_eq!(shown_verdict(None, unverifiable(), 0), unverifiable());
    }
}
