//! Issue #26, item 5: the scan's deadline holds under any source behaviour. Every wait (a retry's backoff,
//! `Retry-After`, a host's pause, its rate spacing) ends with the scan's budget, after which the source is
//! recorded as not read and the report is undetermined.
use std::time::Duration;

use assay_core::{Asset, DirectoryOutcome, FailureCategory, Subject};
use assay_scan::hosts::HostLimits;
use assay_scan::scanner::SCAN_BUDGET;
use assay_scan::testsupport::{ReplayServer, Reply};
use assay_scan::Scanner;

pub(crate) use crate::replay::{EXPERT, HORIZON};
pub(crate) const DOMAIN: &str = "issuer.test";
pub(crate) const ISSUER: &str = "GBXRPL45NPHCVMFFAYZVUVFFVKSIZ362ZXFP7I2ETNQ3QKZMFLPRDTD5";

/// A replay of one asset whose every source answers, and a scanner of it with `per_host` limits.
async fn world(per_host: HostLimits) -> (ReplayServer, Scanner, Asset) {
    world_with(per_host, Some(DOMAIN)).await
}

/// [`world`], the issuer advertising `home_domain` (none: the key is absent from its account record).
pub(crate) async fn world_with(
    per_host: HostLimits,
    home_domain: Option<&str>,
) -> (ReplayServer, Scanner, Asset) {
    let server = ReplayServer::start(&[HORIZON, EXPERT, DOMAIN]).await;
    let flags = serde_json::json!({"auth_required": false, "auth_revocable": false, "auth_immutable": false, "auth_clawback_enabled": false});
    server.route(
        HORIZON,
        "/",
        vec![Reply::horizon_root(assay_core::TESTNET_PASSPHRASE)],
    );
    server.route(
        HORIZON,
        &format!("/assets?asset_code=XRP&asset_issuer={ISSUER}"),
        vec![Reply::json(
            serde_json::json!({"_embedded": {"records": [{"asset_code": "XRP", "asset_issuer": ISSUER, "flags": flags}]}})
                .to_string(),
        )],
    );
    let mut account = serde_json::json!({"account_id": ISSUER, "flags": flags,
        "thresholds": {"low_threshold": 0, "med_threshold": 0, "high_threshold": 0},
        "signers": [{"weight": 1, "key": ISSUER, "type": "ed25519_public_key"}]});
    if let Some(domain) = home_domain {
        account["home_domain"] = domain.into();
    }
    server.route(
        HORIZON,
        &format!("/accounts/{ISSUER}"),
        vec![Reply::json(account.to_string())],
    );
    server.route(
        EXPERT,
        &format!("/explorer/directory/{ISSUER}"),
        vec![Reply::status(404)],
    );
    server.route(
        EXPERT,
        &format!("/explorer/directory/blocked-domains/{DOMAIN}"),
        vec![Reply::json(
            serde_json::json!({"domain": DOMAIN, "blocked": false}).to_string(),
        )],
    );
    server.route(
        DOMAIN,
        "/.well-known/stellar.toml",
        vec![Reply::text(format!(
            "[[CURRENCIES]]\ncode=\"XRP\"\nissuer=\"{ISSUER}\"\n"
        ))],
    );
    let http = crate::replay::client(
        &server,
        crate::replay::https_to(&server, &[HORIZON, EXPERT, DOMAIN]),
    );
    let scanner = crate::replay::scanner(http, None, 1, per_host);
    (server, scanner, Asset::new("XRP", ISSUER).unwrap())
}

/// The scan of `asset`, which must arrive within `budget`.
async fn scan_within(scanner: &Scanner, asset: &Asset, budget: Duration) -> Subject {
    tokio::time::timeout(budget, scanner.scan(asset))
        .await
        .unwrap_or_else(|_| panic!("the scan did not finish within its budget of {budget:?}"))
        .expect("Horizon answered")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_asking_for_120_s_yields_an_undetermined_report_within_the_default_budget() {
    let (server, scanner, asset) = world(HostLimits::default()).await;
    server.route(
        EXPERT,
        &format!("/explorer/directory/{ISSUER}"),
        vec![Reply::status_with(
            429,
            &[("retry-after", "120")],
            "rate limited",
        )],
    );
    let subject = scan_within(&scanner, &asset, SCAN_BUDGET).await;
    // The directory was never read; the last answer it gave is what the evidence records.
    match &subject.directory {
        DirectoryOutcome::Failed(a) => {
            assert_eq!(a.failure.category, FailureCategory::Status(429), "{a:?}")
        }
        other => panic!("the directory must be a failure, got {other:?}"),
    }
    let report = assay_core::evaluate(&subject).unwrap();
    assert!(report.undetermined);
    assert_eq!(report.undetermined_checks, ["reputation"]);
    // The other sources answered: only the directory is missing.
    assert!(matches!(
        subject.blocklist,
        assay_core::BlocklistOutcome::Answered(_)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_gate_and_a_slow_host_end_with_a_shortened_budget() {
    // StellarExpert limited to one request per 1,000 s: the blocklist's turn comes long after the
    // directory's, and the home domain answers after 30 s. Neither is waited for past the budget.
    let (server, scanner, asset) = world(HostLimits::default()).await;
    let budget = Duration::from_secs(3);
    let scanner = scanner
        .with_host_limits([(
            EXPERT.to_string(),
            HostLimits {
                concurrency: 1,
                per_second: Some(0.001),
            },
        )])
        .with_budget(budget);
    server.set_host_latency(DOMAIN, Duration::from_secs(30));
    let subject = scan_within(&scanner, &asset, budget + Duration::from_secs(1)).await;
    let failed = |category: &FailureCategory| *category == FailureCategory::Timeout;
    let gaps = [
        match &subject.directory {
            DirectoryOutcome::Failed(a) => failed(&a.failure.category),
            _ => false,
        },
        match &subject.blocklist {
            assay_core::BlocklistOutcome::Failed(a) => failed(&a.failure.category),
            _ => false,
        },
    ];
    // One of the two StellarExpert lookups got the host's only turn; the other is out of budget.
    assert_eq!(gaps.iter().filter(|g| **g).count(), 1, "{subject:#?}");
    assert!(
        matches!(&subject.stellar_toml, assay_core::TomlOutcome::Failed { failure, .. } if failure.category == FailureCategory::Timeout),
        "{:?}",
        subject.stellar_toml
    );
    let report = assay_core::evaluate(&subject).unwrap();
    assert!(report.undetermined);
}
