//! `assay demo` end to end: the real binary, the built WASM, the local network and the recorded sources. It
//! must succeed, its transcript must show each step's stated outcome and be the README's, and its JSON summary
//! must hold every check: one run for all three (the demo takes half a minute).

use crate::common;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn demo_without_wasm_names_the_packages_to_build_and_exits_1() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["demo", "--wasm-dir"])
        .arg(empty.path())
        .current_dir(&root)
        .env_remove("ASSAY_EVAL_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let listed = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["demo", "--list-wasm"])
        .output()
        .unwrap();
    assert_eq!(listed.status.code(), Some(0));
    let packages: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    // The packages scripts/demo.sh builds, each a module the demo loads.
    assert!(
        packages.iter().any(|p| p == "assay-verdict-store")
            && packages.iter().any(|p| p == "upgradable-token"),
        "{packages:?}"
    );
    let fix = format!("scripts/build-wasm.sh {}", packages.join(" "));
    assert!(stderr.contains(&fix), "{fix:?} not in {stderr}");
}

#[test]
fn demo_runs_every_step_with_its_stated_outcome_and_summarises_it_as_json() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    common::ensure_wasm(&root);
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["demo", "--output", "json"])
        .current_dir(&root)
        .env("HOME", home.path())
        .env_remove("STELLAR_NETWORK")
        .env_remove("ASSAY_WASM_DIR")
        .env_remove("ASSAY_EVAL_DIR")
        .env_remove("ASSAY_CONNECT_TO")
        .env_remove("ASSAY_CACERT")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(summary["passed"], true, "{summary}");
    assert_eq!(summary["differed"], serde_json::json!([]));
    let steps = summary["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 9);
    assert_eq!(
        steps[7]["title"],
        "deposit each asset through the gate contract"
    );
    assert_eq!(
        steps[8]["title"],
        "attest custom token contracts by their code, and verify them"
    );
    for step in steps {
        let checks = step["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "{step}");
        assert!(checks.iter().all(|c| c["held"] == true), "{step}");
    }
    // The transcript a person reads (on stderr beside the JSON, on stdout in text mode: the same lines).
    assert!(!stderr.contains("DIFFERS"), "{stderr}");
    for line in [
        "== Step 8: deposit each asset through the gate contract",
        "ok: exit 2: one report is undetermined (the reputation outage)",
        "ok: five attestations written",
        "ok: vulnerable_token: exit 3: a check FAILED",
        "ok: SHX-GDST… admitted",
        "ok: SHX-GDST… written with the scanned severity clear",
        "ok: AQUA-GBNZ… written with the scanned severity medium",
        "ok: AQUA-GBNZ… refused with #3 IssuerCanTakeIt",
        "ok: vulnerable_token: sep41-transfer-negative-amount FAILS",
        "ok: conformant_token: 26 pass, 0 fail (its mint's event judged)",
        "ok: DOGE-GARD… refused with #1 NotAttested",
        "ok: DOGE-GA22… refused with #4 SeverityTooHigh",
        "ok: USDC-GA5Z… refused with #3 IssuerCanTakeIt",
        "ok: the admitted deposit moved 100 into the gate",
        "ok: DOGE-GARD… is_safe false",
        "ok: SHX-GDST… is_safe true",
        "ok: AQUA-GBNZ… is_safe false",
        "== Step 9: attest custom token contracts by their code, and verify them",
        "ok: upgradable token written high (code_mutable, bit 9)",
        "ok: conformant token written clear (admin_mint only, every check passed)",
        "ok: vulnerable token written critical (sep41_violation) although some checks could not conclude",
        "ok: upgradable token refused with #4 SeverityTooHigh",
        "ok: vulnerable token refused with #4 SeverityTooHigh",
        "ok: verify --sep41 vulnerable: exit 0",
        "Demo passed: all 9 steps had their stated outcome",
    ] {
        assert!(stderr.contains(line), "missing {line:?} in:\n{stderr}");
    }
    // The README shows this transcript as the text-mode run prints it on stdout: the same lines.
    let transcript: Vec<String> = stderr.lines().map(str::to_string).collect();
    if let Err(e) = crate::docs_commands::check_readme_demo_transcript(&transcript) {
        panic!("the README's demo transcript differs from a real run: {e}\n\nreal run:\n{stderr}");
    }
}
