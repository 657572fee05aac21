//! Workspace-only test support (feature `workspace-testutils`): builds the contracts to WASM once per
//! process with `scripts/build-wasm.sh`, and registers a contract either natively or from its
//! `.wasm`, so one test body covers both. It reaches into this repository (the script, `target/wasm`),
//! so it is not part of the consumer kit; a crate outside the workspace uses [`super::TestRegistry`].
extern crate std;

use std::{
    path::PathBuf,
    process::Command,
    string::{String, ToString},
    sync::OnceLock,
    vec::Vec,
};

use soroban_sdk::{Address, Env};

use crate::SafetyRegistry;

/// A fresh host (no snapshot files) that mocks every authorisation, for this workspace's own
/// contract tests: each of them pins every write's `e.auths()` (and its refusals without the
/// signer's authorisation) itself. Consumers get [`super::new_env`], which mocks nothing.
pub fn new_env_mocking_all_auths() -> Env {
    let env = super::new_env();
    env.mock_all_auths();
    env
}

/// Which build of a contract a test runs against.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Build {
    /// The Rust code registered directly in the host.
    Native,
    /// The `.wasm` that `scripts/build-wasm.sh` produced, run in the host's VM.
    Wasm,
}

/// Both builds, for tests that loop over them.
pub const BUILDS: [Build; 2] = [Build::Native, Build::Wasm];

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `scripts/build-wasm.sh PACKAGE...`; its `.wasm` files land in `target/wasm/`.
pub fn build_wasm(packages: &[&str]) -> Result<(), String> {
    let root = workspace_root();
    // The script builds in its own target dir under a lock, so it never waits on the
    // cargo process that runs these tests.
    let status = Command::new(root.join("scripts/build-wasm.sh"))
        .args(packages)
        .current_dir(&root)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .map_err(|e| std::format!("could not run scripts/build-wasm.sh: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(std::format!("scripts/build-wasm.sh failed: {status}"))
    }
}

fn build_all() -> &'static Result<(), String> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        build_wasm(&[
            "assay-registry",
            "assay-verdict-store",
            "assay-gate-example",
            "upgradable-token",
        ])
    })
}

fn load(crate_name: &str) -> Vec<u8> {
    if let Err(e) = build_all() {
        panic!("{e}");
    }
    read_wasm(crate_name)
}

/// `target/wasm/<crate_name>.wasm`, as the last build left it.
pub fn read_wasm(crate_name: &str) -> Vec<u8> {
    let path = workspace_root()
        .join("target/wasm")
        .join(std::format!("{crate_name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// `target/wasm/assay_registry.wasm`, built on first use.
pub fn registry_wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| load("assay_registry"))
}

/// `target/wasm/assay_verdict_store.wasm`, built on first use.
pub fn verdict_store_wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| load("assay_verdict_store"))
}

/// `target/wasm/assay_gate_example.wasm`, built on first use.
pub fn gate_wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| load("assay_gate_example"))
}

/// `target/wasm/upgradable_token.wasm` (a token whose admin can replace its code), built on first
/// use.
pub fn upgradable_token_wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| load("upgradable_token"))
}

/// Registers the registry under `admin` from the chosen build, with no upgrade notice (as a local
/// network does).
pub fn register_registry(env: &Env, build: Build, admin: &Address) -> Address {
    register_registry_with_delay(env, build, admin, 0)
}

/// Registers the registry under `admin` from the chosen build with `upgrade_delay_secs` of notice
/// (a notice below `MIN_NOTICE_SECS` is passed as explicitly allowed).
pub fn register_registry_with_delay(
    env: &Env,
    build: Build,
    admin: &Address,
    upgrade_delay_secs: u64,
) -> Address {
    let args = (
        admin.clone(),
        upgrade_delay_secs,
        upgrade_delay_secs < crate::MIN_NOTICE_SECS,
    );
    match build {
        Build::Native => env.register(SafetyRegistry, args),
        Build::Wasm => env.register(registry_wasm(), args),
    }
}

/// Names a build in assertion messages.
pub fn label(build: Build) -> String {
    match build {
        Build::Native => "native".to_string(),
        Build::Wasm => "wasm".to_string(),
    }
}

/// Runs a test body once per build.
pub fn for_each_build(test: impl Fn(Build)) {
    for build in BUILDS {
        test(build);
    }
}
