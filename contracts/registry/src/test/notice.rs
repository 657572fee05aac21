//! Notice before anything that can loosen a read (interface 5): admitting or removing an attester
//! waits for the registry's notice, can be cancelled, and is announced by events; a registry
//! constructed with a zero notice (a local network's) applies the change at once.
extern crate std;

use soroban_sdk::{
    testutils::{Address as _, Events as _, Ledger as _},
    Address, Event as _, IntoVal,
};

use super::{assert_auth_refused, Setup, ANY_AGE};
use crate::{
    testutils::{
        assert_contract_error, for_each_build, live_code, new_token, register_registry_with_delay,
        Build,
    },
    *,
};

const DAY: u64 = 86_400;

/// A registry with a day's notice whose first attester (`s.attester`) is already admitted.
fn with_notice(build: Build) -> Setup {
    let mut s = Setup::new(build);
    s.id = register_registry_with_delay(&s.env, build, &s.admin, DAY);
    s.client().add_attester(&s.attester);
    advance(&s, DAY);
    s.client().apply_attester_change(&s.attester);
    s
}

fn advance(s: &Setup, secs: u64) -> u64 {
    let t = s.env.ledger().timestamp() + secs;
    s.env.ledger().set_timestamp(t);
    t
}

#[test]
fn an_added_attester_counts_only_after_the_notice() {
    for_each_build(|build| {
        let s = with_notice(build);
        let c = s.client();
        let b = Address::generate(&s.env);
        let asset = new_token(&s.env);
        c.attest(&s.attester, &asset, &0, &0, &s.hash(1), &live_code(&asset));

        let proposed_at = s.env.ledger().timestamp();
        c.add_attester(&b);
        s.assert_auth(&s.admin, "add_attester", (&b,).into_val(&s.env));
        let applicable_at = proposed_at + DAY;
        assert_eq!(
            s.env.events().all(),
            [AttesterChangeProposed {
                attester: b.clone(),
                adding: true,
                applicable_at,
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(
            c.pending_attester_change(&b),
            Some(PendingAttesterChange {
                adding: true,
                proposed_at,
                applicable_at,
            })
        );
        // Not an attester yet: it cannot write, and nothing it could write counts.
        assert!(!c.is_attester(&b), "{build:?}");
        assert_contract_error(
            c.try_attest(&b, &asset, &0, &0, &s.hash(2), &live_code(&asset)),
            Error::NotAttester,
            10,
        );
        assert_contract_error(
            c.try_apply_attester_change(&b),
            Error::AttesterChangeNotDue,
            19,
        );
        s.env.ledger().set_timestamp(applicable_at - 1);
        assert_contract_error(
            c.try_apply_attester_change(&b),
            Error::AttesterChangeNotDue,
            19,
        );
        assert!(!c.is_attester(&b));

        // The boundary itself applies.
        s.env.ledger().set_timestamp(applicable_at);
        c.apply_attester_change(&b);
        s.assert_auth(&s.admin, "apply_attester_change", (&b,).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AttesterAdded {
                attester: b.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert!(c.is_attester(&b), "{build:?}");
        assert_eq!(c.pending_attester_change(&b), None);
        assert_contract_error(
            c.try_apply_attester_change(&b),
            Error::NoPendingAttesterChange,
            18,
        );
        c.attest(
            &b,
            &asset,
            &3,
            &MECH_AUTH_CLAWBACK_ENABLED,
            &s.hash(3),
            &live_code(&asset),
        );
        assert_eq!(c.get_safety(&asset).unwrap().severity, 3, "{build:?}");
    });
}

#[test]
fn a_cancelled_change_never_applies() {
    for_each_build(|build| {
        let s = with_notice(build);
        let c = s.client();
        let b = Address::generate(&s.env);
        assert_contract_error(
            c.try_cancel_attester_change(&b),
            Error::NoPendingAttesterChange,
            18,
        );
        c.add_attester(&b);
        c.cancel_attester_change(&b);
        s.assert_auth(&s.admin, "cancel_attester_change", (&b,).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AttesterChangeCancelled {
                attester: b.clone(),
                adding: true,
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(c.pending_attester_change(&b), None, "{build:?}");
        advance(&s, 2 * DAY);
        assert_contract_error(
            c.try_apply_attester_change(&b),
            Error::NoPendingAttesterChange,
            18,
        );
        assert!(!c.is_attester(&b), "{build:?}");

        // A cancelled removal leaves the attester in place.
        c.remove_attester(&s.attester);
        c.cancel_attester_change(&s.attester);
        advance(&s, 2 * DAY);
        assert_contract_error(
            c.try_apply_attester_change(&s.attester),
            Error::NoPendingAttesterChange,
            18,
        );
        assert!(c.is_attester(&s.attester), "{build:?}");
    });
}

#[test]
fn a_removed_attester_stops_counting_only_after_the_notice() {
    for_each_build(|build| {
        let s = with_notice(build);
        let c = s.client();
        let (a, b) = (s.attester.clone(), Address::generate(&s.env));
        c.add_attester(&b);
        advance(&s, DAY);
        c.apply_attester_change(&b);
        let asset = new_token(&s.env);
        c.attest(&a, &asset, &0, &0, &s.hash(1), &live_code(&asset));
        c.attest(
            &b,
            &asset,
            &4,
            &MECH_BLOCKLISTED,
            &s.hash(2),
            &live_code(&asset),
        );

        let proposed_at = s.env.ledger().timestamp();
        c.remove_attester(&b);
        s.assert_auth(&s.admin, "remove_attester", (&b,).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AttesterChangeProposed {
                attester: b.clone(),
                adding: false,
                applicable_at: proposed_at + DAY,
            }
            .to_xdr(&s.env, &s.id)]
        );
        // Still an attester, its critical verdict still answers, until the notice has run.
        assert!(c.is_attester(&b));
        assert_eq!(c.get_safety(&asset).unwrap().severity, 4, "{build:?}");
        assert!(!c.is_safe(&asset, &3, &ANY_AGE));
        advance(&s, DAY - 1);
        assert_contract_error(
            c.try_apply_attester_change(&b),
            Error::AttesterChangeNotDue,
            19,
        );
        assert_eq!(c.get_safety(&asset).unwrap().severity, 4, "{build:?}");

        advance(&s, 1);
        c.apply_attester_change(&b);
        assert_eq!(
            s.env.events().all(),
            [AttesterRemoved {
                attester: b.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert!(!c.is_attester(&b));
        assert_eq!(c.get_safety(&asset).unwrap().severity, 0, "{build:?}");
        assert_eq!(c.get_safety_by(&asset, &b), None);
    });
}

#[test]
fn only_the_admin_proposes_applies_or_cancels_and_proposals_are_checked() {
    for_each_build(|build| {
        let s = with_notice(build);
        let c = s.client();
        let b = Address::generate(&s.env);
        s.env.set_auths(&[]);
        assert_auth_refused(c.try_add_attester(&b));
        assert_auth_refused(c.try_remove_attester(&s.attester));
        s.env.mock_all_auths();
        c.add_attester(&b);
        s.env.set_auths(&[]);
        assert_auth_refused(c.try_cancel_attester_change(&b));
        advance(&s, DAY);
        assert_auth_refused(c.try_apply_attester_change(&b));
        s.env.mock_all_auths();
        assert!(!c.is_attester(&b), "{build:?}");

        // A proposal is checked when made, and an admission again when applied.
        assert_contract_error(c.try_add_attester(&s.attester), Error::AttesterExists, 11);
        assert_contract_error(c.try_remove_attester(&b), Error::NotAttester, 10);
        // A new proposal replaces the pending one and restarts its clock.
        let again = s.env.ledger().timestamp();
        c.add_attester(&b);
        assert_eq!(
            c.pending_attester_change(&b).unwrap().applicable_at,
            again + DAY
        );
        assert_contract_error(
            c.try_apply_attester_change(&b),
            Error::AttesterChangeNotDue,
            19,
        );
    });
}

#[test]
fn a_local_registry_without_notice_changes_attesters_at_once() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let b = Address::generate(&s.env);
        c.add_attester(&b);
        assert_eq!(
            s.env.events().all(),
            [AttesterAdded {
                attester: b.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert!(c.is_attester(&b), "{build:?}");
        assert_eq!(c.pending_attester_change(&b), None);
        c.remove_attester(&b);
        assert!(!c.is_attester(&b), "{build:?}");
    });
}
