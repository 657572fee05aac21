//! Issue #16, item 5: the host binaries unwind (so `catch_unwind` at a task boundary works in a
//! release build) while every contract is still built with `panic = "abort"`.
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
fn item5_host_binaries_unwind_and_contracts_abort() {
    let manifest = workspace_file("Cargo.toml");
    let release = section(&manifest, "profile.release");
    assert!(
        release.contains(&"panic = \"unwind\""),
        "the release profile must unwind for host binaries: {release:?}"
    );
    let contract_logs = section(&manifest, "profile.release-with-logs");
    assert!(
        contract_logs.contains(&"panic = \"abort\""),
        "the contracts' logging profile must abort: {contract_logs:?}"
    );
    let build_wasm = workspace_file("scripts/build-wasm.sh");
    assert!(
        build_wasm
            .lines()
            .any(|l| l.trim() == "export CARGO_PROFILE_RELEASE_PANIC=abort"),
        "scripts/build-wasm.sh must build every contract with panic = abort"
    );
}
