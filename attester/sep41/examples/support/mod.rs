//! What the benchmarks share: the ledger close time from the command line and the built token.
use std::{path::PathBuf, process::Command};

/// The first argument as the ledger close time in milliseconds (100 when absent or not a number).
pub fn ledger_close_ms() -> u64 {
    std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100)
}

/// The conformant token's WASM, built first with `scripts/build-wasm.sh`.
pub fn conformant_token_wasm() -> Vec<u8> {
    built_wasm(&["conformant-token"], &["conformant_token"]).remove(0)
}

/// `target/wasm/NAME.wasm` of each name, after `scripts/build-wasm.sh PACKAGES` (cargo recompiles only
/// what changed).
pub fn built_wasm(packages: &[&str], names: &[&str]) -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let status = Command::new(root.join("scripts/build-wasm.sh"))
        .args(packages)
        .status()
        .expect("scripts/build-wasm.sh runs");
    assert!(
        status.success(),
        "scripts/build-wasm.sh {packages:?} failed"
    );
    (names.iter())
        .map(|n| {
            let path = root.join(format!("target/wasm/{n}.wasm"));
            std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect()
}
