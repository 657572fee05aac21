//! The store answers as its registry does, in the real host, natively and from the built WASM.
extern crate std;

use assay_registry::testutils::{
    advance_ledger_time, assert_contract_error, for_each_build, label, live_code, new_custom_token,
    new_env, new_env_mocking_all_auths, new_token, register_registry, register_registry_with_delay,
    upgradable_token_wasm, upgrade_code, verdict_store_wasm, Build,
};
use assay_registry::{
    standing, validate, Assessment, Attestation, Error, PendingVerdictStore, SafetyRegistryClient,
    VerdictStoreBound, VerdictStoreCancelled, VerdictStoreInterfaceClient, VerdictStoreProposed,
    MAX_ASSESS_ASSETS, MAX_BATCH_SIZE, SEVERITY_CRITICAL, SEVERITY_HIGH,
};
use proptest::prelude::*;
use soroban_sdk::{
    testutils::{
        Address as _, AuthorizedFunction, AuthorizedInvocation, Events as _, MockAuth,
        MockAuthInvoke,
    },
    token::StellarAssetClient,
    vec, Address, BytesN, Env, Event, IntoVal, Symbol, Val, Vec,
};
use std::vec::Vec as StdVec;

use crate::VerdictStore;

/// A registry (no notice, as on a local network) bound to its store, and two admitted attesters.
struct Setup {
    env: Env,
    registry: Address,
    store: Address,
    attesters: [Address; 2],
}

impl Setup {
    fn new(build: Build) -> Self {
        let env = new_env_mocking_all_auths();
        env.ledger_set_timestamp(1_786_771_651);
        let admin = Address::generate(&env);
        let registry = register_registry(&env, build, &admin);
        let store = register_store(&env, build, &registry);
        let client = SafetyRegistryClient::new(&env, &registry);
        client.bind_verdict_store(&store);
        let attesters = [Address::generate(&env), Address::generate(&env)];
        for a in &attesters {
            client.add_attester(a);
        }
        Setup {
            env,
            registry,
            store,
            attesters,
        }
    }

    fn registry(&self) -> SafetyRegistryClient<'_> {
        SafetyRegistryClient::new(&self.env, &self.registry)
    }

    fn store(&self) -> VerdictStoreInterfaceClient<'_> {
        VerdictStoreInterfaceClient::new(&self.env, &self.store)
    }

    fn attest(&self, attester: usize, asset: &Address, severity: u32, flags: u32) {
        let hash = BytesN::from_array(&self.env, &[severity as u8 + 1; 32]);
        self.registry().attest(
            &self.attesters[attester],
            asset,
            &severity,
            &flags,
            &hash,
            &live_code(asset),
        );
    }
}

trait LedgerTime {
    fn ledger_set_timestamp(&self, t: u64);
}

impl LedgerTime for Env {
    fn ledger_set_timestamp(&self, t: u64) {
        use soroban_sdk::testutils::Ledger as _;
        self.ledger().set_timestamp(t);
    }
}

fn register_store(env: &Env, build: Build, registry: &Address) -> Address {
    match build {
        Build::Native => env.register(VerdictStore, (registry.clone(),)),
        Build::Wasm => env.register(verdict_store_wasm(), (registry.clone(),)),
    }
}

/// The policies every comparison reads under: ceilings, masks and windows on both sides of the
/// verdicts the tests write, `max_age_secs = 0` included, and windows too large for a small value
/// (2^56 seconds and more: the store reads them without converting, as no limit).
const POLICIES: [(u32, u32, u64); 8] = [
    (0, 0, 3_600),
    (2, 0, 86_400),
    (3, 6, 86_400),
    (3, 0, 600),
    (4, 0x3fff, 1),
    (3, 0, 0),
    (3, 0, 1 << 56),
    (4, 6, u64::MAX),
];

/// Every read of the store against the registry's for `asset`: equal when `exact`, else the store
/// may refuse what the registry admits but never the reverse.
fn assert_store_answers(s: &Setup, asset: &Address, exact: bool, context: &str) {
    let (registry, store) = (s.registry(), s.store());
    let (r, st) = (registry.get_safety(asset), store.get_safety(asset));
    if exact {
        assert_eq!(st, r, "{context}: get_safety");
    } else {
        assert!(
            st.is_none() || st == r,
            "{context}: get_safety {st:?} vs {r:?}"
        );
    }
    for (max_severity, mask, max_age) in POLICIES {
        let (r, st) = (
            registry.assess(asset, &max_severity, &mask, &max_age),
            store.assess(asset, &max_severity, &mask, &max_age),
        );
        let (r_safe, st_safe) = (
            registry.is_safe(asset, &max_severity, &max_age),
            store.is_safe(asset, &max_severity, &max_age),
        );
        let (r_masked, st_masked) = (
            registry.is_safe_masked(asset, &mask, &max_age),
            store.is_safe_masked(asset, &mask, &max_age),
        );
        let policy = (max_severity, mask, max_age);
        if exact {
            assert_eq!(st, r, "{context}: assess {policy:?}");
            assert_eq!(st_safe, r_safe, "{context}: is_safe {policy:?}");
            assert_eq!(st_masked, r_masked, "{context}: is_safe_masked {policy:?}");
        } else {
            let admits = |a: &Assessment| matches!(a, Assessment::Safe(_));
            assert!(
                !admits(&st) || st == r,
                "{context}: assess {policy:?}: {st:?} vs {r:?}"
            );
            assert!(!st_safe || r_safe, "{context}: is_safe {policy:?}");
            assert!(
                !st_masked || r_masked,
                "{context}: is_safe_masked {policy:?}"
            );
        }
    }
    let many = store.assess_many(&vec![&s.env, asset.clone(), asset.clone()], &3, &6, &86_400);
    let one = store.assess(asset, &3, &6, &86_400);
    assert_eq!(
        many,
        vec![&s.env, one.clone(), one],
        "{context}: assess_many"
    );
}

#[derive(Clone, Debug)]
enum Op {
    Attest {
        attester: usize,
        asset: usize,
        severity: u32,
        flags: u32,
    },
    Revoke {
        attester: usize,
        asset: usize,
    },
    AdminRevoke {
        attester: usize,
        asset: usize,
    },
    /// Removes the attester (its admission ends at once, with no notice) and admits it again.
    Readmit {
        attester: usize,
    },
    /// A SAC's admin changes, or the custom token's code is replaced.
    ChangeCode {
        asset: usize,
    },
    Advance {
        secs: u64,
    },
    Republish,
}

fn op() -> impl Strategy<Value = Op> {
    let attester = 0..2usize;
    let asset = 0..3usize;
    prop_oneof![
        6 => (attester.clone(), asset.clone(), 0..5u32, prop::sample::select(std::vec![0u32, 1, 2, 4, 6, 512, 1024, 2048, 4096]))
            .prop_map(|(attester, asset, severity, flags)| Op::Attest { attester, asset, severity, flags }),
        1 => (attester.clone(), asset.clone()).prop_map(|(attester, asset)| Op::Revoke { attester, asset }),
        1 => (attester.clone(), asset.clone()).prop_map(|(attester, asset)| Op::AdminRevoke { attester, asset }),
        1 => attester.prop_map(|attester| Op::Readmit { attester }),
        1 => asset.prop_map(|asset| Op::ChangeCode { asset }),
        2 => prop::sample::select(std::vec![1u64, 599, 3_600, 86_401]).prop_map(|secs| Op::Advance { secs }),
        1 => Just(Op::Republish),
    ]
}

/// Runs `ops` on a fresh setup and compares every asset's reads after each.
fn run_ops(build: Build, ops: &[Op]) {
    let s = Setup::new(build);
    let env = &s.env;
    // Two SACs and a custom token (its code replaceable).
    let assets = [new_token(env), new_token(env), new_custom_token(env)];
    // Assets whose standing the store holds from before an admission ended.
    let mut stale = [false; 3];
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Attest {
                attester,
                asset,
                severity,
                flags,
            } => {
                if validate(severity, flags).is_err() {
                    continue;
                }
                s.attest(attester, &assets[asset], severity, flags);
                stale[asset] = false;
            }
            Op::Revoke { attester, asset } => {
                if s.registry()
                    .try_revoke(&s.attesters[attester], &assets[asset])
                    .is_ok()
                {
                    stale[asset] = false;
                }
            }
            Op::AdminRevoke { attester, asset } => {
                if s.registry()
                    .try_admin_revoke(&s.attesters[attester], &assets[asset])
                    .is_ok()
                {
                    stale[asset] = false;
                }
            }
            Op::Readmit { attester } => {
                s.registry().remove_attester(&s.attesters[attester]);
                s.registry().add_attester(&s.attesters[attester]);
                stale = [true; 3];
            }
            Op::ChangeCode { asset } if asset < 2 => {
                StellarAssetClient::new(env, &assets[asset]).set_admin(&Address::generate(env));
            }
            Op::ChangeCode { asset } => upgrade_code(env, &assets[asset], upgradable_token_wasm()),
            Op::Advance { secs } => advance_ledger_time(env, secs),
            Op::Republish => {
                let all = Vec::from_slice(env, &assets);
                s.registry().republish(&all);
                stale = [false; 3];
            }
        }
        for (i, asset) in assets.iter().enumerate() {
            let context = std::format!("{} step {step} {op:?}, asset {i}", label(build));
            assert_store_answers(&s, asset, !stale[i], &context);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Whatever attesters write, revoke and lose, whatever code changes and time passes, the store
    /// answers exactly as the registry, and after an attester's removal never admits what the
    /// registry refuses until the asset is published again.
    #[test]
    fn the_store_answers_as_its_registry(ops in prop::collection::vec(op(), 1..14)) {
        for_each_build(|build| run_ops(build, &ops));
    }
}

#[test]
fn two_attesters_disagree_and_the_store_answers_with_the_more_severe() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let asset = new_token(&s.env);
        s.attest(0, &asset, SEVERITY_HIGH, 0);
        s.attest(1, &asset, 0, 0);
        let safety = s.store().get_safety(&asset).expect("a verdict");
        assert_eq!(safety.severity, SEVERITY_HIGH, "{}", label(build));
        assert!(!s.store().is_safe(&asset, &2, &86_400), "{}", label(build));
        assert_store_answers(&s, &asset, true, &label(build));
    });
}

#[test]
fn a_token_upgraded_after_its_attestation_is_refused_by_the_store_in_the_same_ledger() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let token = new_custom_token(&s.env);
        s.attest(0, &token, SEVERITY_HIGH, 512);
        assert!(s.store().is_safe(&token, &3, &86_400), "{}", label(build));
        upgrade_code(&s.env, &token, upgradable_token_wasm());
        assert_eq!(s.store().get_safety(&token), None, "{}", label(build));
        assert!(!s.store().is_safe(&token, &3, &86_400), "{}", label(build));
        assert!(
            !s.store().is_safe_masked(&token, &0, &86_400),
            "{}",
            label(build)
        );
        assert_eq!(
            s.store().assess(&token, &3, &0, &86_400),
            Assessment::CodeChanged,
            "{}",
            label(build)
        );
    });
}

#[test]
fn a_sac_whose_admin_changed_is_refused_by_the_store() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let sac = new_token(&s.env);
        s.attest(0, &sac, 0, 0);
        assert!(s.store().is_safe(&sac, &0, &86_400), "{}", label(build));
        StellarAssetClient::new(&s.env, &sac).set_admin(&Address::generate(&s.env));
        assert_eq!(
            s.store().assess(&sac, &3, &0, &86_400),
            Assessment::CodeChanged
        );
        assert_eq!(s.store().get_safety(&sac), None);
    });
}

#[test]
fn a_removed_attesters_lead_stops_answering_at_once_and_republish_restores_the_exact_answer() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let asset = new_token(&s.env);
        s.attest(1, &asset, 0, 0);
        s.attest(0, &asset, SEVERITY_HIGH, 0);
        s.registry().remove_attester(&s.attesters[0]);
        // The registry falls back to the other attester's clear verdict; the store, which only
        // knows the leading verdict ended, refuses until the asset is published again.
        assert_eq!(s.registry().get_safety(&asset).map(|v| v.severity), Some(0));
        assert_eq!(s.store().get_safety(&asset), None, "{}", label(build));
        assert_eq!(
            s.store().assess(&asset, &3, &0, &86_400),
            Assessment::NotAttested
        );
        assert_store_answers(&s, &asset, false, &label(build));
        // Anyone may republish: no authorisation is asked.
        s.registry().republish(&vec![&s.env, asset.clone()]);
        assert_eq!(s.env.auths(), std::vec![]);
        assert_store_answers(&s, &asset, true, &label(build));
        assert_eq!(s.store().get_safety(&asset).map(|v| v.severity), Some(0));
    });
}

#[test]
fn a_revocation_answers_revoked_with_its_time_from_the_store() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let asset = new_token(&s.env);
        s.attest(0, &asset, 0, 0);
        s.attest(1, &asset, 0, 0);
        s.registry().revoke(&s.attesters[0], &asset);
        assert_eq!(
            s.store().assess(&asset, &3, &0, &86_400),
            Assessment::Revoked(1_786_771_651),
            "{}",
            label(build)
        );
        assert_store_answers(&s, &asset, true, &label(build));
    });
}

/// One attester condemns the asset and another clears it; the clearing verdict is withdrawn (by
/// its attester or the admin) and written again: the store, like the registry, refuses the asset
/// as revoked until the condemning attester writes again.
#[test]
fn a_revocation_never_clears_another_attesters_more_severe_verdict_in_the_store() {
    for_each_build(|build| {
        for condemned_first in [true, false] {
            for by_admin in [false, true] {
                let context = std::format!(
                    "{} condemned_first={condemned_first} by_admin={by_admin}",
                    label(build)
                );
                let s = Setup::new(build);
                let asset = new_token(&s.env);
                if condemned_first {
                    s.attest(0, &asset, SEVERITY_CRITICAL, 0);
                    s.attest(1, &asset, 0, 0);
                } else {
                    s.attest(1, &asset, 0, 0);
                    s.attest(0, &asset, SEVERITY_CRITICAL, 0);
                }
                assert_store_answers(&s, &asset, true, &context);
                advance_ledger_time(&s.env, 5);
                let revoked_at = s.env.ledger().timestamp();
                if by_admin {
                    s.registry().admin_revoke(&s.attesters[1], &asset);
                } else {
                    s.registry().revoke(&s.attesters[1], &asset);
                }
                for step in ["revoked", "cleared again"] {
                    assert_eq!(s.store().get_safety(&asset), None, "{context} {step}");
                    assert!(
                        !s.store().is_safe(&asset, &4, &u64::MAX),
                        "{context} {step}"
                    );
                    assert_eq!(
                        s.store().assess(&asset, &4, &0, &u64::MAX),
                        Assessment::Revoked(revoked_at),
                        "{context} {step}"
                    );
                    assert_store_answers(&s, &asset, true, &std::format!("{context} {step}"));
                    advance_ledger_time(&s.env, 5);
                    s.attest(1, &asset, 0, 0);
                }
                // The condemning attester writes again: its verdict answers, and refuses.
                s.attest(0, &asset, SEVERITY_CRITICAL, 0);
                assert_eq!(
                    s.store().assess(&asset, &4, &0, &u64::MAX),
                    Assessment::SeverityTooHigh(SEVERITY_CRITICAL),
                    "{context}"
                );
                assert_store_answers(&s, &asset, true, &context);
            }
        }
    });
}

/// A registry with notice binds its store only after the notice, announced by an event; the admin
/// may withdraw the proposal. Nothing is published to a store that is only proposed.
#[test]
fn a_store_is_bound_only_after_the_registrys_notice() {
    const DAY: u64 = 86_400;
    for_each_build(|build| {
        let env = new_env_mocking_all_auths();
        env.ledger_set_timestamp(1_786_771_651);
        let admin = Address::generate(&env);
        let registry_id = register_registry_with_delay(&env, build, &admin, DAY);
        let registry = SafetyRegistryClient::new(&env, &registry_id);
        let store_id = register_store(&env, build, &registry_id);
        let auth = |function: &str, args: std::vec::Vec<Val>| {
            std::vec![(
                admin.clone(),
                AuthorizedInvocation {
                    function: AuthorizedFunction::Contract((
                        registry_id.clone(),
                        Symbol::new(&env, function),
                        Vec::from_slice(&env, &args),
                    )),
                    sub_invocations: std::vec![],
                }
            )]
        };
        assert_contract_error(
            registry.try_apply_verdict_store(),
            Error::NoPendingVerdictStore,
            24,
        );
        assert_contract_error(
            registry.try_cancel_verdict_store(),
            Error::NoPendingVerdictStore,
            24,
        );

        let proposed_at = env.ledger().timestamp();
        registry.bind_verdict_store(&store_id);
        assert_eq!(
            env.auths(),
            auth("bind_verdict_store", std::vec![store_id.to_val()])
        );
        let applicable_at = proposed_at + DAY;
        assert_eq!(
            env.events().all(),
            [VerdictStoreProposed {
                store: store_id.clone(),
                applicable_at,
            }
            .to_xdr(&env, &registry_id)]
        );
        assert_eq!(
            registry.pending_verdict_store(),
            Some(PendingVerdictStore {
                store: store_id.clone(),
                proposed_at,
                applicable_at,
            })
        );
        assert_eq!(registry.verdict_store(), None);
        assert_contract_error(
            registry.try_republish(&Vec::new(&env)),
            Error::NoVerdictStore,
            22,
        );

        // The admin withdraws it.
        registry.cancel_verdict_store();
        assert_eq!(env.auths(), auth("cancel_verdict_store", std::vec![]));
        assert_eq!(
            env.events().all(),
            [VerdictStoreCancelled {
                store: store_id.clone(),
            }
            .to_xdr(&env, &registry_id)]
        );
        assert_eq!(registry.pending_verdict_store(), None);

        // Proposed again: not bindable a second before the notice ends.
        registry.bind_verdict_store(&store_id);
        advance_ledger_time(&env, DAY - 1);
        assert_contract_error(
            registry.try_apply_verdict_store(),
            Error::VerdictStoreNotDue,
            25,
        );
        assert_eq!(registry.verdict_store(), None);
        advance_ledger_time(&env, 1);
        registry.apply_verdict_store();
        assert_eq!(env.auths(), auth("apply_verdict_store", std::vec![]));
        assert_eq!(
            env.events().all(),
            [VerdictStoreBound {
                store: store_id.clone()
            }
            .to_xdr(&env, &registry_id)]
        );
        assert_eq!(registry.verdict_store(), Some(store_id.clone()));
        assert_eq!(registry.pending_verdict_store(), None);
        let second = register_store(&env, build, &registry_id);
        assert_contract_error(
            registry.try_bind_verdict_store(&second),
            Error::VerdictStoreBound,
            20,
        );

        // Nobody but the admin proposes, applies or cancels.
        let stranger = Address::generate(&env);
        env.mock_auths(&[MockAuth {
            address: &stranger,
            invoke: &MockAuthInvoke {
                contract: &registry_id,
                fn_name: "apply_verdict_store",
                args: ().into_val(&env),
                sub_invokes: &[],
            },
        }]);
        assert_eq!(
            std::format!("{:?}", registry.try_apply_verdict_store()),
            "Err(Err(Abort))",
            "{}",
            label(build)
        );
    });
}

#[test]
fn binding_is_the_admins_once_and_only_to_a_store_of_this_registry() {
    for_each_build(|build| {
        let env = new_env_mocking_all_auths();
        let admin = Address::generate(&env);
        let registry_id = register_registry(&env, build, &admin);
        let registry = SafetyRegistryClient::new(&env, &registry_id);
        assert_eq!(registry.verdict_store(), None);
        let other_registry = register_registry(&env, build, &admin);
        let foreign = register_store(&env, build, &other_registry);
        assert_contract_error(
            registry.try_bind_verdict_store(&foreign),
            Error::VerdictStoreMismatch,
            21,
        );
        assert_contract_error(
            registry.try_republish(&Vec::new(&env)),
            Error::NoVerdictStore,
            22,
        );
        let store = register_store(&env, build, &registry_id);
        registry.bind_verdict_store(&store);
        assert_eq!(
            env.auths(),
            std::vec![(
                admin.clone(),
                AuthorizedInvocation {
                    function: AuthorizedFunction::Contract((
                        registry_id.clone(),
                        Symbol::new(&env, "bind_verdict_store"),
                        vec![&env, store.to_val()],
                    )),
                    sub_invocations: std::vec![],
                }
            )]
        );
        assert_eq!(
            env.events().all(),
            [VerdictStoreBound {
                store: store.clone()
            }
            .to_xdr(&env, &registry_id)]
        );
        assert_eq!(registry.verdict_store(), Some(store.clone()));
        let second = register_store(&env, build, &registry_id);
        assert_contract_error(
            registry.try_bind_verdict_store(&second),
            Error::VerdictStoreBound,
            20,
        );
        let too_many: StdVec<Address> = (0..=MAX_BATCH_SIZE)
            .map(|_| Address::generate(&env))
            .collect();
        assert_contract_error(
            registry.try_republish(&Vec::from_slice(&env, &too_many)),
            Error::BatchTooLarge,
            7,
        );
        let store = VerdictStoreInterfaceClient::new(&env, &store);
        assert_eq!(store.registry(), registry_id);
        assert_eq!(store.version(), assay_registry::INTERFACE_VERSION);
        let eleven: StdVec<Address> = (0..=MAX_ASSESS_ASSETS)
            .map(|_| Address::generate(&env))
            .collect();
        assert_contract_error(
            store.try_assess_many(&Vec::from_slice(&env, &eleven), &3, &0, &86_400),
            Error::TooManyAssets,
            17,
        );
    });
}

#[test]
fn only_the_registry_can_publish() {
    for_each_build(|build| {
        let env = new_env();
        let registry = register_registry(&env, build, &Address::generate(&env));
        let store_id = register_store(&env, build, &registry);
        let store = VerdictStoreInterfaceClient::new(&env, &store_id);
        let asset = Address::generate(&env);
        // A standing with no verdict and a revocation at ledger time 5.
        let mut forged: Vec<Val> = Vec::new(&env);
        for _ in 0..standing::LEN {
            forged.push_back(Val::VOID.to_val());
        }
        forged.set(standing::ASSET, asset.to_val());
        forged.set(standing::CODE, standing::CODE_NONE.into());
        forged.set(standing::REVOKED_AT, 5u64.into_val(&env));
        let standings = vec![&env, forged];
        // What the registry hands a store on binding; this store is bound to none.
        let names: Vec<Val> = Vec::from_iter(
            &env,
            standing::NAMES
                .iter()
                .map(|name| Symbol::new(&env, name).to_val()),
        );
        let refused = store.try_publish(&standings, &None, &Some(names.clone()));
        assert_eq!(
            std::format!("{refused:?}"),
            "Err(Ok(Error(Context, InvalidAction)))",
            "{}",
            label(build)
        );
        assert_eq!(store.get_safety(&asset), None);
        // No names were handed over: `assess` traps rather than answer.
        assert!(store.try_assess(&asset, &3, &0, &86_400).is_err());
        // The same call, authorised as the registry, lands: the refusal was the missing authorisation.
        env.mock_auths(&[MockAuth {
            address: &registry,
            invoke: &MockAuthInvoke {
                contract: &store_id,
                fn_name: "publish",
                args: (standings.clone(), None::<u32>, Some(names.clone())).into_val(&env),
                sub_invokes: &[],
            },
        }]);
        store.publish(&standings, &None, &Some(names));
        assert_eq!(
            store.assess(&asset, &3, &0, &86_400),
            Assessment::Revoked(5)
        );
        assert_eq!(
            store.assess(&Address::generate(&env), &3, &0, &86_400),
            Assessment::NotAttested
        );
    });
}

/// The store's interface section holds its functions and nothing else: the types it reads and
/// answers are the registry's, encoded as values.
#[test]
fn wasm_interface_holds_exactly_the_store_boundary() {
    let mut names =
        assay_spec_shake::entry_names(verdict_store_wasm()).expect("spec of the built wasm");
    names.sort();
    let mut expected = std::vec![
        "error Error",
        "fn __constructor",
        "fn assess",
        "fn assess_many",
        "fn get_safety",
        "fn is_safe",
        "fn is_safe_masked",
        "fn publish",
        "fn registry",
        "fn version",
    ];
    expected.sort();
    assert_eq!(names, expected);
}

/// The registry extends the store's instance and code when it binds it and each time it publishes,
/// so the store imports no extension of its own; a standing published is topped up; reads extend
/// nothing.
#[test]
fn the_registry_keeps_its_store_alive_and_reads_extend_nothing() {
    use soroban_sdk::testutils::{
        storage::{Instance as _, Persistent as _},
        Ledger as _,
    };
    for_each_build(|build| {
        let s = Setup::new(build);
        let (env, store) = (&s.env, &s.store);
        let instance_ttl = || env.as_contract(store, || env.storage().instance().get_ttl());
        let max = env.as_contract(store, || env.storage().max_ttl());
        assert_eq!(instance_ttl(), max, "{}: extended on binding", label(build));
        let asset = new_token(env);
        s.attest(0, &asset, 0, 0);
        let standing_ttl = || env.as_contract(store, || env.storage().persistent().get_ttl(&asset));
        assert_eq!(standing_ttl(), max, "{}: the standing", label(build));
        let seq = env.ledger().sequence();
        env.ledger().set_sequence_number(seq + 1_000);
        assert!(s.store().get_safety(&asset).is_some());
        assert!(s.store().is_safe(&asset, &0, &86_400));
        assert!(matches!(
            s.store().assess(&asset, &0, &0, &86_400),
            Assessment::Safe(_)
        ));
        assert_eq!(env.cost_estimate().resources().write_entries, 0);
        assert_eq!(
            instance_ttl(),
            max - 1_000,
            "{}: reads never extend",
            label(build)
        );
        assert_eq!(standing_ttl(), max - 1_000);
        s.attest(1, &asset, 0, 0);
        assert_eq!(
            instance_ttl(),
            max,
            "{}: extended on publishing",
            label(build)
        );
        assert_eq!(standing_ttl(), max);
    });
}

/// A batch naming an asset twice publishes the standing folded from the later write (the registry
/// folds each write's list as it stored it, and the store keeps the last standing of an asset), and
/// a revocation publishes the list left: the store answers exactly as the registry after each.
#[test]
fn a_batch_naming_an_asset_twice_and_a_revocation_publish_the_latest_verdicts() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let (asset, other) = (new_token(&s.env), new_token(&s.env));
        s.attest(1, &asset, SEVERITY_HIGH, 0);
        let item = |asset: &Address, severity: u32| Attestation {
            asset: asset.clone(),
            severity,
            flags: 0,
            evidence_hash: BytesN::from_array(&s.env, &[severity as u8; 32]),
            code: live_code(asset),
        };
        let batch = vec![
            &s.env,
            item(&asset, SEVERITY_CRITICAL),
            item(&other, 0),
            item(&asset, 0),
        ];
        s.registry().attest_many(&s.attesters[0], &batch);
        // Attester 0's later clear verdict replaced its critical one; attester 1's high leads.
        assert_eq!(
            s.store().get_safety(&asset).map(|v| v.severity),
            Some(SEVERITY_HIGH),
            "{}",
            label(build)
        );
        assert_store_answers(&s, &asset, true, &label(build));
        assert_store_answers(&s, &other, true, &label(build));
        s.registry().revoke(&s.attesters[1], &asset);
        // Attester 0's clear verdict is older than the revocation: refused as revoked.
        assert!(matches!(
            s.store().assess(&asset, &4, &0, &86_400),
            Assessment::Revoked(_)
        ));
        assert_store_answers(&s, &asset, true, &label(build));
    });
}

/// A store answers `assess` only once its registry handed it the variant names (on binding): a
/// publish without them lands, and `assess` traps rather than answer until they come.
#[test]
fn assess_answers_once_the_names_are_handed_over() {
    for_each_build(|build| {
        let env = new_env_mocking_all_auths();
        let registry = register_registry(&env, build, &Address::generate(&env));
        let store = VerdictStoreInterfaceClient::new(&env, &register_store(&env, build, &registry));
        let asset = Address::generate(&env);
        let mut none: Vec<Val> = Vec::new(&env);
        for _ in 0..standing::LEN {
            none.push_back(Val::VOID.to_val());
        }
        none.set(standing::ASSET, asset.to_val());
        none.set(standing::CODE, standing::CODE_NONE.into());
        store.publish(&vec![&env, none], &None, &None);
        assert_eq!(store.get_safety(&asset), None, "{}", label(build));
        assert!(!store.is_safe(&asset, &4, &86_400));
        assert!(store.try_assess(&asset, &3, &0, &86_400).is_err());
        // Names that are not the names' count of symbols are refused.
        let short = vec![&env, Symbol::new(&env, "NotAttested").to_val()];
        assert!(store
            .try_publish(&Vec::new(&env), &None, &Some(short))
            .is_err());
        let names: Vec<Val> = Vec::from_iter(
            &env,
            standing::NAMES
                .iter()
                .map(|name| Symbol::new(&env, name).to_val()),
        );
        store.publish(&Vec::new(&env), &None, &Some(names));
        assert_eq!(
            store.assess(&asset, &3, &0, &86_400),
            Assessment::NotAttested,
            "{}",
            label(build)
        );
    });
}
