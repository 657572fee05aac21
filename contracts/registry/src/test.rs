//! Contract tests. Every test body runs twice: against the natively registered contract and
//! against `target/wasm/assay_registry.wasm` (built by `scripts/build-wasm.sh` on first use).
extern crate std;

use std::{format, vec::Vec as StdVec};

use soroban_sdk::{
    testutils::{
        storage::{Instance as _, Persistent as _},
        Address as _, AuthorizedFunction, AuthorizedInvocation, Events as _, Ledger as _, MockAuth,
        MockAuthInvoke,
    },
    vec, Address, BytesN, Env, Error as HostError, Event as _, IntoVal, InvokeError, Map, Symbol,
    Val, Vec,
};

use crate::{
    testutils::{
        assert_contract_error, for_each_build, label, live_code, new_env_mocking_all_auths,
        new_token, register_registry, Build,
    },
    *,
};

mod binding;
mod kit;
mod notice;
mod per_attester;
mod properties;
mod upgrade;
mod veto;

/// A window no verdict outlives: the age limit a test does not exercise (0 admits nothing).
pub(crate) const ANY_AGE: u64 = u64::MAX;

/// One deployed registry with an admin and one admitted attester.
pub(crate) struct Setup {
    pub env: Env,
    pub id: Address,
    pub admin: Address,
    pub attester: Address,
    pub build: Build,
}

impl Setup {
    pub fn new(build: Build) -> Self {
        let env = new_env_mocking_all_auths();
        env.ledger().set_timestamp(1_786_771_651);
        env.ledger().set_sequence_number(100);
        let admin = Address::generate(&env);
        let id = register_registry(&env, build, &admin);
        let attester = Address::generate(&env);
        SafetyRegistryClient::new(&env, &id).add_attester(&attester);
        Setup {
            env,
            id,
            admin,
            attester,
            build,
        }
    }

    pub fn client(&self) -> SafetyRegistryClient<'_> {
        SafetyRegistryClient::new(&self.env, &self.id)
    }

    pub fn hash(&self, byte: u8) -> BytesN<32> {
        BytesN::from_array(&self.env, &[byte; 32])
    }

    /// Asserts that the last call was authorised by exactly `who`, for exactly this call.
    pub fn assert_auth(&self, who: &Address, function: &str, args: Vec<Val>) {
        assert_eq!(
            self.env.auths(),
            std::vec![(
                who.clone(),
                AuthorizedInvocation {
                    function: AuthorizedFunction::Contract((
                        self.id.clone(),
                        Symbol::new(&self.env, function),
                        args,
                    )),
                    sub_invocations: std::vec![],
                }
            )],
            "{}: auths of {function}",
            label(self.build)
        );
    }

    /// From now on only `who` has authorised, and only a call of the argument-less `function`.
    pub fn authorise_only(&self, who: &Address, function: &str) {
        self.env.mock_auths(&[MockAuth {
            address: who,
            invoke: &MockAuthInvoke {
                contract: &self.id,
                fn_name: function,
                args: ().into_val(&self.env),
                sub_invokes: &[],
            },
        }]);
    }

    fn ttl<K: IntoVal<Env, Val>>(&self, key: &K) -> u32 {
        self.env
            .as_contract(&self.id, || self.env.storage().persistent().get_ttl(key))
    }

    /// Everything the registry holds, persistent and instance.
    fn stored(&self) -> (Map<Val, Val>, Map<Val, Val>) {
        self.env.as_contract(&self.id, || {
            (
                self.env.storage().persistent().all(),
                self.env.storage().instance().all(),
            )
        })
    }

    fn instance_ttl(&self) -> u32 {
        self.env
            .as_contract(&self.id, || self.env.storage().instance().get_ttl())
    }

    fn max_ttl(&self) -> u32 {
        self.env
            .as_contract(&self.id, || self.env.storage().max_ttl())
    }
}

/// Asserts a `try_` call was refused by the host's authorisation check, not by the contract.
pub(crate) fn assert_auth_refused<T: core::fmt::Debug, C: core::fmt::Debug>(
    result: Result<Result<T, C>, Result<Error, InvokeError>>,
) {
    match result {
        Err(Err(InvokeError::Abort)) => {}
        Err(Ok(e)) => panic!("expected an auth failure, got contract error {e:?}"),
        other => panic!("expected an auth failure, got {other:?}"),
    }
}

#[test]
fn error_codes_are_pinned() {
    let pinned = [
        (Error::AlreadyInitialized, 1),
        (Error::NotInitialized, 2),
        (Error::InvalidSeverity, 3),
        (Error::InconsistentAttestation, 4),
        (Error::NotAttested, 5),
        (Error::NoPendingAdmin, 6),
        (Error::BatchTooLarge, 7),
        (Error::ReservedFlags, 8),
        (Error::ViolationBelowCritical, 9),
        (Error::NotAttester, 10),
        (Error::AttesterExists, 11),
        (Error::UpgradeDelayRequired, 12),
        (Error::NoPendingUpgrade, 13),
        (Error::UpgradeNotDue, 14),
        (Error::TooManyAttesters, 15),
        (Error::CodeMismatch, 16),
        (Error::TooManyAssets, 17),
        (Error::NoPendingAttesterChange, 18),
        (Error::AttesterChangeNotDue, 19),
        (Error::VerdictStoreBound, 20),
        (Error::VerdictStoreMismatch, 21),
        (Error::NoVerdictStore, 22),
        (Error::AttesterLeaving, 23),
        (Error::NoPendingVerdictStore, 24),
        (Error::VerdictStoreNotDue, 25),
    ];
    for (error, code) in pinned {
        assert_eq!(
            format!("{:?}", HostError::from(error)),
            format!("Error(Contract, #{code})")
        );
    }
}

#[test]
fn masks_and_bits_match_the_published_abi() {
    assert_eq!(CAPABILITY_MASK, 7);
    assert_eq!(CONFISCATION_MASK, 4 | 1024);
    assert_eq!(POLICY_MASK_CONFISCATION_ONLY, 4 | 512 | 1024 | 16384);
    assert_eq!(POLICY_MASK_CONFISCATION_ONLY, 17924);
    assert_eq!(
        POLICY_MASK_FREEZE_INCLUSIVE,
        2 | 4 | 512 | 1024 | 2048 | 16384
    );
    assert_eq!(POLICY_MASK_FREEZE_INCLUSIVE, 19974);
    assert_eq!(MECH_SEP41_VIOLATION, 256);
    assert_eq!(MECH_CODE_MUTABLE, 512);
    assert_eq!(MECH_ADMIN_CLAWBACK, 1024);
    assert_eq!(MECH_ADMIN_FREEZE, 2048);
    assert_eq!(MECH_ADMIN_MINT, 4096);
    assert_eq!(MECH_ADMIN_UNCLASSIFIED, 8192);
    assert_eq!(MECH_ADMIN_TRANSFER_FEE, 16384);
    assert_eq!(CONTRACT_MASK, 32256);
    assert_eq!(KNOWN_FLAGS_MASK, 32767);
    assert_eq!(MAX_BATCH_SIZE, 35);
    assert_eq!(MAX_ATTESTERS, 16);
    assert_eq!(MAX_QUORUM_ATTESTERS, 10);
    assert_eq!(MAX_ASSESS_ASSETS, 10);
    assert_eq!(MIN_NOTICE_SECS, 3_600);
}

#[test]
fn constructor_sets_admin_and_nothing_is_attested() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        assert_eq!(c.admin(), s.admin);
        assert_eq!(c.pending_admin(), None);
        assert_eq!(c.version(), INTERFACE_VERSION);
        assert!(c.is_attester(&s.attester));
        assert!(
            !c.is_attester(&s.admin),
            "the admin is not an attester by default"
        );
        let asset = new_token(&s.env);
        assert_eq!(c.get_safety(&asset), None);
        assert!(!c.is_safe(&asset, &4, &ANY_AGE), "{build:?}");
        assert!(!c.is_safe_masked(&asset, &0, &ANY_AGE), "{build:?}");
        assert_eq!(c.get_revocation(&asset), None);
    });
}

#[test]
fn attest_stores_ledger_time_authorises_attester_and_emits_event() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        let code = live_code(&asset);
        let hash = s.hash(7);
        c.attest(&s.attester, &asset, &2, &18, &hash, &live_code(&asset));
        s.assert_auth(
            &s.attester,
            "attest",
            (&s.attester, &asset, 2u32, 18u32, &hash, code.clone()).into_val(&s.env),
        );
        let expected_event = Attested {
            asset: asset.clone(),
            attester: s.attester.clone(),
            severity: 2,
            flags: 18,
            evidence_hash: hash.clone(),
            attested_at: 1_786_771_651,
        };
        assert_eq!(s.env.events().all(), [expected_event.to_xdr(&s.env, &s.id)]);
        assert_eq!(
            c.get_safety(&asset),
            Some(Safety {
                severity: 2,
                flags: 18,
                evidence_hash: hash,
                attested_at: 1_786_771_651,
            })
        );
    });
}

#[test]
fn attest_refuses_invalid_verdicts_in_rule_order() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        let h = s.hash(1);
        let a = &s.attester;
        assert_contract_error(
            c.try_attest(a, &asset, &5, &0, &h, &live_code(&asset)),
            Error::InvalidSeverity,
            3,
        );
        assert_contract_error(
            c.try_attest(a, &asset, &5, &1024, &h, &live_code(&asset)),
            Error::InvalidSeverity,
            3,
        );
        assert_contract_error(
            c.try_attest(a, &asset, &4, &(1 << 15), &h, &live_code(&asset)),
            Error::ReservedFlags,
            8,
        );
        assert_contract_error(
            c.try_attest(a, &asset, &4, &(1 << 31), &h, &live_code(&asset)),
            Error::ReservedFlags,
            8,
        );
        // Clawback below high, revocable below medium, auth required below low.
        assert_contract_error(
            c.try_attest(a, &asset, &2, &6, &h, &live_code(&asset)),
            Error::InconsistentAttestation,
            4,
        );
        assert_contract_error(
            c.try_attest(a, &asset, &1, &2, &h, &live_code(&asset)),
            Error::InconsistentAttestation,
            4,
        );
        assert_contract_error(
            c.try_attest(a, &asset, &0, &1, &h, &live_code(&asset)),
            Error::InconsistentAttestation,
            4,
        );
        // A token's code powers below their floors: code_mutable and admin_clawback below high,
        // admin_freeze below medium.
        for (severity, flags) in [
            (2, MECH_CODE_MUTABLE),
            (0, MECH_CODE_MUTABLE | MECH_ADMIN_MINT),
            (2, MECH_ADMIN_CLAWBACK),
            (1, MECH_ADMIN_FREEZE),
            (0, MECH_ADMIN_FREEZE | MECH_ADMIN_MINT),
            // admin_transfer_fee below medium: a clear (or low) verdict with bit 14 is refused.
            (0, MECH_ADMIN_TRANSFER_FEE),
            (1, MECH_ADMIN_TRANSFER_FEE | MECH_ADMIN_UNCLASSIFIED),
        ] {
            assert_contract_error(
                c.try_attest(a, &asset, &severity, &flags, &h, &live_code(&asset)),
                Error::InconsistentAttestation,
                4,
            );
        }
        // sep41_violation only accompanies critical.
        assert_contract_error(
            c.try_attest(a, &asset, &3, &256, &h, &live_code(&asset)),
            Error::ViolationBelowCritical,
            9,
        );
        assert_contract_error(
            c.try_attest(a, &asset, &0, &256, &h, &live_code(&asset)),
            Error::ViolationBelowCritical,
            9,
        );
        assert_eq!(
            c.get_safety(&asset),
            None,
            "{build:?}: a refusal writes nothing"
        );
        assert_eq!(
            s.env.events().all().events().len(),
            0,
            "no event on refusal"
        );
        // The boundaries themselves are accepted.
        c.attest(a, &asset, &4, &(256 | 32 | 16), &h, &live_code(&asset));
        c.attest(a, &asset, &3, &7, &h, &live_code(&asset));
        c.attest(a, &asset, &4, &511, &h, &live_code(&asset));
        assert_eq!(c.get_safety(&asset).unwrap().flags, 511);
        // A token's code powers at their floors; mint has none.
        c.attest(a, &asset, &0, &MECH_ADMIN_MINT, &h, &live_code(&asset));
        c.attest(
            a,
            &asset,
            &2,
            &(MECH_ADMIN_FREEZE | MECH_ADMIN_MINT),
            &h,
            &live_code(&asset),
        );
        c.attest(
            a,
            &asset,
            &3,
            &(MECH_CODE_MUTABLE | MECH_ADMIN_MINT),
            &h,
            &live_code(&asset),
        );
        c.attest(a, &asset, &3, &MECH_ADMIN_CLAWBACK, &h, &live_code(&asset));
        c.attest(a, &asset, &4, &8191, &h, &live_code(&asset));
        assert_eq!(c.get_safety(&asset).unwrap().flags, 8191);
        // admin_unclassified (bit 13) implies no level: clear with it alone is accepted.
        c.attest(
            a,
            &asset,
            &0,
            &MECH_ADMIN_UNCLASSIFIED,
            &h,
            &live_code(&asset),
        );
        assert_eq!(c.get_safety(&asset).unwrap().flags, MECH_ADMIN_UNCLASSIFIED);
        // admin_transfer_fee (bit 14) at its floor, medium, and above it (high: a fee seen to
        // take everything a transfer sends).
        c.attest(
            a,
            &asset,
            &2,
            &MECH_ADMIN_TRANSFER_FEE,
            &h,
            &live_code(&asset),
        );
        assert_eq!(c.get_safety(&asset).unwrap().flags, MECH_ADMIN_TRANSFER_FEE);
        c.attest(
            a,
            &asset,
            &3,
            &MECH_ADMIN_TRANSFER_FEE,
            &h,
            &live_code(&asset),
        );
        assert_eq!(c.get_safety(&asset).unwrap().severity, 3);
        c.attest(a, &asset, &4, &KNOWN_FLAGS_MASK, &h, &live_code(&asset));
        assert_eq!(c.get_safety(&asset).unwrap().flags, 32767);
    });
}

#[test]
fn writes_need_an_admitted_attester_that_signed() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        let h = s.hash(1);
        let stranger = Address::generate(&s.env);
        // Signed, but not in the set.
        assert_contract_error(
            c.try_attest(&stranger, &asset, &0, &0, &h, &live_code(&asset)),
            Error::NotAttester,
            10,
        );
        let batch = vec![&s.env];
        assert_contract_error(c.try_attest_many(&stranger, &batch), Error::NotAttester, 10);
        assert_contract_error(c.try_revoke(&stranger, &asset), Error::NotAttester, 10);
        // The admin is not an attester unless it adds itself.
        assert_contract_error(
            c.try_attest(&s.admin, &asset, &0, &0, &h, &live_code(&asset)),
            Error::NotAttester,
            10,
        );

        // In the set, but someone else signed.
        s.env.mock_auths(&[MockAuth {
            address: &stranger,
            invoke: &MockAuthInvoke {
                contract: &s.id,
                fn_name: "attest",
                args: (&s.attester, &asset, 0u32, 0u32, &h, live_code(&asset)).into_val(&s.env),
                sub_invokes: &[],
            },
        }]);
        assert_auth_refused(c.try_attest(&s.attester, &asset, &0, &0, &h, &live_code(&asset)));
        s.env.set_auths(&[]);
        assert_auth_refused(c.try_attest_many(&s.attester, &batch));
        assert_auth_refused(c.try_revoke(&s.attester, &asset));
        s.env.mock_all_auths();
        assert_eq!(c.get_safety(&asset), None);
    });
}

#[test]
fn attester_set_is_managed_by_the_admin_only() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let second = Address::generate(&s.env);
        c.add_attester(&second);
        s.assert_auth(&s.admin, "add_attester", (&second,).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AttesterAdded {
                attester: second.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_contract_error(c.try_add_attester(&second), Error::AttesterExists, 11);

        // Both attesters write; each event names its writer.
        let asset = new_token(&s.env);
        let code = live_code(&asset);
        c.attest(&second, &asset, &1, &1, &s.hash(2), &live_code(&asset));
        s.assert_auth(
            &second,
            "attest",
            (&second, &asset, 1u32, 1u32, s.hash(2), code.clone()).into_val(&s.env),
        );
        c.attest(&s.attester, &asset, &0, &0, &s.hash(3), &live_code(&asset));
        assert_eq!(
            c.get_safety(&asset).unwrap().severity,
            1,
            "{build:?}: the more severe of the two"
        );

        c.remove_attester(&second);
        s.assert_auth(&s.admin, "remove_attester", (&second,).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AttesterRemoved {
                attester: second.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert!(!c.is_attester(&second));
        assert_eq!(c.get_safety(&asset).unwrap().severity, 0, "{build:?}");
        assert_contract_error(c.try_remove_attester(&second), Error::NotAttester, 10);
        assert_contract_error(
            c.try_attest(&second, &asset, &0, &0, &s.hash(4), &live_code(&asset)),
            Error::NotAttester,
            10,
        );

        // Nobody but the admin manages the set.
        s.env.set_auths(&[]);
        assert_auth_refused(c.try_add_attester(&Address::generate(&s.env)));
        assert_auth_refused(c.try_remove_attester(&s.attester));
        s.env.mock_all_auths();
        assert!(c.is_attester(&s.attester), "{build:?}");
    });
}

#[test]
fn admin_transfer_takes_two_steps() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let next = Address::generate(&s.env);
        assert_contract_error(c.try_accept_admin(), Error::NoPendingAdmin, 6);

        s.env.set_auths(&[]);
        assert_auth_refused(c.try_transfer_admin(&next));
        s.env.mock_all_auths();

        c.transfer_admin(&next);
        s.assert_auth(&s.admin, "transfer_admin", (&next,).into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AdminProposed {
                admin: s.admin.clone(),
                pending_admin: next.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(
            c.admin(),
            s.admin,
            "the old admin keeps power until acceptance"
        );
        assert_eq!(c.pending_admin(), Some(next.clone()));

        // Only the proposed admin can accept.
        s.authorise_only(&s.admin, "accept_admin");
        assert_auth_refused(c.try_accept_admin());
        s.env.mock_all_auths();

        c.accept_admin();
        s.assert_auth(&next, "accept_admin", ().into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AdminChanged {
                admin: next.clone(),
                previous_admin: s.admin.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(c.admin(), next);
        assert_eq!(c.pending_admin(), None);
        assert_contract_error(c.try_accept_admin(), Error::NoPendingAdmin, 6);

        // The new admin now manages attesters.
        let third = Address::generate(&s.env);
        c.add_attester(&third);
        s.assert_auth(&next, "add_attester", (&third,).into_val(&s.env));
    });
}

#[test]
fn item4_admin_can_cancel_and_replace_a_pending_transfer() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (first, second) = (Address::generate(&s.env), Address::generate(&s.env));
        assert_contract_error(c.try_cancel_admin_transfer(), Error::NoPendingAdmin, 6);

        c.transfer_admin(&first);
        // Only the admin cancels: neither a stranger nor the proposed admin.
        s.authorise_only(&first, "cancel_admin_transfer");
        assert_auth_refused(c.try_cancel_admin_transfer());
        s.env.mock_all_auths();
        assert_eq!(c.pending_admin(), Some(first.clone()), "{build:?}");

        c.cancel_admin_transfer();
        s.assert_auth(&s.admin, "cancel_admin_transfer", ().into_val(&s.env));
        assert_eq!(
            s.env.events().all(),
            [AdminTransferCancelled {
                admin: s.admin.clone(),
                pending_admin: first.clone()
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(c.pending_admin(), None);
        assert_contract_error(c.try_accept_admin(), Error::NoPendingAdmin, 6);
        assert_contract_error(c.try_cancel_admin_transfer(), Error::NoPendingAdmin, 6);
        assert_eq!(c.admin(), s.admin);

        // A replaced proposal: only the latest proposed admin can accept.
        c.transfer_admin(&first);
        c.transfer_admin(&second);
        assert_eq!(c.pending_admin(), Some(second.clone()));
        s.authorise_only(&first, "accept_admin");
        assert_auth_refused(c.try_accept_admin());
        s.env.mock_all_auths();
        c.accept_admin();
        s.assert_auth(&second, "accept_admin", ().into_val(&s.env));
        assert_eq!(c.admin(), second, "{build:?}");
    });
}

#[test]
fn freshness_boundary_is_inclusive() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        c.attest(&s.attester, &asset, &0, &0, &s.hash(1), &live_code(&asset));
        let t0 = s.env.ledger().timestamp();
        let max = 86_400u64;
        s.env.ledger().set_timestamp(t0 + max);
        assert!(c.is_safe(&asset, &0, &max), "{build:?}: age == max passes");
        assert!(c.is_safe_masked(&asset, &7, &max));
        s.env.ledger().set_timestamp(t0 + max + 1);
        assert!(!c.is_safe(&asset, &0, &max), "{build:?}: max + 1 refuses");
        assert!(!c.is_safe_masked(&asset, &7, &max));
        // A larger window admits again; 0 admits nothing (it used to turn the check off).
        assert!(c.is_safe(&asset, &0, &ANY_AGE));
        assert!(c.is_safe_masked(&asset, &0, &ANY_AGE));
        assert!(c.is_safe(&asset, &0, &(max + 1)));
        s.env.ledger().set_timestamp(t0);
        assert!(
            !c.is_safe(&asset, &0, &0),
            "{build:?}: a zero window at age 0"
        );
        assert!(!c.is_safe_masked(&asset, &0, &0));
        assert_eq!(c.assess(&asset, &0, &0, &0), Assessment::Stale(0));
        let both = vec![&s.env, s.attester.clone()];
        assert!(!c.is_safe_quorum(&asset, &both, &1, &0, &0));
        // The entry itself is unchanged by age.
        assert_eq!(c.get_safety(&asset).unwrap().attested_at, t0);
    });
}

#[test]
fn severity_ceiling_and_mask_see_different_things() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (usdc, usdz, doge) = (new_token(&s.env), new_token(&s.env), new_token(&s.env));
        c.attest(&s.attester, &usdc, &2, &18, &s.hash(1), &live_code(&usdc)); // revocable, domain unverified
        c.attest(&s.attester, &usdz, &3, &6, &s.hash(2), &live_code(&usdz)); // clawback + revocable
        c.attest(&s.attester, &doge, &4, &48, &s.hash(3), &live_code(&doge)); // critical by reputation only

        assert!(c.is_safe(&usdc, &2, &ANY_AGE));
        assert!(!c.is_safe(&usdc, &1, &ANY_AGE));
        assert!(!c.is_safe_masked(&usdc, &POLICY_MASK_FREEZE_INCLUSIVE, &ANY_AGE));
        assert!(c.is_safe_masked(&usdc, &POLICY_MASK_CONFISCATION_ONLY, &ANY_AGE));

        assert!(c.is_safe(&usdz, &3, &ANY_AGE));
        assert!(!c.is_safe(&usdz, &2, &ANY_AGE));
        assert!(!c.is_safe_masked(&usdz, &POLICY_MASK_CONFISCATION_ONLY, &ANY_AGE));

        // Bug #26 fixed (issue #16, item 4): a critical asset with no capability bits is refused
        // by every mask, and a ceiling of 4 no longer admits it.
        assert!(
            !c.is_safe_masked(&doge, &CAPABILITY_MASK, &ANY_AGE),
            "{build:?}"
        );
        assert!(!c.is_safe_masked(&doge, &0, &ANY_AGE), "{build:?}");
        assert!(!c.is_safe(&doge, &3, &ANY_AGE));
        assert!(!c.is_safe(&doge, &4, &ANY_AGE), "{build:?}");
        assert!(!c.is_safe(&doge, &u32::MAX, &ANY_AGE), "{build:?}");
        assert!(!c.is_safe_masked(&doge, &MECH_BLOCKLISTED, &ANY_AGE));
        assert_eq!(
            c.get_safety(&doge).unwrap().severity,
            4,
            "the raw entry is kept"
        );
    });
}

#[test]
fn revoke_leaves_a_trace_and_re_attest_restores() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        let h = s.hash(9);
        assert_contract_error(c.try_revoke(&s.attester, &asset), Error::NotAttested, 5);
        c.attest(&s.attester, &asset, &1, &1, &h, &live_code(&asset));
        let before = c.get_safety(&asset).unwrap();

        s.env.ledger().set_timestamp(before.attested_at + 60);
        c.revoke(&s.attester, &asset);
        s.assert_auth(
            &s.attester,
            "revoke",
            (&s.attester, &asset).into_val(&s.env),
        );
        assert_eq!(
            s.env.events().all(),
            [Revoked {
                asset: asset.clone(),
                attester: s.attester.clone(),
                revoked_by: s.attester.clone(),
                revoked_at: before.attested_at + 60
            }
            .to_xdr(&s.env, &s.id)]
        );
        assert_eq!(c.get_safety(&asset), None);
        assert!(!c.is_safe(&asset, &4, &ANY_AGE));
        assert!(!c.is_safe_masked(&asset, &0, &ANY_AGE));
        let trace = Revocation {
            revoked_at: before.attested_at + 60,
            attester: s.attester.clone(),
            revoked: before.clone(),
        };
        assert_eq!(c.get_revocation(&asset), Some(trace.clone()));
        assert_contract_error(c.try_revoke(&s.attester, &asset), Error::NotAttested, 5);

        s.env.ledger().set_timestamp(before.attested_at + 120);
        c.attest(&s.attester, &asset, &1, &1, &h, &live_code(&asset));
        let again = c.get_safety(&asset).unwrap();
        assert_eq!(again.attested_at, before.attested_at + 120, "{build:?}");
        assert!(c.is_safe(&asset, &1, &60));
        assert_eq!(c.get_revocation(&asset), Some(trace), "the trace survives");
    });
}

fn batch(s: &Setup, n: u32, first_asset_byte: u8) -> (Vec<Attestation>, StdVec<Address>) {
    let mut out = Vec::new(&s.env);
    let mut assets = StdVec::new();
    for i in 0..n {
        let asset = new_token(&s.env);
        out.push_back(Attestation {
            asset: asset.clone(),
            severity: i % 4,
            flags: [0u32, 1, 2, 4][(i % 4) as usize],
            evidence_hash: BytesN::from_array(
                &s.env,
                &[first_asset_byte.wrapping_add(i as u8); 32],
            ),
            code: live_code(&asset),
        });
        assets.push(asset);
    }
    // Deploying the tokens spent the test's budget; the call under test is measured apart (the
    // bench prints a full batch against the network's per-transaction limits).
    s.env.cost_estimate().budget().reset_unlimited();
    (out, assets)
}

#[test]
fn batch_of_exactly_the_cap_is_written_with_one_timestamp() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (items, assets) = batch(&s, MAX_BATCH_SIZE, 0);
        c.attest_many(&s.attester, &items);
        s.assert_auth(
            &s.attester,
            "attest_many",
            (&s.attester, &items).into_val(&s.env),
        );
        let now = s.env.ledger().timestamp();
        let expected: StdVec<_> = items
            .iter()
            .map(|a| {
                Attested {
                    asset: a.asset.clone(),
                    attester: s.attester.clone(),
                    severity: a.severity,
                    flags: a.flags,
                    evidence_hash: a.evidence_hash.clone(),
                    attested_at: now,
                }
                .to_xdr(&s.env, &s.id)
            })
            .collect();
        assert_eq!(
            s.env.events().all(),
            expected,
            "{build:?}: one event per element"
        );
        for (item, asset) in items.iter().zip(assets.iter()) {
            assert_eq!(
                c.get_safety(asset),
                Some(Safety {
                    severity: item.severity,
                    flags: item.flags,
                    evidence_hash: item.evidence_hash,
                    attested_at: now,
                })
            );
        }
    });
}

#[test]
fn batch_over_the_cap_or_with_one_invalid_element_writes_nothing() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let (items, assets) = batch(&s, MAX_BATCH_SIZE + 1, 0);
        assert_contract_error(
            c.try_attest_many(&s.attester, &items),
            Error::BatchTooLarge,
            7,
        );
        assert!(
            assets.iter().all(|a| c.get_safety(a).is_none()),
            "{build:?}"
        );

        let (mut items, assets) = batch(&s, 10, 0);
        let mut bad = items.get(7).unwrap();
        bad.flags = MECH_AUTH_CLAWBACK_ENABLED;
        bad.severity = SEVERITY_MEDIUM;
        items.set(7, bad);
        assert_contract_error(
            c.try_attest_many(&s.attester, &items),
            Error::InconsistentAttestation,
            4,
        );
        assert!(
            assets.iter().all(|a| c.get_safety(a).is_none()),
            "{build:?}: elements before the invalid one are not written"
        );
        assert_eq!(s.env.events().all().events().len(), 0);
    });
}

#[test]
fn empty_batch_writes_and_emits_nothing_but_still_needs_the_attester() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let empty = Vec::new(&s.env);
        let seq = s.env.ledger().sequence();
        s.env.ledger().set_sequence_number(seq + 10);
        let stored = s.stored();
        c.attest_many(&s.attester, &empty);
        s.assert_auth(
            &s.attester,
            "attest_many",
            (&s.attester, &empty).into_val(&s.env),
        );
        assert_eq!(s.env.events().all().events().len(), 0, "{build:?}");
        assert_eq!(s.stored(), stored, "no registry entry written");
        assert_eq!(s.instance_ttl(), s.max_ttl() - 10, "no TTL bump");
        assert_eq!(
            s.ttl(&DataKey::Attester(s.attester.clone())),
            s.max_ttl() - 10
        );
    });
}

#[test]
fn repeated_asset_in_a_batch_applies_in_order() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        let mk = |severity: u32, flags: u32| Attestation {
            asset: asset.clone(),
            severity,
            flags,
            evidence_hash: s.hash(severity as u8),
            code: live_code(&asset),
        };
        c.attest_many(&s.attester, &vec![&s.env, mk(3, 4), mk(1, 1)]);
        assert_eq!(s.env.events().all().events().len(), 2, "an event each");
        assert_eq!(
            c.get_safety(&asset).unwrap().severity,
            1,
            "{build:?}: last wins"
        );
    });
}

#[test]
fn writes_extend_ttl_to_the_maximum_and_reads_touch_nothing() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        c.attest(&s.attester, &asset, &0, &0, &s.hash(1), &live_code(&asset));
        // The asset's verdicts are keyed by the bare asset address, the admission by its bare id.
        let key = asset.clone();
        let max = s.max_ttl();
        assert_eq!(s.ttl(&key), max, "{build:?}: entry topped up");
        assert_eq!(s.instance_ttl(), max, "instance topped up");
        assert_eq!(s.ttl(&DataKey::Attester(s.attester.clone())), max);
        let admission: u32 = s.env.as_contract(&s.id, || {
            s.env
                .storage()
                .persistent()
                .get(&DataKey::Attester(s.attester.clone()))
                .unwrap()
        });
        assert_eq!(s.ttl(&admission), max, "{build:?}: the admission topped up");

        // Reads a while later leave every TTL where it was.
        let seq = s.env.ledger().sequence();
        s.env.ledger().set_sequence_number(seq + 1_000);
        assert!(c.get_safety(&asset).is_some());
        assert!(c.is_safe(&asset, &0, &ANY_AGE));
        assert!(c.is_safe_masked(&asset, &0, &ANY_AGE));
        assert!(c.get_safety_by(&asset, &s.attester).is_some());
        assert!(c.is_safe_quorum(&asset, &vec![&s.env, s.attester.clone()], &1, &0, &ANY_AGE));
        assert_eq!(
            c.assess(&asset, &0, &0, &ANY_AGE),
            Assessment::Safe(c.get_safety(&asset).unwrap())
        );
        assert_eq!(s.env.cost_estimate().resources().write_entries, 0);
        assert_eq!(s.ttl(&key), max - 1_000, "{build:?}: reads never extend");
        assert_eq!(s.instance_ttl(), max - 1_000);

        // The next write tops everything up again, through a batch too.
        let mut items = Vec::new(&s.env);
        items.push_back(Attestation {
            asset: asset.clone(),
            severity: 0,
            flags: 0,
            evidence_hash: s.hash(2),
            code: live_code(&asset),
        });
        c.attest_many(&s.attester, &items);
        assert_eq!(s.ttl(&key), s.max_ttl());
        assert_eq!(s.instance_ttl(), s.max_ttl());

        // Revocation trace too.
        c.revoke(&s.attester, &asset);
        assert_eq!(s.ttl(&DataKey::Revoked(asset.clone())), s.max_ttl());
    });
}

#[test]
fn archived_entry_is_restored_with_its_original_attested_at() {
    for_each_build(|build| {
        let s = Setup::new(build);
        let c = s.client();
        let asset = new_token(&s.env);
        c.attest(&s.attester, &asset, &2, &2, &s.hash(5), &live_code(&asset));
        let original = c.get_safety(&asset).unwrap();
        let live_for = s.ttl(&asset);

        // Let the entry (and instance) archive, months later.
        let seq = s.env.ledger().sequence();
        s.env.ledger().set_sequence_number(seq + live_for + 1);
        s.env
            .ledger()
            .set_timestamp(original.attested_at + 200 * 86_400);
        let restored = c.get_safety(&asset);
        // The read restored archived entries (a read of live state writes nothing).
        assert!(
            s.env.cost_estimate().resources().write_entries >= 1,
            "{build:?}: the entry was archived before the read"
        );
        assert_eq!(restored, Some(original.clone()), "{build:?}");
        // Restored but old: fail closed on freshness.
        assert!(!c.is_safe(&asset, &2, &86_400));
        assert!(c.is_safe(&asset, &2, &ANY_AGE));
    });
}

/// The deployed interface is the contract's boundary and nothing else: every function, the
/// error enum, the five types callers see and the ten events — and none of the SDK's own
/// auth types, which soroban-sdk writes into every spec for the build system to shake out.
#[test]
fn wasm_interface_holds_exactly_the_contract_boundary() {
    let mut names = assay_spec_shake::entry_names(crate::testutils::registry_wasm())
        .expect("spec of the built wasm");
    names.sort();
    let mut expected: StdVec<&str> = [
        "fn __constructor",
        "fn accept_admin",
        "fn add_attester",
        "fn admin",
        "fn attest",
        "fn attest_many",
        "fn cancel_admin_transfer",
        "fn get_revocation",
        "fn get_safety",
        "fn is_attester",
        "fn is_safe",
        "fn is_safe_masked",
        "fn pending_admin",
        "fn remove_attester",
        "fn revoke",
        "fn transfer_admin",
        "fn version",
        "fn admin_revoke",
        "fn apply_upgrade",
        "fn assess",
        "fn cancel_upgrade",
        "fn get_safety_by",
        "fn is_safe_quorum",
        "fn pending_upgrade",
        "fn propose_upgrade",
        "fn upgrade_delay_secs",
        "error Error",
        "struct Attestation",
        "struct PendingUpgrade",
        "union Assessment",
        "union CodeBinding",
        "struct PendingAttesterChange",
        "fn apply_attester_change",
        "fn cancel_attester_change",
        "fn pending_attester_change",
        "fn assess_many",
        "event AttesterChangeProposed",
        "event AttesterChangeCancelled",
        "struct Revocation",
        "struct Safety",
        "event AdminChanged",
        "event AdminProposed",
        "event AdminTransferCancelled",
        "event Attested",
        "event AttesterAdded",
        "event AttesterRemoved",
        "event Revoked",
        "event Upgraded",
        "event UpgradeProposed",
        "event UpgradeCancelled",
        "fn bind_verdict_store",
        "fn verdict_store",
        "fn republish",
        "event VerdictStoreBound",
        "fn apply_verdict_store",
        "fn cancel_verdict_store",
        "fn pending_verdict_store",
        "struct PendingVerdictStore",
        "event VerdictStoreProposed",
        "event VerdictStoreCancelled",
    ]
    .to_vec();
    expected.sort();
    assert_eq!(names, expected);
}
