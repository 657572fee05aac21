//! Test kit for contracts that read the registry (feature `testutils`), usable from any crate:
//! it needs nothing from this repository but this crate.
//!
//! [`TestRegistry`] deploys the registry in a test [`Env`] — its Rust code natively, or a `.wasm`
//! you supply as bytes (a release artefact, `include_bytes!`) — with an admin and one admitted
//! attester, and puts any verdict in place in one call ([`TestRegistry::put`]): fresh, aged by N
//! seconds, revoked, any severity and mechanics ([`TestRegistry::bind_store_from_wasm`] adds the
//! verdict store consumers read in production). Every write is a real call of the registry's
//! `attest` / `revoke`, so a verdict the registry refuses is refused here with the same
//! [`Error`]. A verdict is bound to the asset's live code ([`live_code`]): deploy the token first
//! ([`new_token`] gives a Stellar Asset Contract), and replace its code or its SAC admin to see
//! every read refuse it. [`TestRegistry::set_age`] and [`advance_ledger_time`] move ledger time across a
//! staleness boundary. docs/integrating.md shows a complete consumer test.
//!
//! The kit's admin and attester are two empty contracts ([`KitSigner`]); it writes as them from
//! their own contract frame (`Env::as_contract`), which the registry's `require_auth` accepts as
//! the direct caller's authorisation. So the kit needs no mocked authorisation and sets none up:
//! [`new_env`] mocks nothing, and your own contract's `require_auth` is enforced in your tests.
//! Authorise each call a test makes as its signer would, for exactly that invocation
//! (`env.mock_auths(&[MockAuth { .. }])`), then assert `env.auths()`; [`mint`] funds a holder of a
//! [`new_token`] the same way, authorising exactly that `mint` as the token's issuer.
extern crate std;

use soroban_sdk::{
    contract,
    testutils::{Address as _, EnvTestConfig, Ledger as _, MockAuth, MockAuthInvoke},
    token, Address, BytesN, Env, Executable, IntoVal, InvokeError,
};

use crate::{CodeBinding, Error, Safety, SafetyRegistry, SafetyRegistryClient, SEVERITY_CLEAR};

#[cfg(any(test, feature = "workspace-testutils"))]
mod workspace;
#[cfg(any(test, feature = "workspace-testutils"))]
pub use workspace::*;

/// The evidence hash a [`Verdict`] carries unless [`Verdict::with_evidence`] sets one.
pub const TEST_EVIDENCE_HASH: [u8; 32] = [0xA5; 32];

/// A verdict to put in place for one asset: what `attest` receives, how old it is, and whether
/// it was revoked since.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Verdict {
    /// 0 clear … 4 critical (`SEVERITY_*`).
    pub severity: u32,
    /// Mechanics bits (`MECH_*`).
    pub flags: u32,
    /// SHA-256 of the evidence; any 32 bytes in a test.
    pub evidence_hash: [u8; 32],
    /// How many seconds before the current ledger time the attestation was written.
    pub age_secs: u64,
    /// Revoked after it was written: `get_safety` answers `None`, `get_revocation` keeps it.
    pub revoked: bool,
}

impl Verdict {
    /// A fresh verdict with this severity and these mechanics bits.
    pub fn new(severity: u32, flags: u32) -> Self {
        Verdict {
            severity,
            flags,
            evidence_hash: TEST_EVIDENCE_HASH,
            age_secs: 0,
            revoked: false,
        }
    }

    /// A fresh verdict of severity 0 with no mechanics bits: what every gate admits.
    pub fn clear() -> Self {
        Verdict::new(SEVERITY_CLEAR, 0)
    }

    /// Written `secs` seconds before the current ledger time.
    pub fn aged(mut self, secs: u64) -> Self {
        self.age_secs = secs;
        self
    }

    /// Written, then revoked at the current ledger time.
    pub fn revoked(mut self) -> Self {
        self.revoked = true;
        self
    }

    /// With this evidence hash instead of [`TEST_EVIDENCE_HASH`].
    pub fn with_evidence(mut self, evidence_hash: [u8; 32]) -> Self {
        self.evidence_hash = evidence_hash;
        self
    }
}

/// The kit's admin and attester: a contract with no functions, so that the kit can call the
/// registry from its frame, as its own direct caller.
#[contract]
pub struct KitSigner;

/// A registry deployed in a test [`Env`], with its admin and one admitted attester.
pub struct TestRegistry {
    env: Env,
    address: Address,
    admin: Address,
    attester: Address,
}

impl TestRegistry {
    /// Deploys the registry's Rust code, registered natively in `env` (no upgrade notice, as on a
    /// local network).
    pub fn native(env: &Env) -> Self {
        Self::deploy(env, |admin| {
            env.register(SafetyRegistry, Self::constructor_args(admin))
        })
    }

    /// Deploys the registry from `wasm`, the bytes of `assay_registry.wasm` (a release artefact or
    /// `scripts/build-wasm.sh`'s `target/wasm/assay_registry.wasm`), run in the host's VM (no
    /// upgrade notice, as on a local network).
    pub fn from_wasm(env: &Env, wasm: &[u8]) -> Self {
        Self::deploy(env, |admin| {
            env.register(wasm, Self::constructor_args(admin))
        })
    }

    /// `(admin, upgrade_delay_secs: 0, allow_instant_upgrade: true)`.
    fn constructor_args(admin: &Address) -> (Address, u64, bool) {
        (admin.clone(), 0, true)
    }

    fn deploy(env: &Env, register: impl FnOnce(&Address) -> Address) -> Self {
        let admin = env.register(KitSigner, ());
        let address = register(&admin);
        let registry = TestRegistry {
            env: env.clone(),
            address,
            admin,
            attester: env.register(KitSigner, ()),
        };
        registry
            .add_attester(&registry.attester.clone())
            .unwrap_or_else(|e| panic!("admitting the kit's attester: {e:?}"));
        registry
    }

    /// The registry's contract address: what your contract is given to consult.
    pub fn address(&self) -> &Address {
        &self.address
    }

    /// Deploys a verdict store for this registry from `wasm`, the bytes of
    /// `assay_verdict_store.wasm`, and binds it as the admin does: from then on every verdict the
    /// kit puts in place is published to it, as on chain. Give your contract the store's address
    /// (returned) to test the read path production uses; the store answers as the registry does.
    ///
    /// # Panics
    /// If the registry already has a store (it binds one, once).
    pub fn bind_store_from_wasm(&self, wasm: &[u8]) -> Address {
        let store = self.env.register(wasm, (self.address.clone(),));
        let client = self.client();
        contract_result(
            self.env
                .as_contract(&self.admin, || client.try_bind_verdict_store(&store)),
        )
        .unwrap_or_else(|e| panic!("binding the verdict store: {e:?}"));
        store
    }

    /// The admin the registry was deployed under.
    pub fn admin(&self) -> &Address {
        &self.admin
    }

    /// The attester [`TestRegistry::put`] writes as.
    pub fn attester(&self) -> &Address {
        &self.attester
    }

    /// A client for reads, or for calls under your own auth set-up.
    pub fn client(&self) -> SafetyRegistryClient<'_> {
        SafetyRegistryClient::new(&self.env, &self.address)
    }

    /// Admits `attester` as the admin does, at ledger time 0: the registry counts only verdicts
    /// written after an attester's admission, and a test writes verdicts back in time
    /// ([`Verdict::aged`]). Ledger time is where it was before the call.
    ///
    /// # Errors
    /// [`Error::AttesterExists`] (11) if it is already in the set.
    pub fn add_attester(&self, attester: &Address) -> Result<(), Error> {
        let client = self.client();
        let now = self.env.ledger().timestamp();
        self.env.ledger().set_timestamp(0);
        let added = contract_result(
            self.env
                .as_contract(&self.admin, || client.try_add_attester(attester)),
        );
        self.env.ledger().set_timestamp(now);
        added
    }

    /// Withdraws `attester`'s right to write, as the admin does.
    ///
    /// # Errors
    /// [`Error::NotAttester`] (10) if it is not in the set.
    pub fn remove_attester(&self, attester: &Address) -> Result<(), Error> {
        let client = self.client();
        contract_result(
            self.env
                .as_contract(&self.admin, || client.try_remove_attester(attester)),
        )
    }

    /// Puts `verdict` in place for `asset` and returns the attestation as written. Ledger time
    /// is where it was before the call.
    ///
    /// # Panics
    /// With the registry's error if it refuses the verdict (see [`TestRegistry::try_put`]).
    pub fn put(&self, asset: &Address, verdict: &Verdict) -> Safety {
        self.try_put(asset, verdict)
            .unwrap_or_else(|e| panic!("the registry refused {verdict:?}: {e:?}"))
    }

    /// Puts `verdict` in place for `asset` through the registry's `attest` (at ledger time
    /// minus `age_secs`), then `revoke` (at the current time) if it is revoked. Returns the
    /// attestation as written, the revoked one included.
    ///
    /// # Errors
    /// Whatever `attest` returns for this severity and these flags, e.g.
    /// [`Error::InvalidSeverity`] (3), [`Error::InconsistentAttestation`] (4),
    /// [`Error::ReservedFlags`] (8), [`Error::ViolationBelowCritical`] (9), or
    /// [`Error::CodeMismatch`] (16) for an address with no contract code; nothing is written.
    ///
    /// # Panics
    /// If `age_secs` is larger than the current ledger time: set a realistic time first
    /// (`env.ledger().set_timestamp(..)`; a test `Env` starts at 0).
    pub fn try_put(&self, asset: &Address, verdict: &Verdict) -> Result<Safety, Error> {
        let now = self.env.ledger().timestamp();
        let attested_at = now.checked_sub(verdict.age_secs).unwrap_or_else(|| {
            panic!(
                "a verdict aged {} s needs a ledger time of at least that; it is {now}: call \
                 env.ledger().set_timestamp(..) first",
                verdict.age_secs
            )
        });
        let client = self.client();
        let hash = BytesN::from_array(&self.env, &verdict.evidence_hash);
        let code = live_code(asset);
        self.env.ledger().set_timestamp(attested_at);
        let written = contract_result(self.env.as_contract(&self.attester, || {
            client.try_attest(
                &self.attester,
                asset,
                &verdict.severity,
                &verdict.flags,
                &hash,
                &code,
            )
        }));
        self.env.ledger().set_timestamp(now);
        written?;
        if verdict.revoked {
            contract_result(
                self.env
                    .as_contract(&self.attester, || client.try_revoke(&self.attester, asset)),
            )?;
        }
        Ok(Safety {
            severity: verdict.severity,
            flags: verdict.flags,
            evidence_hash: hash,
            attested_at,
        })
    }

    /// Sets ledger time so that `asset`'s current attestation is `age_secs` old. A reader with a
    /// window of `max_age` admits it at `set_age(asset, max_age)` and refuses it one second later.
    ///
    /// # Panics
    /// If `asset` has no attestation.
    pub fn set_age(&self, asset: &Address, age_secs: u64) {
        let safety = self
            .client()
            .get_safety(asset)
            .unwrap_or_else(|| panic!("{asset:?} has no attestation: put one first"));
        self.env
            .ledger()
            .set_timestamp(safety.attested_at.saturating_add(age_secs));
    }
}

/// What `asset` runs now, as an attestation binds it: its WASM hash, or its Stellar Asset
/// Contract's admin. For an address with no contract code, a binding that matches nothing (the
/// registry refuses it with [`Error::CodeMismatch`]).
pub fn live_code(asset: &Address) -> CodeBinding {
    let env = asset.env();
    match asset.executable() {
        Some(Executable::Wasm(hash)) => CodeBinding::Wasm(hash),
        Some(Executable::StellarAsset) => {
            CodeBinding::StellarAssetAdmin(token::StellarAssetClient::new(env, asset).admin())
        }
        Some(Executable::Account) | None => CodeBinding::Wasm(BytesN::from_array(env, &[0; 32])),
    }
}

/// Deploys a Stellar Asset Contract with a fresh issuer as its admin: an asset the registry can
/// attest.
pub fn new_token(env: &Env) -> Address {
    env.register_stellar_asset_contract_v2(Address::generate(env))
        .address()
}

/// Mints `amount` of the Stellar Asset Contract `token` (from [`new_token`]) to `to`, authorising
/// exactly that `mint` as the token's admin (its issuer) and nothing else: the call after it runs
/// under whatever authorisation your test gives it.
pub fn mint(env: &Env, token: &Address, to: &Address, amount: i128) {
    let sac = token::StellarAssetClient::new(env, token);
    let issuer = sac.admin();
    env.mock_auths(&[MockAuth {
        address: &issuer,
        invoke: &MockAuthInvoke {
            contract: token,
            fn_name: "mint",
            args: (to, amount).into_val(env),
            sub_invokes: &[],
        },
    }]);
    sac.mint(to, &amount);
}

/// Deploys a custom token stand-in: a contract with no functions, registered natively, so it runs
/// under a WASM hash of its own that [`upgrade_code`] can replace. What a verdict binds is the code,
/// so this is all a consumer's test needs to see an upgraded token refused.
pub fn new_custom_token(env: &Env) -> Address {
    env.register(KitSigner, ())
}

/// Replaces `contract`'s code with `wasm` (uploaded first), as the contract's own
/// `update_current_contract_wasm` does on chain: the way a test upgrades a token. Every verdict bound
/// to the code it ran before stops admitting it.
pub fn upgrade_code(env: &Env, contract: &Address, wasm: &[u8]) {
    let hash = env.deployer().upload_contract_wasm(wasm);
    #[allow(deprecated)]
    env.as_contract(contract, || {
        env.deployer().update_current_contract_wasm(hash)
    });
}

/// Moves ledger time forward by `secs` (the ledger sequence stays, so no entry's TTL runs out).
pub fn advance_ledger_time(env: &Env, secs: u64) {
    let now = env.ledger().timestamp();
    env.ledger().set_timestamp(now.saturating_add(secs));
}

/// A fresh host that writes no snapshot files and mocks no authorisation: every `require_auth`
/// (your contract's included) is enforced, so a test authorises each call it makes as its signer
/// would (`env.mock_auths` with the exact invocation) and a call nobody authorised fails as it
/// would on chain. The kit's own writes need none (see the module docs).
pub fn new_env() -> Env {
    Env::new_with_config(EnvTestConfig {
        capture_snapshot_at_drop: false,
    })
}

/// The registry's refusal from a `try_` call; a host failure (which the kit never provokes) panics.
fn contract_result<T, C: core::fmt::Debug>(
    result: Result<Result<T, C>, Result<Error, InvokeError>>,
) -> Result<(), Error> {
    match result {
        Ok(Ok(_)) => Ok(()),
        Err(Ok(e)) => Err(e),
        Ok(Err(e)) => panic!("the registry's answer did not convert: {e:?}"),
        Err(Err(e)) => panic!("the host aborted the registry call: {e:?}"),
    }
}

/// Asserts a `try_` call failed with this contract error, and that the host reports it as
/// `Error(Contract, #code)`, the form callers and explorers see.
pub fn assert_contract_error<T, C, E>(
    result: Result<Result<T, C>, Result<E, soroban_sdk::InvokeError>>,
    expected: E,
    code: u32,
) where
    T: core::fmt::Debug,
    C: core::fmt::Debug,
    E: core::fmt::Debug + PartialEq + Into<soroban_sdk::Error>,
{
    match result {
        Err(Ok(actual)) => {
            assert_eq!(actual, expected);
            let host_error: soroban_sdk::Error = actual.into();
            assert_eq!(
                std::format!("{host_error:?}"),
                std::format!("Error(Contract, #{code})")
            );
        }
        other => panic!("expected Error(Contract, #{code}), got {other:?}"),
    }
}
