//! Benchmark for issue #18: `watch` at operator scale on the local network (real registry WASM) with its
//! off-chain sources replayed over local HTTPS at 50 ms per request. Prints figures; asserts nothing.
//!
//! (a) One pass over 1,000 assets (100 issuers of 10 assets, 10 home domains): pass wall time, with its
//!     scanning and its writing (which overlap), against the I/O-bound ideal of a pass: the longer of the
//!     sources' ideal for the configured per-host concurrency (the busiest replayed host's requests, in
//!     waves of `per_host_concurrency`, 50 ms each) and the ledger floor (one ledger per `attest_many`
//!     for one account); target ratio at least 0.8. `attest_many`
//!     transactions against ceil(writes / the registry's cap); peak RSS. A second pass (nothing to write)
//!     follows. Then one batch of the registry's cap on its own, step by step: simulation, send and wait
//!     for its ledger, and the read-back (one simulation per asset, or one batched `getLedgerEntries`).
//! (b) Reaction: while `watch` runs (react_every_ledgers = 1), 20 changes in turn: an issuer's flags
//!     flipped (a classic asset), a Stellar Asset Contract's admin changed (`set_admin`, the SAC watched by
//!     its `C…`), a token contract's code replaced (`upgrade`); for each, the ledgers from the change to
//!     the registry holding a new verdict (another evidence hash), per kind and their p95.
//!
//! Run: `cargo run --release -p assay-attest --example operator_bench` (optimised: the local
//! network runs the Soroban host, which a debug build slows several times over).

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use assay_attest::registry::{self, Attestation, MAX_BATCH_SIZE};
use assay_attest::registry::{read_safety, read_safety_by, read_safety_many};
use assay_attest::sac;
use assay_attest::watch::{Checked, Reaction, WatchConfig, Watcher};
use assay_chain::Signer;
use common::*;

const LATENCY: Duration = Duration::from_millis(50);
/// How often [`World::start`]'s local network closes a ledger.
const LEDGER: Duration = Duration::from_millis(100);
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

type Assets = Vec<(assay_core::Token, [u8; 32], Duration)>;

/// `issuers` issuers of `per_issuer` assets each, spread over the domains, their sources replayed.
fn issue_many(w: &World, issuers: u8, per_issuer: usize, salt: u8, interval: Duration) -> Assets {
    (w.issue_many(issuers, salt, &CODES[..per_issuer], &DOMAINS)
        .into_iter())
    .map(|a| {
        let contract = sac::asset_contract_id(&a.core(), &w.spec.passphrase).unwrap();
        (assay_core::Token::Classic(a.core()), contract, interval)
    })
    .collect()
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
    let ledger = || w.rpc.get_latest_ledger().map(|l| l.sequence).unwrap_or(0);
    let first_ledger = ledger();
    let started = Instant::now();
    let outcomes = watch.run(&AtomicBool::new(false), true);
    let wall = started.elapsed().as_secs_f64();
    let spanned = ledger().saturating_sub(first_ledger);
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
    // The hosts are asked side by side, each in waves of `per_host`: the busiest one bounds the pass.
    let ideal_io = busiest_hits.div_ceil(per_host) as f64 * LATENCY.as_secs_f64();
    // One lock at a time: a guard in a format argument lives to the end of the statement.
    let (scan, write, transactions) = {
        let h = watch.health.lock().unwrap();
        (
            h.last_scan_seconds.unwrap_or(0.0),
            h.last_write_seconds.unwrap_or(0.0),
            h.transactions_total,
        )
    };
    // One source account has one transaction pending at a time: each attest_many waits for a ledger of
    // its own, whatever the concurrency.
    let ledger_floor = transactions as f64 * LEDGER.as_secs_f64();
    // The writing overlaps the scanning, so the pass is bound by the longer of the two floors.
    let ideal_pass = ideal_io.max(ledger_floor);
    let ratio = ideal_pass / wall.max(f64::EPSILON);
    println!("(a) one pass of watch over {n} assets, sources at {} ms per request, per_host_concurrency {per_host}", LATENCY.as_millis());
    println!("    written {written}, failed {failed}, replayed requests {} (busiest host {busiest}: {busiest_hits})", per_host_hits.values().sum::<usize>());
    println!(
        "    pass wall time               {wall:.2} s (the whole pass spanned {spanned} ledgers)"
    );
    println!(
        "      scanning                   {scan:.2} s   (first scan started to last finished)"
    );
    println!(
        "      writing                    {write:.2} s   ({transactions} attest_many transactions, summed; overlapping the scanning)"
    );
    println!(
        "      scanning + writing - pass  {:.2} s   (time the two overlapped, less the rest: registry read, decisions, history)",
        scan + write - wall
    );
    println!(
        "    (1) sources' ideal at per_host_concurrency {per_host}: {ideal_io:.2} s (busiest host's {busiest_hits} requests in waves of {per_host} x {} ms)",
        LATENCY.as_millis()
    );
    println!(
        "    (2) ledger floor             {ledger_floor:.2} s ({transactions} transactions for one account, one per {} ms ledger)",
        LEDGER.as_millis()
    );
    println!(
        "    (3) I/O-bound ideal of a pass, phases overlapped: max((1), (2)) = {ideal_pass:.2} s (their sum, unoverlapped: {:.2} s)",
        ideal_io + ledger_floor
    );
    println!(
        "    ratio ideal / pass wall time {ratio:.2} (target >= 0.8: {}); sources-only ratio (1) / pass {:.2}; (1) / scanning {:.2}",
        if ratio >= 0.8 { "met" } else { "NOT met" },
        ideal_io / wall.max(f64::EPSILON),
        ideal_io / scan.max(f64::EPSILON)
    );
    println!(
        "    attest_many transactions     {transactions} (ceil(writes / {MAX_BATCH_SIZE}) = {})",
        written.div_ceil(MAX_BATCH_SIZE),
    );
    let started = Instant::now();
    let outcomes = watch.run(&AtomicBool::new(false), true);
    let unchanged = outcomes
        .iter()
        .filter(|o| **o == Checked::Unchanged)
        .count();
    let (scan, transactions_after) = {
        let h = watch.health.lock().unwrap();
        (h.last_scan_seconds.unwrap_or(0.0), h.transactions_total)
    };
    println!(
        "    second pass (nothing to write): {:.2} s (scanning {scan:.2} s), {unchanged} unchanged, transactions still {transactions_after}",
        started.elapsed().as_secs_f64(),
    );
    println!(
        "    peak RSS (whole process: local network, replay servers, watch) {:.0} MiB",
        peak_rss_mib()
    );
    w.server.set_latency(Duration::ZERO);
    batch_steps(w);
}

/// One `attest_many` of the registry's cap, step by step.
fn batch_steps(w: &World) {
    // A verdict binds the code it judged: a deployed token per element.
    let batch: Vec<Attestation> = (0..MAX_BATCH_SIZE as u8)
        .map(|i| {
            let (asset, code) = w.bound_token(0xc0 + i);
            Attestation {
                asset,
                severity: 1,
                flags: 1,
                evidence_hash: [i; 32],
                code,
            }
        })
        .collect();
    let invoker = w.invoker(&w.attester);
    let f = registry::attest_many(w.registry, w.attester.public_key(), &batch);
    let started = Instant::now();
    invoker.simulate(&f).expect("simulate a batch");
    let simulate = started.elapsed().as_secs_f64();
    let started = Instant::now();
    invoker.invoke(&f).expect("send a batch");
    let invoke = started.elapsed().as_secs_f64();
    let assets: Vec<[u8; 32]> = batch.iter().map(|a| a.asset).collect();
    let started = Instant::now();
    for a in &assets {
        read_safety_by(&w.rpc, w.registry, *a, w.attester.public_key()).expect("read one");
    }
    let one_by_one = started.elapsed().as_secs_f64();
    let started = Instant::now();
    read_safety_many(&w.rpc, w.registry, &assets, w.attester.public_key()).expect("read many");
    let batched = started.elapsed().as_secs_f64();
    let confirm = (invoke - simulate).max(0.0);
    println!("    one attest_many of {MAX_BATCH_SIZE} on its own:");
    println!("      sequence number and simulation {simulate:.3} s");
    println!("      the same, then sign, send and wait for its ledger {invoke:.3} s (send to confirmation {confirm:.3} s)");
    println!("      read-back, one get_safety_by simulation per asset {one_by_one:.3} s; one batched getLedgerEntries {batched:.3} s (what watch does)");
}

/// What a reaction change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    IssuerFlags,
    SacAdmin,
    CodeUpdate,
}

/// A Stellar Asset Contract whose admin the bench moves between its issuer and a spare key.
struct Sac {
    contract: [u8; 32],
    issuer: Signer,
    spare: Signer,
    admin_is_issuer: bool,
}

fn reaction_bench(w: &World, ledger_ms: u64) {
    const DOMAIN: &str = DOMAINS[0];
    let interval = Duration::from_secs(86_400);
    // Issuer flag flips: five classic assets.
    let classic = issue_many(w, 5, 1, 0xb0, interval);
    // SAC admin changes: four SACs named by their C…, of issuers whose keys the bench holds.
    let mut sacs: Vec<Sac> = (0..4u8)
        .map(|n| {
            let issuer = Signer::from_seed([0xc0 + n; 32]);
            let asset = w.issue(CODES[n as usize], &issuer.address(), 0, Some(DOMAIN));
            w.serve_eval("aqua-clear-verified", &issuer.address(), DOMAIN);
            let spare = Signer::from_seed([0xc8 + n; 32]);
            w.net
                .fund(&account_id(spare.public_key()))
                .expect("fund the spare admin");
            Sac {
                contract: w.deploy_sac(&asset),
                issuer,
                spare,
                admin_is_issuer: true,
            }
        })
        .collect();
    // Code updates: each of seven upgradable tokens replaced once by the conformant token's code.
    let tokens: Vec<[u8; 32]> = (0..7u8)
        .map(|n| w.deploy_token("upgradable_token", 0xd0 + n))
        .collect();
    let conformant = w.upload("conformant_token");
    let by_address = |c: [u8; 32]| {
        (
            assay_core::Token::parse(&sac::contract_strkey(c)).expect("a contract address"),
            c,
            interval,
        )
    };
    let mut assets = classic.clone();
    assets.extend(sacs.iter().map(|s| by_address(s.contract)));
    assets.extend(tokens.iter().map(|t| by_address(*t)));

    let mut cfg = config("react_every_ledgers = 1\n");
    cfg.assets = Vec::new();
    let mut watch = watcher(w, cfg, assets.clone());
    watch.reaction = Some(Reaction::new(1, true));
    let stop = AtomicBool::new(false);
    let ledger = || w.rpc.get_latest_ledger().map(|l| l.sequence).unwrap_or(0);
    let held = |c: [u8; 32]| read_safety(&w.rpc, w.registry, c).ok().flatten();
    let mut lags: BTreeMap<Kind, Vec<u32>> = BTreeMap::new();
    std::thread::scope(|s| {
        let running = s.spawn(|| watch.run(&stop, false));
        // The first pass writes every asset.
        let started = Instant::now();
        while assets.iter().any(|a| held(a.1).is_none())
            && started.elapsed() < Duration::from_secs(120)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        // A moment for the first poll to record the entries as they are.
        std::thread::sleep(Duration::from_millis(1000));
        let (mut flips, mut admins, mut updates) = (0, 0, 0);
        for change in 0..20 {
            let kind = [Kind::IssuerFlags, Kind::SacAdmin, Kind::CodeUpdate][change % 3];
            let (contract, before, at) = match kind {
                Kind::IssuerFlags => {
                    let (token, contract, _) = &classic[flips % classic.len()];
                    flips += 1;
                    let assay_core::Token::Classic(a) = token else {
                        unreachable!("issue_many issues classic assets")
                    };
                    let before = held(*contract);
                    // Flip revocable on and off: clear (0) ↔ medium (2).
                    let flags = if before.as_ref().is_some_and(|s| s.severity == 0) {
                        2
                    } else {
                        0
                    };
                    let at = ledger();
                    w.net
                        .admin_set_account_flags(&g_account(&a.issuer), flags)
                        .expect("set flags");
                    (*contract, before, at)
                }
                Kind::SacAdmin => {
                    let sac = &mut sacs[admins % 4];
                    admins += 1;
                    let (by, to) = if sac.admin_is_issuer {
                        (&sac.issuer, sac.spare.public_key())
                    } else {
                        (&sac.spare, sac.issuer.public_key())
                    };
                    let before = held(sac.contract);
                    let at = w.set_sac_admin(sac.contract, by, to);
                    sac.admin_is_issuer = !sac.admin_is_issuer;
                    (sac.contract, before, at)
                }
                Kind::CodeUpdate => {
                    let token = tokens[updates % tokens.len()];
                    updates += 1;
                    let before = held(token);
                    (token, before, w.upgrade_token(token, conformant))
                }
            };
            // Ledgers from the change to the registry holding another evidence hash (u32::MAX: not
            // within 60 s).
            let started = Instant::now();
            let mut lag = u32::MAX;
            while started.elapsed() < Duration::from_secs(60) {
                let now = held(contract);
                if now.is_some()
                    && now.map(|s| s.evidence_hash) != before.as_ref().map(|s| s.evidence_hash)
                {
                    lag = ledger().saturating_sub(at);
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if lag == u32::MAX {
                println!("    change {change} ({kind:?}): not reflected within 60 s");
            }
            lags.entry(kind).or_default().push(lag);
        }
        stop.store(true, Ordering::Relaxed);
        running.join().unwrap();
    });
    println!("(b) reaction: 20 changes while watch runs (react_every_ledgers = 1, a ledger every {ledger_ms} ms)");
    let mut all = Vec::new();
    for (kind, lags) in &lags {
        let reflected: Vec<u32> = lags.iter().copied().filter(|l| *l != u32::MAX).collect();
        println!(
            "    {:<13} {} changes, ledgers from change to registry {reflected:?}, p95 {:?}",
            format!("{kind:?}"),
            lags.len(),
            p95(&reflected)
        );
        all.extend(lags.iter().copied());
    }
    let missed = all.iter().filter(|l| **l == u32::MAX).count();
    all.retain(|l| *l != u32::MAX);
    println!(
        "    all kinds: p95 {:?} ledgers over {} changes ({missed} not reflected within 60 s)",
        p95(&all),
        all.len()
    );
}

/// The 95th percentile (nearest rank) of `values`.
fn p95(values: &[u32]) -> Option<u32> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted
        .get((sorted.len() * 95).div_ceil(100).saturating_sub(1))
        .copied()
}

fn main() {
    let w = World::start(&DOMAINS);
    pass_bench(&w);
    reaction_bench(&w, LEDGER.as_millis() as u64);
    drop(w);
    // The same with a ledger every second, closer to the public networks' 5 s.
    reaction_bench(&World::start_closing_every(&DOMAINS, 1000), 1000);
}
