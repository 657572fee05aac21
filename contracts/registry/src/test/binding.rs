//! Verdicts bound to the code they judged (interface 5): a write must name the asset's live code,
//! and every read compares the binding with what is live now, so a token whose code was replaced
//! (or whose Stellar Asset Contract admin changed) is refused in the same ledger.
extern crate std;

use soroban_sdk::{
    testutils::{Address as _, Events as _},
    token::StellarAssetClient,
    vec, Address, BytesN, Executable, IntoVal, String, Symbol, Vec,
};

use super::{Setup, ANY_AGE};
use crate::{
    testutils::{
        assert_contract_error, for_each_build, gate_wasm, live_code, new_token,
        upgradable_token_wasm,
    },
    *,
};

/// A custom token (the upgradable-token fixture, from its `.wasm`) whose admin can replace its
/// code; returns it and its admin.
fn wasm_token(s: &Setup) -> (Address, Address) {
    let admin = Address::generate(&s.env);
    let token = s.env.register(
        upgradable_token_wasm(),
        (
            admin.clone(),
            7u32,
            String::from_str(&s.env, "Upgradable"),
            String::from_str(&s.env, "UPG"),
        ),
    );
    (token, admin)
}

/// The token's admin replaces its code (`update_current_contract_wasm`); the new code's hash.
fn upgrade(s: &Setup, token: &Address) -> BytesN<32> {
    let hash = s.env.deployer().upload_contract_wasm(gate_wasm());
    s.env.invoke_contract::<()>(
        token,
        &Symbol::new(&s.env, "upgrade"),
        vec![&s.env, hash.into_val(&s.env)],
    );
    hash
}

/// Every read refuses `asset` as code nobody judged.
fn assert_refused_as_changed(s: &Setup, asset: &Address, attester: &Address) {
    let c = s.client();
    let build = s.build;
    assert_eq!(
        c.get_safety(asset),
        None,
        "{build:?}: no verdict about this code"
    );
    assert_eq!(c.get_safety_by(asset, attester), None, "{build:?}");
    assert!(!c.is_safe(asset, &3, &ANY_AGE), "{build:?}");
    assert!(!c.is_safe_masked(asset, &0, &ANY_AGE), "{build:?}");
    assert!(!c.is_safe_quorum(asset, &vec![&s.env, attester.clone()], &1, &3, &ANY_AGE));
    assert_eq!(
        c.assess(asset, &3, &0, &ANY_AGE),
        Assessment::CodeChanged,
        "{build:?}"
    );
    assert_eq!(
        c.assess_many(&vec![&s.env, asset.clone()], &3, &0, &ANY_AGE),
        vec![&s.env, Assessment::CodeChanged]
    );
}

#[test]
fn a_token_upgraded_after_its_attestation_is_refused_in_the_same_ledger() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (token, _) = wasm_token(&s);
        let judged = token.executable();
        let Some(Executable::Wasm(judged)) = judged else {
            panic!("{build:?}: a WASM token, got {judged:?}")
        };
        let code = CodeBinding::Wasm(judged.clone());
        assert_eq!(live_code(&token), code);
        c.attest(&s.attester, &token, &0, &0, &s.hash(1), &code);
        s.assert_auth(
            &s.attester,
            "attest",
            (&s.attester, &token, 0u32, 0u32, s.hash(1), code.clone()).into_val(&s.env),
        );
        assert!(c.is_safe(&token, &0, &ANY_AGE), "{build:?}");

        let replaced = upgrade(&s, &token);
        assert_ne!(replaced, judged);
        assert_refused_as_changed(&s, &token, &s.attester);

        // A write bound to the replaced code is refused, and changes nothing.
        assert_contract_error(
            c.try_attest(&s.attester, &token, &0, &0, &s.hash(2), &code),
            Error::CodeMismatch,
            16,
        );
        assert_eq!(
            s.env.events().all().events().len(),
            0,
            "no event on refusal"
        );
        assert_refused_as_changed(&s, &token, &s.attester);

        // A verdict on the new code counts again.
        let new_code = CodeBinding::Wasm(replaced);
        c.attest(
            &s.attester,
            &token,
            &3,
            &MECH_CODE_MUTABLE,
            &s.hash(3),
            &new_code,
        );
        assert_eq!(c.get_safety(&token).unwrap().evidence_hash, s.hash(3));
        assert!(c.is_safe(&token, &3, &ANY_AGE), "{build:?}");
    });
}

#[test]
fn a_stellar_asset_contract_whose_admin_changed_is_refused() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let sac = new_token(&s.env);
        let issuer = StellarAssetClient::new(&s.env, &sac).admin();
        let code = CodeBinding::StellarAssetAdmin(issuer);
        assert_eq!(live_code(&sac), code);
        c.attest(
            &s.attester,
            &sac,
            &1,
            &MECH_AUTH_REQUIRED,
            &s.hash(1),
            &code,
        );
        assert!(c.is_safe(&sac, &1, &ANY_AGE), "{build:?}");

        let new_admin = Address::generate(&s.env);
        StellarAssetClient::new(&s.env, &sac).set_admin(&new_admin);
        assert_refused_as_changed(&s, &sac, &s.attester);
        assert_contract_error(
            c.try_attest(
                &s.attester,
                &sac,
                &1,
                &MECH_AUTH_REQUIRED,
                &s.hash(2),
                &code,
            ),
            Error::CodeMismatch,
            16,
        );
        let rebound = CodeBinding::StellarAssetAdmin(new_admin);
        c.attest(
            &s.attester,
            &sac,
            &1,
            &MECH_AUTH_REQUIRED,
            &s.hash(2),
            &rebound,
        );
        s.assert_auth(
            &s.attester,
            "attest",
            (
                &s.attester,
                &sac,
                1u32,
                MECH_AUTH_REQUIRED,
                s.hash(2),
                rebound,
            )
                .into_val(&s.env),
        );
        assert!(c.is_safe(&sac, &1, &ANY_AGE), "{build:?}");
    });
}

#[test]
fn a_write_bound_to_anything_but_the_live_code_is_refused() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (token, token_admin) = wasm_token(&s);
        let sac = new_token(&s.env);
        let no_code = Address::generate(&s.env);
        let other_hash = CodeBinding::Wasm(s.hash(7));
        let wrong = [
            (token.clone(), other_hash.clone()),
            // The token's admin is not what a WASM token's verdict binds.
            (token.clone(), CodeBinding::StellarAssetAdmin(token_admin)),
            (
                sac.clone(),
                CodeBinding::StellarAssetAdmin(Address::generate(&s.env)),
            ),
            (sac.clone(), live_code(&token)),
            (no_code.clone(), other_hash.clone()),
        ];
        for (asset, code) in wrong.iter() {
            assert_contract_error(
                c.try_attest(&s.attester, asset, &0, &0, &s.hash(1), code),
                Error::CodeMismatch,
                16,
            );
            assert_eq!(c.get_safety(asset), None, "{build:?}");
        }
        // In a batch: one element bound to other code refuses the whole batch.
        let mut items = Vec::new(&s.env);
        for (asset, code) in [(sac.clone(), live_code(&sac)), (token.clone(), other_hash)] {
            items.push_back(Attestation {
                asset,
                severity: 0,
                flags: 0,
                evidence_hash: s.hash(2),
                code,
            });
        }
        assert_contract_error(
            c.try_attest_many(&s.attester, &items),
            Error::CodeMismatch,
            16,
        );
        assert_eq!(c.get_safety(&sac), None, "{build:?}: nothing written");
        assert_eq!(s.env.events().all().events().len(), 0);
    });
}

#[test]
fn a_verdict_on_replaced_code_holds_back_every_other_attesters_until_rejudged() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let b = Address::generate(&s.env);
        c.add_attester(&b);
        let (token, _) = wasm_token(&s);
        c.attest(&s.attester, &token, &2, &0, &s.hash(1), &live_code(&token));
        upgrade(&s, &token);
        // B judges the new code clear; A's verdict, on the old code, still counts and refuses.
        c.attest(&b, &token, &0, &0, &s.hash(2), &live_code(&token));
        assert_eq!(
            c.assess(&token, &3, &0, &ANY_AGE),
            Assessment::CodeChanged,
            "{build:?}"
        );
        assert_eq!(c.get_safety(&token), None);
        // B's own verdict is about the live code, so it is B's to read.
        assert_eq!(
            c.get_safety_by(&token, &b).unwrap().evidence_hash,
            s.hash(2)
        );
        // A judges the new code: both count, the more severe answers.
        c.attest(&s.attester, &token, &2, &0, &s.hash(3), &live_code(&token));
        assert_eq!(c.get_safety(&token).unwrap().evidence_hash, s.hash(3));
        assert_eq!(
            c.assess(&token, &1, &0, &ANY_AGE),
            Assessment::SeverityTooHigh(2),
            "{build:?}"
        );
    });
}

#[test]
fn a_classic_asset_whose_sac_is_not_deployed_binds_its_issuer_until_code_appears() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        // The address a classic asset's SAC would have: nothing deployed there yet.
        let sac_address = Address::generate(&s.env);
        let issuer = CodeBinding::StellarAssetAdmin(Address::generate(&s.env));
        c.attest(
            &s.attester,
            &sac_address,
            &1,
            &MECH_AUTH_REQUIRED,
            &s.hash(1),
            &issuer,
        );
        assert!(c.is_safe(&sac_address, &1, &ANY_AGE), "{build:?}");
        // Any code that appears there other than that SAC under that admin voids the verdict.
        s.env.register_at(
            &sac_address,
            upgradable_token_wasm(),
            (
                Address::generate(&s.env),
                7u32,
                String::from_str(&s.env, "Impostor"),
                String::from_str(&s.env, "IMP"),
            ),
        );
        assert_refused_as_changed(&s, &sac_address, &s.attester);
    });
}
