//! The consumer test kit (`testutils::TestRegistry`): every verdict it puts in place is what the
//! registry stores, it refuses exactly what `attest` refuses, and it leaves ledger time and the
//! test's auth set-up as they were.
extern crate std;

use soroban_sdk::{
    testutils::{
        Address as _, AuthorizedFunction, AuthorizedInvocation, Events as _, Ledger as _, MockAuth,
        MockAuthInvoke,
    },
    Address, BytesN, Env, Event as _, IntoVal, InvokeError, Symbol,
};

use super::ANY_AGE;
use crate::testutils::{
    advance_ledger_time, for_each_build, label, live_code, new_env, new_token, registry_wasm,
    Build, TestRegistry, Verdict, TEST_EVIDENCE_HASH,
};
use crate::*;

const NOW: u64 = 1_786_771_651;

fn kit(env: &Env, build: Build) -> TestRegistry {
    env.ledger().set_timestamp(NOW);
    match build {
        Build::Native => TestRegistry::native(env),
        Build::Wasm => TestRegistry::from_wasm(env, registry_wasm()),
    }
}

/// A kit `Env` (no mocked auth) at `NOW`, the kit's registry in it, and an asset nobody attested yet.
fn setup(build: Build) -> (Env, TestRegistry, Address) {
    let env = new_env();
    let registry = kit(&env, build);
    let asset = new_token(&env);
    (env, registry, asset)
}

#[test]
fn deploys_with_an_admin_and_an_admitted_attester() {
    for_each_build(|build| {
        let env = new_env();
        let registry = kit(&env, build);
        let c = registry.client();
        assert_eq!(&c.admin(), registry.admin());
        assert!(c.is_attester(registry.attester()));
        assert!(!c.is_attester(registry.admin()));
        let other = Address::generate(&env);
        assert_eq!(registry.add_attester(&other), Ok(()));
        assert!(c.is_attester(&other));
        assert_eq!(
            registry.add_attester(&other),
            Err(Error::AttesterExists),
            "{}",
            label(build)
        );
        assert_eq!(registry.remove_attester(&other), Ok(()));
        assert_eq!(registry.remove_attester(&other), Err(Error::NotAttester));
    });
}

#[test]
fn a_fresh_verdict_is_stored_as_written_and_emitted_by_the_kits_attester() {
    for_each_build(|build| {
        let (env, registry, asset) = setup(build);
        let verdict = Verdict::new(
            SEVERITY_MEDIUM,
            MECH_AUTH_REVOCABLE | MECH_DOMAIN_UNVERIFIED,
        );
        let written = registry.put(&asset, &verdict);
        let expected = Safety {
            severity: 2,
            flags: 18,
            evidence_hash: BytesN::from_array(&env, &TEST_EVIDENCE_HASH),
            attested_at: NOW,
        };
        assert_eq!(written, expected, "{}", label(build));
        assert_eq!(
            env.events().all(),
            [Attested {
                asset: asset.clone(),
                attester: registry.attester().clone(),
                severity: 2,
                flags: 18,
                evidence_hash: BytesN::from_array(&env, &TEST_EVIDENCE_HASH),
                attested_at: NOW,
            }
            .to_xdr(&env, registry.address())]
        );
        assert_eq!(registry.client().get_safety(&asset), Some(expected));
        assert_eq!(env.ledger().timestamp(), NOW);
    });
}

#[test]
fn an_aged_verdict_is_stamped_that_long_ago_and_time_is_restored() {
    for_each_build(|build| {
        let (env, registry, asset) = setup(build);
        let hash = [9; 32];
        let written = registry.put(&asset, &Verdict::clear().aged(3_600).with_evidence(hash));
        assert_eq!(written.attested_at, NOW - 3_600, "{}", label(build));
        assert_eq!(written.evidence_hash, BytesN::from_array(&env, &hash));
        assert_eq!(registry.client().get_safety(&asset), Some(written));
        assert_eq!(env.ledger().timestamp(), NOW);
        assert!(registry.client().is_safe(&asset, &0, &3_600));
        assert!(!registry.client().is_safe(&asset, &0, &3_599));
    });
}

#[test]
fn a_revoked_verdict_reads_as_absent_and_leaves_its_trace() {
    for_each_build(|build| {
        let (_env, registry, asset) = setup(build);
        let written = registry.put(&asset, &Verdict::clear().aged(60).revoked());
        let c = registry.client();
        assert_eq!(c.get_safety(&asset), None, "{}", label(build));
        assert!(!c.is_safe(&asset, &4, &ANY_AGE));
        assert_eq!(
            c.get_revocation(&asset),
            Some(Revocation {
                revoked_at: NOW,
                attester: registry.attester().clone(),
                revoked: written,
            })
        );
    });
}

/// Every severity and a spread of flags (each single bit up to 12, the top bit, the masks): the
/// kit's answer is the registry's own `attest` answer, and a refusal writes nothing.
#[test]
fn the_kit_refuses_exactly_what_attest_refuses() {
    let mut flag_values: std::vec::Vec<u32> = (0..=12).map(|bit| 1 << bit).collect();
    flag_values.extend([0, 1 << 31, CAPABILITY_MASK, KNOWN_FLAGS_MASK]);
    for_each_build(|build| {
        let env = new_env();
        let registry = kit(&env, build);
        let c = registry.client();
        let hash = BytesN::from_array(&env, &TEST_EVIDENCE_HASH);
        for severity in 0..=5 {
            for &flags in &flag_values {
                let (through_kit, direct) = (new_token(&env), new_token(&env));
                let kit_answer = registry
                    .try_put(&through_kit, &Verdict::new(severity, flags))
                    .map(|_| ());
                // The same write, called directly, authorised by the attester for exactly it.
                let code = live_code(&direct);
                let args = (registry.attester(), &direct, severity, flags, &hash, &code);
                env.mock_auths(&[MockAuth {
                    address: registry.attester(),
                    invoke: &MockAuthInvoke {
                        contract: registry.address(),
                        fn_name: "attest",
                        args: args.into_val(&env),
                        sub_invokes: &[],
                    },
                }]);
                let contract_answer = c
                    .try_attest(
                        registry.attester(),
                        &direct,
                        &severity,
                        &flags,
                        &hash,
                        &code,
                    )
                    .map(|ok| ok.unwrap())
                    .map_err(|e| e.unwrap());
                assert_eq!(
                    kit_answer,
                    contract_answer,
                    "{}: severity {severity}, flags {flags:#x}",
                    label(build)
                );
                assert_eq!(
                    c.get_safety(&through_kit).is_some(),
                    kit_answer.is_ok(),
                    "a refused verdict writes nothing"
                );
            }
        }
    });
}

#[test]
fn set_age_and_advance_ledger_time_cross_the_staleness_boundary() {
    for_each_build(|build| {
        let (env, registry, asset) = setup(build);
        registry.put(&asset, &Verdict::clear().aged(10));
        let c = registry.client();
        registry.set_age(&asset, 86_400);
        assert_eq!(env.ledger().timestamp(), NOW - 10 + 86_400);
        assert!(c.is_safe(&asset, &0, &86_400), "{}", label(build));
        advance_ledger_time(&env, 1);
        assert!(!c.is_safe(&asset, &0, &86_400));
        registry.set_age(&asset, 0);
        assert!(c.is_safe(&asset, &0, &1));
    });
}

/// The kit writes from its own addresses' contract frames, so it needs no mocked auth and turns
/// none on: `new_env` mocks nothing, and after a `put` a write under the test's (empty) auth
/// set-up is still refused.
#[test]
fn works_without_mocked_auths_and_leaves_the_auth_set_up_alone() {
    for_each_build(|build| {
        let env = new_env();
        let registry = kit(&env, build);
        let asset = new_token(&env);
        registry.put(
            &asset,
            &Verdict::new(SEVERITY_CRITICAL, MECH_SEP41_VIOLATION),
        );
        assert_eq!(
            registry.client().get_safety(&asset).map(|s| s.severity),
            Some(SEVERITY_CRITICAL),
            "{}",
            label(build)
        );
        let hash = BytesN::from_array(&env, &[1; 32]);
        let unauthorised = registry.client().try_attest(
            registry.attester(),
            &asset,
            &0,
            &0,
            &hash,
            &live_code(&asset),
        );
        assert!(
            matches!(unauthorised, Err(Err(InvokeError::Abort))),
            "{unauthorised:?}"
        );
    });
}

#[test]
#[should_panic(expected = "a verdict aged 100 s needs a ledger time of at least that; it is 99")]
fn an_age_beyond_ledger_time_names_the_fix() {
    let env = new_env();
    env.ledger().set_timestamp(99);
    let registry = TestRegistry::native(&env);
    registry.put(&new_token(&env), &Verdict::clear().aged(100));
}

#[test]
fn an_upgraded_token_is_refused_by_every_read() {
    for_each_build(|build| {
        let (env, registry, _) = setup(build);
        // A contract registered natively runs under a stand-in WASM hash: a token like any other.
        let token = crate::testutils::new_custom_token(&env);
        let written = registry.put(&token, &Verdict::clear());
        assert_eq!(registry.client().get_safety(&token), Some(written));
        crate::testutils::upgrade_code(&env, &token, registry_wasm());
        let c = registry.client();
        assert_eq!(c.get_safety(&token), None, "{}", label(build));
        assert!(!c.is_safe(&token, &0, &ANY_AGE));
        assert_eq!(c.assess(&token, &0, &0, &ANY_AGE), Assessment::CodeChanged);
        // Attested again, bound to the new code, it is admitted again.
        registry.put(&token, &Verdict::clear());
        assert!(c.is_safe(&token, &0, &ANY_AGE), "{}", label(build));
    });
}

/// `mint` authorises exactly its own call, as the token's issuer, and leaves nothing authorised
/// after it: a second mint nobody authorised is refused.
#[test]
fn mint_authorises_exactly_the_issuers_mint() {
    let env = new_env();
    let token = new_token(&env);
    let holder = Address::generate(&env);
    let issuer = soroban_sdk::token::StellarAssetClient::new(&env, &token).admin();
    crate::testutils::mint(&env, &token, &holder, 500);
    assert_eq!(
        env.auths(),
        std::vec![(
            issuer,
            AuthorizedInvocation {
                function: AuthorizedFunction::Contract((
                    token.clone(),
                    Symbol::new(&env, "mint"),
                    (&holder, 500_i128).into_val(&env),
                )),
                sub_invocations: std::vec![],
            }
        )]
    );
    assert_eq!(
        soroban_sdk::token::TokenClient::new(&env, &token).balance(&holder),
        500
    );
    let again = soroban_sdk::token::StellarAssetClient::new(&env, &token).try_mint(&holder, &1);
    assert!(again.is_err(), "{again:?}");
}
