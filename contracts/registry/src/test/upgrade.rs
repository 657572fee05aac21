//! Upgrades with notice: the delay is fixed at construction (0 only when the constructor is told
//! so), `apply_upgrade` is refused before it has run and applied after, a proposal can be
//! cancelled, and each step emits its event.
extern crate std;

use std::{
    panic::{catch_unwind, AssertUnwindSafe},
    string::String,
};

use soroban_sdk::{
    testutils::{Address as _, Events as _, Ledger as _},
    Address, BytesN, Event as _, IntoVal,
};

use super::{assert_auth_refused, Setup};
use crate::{
    testutils::{
        assert_contract_error, for_each_build, live_code, new_env_mocking_all_auths, new_token,
        register_registry_with_delay, registry_wasm, Build,
    },
    *,
};

const WEEK: u64 = 7 * 86_400;

fn with_delay(build: Build, delay: u64) -> Setup {
    let mut s = Setup::new(build);
    s.id = register_registry_with_delay(&s.env, build, &s.admin, delay);
    // The admission waits for the same notice as an upgrade.
    s.client().add_attester(&s.attester);
    let now = s.env.ledger().timestamp();
    s.env.ledger().set_timestamp(now + delay);
    s.client().apply_attester_change(&s.attester);
    s
}

fn upload(s: &Setup) -> BytesN<32> {
    s.env.deployer().upload_contract_wasm(registry_wasm())
}

/// The host's message when deployment panics (a constructor error aborts `register`), or
/// "deployed", for a registry under a fresh admin with this delay and consent.
fn register_panic(build: Build, delay: u64, allow_instant_upgrade: bool) -> String {
    let env = new_env_mocking_all_auths();
    let args = (Address::generate(&env), delay, allow_instant_upgrade);
    let outcome = catch_unwind(AssertUnwindSafe(|| match build {
        Build::Native => env.register(SafetyRegistry, args),
        Build::Wasm => env.register(registry_wasm(), args),
    }));
    match outcome {
        Ok(_) => String::from("deployed"),
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| String::from(*s)))
            .unwrap_or_default(),
    }
}

#[test]
fn a_zero_or_short_notice_needs_the_constructors_explicit_consent() {
    for_each_build(|build| {
        let refused = register_panic(build, 0, false);
        assert!(
            refused.contains("Error(Contract, #12)"),
            "{build:?}: {refused}"
        );
        assert_eq!(register_panic(build, 0, true), "deployed");
        assert_eq!(register_panic(build, WEEK, false), "deployed");
        // A notice below one hour needs the same consent.
        let short = register_panic(build, MIN_NOTICE_SECS - 1, false);
        assert!(short.contains("Error(Contract, #12)"), "{build:?}: {short}");
        assert_eq!(register_panic(build, MIN_NOTICE_SECS - 1, true), "deployed");
        assert_eq!(register_panic(build, MIN_NOTICE_SECS, false), "deployed");
        let s = with_delay(build, WEEK);
        assert_eq!(s.client().upgrade_delay_secs(), WEEK, "{build:?}");
        assert_eq!(s.client().pending_upgrade(), None);
        assert_eq!(Setup::new(build).client().upgrade_delay_secs(), 0);
    });
}

#[test]
fn upgrade_is_refused_before_the_delay_and_applied_after() {
    for_each_build(|build| {
        let s = with_delay(build, WEEK);
        let c = s.client();
        let asset = new_token(&s.env);
        c.attest(&s.attester, &asset, &1, &1, &s.hash(1), &live_code(&asset));
        let hash = upload(&s);
        assert_contract_error(c.try_apply_upgrade(), Error::NoPendingUpgrade, 13);

        s.env.set_auths(&[]);
        assert_auth_refused(c.try_propose_upgrade(&hash));
        s.env.mock_all_auths();

        let proposed_at = s.env.ledger().timestamp();
        c.propose_upgrade(&hash);
        s.assert_auth(&s.admin, "propose_upgrade", (&hash,).into_val(&s.env));
        let applicable_at = proposed_at + WEEK;
        assert_eq!(
            s.env.events().all(),
            [UpgradeProposed {
                wasm_hash: hash.clone(),
                applicable_at,
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(
            c.pending_upgrade(),
            Some(PendingUpgrade {
                wasm_hash: hash.clone(),
                proposed_at,
                applicable_at,
            })
        );

        s.env.ledger().set_timestamp(applicable_at - 1);
        assert_contract_error(c.try_apply_upgrade(), Error::UpgradeNotDue, 14);
        s.env.set_auths(&[]);
        s.env.ledger().set_timestamp(applicable_at);
        assert_auth_refused(c.try_apply_upgrade());
        s.env.mock_all_auths();

        c.apply_upgrade();
        s.assert_auth(&s.admin, "apply_upgrade", ().into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [Upgraded {
                wasm_hash: hash.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        // Now running the uploaded WASM, with the same state.
        assert_eq!(c.pending_upgrade(), None, "{build:?}");
        assert_eq!(c.get_safety(&asset).unwrap().severity, 1, "{build:?}");
        assert_eq!(c.admin(), s.admin);
        assert_eq!(c.upgrade_delay_secs(), WEEK);
        assert!(c.is_attester(&s.attester));
        assert_contract_error(c.try_apply_upgrade(), Error::NoPendingUpgrade, 13);
    });
}

#[test]
fn a_proposed_upgrade_can_be_cancelled_or_replaced() {
    for_each_build(|build| {
        let s = with_delay(build, WEEK);
        let c = s.client();
        let hash = upload(&s);
        assert_contract_error(c.try_cancel_upgrade(), Error::NoPendingUpgrade, 13);
        c.propose_upgrade(&hash);

        s.env.set_auths(&[]);
        assert_auth_refused(c.try_cancel_upgrade());
        s.env.mock_all_auths();

        c.cancel_upgrade();
        s.assert_auth(&s.admin, "cancel_upgrade", ().into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [UpgradeCancelled {
                wasm_hash: hash.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(c.pending_upgrade(), None, "{build:?}");
        s.env
            .ledger()
            .set_timestamp(s.env.ledger().timestamp() + WEEK);
        assert_contract_error(c.try_apply_upgrade(), Error::NoPendingUpgrade, 13);
        assert_contract_error(c.try_cancel_upgrade(), Error::NoPendingUpgrade, 13);

        // A new proposal restarts the clock.
        c.propose_upgrade(&hash);
        let first = c.pending_upgrade().unwrap();
        s.env.ledger().set_timestamp(first.proposed_at + WEEK / 2);
        c.propose_upgrade(&hash);
        let second = c.pending_upgrade().unwrap();
        assert_eq!(second.applicable_at, first.proposed_at + WEEK / 2 + WEEK);
        s.env.ledger().set_timestamp(first.applicable_at);
        assert_contract_error(c.try_apply_upgrade(), Error::UpgradeNotDue, 14);
    });
}

#[test]
fn a_local_registry_without_notice_applies_at_once() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let hash = upload(&s);
        c.propose_upgrade(&hash);
        assert_eq!(
            c.pending_upgrade().unwrap().applicable_at,
            s.env.ledger().timestamp()
        );
        c.apply_upgrade();
        assert_eq!(c.pending_upgrade(), None, "{build:?}");
    });
}
