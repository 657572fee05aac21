//! The host binaries unwind (so `catch_unwind` at a task boundary works in a release build) and are
//! optimised for speed, while every contract is built under its own size-tuned, aborting profile.
use std::path::Path;

fn workspace_file(relative: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The `key = value` lines of one `[section]` of a TOML file.
fn section<'a>(toml: &'a str, name: &str) -> Vec<&'a str> {
    let header = format!("[{name}]");
    toml.lines()
        .skip_while(|l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn host_binaries_unwind_at_speed_and_contracts_abort_small() {
    let manifest = workspace_file("Cargo.toml");
    let release = section(&manifest, "profile.release");
    for line in [
        "panic = \"unwind\"",
        "opt-level = 3",
        "overflow-checks = true",
    ] {
        assert!(
            release.contains(&line),
            "the release profile (host binaries) must have {line}: {release:?}"
        );
    }
    let contract = section(&manifest, "profile.contract");
    for line in [
        "panic = \"abort\"",
        "opt-level = \"z\"",
        "overflow-checks = true",
        "codegen-units = 1",
        "lto = true",
    ] {
        assert!(
            contract.contains(&line),
            "the contract profile must have {line}: {contract:?}"
        );
    }
    let contract_logs = section(&manifest, "profile.release-with-logs");
    assert!(
        contract_logs.contains(&"inherits = \"contract\""),
        "the contracts' logging profile must inherit the contract profile: {contract_logs:?}"
    );
    let build_wasm = workspace_file("scripts/build-wasm.sh");
    assert!(
        build_wasm.lines().any(|l| l.trim() == "PROFILE=contract"),
        "scripts/build-wasm.sh must build every contract with the contract profile"
    );
    assert!(
        !build_wasm.contains("--release"),
        "scripts/build-wasm.sh must not build contracts with the host's release profile"
    );
}
