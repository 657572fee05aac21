//! Issue #27's acceptance, through the binary: `assay attest C…` judges a custom token from its code
//! on the local network and binds the verdict to that code; the token's admin replaces the code; the
//! example gate refuses the next deposit with `CodeChanged` while ledger closing is held, so the
//! refusal rests on the ledger the upgrade left and no later write; no `watch` runs. `assay verify C…`
//! then reports `code_changed` (exit 3).

use crate::world;

use assay_attest::registry::read_safety;
use world::*;

use crate::common::assay_on_world;

/// The example gate's error for a token whose code changed since it was attested.
const GATE_CODE_CHANGED: u32 = 8;

#[test]
fn assay_attest_binds_the_code_and_the_gate_refuses_an_upgraded_token_with_no_watch() {
    let w = World::start(&[]);
    let ca = w.ca();
    // The world's attester key (seed 12), given as the environment gives it, never on argv.
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]));
    let token = w.deploy_token("upgradable_token", 50);
    w.fund_holder(token);
    let id = format!("{}", stellar_strkey::Contract(token));

    // `assay attest C…`: read from the network, judged high for its replaceable code, bound, written.
    let (code, text) = assay_on_world(&w, &ca, &["attest", &id, "--output", "json"], &secret);
    assert_eq!(code, Some(0), "{text}");
    let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(line["status"], "written", "{line}");
    let written = read_safety(&w.rpc, w.registry, token)
        .unwrap()
        .unwrap_or_else(|| panic!("written: {text}"));
    assert_eq!((written.severity, written.flags), (3, 512), "{text}");
    let gate = w.tolerant_gate(51);
    assert_eq!(
        w.deposit_into(gate, token, 10),
        Ok(()),
        "admitted as judged"
    );

    // The admin replaces the code. Ledger closing is then held: what the gate answers next rests on
    // the ledger the upgrade left, with no later write by anyone (and no watcher running).
    let replacement = w.upload("conformant_token");
    let upgraded_in = w.upgrade_token(token, replacement);
    w.net.set_closing_paused(true);
    let held_at = w.net.latest_ledger();
    assert!(held_at >= upgraded_in);
    match w.deposit_into(gate, token, 10) {
        Err(Ok(code)) => assert_eq!(code, GATE_CODE_CHANGED, "CodeChanged"),
        other => panic!("the next deposit must be refused as CodeChanged: {other:?}"),
    }
    assert_eq!(w.gate_check(token), Err(GATE_CODE_CHANGED));
    assert_eq!(
        read_safety(&w.rpc, w.registry, token).unwrap(),
        None,
        "get_safety: no verdict about the code that runs"
    );
    assert_eq!(w.net.latest_ledger(), held_at, "no ledger closed meanwhile");

    // `assay verify C…` says why: the verdict's code binding no longer holds (exit 3).
    let (code, text) = assay_on_world(&w, &ca, &["verify", &id, "--output", "json"], &secret);
    assert_eq!(code, Some(3), "{text}");
    let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(line["verdict"], "code_changed", "{line}");
    w.net.set_closing_paused(false);
}
