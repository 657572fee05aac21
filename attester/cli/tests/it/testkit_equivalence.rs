//! A token author's in-test run (assay-testkit) and `assay sep41 --wasm` reach the same verdicts: for every
//! fixture token an offline run can deploy, the per-check statuses and the powers
//! discovery observed are equal. Prints each token's in-test figure (discovery plus suite) as
//! `testkit bench:` lines.
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use assay_testkit::Token;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `packages` with scripts/build-wasm.sh (once per test binary and list).
fn build(packages: &'static [&'static str], once: &OnceLock<()>) {
    once.get_or_init(|| {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .args(packages)
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    });
}

fn wasm(name: &str) -> PathBuf {
    root().join("target/wasm").join(format!("{name}.wasm"))
}

/// Every fixture token an offline run deploys, with its constructor's arguments. Left out: power-token's
/// `swappable-ledger` build (its ledger contract must be deployed first); it runs offline through neither.
fn fixture_tokens() -> Vec<(String, Value)> {
    let sep41_args = |name: &str| serde_json::json!(["@admin", 7, name, "TOK"]);
    let mut out: Vec<(String, Value)> =
        ["conformant_token", "vulnerable_token", "upgradable_token"]
            .iter()
            .map(|n| (n.to_string(), sep41_args(n)))
            .collect();
    for defect in std::fs::read_dir(root().join("target/wasm")).unwrap() {
        let file = defect.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(name) = file
            .strip_prefix("defect_token_")
            .and_then(|f| f.strip_suffix(".wasm"))
        {
            out.push((format!("defect_token_{name}"), sep41_args(name)));
        }
    }
    for power in [
        "control",
        "take_burn",
        "take_move",
        "freeze_one",
        "pause_all",
        "create_supply",
        "hidden_clawback",
        "unclassified",
    ] {
        out.push((
            format!("power_token_{power}"),
            serde_json::json!(["@admin", "@holder", 1000]),
        ));
    }
    out
}

/// (function, kind) of each power, sorted: what discovery observed, free of run-specific addresses.
fn powers_of(survey: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = (survey["powers"].as_array().unwrap().iter())
        .map(|p| {
            (
                p["function"].as_str().unwrap().to_string(),
                p["effect"].as_str().unwrap().to_string(),
            )
        })
        .chain(
            (survey["unclassified"].as_array().unwrap().iter()).map(|w| {
                (
                    w["function"].as_str().unwrap().to_string(),
                    "unclassified".to_string(),
                )
            }),
        )
        .collect();
    out.sort();
    out
}

#[test]
fn the_in_test_run_and_the_cli_agree_on_every_fixture_token() {
    static BUILT: OnceLock<()> = OnceLock::new();
    build(
        &[
            "conformant-token",
            "vulnerable-token",
            "upgradable-token",
            "defect-token",
            "power-token",
        ],
        &BUILT,
    );
    let tokens = fixture_tokens();
    assert!(
        tokens
            .iter()
            .filter(|(n, _)| n.starts_with("defect_token_"))
            .count()
            >= 16
    );
    assert_equivalent(tokens);
}

/// For each token: the in-test run's statuses, exit code and powers equal `assay sep41 --wasm`'s.
fn assert_equivalent(tokens: Vec<(String, Value)>) {
    for (name, args) in tokens {
        let path = wasm(&name);
        let cli = |output: &str| {
            Command::new(env!("CARGO_BIN_EXE_assay"))
                .args(["sep41", "--wasm", path.to_str().unwrap()])
                .args(["--constructor-args", &args.to_string(), "--output", output])
                .output()
                .expect("assay runs")
        };
        let suite = match Token::wasm_file(&path)
            .constructor_args(args.to_string())
            .run()
        {
            Ok(suite) => suite,
            // A token neither can set up (the upgradable fixture has no way to fund a holder): the CLI
            // refuses it too, as a usage error with the same message.
            Err(why) => {
                let why = why.to_string();
                let out = cli("json");
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(64), "{name}: {stderr}");
                assert!(stderr.contains(&why), "{name}: {why}\n{stderr}");
                println!("testkit bench: {name}: refused by both before the suite: {why}");
                continue;
            }
        };
        println!(
            "testkit bench: {name}: discovery + suite {:.1} s (setup {:.1} s)",
            (suite.discovery_time + suite.suite_time).as_secs_f64(),
            suite.setup_time.as_secs_f64()
        );
        let out = cli("json");
        let cli_json: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let cli_rows: Vec<(String, String)> = (cli_json["results"].as_array().unwrap().iter())
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["status"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let kit_rows: Vec<(String, String)> = (suite.report.results.iter())
            .map(|r| (r.id.to_string(), r.status.as_str().to_string()))
            .collect();
        assert_eq!(kit_rows, cli_rows, "{name}: per-check statuses");
        assert_eq!(
            out.status.code(),
            Some(suite.report.exit_code() as i32),
            "{name}: exit code"
        );
        let kit_powers =
            serde_json::to_value(suite.powers.as_ref().expect("discovery ran")).unwrap();
        assert_eq!(
            powers_of(&kit_powers),
            powers_of(&cli_json["powers"]),
            "{name}: powers"
        );
        assert_eq!(
            kit_powers["unobservable"], cli_json["powers"]["unobservable"],
            "{name}"
        );
    }
}
