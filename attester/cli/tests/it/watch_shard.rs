//! Issue #18, item 4: `assay watch --shard I/N` on the local network. Two instances over one list write
//! disjoint sets of assets whose union is the whole list.

use crate::world;

use std::collections::BTreeSet;
use std::process::Command;

use world::*;

#[test]
fn shards_split_one_list_disjointly_and_completely() {
    let w = World::start(&["aqua.network"]);
    let mut names = BTreeSet::new();
    for n in 0..6u8 {
        let issuer = stellar_strkey::ed25519::PublicKey([0x50 + n; 32])
            .to_string()
            .as_str()
            .to_string();
        const CODES: [&str; 6] = ["SHA", "SHB", "SHC", "SHD", "SHE", "SHF"];
        let asset = w.issue(CODES[n as usize], &issuer, 0, Some("aqua.network"));
        w.serve_eval("aqua-clear-verified", &issuer, "aqua.network");
        names.insert(asset.core().to_string());
    }
    let ca = w.ca();
    let history = w.dir.path().join("h.sqlite3");
    let cfg = w.dir.path().join("watch.toml");
    let assets: String = names
        .iter()
        .map(|a| format!("[[asset]]\nasset = \"{a}\"\n"))
        .collect();
    std::fs::write(
        &cfg,
        w.watch_toml(&ca, &history, &["aqua.network"]) + &assets,
    )
    .unwrap();
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]));
    let written_by = |shard: &str| -> BTreeSet<String> {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["watch", "--once", "--shard", shard, "--config"])
            .arg(&cfg)
            .env("STELLAR_SECRET_KEY", &secret)
            .env("HOME", w.dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{shard}: {stderr}");
        let events: Vec<serde_json::Value> = stderr
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let shard_line = events
            .iter()
            .find(|e| e["event"] == "shard")
            .unwrap_or_else(|| panic!("no shard line: {stderr}"));
        assert_eq!(shard_line["shard"], shard);
        assert_eq!(shard_line["listed"], 6);
        let written: BTreeSet<String> = events
            .iter()
            .filter(|e| e["event"] == "written")
            .map(|e| e["asset"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(shard_line["owned"], written.len(), "{stderr}");
        written
    };
    let first = written_by("0/2");
    let second = written_by("1/2");
    assert!(first.is_disjoint(&second), "{first:?} / {second:?}");
    let union: BTreeSet<String> = first.union(&second).cloned().collect();
    assert_eq!(union, names, "every asset is written by one shard");
    assert!(
        !first.is_empty() && !second.is_empty(),
        "{first:?} / {second:?}"
    );
    // A bad shard is a usage error naming the fix.
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--once", "--shard", "2/2", "--config"])
        .arg(&cfg)
        .env("STELLAR_SECRET_KEY", &secret)
        .env("HOME", w.dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be below 2"));
}

/// #36 item 2: the day's spend budget is kept in the history store, so separate `watch --once` runs (cron)
/// and a restart on one UTC day share it. A 1 XLM fee cap counts 2 XLM per transaction; a pass may spend 2
/// (one transaction), the day 4 (two): the first run writes one asset, the second (another process) one
/// more, and the third is refused before signing, with the figures, whatever its own memory says.
#[test]
fn separate_once_runs_stop_at_the_shared_daily_budget() {
    let w = World::start(&["aqua.network"]);
    const CODES: [&str; 3] = ["BDA", "BDB", "BDC"];
    let mut assets = String::new();
    let mut cores = Vec::new();
    for (n, code) in CODES.iter().enumerate() {
        let issuer = stellar_strkey::ed25519::PublicKey([0x60 + n as u8; 32]).to_string();
        let asset = w.issue(code, &issuer, 0, Some("aqua.network"));
        w.serve_eval("aqua-clear-verified", &issuer, "aqua.network");
        assets.push_str(&format!("[[asset]]\nasset = \"{}\"\n", asset.core()));
        cores.push(asset.core());
    }
    let ca = w.ca();
    let history = w.dir.path().join("h.sqlite3");
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(
        &cfg,
        w.watch_toml(&ca, &history, &["aqua.network"])
            + "batch_size = 1\nmax_fee_stroops = 10000000\nmax_spend_per_pass_xlm = 2\n\
               max_spend_per_day_xlm = 4\n"
            + &assets,
    )
    .unwrap();
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]));
    let once = || -> (usize, String) {
        let out = crate::common::watch_once(&cfg, &secret, w.dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let written = stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["event"] == "written")
            .count();
        (written, stderr)
    };
    let (first, log) = once();
    assert_eq!(first, 1, "one transaction fits a pass: {log}");
    assert!(log.contains("max_spend_per_pass_xlm = 2"), "{log}");
    let (second, log) = once();
    assert_eq!(
        second, 1,
        "a new process has the day's second transaction: {log}"
    );
    let (third, log) = once();
    assert_eq!(
        third, 0,
        "the day's budget is spent across processes: {log}"
    );
    assert!(
        log.contains("max_spend_per_day_xlm = 4")
            && log.contains("4 XLM counted today (UTC) by every process writing with this key"),
        "{log}"
    );
    let written = cores
        .iter()
        .filter(|core| {
            let sac = assay_attest::sac::asset_contract_id(core, &w.spec.passphrase).unwrap();
            assay_attest::registry::read_safety(&w.rpc, w.registry, sac)
                .unwrap()
                .is_some()
        })
        .count();
    assert_eq!(
        written, 2,
        "two transactions on chain, the third never signed"
    );
}
