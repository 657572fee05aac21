//! The `sep41` check: SEP-41 conformance verdicts entering the report. One evidence line per check (so the
//! evidence hash binds every verdict); any FAIL escalates to critical with `sep41_violation` (bit 8) and never
//! touches a capability bit; any UNVERIFIABLE or SKIPPED row leaves the check, and so the report,
//! undetermined — and an undetermined report is never attested.

use assay_core::checks::default_checks;
use assay_core::{
    Check, Engine, EngineError, Evidence, Finding, Mechanics, Rating, Report, Severity, Subject,
    Timestamp,
};

/// Evidence source of the conformance suite's lines.
pub const SOURCE_SEP41: &str = "sep41";

/// A conformance verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sep41Status {
    /// Behaved as SEP-41 requires.
    Pass,
    /// Violated SEP-41 (a defective read is a FAIL too).
    Fail,
    /// A premise was missing; says nothing about the contract.
    Unverifiable,
    /// The harness or network failed; no answer.
    Skipped,
}

impl Sep41Status {
    /// `PASS`, `FAIL`, `UNVERIFIABLE`, `SKIPPED`.
    pub fn name(self) -> &'static str {
        match self {
            Sep41Status::Pass => "PASS",
            Sep41Status::Fail => "FAIL",
            Sep41Status::Unverifiable => "UNVERIFIABLE",
            Sep41Status::Skipped => "SKIPPED",
        }
    }
}

/// One row of a suite run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sep41Row {
    /// Check id (e.g. `transfer-moves-balance`).
    pub id: String,
    /// Verdict.
    pub status: Sep41Status,
    /// What was observed.
    pub detail: String,
}

/// The check over a finished suite run against `contract` (`C…`).
pub struct Sep41Check {
    /// Token contract address.
    pub contract: String,
    /// Suite rows in run order.
    pub rows: Vec<Sep41Row>,
    /// When the suite ran.
    pub at: Timestamp,
}

impl Check for Sep41Check {
    fn id(&self) -> &'static str {
        "sep41"
    }

    fn title(&self) -> &'static str {
        "SEP-41 conformance of the token contract"
    }

    fn run(&self, _subject: &Subject) -> Finding {
        let mut f = Finding::new(self);
        f.escalation = true;
        let count = |s: Sep41Status| self.rows.iter().filter(|r| r.status == s).count();
        let (fail, unver, skipped) = (
            count(Sep41Status::Fail),
            count(Sep41Status::Unverifiable),
            count(Sep41Status::Skipped),
        );
        f.evidence = self
            .rows
            .iter()
            .map(|r| {
                Evidence::answer(
                    SOURCE_SEP41,
                    &self.contract,
                    format!("{} {}: {}", r.id, r.status.name(), r.detail),
                    self.at,
                )
            })
            .collect();
        if fail > 0 {
            f.severity = Rating::Level(Severity::Critical);
            f.mechanics = Mechanics::from_bits(Mechanics::SEP41_VIOLATION).unwrap_or_default();
        }
        if self.rows.is_empty() || unver + skipped > 0 {
            f.undetermined = true;
            f.undetermined_by_source
                .insert(SOURCE_SEP41.into(), (unver + skipped).max(1) as u32);
            f.undetermined_rate = Some(format!("{}/{}", unver + skipped, self.rows.len()));
        }
        f.reasoning = format!(
            "{} checks: {} failed, {} unverifiable, {} skipped. {}",
            self.rows.len(),
            fail,
            unver,
            skipped,
            if fail > 0 {
                "A failed check means the token does not behave as SEP-41 says: escalated to critical (sep41_violation); capability bits are untouched."
            } else if unver + skipped > 0 || self.rows.is_empty() {
                "Not every check could conclude, so conformance is undetermined and the report is not attested."
            } else {
                "Every check passed."
            }
        );
        f
    }
}

/// Evaluates `subject` with the default checks plus the `sep41` check.
pub fn evaluate_with_sep41(subject: &Subject, check: Sep41Check) -> Result<Report, EngineError> {
    let mut checks = default_checks();
    checks.push(Box::new(check));
    Engine::with_checks(checks).run(subject)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject() -> Subject {
        let dir = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/eval/usdz-clawback-verified"
        ));
        assay_core::replay::load_subject(&|name: &str| std::fs::read(dir.join(name)).ok())
            .expect("eval subject")
    }

    fn rows(statuses: &[Sep41Status]) -> Vec<Sep41Row> {
        statuses
            .iter()
            .enumerate()
            .map(|(i, s)| Sep41Row {
                id: format!("c{i}"),
                status: *s,
                detail: "d".into(),
            })
            .collect()
    }

    fn eval(statuses: &[Sep41Status]) -> Report {
        let s = subject();
        let at = s.scanned_at;
        evaluate_with_sep41(
            &s,
            Sep41Check {
                contract: "CTOKEN".into(),
                rows: rows(statuses),
                at,
            },
        )
        .unwrap()
    }

    #[test]
    fn pass_changes_nothing_but_binds_evidence() {
        let plain = assay_core::evaluate(&subject()).unwrap();
        let r = eval(&[Sep41Status::Pass, Sep41Status::Pass]);
        assert_eq!(
            (r.severity, r.base_severity, r.mechanics),
            (plain.severity, plain.base_severity, plain.mechanics)
        );
        assert!(!r.undetermined);
        assert!(r.checks.contains(&"sep41".to_string()));
        assert_eq!(
            r.evidence
                .iter()
                .filter(|e| e.source == SOURCE_SEP41)
                .count(),
            2
        );
        let now = r.scanned_at;
        let a = crate::decide(&r, now, Default::default());
        let b = crate::decide(
            &eval(&[Sep41Status::Pass, Sep41Status::Pass]),
            now,
            Default::default(),
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            crate::decide(&plain, now, Default::default()),
            "the sep41 lines are bound by the hash"
        );
    }

    #[test]
    fn fail_escalates_to_critical_with_bit_8_only() {
        let plain = assay_core::evaluate(&subject()).unwrap();
        let r = eval(&[Sep41Status::Pass, Sep41Status::Fail]);
        assert_eq!(r.severity, Rating::Level(Severity::Critical));
        assert_eq!(r.base_severity, plain.base_severity);
        assert!(r.escalated);
        assert_eq!(
            r.mechanics.bits() & Mechanics::CAPABILITY_MASK,
            plain.mechanics.bits() & Mechanics::CAPABILITY_MASK
        );
        assert!(r.mechanics.has(Mechanics::SEP41_VIOLATION));
        assert!(crate::decide(&r, r.scanned_at, Default::default()).is_attest());
    }

    #[test]
    fn unverifiable_or_skipped_is_undetermined_and_refused() {
        for s in [Sep41Status::Unverifiable, Sep41Status::Skipped] {
            let r = eval(&[Sep41Status::Pass, s]);
            assert!(r.undetermined && r.undetermined_checks.contains(&"sep41".to_string()));
            let d = crate::decide(&r, r.scanned_at, Default::default());
            assert!(
                matches!(
                    d,
                    crate::Decision::Refuse(assay_core::Refusal::Undetermined { .. })
                ),
                "{d:?}"
            );
        }
        let r = eval(&[Sep41Status::Fail, Sep41Status::Skipped]);
        assert!(
            r.undetermined && r.mechanics.has(Mechanics::SEP41_VIOLATION),
            "a FAIL still shows, but nothing is attested"
        );
    }
}
