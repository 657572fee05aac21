//! Issue #26, item 6 (scanner-checks fix #4): an issuer with no `home_domain` is looked up on the domain
//! blocklist by the domain StellarExpert's directory lists it under.
use assay_core::{BlocklistOutcome, Rating, Severity, State};
use assay_scan::hosts::HostLimits;
use assay_scan::testsupport::Reply;

use super::scan_budget::{world_with, EXPERT, ISSUER};

/// Scans the issuer with no home_domain, listed in the directory under `listed.example`, whose blocklist
/// answer is `blocked`.
async fn scan_listed(blocked: bool) -> assay_core::Report {
    let (server, scanner, asset) = world_with(HostLimits::default(), None).await;
    server.route(
        EXPERT,
        &format!("/explorer/directory/{ISSUER}"),
        vec![Reply::json(
            serde_json::json!({"address": ISSUER, "name": "Listed", "domain": "listed.example", "tags": ["issuer"]})
                .to_string(),
        )],
    );
    server.route(
        EXPERT,
        "/explorer/directory/blocked-domains/listed.example",
        vec![Reply::json(
            serde_json::json!({"domain": "listed.example", "blocked": blocked}).to_string(),
        )],
    );
    let subject = scanner.scan(&asset).await.expect("scanned");
    match &subject.blocklist {
        BlocklistOutcome::Answered(o) => {
            assert_eq!(o.value.domain, "listed.example");
            assert_eq!(o.value.blocked, blocked);
        }
        other => panic!("the blocklist must be asked about the directory's domain: {other:?}"),
    }
    assert_eq!(
        server.hit_count(EXPERT, "/explorer/directory/blocked-domains/listed.example"),
        1
    );
    assay_core::evaluate(&subject).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocklisted_directory_domain_escalates() {
    let report = scan_listed(true).await;
    assert_eq!(report.severity, Rating::Level(Severity::Critical));
    assert!(report.escalated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_directory_domain_with_every_source_answered_is_attestable() {
    let report = scan_listed(false).await;
    assert!(!report.undetermined, "{:?}", report.undetermined_checks);
    assert_eq!(report.state, State::Valid);
    let decided = assay_core::attestation_params(
        &report,
        report.scanned_at,
        assay_core::Freshness::default(),
        assay_core::EvidenceVersion::default_for(&report.asset),
        false,
    );
    assert!(decided.is_ok(), "{decided:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_domain_anywhere_leaves_the_blocklist_unasked_and_the_report_undetermined() {
    // The directory answers 404 (not listed): there is nothing to key the lookup on.
    let (server, scanner, asset) = world_with(HostLimits::default(), None).await;
    let subject = scanner.scan(&asset).await.expect("scanned");
    assert_eq!(subject.blocklist, BlocklistOutcome::SkippedNoHomeDomain);
    assert!(server
        .hits()
        .iter()
        .all(|(_, path)| !path.contains("blocked-domains")));
    let report = assay_core::evaluate(&subject).unwrap();
    assert_eq!(report.undetermined_checks, ["reputation"]);
}
