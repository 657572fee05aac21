//! Benchmark for issue #37: `assay watch --once` over 2,000 assets on the local network (the registry's
//! real WASM), their off-chain sources replayed over local HTTPS at 50 ms per request, with one, two and
//! four workers sharing one PostgreSQL database, and one worker on a SQLite file. Prints each run's wall
//! time and the ratios against the one-worker PostgreSQL run measured in the same process; asserts nothing.
//!
//! Each run attests with a key of its own (funded and added as an attester), so every run writes all
//! 2,000 verdicts from an empty registry entry, as the first pass of a new operator would.
//!
//! ```sh
//! cargo build --release -p assay-cli --bin assay          # the workers are this binary
//! cargo run --release -p assay-cli --example workers_bench
//! WORKERS_BENCH_LATENCY_MS=400 cargo run --release -p assay-cli --example workers_bench  # slower sources
//! ```
//! PostgreSQL: the server named by ASSAY_TEST_DATABASE_URL, else a private cluster (scripts/postgres.sh).

#[path = "../../attest/tests/it/common/mod.rs"]
mod world;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assay_attest::registry;
use assay_chain::Signer;
use assay_scan::history::{Database, History};
use assay_scan::testsupport::postgres::PostgresServer;
use world::World;

/// The sources' latency per request, unless WORKERS_BENCH_LATENCY_MS says otherwise.
const LATENCY_MS: u64 = 50;
const ISSUERS: u8 = 200;
const DOMAINS: [&str; 10] = [
    "d0.bench", "d1.bench", "d2.bench", "d3.bench", "d4.bench", "d5.bench", "d6.bench", "d7.bench",
    "d8.bench", "d9.bench",
];
const CODES: [&str; 10] = [
    "WBA", "WBB", "WBC", "WBD", "WBE", "WBF", "WBG", "WBH", "WBI", "WBJ",
];

/// The `assay` binary beside this example's directory (`target/<profile>/assay`).
fn assay_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("this example's path");
    let binary = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("assay"))
        .expect("the target directory");
    if !binary.exists() {
        eprintln!(
            "{} is missing: build it first with `cargo build -p assay-cli --bin assay` (same profile)",
            binary.display()
        );
        std::process::exit(2);
    }
    binary
}

/// A new attesting key, funded and added to the registry.
fn new_attester(w: &World, seed: u8) -> Signer {
    let signer = Signer::from_seed([seed; 32]);
    w.net
        .fund(&world::account_id(signer.public_key()))
        .expect("fund");
    let add = registry::call(
        w.registry,
        "add_attester",
        vec![registry::account_val(signer.public_key())],
    );
    w.invoker(&w.admin).invoke(&add).expect("add_attester");
    signer
}

/// One pass: `workers` processes of `assay watch --once` attesting with the key of `seed`, on `database`
/// (a URL) or on a SQLite file. Returns the wall time until the last one exits, and how many verdicts
/// they wrote.
fn pass(
    config_text: &str,
    dir: &Path,
    seed: u8,
    workers: usize,
    database: Option<&str>,
) -> (Duration, usize) {
    let config = dir.join(format!("watch-{seed}.toml"));
    let history = dir.join(format!("history-{seed}.sqlite3"));
    let text = match database {
        Some(_) => config_text.to_string(),
        None => format!("history = \"{}\"\n{config_text}", history.display()),
    };
    std::fs::write(&config, text).unwrap();
    let secret = stellar_strkey::ed25519::PrivateKey([seed; 32]).to_string();
    let started = Instant::now();
    let children: Vec<(Child, PathBuf)> = (0..workers)
        .map(|n| {
            let log = dir.join(format!("run-{seed}-{n}.log"));
            let mut command = Command::new(assay_binary());
            command
                .args(["watch", "--once", "--config"])
                .arg(&config)
                .env("STELLAR_SECRET_KEY", secret.as_str())
                .env("HOME", dir)
                .env_remove("ASSAY_HISTORY")
                .env_remove("ASSAY_DATABASE_URL")
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap());
            if let Some(url) = database {
                command.env("ASSAY_DATABASE_URL", url);
            }
            (command.spawn().expect("start a worker"), log)
        })
        .collect();
    let mut written = 0;
    for (mut child, log) in children {
        let status = child.wait().unwrap();
        let journal = std::fs::read_to_string(&log).unwrap_or_default();
        if !status.success() {
            eprintln!("a worker ended {status}; its journal: {}", log.display());
        }
        written += journal.matches("\"event\":\"written\"").count();
    }
    (started.elapsed(), written)
}

/// Makes every asset of the queue of `seed`'s key due again, as the next interval would.
fn all_due_again(w: &World, url: &str, seed: u8, assets: &[String]) {
    let signer = Signer::from_seed([seed; 32]);
    let scope =
        assay_attest::watch::shared::queue_scope(w.registry, &signer.address(), &w.spec.passphrase);
    let history = History::connect(&Database::parse(url)).expect("the database");
    history.queue_mark_due(&scope, assets).expect("due again");
}

fn main() {
    let postgres = PostgresServer::start();
    let latency = Duration::from_millis(
        std::env::var("WORKERS_BENCH_LATENCY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(LATENCY_MS),
    );
    let w = World::start(&DOMAINS);
    w.server.set_latency(latency);
    let issuing = Instant::now();
    let assets: Vec<String> = (w.issue_many(ISSUERS, 0xb7, &CODES, &DOMAINS).iter())
        .map(|a| a.core().to_string())
        .collect();
    let ca = w.ca();
    let dir = tempfile::tempdir().unwrap();
    let listed: String = assets
        .iter()
        .map(|a| format!("[[asset]]\nasset = \"{a}\"\n"))
        .collect();
    let base: String = w
        .watch_toml(&ca, Path::new("unused"), &DOMAINS)
        .lines()
        .filter(|l| !l.starts_with("history ="))
        .map(|l| format!("{l}\n"))
        .collect();
    let config_text = base
        + "interval_secs = 86400\nmax_age_secs = 800000\nrefresh_margin_secs = 500000\n\
           react_every_ledgers = 0\nconcurrency = 64\nbatch_size = 35\nper_host_concurrency = 8\n\
           max_spend_per_pass_xlm = 20000\nmax_spend_per_day_xlm = 40000\n"
        + &listed;
    println!(
        "workers_bench: {} assets ({} issuers, {} domains) issued in {:.1} s; sources at {} ms per request",
        assets.len(),
        ISSUERS,
        DOMAINS.len(),
        issuing.elapsed().as_secs_f64(),
        latency.as_millis()
    );
    let runs: [(&str, usize, bool, u8); 4] = [
        ("PostgreSQL, 1 worker", 1, true, 41),
        ("SQLite, 1 worker", 1, false, 42),
        ("PostgreSQL, 2 workers", 2, true, 43),
        ("PostgreSQL, 4 workers", 4, true, 44),
    ];
    let (mut first_base, mut again_base) = (None, None);
    println!("                          first pass (all written)          the next pass (nothing to write)");
    for (name, workers, on_postgres, seed) in runs {
        new_attester(&w, seed);
        let url = on_postgres.then(|| postgres.fresh_database());
        let (first, written) = pass(&config_text, dir.path(), seed, workers, url.as_deref());
        if let Some(url) = &url {
            all_due_again(&w, url, seed, &assets);
        }
        let (again, rewritten) = pass(&config_text, dir.path(), seed, workers, url.as_deref());
        let (first, again) = (first.as_secs_f64(), again.as_secs_f64());
        let first_base = *first_base.get_or_insert(first);
        let again_base = *again_base.get_or_insert(again);
        println!(
            "{name:<24} {first:>6.1} s {written:>5} written {:>5.2}x fast   {again:>6.1} s {rewritten:>3} written {:>5.2}x fast",
            first_base / first,
            again_base / again
        );
    }
    println!("(\"x fast\": the 1-worker PostgreSQL time of the same column divided by this run's)");
}
