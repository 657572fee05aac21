//! SEP-41 v0.5.1 gives every event two data forms: the single value or vec, and a map with
//! `Symbol` keys that may carry keys the SEP does not define. Each event check accepts both and
//! still FAILs a map that lacks a required key or holds a wrong-typed value. Then the events of the
//! mint and the clawback power discovery exercised.
use assay_chain::scval::symbol;
use stellar_xdr::{ContractEvent, ScMap, ScMapEntry, ScString, ScVal};

use super::{row, run, setup};
use crate::{
    checks::{i128_val, ExercisedPower},
    model::Status,
    scripted::{account, event, token},
};
use Status::*;

fn map(entries: Vec<(ScVal, ScVal)>) -> ScVal {
    let entries: Vec<ScMapEntry> = (entries.into_iter())
        .map(|(key, val)| ScMapEntry { key, val })
        .collect();
    ScVal::Map(Some(ScMap(entries.try_into().unwrap())))
}

fn string(text: &str) -> ScVal {
    ScVal::String(ScString(text.try_into().unwrap()))
}

/// The verdict and message of `id` when every SEP-41 event's data is rewritten by `reshape`.
fn judged(id: &str, reshape: fn(&str, &ScVal) -> ScVal) -> (Status, String) {
    let (mut chain, cfg) = setup(5);
    chain.reshape_data = Some(reshape);
    let report = run(&mut chain, &cfg);
    let r = row(&report, id);
    (r.status, r.actual.clone())
}

/// The amount and ledger of the vec form `[amount, live_until_ledger]`.
fn approval_parts(data: &ScVal) -> (ScVal, ScVal) {
    let ScVal::Vec(Some(items)) = data else {
        panic!("the scripted approve publishes the vec form")
    };
    (items[0].clone(), items[1].clone())
}

#[test]
fn transfer_event_accepts_the_map_form_with_a_void_or_absent_muxed_id_and_extra_keys() {
    // soroban-examples' token: {amount, to_muxed_id: void}.
    let (status, actual) = judged("sep41-events-transfer", |_, amount| {
        map(vec![
            (symbol("amount"), amount.clone()),
            (symbol("to_muxed_id"), ScVal::Void),
        ])
    });
    assert_eq!(status, Pass, "{actual}");
    assert!(
        actual.ends_with("data {amount: 1, to_muxed_id: void}"),
        "{actual}"
    );
    for reshape in [
        (|_, amount| map(vec![(symbol("amount"), amount.clone())])) as fn(&str, &ScVal) -> ScVal,
        |_, amount| {
            map(vec![
                (symbol("amount"), amount.clone()),
                (symbol("memo"), string("extra keys are ignored")),
                (symbol("to_muxed_id"), ScVal::Void),
            ])
        },
    ] {
        let (status, actual) = judged("sep41-events-transfer", reshape);
        assert_eq!(status, Pass, "{actual}");
    }
}

#[test]
fn transfer_event_maps_that_lack_the_amount_mistype_it_or_invent_a_muxed_id_fail() {
    for reshape in [
        // A muxed id for a recipient that was not muxed.
        (|_, amount| {
            map(vec![
                (symbol("amount"), amount.clone()),
                (symbol("to_muxed_id"), ScVal::U64(7)),
            ])
        }) as fn(&str, &ScVal) -> ScVal,
        |_, _| map(vec![(symbol("to_muxed_id"), ScVal::Void)]),
        |_, _| map(vec![(symbol("amount"), ScVal::I64(1))]),
        // A String key is not the Symbol key SEP-41 names.
        |_, amount| map(vec![(string("amount"), amount.clone())]),
        // A repeated key has no one meaning.
        |_, amount| {
            map(vec![
                (symbol("amount"), amount.clone()),
                (symbol("amount"), i128_val(2)),
            ])
        },
    ] {
        let (status, actual) = judged("sep41-events-transfer", reshape);
        assert_eq!(status, Fail, "{actual}");
        assert!(
            actual.contains("or {amount: 1, to_muxed_id: void or absent}"),
            "{actual}"
        );
    }
}

#[test]
fn approve_event_accepts_the_map_form_and_fails_an_incomplete_or_mistyped_one() {
    // OpenZeppelin's fungible token: {amount, live_until_ledger}.
    let (status, actual) = judged("sep41-events-approve", |function, data| {
        if function != "approve" {
            return data.clone();
        }
        let (amount, live_until) = approval_parts(data);
        map(vec![
            (symbol("amount"), amount),
            (symbol("live_until_ledger"), live_until),
        ])
    });
    assert_eq!(status, Pass, "{actual}");
    let (status, actual) = judged("sep41-events-approve", |function, data| {
        if function != "approve" {
            return data.clone();
        }
        let (amount, live_until) = approval_parts(data);
        map(vec![
            (symbol("amount"), amount),
            (symbol("granted_by"), string("extra")),
            (symbol("live_until_ledger"), live_until),
        ])
    });
    assert_eq!(status, Pass, "{actual}");

    for reshape in [
        (|function, data| {
            if function != "approve" {
                return data.clone();
            }
            map(vec![(symbol("amount"), approval_parts(data).0)])
        }) as fn(&str, &ScVal) -> ScVal,
        |function, data| {
            if function != "approve" {
                return data.clone();
            }
            let (amount, live_until) = approval_parts(data);
            let ScVal::U32(ledger) = live_until else {
                unreachable!()
            };
            map(vec![
                (symbol("amount"), amount),
                (symbol("live_until_ledger"), ScVal::U64(ledger.into())),
            ])
        },
        |function, data| {
            if function != "approve" {
                return data.clone();
            }
            let (amount, live_until) = approval_parts(data);
            ScVal::Vec(Some(
                vec![amount, live_until, ScVal::Void].try_into().unwrap(),
            ))
        },
    ] {
        let (status, actual) = judged("sep41-events-approve", reshape);
        assert_eq!(status, Fail, "{actual}");
        assert!(
            actual.contains("(amount, live_until_ledger), or {amount: 1, live_until_ledger: "),
            "{actual}"
        );
    }
}

#[test]
fn burn_event_accepts_the_map_form_and_fails_an_incomplete_or_mistyped_one() {
    // OpenZeppelin's fungible token: {amount}.
    for reshape in [
        (|_, amount| map(vec![(symbol("amount"), amount.clone())])) as fn(&str, &ScVal) -> ScVal,
        |_, amount| {
            map(vec![
                (symbol("amount"), amount.clone()),
                (symbol("operator"), ScVal::Void),
            ])
        },
    ] {
        let (status, actual) = judged("sep41-events-burn", reshape);
        assert_eq!(status, Pass, "{actual}");
    }
    for reshape in [
        (|_, _| map(vec![])) as fn(&str, &ScVal) -> ScVal,
        |_, _| map(vec![(symbol("amount"), ScVal::U32(1))]),
        |_, _| map(vec![(symbol("value"), i128_val(1))]),
    ] {
        let (status, actual) = judged("sep41-events-burn", reshape);
        assert_eq!(status, Fail, "{actual}");
        assert!(
            actual.ends_with("the amount 1 as an i128, or {amount: 1}"),
            "{actual}"
        );
    }
}

/// A mint of 5 to account 40 (or a clawback of 5 from it) by `reward`, publishing `events`.
fn exercised(events: Vec<ContractEvent>) -> ExercisedPower {
    ExercisedPower {
        function: "reward".into(),
        account: account(40),
        amount: 5,
        events,
    }
}

/// The verdict and message of `sep41-events-{kind}` for a power that published `events`.
fn power_row(kind: &str, events: Vec<ContractEvent>) -> (Status, String) {
    let (mut chain, mut cfg) = setup(5);
    match kind {
        "mint" => cfg.exercised_mint = Some(exercised(events)),
        _ => cfg.exercised_clawback = Some(exercised(events)),
    }
    let report = run(&mut chain, &cfg);
    let r = row(&report, &format!("sep41-events-{kind}"));
    (r.status, r.actual.clone())
}

fn power_event(kind: &str, topics: Vec<ScVal>, data: ScVal) -> ContractEvent {
    event(&token(), [vec![symbol(kind)], topics].concat(), data)
}

#[test]
fn power_event_rows_are_skipped_without_an_exercised_power_and_leave_the_exit_code_alone() {
    let (mut chain, cfg) = setup(5);
    let report = run(&mut chain, &cfg);
    for (id, reason) in [
        ("sep41-events-mint", "no mint power observed"),
        ("sep41-events-clawback", "no clawback power observed"),
    ] {
        let r = row(&report, id);
        assert_eq!((r.status, r.actual.as_str()), (Skipped, reason));
    }
    assert_eq!(report.exit_code(), 0);
    // Any other SKIPPED row still holds the run at 2.
    let (mut chain, cfg) = setup(5);
    chain.simulate_script.insert(
        "burn".into(),
        Err(crate::NoAnswer::NetworkClient("connection reset".into())),
    );
    assert_eq!(run(&mut chain, &cfg).exit_code(), 2);
}

#[test]
fn a_mint_event_in_either_form_naming_the_account_and_amount_passes() {
    let to = ScVal::Address(account(40));
    let asset = string("FORK:GABC");
    for (topics, data) in [
        (vec![to.clone()], i128_val(5)),
        (vec![to.clone(), asset.clone()], i128_val(5)),
        (
            vec![to.clone()],
            map(vec![
                (symbol("amount"), i128_val(5)),
                (symbol("to_muxed_id"), ScVal::Void),
            ]),
        ),
        (
            vec![to.clone(), asset],
            map(vec![
                (symbol("amount"), i128_val(5)),
                (symbol("minter"), string("extra")),
            ]),
        ),
    ] {
        let (status, actual) = power_row("mint", vec![power_event("mint", topics, data)]);
        assert_eq!(status, Pass, "{actual}");
        assert!(
            actual.starts_with("reward() credited account by 5; token: topics [mint, account"),
            "{actual}"
        );
    }
}

#[test]
fn a_mint_event_that_is_missing_or_names_another_account_or_amount_fails_with_what_was_seen() {
    let to = ScVal::Address(account(40));
    let elsewhere =
        stellar_xdr::ScAddress::Contract(stellar_xdr::ContractId(stellar_xdr::Hash([9; 32])));
    for events in [
        vec![],
        vec![power_event(
            "mint",
            vec![ScVal::Address(account(41))],
            i128_val(5),
        )],
        vec![power_event("mint", vec![to.clone()], i128_val(4))],
        vec![power_event(
            "mint",
            vec![to.clone()],
            map(vec![(symbol("to_muxed_id"), ScVal::Void)]),
        )],
        vec![power_event(
            "mint",
            vec![to.clone()],
            map(vec![(symbol("amount"), ScVal::I64(5))]),
        )],
        // The pre-CAP-67 shape, with an admin topic before the recipient.
        vec![power_event(
            "mint",
            vec![ScVal::Address(account(42)), to.clone(), string("FORK:GABC")],
            i128_val(5),
        )],
        vec![power_event(
            "transfer",
            vec![ScVal::Address(account(42)), to.clone()],
            i128_val(5),
        )],
        vec![event(
            &elsewhere,
            vec![symbol("mint"), to.clone()],
            i128_val(5),
        )],
    ] {
        let (status, actual) = power_row("mint", events);
        assert_eq!(status, Fail, "{actual}");
        assert!(
            actual.starts_with(
                "reward() credited account by 5, but no `mint` event from the token names it \
                 with that amount ("
            ),
            "{actual}"
        );
        assert!(
            actual.contains("expected topics [mint, account] (+ an asset string) and data 5 as an i128, or {amount: 5, to_muxed_id: void or absent}; events: "),
            "{actual}"
        );
    }
    let (_, actual) = power_row("mint", vec![]);
    assert!(actual.ends_with("events: nothing"), "{actual}");
}

#[test]
fn a_clawback_or_burn_event_in_either_form_passes_and_a_wrong_holder_or_amount_fails() {
    let from = ScVal::Address(account(40));
    for kind in ["clawback", "burn"] {
        for data in [i128_val(5), map(vec![(symbol("amount"), i128_val(5))])] {
            let (status, actual) = power_row(
                "clawback",
                vec![power_event(kind, vec![from.clone()], data)],
            );
            assert_eq!(status, Pass, "{actual}");
            assert!(
                actual.starts_with("reward() debited account by 5; "),
                "{actual}"
            );
            assert!(
                actual.contains(kind),
                "the row names the event that announced it: {actual}"
            );
        }
    }
    for events in [
        vec![power_event("burn", vec![from.clone()], i128_val(6))],
        vec![power_event(
            "burn",
            vec![ScVal::Address(account(41))],
            i128_val(5),
        )],
        vec![power_event("transfer", vec![from.clone()], i128_val(5))],
        vec![power_event("clawback", vec![from.clone()], i128_val(6))],
        vec![power_event(
            "clawback",
            vec![from.clone()],
            map(vec![(symbol("amount"), string("5"))]),
        )],
    ] {
        let (status, actual) = power_row("clawback", events);
        assert_eq!(status, Fail, "{actual}");
        assert!(
            actual.contains("data 5 as an i128, or {amount: 5}"),
            "{actual}"
        );
    }
}
