//! Benchmark: attestations per transaction and fee per attestation (from simulation) for batches of 1, 10
//! and the registry's cap (`MAX_BATCH_SIZE`) on the local network with the real registry WASM; then `watch` CPU and RSS while idle, against a
//! baseline of the same process before the watcher starts.
//!
//! Run: `cargo run --release -p assay-attest --example attest_bench`

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use assay_attest::attest::{ChainSubmitter, Submitter};
use assay_attest::registry::{Attestation, MAX_BATCH_SIZE};
use assay_attest::watch::WatchConfig;
use common::*;
use stellar_xdr::{Limits, ReadXdr, SorobanTransactionData};

fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 (1-based) of the whole line: 12 and 13 after the comm field.
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmRSS:")
                .map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0))
        })
        .unwrap_or(0)
}

fn main() {
    let w = World::start(&[]);
    let mut s = ChainSubmitter {
        invoker: w.invoker(&w.attester),
        registry: w.registry,
        confirm_read_back: false,
    };
    println!("attest_many on the local network (real registry WASM, soroban-env-host 29)");
    println!(
        "{:>6} {:>16} {:>16} {:>14} {:>12} {:>10} {:>12}",
        "batch",
        "min_resource_fee",
        "fee/attestation",
        "instructions",
        "write_bytes",
        "tx_ok",
        "wall_ms"
    );
    // A verdict binds the code it judged, so every asset is a deployed token: one each for the
    // measured batches (1 + 10 + MAX_BATCH_SIZE), so that each batch writes fresh entries.
    let tokens: Vec<_> = (0..1 + 10 + MAX_BATCH_SIZE)
        .map(|i| w.bound_token(0x80 + i as u8))
        .collect();
    let mut per1 = 0f64;
    let mut first = 0;
    for n in [1usize, 10, MAX_BATCH_SIZE] {
        let batch: Vec<Attestation> = tokens[first..first + n]
            .iter()
            .enumerate()
            .map(|(i, (asset, code))| Attestation {
                asset: *asset,
                severity: 2,
                flags: 18,
                evidence_hash: [i as u8; 32],
                code: code.clone(),
            })
            .collect();
        first += n;
        let f = assay_attest::registry::attest_many(w.registry, w.attester.public_key(), &batch);
        let sim = w.invoker(&w.attester).simulate(&f).expect("simulate");
        let data: SorobanTransactionData = SorobanTransactionData::from_xdr(
            stellar_xdr::WriteXdr::to_xdr(&sim.data, Limits::none()).unwrap(),
            Limits::none(),
        )
        .unwrap();
        let started = Instant::now();
        let ok = s.submit(&batch).is_ok();
        let per = sim.min_resource_fee as f64 / n as f64;
        if n == 1 {
            per1 = per;
        }
        println!(
            "{:>6} {:>16} {:>16.0} {:>14} {:>12} {:>10} {:>12}",
            n,
            sim.min_resource_fee,
            per,
            data.resources.instructions,
            data.resources.write_bytes,
            ok,
            started.elapsed().as_millis()
        );
    }
    println!(
        "baseline: batch of 1 at {per1:.0} stroops per attestation; ratios below are against it"
    );
    for n in [10usize, MAX_BATCH_SIZE] {
        // Simulated only, over tokens the rounds above wrote (the entries exist).
        let batch: Vec<Attestation> = tokens[11..11 + n]
            .iter()
            .map(|(asset, code)| Attestation {
                asset: *asset,
                severity: 0,
                flags: 0,
                evidence_hash: [1; 32],
                code: code.clone(),
            })
            .collect();
        let f = assay_attest::registry::attest_many(w.registry, w.attester.public_key(), &batch);
        let sim = w.invoker(&w.attester).simulate(&f).unwrap();
        println!(
            "  batch {n}: {:.3}x the per-attestation fee of a batch of 1",
            sim.min_resource_fee as f64 / n as f64 / per1
        );
    }
    // Refused for its size before any element is read.
    let over: Vec<Attestation> = (0..51)
        .map(|i| Attestation {
            asset: [i as u8; 32],
            severity: 0,
            flags: 0,
            evidence_hash: [0; 32],
            code: tokens[0].1.clone(),
        })
        .collect();
    let f = assay_attest::registry::attest_many(w.registry, w.attester.public_key(), &over);
    match w.invoker(&w.attester).simulate(&f) {
        Ok(_) => println!("batch 51: accepted (unexpected)"),
        Err(e) => println!("batch 51: refused in simulation ({e}); the attester never builds one"),
    }

    // watch idle: no asset due during the window (first check done, interval far away).
    let cfg = WatchConfig::parse(
        "registry = \"C\"\nnetwork = \"local\"\ninterval_secs = 86400\nmax_age_secs = 200000\nrefresh_margin_secs = 100000\n[[asset]]\nasset = \"AQUA-GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA\"\n",
    )
    .unwrap();
    let tick = 100f64; // USER_HZ
    let window = Duration::from_secs(5);
    let (c0, r0, t0) = (cpu_ticks(), rss_kib(), Instant::now());
    std::thread::sleep(window);
    let base_cpu = (cpu_ticks() - c0) as f64 / tick / t0.elapsed().as_secs_f64() * 100.0;
    let base_rss = r0;
    let stop = Arc::new(AtomicBool::new(false));
    let settings = w.settings(&[]);
    let mut watcher = w.watcher(&w.rpc, settings, cfg, vec![]);
    let stop2 = stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(window);
        stop2.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let (c1, t1) = (cpu_ticks(), Instant::now());
    watcher.run(&stop, false);
    stopper.join().unwrap();
    let idle_cpu = (cpu_ticks() - c1) as f64 / tick / t1.elapsed().as_secs_f64() * 100.0;
    println!(
        "watch idle over {}s: CPU {idle_cpu:.2}% of one core (baseline same process, local network running: {base_cpu:.2}%), RSS {} KiB (baseline {base_rss} KiB)",
        window.as_secs(),
        rss_kib()
    );
}
