//! The real `assay attest`, `verify` and `watch` binaries against the local network, with the secret in
//! STELLAR_SECRET_KEY: what they print, their exit codes, and that the secret appears nowhere.

use crate::world;

use std::process::{Command, Output};

use world::*;

use crate::common::{aqua_and_outage, stdout_and_stderr, OUTG};

struct Env<'a> {
    w: &'a World,
    secret: String,
    ca: std::path::PathBuf,
}

impl Env<'_> {
    fn common(&self) -> Vec<String> {
        self.w.cli_args(&self.ca)
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out: Output = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(args)
            .args(self.common())
            .env("STELLAR_SECRET_KEY", &self.secret)
            .env("HOME", self.w.dir.path())
            .env("XDG_DATA_HOME", self.w.dir.path().join("data"))
            .env_remove("STELLAR_NETWORK")
            .output()
            .unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        );
        assert!(
            !o.contains(&self.secret) && !e.contains(&self.secret),
            "secret leaked:\n{o}\n{e}"
        );
        (out.status.code().unwrap_or(-1), o, e)
    }
}

#[test]
fn attest_verify_and_watch_binaries() {
    let (w, ca, secret) = aqua_and_outage();
    let env = Env {
        w: &w,
        secret: secret.clone(),
        ca,
    };
    let aqua = format!("AQUA-{AQUA}");
    let outg = format!("OUTG-{OUTG}");

    // Dry run: simulated, nothing written.
    let (code, out, err) = env.run(&["attest", &aqua, "--dry-run", "--output", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["status"], "simulated", "{line}");
    let (code, _, _) = env.run(&["verify", &aqua]);
    assert_eq!(code, 4, "absent after a dry run");

    // One written, one refused with its rule: exit 3.
    let (code, out, err) = env.run(&["attest", &aqua, &outg, "--output", "json"]);
    assert_eq!(code, 3, "{out}{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["status"], "written", "{}", lines[0]);
    assert_eq!(lines[0]["severity"], 0);
    assert_eq!(lines[0]["tx_hash"].as_str().unwrap().len(), 64);
    assert!(lines[0]["ledger"].as_u64().unwrap() > 0);
    assert_eq!(lines[1]["status"], "refused");
    assert_eq!(lines[1]["rule"], "undetermined");

    // Text output names what was written.
    let (code, out, _) = env.run(&["attest", &aqua]);
    assert_eq!(code, 0);
    assert!(
        out.contains("written: severity clear, flags 0, hash ")
            && out.contains(", tx ")
            && out.contains(", ledger "),
        "{out}"
    );

    // verify: agreement 0, absent 4.
    let (code, out, _) = env.run(&["verify", &aqua]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("agreement: severity 0, flags 0, hash "),
        "{out}"
    );
    // The local world binds a verdict store, which the attestation was published to.
    let store = stellar_strkey::Contract(w.store).to_string();
    assert!(
        out.contains(&format!("verdict store {store}: answers alike")),
        "{out}"
    );
    let (code, out, _) = env.run(&["verify", &outg]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains(&format!("verdict store {store}: answers alike")),
        "absent from both: {out}"
    );

    // One network model: `STELLAR_NETWORK=local` names the standalone passphrase for every command
    // (issue #13), so scan and verify need no --network-passphrase.
    let local = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(args)
            .args(w.source_args(&env.ca))
            .env("STELLAR_NETWORK", "local")
            .env_remove("STELLAR_NETWORK_PASSPHRASE")
            .env("HOME", w.dir.path())
            .env("XDG_DATA_HOME", w.dir.path().join("data"))
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), stdout_and_stderr(&out))
    };
    let (code, out) = local(&["scan", &aqua, "--no-history", "--output", "json"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(assay_core::STANDALONE_PASSPHRASE), "{out}");
    let registry = format!("{}", stellar_strkey::Contract(w.registry));
    let rpc = w.net.rpc_url();
    let (code, out) = local(&["verify", &aqua, "--registry", &registry, "--rpc-url", &rpc]);
    assert_eq!(code, 0, "{out}");

    // A secret in argv is refused before anything happens (and not echoed: checked in run()).
    let (code, _, err) = env.run(&["attest", &aqua, "--source", &secret]);
    assert_eq!(code, 64);
    assert!(
        err.contains("refusing a secret key on the command line"),
        "{err}"
    );

    // watch --once: AQUA is already fresh (unchanged), OUTG is refused and logged, never written.
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(
        &cfg,
        w.watch_toml(
            &env.ca,
            &w.dir.path().join("h.sqlite3"),
            &["aqua.network", "outage.example"],
        ) + &format!("[[asset]]\nasset = \"{aqua}\"\n[[asset]]\nasset = \"{outg}\"\n"),
    )
    .unwrap();
    let out = crate::common::watch_once(&cfg, &secret, w.dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(&secret) && !String::from_utf8_lossy(&out.stdout).contains(&secret));
    assert!(
        stderr.contains("\"event\":\"started\"") && stderr.contains("\"event\":\"stopped\""),
        "{stderr}"
    );
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of = |asset: &str| {
        events
            .iter()
            .find(|e| e["asset"] == asset && e["event"] != "scan_failed")
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(of(&aqua)["event"], "unchanged", "{stderr}");
    assert_eq!(of(&outg)["event"], "refused", "{stderr}");
    assert_eq!(of(&outg)["rule"], "undetermined", "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        w.dir.path().join("h.sqlite3").exists(),
        "observations recorded"
    );

    // The flags change: watch re-attests because the verdict changed, and verify then agrees.
    w.net.admin_set_account_flags(&g_account(AQUA), 1).unwrap();
    let (code, _, _) = env.run(&["verify", &aqua]);
    assert_eq!(code, 3, "mismatch after the flag change");
    let out = crate::common::watch_once(&cfg, &secret, w.dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("\"event\":\"written\"") && stderr.contains("verdict changed"),
        "{stderr}"
    );
    let (code, out, _) = env.run(&["verify", &aqua]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("severity 1, flags 1"), "{out}");
}
