//! A verdict bound to the code it judged, end to end on the local network: `assay attest C…`'s
//! library path attests a custom token, the token's admin replaces its code, and the next deposit
//! into a gate is refused — in the next transaction, with no `watch` running — because the
//! registry compares, at read time, the WASM the verdict judged with the WASM that is live.

use crate::common;

use std::time::SystemTime;

use assay_attest::attest::{execute, plan, ChainSubmitter, Outcome, Write};
use assay_attest::registry::{self, CodeBinding};
use assay_attest::registry::{read_code_changed, read_safety};
use assay_attest::targets::{evaluate_targets, resolve};
use assay_core::Freshness;
use common::*;
use stellar_xdr::{ScMap, ScMapEntry, ScSymbol, ScVal};

/// The gate's error for a token whose code changed since it was attested.
const GATE_CODE_CHANGED: u32 = 8;

fn map_entry(key: &str, val: ScVal) -> ScMapEntry {
    ScMapEntry {
        key: ScVal::Symbol(ScSymbol(key.try_into().unwrap())),
        val,
    }
}

/// A gate that tolerates replaceable code (ceiling high; freezing and confiscation still
/// forbidden), so that an upgradable token is admitted until its code is replaced.
fn tolerant_gate(w: &World) -> [u8; 32] {
    let policy = ScVal::Map(Some(ScMap(
        vec![
            map_entry("forbidden_mask", ScVal::U32(2 | 4 | 1024 | 2048)),
            map_entry("max_age_secs", ScVal::U64(86_400)),
            map_entry("max_severity", ScVal::U32(3)),
        ]
        .try_into()
        .unwrap(),
    )));
    w.deploy(
        "assay_gate_example",
        41,
        vec![registry::contract_val(w.registry), policy],
    )
}

#[test]
fn an_upgraded_token_is_refused_by_the_gate_in_the_next_transaction_with_no_watch() {
    let w = World::start(&[]);
    let token = w.deploy_token("upgradable_token", 42);
    // The holder gets some of the supply the admin holds.
    let amount = ScVal::I128(stellar_xdr::Int128Parts { hi: 0, lo: 1_000 });
    let transfer = registry::call(
        token,
        "transfer",
        vec![
            registry::account_val(w.admin.public_key()),
            registry::account_val(w.holder.public_key()),
            amount,
        ],
    );
    w.invoker(&w.admin)
        .invoke(&transfer)
        .expect("fund the holder");

    // `assay attest C…`: read the token's code from the network, judge it, bind, write.
    let id = format!("{}", stellar_strkey::Contract(token));
    let target = resolve(&id, &w.spec.passphrase, &w.spec.passphrase).unwrap();
    let report = evaluate_targets(
        &w.settings(&[]),
        &w.spec.rpc_url,
        &w.spec.passphrase,
        std::slice::from_ref(&target),
        None,
    )
    .unwrap()
    .remove(0)
    .report
    .unwrap();
    let judged = CodeBinding::judged_by(&report).expect("the report names the WASM judged");
    let CodeBinding::Wasm(_) = judged else {
        panic!("a custom token binds its WASM hash: {judged:?}")
    };
    let now = assay_scan::scanner::timestamp(SystemTime::now());
    let (planned, slots) = plan(&[target], vec![Ok(report)], now, Freshness::default());
    assert_eq!(planned[0].attestation.code, judged);
    let mut submitter = ChainSubmitter {
        invoker: w.invoker(&w.attester),
        registry: w.registry,
        confirm_read_back: true,
    };
    let written = execute(&planned, slots, &mut submitter, 50, false).remove(0);
    assert!(
        matches!(written, Outcome::Written(Write { severity: 3, .. })),
        "{written:?}"
    );

    assert!(
        !read_code_changed(&w.rpc, w.registry, token).unwrap(),
        "the binding holds"
    );
    let gate = tolerant_gate(&w);
    assert_eq!(
        w.deposit_into(gate, token, 10),
        Ok(()),
        "admitted while the code is the one judged"
    );

    // The admin replaces the code; no watcher runs.
    let replacement = w.upload("conformant_token");
    w.upgrade_token(token, replacement);
    match w.deposit_into(gate, token, 10) {
        Err(Ok(code)) => assert_eq!(code, GATE_CODE_CHANGED, "CodeChanged"),
        other => panic!("the next deposit must be refused as CodeChanged: {other:?}"),
    }
    assert_eq!(w.gate_check(token), Err(GATE_CODE_CHANGED));
    assert_eq!(
        read_safety(&w.rpc, w.registry, token).unwrap(),
        None,
        "get_safety: no verdict about this code"
    );
    // What `assay verify` reports as code_changed.
    assert!(read_code_changed(&w.rpc, w.registry, token).unwrap());

    // A write still bound to the replaced code is refused by the registry (CodeMismatch, 16).
    let stale = registry::Attestation {
        asset: token,
        severity: 3,
        flags: 512,
        evidence_hash: [1; 32],
        code: judged,
    };
    let f = registry::attest_many(w.registry, w.attester.public_key(), &[stale]);
    let refused = w.invoker(&w.attester).simulate(&f).unwrap_err().to_string();
    assert!(refused.contains("Error(Contract, #16)"), "{refused}");
}
