//! The write policy: when a verdict that may be written must be written now, and how long to wait after
//! failures. [`crate::decide::decide`] says whether a report may be written at all.

use std::fmt;
use std::time::Duration;

use assay_core::Params;

use crate::registry::Safety;

/// Why a verdict that may be written must be written now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteReason {
    /// The registry holds nothing for the asset.
    Absent,
    /// The registry holds another severity, mechanics or evidence.
    VerdictChanged,
    /// The registry agrees, but the entry would go stale before the next check could refresh it.
    Refresh,
}

impl WriteReason {
    /// The words the journal and the health state use.
    pub fn as_str(self) -> &'static str {
        match self {
            WriteReason::Absent => "absent on chain",
            WriteReason::VerdictChanged => "verdict changed",
            WriteReason::Refresh => "refresh before it goes stale",
        }
    }
}

impl fmt::Display for WriteReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the verdict `params` (which [`crate::decide::decide`] allowed) must be written now, given what
/// the registry holds and the ledger's time; `None` when the entry agrees and stays fresh past the margin.
pub fn write_reason(
    on_chain: Option<&Safety>,
    params: &Params,
    ledger_now: u64,
    max_age: u64,
    margin: u64,
) -> Option<WriteReason> {
    let Some(s) = on_chain else {
        return Some(WriteReason::Absent);
    };
    if s.severity != params.severity
        || s.flags != params.flags
        || hex::encode(s.evidence_hash) != params.evidence_hash
    {
        return Some(WriteReason::VerdictChanged);
    }
    if ledger_now
        .saturating_sub(s.attested_at)
        .saturating_add(margin)
        > max_age
    {
        return Some(WriteReason::Refresh);
    }
    None
}

/// Delay before retrying after `failures` consecutive failures: 15 s doubling, capped at the larger of the
/// interval and 15 minutes.
pub fn backoff(failures: u32, interval: Duration) -> Duration {
    let base = Duration::from_secs(15).saturating_mul(1u32 << failures.saturating_sub(1).min(10));
    base.min(interval.max(Duration::from_secs(900)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(sev: u32, flags: u32, hash: &str) -> Params {
        Params {
            asset: "A".into(),
            severity: sev,
            severity_name: String::new(),
            flags,
            mechanics: assay_core::Mechanics::empty(),
            checks: vec![],
            network: None,
            evidence_version: 3,
            evidence_hash: hash.into(),
            scanned_at: assay_core::Timestamp::from_unix(0).unwrap(),
            preimage: None,
        }
    }

    #[test]
    fn item5_hostile_ledger_time_does_not_overflow_the_refresh_rule() {
        let s = Safety {
            severity: 1,
            flags: 1,
            evidence_hash: [0x11; 32],
            attested_at: 0,
        };
        let p = params(1, 1, &"11".repeat(32));
        assert_eq!(
            write_reason(Some(&s), &p, u64::MAX, 86_400, 3_600),
            Some(WriteReason::Refresh)
        );
    }

    #[test]
    fn writes_when_absent_changed_or_nearly_stale() {
        let h = "11".repeat(32);
        let s = Safety {
            severity: 1,
            flags: 1,
            evidence_hash: [0x11; 32],
            attested_at: 1000,
        };
        assert_eq!(
            write_reason(None, &params(1, 1, &h), 1000, 86_400, 3600),
            Some(WriteReason::Absent)
        );
        assert_eq!(
            write_reason(Some(&s), &params(1, 1, &h), 1000 + 3600, 86_400, 3600),
            None
        );
        assert_eq!(
            write_reason(Some(&s), &params(2, 1, &h), 1000, 86_400, 3600),
            Some(WriteReason::VerdictChanged)
        );
        assert_eq!(
            write_reason(
                Some(&s),
                &params(1, 1, &"22".repeat(32)),
                1000,
                86_400,
                3600
            ),
            Some(WriteReason::VerdictChanged)
        );
        assert_eq!(
            write_reason(
                Some(&s),
                &params(1, 1, &h),
                1000 + 86_400 - 3599,
                86_400,
                3600
            ),
            Some(WriteReason::Refresh)
        );
    }

    /// The report of eval subject `name`, judged now, and the parameters `decide` writes for it.
    fn judged(name: &str) -> (assay_core::Report, Params) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/eval")
            .join(name);
        let read = |f: &str| std::fs::read(dir.join(f)).ok();
        let subject = assay_core::replay::load_subject(&read).unwrap();
        let report = assay_core::evaluate(&subject).unwrap();
        let at = report.scanned_at;
        let params = match crate::decide::decide(&report, at, assay_core::Freshness::default()) {
            crate::decide::Decision::Attest(p) => p,
            other => panic!("{name}: {other:?}"),
        };
        (report, params)
    }

    /// What the registry held after a write under the rule before the latent freeze: the v3 hash of the
    /// report without bit 1 and without the signers line (which that rule never read).
    fn written_under_the_old_rule(
        report: &assay_core::Report,
        severity: u32,
        flags: u32,
    ) -> Safety {
        use assay_core::{evidence_hash, EvidenceVersion, PreimageInput, Severity};
        let mut old = PreimageInput::from_report(report).unwrap();
        let level = Severity::ALL[severity as usize];
        old.severity = level;
        old.base_severity = level;
        old.mechanics = flags;
        old.evidence
            .retain(|(s, _, _)| s != assay_core::evidence::SOURCE_ISSUER_SIGNERS);
        let hash = evidence_hash(&old, EvidenceVersion::V3);
        let mut evidence_hash = [0u8; 32];
        hex::decode_to_slice(hash, &mut evidence_hash).unwrap();
        Safety {
            severity,
            flags,
            evidence_hash,
            attested_at: 1000,
        }
    }

    #[test]
    fn an_entry_written_clear_under_the_old_rule_is_rewritten_on_the_next_pass() {
        // XRP: no flag, not locked, one key: clear before the latent-freeze rule, medium with bit 1 now.
        let (report, params) = judged("xrp-clear-unlocked");
        assert_eq!(
            (params.severity, params.flags, params.evidence_version),
            (2, 2, 8)
        );
        let held = written_under_the_old_rule(&report, 0, 0);
        assert_eq!(
            write_reason(Some(&held), &params, 1000, 86_400, 3600),
            Some(WriteReason::VerdictChanged)
        );
        // USDC held auth_revocable all along: the verdict is the same, but the hash now binds who can act
        // (v6 on) and no operator endpoint (v7), so the entry is rewritten once as well.
        let (report, params) = judged("usdc-revocable-regulated");
        let held = written_under_the_old_rule(&report, params.severity, params.flags);
        assert_eq!(
            write_reason(Some(&held), &params, 1000, 86_400, 3600),
            Some(WriteReason::VerdictChanged)
        );
        // Once rewritten, it stays until the refresh margin.
        let mut rewritten = held;
        hex::decode_to_slice(&params.evidence_hash, &mut rewritten.evidence_hash).unwrap();
        assert_eq!(
            write_reason(Some(&rewritten), &params, 1000, 86_400, 3600),
            None
        );
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let i = Duration::from_secs(300);
        assert_eq!(backoff(1, i), Duration::from_secs(15));
        assert_eq!(backoff(2, i), Duration::from_secs(30));
        assert_eq!(backoff(20, i), Duration::from_secs(900));
    }
}
