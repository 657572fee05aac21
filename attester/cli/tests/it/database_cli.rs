//! Issue #37: the history in PostgreSQL, end to end on the local network with real servers. A SQLite
//! history `watch` wrote is copied into PostgreSQL (`assay history copy`) and served by two replicas that
//! answer byte for byte alike, and alike with the SQLite file; `watch --database` writes PostgreSQL
//! directly; a password is never taken from argv nor printed.

use std::process::Command;

use assay_scan::testsupport::postgres::PostgresServer;

use crate::common::{aqua_and_outage, OUTG};
use crate::serve_cli::{get, serve, serve_database};
use crate::world::AQUA;

fn assay(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env_remove("ASSAY_HISTORY")
        .env_remove("ASSAY_DATABASE_URL")
        .output()
        .unwrap()
}

fn text(out: &std::process::Output) -> String {
    crate::common::stdout_and_stderr(out)
}

#[test]
fn a_copied_history_serves_alike_from_two_replicas_and_watch_writes_postgres_directly() {
    let postgres = PostgresServer::start();
    let (w, ca, secret) = aqua_and_outage();
    let (aqua, outg) = (format!("AQUA-{AQUA}"), format!("OUTG-{OUTG}"));
    let history = w.dir.path().join("h.sqlite3");
    let assets = format!("[[asset]]\nasset = \"{aqua}\"\n[[asset]]\nasset = \"{outg}\"\n");
    let toml = w.watch_toml(&ca, &history, &["aqua.network", "outage.example"]);
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(&cfg, toml.clone() + &assets).unwrap();
    let out = crate::common::watch_once(&cfg, &secret, w.dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // The copy: whole, once; a second copy into the same database is refused and changes nothing.
    let copied_url = postgres.fresh_database();
    let history_arg = history.to_str().unwrap();
    let out = assay(&[
        "history",
        "copy",
        "--history",
        history_arg,
        "--to",
        &copied_url,
        "--output",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["copied"]["latest"], 2, "{summary}");
    assert!(
        summary["copied"]["observations"].as_u64().unwrap() >= 2,
        "{summary}"
    );
    assert!(
        summary["copied"]["bundles"].as_u64().unwrap() >= 1,
        "{summary}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("copy: observations"));
    let again = assay(&[
        "history",
        "copy",
        "--history",
        history_arg,
        "--to",
        &copied_url,
    ]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert!(
        text(&again).contains("already holds a history"),
        "{}",
        text(&again)
    );

    // The same answers from the file and from the database, listing by listing.
    for asset in [&aqua, &outg] {
        let from_file = assay(&[
            "history",
            asset,
            "--history",
            history_arg,
            "--output",
            "json",
        ]);
        let from_database = assay(&[
            "history",
            asset,
            "--database",
            &copied_url,
            "--output",
            "json",
        ]);
        assert_eq!(from_file.status.code(), Some(0), "{}", text(&from_file));
        assert_eq!(from_file.stdout, from_database.stdout, "{asset}");
    }

    // Two replicas on the database and one on the file: byte for byte the same pages, JSON and bundles.
    let (first, second, file) = (
        serve_database(&copied_url),
        serve_database(&copied_url),
        serve(&history),
    );
    // The bundle the registry's entry for AQUA cites, as watch recorded it.
    let database = assay_scan::history::Database::parse(&copied_url);
    let (_, reading) = assay_scan::history::History::connect(&database)
        .unwrap()
        .latest_chain_reading(&aqua)
        .unwrap()
        .expect("a registry reading of AQUA");
    let reading: assay_scan::history::ChainReading = serde_json::from_str(&reading).unwrap();
    let hash = reading.cites().expect("an attestation").to_string();
    let paths = [
        "/v1/assets".to_string(),
        "/v1/assets?per_page=1".to_string(),
        "/v1/assets?severity=clear".to_string(),
        format!("/v1/assets/{aqua}"),
        format!("/v1/assets/{outg}?per_page=1"),
        format!("/assets/{aqua}"),
        format!("/v1/evidence/{hash}"),
        "/health".to_string(),
        "/v1/assets/NOPE-GNOPE".to_string(),
    ];
    for path in &paths {
        let answers: Vec<(u16, String)> = [&first, &second, &file]
            .iter()
            .map(|s| {
                let (status, _, body) = get(&s.addr, path);
                (status, body)
            })
            .collect();
        assert_eq!(answers[0], answers[1], "two replicas differ on {path}");
        assert_eq!(
            answers[0], answers[2],
            "the database and the file differ on {path}"
        );
    }
    let (_, _, metrics) = get(&first.addr, "/metrics");
    assert!(metrics.contains("assay_queue_up 1"), "{metrics}");
    assert!(
        metrics.contains("assay_queue_assets{state=\"total\"} 0"),
        "{metrics}"
    );

    // `watch --database`: a history file in the config too is refused (give one), then without it the
    // one worker writes the database, leads the (single-worker) queue and hands every asset back.
    let direct_url = postgres.fresh_database();
    // `watch --once --config CFG` with `args` and `env` besides the signing key.
    let watch_once = |args: &[&str], env: &[(&str, &str)]| {
        Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["watch", "--once", "--config"])
            .arg(&cfg)
            .args(args)
            .envs(env.iter().copied())
            .env("STELLAR_SECRET_KEY", &secret)
            .env("HOME", w.dir.path())
            .env_remove("ASSAY_HISTORY")
            .output()
            .unwrap()
    };
    let out = watch_once(&["--database", &direct_url], &[]);
    assert_eq!(out.status.code(), Some(64), "{}", text(&out));
    assert!(text(&out).contains("give one"), "{}", text(&out));
    let without_file: String = toml
        .lines()
        .filter(|l| !l.starts_with("history ="))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&cfg, without_file + &assets).unwrap();
    let out = watch_once(&[], &[("ASSAY_DATABASE_URL", &direct_url)]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("\"event\":\"leased\""), "{said}");
    let listed = assay(&[
        "history",
        &aqua,
        "--database",
        &direct_url,
        "--output",
        "json",
    ]);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed));
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        listed["observations"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
    let direct = serve_database(&direct_url);
    let (_, _, metrics) = get(&direct.addr, "/metrics");
    assert!(
        metrics.contains("assay_queue_assets{state=\"total\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("assay_queue_assets{state=\"leased\"} 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains("assay_queue_leader_heartbeat_age_seconds{scope="),
        "{metrics}"
    );

    // A password in argv is refused without being repeated; the fix is named.
    let with_password = direct_url.replacen("postgres@", "postgres:hunter2@", 1);
    for args in [
        vec![
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database",
            &with_password,
        ],
        vec!["history", &aqua, "--database", &with_password],
        vec![
            "history",
            "copy",
            "--history",
            history_arg,
            "--to",
            &with_password,
        ],
    ] {
        let out = assay(&args);
        assert_eq!(out.status.code(), Some(64), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains("hunter2"), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains("ASSAY_DATABASE_URL"),
            "{args:?}: {}",
            text(&out)
        );
    }
}
