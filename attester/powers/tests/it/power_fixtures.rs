//! The project's power fixtures: each a correct SEP-41 token plus one power under a name no list of the
//! project holds (fixtures/power-token), and a control with none. Each power is found with its bit, its
//! effect and who holds it, on the embedded network the token is deployed to and on a fork of it.
use assay_chain::strkey_of;
use assay_core::powers::{FreezeScope, PowerEffect, PowerSurvey};
use assay_core::Mechanics;
use assay_powers::fork::{discover_on_fork, ForkRequest};
use assay_powers::Bounds;
use stellar_xdr::ScVal;

use crate::common::{holder, i128_val, wasm, Deployed};

const SUPPLY: i128 = 1_000_000;

fn deploy(feature: &str) -> Deployed {
    let token = wasm(
        "power-token",
        &format!("power_token_{}", feature.replace('-', "_")),
    );
    if feature == "swappable-ledger" {
        let book = wasm("power-ledger", "power_ledger");
        return Deployed::with_dependency(book, token, |admin, book| {
            vec![
                ScVal::Address(admin.sc_address()),
                ScVal::Address(holder()),
                i128_val(SUPPLY),
                ScVal::Address(book.clone()),
            ]
        });
    }
    Deployed::new(token, |admin| {
        vec![
            ScVal::Address(admin.sc_address()),
            ScVal::Address(holder()),
            i128_val(SUPPLY),
        ]
    })
}

/// The one power of `survey`, after checking it is the only one and the bits are exactly `bits`.
fn only_power(survey: &PowerSurvey, bits: u32) -> &assay_core::powers::ObservedPower {
    assert_eq!(survey.unobservable, None, "{survey:#?}");
    assert_eq!(survey.bits(), bits, "{survey:#?}");
    assert_eq!(survey.powers.len(), 1, "{survey:#?}");
    &survey.powers[0]
}

fn assert_admins(d: &Deployed, p: &assay_core::powers::ObservedPower) {
    let who: Vec<&str> = p.authorized_by.iter().map(|a| a.address.as_str()).collect();
    assert_eq!(who, [strkey_of(&d.admin.sc_address())], "{p:#?}");
    assert_eq!(p.authorized_by[0].control, "1 key");
}

#[test]
fn a_balance_taken_and_burned_through_rebalance() {
    let d = deploy("take-burn");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_CLAWBACK);
    assert_eq!(p.function, "rebalance");
    assert!(
        matches!(&p.effect, PowerEffect::TakesBalance { moved_to: None, holder: h, .. } if *h == strkey_of(&holder())),
        "{p:#?}"
    );
    assert_eq!(p.label, None, "rebalance is in no vocabulary");
    assert_admins(&d, p);
    assert!(!p.events.is_empty(), "the burn's events are kept");
}

#[test]
fn a_balance_moved_elsewhere_through_recover() {
    let d = deploy("take-move");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_CLAWBACK);
    assert_eq!(p.function, "recover");
    assert!(
        matches!(
            &p.effect,
            PowerEffect::TakesBalance {
                moved_to: Some(_),
                ..
            }
        ),
        "a forced transfer: {p:#?}"
    );
    assert_admins(&d, p);
}

#[test]
fn one_account_frozen_through_set_mode() {
    let d = deploy("freeze-one");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_FREEZE);
    assert_eq!(p.function, "set_mode");
    assert!(
        matches!(
            &p.effect,
            PowerEffect::Freezes {
                scope: FreezeScope::OneAccount,
                ..
            }
        ),
        "{p:#?}"
    );
    assert_admins(&d, p);
}

#[test]
fn everyone_stopped_through_pause_all() {
    let d = deploy("pause-all");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_FREEZE);
    assert_eq!(p.function, "pause_all");
    assert!(
        matches!(
            &p.effect,
            PowerEffect::Freezes {
                scope: FreezeScope::Everyone,
                ..
            }
        ),
        "{p:#?}"
    );
}

#[test]
fn supply_created_through_reward_with_no_function_named_mint() {
    let d = deploy("create-supply");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_MINT);
    assert_eq!(p.function, "reward");
    assert!(
        matches!(&p.effect, PowerEffect::CreatesSupply { .. }),
        "{p:#?}"
    );
    assert_admins(&d, p);
}

#[test]
fn balances_kept_in_a_contract_the_admin_can_swap() {
    let d = deploy("swappable-ledger");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::CODE_MUTABLE);
    assert_eq!(p.function, "set_ledger");
    assert!(
        matches!(&p.effect, PowerEffect::ReplacesDependency { .. }),
        "{p:#?}"
    );
    assert_admins(&d, p);
}

#[test]
fn a_clawback_exported_but_removed_from_the_spec_is_still_found() {
    let d = deploy("hidden-clawback");
    let spec = soroban_spec::read::from_wasm(&d.wasm).expect("a spec");
    let functions: Vec<String> = spec
        .iter()
        .filter_map(|e| match e {
            stellar_xdr::ScSpecEntry::FunctionV0(f) => Some(f.name.to_utf8_string_lossy()),
            _ => None,
        })
        .collect();
    assert!(functions.contains(&"transfer".to_string()), "{functions:?}");
    assert!(
        !functions.contains(&"clawback".to_string()),
        "the fixture's spec must not declare clawback: {functions:?}"
    );
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_CLAWBACK);
    assert_eq!(p.function, "clawback");
    assert_eq!(
        p.label.as_deref(),
        Some("clawback"),
        "the name labels what was observed"
    );
}

#[test]
fn a_privileged_write_of_unclassifiable_effect_is_named() {
    let d = deploy("unclassified");
    let s = d.discover(&[holder()]);
    assert_eq!(s.unobservable, None);
    assert_eq!(s.bits(), Mechanics::ADMIN_UNCLASSIFIED, "{s:#?}");
    assert!(s.powers.is_empty());
    assert_eq!(s.unclassified.len(), 1);
    assert_eq!(s.unclassified[0].function, "set_memo");
}

#[test]
fn the_control_has_no_power() {
    let d = deploy("control");
    let s = d.discover(&[holder()]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    assert_eq!(s.bits(), 0, "{s:#?}");
    assert!(s.probed.contains(&"transfer".to_string()));
}

#[test]
fn on_a_fork_holders_come_from_the_tokens_newest_events() {
    let d = deploy("take-burn");
    let snapshots = tempfile::tempdir().unwrap();
    let cache = snapshots.path().join("powers-fork.json");
    let found = discover_on_fork(&ForkRequest {
        rpc_url: Some(d.net.rpc_url()),
        passphrase: d.net.passphrase().to_string(),
        contract: d.token.clone(),
        holder: None,
        bounds: Bounds::default(),
        cache: Some(cache.clone()),
    })
    .expect("discovery on the fork");
    assert_eq!(
        found.survey.holders[0],
        strkey_of(&holder()),
        "{:#?}",
        found.survey
    );
    let p = only_power(&found.survey, Mechanics::ADMIN_CLAWBACK);
    assert_eq!(p.function, "rebalance");
    assert!(found.upstream_round_trips > 0);
    assert!(!found.offline);

    // The network stops; the snapshot the discovery wrote replays it offline to the same survey.
    let (token, passphrase) = (d.token.clone(), d.net.passphrase().to_string());
    drop(d);
    let replayed = discover_on_fork(&ForkRequest {
        rpc_url: None,
        passphrase: passphrase.clone(),
        contract: token.clone(),
        holder: None,
        bounds: Bounds::default(),
        cache: Some(cache.clone()),
    })
    .expect("discovery replayed from the snapshot");
    assert!(replayed.offline);
    assert_eq!(replayed.upstream_round_trips, 0);
    assert_eq!(replayed.survey.holders, found.survey.holders);
    assert_eq!(replayed.survey.bits(), found.survey.bits());
    let claims = |s: &PowerSurvey| -> Vec<(String, String, String)> {
        s.powers
            .iter()
            .map(|p| (p.function.clone(), p.holders(), p.effect.stable_claim()))
            .collect()
    };
    assert_eq!(
        claims(&replayed.survey),
        claims(&found.survey),
        "{replayed:#?}"
    );
    assert_eq!(replayed.survey.unclassified, found.survey.unclassified);

    // A snapshot no discovery recorded (no candidates noted) is refused, not read as "no holder".
    let mut text: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
    text["assay_fork"]["notes"] = serde_json::json!({});
    let bare = snapshots.path().join("bare.json");
    std::fs::write(&bare, text.to_string()).unwrap();
    let refused = discover_on_fork(&ForkRequest {
        rpc_url: None,
        passphrase,
        contract: token,
        holder: None,
        bounds: Bounds::default(),
        cache: Some(bare),
    });
    assert!(
        matches!(&refused, Err(assay_powers::DiscoveryError::Upstream(m)) if m.contains("holder candidates")),
        "{refused:?}"
    );
}

/// The power of `survey` exercised by `function` (a sequence reads `FIRST then SECOND`).
fn power<'a>(survey: &'a PowerSurvey, function: &str) -> &'a assay_core::powers::ObservedPower {
    survey
        .powers
        .iter()
        .find(|p| p.function == function)
        .unwrap_or_else(|| panic!("no power through {function}: {survey:#?}"))
}

/// Each step of a sequence asked the admin's authorization, and the power's evidence says so per step.
fn assert_steps_by_admin(d: &Deployed, p: &assay_core::powers::ObservedPower, steps: [&str; 2]) {
    let admin = strkey_of(&d.admin.sc_address());
    let names: Vec<&str> = p.steps.iter().map(|s| s.function.as_str()).collect();
    assert_eq!(names, steps, "{p:#?}");
    for step in &p.steps {
        let who: Vec<&str> = step
            .authorized_by
            .iter()
            .map(|a| a.address.as_str())
            .collect();
        assert_eq!(who, [admin.as_str()], "{p:#?}");
    }
    assert_admins(d, p);
    assert_eq!(
        p.authorization(),
        format!("{admin} (1 key, 0 s) then {admin} (1 key, 0 s)")
    );
}

#[test]
fn a_burn_that_needs_a_queued_record_is_found_as_a_sequence() {
    let d = deploy("two-step");
    let s = d.discover(&[holder()]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    assert_eq!(s.bits(), Mechanics::ADMIN_CLAWBACK, "{s:#?}");
    assert!(
        s.unclassified.is_empty(),
        "the first step is explained by the pair: {s:#?}"
    );
    let p = power(&s, "queue_adjustment then apply_adjustment");
    assert!(
        matches!(&p.effect, PowerEffect::TakesBalance { moved_to: None, holder: h, .. } if *h == strkey_of(&holder())),
        "{p:#?}"
    );
    assert_steps_by_admin(&d, p, ["queue_adjustment", "apply_adjustment"]);
    assert!(!p.events.is_empty(), "the second call's events are kept");
    // Alone, the second call refused every argument set: listed under the bound.
    assert!(
        s.cut
            .iter()
            .any(|c| c.starts_with("apply_adjustment: refused every argument set")),
        "{s:#?}"
    );
    assert_eq!(s.powers.len(), 1, "{s:#?}");
}

#[test]
fn an_allowance_the_admin_writes_for_itself_is_a_power_to_take_the_balance() {
    let d = deploy("admin-allowance");
    let s = d.discover(&[holder()]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    assert_eq!(s.bits(), Mechanics::ADMIN_CLAWBACK, "{s:#?}");
    assert!(s.unclassified.is_empty(), "{s:#?}");
    let p = power(&s, "grant_spending then transfer_from");
    assert!(
        matches!(&p.effect, PowerEffect::TakesBalance { moved_to: Some(_), holder: h, .. } if *h == strkey_of(&holder())),
        "a forced transfer through the token's own transfer_from: {p:#?}"
    );
    assert_steps_by_admin(&d, p, ["grant_spending", "transfer_from"]);
    assert_eq!(p.label, None, "found without naming any function");
}

#[test]
fn a_burn_refused_for_seven_days_is_found_with_when_it_becomes_usable() {
    let d = deploy("clock-burn");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_CLAWBACK);
    assert_eq!(p.function, "settle");
    assert!(
        matches!(&p.effect, PowerEffect::TakesBalance { moved_to: None, holder: h, .. } if *h == strkey_of(&holder())),
        "{p:#?}"
    );
    assert_eq!(p.label, None, "settle is in no vocabulary");
    assert_eq!(Mechanics::ADMIN_CLAWBACK, p.effect.bit());
    assert_admins(&d, p);
    // Usable from seven days after deployment (the sandbox's clock is the network's), to the hour.
    let now = d.net.sandbox().expect("sandbox").clock().timestamp as i64;
    let from = p
        .usable_from
        .expect("a power usable only later says from when")
        .unix();
    let week = 7 * 86_400;
    assert!(
        from >= now + week - 3_600 && from <= now + week + 3_600,
        "usable from {from}, deployed about {now}"
    );
    let reach = s.reach.as_ref().expect("the survey says how far it went");
    assert!(reach.later_sets >= 1, "{reach:?}");
    assert_eq!(reach.later_offsets[..3], [3_600, 86_400, 7 * 86_400]);
    assert!(
        !s.cut.iter().any(|c| c.starts_with("settle:")),
        "settle was observed: {:?}",
        s.cut
    );
}

#[test]
fn a_sweep_keyed_on_a_compiled_constant_is_found_with_the_modules_own_values() {
    let d = deploy("constant-keyed");
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_CLAWBACK);
    assert_eq!(p.function, "sweep");
    assert!(
        matches!(
            &p.effect,
            PowerEffect::TakesBalance { moved_to: Some(to), holder: h, .. }
                if *h == strkey_of(&holder()) && *to == strkey_of(&d.admin.sc_address())
        ),
        "{p:#?}"
    );
    assert_eq!(p.label, None);
    assert_eq!(p.usable_from, None, "usable now");
    assert_admins(&d, p);
    let reach = s.reach.as_ref().expect("the survey says how far it went");
    assert!(
        reach.module_values >= 1 && reach.module_calls >= 1,
        "{reach:?}"
    );
}

/// The levy fixtures: `set_levy`, which only the admin can call, makes every later transfer send a share to
/// the admin. Found by what the holder's own transfer delivered before and after it, with the share.
fn assert_levy(feature: &str, share: u32) {
    let d = deploy(feature);
    let s = d.discover(&[holder()]);
    let p = only_power(&s, Mechanics::ADMIN_TRANSFER_FEE);
    assert_eq!(p.function, "set_levy");
    assert_eq!(p.label, None, "set_levy is in no vocabulary");
    assert_eq!(p.usable_from, None, "usable now");
    assert!(p.steps.is_empty(), "one privileged call shows it: {p:#?}");
    assert_admins(&d, p);
    assert!(s.unclassified.is_empty(), "{s:#?}");
    let PowerEffect::TransferFee {
        holder: measured,
        sent,
        delivered,
        share_bps,
        credited,
    } = &p.effect
    else {
        panic!("not a transfer fee: {p:#?}");
    };
    assert_eq!(*measured, strkey_of(&holder()));
    assert_eq!(*share_bps, share, "{p:#?}");
    let (sent, delivered): (i128, i128) = (sent.parse().unwrap(), delivered.parse().unwrap());
    assert!(sent > 0, "{p:#?}");
    assert_eq!(
        delivered,
        sent - sent * i128::from(share) / 10_000,
        "{p:#?}"
    );
    assert_eq!(
        credited.as_deref(),
        Some(strkey_of(&d.admin.sc_address()).as_str()),
        "the rest went to the admin: {p:#?}"
    );
    assert_eq!(p.effect.takes_every_transfer(), share == 10_000);
}

#[test]
fn a_levy_of_30_percent_the_admin_sets_on_every_transfer_is_a_transfer_fee() {
    assert_levy("transfer-fee", 3_000);
}

#[test]
fn a_levy_of_everything_the_admin_sets_on_every_transfer_is_a_transfer_fee_of_100_percent() {
    assert_levy("transfer-fee-full", 10_000);
}
