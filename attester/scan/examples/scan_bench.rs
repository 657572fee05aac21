//! Scan throughput benchmark: 1,000 synthetic assets against local HTTPS servers that add 50 ms of
//! latency to every request, through the real scanner (connector, TLS, pool, sharing, retries off the
//! happy path). Prints assets/s, requests per asset, peak RSS, and the ratio to the I/O-bound ideal.
//!
//! The ideal: every asset needs three sequential round trips (asset record -> issuer account ->
//! stellar.toml, directory and blocklist in parallel), and `concurrency` assets are in flight, so the
//! ideal wall time is `ceil(assets / concurrency) * 3 * rtt`, where `rtt` is one request's round trip
//! measured against the same server in the same run (the baseline).
//!
//! Run: cargo run --release -p assay-scan --features test-support --example scan_bench [-- ASSETS CONCURRENCY]
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use assay_core::Asset;
use assay_scan::net::mapping::Mappings;
use assay_scan::net::{FetchOptions, HttpClient, NetConfig, RedirectPolicy};
use assay_scan::testsupport::{ReplayServer, Reply};
use assay_scan::{ScanConfig, Scanner};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

const LATENCY: Duration = Duration::from_millis(50);
const ASSETS_PER_ISSUER: usize = 5;
const ISSUERS_PER_DOMAIN: usize = 2;

fn issuer(i: usize) -> String {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&(i as u64).to_be_bytes());
    key[31] = 0xa5;
    stellar_strkey::ed25519::PublicKey(key)
        .to_string()
        .as_str()
        .to_string()
}

fn flags(i: usize) -> serde_json::Value {
    serde_json::json!({"auth_required": false, "auth_revocable": i.is_multiple_of(3), "auth_immutable": false, "auth_clawback_enabled": i.is_multiple_of(6)})
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let concurrency: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run(n, concurrency));
}

async fn run(n: usize, concurrency: usize) {
    let server = ReplayServer::start(&[
        "horizon.stellar.org",
        "api.stellar.expert",
        "*.bench.example",
    ])
    .await;
    let issuers = n.div_ceil(ASSETS_PER_ISSUER);
    let mut assets = Vec::with_capacity(n);
    let mut domains = Vec::new();
    for i in 0..issuers {
        let id = issuer(i);
        let domain = format!("d{}.bench.example", i / ISSUERS_PER_DOMAIN);
        let body = serde_json::json!({"id": id, "account_id": id, "home_domain": domain, "flags": flags(i)});
        server.route(
            "horizon.stellar.org",
            &format!("/accounts/{id}"),
            vec![Reply::json(body.to_string())],
        );
        server.route(
            "api.stellar.expert",
            &format!("/explorer/directory/{id}"),
            vec![Reply::status_with(
                200,
                &[("cache-control", "max-age=20")],
                "{}",
            )],
        );
        let mut toml = String::from("[DOCUMENTATION]\nORG_NAME=\"Bench\"\n");
        for a in 0..ASSETS_PER_ISSUER {
            if assets.len() == n {
                break;
            }
            let code = format!("B{i}X{a}");
            let record = serde_json::json!({"_embedded": {"records": [{"asset_code": code, "asset_issuer": id, "flags": flags(i)}]}});
            server.route(
                "horizon.stellar.org",
                &format!("/assets?asset_code={code}&asset_issuer={id}"),
                vec![Reply::json(record.to_string())],
            );
            toml.push_str(&format!(
                "[[CURRENCIES]]\ncode=\"{code}\"\nissuer=\"{id}\"\n"
            ));
            assets.push(Asset::new(&code, &id).expect("asset"));
        }
        if i.is_multiple_of(ISSUERS_PER_DOMAIN) {
            domains.push((domain.clone(), toml));
        } else if let Some(last) = domains.last_mut() {
            last.1
                .push_str(&toml.replace("[DOCUMENTATION]\nORG_NAME=\"Bench\"\n", ""));
        }
    }
    let mut connect_to = vec![
        server.connect_https("horizon.stellar.org"),
        server.connect_https("api.stellar.expert"),
    ];
    server.route(
        "horizon.stellar.org",
        "/",
        vec![Reply::horizon_root(assay_core::PUBNET_PASSPHRASE)],
    );
    for (domain, toml) in &domains {
        server.route(
            domain,
            "/.well-known/stellar.toml",
            vec![Reply::text(toml.clone())],
        );
        server.route(
            "api.stellar.expert",
            &format!("/explorer/directory/blocked-domains/{domain}"),
            vec![Reply::json(
                serde_json::json!({"domain": domain, "blocked": false}).to_string(),
            )],
        );
        connect_to.push(server.connect_https(domain));
    }
    server.set_latency(LATENCY);
    let config = NetConfig {
        mappings: Mappings {
            resolve: Vec::new(),
            connect_to: connect_to
                .iter()
                .map(|r| r.parse().expect("rule"))
                .collect(),
        },
        extra_roots: vec![CertificateDer::from_pem_slice(server.ca_pem.as_bytes()).expect("CA")],
        ..NetConfig::default()
    };
    let http = HttpClient::new(&config).expect("client");

    // Baseline: one request's round trip against the same server (connection warmed first).
    let probe = FetchOptions {
        guarded: false,
        https_only: false,
        redirects: RedirectPolicy::None,
        accept: "*/*",
    };
    let _ = http.get("https://horizon.stellar.org/probe", probe).await;
    let mut rtts = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let _ = http.get("https://horizon.stellar.org/probe", probe).await;
        rtts.push(start.elapsed());
    }
    rtts.sort();
    let rtt = rtts[rtts.len() / 2];
    server.clear_hits();

    let scanner = Arc::new(Scanner::new(
        http,
        ScanConfig {
            network_passphrase: assay_core::PUBNET_PASSPHRASE.into(),
            horizon_url: assay_core::DEFAULT_HORIZON_URL.into(),
            rpc_url: None,
            ledger_floor: Default::default(),
            expert_url: assay_core::DEFAULT_STELLAR_EXPERT_URL.into(),
            asset_lists: Vec::new(),
            cache: None,
            concurrency,
            per_host: assay_scan::hosts::HostLimits {
                concurrency,
                per_second: None,
            },
        },
    ));
    let start = Instant::now();
    let results = scanner.scan_many(assets, Arc::new(|_| {})).await;
    let elapsed = start.elapsed();
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let reports = results
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .filter_map(|s| assay_core::engine::evaluate(s).ok())
        .filter(|r| !r.undetermined)
        .count();
    let requests = server.hits().len();
    let waves = n.div_ceil(concurrency) as f64;
    let ideal = waves * 3.0 * rtt.as_secs_f64();
    let rate = n as f64 / elapsed.as_secs_f64();
    println!("assets                 {n} ({ok} scanned, {reports} complete reports)");
    println!("concurrency            {concurrency}");
    println!(
        "latency per request    {} ms (baseline rtt measured: {:.1} ms)",
        LATENCY.as_millis(),
        rtt.as_secs_f64() * 1e3
    );
    println!("wall time              {:.2} s", elapsed.as_secs_f64());
    println!("assets/s               {rate:.1}");
    println!(
        "requests per asset     {:.2} ({requests} requests; scanner counted {})",
        requests as f64 / n as f64,
        scanner.stats.requests.load(Ordering::Relaxed)
    );
    println!(
        "I/O-bound ideal        {:.2} s ({:.1} assets/s)",
        ideal,
        n as f64 / ideal
    );
    println!(
        "ratio to ideal         {:.1} %",
        100.0 * ideal / elapsed.as_secs_f64()
    );
    match peak_rss_kib() {
        Some(kib) => println!(
            "peak RSS               {:.1} MB (scanner and replay servers in one process)",
            kib as f64 / 1024.0
        ),
        None => println!("peak RSS               unavailable (no /proc/self/status)"),
    }
}
