#![no_std]
//! Assay safety registry.
//!
//! Holds, for each token contract address (a classic asset's Stellar Asset Contract address),
//! the attested severity, mechanics bits, evidence hash and ledger time of the attestation.
//! Contracts read it with `get_safety`, `is_safe` or `is_safe_masked` and fail closed: no entry,
//! a stale entry or an unacceptable one all answer "no".
//!
//! The read ABI (`get_safety`, `is_safe`, `is_safe_masked`, `Safety`, `Attestation`) and error
//! codes 1..=7 are those of the earlier registry. Writes now name their attester, admitted by the
//! admin; see `docs/contract-interface.md` for the full interface.
use soroban_sdk::{
    contract, contractimpl,
    unwrap::{UnwrapInfallible, UnwrapOptimized},
    Address, BytesN, Env, TryFromVal, Vec,
};

mod error;
mod events;
mod interface;
mod mechanics;
mod storage;
mod types;

pub use error::Error;
pub use events::{
    AdminChanged, AdminProposed, AdminTransferCancelled, Attested, AttesterAdded, AttesterRemoved,
    Revoked, Upgraded,
};
pub use interface::SafetyRegistryInterface;
pub use mechanics::*;
pub use storage::TTL_TOP_UP_MARGIN_LEDGERS;
pub use types::{Attestation, DataKey, Revocation, Safety};

#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

/// Interface version, bumped whenever a function is added or changes.
pub const INTERFACE_VERSION: u32 = 3;

#[contract]
pub struct SafetyRegistry;

#[contractimpl]
impl SafetyRegistry {
    /// Deploys the registry under `admin`, who manages attesters, admin transfer and upgrades.
    pub fn __constructor(env: Env, admin: Address) {
        // Replaces the earlier `init(admin)`: the constructor runs exactly once, atomically with
        // deployment, so nobody can front-run initialisation (errors 1 and 2 are now unreachable).
        // The admin cannot attest until it adds itself as an attester.
        storage::set_admin(&env, &admin);
        storage::extend_instance(&env);
    }
}

#[contractimpl]
impl SafetyRegistryInterface for SafetyRegistry {
    fn version(_env: Env) -> u32 {
        INTERFACE_VERSION
    }

    fn admin(env: Env) -> Address {
        storage::admin(&env)
    }

    fn pending_admin(env: Env) -> Option<Address> {
        storage::pending_admin(&env)
    }

    fn transfer_admin(env: Env, new_admin: Address) -> Result<(), Error> {
        let admin = storage::admin(&env);
        admin.require_auth();
        storage::set_pending_admin(&env, &new_admin);
        storage::extend_instance(&env);
        AdminProposed {
            admin,
            pending_admin: new_admin,
        }
        .publish(&env);
        Ok(())
    }

    fn cancel_admin_transfer(env: Env) -> Result<(), Error> {
        let admin = storage::admin(&env);
        admin.require_auth();
        let pending_admin = storage::pending_admin(&env).ok_or(Error::NoPendingAdmin)?;
        storage::clear_pending_admin(&env);
        storage::extend_instance(&env);
        AdminTransferCancelled {
            admin,
            pending_admin,
        }
        .publish(&env);
        Ok(())
    }

    fn accept_admin(env: Env) -> Result<(), Error> {
        let pending = storage::pending_admin(&env).ok_or(Error::NoPendingAdmin)?;
        pending.require_auth();
        let previous_admin = storage::admin(&env);
        storage::set_admin(&env, &pending);
        storage::clear_pending_admin(&env);
        storage::extend_instance(&env);
        AdminChanged {
            admin: pending,
            previous_admin,
        }
        .publish(&env);
        Ok(())
    }

    fn add_attester(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        if storage::is_attester(&env, &attester) {
            return Err(Error::AttesterExists);
        }
        storage::add_attester(&env, &attester);
        storage::extend_instance(&env);
        AttesterAdded { attester }.publish(&env);
        Ok(())
    }

    fn remove_attester(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        if !storage::is_attester(&env, &attester) {
            return Err(Error::NotAttester);
        }
        storage::remove_attester(&env, &attester);
        storage::extend_instance(&env);
        AttesterRemoved { attester }.publish(&env);
        Ok(())
    }

    fn is_attester(env: Env, attester: Address) -> bool {
        storage::is_attester(&env, &attester)
    }

    fn upgrade(env: Env, new_wasm_hash: BytesN<32>) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        // The replacement, `update_current_contract(ContractExecutable::Wasm(..))`, copies the
        // SDK's `ContractExecutable` types into this contract's interface section (~1 KB).
        #[allow(deprecated)]
        env.deployer()
            .update_current_contract_wasm(new_wasm_hash.clone());
        Upgraded {
            wasm_hash: new_wasm_hash,
        }
        .publish(&env);
        Ok(())
    }

    fn attest(
        env: Env,
        attester: Address,
        asset: Address,
        severity: u32,
        flags: u32,
        evidence_hash: BytesN<32>,
    ) -> Result<(), Error> {
        storage::require_attester(&env, &attester)?;
        validate(severity, flags)?;
        let attested_at = now(&env);
        write(
            &env,
            &attester,
            &asset,
            severity,
            flags,
            evidence_hash,
            attested_at,
        );
        storage::extend_after_write(&env, &attester);
        Ok(())
    }

    fn attest_many(
        env: Env,
        attester: Address,
        attestations: Vec<Attestation>,
    ) -> Result<(), Error> {
        storage::require_attester(&env, &attester)?;
        if attestations.len() > MAX_BATCH_SIZE {
            return Err(Error::BatchTooLarge);
        }
        if attestations.is_empty() {
            return Ok(());
        }
        // `try_iter` + `unwrap_optimized`: `iter()` unwraps with a formatted panic (see `now`).
        for a in attestations.try_iter() {
            let a = a.unwrap_optimized();
            validate(a.severity, a.flags)?;
        }
        let attested_at = now(&env);
        for a in attestations.try_iter() {
            let a = a.unwrap_optimized();
            write(
                &env,
                &attester,
                &a.asset,
                a.severity,
                a.flags,
                a.evidence_hash,
                attested_at,
            );
        }
        storage::extend_after_write(&env, &attester);
        Ok(())
    }

    fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error> {
        storage::require_attester(&env, &attester)?;
        let revoked = storage::safety(&env, &asset).ok_or(Error::NotAttested)?;
        let revoked_at = now(&env);
        storage::remove_safety(&env, &asset);
        storage::set_revocation(
            &env,
            &asset,
            &Revocation {
                revoked_at,
                attester: attester.clone(),
                revoked,
            },
        );
        storage::extend_after_write(&env, &attester);
        Revoked {
            asset,
            attester,
            revoked_at,
        }
        .publish(&env);
        Ok(())
    }

    fn get_safety(env: Env, asset: Address) -> Option<Safety> {
        storage::safety(&env, &asset)
    }

    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool {
        let Some(safety) = storage::safety(&env, &asset) else {
            return false;
        };
        // Critical is never safe, whatever ceiling the caller passes (a ceiling of 4 or more
        // would otherwise admit it).
        if safety.severity >= SEVERITY_CRITICAL || safety.severity > max_severity {
            return false;
        }
        if safety.flags & MECH_CLAWBACK_ENABLED != 0 && max_severity < SEVERITY_HIGH {
            return false;
        }
        is_fresh(&env, &safety, max_age_secs)
    }

    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool {
        let Some(safety) = storage::safety(&env, &asset) else {
            return false;
        };
        // The mask sees powers, not reputation: a critical entry (a scam, a blocklisted domain)
        // may carry no capability bit, so severity is checked here whatever the mask.
        if safety.severity >= SEVERITY_CRITICAL || safety.flags & forbidden_mask != 0 {
            return false;
        }
        is_fresh(&env, &safety, max_age_secs)
    }

    fn get_revocation(env: Env, asset: Address) -> Option<Revocation> {
        storage::revocation(&env, &asset)
    }
}

fn is_fresh(env: &Env, safety: &Safety, max_age_secs: u64) -> bool {
    max_age_secs == 0 || now(env).saturating_sub(safety.attested_at) <= max_age_secs
}

/// The ledger timestamp. `env.ledger().timestamp()` unwraps with a formatted panic, which drags
/// ~5 KB of `core::fmt` into the `.wasm`; this traps instead on the (impossible) bad value.
fn now(env: &Env) -> u64 {
    use soroban_env_common::Env as _;
    let raw = env.get_ledger_timestamp().unwrap_infallible();
    u64::try_from_val(env, &raw).unwrap_optimized()
}

fn write(
    env: &Env,
    attester: &Address,
    asset: &Address,
    severity: u32,
    flags: u32,
    evidence_hash: BytesN<32>,
    attested_at: u64,
) {
    storage::set_safety(
        env,
        asset,
        &Safety {
            severity,
            flags,
            evidence_hash,
            attested_at,
        },
    );
    Attested {
        asset: asset.clone(),
        attester: attester.clone(),
        severity,
        flags,
        attested_at,
    }
    .publish(env);
}

#[cfg(test)]
mod test;
