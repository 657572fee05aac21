//! `assay sep41 --output junit|sarif`, read by real consumers: the JUnit XML by junitparser (Debian's
//! python3-junitparser), the SARIF by the SARIF Multitool's `validate` (npm @microsoft/sarif-multitool,
//! attester/cli/tests/sarif), for a clean token, a FAILing token and a token with a power. scripts/setup.sh
//! installs both.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn wasm(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .args(["conformant-token", "vulnerable-token", "power-token"])
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    });
    root().join("target/wasm").join(format!("{name}.wasm"))
}

/// The three subjects: name, constructor arguments, and the exit code `assay sep41` gives each.
const TOKENS: [(&str, &str, i32); 3] = [
    // Clean: every check holds, no power (the constructor credits the holder; no mint).
    ("power_token_control", r#"["@admin", "@holder", 1000]"#, 0),
    // FAILs.
    (
        "vulnerable_token",
        r#"["@admin", 7, "Vulnerable", "VUL"]"#,
        3,
    ),
    // Every check holds, with a power: admin_mint.
    (
        "conformant_token",
        r#"["@admin", 7, "Conformant", "CNF"]"#,
        0,
    ),
];

fn sep41(name: &str, args: &str, output: &str) -> (String, i32) {
    let path = wasm(name);
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args([
            "sep41",
            "--wasm",
            path.to_str().unwrap(),
            "--constructor-args",
            args,
        ])
        .args(["--output", output])
        .output()
        .expect("assay runs");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    (stdout, out.status.code().unwrap_or(-1))
}

/// The JSON run of the same token: per-check statuses and the powers, to compare against.
fn json_run(name: &str, args: &str) -> Value {
    let (stdout, _) = sep41(name, args, "json");
    serde_json::from_str(&stdout).expect("--output json is JSON")
}

/// `xml` as junitparser reads it: the totals and, per case, its name, classname, kind (pass, failure,
/// skipped, error), message and text.
fn junitparser(dir: &Path, name: &str, xml: &str) -> Value {
    let reader = r#"
import json, sys
from junitparser import JUnitXml, Failure, Skipped, Error
xml = JUnitXml.fromfile(sys.argv[1])
cases = []
for suite in xml:
    for case in suite:
        kind, message, text = "pass", None, None
        for r in case.result:
            if isinstance(r, Failure): kind, message, text = "failure", r.message, r.text
            elif isinstance(r, Skipped): kind, message = "skipped", r.message
            elif isinstance(r, Error): kind, message = "error", r.message
        cases.append({"suite": suite.name, "name": case.name, "classname": case.classname, "kind": kind,
                      "message": message, "text": text, "out": case.system_out})
print(json.dumps({"tests": xml.tests, "failures": xml.failures, "skipped": xml.skipped,
                  "errors": xml.errors, "cases": cases}))
"#;
    let file = dir.join(format!("{name}.xml"));
    std::fs::write(&file, xml).unwrap();
    let out = Command::new("/usr/bin/python3")
        .args(["-c", reader])
        .arg(&file)
        .output()
        .expect("/usr/bin/python3 runs (scripts/setup.sh installs python3-junitparser)");
    assert!(
        out.status.success(),
        "junitparser refused {name}: {}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn junit_reads_back_one_case_per_check_with_failures_and_skips_as_the_run_found_them() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args, code) in TOKENS {
        let (xml, exit) = sep41(name, args, "junit");
        assert_eq!(exit, code, "{name}: {xml}");
        let parsed = junitparser(dir.path(), name, &xml);
        let json = json_run(name, args);
        let rows = json["results"].as_array().unwrap();
        let cases = parsed["cases"].as_array().unwrap();
        assert_eq!(cases.len(), rows.len(), "{name}: one case per check");
        assert_eq!(parsed["tests"], rows.len());
        let mut failures = 0;
        for (case, row) in cases.iter().zip(rows) {
            let (id, status) = (row["id"].as_str().unwrap(), row["status"].as_str().unwrap());
            assert_eq!(case["name"], id);
            let kind = match status {
                "PASS" => "pass",
                "FAIL" | "NOT_IMPLEMENTED" => "failure",
                _ => "skipped",
            };
            assert_eq!(case["kind"], kind, "{name} {id}");
            if kind == "failure" {
                failures += 1;
                let message = case["message"].as_str().unwrap();
                assert!(
                    message.starts_with(&format!("{id} {status}: ")),
                    "{message}"
                );
                let text = case["text"].as_str().unwrap();
                assert!(
                    text.starts_with(&format!("expected: {}", row["expected"].as_str().unwrap())),
                    "{text}"
                );
            }
            if kind == "skipped" {
                assert!(
                    case["message"].as_str().unwrap().starts_with(status),
                    "{case}"
                );
            }
        }
        assert_eq!(parsed["failures"], failures);
        assert_eq!(failures > 0, code == 3, "{name}");
    }
}

/// `Sarif.Multitool validate`'s findings about `file` at level error (schema violations among them).
fn multitool_errors(file: &Path, out_dir: &Path) -> Vec<String> {
    let tool = root().join(
        "attester/cli/tests/sarif/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool",
    );
    assert!(
        tool.exists(),
        "{} is missing: run scripts/setup.sh",
        tool.display()
    );
    // A fresh output file per file validated: the tool will not overwrite one.
    let log = out_dir.join(format!(
        "{}.validation.sarif",
        file.file_stem().unwrap().to_string_lossy()
    ));
    let out = Command::new(&tool)
        .arg("validate")
        .arg(file)
        .arg("--output")
        .arg(&log)
        .output()
        .expect("the SARIF Multitool runs");
    let validation: Value = serde_json::from_slice(&std::fs::read(&log).unwrap_or_else(|e| {
        panic!(
            "no validation log ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }))
    .expect("the validation log is JSON");
    validation["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] == "error")
        .map(|r| r.to_string())
        .collect()
}

#[test]
fn sarif_validates_with_one_result_per_fail_and_per_power() {
    let dir = tempfile::tempdir().unwrap();
    // The validator itself: a log that breaks the schema is an error.
    let broken = dir.path().join("broken.sarif");
    std::fs::write(
        &broken,
        r#"{"version":"2.1.0","runs":[{"tool":{"driver":{}}}]}"#,
    )
    .unwrap();
    assert!(!multitool_errors(&broken, dir.path()).is_empty());

    for (name, args, code) in TOKENS {
        let (sarif, exit) = sep41(name, args, "sarif");
        assert_eq!(exit, code, "{name}: {sarif}");
        let file = dir.path().join(format!("{name}.sarif"));
        std::fs::write(&file, &sarif).unwrap();
        assert_eq!(
            multitool_errors(&file, dir.path()),
            Vec::<String>::new(),
            "{name}: {sarif}"
        );

        let log: Value = serde_json::from_str(&sarif).unwrap();
        let json = json_run(name, args);
        let run = &log["runs"][0];
        let rules: Vec<&str> = (run["tool"]["driver"]["rules"].as_array().unwrap().iter())
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        let results = run["results"].as_array().unwrap();
        for r in results {
            let id = r["ruleId"].as_str().unwrap();
            assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize], id);
            let location = &r["locations"][0];
            assert_eq!(
                location["physicalLocation"]["artifactLocation"]["uri"],
                format!("file://{}", wasm(name).canonicalize().unwrap().display())
            );
            // The contract this run deployed (each run deploys its own, so its id is its own).
            let contract = run["properties"]["contract"].as_str().unwrap();
            assert!(
                contract.starts_with('C') && contract.len() == 56,
                "{contract}"
            );
            assert_eq!(location["logicalLocations"][0]["name"], contract);
        }
        let fails: Vec<&str> = (json["results"].as_array().unwrap().iter())
            .filter(|r| matches!(r["status"].as_str(), Some("FAIL" | "NOT_IMPLEMENTED")))
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        let powers = json["powers"]["powers"].as_array().unwrap().len()
            + json["powers"]["unclassified"].as_array().unwrap().len();
        let error_results: Vec<&str> = (results.iter())
            .filter(|r| r["ruleId"].as_str().unwrap().starts_with("sep41-"))
            .map(|r| r["ruleId"].as_str().unwrap())
            .collect();
        assert_eq!(error_results, fails, "{name}: one result per FAIL");
        assert_eq!(
            results.len() - fails.len(),
            powers,
            "{name}: one result per power"
        );
        match name {
            "vulnerable_token" => assert!(!fails.is_empty()),
            "conformant_token" => {
                assert!(fails.is_empty());
                assert!(
                    results
                        .iter()
                        .any(|r| r["ruleId"] == "admin_mint" && r["level"] == "note"),
                    "{sarif}"
                );
            }
            _ => assert!(results.is_empty(), "{name}: {sarif}"),
        }
    }
}

/// The `assay scan` subjects, replayed from testdata/eval like scan_eval's: the eval subject, the kinds of its
/// findings' cases in report order (`*` for every finding not named: pass), the SARIF results' rule ids.
type ScanSubject = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

const SCAN_SUBJECTS: [ScanSubject; 4] = [
    // Clean: clear, verified, flags locked; every check passes, no result.
    ("shx-clear-flagslocked", &[], &[]),
    // FAILs: a curated blocklist hit escalates to critical; its domain does not claim it (skipped, not a
    // FAIL: accountability never moves severity); it can freeze (a power).
    (
        "repo-blocklisted-unverified",
        &[("reputation", "failure"), ("sep1-domain", "skipped")],
        &["reputation", "auth_revocable"],
    ),
    // Powers: freeze and clawback, verified, no FAIL.
    (
        "usdz-clawback-verified",
        &[],
        &["auth_revocable", "auth_clawback_enabled"],
    ),
    // A reputation source down: that check could not conclude (skipped), never a pass.
    (
        "doge-reputation-outage",
        &[("reputation", "skipped"), ("sep1-domain", "skipped")],
        &["auth_revocable"],
    ),
];

fn eval_subject(name: &str) -> PathBuf {
    crate::scan_eval::eval_dir().join(name)
}

#[test]
fn scan_junit_reads_back_one_case_per_check_as_the_report_judged_it() {
    let dir = tempfile::tempdir().unwrap();
    for (subject, kinds, _) in SCAN_SUBJECTS {
        let (_, json) = crate::scan_eval::run_subject_as(&eval_subject(subject), "json");
        let (_, run) = crate::scan_eval::run_subject_as(&eval_subject(subject), "junit");
        assert_eq!(run.code, json.code, "{subject}: {}", run.stderr);
        let report = json.report();
        let parsed = junitparser(dir.path(), subject, &run.stdout);
        let findings = report["findings"].as_array().unwrap();
        let cases = parsed["cases"].as_array().unwrap();
        assert_eq!(cases.len(), findings.len(), "{subject}: one case per check");
        let asset = format!(
            "{}-{}",
            report["asset"]["code"].as_str().unwrap(),
            report["asset"]["issuer"].as_str().unwrap()
        );
        let mut counted = (0, 0);
        for (case, finding) in cases.iter().zip(findings) {
            let check = finding["check"].as_str().unwrap();
            assert_eq!(case["name"], check, "{subject}");
            assert_eq!(case["classname"], format!("scan.{asset}"));
            let want = kinds
                .iter()
                .find(|(c, _)| *c == check)
                .map_or("pass", |(_, k)| k);
            assert_eq!(case["kind"], want, "{subject} {check}: {case}");
            let reasoning = finding["reasoning"].as_str().unwrap();
            match want {
                "failure" => {
                    counted.0 += 1;
                    assert_eq!(finding["severity"], "critical");
                    assert_eq!(case["message"], format!("{check} FAIL: {reasoning}"));
                    // The text: every evidence line the verdict rests on.
                    for e in finding["evidence"].as_array().unwrap() {
                        assert!(case["text"]
                            .as_str()
                            .unwrap()
                            .contains(e["claim"].as_str().unwrap()));
                    }
                }
                "skipped" => {
                    counted.1 += 1;
                    let message = case["message"].as_str().unwrap();
                    assert!(message.ends_with(reasoning), "{message}");
                    if finding["undetermined"] == true {
                        assert!(
                            message.starts_with("UNDETERMINED (did not answer: "),
                            "{message}"
                        );
                    } else {
                        assert!(
                            message.starts_with("accountability unverified: "),
                            "{message}"
                        );
                    }
                }
                _ => {
                    assert_eq!(finding["undetermined"], false);
                    let out = case["out"].as_str().unwrap();
                    assert!(out.contains(reasoning), "{out}");
                    assert!(
                        out.contains(&format!(
                            "severity {}",
                            finding["severity"].as_str().unwrap()
                        )),
                        "{out}"
                    );
                }
            }
        }
        assert_eq!(
            (
                parsed["failures"].as_u64().unwrap(),
                parsed["skipped"].as_u64().unwrap()
            ),
            (counted.0, counted.1)
        );
        assert_eq!(parsed["errors"], 0);
    }
}

#[test]
fn scan_sarif_validates_with_one_result_per_fail_and_per_power() {
    let dir = tempfile::tempdir().unwrap();
    for (subject, _, rule_ids) in SCAN_SUBJECTS {
        let (_, json) = crate::scan_eval::run_subject_as(&eval_subject(subject), "json");
        let (_, run) = crate::scan_eval::run_subject_as(&eval_subject(subject), "sarif");
        assert_eq!(run.code, json.code, "{subject}: {}", run.stderr);
        let file = dir.path().join(format!("{subject}.sarif"));
        std::fs::write(&file, &run.stdout).unwrap();
        assert_eq!(
            multitool_errors(&file, dir.path()),
            Vec::<String>::new(),
            "{subject}: {}",
            run.stdout
        );
        let report = json.report();
        let log: Value = serde_json::from_str(&run.stdout).unwrap();
        let sarif_run = &log["runs"][0];
        let rules = sarif_run["tool"]["driver"]["rules"].as_array().unwrap();
        let results = sarif_run["results"].as_array().unwrap();
        let ids: Vec<&str> = results
            .iter()
            .map(|r| r["ruleId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, rule_ids.to_vec(), "{subject}: {}", run.stdout);
        let asset = format!(
            "{}-{}",
            report["asset"]["code"].as_str().unwrap(),
            report["asset"]["issuer"].as_str().unwrap()
        );
        for r in results {
            assert_eq!(
                rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"],
                r["ruleId"]
            );
            assert_eq!(
                r["locations"][0]["logicalLocations"][0]["name"],
                asset.as_str()
            );
        }
        // The FAILs are the report's escalations to critical; the powers, its capability bits.
        let fails: Vec<&str> = (report["findings"].as_array().unwrap().iter())
            .filter(|f| f["escalation"] == true && f["severity"] == "critical")
            .map(|f| f["check"].as_str().unwrap())
            .collect();
        let powers: Vec<&str> = (report["mechanics"].as_array().unwrap().iter())
            .map(|m| m.as_str().unwrap())
            .filter(|m| m.starts_with("auth_") && *m != "auth_immutable")
            .collect();
        assert_eq!(ids, [fails, powers].concat(), "{subject}");
        for r in results {
            let level = match r["ruleId"].as_str().unwrap() {
                "reputation" | "auth_clawback_enabled" => "error",
                "auth_revocable" => "warning",
                other => panic!("{subject}: unexpected rule {other}"),
            };
            assert_eq!(r["level"], level, "{r}");
        }
        // What could not conclude is a notification, never silence.
        let notes = sarif_run["invocations"][0]["toolExecutionNotifications"]
            .as_array()
            .unwrap();
        let undetermined = report["undetermined_checks"].as_array().unwrap();
        assert_eq!(notes.len(), undetermined.len(), "{subject}: {notes:?}");
    }
}

/// A token contract on the local network, scanned by its code: each power discovery observed is a SARIF
/// result under its mechanics name, located at the contract, and its report's checks are the JUnit cases.
#[test]
fn scan_of_a_token_contract_gives_one_result_per_power_discovery_observed() {
    let w = crate::world::World::start(&[]);
    let ca = w.ca();
    let token = crate::powers_cli::deploy(&w, "take_burn", 61, [0x42; 32]);
    let id = format!("{}", stellar_strkey::Contract(token));
    let scan = |output: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["scan", &id, "--network", "local", "--no-history"])
            .args(["--output", output])
            .args(["--rpc-url", &w.net.rpc_url()])
            .args(["--network-passphrase", w.net.passphrase()])
            .args(w.source_args(&ca))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", w.dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        (out.status.code(), stdout)
    };
    let (code, json) = scan("json");
    assert!(matches!(code, Some(0 | 2)), "{json}");
    let report: Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert!(
        report["mechanics"]
            .as_array()
            .unwrap()
            .contains(&Value::from("admin_clawback")),
        "{report}"
    );

    let (sarif_code, sarif) = scan("sarif");
    assert_eq!(sarif_code, code, "{sarif}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("contract.sarif");
    std::fs::write(&file, &sarif).unwrap();
    assert_eq!(
        multitool_errors(&file, dir.path()),
        Vec::<String>::new(),
        "{sarif}"
    );
    let log: Value = serde_json::from_str(&sarif).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    // One per power the survey holds, each under its mechanics name; no FAIL.
    let observed = report["powers"]["powers"].as_array().unwrap().len()
        + report["powers"]["unclassified"].as_array().unwrap().len();
    assert_eq!(results.len(), observed, "{sarif}");
    let clawback = (results.iter())
        .find(|r| r["ruleId"] == "admin_clawback")
        .unwrap_or_else(|| panic!("no admin_clawback result: {sarif}"));
    assert_eq!(clawback["level"], "error");
    assert!(
        clawback["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("`rebalance` "),
        "{clawback}"
    );
    for r in results {
        let location = &r["locations"][0]["logicalLocations"][0];
        assert_eq!(location["name"], id.as_str());
        assert_eq!(location["kind"], "module");
    }

    let (junit_code, junit) = scan("junit");
    assert_eq!(junit_code, code, "{junit}");
    let parsed = junitparser(dir.path(), "contract", &junit);
    let checks: Vec<&Value> = (report["findings"].as_array().unwrap().iter())
        .map(|f| &f["check"])
        .collect();
    let cases: Vec<&Value> = (parsed["cases"].as_array().unwrap().iter())
        .map(|c| &c["name"])
        .collect();
    assert_eq!(cases, checks, "{junit}");
    assert_eq!(parsed["failures"], 0, "{junit}");
}
