//! `sep41`: SEP-41 conformance verdicts entering the report. One evidence line per check (so the evidence
//! hash binds every verdict). A FAIL is the ceiling: any FAIL escalates to critical with `sep41_violation`
//! (bit 8), never touches a capability bit, and is determined even beside UNVERIFIABLE or SKIPPED rows —
//! nothing still missing could raise the level further. Without a FAIL, any UNVERIFIABLE or SKIPPED row (or
//! no rows at all) leaves the check, and so the report, undetermined.

use crate::evidence::Evidence;
use crate::finding::{Check, Finding};
use crate::model::{Mechanics, Rating, Severity};
use crate::subject::Subject;
use crate::time::Timestamp;

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
    /// Check id (e.g. `sep41-transfer`).
    pub id: String,
    /// Verdict.
    pub status: Sep41Status,
    /// What the check requires (bound by the hash), or why it did not run.
    pub detail: String,
}

/// The check over a finished suite run against `contract` (`C…`).
#[derive(Debug, Clone)]
pub struct Sep41Check {
    /// Token contract address.
    pub contract: String,
    /// Suite rows in run order.
    pub rows: Vec<Sep41Row>,
    /// When the suite ran.
    pub at: Timestamp,
}

impl Sep41Check {
    /// The finding over the rows alone (the suite needs nothing else from a subject).
    pub fn finding(&self) -> Finding {
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
        let open = unver + skipped;
        if fail > 0 {
            // The ceiling: critical is the top level, so no open row could move the verdict.
            f.severity = Rating::Level(Severity::Critical);
            f.mechanics = Mechanics::from_bits(Mechanics::SEP41_VIOLATION).unwrap_or_default();
        } else if self.rows.is_empty() || open > 0 {
            f.undetermined = true;
            f.undetermined_by_source
                .insert(SOURCE_SEP41.into(), open.max(1) as u32);
            f.undetermined_rate = Some(format!("{open}/{}", self.rows.len()));
        }
        f.reasoning = format!(
            "{} checks: {fail} failed, {unver} unverifiable, {skipped} skipped. {}",
            self.rows.len(),
            if fail > 0 && open > 0 {
                "A failed check means the token does not behave as SEP-41 says: escalated to critical (sep41_violation); capability bits are untouched. The checks that could not conclude cannot raise a verdict that is already at the ceiling, so it is determined."
            } else if fail > 0 {
                "A failed check means the token does not behave as SEP-41 says: escalated to critical (sep41_violation); capability bits are untouched."
            } else if open > 0 || self.rows.is_empty() {
                "Not every check could conclude, so conformance is undetermined and the report is not attested."
            } else {
                "Every check passed."
            }
        );
        f
    }
}

impl Check for Sep41Check {
    fn id(&self) -> &'static str {
        "sep41"
    }

    fn title(&self) -> &'static str {
        "SEP-41 conformance of the token contract"
    }

    fn run(&self, _subject: &Subject) -> Finding {
        self.finding()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(statuses: &[Sep41Status]) -> Finding {
        Sep41Check {
            contract: "CTOKEN".into(),
            rows: statuses
                .iter()
                .enumerate()
                .map(|(i, s)| Sep41Row {
                    id: format!("c{i}"),
                    status: *s,
                    detail: "requires d".into(),
                })
                .collect(),
            at: Timestamp::from_unix(1_767_225_600).unwrap(),
        }
        .finding()
    }

    #[test]
    fn fail_is_the_ceiling_even_beside_open_rows() {
        use Sep41Status::*;
        for rows in [
            vec![Fail],
            vec![Fail, Unverifiable],
            vec![Pass, Unverifiable, Fail, Skipped, Unverifiable],
        ] {
            let f = check(&rows);
            assert_eq!(f.severity, Rating::Level(Severity::Critical), "{rows:?}");
            assert!(!f.undetermined, "{rows:?}");
            assert_eq!(f.mechanics.bits(), Mechanics::SEP41_VIOLATION);
            assert_eq!(f.evidence.len(), rows.len(), "every row stays bound");
        }
    }

    #[test]
    fn without_a_fail_open_rows_are_undetermined() {
        use Sep41Status::*;
        for rows in [vec![], vec![Unverifiable], vec![Pass, Skipped]] {
            let f = check(&rows);
            assert!(f.undetermined, "{rows:?}");
            assert_eq!(f.severity, Rating::Level(Severity::Clear));
            assert_eq!(f.mechanics.bits(), 0);
        }
        let f = check(&[Pass, Pass]);
        assert!(!f.undetermined);
        assert_eq!(f.evidence[0].claim, "c0 PASS: requires d");
    }
}
