//! `assay scan C…` and `assay attest C…` on the power fixtures (fixtures/power-token): each power, under a
//! name no list of the project holds, is found on a fork of the local network by what it does, with its
//! bit, its floor and who can use it; the control stays clear. Nothing is signed for the scan, and no key
//! is in its environment.

use crate::world;

use std::process::Command;

use assay_attest::registry::read_safety;
use stellar_xdr::ScVal;
use world::*;

use crate::common::assay_on_world;

/// Builds the power fixtures once per test binary (scripts/build-wasm.sh rebuilds only what changed).
pub(crate) fn build_power_fixtures() {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let status = Command::new(root.join("scripts/build-wasm.sh"))
            .args(["power-ledger", "power-token"])
            .status()
            .expect("run scripts/build-wasm.sh");
        assert!(
            status.success(),
            "scripts/build-wasm.sh power-ledger power-token failed"
        );
    });
}

/// Deploys `power_token_<feature>` with the world's admin as admin and `holder` holding 1,000,000.
pub(crate) fn deploy(w: &World, feature: &str, salt: u8, holder: [u8; 32]) -> [u8; 32] {
    build_power_fixtures();
    let admin = assay_attest::registry::account_val(w.admin.public_key());
    let mut args = vec![
        admin,
        assay_attest::registry::account_val(holder),
        ScVal::I128(stellar_xdr::Int128Parts {
            hi: 0,
            lo: 1_000_000,
        }),
    ];
    if feature == "swappable_ledger" {
        let book = w.deploy("power_ledger", salt.wrapping_add(100), vec![]);
        args.push(ScVal::Address(stellar_xdr::ScAddress::Contract(
            stellar_xdr::ContractId(stellar_xdr::Hash(book)),
        )));
    }
    w.deploy(&format!("power_token_{feature}"), salt, args)
}

/// `assay scan C… --output json` against the world's network; the report.
fn scan(w: &World, ca: &std::path::Path, token: [u8; 32]) -> serde_json::Value {
    let id = format!("{}", stellar_strkey::Contract(token));
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args([
            "scan",
            &id,
            "--network",
            "local",
            "--no-history",
            "--output",
            "json",
        ])
        .args(["--rpc-url", &w.net.rpc_url()])
        .args(["--network-passphrase", w.net.passphrase()])
        .args(w.source_args(ca))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", w.dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        matches!(out.status.code(), Some(0) | Some(2)),
        "scan {id}: {stdout}{stderr}"
    );
    serde_json::from_str(stdout.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// A fixture feature, the mechanics names and severity expected, the function that exercised its power and
/// the vocabulary's label for it.
type Case = (
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    Option<&'static str>,
);

#[test]
fn every_power_is_found_by_what_it_does_and_the_control_stays_clear() {
    let w = World::start(&[]);
    let ca = w.ca();
    let holder = [0x42; 32];
    // feature, mechanics names, severity, the function that exercised it, its label.
    let cases: [Case; 15] = [
        ("take_burn", &["admin_clawback"], "high", "rebalance", None),
        ("take_move", &["admin_clawback"], "high", "recover", None),
        ("freeze_one", &["admin_freeze"], "medium", "set_mode", None),
        ("pause_all", &["admin_freeze"], "medium", "pause_all", None),
        ("create_supply", &["admin_mint"], "clear", "reward", None),
        (
            "swappable_ledger",
            &["code_mutable"],
            "high",
            "set_ledger",
            None,
        ),
        (
            "hidden_clawback",
            &["admin_clawback"],
            "high",
            "clawback",
            Some("clawback"),
        ),
        (
            "unclassified",
            &["admin_unclassified"],
            "clear",
            "set_memo",
            None,
        ),
        (
            "two_step",
            &["admin_clawback"],
            "high",
            "queue_adjustment then apply_adjustment",
            None,
        ),
        (
            "admin_allowance",
            &["admin_clawback"],
            "high",
            "grant_spending then transfer_from",
            None,
        ),
        // A burn the clock holds back for seven days, and a sweep keyed on a constant of the module.
        ("clock_burn", &["admin_clawback"], "high", "settle", None),
        ("constant_keyed", &["admin_clawback"], "high", "sweep", None),
        // A levy on every transfer: medium at 30 %, high when the recipient receives nothing.
        (
            "transfer_fee",
            &["admin_transfer_fee"],
            "medium",
            "set_levy",
            None,
        ),
        (
            "transfer_fee_full",
            &["admin_transfer_fee"],
            "high",
            "set_levy",
            None,
        ),
        ("control", &[], "clear", "", None),
    ];
    let admin = format!(
        "{}",
        stellar_strkey::ed25519::PublicKey(w.admin.public_key())
    );
    for (n, (feature, names, severity, function, label)) in cases.into_iter().enumerate() {
        let token = deploy(&w, feature, 60 + n as u8, holder);
        let report = scan(&w, &ca, token);
        let mechanics: Vec<&str> = report["mechanics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert_eq!(mechanics, names, "{feature}: {report}");
        assert_eq!(report["severity"], *severity, "{feature}: {report}");
        assert_eq!(report["undetermined"], false, "{feature}: {report}");
        let powers = &report["powers"];
        match feature {
            "control" => {
                assert_eq!(powers["powers"].as_array().unwrap().len(), 0, "{report}");
                assert_eq!(powers["unclassified"].as_array().unwrap().len(), 0);
            }
            "unclassified" => {
                assert_eq!(powers["unclassified"][0]["function"], function, "{report}");
                assert_eq!(
                    powers["unclassified"][0]["authorized_by"][0]["address"],
                    admin
                );
            }
            _ => {
                let p = powers["powers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["function"] == function)
                    .unwrap_or_else(|| panic!("{feature}: no power through {function}: {report}"));
                assert_eq!(p["authorized_by"][0]["address"], admin, "{feature}");
                assert_eq!(p["authorized_by"][0]["control"], "1 key", "{feature}");
                assert_eq!(p["label"].as_str(), label, "{feature}");
                // Usable only later: when, in the report; every other power is usable now.
                let usable_from = p.get("usable_from").and_then(|u| u.as_str());
                if feature == "clock_burn" {
                    let when = usable_from.unwrap_or_else(|| panic!("no usable_from: {report}"));
                    let now = assay_core::time::Timestamp::now().unix();
                    let later = (when.parse::<assay_core::time::Timestamp>())
                        .unwrap_or_else(|e| panic!("{when}: {e}: {report}"))
                        .unix();
                    let days = (later - now) as f64 / 86_400.0;
                    assert!((6.9..=7.1).contains(&days), "{when}: {days} days from now");
                } else {
                    assert_eq!(usable_from, None, "{feature}: {report}");
                }
                if function == "set_levy" {
                    let share = if feature == "transfer_fee" {
                        3_000
                    } else {
                        10_000
                    };
                    assert_eq!(p["effect"], "transfer_fee", "{report}");
                    assert_eq!(p["share_bps"], share, "{report}");
                    assert_eq!(p["credited"], admin, "the rest goes to the admin: {report}");
                }
            }
        }
    }
}

#[test]
fn attest_writes_each_power_with_its_floor_and_the_gate_follows() {
    // Every fixture: the bit written is the one observed, at its floor; the gate refuses what its mask
    // forbids.
    let w = World::start(&[]);
    let ca = w.ca();
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]));
    for (n, (feature, severity, flags)) in [
        ("take_burn", 3u64, 1024u64),
        ("take_move", 3, 1024),
        ("freeze_one", 2, 2048),
        ("pause_all", 2, 2048),
        ("create_supply", 0, 4096),
        ("swappable_ledger", 3, 512),
        ("hidden_clawback", 3, 1024),
        ("unclassified", 0, 8192),
        ("two_step", 3, 1024),
        ("admin_allowance", 3, 1024),
        ("clock_burn", 3, 1024),
        ("constant_keyed", 3, 1024),
        ("transfer_fee", 2, 16384),
        ("transfer_fee_full", 3, 16384),
        ("control", 0, 0),
    ]
    .into_iter()
    .enumerate()
    {
        let token = deploy(&w, feature, 80 + n as u8, [0x43; 32]);
        let id = format!("{}", stellar_strkey::Contract(token));
        let (code, text) = assay_on_world(&w, &ca, &["attest", &id], &secret);
        assert_eq!(code, Some(0), "{feature}: {text}");
        let on_chain = read_safety(&w.rpc, w.registry, token)
            .unwrap()
            .unwrap_or_else(|| panic!("{feature} written: {text}"));
        assert_eq!(
            (u64::from(on_chain.severity), u64::from(on_chain.flags)),
            (severity, flags),
            "{feature}: {text}"
        );
        // The gate's default mask forbids freezing, confiscation, replaceable code and a transfer fee
        // the admin sets (19,974); a mint or an unclassified write is recorded, not forbidden.
        let admitted = w.gate_check(token).is_ok();
        assert_eq!(admitted, flags & 19_974 == 0, "{feature}: {text}");
        if feature.starts_with("transfer_fee") {
            assert!(!admitted, "{feature}: the gate refuses it");
        }
    }
}

/// Offline: `assay sep41 --wasm` deploys the fixture on an embedded network (its constructor funding the
/// suite's holder) and reports the powers discovery found there, with the mint's and the clawback's events
/// judged by the suite.
#[test]
fn offline_runs_report_each_power_and_judge_its_event() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    build_power_fixtures();
    for (feature, function, event_row) in [
        (
            "take_burn",
            Some("rebalance"),
            Some("sep41-events-clawback"),
        ),
        ("take_move", Some("recover"), None),
        ("freeze_one", Some("set_mode"), None),
        ("pause_all", Some("pause_all"), None),
        ("create_supply", Some("reward"), Some("sep41-events-mint")),
        (
            "hidden_clawback",
            Some("clawback"),
            Some("sep41-events-clawback"),
        ),
        ("unclassified", None, None),
        (
            "two_step",
            Some("queue_adjustment then apply_adjustment"),
            Some("sep41-events-clawback"),
        ),
        (
            "admin_allowance",
            Some("grant_spending then transfer_from"),
            None,
        ),
        ("clock_burn", Some("settle"), None),
        ("constant_keyed", Some("sweep"), None),
        ("transfer_fee", Some("set_levy"), None),
        ("transfer_fee_full", Some("set_levy"), None),
        ("control", None, None),
    ] {
        let wasm = root.join(format!("target/wasm/power_token_{feature}.wasm"));
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["sep41", "--wasm"])
            .arg(&wasm)
            .args([
                "--constructor-args",
                r#"["@admin","@holder",1000000]"#,
                "--output",
                "json",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{feature}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let powers = report["powers"]["powers"]
            .as_array()
            .expect("a powers section");
        match function {
            Some(f) => assert!(
                powers.iter().any(|p| p["function"] == f),
                "{feature}: {report}"
            ),
            None => assert!(powers.is_empty(), "{feature}: {report}"),
        }
        let unclassified = report["powers"]["unclassified"].as_array().unwrap();
        assert_eq!(
            unclassified.first().map(|u| u["function"].clone()),
            (feature == "unclassified").then(|| serde_json::json!("set_memo")),
            "{feature}: {report}"
        );
        let status = |id: &str| {
            report["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"] == id)
                .map(|r| r["status"].as_str().unwrap().to_string())
                .unwrap_or_default()
        };
        if let Some(row) = event_row {
            assert_eq!(status(row), "PASS", "{feature}: {report}");
        }
    }
}
