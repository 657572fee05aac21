//! What a consumer's read would cost if consumers called a smaller module than the registry (issue
//! #27, item 4: a verdict store written by a governance contract), measured rather than estimated.
//!
//!     cargo run -p assay-gate-example --example split_probe
//!
//! The host charges instantiation per import and per export of the module called, so the probe
//! keeps the registry's storage and logic and changes only the module: it attests a custom token
//! through the built registry, then replaces the registry's code with the same `.wasm` stripped of
//! every export but the ones a variant names, after binaryen's `wasm-opt -Oz` (the build's own
//! optimiser) has dropped every function and host import no remaining export reaches. Each variant
//! answers the same reads on the same storage; the figures are `env.cost_estimate()`'s, beside the
//! seeds' registry's `get_safety` (328,798) and the 0.75× target. Needs `wasm-opt` on PATH (Debian:
//! binaryen, which `scripts/build-wasm.sh` installs when it can).
use std::process::Command;

use assay_registry::{
    testutils::{
        build_wasm, live_code, new_env_mocking_all_auths, read_wasm, register_registry,
        registry_wasm, upgrade_code, Build,
    },
    SafetyRegistryClient,
};
use soroban_sdk::{
    testutils::{Address as _, Ledger as _},
    xdr::ContractCostType,
    Address, BytesN, Env,
};

/// The seeds' four-function registry's `get_safety` (issue #27, item 4's baseline).
const SEED_GET_SAFETY: f64 = 328_798.0;
/// Issue #27, item 4's target, as a fraction of [`SEED_GET_SAFETY`].
const TARGET: f64 = 0.75;

/// Every read of interface 5 a consumer calls.
const READS: [&str; 9] = [
    "get_safety",
    "get_safety_by",
    "is_safe",
    "is_safe_masked",
    "is_safe_quorum",
    "assess",
    "assess_many",
    "get_revocation",
    "version",
];

/// `wasm` with its export section holding only `memory` and the exports named in `keep`.
fn keep_exports(wasm: &[u8], keep: &[&str]) -> Vec<u8> {
    assay_spec_shake::retain_exports(wasm, |name, _| name == "memory" || keep.contains(&name))
        .expect("the registry's .wasm is well formed")
        .0
}

/// `wasm` stripped to `keep`, then run through `wasm-opt -Oz` as `scripts/build-wasm.sh` runs it.
fn variant(wasm: &[u8], keep: &[&str]) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("assay-split-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let (input, output) = (dir.join("in.wasm"), dir.join("out.wasm"));
    std::fs::write(&input, keep_exports(wasm, keep)).expect("write the stripped module");
    let status = Command::new("wasm-opt")
        .args([
            "-Oz",
            "--converge",
            "--mvp-features",
            "--enable-mutable-globals",
        ])
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .status()
        .unwrap_or_else(|e| {
            panic!("wasm-opt (binaryen) is needed to drop unreachable code and imports: {e}")
        });
    assert!(status.success(), "wasm-opt failed on the stripped registry");
    let optimised = std::fs::read(&output).expect("read wasm-opt's output");
    let _ = std::fs::remove_dir_all(&dir);
    optimised
}

/// Instructions of `call`, and how many imports and exports the module it instantiated has.
fn measure(env: &Env, call: impl FnOnce()) -> (i64, u64, u64) {
    call();
    let budget = env.cost_estimate().budget();
    let count = |t: ContractCostType| budget.tracker(t).inputs.unwrap_or(0);
    (
        env.cost_estimate().resources().instructions,
        count(ContractCostType::InstantiateWasmImports),
        count(ContractCostType::InstantiateWasmExports),
    )
}

fn main() {
    if let Err(e) = build_wasm(&["assay-registry", "upgradable-token"]) {
        panic!("{e}");
    }
    let registry_wasm = registry_wasm().to_vec();
    let env = new_env_mocking_all_auths();
    env.ledger().set_timestamp(1_786_771_651);
    let admin = Address::generate(&env);
    let id = register_registry(&env, Build::Wasm, &admin);
    let registry = SafetyRegistryClient::new(&env, &id);
    let attester = Address::generate(&env);
    registry.add_attester(&attester);
    let args = (
        admin.clone(),
        7u32,
        soroban_sdk::String::from_str(&env, "Custom"),
        soroban_sdk::String::from_str(&env, "CUS"),
    );
    let token = env.register(read_wasm("upgradable_token").as_slice(), args);
    let hash = BytesN::from_array(&env, &[7; 32]);
    registry.attest(&attester, &token, &3, &512, &hash, &live_code(&token));

    let mut reads_and_constructor = READS.to_vec();
    reads_and_constructor.push("__constructor");
    let mut reads_and_a_write = reads_and_constructor.clone();
    reads_and_a_write.push("attest");
    let variants: [(&str, Option<&[&str]>); 5] = [
        ("today's registry", None),
        ("the reads + constructor", Some(&reads_and_constructor)),
        (
            "the reads + constructor + one write",
            Some(&reads_and_a_write),
        ),
        (
            "get_safety + constructor",
            Some(&["get_safety", "__constructor"]),
        ),
        ("get_safety alone", Some(&["get_safety"])),
    ];
    println!(
        "A consumer's read of a custom token, by the module it calls (one Env, same storage)\n"
    );
    println!(
        "{:<38} {:>7} {:>7} {:>11} {:>7} {:>11} {:>11}",
        "module", "imports", "exports", "get_safety", "ratio", "is_safe", "assess"
    );
    for (name, keep) in variants {
        if let Some(keep) = keep {
            upgrade_code(&env, &id, &variant(&registry_wasm, keep));
        }
        let (get_safety, imports, exports) = measure(&env, || {
            registry.get_safety(&token);
        });
        let has = |f: &str| keep.is_none_or(|k| k.contains(&f));
        let other = |f: &str, call: &dyn Fn()| {
            if has(f) {
                format!("{}", measure(&env, call).0)
            } else {
                "-".to_string()
            }
        };
        let is_safe = other("is_safe", &|| {
            registry.is_safe(&token, &3, &86_400);
        });
        let assess = other("assess", &|| {
            registry.assess(&token, &3, &6, &86_400);
        });
        let ratio = get_safety as f64 / SEED_GET_SAFETY;
        println!(
            "{name:<38} {imports:>7} {exports:>7} {get_safety:>11} {ratio:>6.2}x {is_safe:>11} {assess:>11}  (<= {TARGET}x: {})",
            if ratio <= TARGET { "met" } else { "NOT met" }
        );
    }
    println!(
        "\nThe instantiation charge is per import and per export of the module called (the host's \
         InstantiateWasmImports / InstantiateWasmExports); a store keeping every read of interface 5 \
         still instantiates the imports its reads need."
    );
}
