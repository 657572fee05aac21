//! The repository's root and its built fixture WASMs.
use std::{path::PathBuf, process::Command, sync::OnceLock};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/wasm/<name>.wasm`, after building the conformant and vulnerable fixtures once per test binary with
/// scripts/build-wasm.sh.
pub fn fixture_wasm(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .args(["conformant-token", "vulnerable-token"])
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    });
    root().join("target/wasm").join(format!("{name}.wasm"))
}
