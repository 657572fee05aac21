//! `assay verify` asks the registry's bound verdict store, which consumers read, as well as the
//! registry: against a registry bound to the loose-store fixture (a forged store that admits every
//! asset) it exits 3 and prints both answers, whatever the registry's own verdict; against the local
//! world's real store it says the store answers alike and runs the store this release builds.

use std::path::{Path, PathBuf};

use crate::common::{aqua_and_outage, assay_on_world, ensure_wasm, wasm_is_stale};
use crate::world::*;
use assay_attest::registry;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `target/wasm/NAME.wasm` when it is missing or older than its sources.
fn ensure_fixture(name: &str, package: &str, sources: &[&str]) {
    let root = root();
    let path = root.join(format!("target/wasm/{name}.wasm"));
    let sources: Vec<PathBuf> = sources.iter().map(|s| root.join(s)).collect();
    if wasm_is_stale(std::slice::from_ref(&path), &sources) {
        let status = std::process::Command::new(root.join("scripts/build-wasm.sh"))
            .arg(package)
            .status()
            .expect("run scripts/build-wasm.sh");
        assert!(status.success(), "scripts/build-wasm.sh {package} failed");
    }
}

#[test]
fn verify_exits_3_when_the_bound_store_answers_looser_than_the_registry() {
    ensure_wasm(&root());
    ensure_fixture(
        "loose_store",
        "loose-store",
        &["fixtures/loose-store", "contracts/registry-interface"],
    );
    let (mut w, ca, secret) = aqua_and_outage();
    let aqua = format!("AQUA-{AQUA}");
    let wasm_dir = root().join("target/wasm").display().to_string();
    let with_dir = |args: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a.extend(["--wasm-dir".to_string(), wasm_dir.clone()]);
        a
    };
    let run = |w: &World, args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assay_on_world(w, &ca, &args, &secret)
    };

    // The world's own store answers as its registry, and runs this release's store code.
    let (code, out) = run(&w, &with_dir(&["verify", &aqua]));
    assert_eq!(code, Some(4), "absent from both: {out}");
    let real_store = stellar_strkey::Contract(w.store).to_string();
    assert!(
        out.contains(&format!(
            "verdict store {real_store}: answers alike; runs the store this release builds"
        )),
        "{out}"
    );

    // A registry of its own (no notice, as on a local network), bound to the forged store.
    let forged_registry = w.deploy(
        "assay_registry",
        70,
        registry::constructor_args(w.admin.public_key(), 0),
    );
    let forged = w.deploy(
        "loose_store",
        71,
        vec![registry::contract_val(forged_registry)],
    );
    let bind = registry::call(
        forged_registry,
        "bind_verdict_store",
        vec![registry::contract_val(forged)],
    );
    w.invoker(&w.admin).invoke(&bind).unwrap();
    w.registry = forged_registry;
    let forged = stellar_strkey::Contract(forged).to_string();

    // The registry holds nothing (absent, 4), the store admits: 3, with both answers.
    let (code, out) = run(&w, &with_dir(&["verify", &aqua]));
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains(&format!(
            "verdict store {forged}: answers LOOSER than the registry (exit 3): get_safety: \
             registry none, store severity 0, flags 0, attested at "
        )) && out.contains("assess: registry NotAttested, store Safe(severity 0, flags 0)"),
        "{out}"
    );
    assert!(
        out.contains("NOT the store this release builds"),
        "its code is not the release's: {out}"
    );

    // JSON says the same, field by field.
    let (code, out) = run(&w, &with_dir(&["verify", &aqua, "--output", "json"]));
    assert_eq!(code, Some(3), "{out}");
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let store = &line["verdict_store"];
    assert_eq!(line["verdict"], "absent", "{line}");
    assert_eq!(store["contract"], forged.as_str(), "{line}");
    assert_eq!(store["looser"], true, "{line}");
    assert_eq!(store["agrees"], false, "{line}");
    assert_eq!(store["registry"]["get_safety"], "none", "{line}");
    assert_eq!(store["registry"]["assess"], "NotAttested", "{line}");
    assert_eq!(
        store["store"]["assess"], "Safe(severity 0, flags 0)",
        "{line}"
    );
    assert_eq!(store["code"]["status"], "differs", "{line}");

    // Without the release's store to compare with, the code check says so instead of passing.
    let missing = w.dir.path().join("no-wasm-here").display().to_string();
    let (code, out) = run(
        &w,
        &[
            "verify".to_string(),
            aqua.clone(),
            "--wasm-dir".into(),
            missing,
        ],
    );
    assert_eq!(code, Some(3), "still looser: {out}");
    assert!(out.contains("its code could not be checked: "), "{out}");
}
