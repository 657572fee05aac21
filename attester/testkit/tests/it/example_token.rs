//! The planted defect: a copy of examples/token whose `transfer` skips `from.require_auth()`, built to WASM
//! and tested with its own `cargo test`, fails exactly that check's test, with the check's message (and the
//! power assertion, which needs every check to hold); every other check's test passes.
use std::path::Path;
use std::process::Command;

use crate::common::root;

/// Copies the project's manifest, lock and sources (not its build output) into `to`, pointing the
/// `assay-testkit` path dependency at this checkout.
fn copy_example(to: &Path) {
    let from = root().join("examples/token");
    for dir in ["src", "tests"] {
        std::fs::create_dir_all(to.join(dir)).unwrap();
        for entry in std::fs::read_dir(from.join(dir)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(dir).join(entry.file_name())).unwrap();
        }
    }
    std::fs::copy(from.join("Cargo.lock"), to.join("Cargo.lock")).unwrap();
    let testkit = root().join("attester/testkit").canonicalize().unwrap();
    let manifest = std::fs::read_to_string(from.join("Cargo.toml")).unwrap();
    let relative = "path = \"../../attester/testkit\"";
    assert!(
        manifest.contains(relative),
        "examples/token/Cargo.toml names {relative}"
    );
    let manifest = manifest.replace(
        relative,
        &format!("path = {:?}", testkit.display().to_string()),
    );
    std::fs::write(to.join("Cargo.toml"), manifest).unwrap();
}

/// Removes `from.require_auth();` from the body of `transfer` (only there).
fn plant_transfer_without_auth(lib: &Path) {
    let source = std::fs::read_to_string(lib).unwrap();
    let start = source
        .find("pub fn transfer(")
        .expect("lib.rs has transfer");
    let body_end = start
        + source[start..]
            .find("\n    }\n")
            .expect("transfer's body ends");
    let line = "        from.require_auth();\n";
    let at = start
        + source[start..body_end]
            .find(line)
            .expect("transfer asks from's auth");
    let planted = format!("{}{}", &source[..at], &source[at + line.len()..]);
    std::fs::write(lib, planted).unwrap();
}

#[test]
fn a_transfer_without_the_holders_auth_fails_exactly_the_transfer_auth_test() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("token");
    copy_example(&project);
    plant_transfer_without_auth(&project.join("src/lib.rs"));

    let name = "example_token_transfer_skips_auth";
    let status = Command::new(root().join("scripts/build-wasm.sh"))
        .arg("example-token")
        .env("ASSAY_EXAMPLE_TOKEN_DIR", &project)
        .env("ASSAY_EXAMPLE_TOKEN_NAME", name)
        .status()
        .expect("scripts/build-wasm.sh runs");
    assert!(
        status.success(),
        "scripts/build-wasm.sh example-token failed"
    );

    // The consumer projects' target directory under ours (scripts/test.sh's consumer step builds the example
    // there first): the native build of the Soroban host is the long part, and a running `cargo test` holds
    // the workspace's own build directory.
    let out = Command::new(env!("CARGO"))
        .args(["test", "--locked", "--test", "sep41"])
        .current_dir(&project)
        .env("CARGO_TARGET_DIR", root().join("target/consumers"))
        .env(
            "EXAMPLE_TOKEN_WASM",
            root().join(format!("target/wasm/{name}.wasm")),
        )
        .output()
        .expect("cargo test runs in the copy");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the planted defect passed:\n{stdout}\n{stderr}"
    );

    let outcome = |result: &str| -> Vec<&str> {
        let mut names: Vec<&str> = (stdout.lines())
            .filter_map(|l| {
                l.strip_prefix("test ")?
                    .strip_suffix(&format!(" ... {result}"))
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        outcome("FAILED"),
        [
            "holds_every_check_with_only_the_mint_power",
            "sep41_transfer_auth"
        ],
        "{stdout}\n{stderr}"
    );
    assert_eq!(
        outcome("ok").len(),
        assay_sep41::CHECKS.len() - 1,
        "{stdout}"
    );
    // The check's own message: its status, what PASS requires and what was seen.
    assert!(
        stdout.contains("sep41-transfer-auth FAIL: transfer: authorization\n  expected: refused with no authorization; asks the holder's, for exactly the call, nothing nested\n  actual:   "),
        "{stdout}"
    );
}
