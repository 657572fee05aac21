//! Issue #37: many `assay watch` workers on one PostgreSQL database, on the local network with the sources
//! replayed over local HTTPS. Three workers share 1,000 assets; one is killed with SIGKILL mid-pass; the
//! other two take its leases when they end. Every asset is observed and attested once, the registry and
//! the database agree, and the day's spend is one count. Then the leader is killed and another worker
//! reacts to the next ledger change.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assay_scan::history::{Database, History};
use assay_scan::testsupport::postgres::PostgresServer;
use serde_json::Value;

use crate::world::{self, World};

const DOMAINS: [&str; 10] = [
    "d0.workers",
    "d1.workers",
    "d2.workers",
    "d3.workers",
    "d4.workers",
    "d5.workers",
    "d6.workers",
    "d7.workers",
    "d8.workers",
    "d9.workers",
];
const CODES: [&str; 10] = [
    "WKA", "WKB", "WKC", "WKD", "WKE", "WKF", "WKG", "WKH", "WKI", "WKJ",
];
/// The attester's key in the world (seed 12).
const SEED: [u8; 32] = [12; 32];

/// A running worker whose journal (stderr, JSON lines) is collected as it goes.
struct Worker {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Worker {
    fn start(
        config: &std::path::Path,
        database: &str,
        home: &std::path::Path,
        extra: &[&str],
    ) -> Worker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["watch", "--config"])
            .arg(config)
            .args(extra)
            .env("ASSAY_DATABASE_URL", database)
            .env(
                "STELLAR_SECRET_KEY",
                stellar_strkey::ed25519::PrivateKey(SEED)
                    .to_string()
                    .as_str(),
            )
            .env("HOME", home)
            .env_remove("ASSAY_HISTORY")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let event = serde_json::from_str(&line).unwrap_or(Value::String(line));
                sink.lock().unwrap().push(event);
            }
        });
        Worker { child, lines }
    }

    fn events(&self, name: &str) -> Vec<Value> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == name)
            .cloned()
            .collect()
    }

    fn journal(&self) -> String {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits until `ready` holds of the journal (or panics after `limit`).
    fn wait_for(&self, limit: Duration, what: &str, ready: impl Fn(&Worker) -> bool) {
        let started = Instant::now();
        while !ready(self) {
            assert!(
                started.elapsed() < limit,
                "{what}: not within {limit:?}:\n{}",
                self.journal()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill(&mut self) {
        // SIGKILL: no handler runs, no lease is handed back, the socket simply closes.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn wait(&mut self, limit: Duration) -> Option<i32> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader thread take the last lines.
                std::thread::sleep(Duration::from_millis(200));
                return status.code();
            }
            if started.elapsed() > limit {
                self.kill();
                panic!(
                    "the worker did not finish within {limit:?}:\n{}",
                    self.journal()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The watch config for `assets` on `w`, with no history file (the database is the history).
fn config(w: &World, ca: &std::path::Path, extra: &str, assets: &[String]) -> String {
    let toml: String = w
        .watch_toml(ca, std::path::Path::new("unused"), &DOMAINS)
        .lines()
        .filter(|l| !l.starts_with("history ="))
        .map(|l| format!("{l}\n"))
        .collect();
    let listed: String = assets
        .iter()
        .map(|a| format!("[[asset]]\nasset = \"{a}\"\n"))
        .collect();
    toml + extra + &listed
}

#[test]
fn three_workers_check_a_thousand_assets_once_though_one_is_killed_mid_pass() {
    let postgres = PostgresServer::start();
    let url = postgres.fresh_database();
    let w = World::start(&DOMAINS);
    let assets: Vec<String> = (w.issue_many(100, 0xc3, &CODES, &DOMAINS).iter())
        .map(|a| a.core().to_string())
        .collect();
    assert_eq!(assets.len(), 1_000);
    let ca = w.ca();
    let cfg = w.dir.path().join("watch.toml");
    // 20 XLM counted per transaction (twice the 10 XLM fee cap): 1,000 assets in batches of 35 need 29
    // transactions, 580 XLM; the day's budget of 1,000 XLM is one count for the three workers.
    std::fs::write(
        &cfg,
        config(
            &w,
            &ca,
            "interval_secs = 86400\nmax_age_secs = 400000\nrefresh_margin_secs = 250000\n\
             react_every_ledgers = 0\nconcurrency = 35\nbatch_size = 35\nlease_secs = 4\n\
             max_spend_per_pass_xlm = 600\nmax_spend_per_day_xlm = 1000\n",
            &assets,
        ),
    )
    .unwrap();
    let home = w.dir.path();
    let mut workers: Vec<Worker> = (0..3)
        .map(|_| Worker::start(&cfg, &url, home, &["--once"]))
        .collect();
    // The first worker is killed holding a lease: mid-pass, once its first batch has landed.
    workers[0].wait_for(Duration::from_secs(600), "a first write", |w| {
        !w.events("leased").is_empty() && !w.events("written").is_empty()
    });
    workers[0].kill();
    let killed_claims = workers[0].events("leased").len();
    for (n, worker) in workers.iter_mut().enumerate().skip(1) {
        let code = worker.wait(Duration::from_secs(1_200));
        assert_eq!(code, Some(0), "worker {n}:\n{}", worker.journal());
    }

    // Observed once each: one observation per asset in the database (a re-check of an unchanged report
    // is not a new observation).
    let database = Database::parse(&url);
    let history = History::connect(&database).unwrap();
    let mut observed_twice = Vec::new();
    for asset in &assets {
        let rows = history.list(asset).unwrap().rows;
        assert!(!rows.is_empty(), "{asset} was never observed");
        if rows.len() > 1 {
            let _ = std::fs::write(
                "/tmp/observed_twice.json",
                format!("{}\n{}\n", rows[0].report_json, rows[1].report_json),
            );
            observed_twice.push(asset.clone());
        }
    }
    assert!(
        observed_twice.is_empty(),
        "observed more than once: {observed_twice:?}"
    );

    // Attested once each: no asset written twice across the three journals; every asset written by one
    // of them, except those the killed worker may have landed without living to say so.
    let mut written: BTreeMap<String, usize> = BTreeMap::new();
    let mut transactions = BTreeSet::new();
    for worker in &workers {
        for event in worker.events("written") {
            *written
                .entry(event["asset"].as_str().unwrap().to_string())
                .or_default() += 1;
            transactions.insert(event["tx_hash"].as_str().unwrap().to_string());
        }
    }
    let twice: Vec<_> = written.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "written twice: {twice:?}");
    let unwritten: Vec<&String> = assets
        .iter()
        .filter(|a| !written.contains_key(*a))
        .collect();
    assert!(
        unwritten.len() <= 35,
        "at most the killed worker's last batch may land unlogged; unwritten: {}",
        unwritten.len()
    );
    assert!(
        workers[1].events("written").len() + workers[2].events("written").len() > 0,
        "the survivors wrote"
    );

    // The registry and the database agree: each asset's entry cites its latest observation's bundle.
    let contracts: Vec<[u8; 32]> = assets
        .iter()
        .map(|a| {
            let asset = assay_core::Token::parse_classic(a).unwrap();
            assay_attest::sac::asset_contract_id(&asset, &w.spec.passphrase).unwrap()
        })
        .collect();
    let signer = assay_chain::Signer::from_seed(SEED);
    let held = assay_attest::registry::read_safety_many(
        &w.rpc,
        w.registry,
        &contracts,
        signer.public_key(),
    )
    .unwrap();
    for (asset, contract) in assets.iter().zip(&contracts) {
        let entry = held
            .get(contract)
            .cloned()
            .flatten()
            .unwrap_or_else(|| panic!("{asset}: no registry entry"));
        let (_, reading) = history
            .latest_chain_reading(asset)
            .unwrap()
            .expect("a reading");
        let reading: assay_scan::history::ChainReading = serde_json::from_str(&reading).unwrap();
        assert_eq!(
            reading.cites(),
            Some(hex::encode(entry.evidence_hash).as_str()),
            "{asset}"
        );
    }

    // The queue is drained: nothing due, nothing leased, every asset in it once.
    let stats = history.queue_stats(None).unwrap();
    assert_eq!(
        (stats.due, stats.leased, stats.total),
        (0, 0, 1_000),
        "{stats:?}"
    );
    // One day's count for the three: every transaction sent was counted, and the limit held.
    let today = assay_core::Timestamp::now().unix_secs() / 86_400;
    let spent = history.spent(&signer.address(), today).unwrap();
    let per_transaction = 2 * 100_000_000;
    assert!(
        spent <= 1_000 * 10_000_000,
        "{spent} stroops over the day's 1,000 XLM"
    );
    assert!(
        spent >= transactions.len() as u64 * per_transaction,
        "{spent} stroops counted for {} transactions",
        transactions.len()
    );
    eprintln!(
        "workers: killed after {killed_claims} claims; {} transactions, {} unlogged by the killed worker",
        transactions.len(),
        unwritten.len()
    );
}

/// The leader is killed with SIGKILL; the surviving worker takes the lock within seconds, continues from
/// the baseline the dead leader saved, and checks the asset whose issuer's flags changed right after the
/// kill within 5 ledgers of the change (ledgers close every second here).
#[test]
fn a_new_leader_reacts_to_the_next_ledger_change_within_five_ledgers() {
    let postgres = PostgresServer::start();
    let url = postgres.fresh_database();
    let w = World::start_closing_every(&DOMAINS[..1], 1_000);
    let mut assets = Vec::new();
    let mut issuers = Vec::new();
    for (n, code) in CODES.iter().take(3).enumerate() {
        let issuer = stellar_strkey::ed25519::PublicKey([0xd0 + n as u8; 32])
            .to_string()
            .as_str()
            .to_string();
        w.serve_eval("aqua-clear-verified", &issuer, DOMAINS[0]);
        assets.push(
            w.issue(code, &issuer, 0, Some(DOMAINS[0]))
                .core()
                .to_string(),
        );
        issuers.push(issuer);
    }
    let ca = w.ca();
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(
        &cfg,
        config(
            &w,
            &ca,
            "interval_secs = 3000\nreact_every_ledgers = 1\nlease_secs = 10\n",
            &assets,
        ),
    )
    .unwrap();
    let home = w.dir.path();
    let mut workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(&cfg, &url, home, &[]))
        .collect();
    // Both running, every asset written once, the leader known and its baseline saved.
    let written = |ws: &[Worker]| ws.iter().map(|w| w.events("written").len()).sum::<usize>();
    let started = Instant::now();
    while written(&workers) < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "not written:\n{}\n{}",
            workers[0].journal(),
            workers[1].journal()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3));
    let leaders: Vec<usize> = (0..2)
        .filter(|&n| !workers[n].events("leader").is_empty())
        .collect();
    assert_eq!(
        leaders.len(),
        1,
        "one leader:\n{}\n{}",
        workers[0].journal(),
        workers[1].journal()
    );
    let (dead, survivor) = (leaders[0], 1 - leaders[0]);
    workers[dead].kill();
    let killed_at = Instant::now();
    // Right after the kill, before anyone leads again: AUTH_REVOCABLE on the first issuer.
    w.net
        .admin_set_account_flags(&world::g_account(&issuers[0]), 2)
        .unwrap();
    let changed_at = w.rpc.get_latest_ledger().unwrap().sequence;
    let survivor = &mut workers[survivor];
    survivor.wait_for(Duration::from_secs(30), "the survivor leads", |w| {
        !w.events("leader").is_empty()
    });
    let took_over = killed_at.elapsed();
    survivor.wait_for(Duration::from_secs(60), "the change is seen", |w| {
        w.events("ledger_change")
            .iter()
            .any(|e| e["asset"] == assets[0].as_str())
    });
    let seen = survivor
        .events("ledger_change")
        .into_iter()
        .find(|e| e["asset"] == assets[0].as_str())
        .unwrap();
    let seen_at = seen["ledger"].as_u64().unwrap() as u32;
    assert!(
        seen_at <= changed_at + 5,
        "changed at ledger {changed_at}, seen at {seen_at} (took over after {took_over:?}):\n{}",
        survivor.journal()
    );
    let leader = &survivor.events("leader")[0];
    assert!(
        leader["baseline_entries"].as_u64().unwrap() >= 3,
        "{leader}"
    );
    // The new check lands: the asset is checked again (a new verdict for the changed flags).
    survivor.wait_for(Duration::from_secs(60), "the re-check", |w| {
        w.events("written")
            .iter()
            .any(|e| e["asset"] == assets[0].as_str())
    });
    eprintln!("failover: the survivor led after {took_over:?}; changed at ledger {changed_at}, seen at {seen_at}");
}
