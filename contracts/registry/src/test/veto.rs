//! Interface 7: a revocation withdraws only its attester's verdict and vetoes the admission of every
//! older one, so no attester can erase another's more severe verdict; a leaving attester may only
//! tighten what the registry answers.
extern crate std;

use soroban_sdk::{
    testutils::{Address as _, Events as _, Ledger as _, MockAuth, MockAuthInvoke},
    vec, Address, Event as _, IntoVal, Val,
};

use super::{Setup, ANY_AGE};
use crate::{
    testutils::{
        assert_contract_error, for_each_build, live_code, new_token, register_registry_with_delay,
        Build,
    },
    *,
};

const DAY: u64 = 86_400;

fn advance(s: &Setup, secs: u64) -> u64 {
    let t = s.env.ledger().timestamp() + secs;
    s.env.ledger().set_timestamp(t);
    t
}

/// Every read of the registry refuses `asset` as revoked at `revoked_at`.
fn assert_refused_as_revoked(s: &Setup, asset: &Address, revoked_at: u64, context: &str) {
    let c = s.client();
    assert_eq!(c.get_safety(asset), None, "{context}: get_safety");
    assert!(!c.is_safe(asset, &4, &ANY_AGE), "{context}: is_safe");
    assert!(
        !c.is_safe_masked(asset, &0, &ANY_AGE),
        "{context}: is_safe_masked"
    );
    assert_eq!(
        c.assess(asset, &4, &0, &ANY_AGE),
        Assessment::Revoked(revoked_at),
        "{context}: assess"
    );
    assert_eq!(
        c.assess_many(&vec![&s.env, asset.clone()], &4, &0, &ANY_AGE),
        vec![&s.env, Assessment::Revoked(revoked_at)],
        "{context}: assess_many"
    );
}

/// How the clear attester's verdict is withdrawn in the laundering attempt.
#[derive(Clone, Copy, Debug)]
enum Withdrawal {
    /// The clear attester revokes its own verdict.
    Own,
    /// The admin revokes it (`admin_revoke`).
    Admin,
}

/// X attests critical and Y clear (in `x_first` order), Y's verdict is withdrawn, Y attests clear
/// again in a later ledger: the asset stays refused as revoked until X writes again.
fn revocation_never_launders(build: Build, x_first: bool, withdrawal: Withdrawal) {
    let context = std::format!("{build:?} x_first={x_first} {withdrawal:?}");
    let s = Setup::new(build);
    let c = s.client();
    let x = s.attester.clone();
    let y = Address::generate(&s.env);
    c.add_attester(&y);
    let asset = new_token(&s.env);
    let code = live_code(&asset);
    let critical = |s: &Setup| c.attest(&x, &asset, &4, &MECH_BLOCKLISTED, &s.hash(4), &code);
    let clear = |s: &Setup| c.attest(&y, &asset, &0, &0, &s.hash(1), &code);
    if x_first {
        critical(&s);
        advance(&s, 1);
        clear(&s);
    } else {
        clear(&s);
        advance(&s, 1);
        critical(&s);
    }
    let x_verdict = c.get_safety_by(&asset, &x).unwrap();
    assert_eq!(c.get_safety(&asset), Some(x_verdict.clone()), "{context}");

    let revoked_at = advance(&s, 5);
    match withdrawal {
        Withdrawal::Own => {
            c.revoke(&y, &asset);
            s.assert_auth(&y, "revoke", (&y, &asset).into_val(&s.env));
        }
        Withdrawal::Admin => {
            c.admin_revoke(&y, &asset);
            s.assert_auth(&s.admin, "admin_revoke", (&y, &asset).into_val(&s.env));
        }
    }
    let revoked_by = match withdrawal {
        Withdrawal::Own => y.clone(),
        Withdrawal::Admin => s.admin.clone(),
    };
    assert_eq!(
        s.env.events().all(),
        [Revoked {
            asset: asset.clone(),
            attester: y.clone(),
            revoked_by,
            revoked_at,
        }
        .to_xdr(&s.env, &s.id)],
        "{context}"
    );
    // X's critical verdict is still there, and still leads: it refuses, as revoked.
    assert_refused_as_revoked(&s, &asset, revoked_at, &context);
    assert_eq!(c.get_safety_by(&asset, &y), None, "{context}");
    // X's verdict is older than the revocation: it no longer answers on its own.
    assert_eq!(c.get_safety_by(&asset, &x), None, "{context}");
    // Y withdrew only its own verdict: X's is still there to revoke.
    assert_contract_error(c.try_revoke(&y, &asset), Error::NotAttested, 5);

    // Y attests clear again, in the same ledger and in a later one: still refused, never admitted.
    clear(&s);
    s.assert_auth(
        &y,
        "attest",
        (&y, &asset, 0u32, 0u32, s.hash(1), code.clone()).into_val(&s.env),
    );
    assert_refused_as_revoked(&s, &asset, revoked_at, &context);
    advance(&s, 5);
    clear(&s);
    assert_refused_as_revoked(&s, &asset, revoked_at, &context);
    assert!(
        c.get_safety_by(&asset, &y).is_some(),
        "{context}: Y's newer verdict counts on its own"
    );
    assert!(
        c.is_safe_quorum(&asset, &vec![&s.env, y.clone()], &1, &3, &ANY_AGE),
        "{context}: a quorum of Y alone is Y's to name"
    );
    assert!(
        !c.is_safe_quorum(&asset, &vec![&s.env, x.clone()], &1, &4, &ANY_AGE),
        "{context}: X's older verdict admits nothing"
    );

    // X writes again: its verdict is newer than the revocation and answers.
    advance(&s, 1);
    critical(&s);
    let renewed = c.get_safety(&asset).unwrap();
    assert_eq!(renewed.severity, 4, "{context}");
    assert_eq!(
        c.assess(&asset, &4, &0, &ANY_AGE),
        Assessment::SeverityTooHigh(4),
        "{context}"
    );
    // X clears the asset itself: now both newer verdicts admit.
    advance(&s, 1);
    c.attest(&x, &asset, &0, &0, &s.hash(2), &code);
    assert!(c.is_safe(&asset, &0, &ANY_AGE), "{context}");
}

#[test]
fn a_revocation_withdraws_only_its_attesters_verdict_and_never_clears_a_more_severe_one() {
    for_each_build(|build| {
        for x_first in [true, false] {
            for withdrawal in [Withdrawal::Own, Withdrawal::Admin] {
                revocation_never_launders(build, x_first, withdrawal);
            }
        }
    });
}

#[test]
fn the_condemning_attesters_removal_lets_the_newer_verdict_answer() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let x = s.attester.clone();
        let y = Address::generate(&s.env);
        c.add_attester(&y);
        let asset = new_token(&s.env);
        let code = live_code(&asset);
        c.attest(&x, &asset, &4, &0, &s.hash(4), &code);
        c.attest(&y, &asset, &0, &0, &s.hash(1), &code);
        let revoked_at = advance(&s, 1);
        c.revoke(&y, &asset);
        advance(&s, 1);
        c.attest(&y, &asset, &0, &0, &s.hash(1), &code);
        assert_refused_as_revoked(&s, &asset, revoked_at, "before X's removal");
        // X leaves (this registry has no notice): Y's newer clear verdict is the one that counts.
        c.remove_attester(&x);
        let y_verdict = c.get_safety_by(&asset, &y).unwrap();
        assert_eq!(c.get_safety(&asset), Some(y_verdict.clone()));
        assert_eq!(
            c.assess(&asset, &0, &0, &ANY_AGE),
            Assessment::Safe(y_verdict)
        );
    });
}

#[test]
fn an_older_less_severe_verdict_is_vetoed_only_while_it_leads() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (x, y) = (s.attester.clone(), Address::generate(&s.env));
        c.add_attester(&y);
        let asset = new_token(&s.env);
        let code = live_code(&asset);
        c.attest(&x, &asset, &0, &0, &s.hash(1), &code);
        c.attest(&y, &asset, &1, &MECH_AUTH_REQUIRED, &s.hash(2), &code);
        let revoked_at = advance(&s, 1);
        c.revoke(&y, &asset);
        // X's older clear verdict leads alone: vetoed.
        assert_refused_as_revoked(&s, &asset, revoked_at, "X alone");
        advance(&s, 1);
        c.attest(&y, &asset, &1, &MECH_AUTH_REQUIRED, &s.hash(2), &code);
        // Y's newer, more severe verdict leads: it admits under a ceiling of 1.
        let y_verdict = c.get_safety_by(&asset, &y).unwrap();
        assert_eq!(c.get_safety(&asset), Some(y_verdict.clone()));
        assert_eq!(
            c.assess(&asset, &1, &0, &ANY_AGE),
            Assessment::Safe(y_verdict)
        );
    });
}

/// From now on only `who` has authorised, and only `function` with exactly `args`: a refusal that
/// follows is the contract's, not the host's authorisation check.
fn authorise_exactly(s: &Setup, who: &Address, function: &str, args: Vec<Val>) {
    s.env.mock_auths(&[MockAuth {
        address: who,
        invoke: &MockAuthInvoke {
            contract: &s.id,
            fn_name: function,
            args,
            sub_invokes: &[],
        },
    }]);
}

/// A registry with a day's notice whose attester (`s.attester`) is admitted and whose removal is
/// proposed; it holds a verdict of severity 1 on the returned asset.
fn leaving(build: Build) -> (Setup, Address) {
    let mut s = Setup::new(build);
    s.id = register_registry_with_delay(&s.env, build, &s.admin, DAY);
    let c = s.client();
    c.add_attester(&s.attester);
    advance(&s, DAY);
    c.apply_attester_change(&s.attester);
    let asset = new_token(&s.env);
    c.attest(
        &s.attester,
        &asset,
        &1,
        &MECH_AUTH_REQUIRED,
        &s.hash(1),
        &live_code(&asset),
    );
    c.remove_attester(&s.attester);
    assert!(c.pending_attester_change(&s.attester).is_some());
    (s, asset)
}

#[test]
fn a_leaving_attester_may_only_write_critical_verdicts() {
    for_each_build(|build| {
        let (s, asset) = leaving(build);
        let c = s.client();
        let a = &s.attester;
        let code = live_code(&asset);
        let before = c.get_safety(&asset);
        advance(&s, 60);
        // Each refused write is authorised by the attester for exactly that call: the refusal is
        // the registry's error 23, not the host's authorisation check.
        for severity in 0..4u32 {
            let flags = if severity >= 1 { MECH_AUTH_REQUIRED } else { 0 };
            let args = (a, &asset, severity, flags, s.hash(2), code.clone()).into_val(&s.env);
            authorise_exactly(&s, a, "attest", args);
            assert_contract_error(
                c.try_attest(a, &asset, &severity, &flags, &s.hash(2), &code),
                Error::AttesterLeaving,
                23,
            );
        }
        s.env.mock_all_auths();
        // The rules are checked first: an invalid verdict names its own error.
        assert_contract_error(
            c.try_attest(a, &asset, &5, &0, &s.hash(2), &code),
            Error::InvalidSeverity,
            3,
        );
        let batch = |severities: &[u32]| {
            let mut v = Vec::new(&s.env);
            for severity in severities {
                v.push_back(Attestation {
                    asset: asset.clone(),
                    severity: *severity,
                    flags: 0,
                    evidence_hash: s.hash(3),
                    code: code.clone(),
                });
            }
            v
        };
        authorise_exactly(&s, a, "attest_many", (a, batch(&[4, 0])).into_val(&s.env));
        assert_contract_error(
            c.try_attest_many(a, &batch(&[4, 0])),
            Error::AttesterLeaving,
            23,
        );
        authorise_exactly(&s, a, "revoke", (a, &asset).into_val(&s.env));
        assert_contract_error(c.try_revoke(a, &asset), Error::AttesterLeaving, 23);
        s.env.mock_all_auths();
        // Nothing was written.
        assert_eq!(c.get_safety(&asset), before);
        assert_eq!(c.get_revocation(&asset), None);

        // A critical verdict only tightens: accepted, by itself and in a batch.
        c.attest(a, &asset, &4, &MECH_BLOCKLISTED, &s.hash(4), &code);
        s.assert_auth(
            a,
            "attest",
            (a, &asset, 4u32, MECH_BLOCKLISTED, s.hash(4), code.clone()).into_val(&s.env),
        );
        assert_eq!(c.get_safety(&asset).unwrap().severity, 4);
        c.attest_many(a, &batch(&[4]));
        s.assert_auth(a, "attest_many", (a, batch(&[4])).into_val(&s.env));
        assert_eq!(
            c.assess(&asset, &4, &0, &ANY_AGE),
            Assessment::SeverityTooHigh(4)
        );

        // Once the removal is cancelled, it writes as before.
        c.cancel_attester_change(a);
        c.attest(a, &asset, &0, &0, &s.hash(5), &code);
        assert!(c.is_safe(&asset, &0, &ANY_AGE));
        c.remove_attester(a);
        advance(&s, DAY);
        c.apply_attester_change(a);
        assert_contract_error(
            c.try_attest(a, &asset, &4, &0, &s.hash(6), &code),
            Error::NotAttester,
            10,
        );
    });
}
