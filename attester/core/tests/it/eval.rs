//! Every eval subject yields its expected verdict; a failure prints the subject's `why`.

use crate::common;

use assay_core::{evaluate, Rating};

#[test]
fn every_eval_subject_yields_its_expected_verdict() {
    let mut failures = Vec::new();
    for dir in common::eval_dirs() {
        let name = common::name(&dir);
        let report =
            evaluate(&common::subject(&dir)).unwrap_or_else(|e| panic!("{name}: engine error {e}"));
        let want = common::expected(&dir);
        let mut diffs = Vec::new();
        let mut cmp = |what: &str, got: String, exp: String| {
            if got != exp {
                diffs.push(format!("  {what}: got {got}, expected {exp}"));
            }
        };
        cmp(
            "severity",
            report.severity.to_string(),
            want.severity.to_string(),
        );
        cmp(
            "base_severity",
            report.base_severity.to_string(),
            want.base_severity.to_string(),
        );
        cmp(
            "escalated",
            report.escalated.to_string(),
            want.escalated.to_string(),
        );
        cmp(
            "accountability",
            report.accountability.to_string(),
            want.accountability.to_string(),
        );
        cmp(
            "mechanics",
            format!("{:?}", report.mechanics.names()),
            format!("{:?}", want.mechanics.names()),
        );
        cmp(
            "state",
            format!("{:?}", report.state),
            format!("{:?}", want.state),
        );
        cmp(
            "undetermined_checks",
            format!("{:?}", report.undetermined_checks),
            format!("{:?}", want.undetermined_checks),
        );
        if !diffs.is_empty() {
            failures.push(format!(
                "{name}:\n{}\n  why: {}",
                diffs.join("\n"),
                want.why
            ));
        }
        // Expectations never name unevaluated: an eval subject always has flags to read.
        assert_ne!(want.severity, Rating::Unevaluated, "{name}");
    }
    assert!(
        failures.is_empty(),
        "eval failures:\n{}",
        failures.join("\n\n")
    );
}
