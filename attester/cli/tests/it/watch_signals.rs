//! SIGTERM and SIGINT on a running `assay watch` (the real binary, on the local network): the signal lands
//! while a write is in flight (right after the `submitting` log line), and watch still follows that
//! transaction to its final status, logs it, exits 0, leaves the registry holding exactly what it logged,
//! and leaves the history store whole.

use crate::world;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assay_attest::registry::read_safety;
use world::*;

const AQUA: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";

struct Stopped {
    code: Option<i32>,
    events: Vec<serde_json::Value>,
    stderr: String,
}

/// Starts `assay watch --config CFG`, sends `signal` as soon as it logs `submitting`, and waits for it to
/// exit.
fn watch_until_submitting_then(
    cfg: &std::path::Path,
    home: &std::path::Path,
    signal: i32,
) -> Stopped {
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--config"])
        .arg(cfg)
        .env("STELLAR_SECRET_KEY", &secret)
        .env("HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut signalled = false;
    while !signalled {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("watch never logged `submitting`:\n{}", lines.join("\n"))
            });
        if line.contains("\"event\":\"submitting\"") {
            // SAFETY: kill(2) on our own child's pid with a standard signal.
            assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
            signalled = true;
        }
        lines.push(line);
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("watch did not stop after the signal");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let stderr = lines.join("\n");
    assert!(!stderr.contains(&secret), "secret leaked:\n{stderr}");
    Stopped {
        code: status.code(),
        events: lines
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
        stderr,
    }
}

fn position(events: &[serde_json::Value], name: &str) -> Option<usize> {
    events.iter().position(|e| e["event"] == name)
}

#[test]
fn sigterm_and_sigint_finish_the_submission_in_flight() {
    let w = World::start(&["aqua.network"]);
    let aqua = w.issue("AQUA", AQUA, 0, Some("aqua.network"));
    // Locked (master weight 0): no flag and no key, so no power over holders (clear).
    w.lock(AQUA);
    w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    let sac = assay_attest::sac::asset_contract_id(&aqua.core(), &w.spec.passphrase).unwrap();
    let ca = w.ca();
    let history = w.dir.path().join("history.sqlite3");
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(
        &cfg,
        w.watch_toml(&ca, &history, &["aqua.network"])
            + &format!(
                "interval_secs = 3600\nrefresh_margin_secs = 7200\n[[asset]]\nasset = \"AQUA-{AQUA}\"\n"
            ),
    )
    .unwrap();
    let asset = format!("AQUA-{AQUA}");

    for (round, (signal, name, expected_severity)) in [
        (libc::SIGTERM, "SIGTERM", 0u32),
        (libc::SIGINT, "SIGINT", 1u32),
    ]
    .into_iter()
    .enumerate()
    {
        if round == 1 {
            // The issuer turns on auth_required: the verdict changes, so watch writes again.
            w.net.admin_set_account_flags(&g_account(AQUA), 1).unwrap();
        }
        let run = watch_until_submitting_then(&cfg, w.dir.path(), signal);
        let e = &run.events;
        assert_eq!(
            run.code,
            Some(0),
            "{name}: exit 0 (stopped cleanly)\n{}",
            run.stderr
        );
        let submitting = position(e, "submitting").expect("submitting");
        let stopping = position(e, "stopping").unwrap_or_else(|| panic!("{}", run.stderr));
        let written = position(e, "written").unwrap_or_else(|| {
            panic!("{name}: the in-flight write was abandoned:\n{}", run.stderr)
        });
        let stopped = position(e, "stopped").expect("stopped");
        assert_eq!(e[stopping]["signal"], name, "{}", run.stderr);
        assert!(
            submitting < stopping && stopping < written && written < stopped,
            "{name}: the signal arrived while the write was in flight, and the write still finished \
             before the loop stopped:\n{}",
            run.stderr
        );
        assert_eq!(stopped, e.len() - 1, "nothing after `stopped`");
        assert_eq!(e[written]["asset"], asset.as_str());
        assert_eq!(e[written]["severity"], expected_severity);
        assert_eq!(e[written]["tx_hash"].as_str().unwrap().len(), 64);
        assert!(e[written]["ledger"].as_u64().unwrap() > 0);
        assert_eq!(
            e[written]["evidence_hash"], e[submitting]["evidence_hash"],
            "what was confirmed is what was being submitted"
        );
        // The confirmed transaction's value is what the registry now holds.
        let on_chain = read_safety(&w.rpc, w.registry, sac)
            .unwrap()
            .expect("written");
        assert_eq!(on_chain.severity, expected_severity);
        assert_eq!(
            hex::encode(on_chain.evidence_hash),
            e[written]["evidence_hash"].as_str().unwrap()
        );
        // The history store is whole: one observation per check, every row a full report, no
        // interrupted transaction left behind.
        let store = assay_scan::history::History::open_existing(&history)
            .unwrap()
            .expect("history written");
        let rows = store.list(&asset).unwrap().rows;
        assert_eq!(rows.len(), round + 1, "one observation per check");
        for row in &rows {
            let report: serde_json::Value = serde_json::from_str(&row.report_json).unwrap();
            assert_eq!(report["asset"]["code"], "AQUA");
            assert_eq!(report["asset"]["issuer"], AQUA);
        }
        let integrity: String = store
            .connection()
            .unwrap()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok");
        assert!(
            !w.dir.path().join("history.sqlite3-journal").exists(),
            "no hot journal (a half-written transaction) left behind"
        );
    }
}
