//! The tokens of fixtures/ and fixtures/third-party that an offline run (`assay sep41 --wasm`, the testkit)
//! deploys, with their constructors' arguments and mint functions: the one list that the equivalence test
//! (testkit_equivalence.rs) and the benchmark (examples/testkit_bench.rs, which includes this file) run, and
//! building their WASM when it is stale.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use serde_json::{json, Value};

/// A token an offline run deploys.
#[derive(Debug, Clone)]
pub struct FixtureToken {
    /// The `.wasm` name under target/wasm, without the extension.
    pub name: String,
    /// Its constructor's arguments (`--constructor-args`).
    pub args: Value,
    /// The function that mints to the suite's holder (`--mint-fn`).
    pub mint_fn: &'static str,
}

/// A scripts/build-wasm.sh package and the sources its modules are built from.
struct Build {
    package: &'static str,
    sources: &'static [&'static str],
}

/// What every build reads besides its crate.
const SHARED_SOURCES: [&str; 4] = [
    "Cargo.toml",
    "Cargo.lock",
    "scripts/build-wasm.sh",
    "scripts/spec-shake",
];

const BUILDS: [Build; 6] = [
    Build {
        package: "conformant-token",
        sources: &["fixtures/conformant-token"],
    },
    Build {
        package: "vulnerable-token",
        sources: &["fixtures/vulnerable-token"],
    },
    Build {
        package: "upgradable-token",
        sources: &["fixtures/upgradable-token"],
    },
    Build {
        package: "defect-token",
        sources: &["fixtures/conformant-token"],
    },
    Build {
        package: "power-token",
        sources: &["fixtures/power-token"],
    },
    Build {
        package: "third-party",
        sources: &["fixtures/third-party"],
    },
];

/// The third-party tokens (fixtures/third-party/README.md, "The others offline"): `.wasm` name,
/// constructor arguments, mint function. The allowlist and blocklist constructors credit their `admin`
/// argument, so `@holder` there funds the suite's holder. The RWA token is listed though one contract
/// cannot stand alone offline (its compliance and identity verifier are contracts it calls, and its
/// `mint` takes an operator): both runs must refuse it alike. `tp_oz_rwa_compliance` and
/// `tp_oz_rwa_verifier` are its helpers, not tokens.
fn third_party() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "tp_oz_pausable",
            json!(["Pause", "PAU", "@admin", 0]),
            "mint",
        ),
        (
            "tp_oz_blocklist",
            json!(["Block", "BLK", "@holder", "@admin", 1000]),
            "mint",
        ),
        (
            "tp_oz_allowlist",
            json!(["Allow", "ALW", "@holder", "@admin", 1000]),
            "mint",
        ),
        ("tp_oz_capped", json!([1_000_000]), "mint"),
        ("tp_oz_votes", json!(["@admin"]), "mint"),
        (
            "tp_oz_rwa_token",
            json!(["Real", "RWA", "@admin", "@admin", "@admin", "@admin"]),
            "mint",
        ),
        (
            "tp_soroban_token",
            json!(["@admin", 7, "Token", "TOK"]),
            "mint",
        ),
    ]
}

/// A token deployed with contracts and calls around it: its set-up file (the one `assay sep41 --setup`
/// reads, relative to the workspace root) and the contracts that file deploys.
pub struct SetUpToken {
    pub name: &'static str,
    pub setup: &'static str,
    pub parts: &'static [&'static str],
}

/// OpenZeppelin's SEP-57 (RWA) token (its compliance bound to it, the parties verified, the holder minted
/// by the operator) and the power fixture whose balances live in a ledger contract.
pub fn set_up_tokens() -> Vec<SetUpToken> {
    vec![
        SetUpToken {
            name: "tp_oz_rwa_token",
            setup: "fixtures/third-party/oz-rwa.setup.json",
            parts: &["tp_oz_rwa_compliance", "tp_oz_rwa_verifier"],
        },
        SetUpToken {
            name: "power_token_swappable_ledger",
            setup: "fixtures/power-token/swappable-ledger.setup.json",
            parts: &["power_ledger"],
        },
    ]
}

impl SetUpToken {
    /// Builds the token and its parts when missing or stale.
    pub fn ensure_built(&self) {
        let built: Vec<FixtureToken> = (std::iter::once(self.name)
            .chain(self.parts.iter().copied()))
        .map(|name| FixtureToken {
            name: name.into(),
            args: json!([]),
            mint_fn: "mint",
        })
        .collect();
        ensure_built(&built);
    }

    /// The set-up file's path.
    pub fn setup_path(&self) -> PathBuf {
        root().join(self.setup)
    }
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.wasm` of `name`.
pub fn wasm(name: &str) -> PathBuf {
    root().join("target/wasm").join(format!("{name}.wasm"))
}

/// The cargo features a fixture crate declares (its `[features]` table's `name = []` lines), as
/// scripts/build-wasm.sh reads them.
fn features(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(manifest))
        .unwrap_or_else(|e| panic!("{manifest}: {e}"));
    let mut out = Vec::new();
    let mut in_features = false;
    for line in text.lines() {
        if line.starts_with('[') {
            in_features = line.trim() == "[features]";
            continue;
        }
        if let Some(name) = line.strip_suffix(" = []").filter(|_| in_features) {
            out.push(name.trim().to_string());
        }
    }
    out
}

/// Every token, fixtures/ first: the conformant, vulnerable and upgradable tokens, the planted defects, the
/// power fixtures (but `swappable-ledger`, whose ledger contract is deployed first: [`set_up_tokens`]),
/// then fixtures/third-party (the RWA token with constructor arguments alone, which an offline run refuses
/// for want of its set-up file; [`set_up_tokens`] has it with that file).
pub fn tokens() -> Vec<FixtureToken> {
    let sep41_args = |name: &str| json!(["@admin", 7, name, "TOK"]);
    let mut out: Vec<FixtureToken> = ["conformant_token", "vulnerable_token", "upgradable_token"]
        .iter()
        .map(|n| FixtureToken {
            name: n.to_string(),
            args: sep41_args(n),
            mint_fn: "mint",
        })
        .collect();
    for defect in features("fixtures/conformant-token/Cargo.toml") {
        let name = defect.replace('-', "_");
        out.push(FixtureToken {
            args: sep41_args(&name),
            name: format!("defect_token_{name}"),
            mint_fn: "mint",
        });
    }
    let powers = features("fixtures/power-token/Cargo.toml");
    for power in std::iter::once("control".to_string()).chain(powers) {
        if power == "swappable-ledger" {
            continue;
        }
        out.push(FixtureToken {
            name: format!("power_token_{}", power.replace('-', "_")),
            args: json!(["@admin", "@holder", 1000]),
            mint_fn: "mint",
        });
    }
    for (name, args, mint_fn) in third_party() {
        out.push(FixtureToken {
            name: name.to_string(),
            args,
            mint_fn,
        });
    }
    out
}

/// Builds with scripts/build-wasm.sh the packages whose modules among `tokens` are missing or older than
/// their sources; a fresh checkout builds everything, a second run nothing.
pub fn ensure_built(tokens: &[FixtureToken]) {
    let root = root();
    let stale: Vec<&str> = BUILDS
        .iter()
        .filter(|b| {
            let modules: Vec<PathBuf> = (tokens.iter())
                .filter(|t| built_by(&t.name) == b.package)
                .map(|t| wasm(&t.name))
                .collect();
            let sources: Vec<PathBuf> = (b.sources.iter().chain(&SHARED_SOURCES))
                .map(|p| root.join(p))
                .collect();
            !modules.is_empty() && wasm_is_stale(&modules, &sources)
        })
        .map(|b| b.package)
        .collect();
    if stale.is_empty() {
        return;
    }
    let status = Command::new(root.join("scripts/build-wasm.sh"))
        .args(&stale)
        .status()
        .expect("scripts/build-wasm.sh runs");
    assert!(status.success(), "scripts/build-wasm.sh {stale:?} failed");
}

/// The scripts/build-wasm.sh package that builds `name`.
fn built_by(name: &str) -> &'static str {
    if name.starts_with("defect_token_") {
        "defect-token"
    } else if name.starts_with("power_token_") {
        "power-token"
    } else if name.starts_with("tp_") {
        "third-party"
    } else {
        BUILDS
            .iter()
            .map(|b| b.package)
            .find(|p| p.replace('-', "_") == name)
            .unwrap_or("")
    }
}

/// True when a `.wasm` is missing or older than the newest file under `sources` (directories are
/// walked; `target` and `test_snapshots`, which builds and tests write, are not sources).
pub fn wasm_is_stale(wasm: &[PathBuf], sources: &[PathBuf]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(oldest_wasm) = wasm.iter().map(|p| modified(p)).collect::<Option<Vec<_>>>() else {
        return true;
    };
    let newest_source = sources.iter().filter_map(|p| newest_file(p)).max();
    match (oldest_wasm.into_iter().min(), newest_source) {
        (Some(wasm), Some(source)) => source > wasm,
        (None, _) => false,
        (Some(_), None) => false,
    }
}

/// The latest modification time of `path`, or of any file below it.
fn newest_file(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| !matches!(e.file_name().to_str(), Some("target" | "test_snapshots")))
        .filter_map(|e| newest_file(&e.path()))
        .max()
}
