//! Per-attester verdicts (interface 4): each attester writes and revokes only its own, `get_safety`
//! answers the most recent one by a current attester, removal stops counting at read time, the
//! admin revokes any attester's verdict, `is_safe_quorum` and `assess`.
extern crate std;

use soroban_sdk::{
    testutils::{Address as _, Events as _, Ledger as _, MockAuth, MockAuthInvoke},
    vec, Address, Event as _, IntoVal, Vec,
};

use super::{assert_auth_refused, Setup, ANY_AGE};
use crate::{
    testutils::{assert_contract_error, for_each_build, live_code, new_token},
    *,
};

/// A setup with a second admitted attester, `b` (`s.attester` is `a`).
fn two_attesters(s: &Setup) -> Address {
    let b = Address::generate(&s.env);
    s.client().add_attester(&b);
    b
}

fn advance(s: &Setup, secs: u64) -> u64 {
    let t = s.env.ledger().timestamp() + secs;
    s.env.ledger().set_timestamp(t);
    t
}

#[test]
fn two_attesters_disagree_and_the_more_severe_answers_whichever_wrote_last() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (a, b) = (s.attester.clone(), two_attesters(&s));
        let asset = new_token(&s.env);
        let code = live_code(&asset);
        let t0 = s.env.ledger().timestamp();
        c.attest(&a, &asset, &0, &0, &s.hash(1), &live_code(&asset));
        let t1 = advance(&s, 10);
        c.attest(
            &b,
            &asset,
            &3,
            &MECH_AUTH_CLAWBACK_ENABLED,
            &s.hash(2),
            &live_code(&asset),
        );
        s.assert_auth(
            &b,
            "attest",
            (
                &b,
                &asset,
                3u32,
                MECH_AUTH_CLAWBACK_ENABLED,
                s.hash(2),
                code.clone(),
            )
                .into_val(&s.env),
        );
        // The event names its writer as a topic and carries the evidence hash.
        assert_eq!(
            s.env.events().all(),
            [Attested {
                asset: asset.clone(),
                attester: b.clone(),
                severity: 3,
                flags: MECH_AUTH_CLAWBACK_ENABLED,
                evidence_hash: s.hash(2),
                attested_at: t1,
            }
            .to_xdr(&s.env, &s.id)]
        );
        let a_verdict = Safety {
            severity: 0,
            flags: 0,
            evidence_hash: s.hash(1),
            attested_at: t0,
        };
        let b_verdict = Safety {
            severity: 3,
            flags: MECH_AUTH_CLAWBACK_ENABLED,
            evidence_hash: s.hash(2),
            attested_at: t1,
        };
        assert_eq!(
            c.get_safety_by(&asset, &a),
            Some(a_verdict.clone()),
            "{build:?}"
        );
        assert_eq!(
            c.get_safety_by(&asset, &b),
            Some(b_verdict.clone()),
            "{build:?}"
        );
        assert_eq!(
            c.get_safety(&asset),
            Some(b_verdict.clone()),
            "{build:?}: the more severe"
        );
        assert!(
            !c.is_safe(&asset, &2, &ANY_AGE),
            "{build:?}: judged on the more severe"
        );

        // A (lax, or slower) writes a clear verdict after B's: B's still answers.
        let t2 = advance(&s, 10);
        c.attest(&a, &asset, &0, &0, &s.hash(3), &live_code(&asset));
        assert_eq!(c.get_safety_by(&asset, &a).unwrap().attested_at, t2);
        assert_eq!(
            c.get_safety(&asset),
            Some(b_verdict.clone()),
            "{build:?}: the more severe, though older"
        );
        assert!(!c.is_safe(&asset, &2, &ANY_AGE), "{build:?}");
        assert!(!c.is_safe_masked(&asset, &MECH_AUTH_CLAWBACK_ENABLED, &ANY_AGE));
        assert_eq!(
            c.assess(&asset, &2, &0, &ANY_AGE),
            Assessment::SeverityTooHigh(3)
        );
        // The age limit applies to the verdict that answers: B's is 10 s older than A's.
        assert_eq!(c.assess(&asset, &3, &0, &9), Assessment::Stale(10));
        // A tie in severity goes to the most recent.
        let t3 = advance(&s, 10);
        c.attest(
            &a,
            &asset,
            &3,
            &MECH_AUTH_CLAWBACK_ENABLED,
            &s.hash(5),
            &live_code(&asset),
        );
        assert_eq!(c.get_safety(&asset).unwrap().attested_at, t3, "{build:?}");
        advance(&s, 10);
        c.attest(
            &b,
            &asset,
            &3,
            &MECH_AUTH_CLAWBACK_ENABLED,
            &s.hash(2),
            &live_code(&asset),
        );
        assert_eq!(c.get_safety(&asset).unwrap().evidence_hash, s.hash(2));

        // Nobody writes as another: A's signature does not stand for B.
        s.env.mock_auths(&[MockAuth {
            address: &a,
            invoke: &MockAuthInvoke {
                contract: &s.id,
                fn_name: "attest",
                args: (&b, &asset, 0u32, 0u32, s.hash(4), live_code(&asset)).into_val(&s.env),
                sub_invokes: &[],
            },
        }]);
        assert_auth_refused(c.try_attest(&b, &asset, &0, &0, &s.hash(4), &live_code(&asset)));
        s.env.mock_all_auths();
        assert_eq!(
            c.get_safety_by(&asset, &b).unwrap().severity,
            3,
            "{build:?}"
        );
    });
}

#[test]
fn a_revocation_vetoes_every_earlier_verdict_until_a_newer_one() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (a, b) = (s.attester.clone(), two_attesters(&s));
        let asset = new_token(&s.env);
        c.attest(
            &a,
            &asset,
            &1,
            &MECH_AUTH_REQUIRED,
            &s.hash(1),
            &live_code(&asset),
        );
        let a_verdict = c.get_safety(&asset).unwrap();
        advance(&s, 10);
        c.attest(
            &b,
            &asset,
            &2,
            &MECH_AUTH_REVOCABLE,
            &s.hash(2),
            &live_code(&asset),
        );
        let b_verdict = c.get_safety(&asset).unwrap();

        let revoked_at = advance(&s, 5);
        c.revoke(&b, &asset);
        s.assert_auth(&b, "revoke", (&b, &asset).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [Revoked {
                asset: asset.clone(),
                attester: b.clone(),
                revoked_by: b.clone(),
                revoked_at,
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(c.get_safety_by(&asset, &b), None);
        // A's older verdict no longer admits: B's revocation says the asset changed since.
        assert_eq!(c.get_safety_by(&asset, &a), None, "{build:?}");
        assert_eq!(c.get_safety(&asset), None, "{build:?}");
        assert!(!c.is_safe(&asset, &4, &ANY_AGE));
        assert!(!c.is_safe_quorum(&asset, &vec![&s.env, a.clone()], &1, &4, &ANY_AGE));
        assert_eq!(
            c.assess(&asset, &4, &0, &ANY_AGE),
            Assessment::Revoked(revoked_at)
        );
        assert_eq!(
            c.get_revocation(&asset),
            Some(Revocation {
                revoked_at,
                attester: b.clone(),
                revoked: b_verdict,
            })
        );
        // B's verdict is gone; A's is still stored (it keeps its power to refuse).
        assert_contract_error(c.try_revoke(&b, &asset), Error::NotAttested, 5);
        // A verdict written in the revocation's ledger is taken as older: still refused.
        c.attest(
            &a,
            &asset,
            &1,
            &MECH_AUTH_REQUIRED,
            &s.hash(3),
            &live_code(&asset),
        );
        assert_eq!(c.get_safety(&asset), None, "{build:?}");
        assert_eq!(
            c.assess(&asset, &4, &0, &ANY_AGE),
            Assessment::Revoked(revoked_at)
        );
        // A newer verdict, in a later ledger, counts again.
        let renewed_at = advance(&s, 1);
        c.attest(
            &a,
            &asset,
            &1,
            &MECH_AUTH_REQUIRED,
            &s.hash(3),
            &live_code(&asset),
        );
        let renewed = Safety {
            evidence_hash: s.hash(3),
            attested_at: renewed_at,
            ..a_verdict
        };
        assert_eq!(c.get_safety(&asset), Some(renewed), "{build:?}");
    });
}

#[test]
fn removal_stops_counting_at_read_time_and_readmission_does_not_revive() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (a, b) = (s.attester.clone(), two_attesters(&s));
        let asset = new_token(&s.env);
        c.attest(&a, &asset, &0, &0, &s.hash(1), &live_code(&asset));
        let a_verdict = c.get_safety(&asset).unwrap();
        advance(&s, 10);
        c.attest(
            &b,
            &asset,
            &4,
            &MECH_BLOCKLISTED,
            &s.hash(2),
            &live_code(&asset),
        );
        assert!(!c.is_safe(&asset, &3, &ANY_AGE));

        c.remove_attester(&b);
        assert_eq!(
            c.get_safety(&asset),
            Some(a_verdict.clone()),
            "{build:?}: B's verdict no longer counts"
        );
        assert!(c.is_safe(&asset, &0, &ANY_AGE), "{build:?}");
        assert!(c.is_safe_masked(&asset, &CAPABILITY_MASK, &ANY_AGE));
        assert_eq!(
            c.assess(&asset, &0, &0, &ANY_AGE),
            Assessment::Safe(a_verdict)
        );
        // B's verdict does not count, so no read returns it (its event is the audit trail).
        assert_eq!(c.get_safety_by(&asset, &b), None, "{build:?}");
        let both = vec![&s.env, a.clone(), b.clone()];
        assert!(
            !c.is_safe_quorum(&asset, &both, &2, &4, &ANY_AGE),
            "{build:?}"
        );

        c.remove_attester(&a);
        assert_eq!(c.get_safety(&asset), None, "{build:?}: no current attester");
        assert!(!c.is_safe(&asset, &4, &ANY_AGE));
        assert_eq!(c.assess(&asset, &4, &0, &ANY_AGE), Assessment::NotAttested);

        // Re-admitted later: A's earlier verdict stays void until A writes again.
        advance(&s, 10);
        c.add_attester(&a);
        assert_eq!(c.get_safety(&asset), None, "{build:?}");
        assert!(!c.is_safe_quorum(&asset, &vec![&s.env, a.clone()], &1, &4, &ANY_AGE));
        c.attest(&a, &asset, &0, &0, &s.hash(3), &live_code(&asset));
        assert!(c.is_safe(&asset, &0, &ANY_AGE), "{build:?}");
    });
}

#[test]
fn admin_revokes_any_attesters_verdict_and_the_event_says_so() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (a, b) = (s.attester.clone(), two_attesters(&s));
        let asset = new_token(&s.env);
        c.attest(&a, &asset, &0, &0, &s.hash(1), &live_code(&asset));
        advance(&s, 1);
        c.attest(&b, &asset, &0, &0, &s.hash(2), &live_code(&asset));
        assert_contract_error(
            c.try_admin_revoke(&b, &Address::generate(&s.env)),
            Error::NotAttested,
            5,
        );

        // Nobody but the admin: not even the attester whose verdict it is.
        s.env.mock_auths(&[MockAuth {
            address: &b,
            invoke: &MockAuthInvoke {
                contract: &s.id,
                fn_name: "admin_revoke",
                args: (&b, &asset).into_val(&s.env),
                sub_invokes: &[],
            },
        }]);
        assert_auth_refused(c.try_admin_revoke(&b, &asset));
        s.env.mock_all_auths();

        // Works on an attester already removed (the emergency case).
        c.remove_attester(&b);
        let revoked_at = advance(&s, 1);
        c.admin_revoke(&b, &asset);
        s.assert_auth(&s.admin, "admin_revoke", (&b, &asset).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [Revoked {
                asset: asset.clone(),
                attester: b.clone(),
                revoked_by: s.admin.clone(),
                revoked_at,
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(c.get_safety_by(&asset, &b), None, "{build:?}");
        assert_eq!(c.get_revocation(&asset).unwrap().attester, b);
        // Like any revocation, it voids A's earlier verdict too.
        assert_eq!(c.get_safety_by(&asset, &a), None, "{build:?}");
        assert_eq!(c.get_safety(&asset), None);
    });
}

#[test]
fn quorum_holds_at_exactly_the_threshold_and_refuses_bad_lists() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (a, b) = (s.attester.clone(), two_attesters(&s));
        let third = two_attesters(&s);
        let asset = new_token(&s.env);
        c.attest(
            &a,
            &asset,
            &1,
            &MECH_AUTH_REQUIRED,
            &s.hash(1),
            &live_code(&asset),
        );
        c.attest(
            &b,
            &asset,
            &2,
            &MECH_AUTH_REVOCABLE,
            &s.hash(2),
            &live_code(&asset),
        );
        c.attest(
            &third,
            &asset,
            &3,
            &MECH_AUTH_CLAWBACK_ENABLED,
            &s.hash(3),
            &live_code(&asset),
        );
        let all = vec![&s.env, a.clone(), b.clone(), third.clone()];
        // Ceiling 2: A and B agree, the third does not.
        assert!(
            c.is_safe_quorum(&asset, &all, &2, &2, &ANY_AGE),
            "{build:?}"
        );
        assert!(
            !c.is_safe_quorum(&asset, &all, &3, &2, &ANY_AGE),
            "{build:?}"
        );
        // Ceiling 1: only A.
        assert!(c.is_safe_quorum(&asset, &all, &1, &1, &ANY_AGE));
        assert!(!c.is_safe_quorum(&asset, &all, &2, &1, &ANY_AGE));
        // Ceiling 3: all three (clawback is allowed from high).
        assert!(c.is_safe_quorum(&asset, &all, &3, &3, &ANY_AGE));
        // Threshold 0, a threshold above the list, a duplicate: false whatever the verdicts.
        assert!(
            !c.is_safe_quorum(&asset, &all, &0, &3, &ANY_AGE),
            "{build:?}"
        );
        assert!(!c.is_safe_quorum(&asset, &all, &4, &3, &ANY_AGE));
        let twice = vec![&s.env, a.clone(), b.clone(), a.clone()];
        assert!(
            !c.is_safe_quorum(&asset, &twice, &1, &3, &ANY_AGE),
            "{build:?}"
        );
        // An unknown address counts as "no", never as a vote.
        let stranger = Address::generate(&s.env);
        let with_stranger = vec![&s.env, a.clone(), stranger.clone()];
        assert!(c.is_safe_quorum(&asset, &with_stranger, &1, &3, &ANY_AGE));
        assert!(
            !c.is_safe_quorum(&asset, &with_stranger, &2, &3, &ANY_AGE),
            "{build:?}"
        );
        // More than ten listed: false, even with a quorum inside.
        let mut eleven = all.clone();
        while eleven.len() <= MAX_QUORUM_ATTESTERS {
            eleven.push_back(Address::generate(&s.env));
        }
        assert!(
            !c.is_safe_quorum(&asset, &eleven, &1, &3, &ANY_AGE),
            "{build:?}"
        );
        eleven.pop_back();
        assert!(
            c.is_safe_quorum(&asset, &eleven, &1, &3, &ANY_AGE),
            "{build:?}: ten is allowed"
        );
        // Freshness per verdict, inclusive.
        let t0 = s.env.ledger().timestamp();
        s.env.ledger().set_timestamp(t0 + 100);
        assert!(c.is_safe_quorum(&asset, &all, &2, &2, &100));
        s.env.ledger().set_timestamp(t0 + 101);
        assert!(!c.is_safe_quorum(&asset, &all, &1, &2, &100), "{build:?}");
        // Critical never counts, whatever the ceiling.
        c.attest(&a, &asset, &4, &0, &s.hash(4), &live_code(&asset));
        assert!(!c.is_safe_quorum(&asset, &vec![&s.env, a.clone()], &1, &u32::MAX, &ANY_AGE));
        // Reads write nothing.
        assert_eq!(s.env.cost_estimate().resources().write_entries, 0);
    });
}

#[test]
fn assess_returns_each_variant_at_its_boundary() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        assert_eq!(
            c.assess(&asset, &3, &0, &ANY_AGE),
            Assessment::NotAttested,
            "{build:?}"
        );

        c.attest(
            &s.attester,
            &asset,
            &2,
            &(MECH_AUTH_REVOCABLE | MECH_DOMAIN_UNVERIFIED),
            &s.hash(1),
            &live_code(&asset),
        );
        let verdict = c.get_safety(&asset).unwrap();
        let t0 = verdict.attested_at;
        // Age: the window itself admits, one second more is stale (with the age); 0 disables.
        s.env.ledger().set_timestamp(t0 + 60);
        assert_eq!(
            c.assess(&asset, &2, &0, &60),
            Assessment::Safe(verdict.clone())
        );
        s.env.ledger().set_timestamp(t0 + 61);
        assert_eq!(
            c.assess(&asset, &2, &0, &60),
            Assessment::Stale(61),
            "{build:?}"
        );
        assert_eq!(
            c.assess(&asset, &2, &0, &ANY_AGE),
            Assessment::Safe(verdict.clone())
        );
        // Severity: at the ceiling admits, one below refuses with the verdict's severity.
        assert_eq!(
            c.assess(&asset, &1, &0, &ANY_AGE),
            Assessment::SeverityTooHigh(2)
        );
        // Mechanics: the forbidden bits the verdict carries.
        assert_eq!(
            c.assess(
                &asset,
                &3,
                &(MECH_AUTH_REVOCABLE | MECH_AUTH_CLAWBACK_ENABLED),
                &ANY_AGE
            ),
            Assessment::ForbiddenMechanics(MECH_AUTH_REVOCABLE),
            "{build:?}"
        );
        assert_eq!(
            c.assess(
                &asset,
                &3,
                &!(MECH_AUTH_REVOCABLE | MECH_DOMAIN_UNVERIFIED),
                &ANY_AGE
            ),
            Assessment::Safe(verdict.clone())
        );
        // Order: stale before severity before mechanics.
        assert_eq!(c.assess(&asset, &0, &u32::MAX, &1), Assessment::Stale(61));
        assert_eq!(
            c.assess(&asset, &0, &u32::MAX, &ANY_AGE),
            Assessment::SeverityTooHigh(2)
        );

        // Critical is refused by any ceiling.
        c.attest(&s.attester, &asset, &4, &0, &s.hash(2), &live_code(&asset));
        assert_eq!(
            c.assess(&asset, &u32::MAX, &0, &ANY_AGE),
            Assessment::SeverityTooHigh(4)
        );

        let revoked_at = advance(&s, 1);
        c.revoke(&s.attester, &asset);
        assert_eq!(
            c.assess(&asset, &4, &0, &ANY_AGE),
            Assessment::Revoked(revoked_at),
            "{build:?}"
        );
    });
}

#[test]
fn the_attester_set_is_capped() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let mut added = std::vec![s.attester.clone()];
        while added.len() < MAX_ATTESTERS as usize {
            added.push(two_attesters(&s));
        }
        let one_more = Address::generate(&s.env);
        assert_contract_error(c.try_add_attester(&one_more), Error::TooManyAttesters, 15);
        assert!(!c.is_attester(&one_more), "{build:?}");
        c.remove_attester(&added[3]);
        c.add_attester(&one_more);
        s.assert_auth(&s.admin, "add_attester", (&one_more,).into_val(&s.env));
        assert!(c.is_attester(&one_more));
        // The fallback reads every current attester: the sixteenth-added still counts.
        let asset = new_token(&s.env);
        c.attest(&one_more, &asset, &0, &0, &s.hash(1), &live_code(&asset));
        advance(&s, 1);
        c.attest(&added[0], &asset, &1, &0, &s.hash(2), &live_code(&asset));
        c.remove_attester(&added[0]);
        assert_eq!(
            c.get_safety(&asset).unwrap().evidence_hash,
            s.hash(1),
            "{build:?}"
        );
    });
}

#[test]
fn a_full_batch_of_one_attester_leaves_the_others_alone() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let b = two_attesters(&s);
        let asset = new_token(&s.env);
        c.attest(&b, &asset, &0, &0, &s.hash(9), &live_code(&asset));
        advance(&s, 1);
        let mut items = Vec::new(&s.env);
        for _ in 0..MAX_BATCH_SIZE {
            items.push_back(Attestation {
                asset: asset.clone(),
                severity: 3,
                flags: MECH_AUTH_CLAWBACK_ENABLED,
                evidence_hash: s.hash(1),
                code: live_code(&asset),
            });
        }
        c.attest_many(&s.attester, &items);
        assert_eq!(s.env.events().all().events().len(), MAX_BATCH_SIZE as usize);
        assert_eq!(c.get_safety(&asset).unwrap().severity, 3, "{build:?}");
        assert_eq!(
            c.get_safety_by(&asset, &b).unwrap().evidence_hash,
            s.hash(9)
        );
    });
}

#[test]
fn assess_many_answers_each_asset_in_order_and_takes_at_most_ten() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (clear, never, revoked, high) = (
            new_token(&s.env),
            new_token(&s.env),
            new_token(&s.env),
            new_token(&s.env),
        );
        c.attest(&s.attester, &clear, &0, &0, &s.hash(1), &live_code(&clear));
        c.attest(
            &s.attester,
            &revoked,
            &0,
            &0,
            &s.hash(2),
            &live_code(&revoked),
        );
        let revoked_at = advance(&s, 1);
        c.revoke(&s.attester, &revoked);
        c.attest(
            &s.attester,
            &high,
            &3,
            &MECH_AUTH_CLAWBACK_ENABLED,
            &s.hash(3),
            &live_code(&high),
        );
        let assets = vec![
            &s.env,
            clear.clone(),
            never.clone(),
            revoked.clone(),
            high.clone(),
        ];
        let answers = c.assess_many(&assets, &2, &0, &ANY_AGE);
        assert_eq!(
            answers,
            vec![
                &s.env,
                Assessment::Safe(c.get_safety(&clear).unwrap()),
                Assessment::NotAttested,
                Assessment::Revoked(revoked_at),
                Assessment::SeverityTooHigh(3),
            ],
            "{build:?}"
        );
        // Each answer is what `assess` answers alone, under the same policy.
        for (asset, answer) in assets.iter().zip(answers.iter()) {
            assert_eq!(c.assess(&asset, &2, &0, &ANY_AGE), answer);
        }
        assert_eq!(
            c.assess_many(&Vec::new(&s.env), &2, &0, &ANY_AGE),
            Vec::new(&s.env)
        );
        let mut ten = Vec::new(&s.env);
        while ten.len() < MAX_ASSESS_ASSETS {
            ten.push_back(clear.clone());
        }
        assert_eq!(c.assess_many(&ten, &2, &0, &ANY_AGE).len(), 10);
        ten.push_back(never);
        assert_contract_error(
            c.try_assess_many(&ten, &2, &0, &ANY_AGE),
            Error::TooManyAssets,
            17,
        );
        assert_eq!(s.env.cost_estimate().resources().write_entries, 0);
    });
}
