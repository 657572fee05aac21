//! Unit tests over the scripted chain: the order, every premise branch, the renderers.
use std::{collections::BTreeSet, time::Duration};

use assay_chain::{InvokeOutcome, ReadOutcome};
use stellar_xdr::ScVal;

use crate::{
    chain::WriteFault,
    checks::{i128_val, run_suite, Party, SuiteConfig, ISSUER_SENTINEL},
    model::{Report, Status, CHECKS, MEMBERS},
    render,
    scripted::{party, Flaws, ScriptedChain},
};

use Status::*;

mod authorization_and_events;
mod discovery;
mod event_forms;

pub(super) fn config(holder: Party, spender: Party) -> SuiteConfig {
    let mut c = SuiteConfig::live(holder, spender, None);
    c.expiry_poll = Duration::from_millis(1);
    c.expiry_wait = Duration::from_millis(10);
    c
}

pub(super) fn run(chain: &mut ScriptedChain, config: &SuiteConfig) -> Report {
    Report {
        contract_id: "CTEST".into(),
        network: "scripted".into(),
        ran_at: "2026-01-01T00:00:00Z".into(),
        results: run_suite(chain, config),
        fork: None,
    }
}

pub(super) fn setup(balance: i128) -> (ScriptedChain, SuiteConfig) {
    let (h, s) = (party(1), party(2));
    (ScriptedChain::new(&h, &s, balance), config(h, s))
}

pub(super) fn row<'a>(report: &'a Report, id: &str) -> &'a crate::CheckResult {
    report
        .results
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

#[test]
fn order_is_reads_then_negatives_then_writes_then_expiry() {
    let ids: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "sep41-decimals",
            "sep41-balance",
            "sep41-allowance",
            "sep41-name",
            "sep41-symbol",
            "sep41-transfer_from-unauthorized",
            "sep41-transfer-zero-amount",
            "sep41-transfer-self",
            "sep41-transfer-negative-amount",
            "sep41-transfer-over-balance",
            "sep41-transfer",
            "sep41-approve",
            "sep41-transfer_from",
            "sep41-burn",
            "sep41-burn_from",
            "sep41-transfer_from-expired",
            "sep41-transfer-auth",
            "sep41-transfer_from-auth",
            "sep41-approve-auth",
            "sep41-burn-auth",
            "sep41-burn_from-auth",
            "sep41-events-transfer",
            "sep41-events-approve",
            "sep41-events-burn",
            "sep41-approve-past-expiry",
            "sep41-events-mint",
            "sep41-events-clawback",
        ]
    );
    // The nine that observe authorization and events come after the sixteen, which keep their order;
    // the two that judge an exercised power's event come last.
    assert!(CHECKS[16..]
        .iter()
        .all(|c| c.layer != crate::Layer::Interface));
    let pos = |id: &str| ids.iter().position(|i| *i == id).unwrap();
    // Unauthorized runs before approve, which would grant the allowance whose absence it needs.
    assert!(pos("sep41-transfer_from-unauthorized") < pos("sep41-approve"));
    // Over-balance is the most destructive negative check and runs last of them, before spending.
    assert!(pos("sep41-transfer-over-balance") < pos("sep41-transfer"));
    assert_eq!(
        CHECKS
            .iter()
            .filter(|c| c.layer == crate::Layer::Interface)
            .count(),
        3
    );
    let members: BTreeSet<&str> = (CHECKS.iter().map(|c| c.member))
        .filter(|m| !m.is_empty())
        .collect();
    assert_eq!(members, MEMBERS.iter().copied().collect());
    // Only the power-event rows name no member: SEP-41 names no mint or clawback function.
    let unnamed: Vec<&str> = (CHECKS.iter().filter(|c| c.member.is_empty()))
        .map(|c| c.id)
        .collect();
    assert_eq!(unnamed, crate::model::POWER_EVENT_CHECKS);
}

#[test]
fn conformant_token_passes_all_twenty_five_and_spends_four_units() {
    let (mut chain, cfg) = setup(5);
    let report = run(&mut chain, &cfg);
    for r in &report.results {
        let expected = if r.no_power_observed() { Skipped } else { Pass };
        assert_eq!(r.status, expected, "{}: {}", r.id, r.actual);
    }
    assert_eq!(
        row(&report, "sep41-events-clawback").actual,
        "no clawback power observed"
    );
    // No power to judge is not an unassessed row: the exit code stays 0.
    assert_eq!(report.exit_code(), 0);
    assert_eq!(
        chain.balances[&chain.holder.clone()],
        1,
        "four units spent, one left"
    );
    assert_eq!(
        row(&report, "sep41-transfer_from").actual,
        "holder -1, recipient +1, allowance -1"
    );
    assert_eq!(
        row(&report, "sep41-burn_from").actual,
        "holder -1, spender 0, allowance -1"
    );
    assert_eq!(
        row(&report, "sep41-approve").actual,
        "allowance 2 after approving 2 over 1"
    );
    assert!(row(&report, "sep41-transfer").evidence.tx_hash.is_some());
    assert!(row(&report, "sep41-transfer_from-unauthorized")
        .evidence
        .error
        .as_deref()
        .unwrap()
        .contains("HostError"));
}

#[test]
fn holder_funded_with_four_reaches_expiry_empty() {
    let (mut chain, cfg) = setup(4);
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-burn_from"), Some(Pass));
    let expired = row(&report, "sep41-transfer_from-expired");
    assert_eq!(expired.status, Unverifiable);
    assert!(expired.actual.contains("holds 0"), "{}", expired.actual);
}

#[test]
fn vulnerable_token_matches_the_reference_run() {
    let (mut chain, cfg) = setup(1000);
    chain.flaws = Flaws {
        vulnerable_transfer: true,
        ignore_expiry: true,
        ..Flaws::default()
    };
    let report = run(&mut chain, &cfg);
    let expect = [
        ("sep41-decimals", Pass),
        ("sep41-balance", Pass),
        ("sep41-allowance", Pass),
        ("sep41-name", Pass),
        ("sep41-symbol", Pass),
        ("sep41-transfer_from-unauthorized", Pass),
        ("sep41-transfer-zero-amount", Pass),
        ("sep41-transfer-self", Fail),
        ("sep41-transfer-negative-amount", Fail),
        ("sep41-transfer-over-balance", Unverifiable),
        ("sep41-transfer", Unverifiable),
        ("sep41-approve", Pass),
        ("sep41-transfer_from", Unverifiable),
        ("sep41-burn", Pass),
        ("sep41-burn_from", Unverifiable),
        ("sep41-transfer_from-expired", Unverifiable),
    ];
    for (id, status) in expect {
        assert_eq!(
            report.status_of(id),
            Some(status),
            "{id}: {}",
            row(&report, id).actual
        );
    }
    assert!(row(&report, "sep41-transfer-self")
        .actual
        .contains("1000 → 1001"));
    assert!(row(&report, "sep41-transfer-negative-amount")
        .actual
        .contains("ran backwards"));
    assert!(row(&report, "sep41-transfer")
        .actual
        .contains("accounting unsound"));
    assert_eq!(report.exit_code(), 3);
}

#[test]
fn missing_key_is_unverifiable_and_names_the_fix() {
    let (h, s) = (
        Party {
            can_sign: false,
            ..party(1)
        },
        party(2),
    );
    let mut chain = ScriptedChain::new(&h, &s, 5);
    let report = run(&mut chain, &config(h, s));
    let self_row = row(&report, "sep41-transfer-self");
    assert_eq!(self_row.status, Unverifiable);
    assert!(
        self_row.actual.contains("ASSAY_OWNER_SECRET"),
        "{}",
        self_row.actual
    );
    assert_eq!(report.status_of("sep41-burn"), Some(Unverifiable));
    assert_eq!(report.status_of("sep41-balance"), Some(Pass));
    assert!(!chain.writes.iter().any(|w| w == "transfer" || w == "burn"));
    assert_eq!(report.exit_code(), 2);
}

#[test]
fn empty_holder_is_unverifiable_not_fail() {
    let (mut chain, cfg) = setup(0);
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-transfer-self"), Some(Unverifiable));
    assert_eq!(report.status_of("sep41-transfer"), Some(Unverifiable));
    assert_eq!(report.status_of("sep41-burn"), Some(Unverifiable));
    // Zero moves nothing, so it needs no balance.
    assert_eq!(report.status_of("sep41-transfer-zero-amount"), Some(Pass));
    assert_eq!(report.summary().fail, 0);
}

#[test]
fn issuer_sentinel_withholds_a_verdict() {
    let (mut chain, cfg) = setup(ISSUER_SENTINEL);
    let report = run(&mut chain, &cfg);
    let balance = row(&report, "sep41-balance");
    assert_eq!(balance.status, Unverifiable);
    assert!(balance.actual.contains("i64::MAX"));
    assert_eq!(report.status_of("sep41-transfer"), Some(Unverifiable));
    assert_eq!(report.status_of("sep41-burn"), Some(Unverifiable));
}

#[test]
fn generated_probe_addresses_are_unverifiable() {
    let h = Party {
        generated: true,
        can_sign: false,
        ..party(1)
    };
    let s = Party {
        generated: true,
        can_sign: false,
        ..party(2)
    };
    let mut chain = ScriptedChain::new(&h, &s, 0);
    let report = run(&mut chain, &config(h, s));
    assert_eq!(report.status_of("sep41-balance"), Some(Unverifiable));
    assert_eq!(report.status_of("sep41-allowance"), Some(Unverifiable));
    let passed: Vec<&str> = (report.results.iter())
        .filter(|r| r.status == Pass)
        .map(|r| r.id)
        .collect();
    assert_eq!(
        passed,
        [
            "sep41-decimals",
            "sep41-name",
            "sep41-symbol",
            // Simulations of approve need neither keys nor funds: keyless runs still judge them.
            "sep41-approve-auth",
            "sep41-events-approve",
            "sep41-approve-past-expiry",
        ],
    );
    assert_eq!(report.exit_code(), 2);

    // A generated recipient with a signing holder: movers refuse to send units to it.
    let h = party(1);
    let s = Party {
        generated: true,
        can_sign: false,
        ..party(2)
    };
    let mut chain = ScriptedChain::new(&h, &s, 5);
    let report = run(&mut chain, &config(h, s));
    let transfer = row(&report, "sep41-transfer");
    assert_eq!(transfer.status, Unverifiable);
    assert!(
        transfer.actual.contains("generated probe"),
        "{}",
        transfer.actual
    );
    assert_eq!(
        report.status_of("sep41-transfer-over-balance"),
        Some(Unverifiable)
    );
    assert_eq!(report.status_of("sep41-transfer-zero-amount"), Some(Pass));
    // A non-zero balance on a generated holder is still evidence.
    let h = Party {
        generated: true,
        ..party(1)
    };
    let mut chain = ScriptedChain::new(&h, &party(2), 3);
    let report = run(&mut chain, &config(h, party(2)));
    assert_eq!(report.status_of("sep41-balance"), Some(Pass));
}

#[test]
fn unreadable_balance_is_unverifiable() {
    for answer in [
        Ok(ReadOutcome::Archived),
        Err(crate::NoAnswer::NetworkClient("connection refused".into())),
    ] {
        let (mut chain, cfg) = setup(5);
        let holder = chain.holder.clone();
        chain.read_script.insert(("balance".into(), holder), answer);
        let report = run(&mut chain, &cfg);
        assert_eq!(report.status_of("sep41-balance"), Some(Unverifiable));
        assert_eq!(report.status_of("sep41-transfer"), Some(Unverifiable));
        assert_eq!(report.summary().fail, 0);
    }
}

#[test]
fn trustline_trap_is_unverifiable_but_other_traps_are_defective() {
    let (mut chain, cfg) = setup(5);
    let spender = chain.spender.clone();
    chain.read_script.insert(
        ("balance".into(), spender.clone()),
        Ok(ReadOutcome::Trapped(
            "HostError: Error(Contract, #13)\n data:[\"trustline entry is missing for account\", G…]".into(),
        )),
    );
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-transfer"), Some(Unverifiable));
    assert_eq!(report.summary().fail, 0);

    let (mut chain, cfg) = setup(5);
    chain.read_script.insert(
        ("balance".into(), spender),
        Ok(ReadOutcome::Trapped(
            "HostError: Error(WasmVm, InvalidAction)".into(),
        )),
    );
    let report = run(&mut chain, &cfg);
    // The same defective read FAILs wherever it is read: one contract, one answer.
    assert_eq!(report.status_of("sep41-transfer"), Some(Fail));
    assert_eq!(report.status_of("sep41-transfer-zero-amount"), Some(Fail));
}

#[test]
fn defective_reads_fail() {
    let (mut chain, cfg) = setup(5);
    let holder = chain.holder.clone();
    chain.read_script.insert(
        ("balance".into(), holder),
        Ok(ReadOutcome::Value(ScVal::U32(5))),
    );
    chain.read_script.insert(
        ("decimals".into(), String::new()),
        Ok(ReadOutcome::Value(i128_val(7))),
    );
    chain.read_script.insert(
        ("name".into(), String::new()),
        Ok(ReadOutcome::Trapped(
            "HostError: Error(Contract, #9)".into(),
        )),
    );
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-balance"), Some(Fail));
    assert!(row(&report, "sep41-balance").actual.contains("not an i128"));
    assert_eq!(report.status_of("sep41-decimals"), Some(Fail));
    assert_eq!(report.status_of("sep41-name"), Some(Fail));
    assert_eq!(report.status_of("sep41-burn"), Some(Fail));
}

#[test]
fn first_negative_fails_and_later_checks_report_unsound_accounting() {
    let (mut chain, cfg) = setup(5);
    let spender = chain.spender.clone();
    chain.balances.insert(spender, -3);
    let report = run(&mut chain, &cfg);
    // The first check to read the spender's balance meets the negative and FAILs.
    let first = row(&report, "sep41-transfer_from-unauthorized");
    assert_eq!(first.status, Fail, "{}", first.actual);
    assert!(first.actual.contains("-3"));
    let later = row(&report, "sep41-transfer");
    assert_eq!(later.status, Unverifiable);
    assert!(later.actual.contains("read -3 earlier"), "{}", later.actual);
    // Checks that never read the spender's balance still judge.
    assert_eq!(report.status_of("sep41-burn"), Some(Pass));
    assert_eq!(report.status_of("sep41-approve"), Some(Pass));
}

#[test]
fn refusals_pass_the_refusal_checks_and_fail_the_movers() {
    let (mut chain, cfg) = setup(5);
    chain
        .write_script
        .insert("burn".into(), Ok(ScriptedChain::refuse_for_test("no")));
    let report = run(&mut chain, &cfg);
    assert_eq!(
        report.status_of("sep41-transfer-negative-amount"),
        Some(Pass)
    );
    assert_eq!(
        row(&report, "sep41-transfer-over-balance").actual,
        "refused 6 against balance 5"
    );
    let burn = row(&report, "sep41-burn");
    assert_eq!(burn.status, Fail);
    assert!(burn.evidence.error.is_some());
}

#[test]
fn accepted_and_moved_names_the_bug_direction() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.vulnerable_transfer = true;
    let report = run(&mut chain, &cfg);
    let negative = row(&report, "sep41-transfer-negative-amount");
    assert_eq!(negative.status, Fail);
    assert!(
        negative.actual.contains("holder +1, recipient -1"),
        "{}",
        negative.actual
    );
    assert!(negative.evidence.tx_hash.is_some());
}

#[test]
fn item5_balance_of_i128_min_after_a_negative_transfer_fails_without_panicking() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.negative_transfer_to_min = true;
    let report = run(&mut chain, &cfg);
    let negative = row(&report, "sep41-transfer-negative-amount");
    assert_eq!(negative.status, Fail, "{}", negative.actual);
    assert!(
        negative.actual.contains("by more than an i128 holds"),
        "{}",
        negative.actual
    );
    // The holder's accounting is unsound from then on: later movers cannot judge it.
    assert_eq!(report.status_of("sep41-transfer"), Some(Unverifiable));
}

#[test]
fn accepted_and_held_passes_the_invariance_checks() {
    let (mut chain, cfg) = setup(5);
    let report = run(&mut chain, &cfg);
    assert_eq!(
        row(&report, "sep41-transfer-zero-amount").actual,
        "accepted; balances held at 5 and 0"
    );
    assert_eq!(
        row(&report, "sep41-transfer-self").actual,
        "accepted; balance held at 5"
    );
}

#[test]
fn unauthorized_spend_accepted_fails_and_standing_allowance_is_unverifiable() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.ignore_allowance = true;
    let report = run(&mut chain, &cfg);
    assert_eq!(
        report.status_of("sep41-transfer_from-unauthorized"),
        Some(Fail)
    );

    let (mut chain, cfg) = setup(5);
    chain.allowance = (3, 10_000);
    let report = run(&mut chain, &cfg);
    assert_eq!(
        report.status_of("sep41-transfer_from-unauthorized"),
        Some(Unverifiable)
    );
    // A standing allowance is consumed, never overwritten... until approve overwrites it to 1.
    assert_eq!(
        row(&report, "sep41-approve").actual,
        "allowance 1 after approving 1 over 3"
    );
}

#[test]
fn accumulating_approve_fails_on_the_second_approval() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.accumulate = true;
    let report = run(&mut chain, &cfg);
    let approve = row(&report, "sep41-approve");
    assert_eq!(approve.status, Fail);
    assert!(approve
        .actual
        .contains("allowance 3 after approving 2 over 1"));
}

#[test]
fn archived_entry_is_unverifiable_and_harness_faults_are_skipped() {
    let (mut chain, cfg) = setup(5);
    chain.write_script.insert(
        "approve".into(),
        Ok(InvokeOutcome::Archived(
            "INVOKE_HOST_FUNCTION_ENTRY_ARCHIVED".into(),
        )),
    );
    chain
        .write_script
        .insert("burn".into(), Err(WriteFault::NoAnswer("RPC down".into())));
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-approve"), Some(Unverifiable));
    assert_eq!(
        report.status_of("sep41-transfer_from-expired"),
        Some(Unverifiable)
    );
    assert!(row(&report, "sep41-transfer_from-expired")
        .evidence
        .error
        .as_deref()
        .unwrap()
        .contains("ARCHIVED"));
    assert_eq!(report.status_of("sep41-burn"), Some(Skipped));
    assert_eq!(report.exit_code(), 2);
}

#[test]
fn expiry_waits_for_the_ledger_and_is_unverifiable_when_it_stalls() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.ignore_expiry = true;
    let report = run(&mut chain, &cfg);
    let expired = row(&report, "sep41-transfer_from-expired");
    assert_eq!(expired.status, Fail);
    assert!(expired.actual.contains("expired at ledger"));
    assert!(expired.evidence.granted.is_some());

    let (mut chain, cfg) = setup(5);
    chain.advances = false;
    let report = run(&mut chain, &cfg);
    let expired = row(&report, "sep41-transfer_from-expired");
    assert_eq!(expired.status, Unverifiable);
    assert!(
        expired.actual.contains("did not pass ledger"),
        "{}",
        expired.actual
    );
}

#[test]
fn undeclared_members_are_not_implemented_and_exit_one() {
    let (h, s) = (party(1), party(2));
    let mut chain = ScriptedChain::new(&h, &s, 5);
    let declared: BTreeSet<String> = MEMBERS
        .iter()
        .filter(|m| **m != "burn_from")
        .map(|m| m.to_string())
        .collect();
    let mut cfg = config(h, s);
    cfg.declared = Some(declared);
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-burn_from"), Some(NotImplemented));
    assert_eq!(report.status_of("sep41-burn"), Some(Pass));
    assert_eq!(report.exit_code(), 3);
}

#[test]
fn exit_code_for_nothing_ran_is_two() {
    let report = Report {
        contract_id: "C".into(),
        network: "n".into(),
        ran_at: "t".into(),
        results: vec![],
        fork: None,
    };
    assert_eq!(report.exit_code(), 2);
}

#[test]
fn renderers_show_rows_expected_lines_and_versioned_json() {
    let (mut chain, cfg) = setup(1000);
    chain.flaws.vulnerable_transfer = true;
    let report = run(&mut chain, &cfg);
    let text = render::text(&report);
    assert!(text.starts_with("SEP-41 Conformance — CTEST\n\n"));
    assert!(text.contains("  ✗ sep41-transfer-self"));
    assert!(
        text.contains("      expected: accepted or refused, with the holder's balance unchanged")
    );
    assert!(text.contains("by layer: interface 3/3 pass · behavior "));
    assert!(text.contains(" · authorization 5/5 pass · events 3/5 pass"));
    let md = render::markdown(&report);
    assert!(md.starts_with("# SEP-41 Conformance Report"));
    assert!(md.contains("**Violations found"));
    assert!(md.contains("## Layer: interface (3/3 pass)"));
    assert!(md.contains("## Layer: authorization (5/5 pass)"));
    assert!(md.contains("## Layer: events (3/5 pass)"));
    assert!(md.contains("### `sep41-transfer-self`"));
    let json = render::json(&report);
    assert_eq!(json["schema"], render::JSON_SCHEMA);
    assert_eq!(json["exitCode"], 3);
    assert_eq!(json["summary"]["total"], 27);
    assert_eq!(json["results"][7]["id"], "sep41-transfer-self");
    assert_eq!(json["results"][7]["status"], "FAIL");
    assert_eq!(json["results"][7]["evidence"]["before"]["holder"], "1000");
    assert!(json["results"][7]["evidence"]["txHash"].is_string());
}

#[test]
fn a_token_refusing_the_suites_spender_withholds_verdicts_and_fails_nothing() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.refuse_spender = true;
    let report = run(&mut chain, &cfg);
    let failed: Vec<String> = (report.results.iter())
        .filter(|r| r.status == Fail)
        .map(|r| format!("{}: {}", r.id, r.actual))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // A write that needs the spender: refused, yet the same call runs with the holder in its place.
    for id in ["sep41-transfer", "sep41-approve"] {
        let r = row(&report, id);
        assert_eq!(r.status, Unverifiable, "{id}: {}", r.actual);
        assert!(
            r.actual.contains("does not accept the spender"),
            "{id}: {}",
            r.actual
        );
    }
    // A check that expects a refusal: the valid counterpart is refused too, so it shows nothing.
    for id in [
        "sep41-transfer-negative-amount",
        "sep41-transfer-over-balance",
    ] {
        let r = row(&report, id);
        assert_eq!(r.status, Unverifiable, "{id}: {}", r.actual);
        assert!(
            r.actual.contains("also refuses a valid 1-unit transfer"),
            "{id}: {}",
            r.actual
        );
    }
    // The holder's own writes are still judged.
    assert_eq!(report.status_of("sep41-burn"), Some(Pass));
    assert_eq!(report.status_of("sep41-transfer-self"), Some(Pass));
}

#[test]
fn a_refusal_of_a_never_credited_holder_is_unverifiable_and_of_a_funded_one_fails() {
    let (mut chain, cfg) = setup(0);
    chain.flaws.refuse_holder = true;
    let report = run(&mut chain, &cfg);
    let approve = row(&report, "sep41-approve");
    assert_eq!(approve.status, Unverifiable, "{}", approve.actual);
    assert!(
        approve.actual.contains("never credited"),
        "{}",
        approve.actual
    );

    // The same refusal of a holder the token did credit is the token's answer: FAIL.
    let (mut chain, cfg) = setup(5);
    chain.flaws.refuse_holder = true;
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-approve"), Some(Fail));
    assert_eq!(report.status_of("sep41-burn"), Some(Fail));
}
