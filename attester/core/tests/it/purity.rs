//! assay-core must not be able to perform I/O: no HTTP, RPC, async runtime, database or socket crate may be
//! reachable from it in its normal dependency graph.

use std::process::Command;

const FORBIDDEN: [&str; 16] = [
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

#[test]
fn no_io_crate_is_reachable() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "assay-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        crates.contains(&"assay-core") && crates.contains(&"sha2"),
        "unexpected tree:\n{tree}"
    );
    let found: Vec<&&str> = FORBIDDEN.iter().filter(|f| crates.contains(f)).collect();
    assert!(
        found.is_empty(),
        "I/O crates reachable from assay-core: {found:?}\n{tree}"
    );
}
