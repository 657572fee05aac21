//! The vault against the registry (native, `.wasm`) and its verdict store, verdicts put by the kit.
use assay_integrator_example::{
    self as example, registry, Error, Vault, VaultClient, MAX_AGE_SECS,
};
use assay_registry::testutils::{
    assert_contract_error, mint, new_custom_token, new_env, new_token, upgrade_code, TestRegistry,
    Verdict,
};
use assay_registry::{
    MECH_AUTH_CLAWBACK_ENABLED, MECH_AUTH_REVOCABLE, POLICY_MASK_FREEZE_INCLUSIVE,
    SEVERITY_CRITICAL, SEVERITY_HIGH, SEVERITY_MEDIUM,
};
use soroban_sdk::testutils::{
    Address as _, AuthorizedFunction, AuthorizedInvocation, Ledger as _, MockAuth, MockAuthInvoke,
};
use soroban_sdk::{token, Address, Env, IntoVal, InvokeError, Symbol, Val};

mod store {
    soroban_sdk::contractimport!(file = "wasm/assay_verdict_store.wasm");
}
/// Runs `test` against the registry's Rust code, its `.wasm`, and (as production reads) its store.
fn with_each_registry(test: impl Fn(&Env, &TestRegistry, &VaultClient, &Address)) {
    for case in 0..3 {
        let env = new_env();
        env.ledger().set_timestamp(1_800_000_000);
        let registry = match case {
            0 => TestRegistry::native(&env),
            _ => TestRegistry::from_wasm(&env, registry::WASM),
        };
        let reads_from = match case {
            2 => registry.bind_store_from_wasm(store::WASM),
            _ => registry.address().clone(),
        };
        let vault = VaultClient::new(&env, &env.register(Vault, (reads_from,)));
        test(&env, &registry, &vault, &new_token(&env));
    }
}

#[test]
fn accepts_a_fresh_clear_verdict_up_to_the_last_fresh_second() {
    with_each_registry(|_, registry, vault, token| {
        registry.put(token, &Verdict::clear());
        assert_eq!(vault.try_accept(token), Ok(Ok(())));
        registry.set_age(token, MAX_AGE_SECS);
        assert_eq!(vault.try_accept(token), Ok(Ok(())));
        registry.set_age(token, MAX_AGE_SECS + 1);
        assert_contract_error(vault.try_accept(token), Error::Stale, 2);
    });
}

#[test]
fn refuses_every_unacceptable_verdict() {
    let (clawback, freeze) = (MECH_AUTH_CLAWBACK_ENABLED, MECH_AUTH_REVOCABLE);
    let cases = [
        (Verdict::clear().revoked(), Error::NotAttested),
        (Verdict::clear().aged(MAX_AGE_SECS + 1), Error::Stale),
        (Verdict::new(SEVERITY_CRITICAL, 0), Error::TooSevere),
        (Verdict::new(SEVERITY_HIGH, clawback), Error::TooSevere),
        (
            Verdict::new(SEVERITY_MEDIUM, freeze),
            Error::IssuerCanTakeIt,
        ),
    ];
    with_each_registry(|env, registry, vault, never_attested| {
        assert_contract_error(vault.try_accept(never_attested), Error::NotAttested, 1);
        for (verdict, error) in &cases {
            let token = new_token(env);
            registry.put(&token, verdict);
            assert_contract_error(vault.try_accept(&token), *error, *error as u32);
        }
    });
}

#[test]
fn refuses_a_stale_verdict() {
    let env = new_env();
    env.ledger().set_timestamp(1_800_000_000);
    let registry = TestRegistry::native(&env);
    let vault = VaultClient::new(&env, &env.register(Vault, (registry.address().clone(),)));
    let token = new_token(&env);
    registry.put(&token, &Verdict::clear().aged(MAX_AGE_SECS + 1));
    assert_eq!(vault.try_accept(&token), Err(Ok(Error::Stale)));
}

#[test]
fn refuses_a_token_upgraded_after_its_verdict() {
    with_each_registry(|env, registry, vault, _| {
        let token = new_custom_token(env);
        registry.put(&token, &Verdict::clear());
        assert_eq!(vault.try_accept(&token), Ok(Ok(())));
        // Its admin replaces its code: refused in the same ledger, with nobody re-attesting.
        upgrade_code(env, &token, registry::WASM);
        assert_contract_error(vault.try_accept(&token), Error::CodeChanged, 5);
    });
}

#[test]
fn the_vaults_bits_are_the_registrys() {
    assert_eq!(example::REFUSED_MECHANICS, POLICY_MASK_FREEZE_INCLUSIVE);
}

/// The vault's own `require_auth` holds: the kit's `Env` mocks nothing, so a deposit nobody
/// authorised is refused and nothing moves; authorised as the depositor would sign it (the deposit
/// and the transfer inside it), it goes through, and that is all the host recorded.
#[test]
fn deposits_only_with_exactly_the_depositors_authorization() {
    with_each_registry(|env, registry, vault, token| {
        let from = Address::generate(env);
        mint(env, token, &from, 100);
        registry.put(token, &Verdict::clear());
        let refused = vault.try_deposit(token, &from, &40);
        assert!(
            matches!(refused, Err(Err(InvokeError::Abort))),
            "{refused:?}"
        );
        let deposit_args: soroban_sdk::Vec<Val> = (token, &from, 40_i128).into_val(env);
        let transfer_args: soroban_sdk::Vec<Val> = (&from, &vault.address, 40_i128).into_val(env);
        let transfer = MockAuthInvoke {
            contract: token,
            fn_name: "transfer",
            args: transfer_args.clone(),
            sub_invokes: &[],
        };
        let deposit = MockAuthInvoke {
            contract: &vault.address,
            fn_name: "deposit",
            args: deposit_args.clone(),
            sub_invokes: &[transfer],
        };
        env.mock_auths(&[MockAuth {
            address: &from,
            invoke: &deposit,
        }]);
        vault.deposit(token, &from, &40);
        let call = |contract: &Address, name, args, sub_invocations| AuthorizedInvocation {
            function: AuthorizedFunction::Contract((
                contract.clone(),
                Symbol::new(env, name),
                args,
            )),
            sub_invocations,
        };
        let transferred = call(token, "transfer", transfer_args, vec![]);
        let deposited = call(&vault.address, "deposit", deposit_args, vec![transferred]);
        assert_eq!(env.auths(), [(from.clone(), deposited)]);
        let balance = token::TokenClient::new(env, token).balance(&from);
        assert_eq!((vault.balance(token, &from), balance), (40, 60));
    });
}
