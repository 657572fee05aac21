//! Issue #18, item 1: each source host has its own bound, so a slow home domain delays only the assets
//! that need it; the others are scanned at their own pace.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assay_core::Asset;
use assay_scan::hosts::HostLimits;
use assay_scan::testsupport::{ReplayServer, Reply};

use crate::replay::{client, https_to, EXPERT, HORIZON};

const SLOW_ISSUER: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
const FAST_ISSUER: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
const SLOWNESS: Duration = Duration::from_millis(1500);

/// Routes `codes` of `issuer`, whose home domain is `domain`.
fn serve_issuer(server: &ReplayServer, issuer: &str, domain: &str, codes: &[&str]) -> Vec<Asset> {
    let account = serde_json::json!({"id": issuer, "account_id": issuer, "home_domain": domain, "flags": {"auth_required": false, "auth_revocable": false, "auth_immutable": false, "auth_clawback_enabled": false}});
    server.route(
        HORIZON,
        &format!("/accounts/{issuer}"),
        vec![Reply::json(account.to_string())],
    );
    server.route(
        EXPERT,
        &format!("/explorer/directory/{issuer}"),
        vec![Reply::status(404)],
    );
    server.route(
        EXPERT,
        &format!("/explorer/directory/blocked-domains/{domain}"),
        vec![Reply::json(
            serde_json::json!({"domain": domain, "blocked": false}).to_string(),
        )],
    );
    let mut toml = String::from("[DOCUMENTATION]\nORG_NAME=\"Test\"\n");
    let mut assets = Vec::new();
    for code in codes {
        let record = serde_json::json!({"_embedded": {"records": [{"asset_code": code, "asset_issuer": issuer, "flags": {"auth_required": false, "auth_revocable": false, "auth_immutable": false, "auth_clawback_enabled": false}}]}});
        server.route(
            HORIZON,
            &format!("/assets?asset_code={code}&asset_issuer={issuer}"),
            vec![Reply::json(record.to_string())],
        );
        toml.push_str(&format!(
            "[[CURRENCIES]]\ncode=\"{code}\"\nissuer=\"{issuer}\"\n"
        ));
        assets.push(Asset::new(code, issuer).unwrap());
    }
    server.route(domain, "/.well-known/stellar.toml", vec![Reply::text(toml)]);
    assets
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_home_domain_delays_only_its_own_assets() {
    let server = ReplayServer::start(&[HORIZON, EXPERT, "slow.test", "fast.test"]).await;
    server.route(
        HORIZON,
        "/",
        vec![Reply::horizon_root(assay_core::TESTNET_PASSPHRASE)],
    );
    let mut assets = serve_issuer(&server, SLOW_ISSUER, "slow.test", &["SLA", "SLB", "SLC"]);
    assets.extend(serve_issuer(
        &server,
        FAST_ISSUER,
        "fast.test",
        &["FAA", "FAB", "FAC"],
    ));
    server.set_host_latency("slow.test", SLOWNESS);
    let http = client(
        &server,
        https_to(&server, &[HORIZON, EXPERT, "slow.test", "fast.test"]),
    );
    // One request at a time per host: the tightest bound, where a shared queue would stall.
    let one_at_a_time = HostLimits {
        concurrency: 1,
        per_second: None,
    };
    let scanner = Arc::new(crate::replay::scanner(http, None, 6, one_at_a_time));
    let begin = Instant::now();
    let finished = Arc::new(Mutex::new(vec![Duration::ZERO; assets.len()]));
    let record = finished.clone();
    let results = scanner
        .scan_many(
            assets,
            Arc::new(move |i| record.lock().unwrap()[i] = begin.elapsed()),
        )
        .await;
    for r in &results {
        let subject = r.as_ref().expect("scanned");
        assert!(
            matches!(subject.stellar_toml, assay_core::TomlOutcome::Document(_)),
            "{:?}",
            subject.stellar_toml
        );
    }
    let finished = finished.lock().unwrap().clone();
    let (slow, fast) = finished.split_at(3);
    assert!(
        slow.iter().all(|t| *t >= SLOWNESS),
        "slow.test's assets wait for it: {slow:?}"
    );
    assert!(
        fast.iter().all(|t| *t < SLOWNESS),
        "fast.test's assets do not wait for slow.test: {fast:?} (slow: {slow:?})"
    );
}
