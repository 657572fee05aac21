//! `assay verify`: compare what the registry holds with a fresh scan, recomputing the hash in the preimage
//! version the on-chain value was written with.

use assay_core::{attestation_params, EvidenceVersion, Freshness, Mechanics, Report};
use serde::Serialize;

use crate::registry::Safety;
use crate::scanning::ScanSettings;
use crate::sep41::Sep41Runner;
use crate::targets::{evaluate_targets, Target};
use crate::AttestError;
use assay_chain::rpc::RpcClient;

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
        let report = evaluated.remove(0).report?;
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
