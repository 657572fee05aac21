//! The import rules of docs/architecture.md, read from the crate graph (`cargo metadata`, `cargo tree`) and
//! the core's source: which workspace crate may import which, that no test imports a crate above its own,
//! that the judgment core can reach no I/O crate, and that only `Timestamp::now` reads the clock in it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The attester's library crates, bottom to top.
const ATTESTER: [&str; 7] = [
    "assay-core",
    "assay-scan",
    "assay-chain",
    "assay-localnet",
    "assay-sep41",
    "assay-powers",
    "assay-attest",
];

/// The binary's: the attester's crates and the testkit (whose discovery step `assay sep41` takes).
const CLI: [&str; 8] = [
    "assay-core",
    "assay-scan",
    "assay-chain",
    "assay-localnet",
    "assay-sep41",
    "assay-powers",
    "assay-attest",
    "assay-testkit",
];

/// Every workspace crate and the workspace crates its normal and build dependencies may name.
const MAY_IMPORT: &[(&str, &[&str])] = &[
    ("assay-core", &[]),
    ("assay-scan", &["assay-core"]),
    ("assay-chain", &["assay-core"]),
    ("assay-localnet", &["assay-core", "assay-chain"]),
    (
        "assay-sep41",
        &["assay-core", "assay-chain", "assay-localnet"],
    ),
    // Beside the suite, not above or below it: both drive the embedded host; attest and the CLI compose them.
    (
        "assay-powers",
        &["assay-core", "assay-chain", "assay-localnet"],
    ),
    ("assay-attest", &ATTESTER),
    // A token author's dev-dependency: the suite and discovery, composed as `assay sep41` composes them.
    (
        "assay-testkit",
        &["assay-core", "assay-sep41", "assay-powers"],
    ),
    ("assay-cli", &CLI),
    ("assay-registry-interface", &[]),
    ("assay-registry", &["assay-registry-interface"]),
    // The registry's read path: it shares the interface crate's rules, never the registry's code.
    ("assay-verdict-store", &["assay-registry-interface"]),
    ("assay-gate-example", &["assay-registry-interface"]),
    ("conformant-token", &[]),
    ("power-token", &[]),
    ("power-ledger", &[]),
    ("vulnerable-token", &[]),
    ("upgradable-token", &[]),
    ("read-floor", &[]),
    // A verdict store that answers "safe" to everything: `verify`'s looser-store test.
    ("loose-store", &["assay-registry-interface"]),
    ("assay-spec-shake", &[]),
];

/// Crates that would let the judgment core perform I/O.
const IO_CRATES: [&str; 16] = [
    "reqwest",
    "hyper",
    "hyper-util",
    "tokio",
    "async-std",
    "smol",
    "mio",
    "ureq",
    "rusqlite",
    "stellar-rpc-client",
    "socket2",
    "rustls",
    "native-tls",
    "openssl",
    "h2",
    "curl",
];

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("cargo prints UTF-8")
}

/// A workspace crate: where it lives and the workspace crates it names, by dependency kind.
struct Member {
    dir: PathBuf,
    /// Normal and build dependencies.
    imports: BTreeSet<String>,
    dev: BTreeSet<String>,
}

fn workspace() -> BTreeMap<String, Member> {
    let meta: Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]))
    .expect("cargo metadata prints JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let (mut imports, mut dev) = (BTreeSet::new(), BTreeSet::new());
            for d in p["dependencies"].as_array().expect("dependencies") {
                let name = d["name"].as_str().expect("dependency name").to_string();
                if !names.contains(&name) {
                    continue;
                }
                match d["kind"].as_str() {
                    Some("dev") => dev.insert(name),
                    _ => imports.insert(name),
                };
            }
            let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest_path"));
            let member = Member {
                dir: manifest.parent().expect("a directory").to_path_buf(),
                imports,
                dev,
            };
            (p["name"].as_str().expect("name").to_string(), member)
        })
        .collect()
}

fn rule(name: &str) -> Option<&'static [&'static str]> {
    MAY_IMPORT.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

#[test]
fn every_crate_has_a_place_in_the_rules() {
    let ws = workspace();
    let unplaced: Vec<&String> = ws.keys().filter(|n| rule(n).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "add {unplaced:?} to MAY_IMPORT here and to docs/architecture.md"
    );
    let gone: Vec<&str> = MAY_IMPORT
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !ws.contains_key(*n))
        .collect();
    assert!(gone.is_empty(), "no longer in the workspace: {gone:?}");
}

#[test]
fn crates_import_only_what_the_rules_allow() {
    let violations: Vec<String> = workspace()
        .iter()
        .flat_map(|(name, m)| {
            let allowed = rule(name).unwrap_or(&[]);
            m.imports
                .iter()
                .filter(|d| !allowed.contains(&d.as_str()))
                .map(move |d| format!("{name} imports {d}"))
        })
        .collect();
    assert!(
        violations.is_empty(),
        "imports docs/architecture.md does not allow: {violations:?}"
    );
}

#[test]
fn contracts_and_their_tests_import_no_attester_crate() {
    let ws = workspace();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let attester = root.join("attester").canonicalize().expect("attester/");
    let contracts: Vec<&String> = ws
        .iter()
        .filter(|(_, m)| !m.dir.starts_with(&attester))
        .map(|(n, _)| n)
        .collect();
    assert!(
        contracts.iter().any(|n| *n == "assay-registry"),
        "the registry is outside attester/: {contracts:?}"
    );
    for name in contracts {
        let m = &ws[name];
        for dep in m.imports.iter().chain(&m.dev) {
            assert!(
                !ws[dep].dir.starts_with(&attester),
                "{name} (outside attester/) depends on the attester crate {dep}"
            );
        }
    }
}

#[test]
fn no_test_imports_a_crate_above_its_own() {
    let ws = workspace();
    // Everything a crate's normal and build dependencies reach.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for d in &ws[&n].imports {
                if seen.insert(d.clone()) {
                    todo.push(d.clone());
                }
            }
        }
        seen
    };
    for (name, m) in &ws {
        for dep in m.dev.iter().filter(|d| *d != name) {
            assert!(
                !reach(dep).contains(name),
                "{name}'s tests use {dep}, which depends on {name}"
            );
        }
    }
}

#[test]
fn the_core_reaches_no_io_crate() {
    let tree = cargo(&[
        "tree",
        "-p",
        "assay-core",
        "-e",
        "normal",
        "--prefix",
        "none",
        "--offline",
    ]);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        crates.contains(&"assay-core") && crates.contains(&"sha2"),
        "unexpected tree:\n{tree}"
    );
    let found: Vec<&&str> = IO_CRATES.iter().filter(|f| crates.contains(f)).collect();
    assert!(
        found.is_empty(),
        "I/O crates reachable from assay-core: {found:?}\n{tree}"
    );
}

#[test]
fn only_timestamp_now_reads_the_clock_in_the_core() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.clone()];
    let mut reads = Vec::new();
    let mut checked = 0;
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(
                std::fs::read_dir(&p)
                    .expect("readable")
                    .map(|e| e.expect("entry").path()),
            );
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("readable source");
        checked += 1;
        let clock_module = p.ends_with("time.rs");
        for (i, line) in text.lines().enumerate() {
            let reads_clock = ["SystemTime::now()", "Instant::now()", "Timestamp::now()"]
                .iter()
                .any(|c| line.contains(c));
            if reads_clock && !clock_module {
                reads.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
            }
            let io = ["std::fs", "std::net", "std::process", "std::env"]
                .iter()
                .any(|m| line.contains(m));
            if io {
                reads.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        checked > 10,
        "read only {checked} files under {}",
        src.display()
    );
    assert!(
        reads.is_empty(),
        "the core reads the clock or does I/O outside Timestamp::now:\n{}",
        reads.join("\n")
    );
}
