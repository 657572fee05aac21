//! Issue #26 item 2 on the local network with the real binary: `assay scan`, `attest`, `verify` and
//! `watch --once` read the ledger through stellar-rpc alone (Horizon's host sent to a closed port) and give
//! the severity, mechanics and evidence hash the same commands give with Horizon; the attestation written
//! from the ledger entry is the one a Horizon scan of the same facts reproduces.

use crate::world;

use std::process::Command;

use assay_core::hash::{evidence_hash, EvidenceVersion, PreimageInput};
use assay_core::Report;
use serde_json::Value;
use world::*;

use crate::latent_freeze_cli::{g, mechanics, seed, serve_clean};

/// Where Horizon is named in every run, so the evidence cites the same addresses whichever source read
/// the facts; `--connect-to` decides whether it is reachable.
const HORIZON: &str = "http://horizon.test/horizon";
const AUTH_REQUIRED: u32 = 1;
const AUTH_REVOCABLE: u32 = 2;
const AUTH_CLAWBACK_ENABLED: u32 = 8;

/// Horizon reachable (sent to the local network), or not (sent to a closed port).
#[derive(Clone, Copy, PartialEq)]
enum Horizon {
    Up,
    Down,
}

/// The source arguments of the world with Horizon named [`HORIZON`] and reachable or not.
fn sources(w: &World, ca: &std::path::Path, horizon: Horizon) -> Vec<String> {
    let mut args = w.source_args(ca);
    let at = args.iter().position(|a| a == "--horizon-url").unwrap();
    args[at + 1] = HORIZON.into();
    let port = match horizon {
        // The local network serves Horizon beside stellar-rpc: `http://127.0.0.1:PORT/rpc`.
        Horizon::Up => w.net.rpc_url()["http://127.0.0.1:".len()..]
            .trim_end_matches("/rpc")
            .parse::<u16>()
            .unwrap(),
        Horizon::Down => assay_scan::testsupport::closed_port(),
    };
    args.extend([
        "--connect-to".into(),
        format!("horizon.test:80:127.0.0.1:{port}"),
    ]);
    args
}

/// Runs `assay ARGS` in the world; exit code and stdout (stderr shown on failure).
fn assay(w: &World, args: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env("STELLAR_NETWORK", "local")
        .env_remove("STELLAR_NETWORK_PASSPHRASE")
        .env_remove("STELLAR_RPC_URL")
        .env_remove("ASSAY_HORIZON_URL")
        .env(
            "STELLAR_SECRET_KEY",
            format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32])),
        )
        .env("HOME", w.dir.path())
        .env("XDG_DATA_HOME", w.dir.path().join("data"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// `assay scan ASSETS --output json`, through stellar-rpc when `rpc`; the reports in order.
fn scan(
    w: &World,
    ca: &std::path::Path,
    assets: &[String],
    rpc: bool,
    horizon: Horizon,
) -> Vec<Value> {
    let mut args = strings(&["scan", "--no-history", "--output", "json"]);
    args.extend(assets.iter().cloned());
    if rpc {
        args.extend(["--rpc-url".into(), w.net.rpc_url()]);
    }
    args.extend(sources(w, ca, horizon));
    let (code, out, err) = assay(w, &args);
    assert_eq!(code, 0, "{out}{err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn hash(report: &Value) -> String {
    let report = Report::from_json(&report.to_string()).expect("a valid report");
    evidence_hash(
        &PreimageInput::from_report(&report).unwrap(),
        EvidenceVersion::DEFAULT,
    )
}

fn capability_reasoning(report: &Value) -> String {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "capability")
        .unwrap()["reasoning"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn scan_attest_verify_and_watch_read_the_ledger_through_stellar_rpc_alone() {
    let domains = ["mutable.example", "clawback.example", "locked.example"];
    let w = World::start(&domains);
    let ca = w.ca();
    let mutable = w.issue("MUT", &g(&seed(81)), 0, Some("mutable.example"));
    let clawback = w.issue(
        "CLW",
        &g(&seed(82)),
        AUTH_REVOCABLE | AUTH_CLAWBACK_ENABLED,
        Some("clawback.example"),
    );
    let locked = w.issue("LCK", &g(&seed(83)), 0, Some("locked.example"));
    w.lock(&locked.issuer);
    for (a, domain) in [
        (&mutable, domains[0]),
        (&clawback, domains[1]),
        (&locked, domains[2]),
    ] {
        serve_clean(&w, a.code, &a.issuer, domain);
    }
    let assets: Vec<String> = [&mutable, &clawback, &locked]
        .iter()
        .map(|a| format!("{}-{}", a.code, a.issuer))
        .collect();

    // scan: Horizon alone, then stellar-rpc alone (Horizon unreachable): the same verdicts and hashes.
    let by_horizon = scan(&w, &ca, &assets, false, Horizon::Up);
    let by_rpc = scan(&w, &ca, &assets, true, Horizon::Down);
    let expected: [(&str, &[&str], &str); 3] = [
        ("medium", &["auth_revocable"], "1 key"),
        (
            "high",
            &["auth_revocable", "auth_clawback_enabled"],
            "1 key",
        ),
        ("clear", &[], "locked: no signer can reach the threshold"),
    ];
    for ((h, r), (severity, bits, who)) in by_horizon.iter().zip(&by_rpc).zip(expected) {
        assert_eq!(r["severity"], severity, "{r:#}");
        assert_eq!(mechanics(r), bits, "{r:#}");
        assert_eq!(r["who_can_act"], who, "{r:#}");
        assert_eq!(r["state"], "valid", "{r:#}");
        assert_eq!(
            (&h["severity"], mechanics(h), &h["who_can_act"], &h["state"]),
            (&r["severity"], mechanics(r), &r["who_can_act"], &r["state"])
        );
        assert_eq!(
            hash(h),
            hash(r),
            "the evidence binds the facts, not the source"
        );
        let reasoning = capability_reasoning(r);
        assert!(
            reasoning.contains("read from the ledger through stellar-rpc")
                && reasoning.contains("was not read"),
            "{reasoning}"
        );
        assert!(!capability_reasoning(h).contains("stellar-rpc"));
    }

    // scan --holder through stellar-rpc: the holder's own trustline, read as a trustline entry.
    let holder = format!(
        "{}",
        stellar_strkey::ed25519::PublicKey(w.holder.public_key())
    );
    let mut args = strings(&[
        "scan",
        "--no-history",
        "--output",
        "json",
        "--holder",
        &holder,
    ]);
    args.extend([assets[1].clone(), "--rpc-url".into(), w.net.rpc_url()]);
    args.extend(sources(&w, &ca, Horizon::Down));
    let (code, out, err) = assay(&w, &args);
    assert_eq!(code, 0, "{out}{err}");
    let report: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(
        report["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["source"] == "horizon/holder"
                && e["claim"].as_str().unwrap().starts_with(&format!(
                    "trustline to {}: balance 1.0000000, authorized=true",
                    assets[1]
                ))),
        "{report:#}"
    );

    // attest with stellar-rpc alone: every asset written, each with the hash the Horizon scan gives.
    let registry = |horizon| {
        let mut args = strings(&[
            "--registry",
            &format!("{}", stellar_strkey::Contract(w.registry)),
            "--rpc-url",
            &w.net.rpc_url(),
            "--network-passphrase",
            w.net.passphrase(),
        ]);
        args.extend(sources(&w, &ca, horizon));
        args
    };
    let mut args = strings(&["attest", "--output", "json"]);
    args.extend(assets.iter().cloned());
    args.extend(registry(Horizon::Down));
    let (code, out, err) = assay(&w, &args);
    assert_eq!(code, 0, "{out}{err}");
    let written: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (line, h) in written.iter().zip(&by_horizon) {
        assert_eq!(line["status"], "written", "{line}");
        assert_eq!(line["evidence_hash"].as_str().unwrap(), hash(h), "{line}");
    }

    // verify agrees with stellar-rpc alone and with Horizon beside it.
    for horizon in [Horizon::Down, Horizon::Up] {
        for asset in &assets {
            let mut args = strings(&["verify", asset]);
            args.extend(registry(horizon));
            let (code, out, err) = assay(&w, &args);
            assert_eq!(code, 0, "{out}{err}");
            assert!(out.contains("agreement"), "{out}");
        }
    }

    // watch --once with Horizon unreachable: every verdict unchanged; after a flag change, rewritten.
    let cfg = w.dir.path().join("watch.toml");
    let toml = w
        .watch_toml(&ca, &w.dir.path().join("h.sqlite3"), &domains)
        .replace(
            &format!("horizon_url = \"{}\"", w.net.horizon_url()),
            &format!("horizon_url = \"{HORIZON}\""),
        )
        .replace(
            "connect_to = [",
            &format!(
                "connect_to = [\"horizon.test:80:127.0.0.1:{}\", ",
                assay_scan::testsupport::closed_port()
            ),
        );
    let tables: String = assets
        .iter()
        .map(|a| format!("[[asset]]\nasset = \"{a}\"\n"))
        .collect();
    std::fs::write(&cfg, toml + &tables).unwrap();
    let watch = || {
        let (code, _, err) = assay(
            &w,
            &[
                "watch".into(),
                "--once".into(),
                "--config".into(),
                cfg.display().to_string(),
            ],
        );
        let events: Vec<Value> = err
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (code, events, err)
    };
    let (code, events, err) = watch();
    assert_eq!(code, 0, "{err}");
    for a in &assets {
        assert!(
            events
                .iter()
                .any(|e| e["asset"] == a.as_str() && e["event"] == "unchanged"),
            "{a}: {err}"
        );
    }
    w.net
        .admin_set_account_flags(&g_account(&mutable.issuer), AUTH_REQUIRED)
        .unwrap();
    let (code, events, err) = watch();
    assert_eq!(code, 0, "{err}");
    assert!(
        events
            .iter()
            .any(|e| e["asset"] == assets[0].as_str() && e["event"] == "written"),
        "{err}"
    );
    let mut args = strings(&["verify", &assets[0]]);
    args.extend(registry(Horizon::Down));
    let (code, out, err) = assay(&w, &args);
    assert_eq!(code, 0, "{out}{err}");
}
