//! `assay scan` end to end over real HTTPS against local replay servers.
mod common;

use assay_scan::testsupport::Reply;
use common::*;

#[test]
fn healthy_subject_is_a_complete_report_with_attributed_evidence() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let run = h.assay(&["scan", "--output", "json", "--asset-list", "https://lists.example.org/list.json", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["severity"], "medium");
    assert_eq!(report["accountability"], "verified");
    assert_eq!(report["undetermined"], false);
    assert_eq!(report["state"], "valid");
    let toml = evidence_from(&report, "stellar.toml");
    assert_eq!(toml[0]["url"], "https://circle.com/.well-known/stellar.toml");
    assert_eq!(toml[0]["claim"], format!("CURRENCIES claims {}", USDC.id()));
    let horizon = evidence_from(&report, "horizon");
    assert_eq!(
        horizon[0]["url"],
        format!("https://horizon.stellar.org/assets?asset_code=USDC&asset_issuer={}", USDC.issuer)
    );
    let _ = Reply::status(200);
}

#[test]
fn text_output_puts_severity_beside_accountability() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let run = h.assay(&["scan", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    println!("{}", run.stdout);
    assert!(run.stdout.contains("severity: MEDIUM    |    accountability: VERIFIED"), "{}", run.stdout);
    assert!(run.stdout.contains("could not be checked:\n    nothing: every source answered"), "{}", run.stdout);
    assert!(run.stdout.contains("[stellar.toml] CURRENCIES claims USDC-"), "{}", run.stdout);
}
