//! Gate tests against a real registry and a real Stellar Asset Contract. Every body runs twice:
//! registry and gate registered natively, and both from their built `.wasm`.
extern crate std;

use std::format;

use assay_registry::{
    testutils::{
        assert_contract_error, for_each_build, gate_wasm, label, live_code,
        new_env_mocking_all_auths, register_registry, Build,
    },
    SafetyRegistryClient,
};
use soroban_sdk::{
    testutils::{Address as _, AuthorizedFunction, AuthorizedInvocation, Events as _, Ledger as _},
    token::{StellarAssetClient, TokenClient},
    Address, BytesN, Env, Error as HostError, Event as _, IntoVal, Symbol,
};

use crate::*;

const T0: u64 = 1_788_592_982;

struct Setup {
    env: Env,
    build: Build,
    registry: Address,
    attester: Address,
    gate: Address,
    asset: Address,
    user: Address,
}

fn register_gate(env: &Env, build: Build, registry: &Address, policy: Option<Policy>) -> Address {
    match build {
        Build::Native => env.register(Gate, (registry.clone(), policy)),
        Build::Wasm => env.register(gate_wasm(), (registry.clone(), policy)),
    }
}

impl Setup {
    fn new(build: Build) -> Self {
        Self::with_policy(build, None)
    }

    fn with_policy(build: Build, policy: Option<Policy>) -> Self {
        let env = new_env_mocking_all_auths();
        env.ledger().set_timestamp(T0);
        let admin = Address::generate(&env);
        let registry = register_registry(&env, build, &admin);
        let attester = Address::generate(&env);
        SafetyRegistryClient::new(&env, &registry).add_attester(&attester);
        let gate = register_gate(&env, build, &registry, policy);
        let issuer = Address::generate(&env);
        let asset = env.register_stellar_asset_contract_v2(issuer).address();
        let user = Address::generate(&env);
        StellarAssetClient::new(&env, &asset).mint(&user, &1_000);
        Setup {
            env,
            build,
            registry,
            attester,
            gate,
            asset,
            user,
        }
    }

    fn gate(&self) -> GateClient<'_> {
        GateClient::new(&self.env, &self.gate)
    }

    fn token(&self) -> TokenClient<'_> {
        TokenClient::new(&self.env, &self.asset)
    }

    fn attest(&self, severity: u32, flags: u32) {
        SafetyRegistryClient::new(&self.env, &self.registry).attest(
            &self.attester,
            &self.asset,
            &severity,
            &flags,
            &BytesN::from_array(&self.env, &[1; 32]),
            &live_code(&self.asset),
        );
    }

    fn revoke(&self) {
        SafetyRegistryClient::new(&self.env, &self.registry).revoke(&self.attester, &self.asset);
    }

    fn balances(&self) -> (i128, i128, i128) {
        (
            self.token().balance(&self.user),
            self.token().balance(&self.gate),
            self.gate().balance(&self.asset, &self.user),
        )
    }

    fn assert_deposit_refused(&self, expected: Error, code: u32) {
        let before = self.balances();
        assert_contract_error(self.gate().try_check(&self.asset), expected, code);
        assert!(!self.gate().would_admit(&self.asset));
        assert_contract_error(
            self.gate().try_deposit(&self.asset, &self.user, &10),
            expected,
            code,
        );
        assert_eq!(
            self.balances(),
            before,
            "{}: nothing moved",
            label(self.build)
        );
    }

    fn assert_withdraw_succeeds(&self, amount: i128) {
        let (user, vault, recorded) = self.balances();
        self.gate().withdraw(&self.asset, &self.user, &amount);
        // Only the holder authorises; the gate's own transfer out needs no signature.
        assert_eq!(
            self.env.auths(),
            std::vec![(
                self.user.clone(),
                AuthorizedInvocation {
                    function: AuthorizedFunction::Contract((
                        self.gate.clone(),
                        Symbol::new(&self.env, "withdraw"),
                        (&self.asset, &self.user, amount).into_val(&self.env),
                    )),
                    sub_invocations: std::vec![],
                }
            )]
        );
        assert_eq!(
            self.env.events().all().filter_by_contract(&self.gate),
            [Withdrawn {
                asset: self.asset.clone(),
                to: self.user.clone(),
                amount
            }
            .to_xdr(&self.env, &self.gate)]
        );
        assert_eq!(
            self.balances(),
            (user + amount, vault - amount, recorded - amount),
            "{}: withdrawal moved the tokens back",
            label(self.build)
        );
    }
}

#[test]
fn error_codes_are_pinned() {
    for (error, code) in [
        (Error::NotAttested, 1),
        (Error::AttestationStale, 2),
        (Error::IssuerCanTakeIt, 3),
        (Error::SeverityTooHigh, 4),
        (Error::InvalidPolicy, 5),
        (Error::InvalidAmount, 6),
        (Error::InsufficientBalance, 7),
        (Error::CodeChanged, 8),
    ] {
        assert_eq!(
            format!("{:?}", HostError::from(error)),
            format!("Error(Contract, #{code})")
        );
    }
}

#[test]
fn defaults_are_ceiling_2_mask_19974_and_one_day() {
    for_each_build(|build| {
        let s = Setup::new(build);
        assert_eq!(
            s.gate().policy(),
            Policy {
                max_severity: 2,
                forbidden_mask: 2 | 4 | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 14),
                max_age_secs: 86_400
            }
        );
        assert_eq!(s.gate().registry(), s.registry);
    });
}

#[test]
fn unattested_token_is_refused_everywhere() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.assert_deposit_refused(Error::NotAttested, 1);
        assert_eq!(s.balances(), (1_000, 0, 0));
    });
}

#[test]
fn admitted_deposit_moves_the_token_and_needs_the_depositor() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(1, 1 | 16); // auth required, domain unverified: within the defaults
        assert!(s.gate().would_admit(&s.asset));
        s.gate().deposit(&s.asset, &s.user, &300);
        assert_eq!(
            s.env.auths(),
            std::vec![(
                s.user.clone(),
                AuthorizedInvocation {
                    function: AuthorizedFunction::Contract((
                        s.gate.clone(),
                        Symbol::new(&s.env, "deposit"),
                        (&s.asset, &s.user, 300i128).into_val(&s.env),
                    )),
                    sub_invocations: std::vec![AuthorizedInvocation {
                        function: AuthorizedFunction::Contract((
                            s.asset.clone(),
                            Symbol::new(&s.env, "transfer"),
                            (&s.user, &s.gate, 300i128).into_val(&s.env),
                        )),
                        sub_invocations: std::vec![],
                    }],
                }
            )],
            "{build:?}"
        );
        let events = s.env.events().all().filter_by_contract(&s.gate);
        assert_eq!(
            events,
            [Deposited {
                asset: s.asset.clone(),
                from: s.user.clone(),
                amount: 300
            }
            .to_xdr(&s.env, &s.gate)]
        );
        assert_eq!(s.balances(), (700, 300, 300));

        s.assert_withdraw_succeeds(100);
        assert_eq!(s.balances(), (800, 200, 200), "{build:?}");
    });
}

#[test]
fn stale_boundary_admits_at_max_and_refuses_one_second_later() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(0, 0);
        s.gate().deposit(&s.asset, &s.user, &50);
        s.env.ledger().set_timestamp(T0 + MAX_ATTESTATION_AGE);
        assert!(s.gate().would_admit(&s.asset), "{build:?}: age == max");
        s.gate().deposit(&s.asset, &s.user, &50);
        s.env.ledger().set_timestamp(T0 + MAX_ATTESTATION_AGE + 1);
        s.assert_deposit_refused(Error::AttestationStale, 2);
        s.assert_withdraw_succeeds(100);
    });
}

#[test]
fn critical_by_reputation_without_capability_bits_is_refused() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(0, 0);
        s.gate().deposit(&s.asset, &s.user, &40);
        s.attest(4, 48); // DOGE: blocklisted, domain unverified, no capability bits
        s.assert_deposit_refused(Error::SeverityTooHigh, 4);
        s.assert_withdraw_succeeds(40);
    });
}

#[test]
fn severity_above_ceiling_is_refused_before_the_mask() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(3, 6); // clawback: both rules refuse; the ceiling answers first
        s.assert_deposit_refused(Error::SeverityTooHigh, 4);
    });
}

#[test]
fn forbidden_mechanics_are_refused_within_the_ceiling() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(1, 1);
        s.gate().deposit(&s.asset, &s.user, &25);
        s.attest(2, 2 | 16); // freezable: USDC's shape
        s.assert_deposit_refused(Error::IssuerCanTakeIt, 3);
        s.assert_withdraw_succeeds(25);
        // A custom token whose admin can freeze (bit 11) sits within the ceiling but is refused.
        s.attest(2, MECH_ADMIN_FREEZE | (1 << 12));
        s.assert_deposit_refused(Error::IssuerCanTakeIt, 3);
        // A custom token whose admin sets a transfer fee (bit 14) at its floor, medium: within
        // the ceiling, refused by the mask.
        s.attest(2, MECH_ADMIN_TRANSFER_FEE);
        s.assert_deposit_refused(Error::IssuerCanTakeIt, 3);
        // Minting alone (bit 12) is not forbidden.
        s.attest(0, 1 << 12);
        s.gate().deposit(&s.asset, &s.user, &5);
    });
}

#[test]
fn replaceable_or_clawback_code_is_refused_by_the_ceiling_and_the_mask() {
    for_each_build(|build| {
        let s = Setup::new(build);
        for flags in [MECH_CODE_MUTABLE, MECH_ADMIN_CLAWBACK] {
            s.attest(3, flags);
            s.assert_deposit_refused(Error::SeverityTooHigh, 4);
        }
        let lenient = Setup::with_policy(
            build,
            Some(Policy {
                max_severity: 3,
                forbidden_mask: REFUSED_MECHANICS,
                max_age_secs: 86_400,
            }),
        );
        for flags in [MECH_CODE_MUTABLE, MECH_ADMIN_CLAWBACK] {
            lenient.attest(3, flags);
            lenient.assert_deposit_refused(Error::IssuerCanTakeIt, 3);
        }
    });
}

#[test]
fn a_token_whose_admin_changed_is_refused_in_the_same_ledger_but_funds_come_out() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(0, 0);
        s.gate().deposit(&s.asset, &s.user, &60);
        // The Stellar Asset Contract's admin changes: the verdict judged the old admin's powers.
        StellarAssetClient::new(&s.env, &s.asset).set_admin(&Address::generate(&s.env));
        s.assert_deposit_refused(Error::CodeChanged, 8);
        s.assert_withdraw_succeeds(30);
        // Judged again under the new admin, it is admitted again.
        s.attest(0, 0);
        s.gate().deposit(&s.asset, &s.user, &5);
        assert_eq!(s.balances(), (965, 35, 35), "{build:?}");
    });
}

#[test]
fn revoked_token_is_refused_but_funds_come_out_then_re_attest_admits() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(0, 0);
        s.gate().deposit(&s.asset, &s.user, &60);
        s.revoke();
        s.assert_deposit_refused(Error::NotAttested, 1);
        s.assert_withdraw_succeeds(30);
        // A verdict written in the revocation's second counts as older and stays vetoed: re-attest later.
        s.env.ledger().set_timestamp(s.env.ledger().timestamp() + 1);
        s.attest(0, 0);
        s.gate().deposit(&s.asset, &s.user, &5);
        assert_eq!(s.balances(), (965, 35, 35), "{build:?}");
    });
}

#[test]
fn custom_policy_is_honoured_and_unusable_ones_are_refused() {
    for_each_build(|build| {
        let strict = Policy {
            max_severity: 3,
            forbidden_mask: MECH_AUTH_CLAWBACK_ENABLED,
            max_age_secs: 3_600,
        };
        let s = Setup::with_policy(build, Some(strict.clone()));
        assert_eq!(s.gate().policy(), strict);
        s.attest(3, 2); // high but only freezable: admitted by this policy
        s.gate().deposit(&s.asset, &s.user, &10);
        s.env.ledger().set_timestamp(T0 + 3_601);
        s.assert_deposit_refused(Error::AttestationStale, 2);
        s.attest(3, 6);
        s.assert_deposit_refused(Error::IssuerCanTakeIt, 3);
        s.assert_withdraw_succeeds(10);

        for bad in [
            Policy {
                max_severity: 4,
                ..strict.clone()
            },
            Policy {
                max_age_secs: 0,
                ..strict.clone()
            },
        ] {
            let env = new_env_mocking_all_auths();
            let registry = register_registry(&env, build, &Address::generate(&env));
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                register_gate(&env, build, &registry, Some(bad.clone()))
            }));
            let payload = outcome.expect_err("an unusable policy must not deploy");
            let message = payload
                .downcast_ref::<std::string::String>()
                .cloned()
                .or_else(|| {
                    payload
                        .downcast_ref::<&str>()
                        .map(|m| std::string::String::from(*m))
                })
                .unwrap_or_default();
            assert!(
                message.contains("Error(Contract, #5)"),
                "{build:?}: {bad:?} refused with {message}"
            );
        }
    });
}

#[test]
fn amounts_and_balances_are_checked() {
    for_each_build(|build| {
        let s = Setup::new(build);
        s.attest(0, 0);
        assert_contract_error(
            s.gate().try_deposit(&s.asset, &s.user, &0),
            Error::InvalidAmount,
            6,
        );
        assert_contract_error(
            s.gate().try_deposit(&s.asset, &s.user, &-5),
            Error::InvalidAmount,
            6,
        );
        s.gate().deposit(&s.asset, &s.user, &10);
        assert_contract_error(
            s.gate().try_withdraw(&s.asset, &s.user, &11),
            Error::InsufficientBalance,
            7,
        );
        assert_contract_error(
            s.gate().try_withdraw(&s.asset, &s.user, &0),
            Error::InvalidAmount,
            6,
        );
        let other = Address::generate(&s.env);
        assert_contract_error(
            s.gate().try_withdraw(&s.asset, &other, &1),
            Error::InsufficientBalance,
            7,
        );
        s.assert_withdraw_succeeds(10);
        assert_eq!(s.balances(), (1_000, 0, 0), "{build:?}");
    });
}
