//! Evidence bundles: every eval subject's report bundles, checks and re-derives its own verdict in every
//! version; a changed line is named; a verdict its claims do not support is refused.

use crate::common;

use assay_core::bundle::{check_bundle, rederive, Bundle, BundleError};
use assay_core::hash::EvidenceVersion;
use assay_core::{evaluate, Mechanics};

fn vector_lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(common::testdata().join(format!("vectors/{name}.preimage")))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_eval_report_rederives_its_verdict_in_every_version() {
    let mut checked = 0;
    for dir in common::eval_dirs() {
        let name = common::name(&dir);
        let report = evaluate(&common::subject(&dir)).unwrap();
        if report.severity.level().is_none() {
            continue;
        }
        for version in EvidenceVersion::candidates_for(&report.asset) {
            let bundle = Bundle::of(&report, *version).unwrap();
            let derived = check_bundle(&bundle).unwrap_or_else(|e| panic!("{name} {version}: {e}"));
            assert_eq!(
                Some(derived.severity),
                report.severity.level(),
                "{name} {version}"
            );
            assert_eq!(
                derived.mechanics,
                report.mechanics.bits(),
                "{name} {version}"
            );
            assert_eq!(derived.escalated, report.escalated, "{name} {version}");
            // The bundle survives its JSON form.
            let again: Bundle =
                serde_json::from_str(&serde_json::to_string(&bundle).unwrap()).unwrap();
            assert_eq!(again, bundle);
            checked += 1;
        }
    }
    assert!(checked >= 40, "{checked} bundles checked");
}

#[test]
fn a_changed_line_is_named() {
    let dir = common::testdata().join("eval/usdz-clawback-verified");
    let report = evaluate(&common::subject(&dir)).unwrap();
    let mut bundle = Bundle::of(&report, EvidenceVersion::V6).unwrap();
    let index = bundle
        .lines
        .iter()
        .position(|l| l.contains("issuer flags:"))
        .unwrap();
    let original = bundle.lines[index].clone();
    bundle.lines[index] =
        original.replace("auth_clawback_enabled=true", "auth_clawback_enabled=false");
    assert_ne!(bundle.lines[index], original);
    match check_bundle(&bundle) {
        Err(BundleError::LineChanged {
            line,
            found,
            expected,
        }) => {
            assert_eq!(line, index + 1);
            assert_eq!(expected, original);
            assert!(found.contains("auth_clawback_enabled=false"));
        }
        other => panic!("expected the changed line named, got {other:?}"),
    }
    // The hash itself replaced as well: the report no longer matches, so the lines are refused too.
    bundle.evidence_hash = "00".repeat(32);
    assert!(matches!(
        check_bundle(&bundle),
        Err(BundleError::HashMismatch { .. })
    ));
}

#[test]
fn a_verdict_the_claims_do_not_support_is_refused() {
    let dir = common::testdata().join("eval/usdz-clawback-verified");
    let report = evaluate(&common::subject(&dir)).unwrap();
    let bundle = Bundle::of(&report, EvidenceVersion::V6).unwrap();
    // Claimed clear with no mechanics beside a clawback flag line.
    let lines: Vec<String> = bundle
        .lines
        .iter()
        .map(|l| match l.split_once('\t') {
            Some(("severity" | "base_severity", _)) => {
                format!("{}\t0", l.split('\t').next().unwrap())
            }
            Some(("mechanics", _)) => "mechanics\t0".into(),
            _ => l.clone(),
        })
        .collect();
    let Err(BundleError::Rederived(differences)) = rederive(&lines, EvidenceVersion::V6) else {
        panic!("expected the verdict refused");
    };
    assert!(
        differences
            .iter()
            .any(|d| d.starts_with("severity: the lines state 0, their claims give 3")),
        "{differences:?}"
    );
    assert!(
        differences.iter().any(|d| d.starts_with("mechanics:")),
        "{differences:?}"
    );
}

#[test]
fn contract_vectors_rederive() {
    let derived = rederive(&vector_lines("contract-upgradable-v4"), EvidenceVersion::V4).unwrap();
    assert!(derived.mechanics & Mechanics::CODE_MUTABLE != 0);
    let derived = rederive(
        &vector_lines("contract-sep41-critical-v4"),
        EvidenceVersion::V4,
    )
    .unwrap();
    assert!(derived.mechanics & Mechanics::SEP41_VIOLATION != 0);
    assert!(derived.sep41.iter().any(|(_, v)| v == "FAIL"));
}

#[test]
fn v8_binds_a_transfer_fee_and_rates_one_that_delivers_nothing_high() {
    let lines = vector_lines("contract-transfer-fee-v8");
    let derived = rederive(&lines, EvidenceVersion::V8).unwrap();
    assert_eq!(derived.mechanics, Mechanics::ADMIN_TRANSFER_FEE);
    assert_eq!(derived.severity, assay_core::Severity::High);
    assert_eq!(derived.base_severity, assay_core::Severity::High);
    // Stated medium, the claims still give high: refused, naming both.
    let medium: Vec<String> = lines
        .iter()
        .map(|l| match l.as_str() {
            "severity\t3" => "severity\t2".to_string(),
            "base_severity\t3" => "base_severity\t2".to_string(),
            _ => l.clone(),
        })
        .collect();
    let refused = rederive(&medium, EvidenceVersion::V8).unwrap_err();
    assert!(
        matches!(&refused, BundleError::Rederived(d) if d.iter().any(|d| d.starts_with("severity: the lines state 2, their claims give 3"))),
        "{refused}"
    );
    // A share short of everything is medium, bit 14's floor.
    let partial: Vec<String> = lines
        .iter()
        .map(|l| {
            l.replace("severity\t3", "severity\t2").replace(
                "delivers nothing of what it sends to its recipient; another address is credited with it",
                "delivers less than it sends to its recipient; another address is credited with the rest",
            )
        })
        .collect();
    let derived = rederive(&partial, EvidenceVersion::V8).unwrap();
    assert_eq!(
        (derived.severity, derived.mechanics),
        (assay_core::Severity::Medium, Mechanics::ADMIN_TRANSFER_FEE)
    );
    // Under v7 no claim gives bit 14: the same lines with v7's header do not re-derive.
    let mut v7 = lines.clone();
    v7[0] = "assay-evidence-v7".into();
    assert!(matches!(
        rederive(&v7, EvidenceVersion::V7),
        Err(BundleError::Rederived(_))
    ));
}

#[test]
fn v7_vectors_rederive_for_both_subjects() {
    let derived = rederive(&vector_lines("contract-behaviour-v7"), EvidenceVersion::V7).unwrap();
    assert_eq!(derived.mechanics, Mechanics::ADMIN_MINT);
    assert_eq!(derived.behaviour.len(), 1);
    assert!(derived.asset.starts_with('C'));
    let derived = rederive(
        &vector_lines("classic-latent-freeze-v7"),
        EvidenceVersion::V7,
    )
    .unwrap();
    assert_eq!(derived.mechanics, Mechanics::AUTH_REVOCABLE);
    assert!(
        derived.notes.is_empty(),
        "v7 binds the signers: {derived:?}"
    );
}
