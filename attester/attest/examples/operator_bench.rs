//! Benchmark for issue #18: `watch` at operator scale on the local network (real registry WASM) with its
//! off-chain sources replayed over local HTTPS at 50 ms per request. Prints figures; asserts nothing.
//!
//! (a) One pass over 1,000 assets (100 issuers of 10 assets, 10 home domains): pass wall time against the
//!     I/O-bound ideal for the configured per-host concurrency (the busiest replayed host's requests, in
//!     waves of `per_host_concurrency`, 50 ms each), then the same plus the transactions' ledger closes;
//!     `attest_many` transactions against ceil(writes / the registry's cap); peak RSS. A second pass (nothing to write)
//!     follows.
//! (b) Reaction: while `watch` runs (react_every_ledgers = 1), an issuer's flags are flipped 20 times;
//!     for each, the ledgers from the change to the registry holding the new verdict, and their p95.
//!
//! Run: `cargo run --release -p assay-attest --example operator_bench`

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use assay_attest::sac;
use assay_attest::verify::read_safety;
use assay_attest::watch::{Checked, Reaction, WatchConfig, Watcher};
use common::*;

const LATENCY: Duration = Duration::from_millis(50);
const ISSUERS: u8 = 100;
const PER_ISSUER: usize = 10;
const DOMAINS: [&str; 10] = [
    "d0.bench", "d1.bench", "d2.bench", "d3.bench", "d4.bench", "d5.bench", "d6.bench", "d7.bench",
    "d8.bench", "d9.bench",
];
const CODES: [&str; PER_ISSUER] = [
    "BKA", "BKB", "BKC", "BKD", "BKE", "BKF", "BKG", "BKH", "BKI", "BKJ",
];

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

fn issuer(n: u8, salt: u8) -> String {
    let mut key = [salt; 32];
    key[0] = n;
    stellar_strkey::ed25519::PublicKey(key)
        .to_string()
        .as_str()
        .to_string()
}

type Assets = Vec<(assay_core::Token, [u8; 32], Duration)>;

/// `issuers` issuers of `per_issuer` assets each, spread over the domains, their sources replayed.
fn issue_many(w: &World, issuers: u8, per_issuer: usize, salt: u8, interval: Duration) -> Assets {
    let mut assets = Vec::new();
    for n in 0..issuers {
        let iss = issuer(n, salt);
        let domain = DOMAINS[n as usize % DOMAINS.len()];
        w.serve_eval("aqua-clear-verified", &iss, domain);
        for (k, code) in CODES.iter().take(per_issuer).enumerate() {
            let a = if k == 0 {
                w.issue(code, &iss, 0, Some(domain))
            } else {
                let a = ClassicAsset {
                    code,
                    issuer: iss.clone(),
                };
                w.net
                    .admin_set_trustline(
                        &account_id(w.holder.public_key()),
                        &a.xdr(),
                        10_000_000,
                        i64::MAX,
                        1,
                    )
                    .expect("trustline");
                a
            };
            let contract = sac::asset_contract_id(&a.core(), &w.spec.passphrase).unwrap();
            assets.push((assay_core::Token::Classic(a.core()), contract, interval));
        }
    }
    assets
}

fn watcher<'a>(w: &'a World, config: WatchConfig, assets: Assets) -> Watcher<'a> {
    w.watcher(&w.rpc, w.settings(&DOMAINS), config, assets)
}

fn config(extra: &str) -> WatchConfig {
    WatchConfig::parse(&format!(
        "registry = \"C\"\nnetwork = \"local\"\ninterval_secs = 86400\nmax_age_secs = 400000\nrefresh_margin_secs = 200000\n{extra}[[asset]]\nasset = \"A-B\"\n"
    ))
    .expect("bench config")
}

fn pass_bench(w: &World) {
    let per_host = 8;
    let assets = issue_many(w, ISSUERS, PER_ISSUER, 0xa0, Duration::from_secs(86_400));
    let n = assets.len();
    let mut cfg = config(&format!(
        "concurrency = 256\nper_host_concurrency = {per_host}\nreact_every_ledgers = 0\n"
    ));
    cfg.assets = Vec::new();
    let mut watch = watcher(w, cfg, assets);
    w.server.clear_hits();
    w.server.set_latency(LATENCY);
    let started = Instant::now();
    let outcomes = watch.run(&AtomicBool::new(false), true);
    let wall = started.elapsed().as_secs_f64();
    let written = outcomes
        .iter()
        .filter(|o| matches!(o, Checked::Written(_)))
        .count();
    let failed = outcomes
        .iter()
        .filter(|o| matches!(o, Checked::Failed(_) | Checked::Unknown(_)))
        .count();
    let mut per_host_hits: BTreeMap<String, usize> = BTreeMap::new();
    for (host, _) in w.server.hits() {
        *per_host_hits.entry(host).or_default() += 1;
    }
    let (busiest, busiest_hits) = per_host_hits
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(h, n)| (h.clone(), *n))
        .unwrap_or_default();
    let ideal_io = busiest_hits.div_ceil(per_host) as f64 * LATENCY.as_secs_f64();
    let transactions = watch.health.lock().unwrap().transactions_total;
    let ledger = 0.1; // LocalWorld closes a ledger every 100 ms
    let ideal_chain = ideal_io + transactions as f64 * ledger;
    println!("(a) one pass of watch over {n} assets, sources at {} ms per request, per_host_concurrency {per_host}", LATENCY.as_millis());
    println!("    written {written}, failed {failed}, replayed requests {} (busiest host {busiest}: {busiest_hits})", per_host_hits.values().sum::<usize>());
    println!(
        "    pass wall time               {wall:.2} s (scan phase {:.2} s)",
        watch
            .health
            .lock()
            .unwrap()
            .last_scan_seconds
            .unwrap_or(0.0)
    );
    println!(
        "    I/O-bound ideal (sources)    {ideal_io:.2} s   ratio ideal/actual {:.2}",
        ideal_io / wall
    );
    println!(
        "    ideal + one ledger per tx    {ideal_chain:.2} s   ratio ideal/actual {:.2}",
        ideal_chain / wall
    );
    println!(
        "    attest_many transactions     {transactions} (ceil(writes / {cap}) = {})",
        written.div_ceil(assay_attest::registry::MAX_BATCH_SIZE),
        cap = assay_attest::registry::MAX_BATCH_SIZE
    );
    let started = Instant::now();
    let outcomes = watch.run(&AtomicBool::new(false), true);
    let unchanged = outcomes
        .iter()
        .filter(|o| **o == Checked::Unchanged)
        .count();
    // One lock at a time: a guard in a format argument lives to the end of the statement.
    let (scan, transactions) = {
        let h = watch.health.lock().unwrap();
        (h.last_scan_seconds.unwrap_or(0.0), h.transactions_total)
    };
    println!(
        "    second pass (nothing to write): {:.2} s (scan phase {scan:.2} s), {unchanged} unchanged, transactions still {transactions}",
        started.elapsed().as_secs_f64(),
    );
    println!(
        "    peak RSS (whole process: local network, replay servers, watch) {:.0} MiB",
        peak_rss_mib()
    );
    w.server.set_latency(Duration::ZERO);
}

fn reaction_bench(w: &World, ledger_ms: u64) {
    let assets = issue_many(w, 5, 1, 0xb0, Duration::from_secs(86_400));
    let mut cfg = config("react_every_ledgers = 1\n");
    cfg.assets = Vec::new();
    let mut watch = watcher(w, cfg, assets.clone());
    watch.reaction = Some(Reaction::new(1, true));
    let stop = AtomicBool::new(false);
    let ledger = || w.rpc.get_latest_ledger().map(|l| l.sequence).unwrap_or(0);
    let severity = |c: [u8; 32]| {
        read_safety(&w.rpc, w.registry, c)
            .ok()
            .flatten()
            .map(|s| s.severity)
    };
    let mut lags = Vec::new();
    std::thread::scope(|s| {
        let running = s.spawn(|| watch.run(&stop, false));
        // The first pass writes all five as clear.
        let started = Instant::now();
        while assets.iter().any(|a| severity(a.1) != Some(0))
            && started.elapsed() < Duration::from_secs(60)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(1000));
        for change in 0..20 {
            let (token, contract, _) = &assets[change % assets.len()];
            let assay_core::Token::Classic(a) = token else {
                unreachable!()
            };
            // Flip revocable on and off: clear (0) ↔ medium (2).
            let (flags, want) = if severity(*contract) == Some(0) {
                (2, 2)
            } else {
                (0, 0)
            };
            let at = ledger();
            w.net
                .admin_set_account_flags(&g_account(&a.issuer), flags)
                .unwrap();
            let started = Instant::now();
            let mut reflected = None;
            while started.elapsed() < Duration::from_secs(60) {
                if severity(*contract) == Some(want) {
                    reflected = Some(ledger());
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            match reflected {
                Some(l) => lags.push(l.saturating_sub(at)),
                None => println!("    change {change}: not reflected within 60 s"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        running.join().unwrap();
    });
    lags.sort_unstable();
    let p95 = lags
        .get((lags.len() * 95).div_ceil(100).saturating_sub(1))
        .copied();
    println!("(b) reaction: 20 issuer flag flips while watch runs (react_every_ledgers = 1, ledgers every {ledger_ms} ms)");
    println!("    ledgers from change to registry: {lags:?}");
    println!("    p95 {p95:?} ledgers over {} changes", lags.len());
}

fn main() {
    let w = World::start(&DOMAINS);
    pass_bench(&w);
    reaction_bench(&w, 100);
    drop(w);
    // The same with a ledger every second, closer to the public networks' 5 s.
    reaction_bench(&World::start_closing_every(&DOMAINS, 1000), 1000);
}
