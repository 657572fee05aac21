//! The nine checks after the sixteen, over the scripted chain: each one's PASS, FAIL and
//! UNVERIFIABLE, and a FAIL that shows what the simulation observed.
use assay_chain::scval::symbol;
use std::collections::BTreeSet;

use stellar_xdr::{ScMap, ScMapEntry, ScVal};

use super::{config, row, run, setup};
use crate::{
    chain::Simulation,
    checks::i128_val,
    model::{Report, Status, MEMBERS},
    scripted::{account, authorization, event, invocation, party, token, ScriptedChain},
    Party,
};
use Status::*;

/// The nine after the sixteen (their ids and order are pinned by the order test).
fn nine() -> impl Iterator<Item = &'static str> {
    crate::CHECKS[16..25].iter().map(|c| c.id)
}

fn addr(chain: &ScriptedChain, who: &str) -> ScVal {
    let text = if who == "holder" {
        &chain.holder
    } else {
        &chain.spender
    };
    ScVal::Address(assay_chain::parse_address(text).unwrap())
}

fn party_address(chain: &ScriptedChain, who: &str) -> stellar_xdr::ScAddress {
    match addr(chain, who) {
        ScVal::Address(a) => a,
        _ => unreachable!(),
    }
}

/// The holder's authorization of `transfer(holder, spender, amount)` with a native XLM transfer
/// of the holder's to a third party nested under it.
fn transfer_pulling_xlm(
    chain: &ScriptedChain,
    amount: i128,
) -> stellar_xdr::SorobanAuthorizationEntry {
    let (holder, spender) = (addr(chain, "holder"), addr(chain, "spender"));
    let pull = invocation(
        &account(77),
        "transfer",
        vec![holder.clone(), ScVal::Address(account(78)), i128_val(1)],
        vec![],
    );
    authorization(
        &party_address(chain, "holder"),
        &token(),
        "transfer",
        vec![holder, spender, i128_val(amount)],
        vec![pull],
    )
}

/// Runs the suite and asserts that of the nine exactly `id` has `status`, the others PASS.
fn only(chain: &mut ScriptedChain, cfg: &crate::SuiteConfig, id: &str, status: Status) -> Report {
    let report = run(chain, cfg);
    for check in nine() {
        let expected = if check == id { status } else { Pass };
        let r = row(&report, check);
        assert_eq!(r.status, expected, "{check}: {}", r.actual);
    }
    report
}

#[test]
fn a_conformant_token_passes_the_nine_with_readable_messages() {
    let (mut chain, cfg) = setup(5);
    let report = run(&mut chain, &cfg);
    for id in nine() {
        assert_eq!(
            report.status_of(id),
            Some(Pass),
            "{}",
            row(&report, id).actual
        );
    }
    assert_eq!(
        row(&report, "sep41-transfer-auth").actual,
        "refused with no authorization; asks the holder's authorization for exactly transfer, \
         nothing nested"
    );
    assert_eq!(
        row(&report, "sep41-transfer-auth").evidence.observed,
        ["holder authorizes token.transfer(holder, spender, 1)"]
    );
    assert_eq!(
        row(&report, "sep41-events-burn").actual,
        "token: topics [burn, holder] data 1"
    );
}

#[test]
fn transfer_accepted_with_no_authorization_fails_transfer_auth() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.accept_unauthorized = true;
    chain.auth_script.insert("transfer".into(), vec![]);
    let report = only(&mut chain, &cfg, "sep41-transfer-auth", Fail);
    let r = row(&report, "sep41-transfer-auth");
    assert!(r.actual.contains("nobody authorized"), "{}", r.actual);
    assert!(
        r.actual.contains("asks for no authorization at all"),
        "{}",
        r.actual
    );
}

#[test]
fn an_xlm_pull_nested_in_transfer_fails_transfer_auth_and_shows_the_tree() {
    let (mut chain, cfg) = setup(5);
    let asked = transfer_pulling_xlm(&chain, 1);
    chain.auth_script.insert("transfer".into(), vec![asked]);
    let report = only(&mut chain, &cfg, "sep41-transfer-auth", Fail);
    let r = row(&report, "sep41-transfer-auth");
    assert!(
        r.actual.contains("also covers 1 nested call"),
        "{}",
        r.actual
    );
    assert_eq!(r.evidence.observed.len(), 2);
    assert!(
        r.evidence.observed[1].starts_with("  ⤷ G"),
        "{:?}",
        r.evidence.observed
    );
    assert!(r.evidence.observed[1].contains(".transfer(holder, G"));
}

#[test]
fn transfer_auth_without_a_funded_holder_or_an_accepted_transfer_is_unverifiable() {
    let (mut chain, cfg) = setup(0);
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-transfer-auth"), Some(Unverifiable));
    assert_eq!(report.status_of("sep41-burn-auth"), Some(Unverifiable));
    assert_eq!(
        report.status_of("sep41-events-transfer"),
        Some(Unverifiable)
    );
    assert_eq!(report.status_of("sep41-events-burn"), Some(Unverifiable));

    let (mut chain, cfg) = setup(5);
    chain.simulate_script.insert(
        "transfer".into(),
        Ok(Simulation::Refused("HostError: Error(Contract, #3)".into())),
    );
    let report = run(&mut chain, &cfg);
    let r = row(&report, "sep41-transfer-auth");
    assert_eq!(r.status, Unverifiable);
    assert!(r.actual.contains("transfer was refused"), "{}", r.actual);
    assert_eq!(
        r.evidence.error.as_deref(),
        Some("HostError: Error(Contract, #3)")
    );
}

#[test]
fn transfer_from_asking_the_holder_fails_instead_of_or_as_well_as() {
    for with_spender in [false, true] {
        let (mut chain, cfg) = setup(5);
        let args = vec![
            addr(&chain, "spender"),
            addr(&chain, "holder"),
            addr(&chain, "spender"),
            i128_val(1),
        ];
        let mut auth = vec![authorization(
            &party_address(&chain, "holder"),
            &token(),
            "transfer_from",
            args.clone(),
            vec![],
        )];
        if with_spender {
            let spender = party_address(&chain, "spender");
            auth.push(authorization(
                &spender,
                &token(),
                "transfer_from",
                args,
                vec![],
            ));
        }
        chain.auth_script.insert("transfer_from".into(), auth);
        let report = only(&mut chain, &cfg, "sep41-transfer_from-auth", Fail);
        let actual = &row(&report, "sep41-transfer_from-auth").actual;
        let how = if with_spender {
            "asks for the authorization of holder as well as the spender's"
        } else {
            "asks for the authorization of holder instead of the spender's"
        };
        assert!(actual.starts_with(how), "{actual}");
    }
}

#[test]
fn transfer_from_auth_needs_an_allowance_it_can_grant() {
    let h = Party {
        can_sign: false,
        ..party(1)
    };
    let s = party(2);
    let mut chain = ScriptedChain::new(&h, &s, 5);
    let report = run(&mut chain, &config(h, s));
    for id in ["sep41-transfer_from-auth", "sep41-burn_from-auth"] {
        let r = row(&report, id);
        assert_eq!(r.status, Unverifiable, "{id}");
        assert!(r.actual.contains("ASSAY_OWNER_SECRET"), "{}", r.actual);
    }
    // Keyless runs never write: the allowance was neither granted nor spent.
    assert!(!chain.writes.iter().any(|w| w == "approve"));
}

#[test]
fn approve_authorizing_another_invocation_fails_approve_auth() {
    let (mut chain, cfg) = setup(5);
    let other_args = vec![
        addr(&chain, "holder"),
        addr(&chain, "spender"),
        i128_val(1_000_000),
        ScVal::U32(1),
    ];
    chain.auth_script.insert(
        "approve".into(),
        vec![authorization(
            &party_address(&chain, "holder"),
            &token(),
            "approve",
            other_args,
            vec![],
        )],
    );
    let report = only(&mut chain, &cfg, "sep41-approve-auth", Fail);
    let r = row(&report, "sep41-approve-auth");
    assert!(r.actual.contains("not for the call made"), "{}", r.actual);
    assert!(
        r.actual
            .contains("token.approve(holder, spender, 1000000, 1)"),
        "{}",
        r.actual
    );
}

#[test]
fn approve_checks_need_two_parties() {
    let (mut chain, _) = setup(5);
    let report = run(&mut chain, &config(party(1), party(1)));
    for id in [
        "sep41-approve-auth",
        "sep41-events-approve",
        "sep41-approve-past-expiry",
    ] {
        assert_eq!(report.status_of(id), Some(Unverifiable), "{id}");
    }
}

#[test]
fn burn_with_no_authorization_fails_burn_auth() {
    let (mut chain, cfg) = setup(5);
    chain.auth_script.insert("burn".into(), vec![]);
    let report = only(&mut chain, &cfg, "sep41-burn-auth", Fail);
    assert!(row(&report, "sep41-burn-auth").actual.starts_with(
        "asks for no authorization at all: anyone can call burn in the holder's name"
    ));
}

#[test]
fn burn_from_asking_twice_fails_burn_from_auth() {
    let (mut chain, cfg) = setup(5);
    let args = vec![addr(&chain, "spender"), addr(&chain, "holder"), i128_val(1)];
    let spender = party_address(&chain, "spender");
    let entry = authorization(&spender, &token(), "burn_from", args, vec![]);
    chain
        .auth_script
        .insert("burn_from".into(), vec![entry.clone(), entry]);
    let report = only(&mut chain, &cfg, "sep41-burn_from-auth", Fail);
    assert!(row(&report, "sep41-burn_from-auth")
        .actual
        .starts_with("asks for the spender's authorization 2 times"));
}

#[test]
fn a_transfer_event_with_swapped_parties_fails_and_shows_it() {
    let (mut chain, cfg) = setup(5);
    let (holder, spender) = (addr(&chain, "holder"), addr(&chain, "spender"));
    chain.event_script.insert(
        "transfer".into(),
        vec![event(
            &token(),
            vec![symbol("transfer"), spender, holder],
            i128_val(1),
        )],
    );
    let report = only(&mut chain, &cfg, "sep41-events-transfer", Fail);
    let r = row(&report, "sep41-events-transfer");
    assert!(
        r.actual.starts_with("token: topics [transfer, spender, holder] data 1; expected topics [transfer, holder, spender]"),
        "{}",
        r.actual
    );
}

#[test]
fn transfer_event_shapes_a_sac_may_use() {
    let (mut chain, cfg) = setup(5);
    let (holder, spender) = (addr(&chain, "holder"), addr(&chain, "spender"));
    // The recipient is not muxed: the map form carries a void muxed id.
    let muxed = ScVal::Map(Some(ScMap(
        vec![
            ScMapEntry {
                key: symbol("amount"),
                val: i128_val(1),
            },
            ScMapEntry {
                key: symbol("to_muxed_id"),
                val: ScVal::Void,
            },
        ]
        .try_into()
        .unwrap(),
    )));
    let asset = ScVal::String(stellar_xdr::ScString("ASSAY:G…".try_into().unwrap()));
    let topics = vec![symbol("transfer"), holder, spender, asset];
    chain
        .event_script
        .insert("transfer".into(), vec![event(&token(), topics, muxed)]);
    // No spec: a Stellar Asset Contract, which appends its asset's name.
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-events-transfer"), Some(Pass));

    // A token with a spec does not get the fourth topic.
    let mut cfg = cfg;
    cfg.declared = Some(
        MEMBERS
            .iter()
            .map(|m| m.to_string())
            .collect::<BTreeSet<_>>(),
    );
    let (fresh, _) = setup(5);
    let script = chain.event_script.clone();
    let mut chain = fresh;
    chain.event_script = script;
    let report = run(&mut chain, &cfg);
    let r = row(&report, "sep41-events-transfer");
    assert_eq!(r.status, Fail, "{}", r.actual);
}

#[test]
fn events_from_elsewhere_or_twice_are_not_the_one_event() {
    let (mut chain, cfg) = setup(5);
    let (holder, spender) = (addr(&chain, "holder"), addr(&chain, "spender"));
    let right = vec![symbol("transfer"), holder, spender];
    let elsewhere =
        stellar_xdr::ScAddress::Contract(stellar_xdr::ContractId(stellar_xdr::Hash([9; 32])));
    chain.event_script.insert(
        "transfer".into(),
        vec![event(&elsewhere, right.clone(), i128_val(1))],
    );
    let report = only(&mut chain, &cfg, "sep41-events-transfer", Fail);
    assert!(row(&report, "sep41-events-transfer")
        .actual
        .starts_with("published 0 `transfer` events from the token, not one; events: C"));

    let (mut chain, cfg) = setup(5);
    let twice = event(&token(), right, i128_val(1));
    chain
        .event_script
        .insert("transfer".into(), vec![twice.clone(), twice]);
    let report = only(&mut chain, &cfg, "sep41-events-transfer", Fail);
    assert!(row(&report, "sep41-events-transfer")
        .actual
        .starts_with("published 2 `transfer` events"));
}

#[test]
fn an_approve_event_without_the_expiry_fails_events_approve() {
    let (mut chain, cfg) = setup(5);
    let topics = vec![
        symbol("approve"),
        addr(&chain, "holder"),
        addr(&chain, "spender"),
    ];
    chain
        .event_script
        .insert("approve".into(), vec![event(&token(), topics, i128_val(1))]);
    let report = only(&mut chain, &cfg, "sep41-events-approve", Fail);
    let r = row(&report, "sep41-events-approve");
    assert!(r.actual.contains("data 1; expected"), "{}", r.actual);
    assert!(
        r.actual.contains("(amount, live_until_ledger)"),
        "{}",
        r.actual
    );
}

#[test]
fn a_burn_without_an_event_fails_and_archived_or_silent_simulations_do_not() {
    let (mut chain, cfg) = setup(5);
    chain.event_script.insert("burn".into(), vec![]);
    let report = only(&mut chain, &cfg, "sep41-events-burn", Fail);
    assert_eq!(
        row(&report, "sep41-events-burn").actual,
        "published 0 `burn` events from the token, not one; events: nothing"
    );

    let (mut chain, cfg) = setup(5);
    chain
        .simulate_script
        .insert("burn".into(), Ok(Simulation::Archived));
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-events-burn"), Some(Unverifiable));
    assert_eq!(report.status_of("sep41-burn-auth"), Some(Unverifiable));

    let (mut chain, cfg) = setup(5);
    chain.simulate_script.insert(
        "burn".into(),
        Err(crate::NoAnswer::NetworkClient("connection reset".into())),
    );
    let report = run(&mut chain, &cfg);
    assert_eq!(report.status_of("sep41-events-burn"), Some(Skipped));
}

#[test]
fn approve_of_an_expired_grant_must_be_refused() {
    let (mut chain, cfg) = setup(5);
    chain.flaws.accept_past_expiry = true;
    let report = only(&mut chain, &cfg, "sep41-approve-past-expiry", Fail);
    assert!(row(&report, "sep41-approve-past-expiry")
        .actual
        .starts_with("accepted approve(1) until ledger"));

    // A refusal the asset explains (no trustline) says nothing about expiry.
    let (mut chain, cfg) = setup(5);
    chain.simulate_script.insert(
        "approve".into(),
        Ok(Simulation::Refused(
            "HostError: Error(Contract, #13) trustline entry is missing".into(),
        )),
    );
    let report = run(&mut chain, &cfg);
    assert_eq!(
        report.status_of("sep41-approve-past-expiry"),
        Some(Unverifiable)
    );
}

#[test]
fn an_allowance_granted_for_a_simulation_is_revoked_so_a_second_run_finds_none() {
    let (mut chain, cfg) = setup(10);
    let report = run(&mut chain, &cfg);
    let granted = row(&report, "sep41-transfer_from-auth")
        .evidence
        .granted
        .clone();
    let granted = granted.expect("the check granted the allowance it simulates spending");
    assert!(
        granted.contains("; revoked (approve 0) after the run in tx "),
        "{granted}"
    );
    assert_eq!(chain.allowance.0, 0);
    let again = run(&mut chain, &cfg);
    for r in again.results.iter().filter(|r| !r.no_power_observed()) {
        assert_eq!(r.status, Pass, "second run: {}: {}", r.id, r.actual);
    }
}

/// Key-based runs sign their writes: when the signing guard refuses one because the simulation
/// asks the signer to authorize a nested XLM pull, the function's authorization check FAILs with
/// the refused tree, and nothing more is signed in the run.
#[test]
fn a_write_the_signing_guard_refuses_fails_its_auth_check_and_ends_signing() {
    let (mut chain, cfg) = setup(5);
    let mut asked = transfer_pulling_xlm(&chain, 0);
    // The signer is the transaction's source: its entry carries source-account credentials.
    asked.credentials = stellar_xdr::SorobanCredentials::SourceAccount;
    chain.write_script.insert(
        "transfer".into(),
        Err(crate::WriteFault::Unsigned {
            reason: "refusing to sign: … nothing was signed or submitted".into(),
            auth: vec![asked],
        }),
    );
    let report = run(&mut chain, &cfg);

    let auth = row(&report, "sep41-transfer-auth");
    assert_eq!(auth.status, Fail, "{}", auth.actual);
    assert!(
        auth.actual
            .contains("the signing guard refused to sign transfer for the holder"),
        "{}",
        auth.actual
    );
    assert_eq!(
        auth.evidence.observed[0],
        "holder authorizes token.transfer(holder, spender, 0)"
    );
    assert!(
        auth.evidence.observed[1].starts_with("  ⤷ G")
            && auth.evidence.observed[1].contains(".transfer(holder, G"),
        "{:?}",
        auth.evidence.observed
    );

    let refused = row(&report, "sep41-transfer-zero-amount");
    assert_eq!(refused.status, Unverifiable, "{}", refused.actual);
    assert!(
        refused.actual.contains("see sep41-transfer-auth"),
        "{}",
        refused.actual
    );
    // Nothing is signed after the refusal: the writes that follow are not attempted.
    let first_transfer = chain.writes.iter().position(|w| w == "transfer").unwrap();
    assert_eq!(first_transfer + 1, chain.writes.len(), "{:?}", chain.writes);
    for id in ["sep41-transfer", "sep41-approve", "sep41-burn"] {
        let r = row(&report, id);
        assert_eq!(r.status, Unverifiable, "{id}: {}", r.actual);
        assert!(r.actual.contains("nothing more is signed"), "{}", r.actual);
    }
    // The other authorization checks only simulate, and still judge.
    assert_eq!(report.status_of("sep41-approve-auth"), Some(Pass));
    assert_eq!(report.status_of("sep41-burn-auth"), Some(Pass));
    assert_eq!(report.exit_code(), crate::model::EXIT_VIOLATION);
}

/// When the check's own simulation also shows the problem, its FAIL (and tree) stands and names
/// the refusal too.
#[test]
fn a_refused_write_keeps_the_simulated_fail_of_its_auth_check() {
    let (mut chain, cfg) = setup(5);
    let asked = transfer_pulling_xlm(&chain, 1);
    chain
        .auth_script
        .insert("transfer".into(), vec![asked.clone()]);
    chain.write_script.insert(
        "transfer".into(),
        Err(crate::WriteFault::Unsigned {
            reason: "refusing to sign".into(),
            auth: vec![asked],
        }),
    );
    let report = run(&mut chain, &cfg);
    let auth = row(&report, "sep41-transfer-auth");
    assert_eq!(auth.status, Fail, "{}", auth.actual);
    assert!(
        auth.actual.contains("also covers 1 nested call")
            && auth.actual.contains(
                "the signing guard refused to sign transfer for the holder earlier in this run"
            ),
        "{}",
        auth.actual
    );
    assert_eq!(
        auth.evidence.observed[0],
        "holder authorizes token.transfer(holder, spender, 1)"
    );
}
