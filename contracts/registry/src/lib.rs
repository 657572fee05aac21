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
use soroban_sdk::{contract, contractimpl, Address, BytesN, ContractExecutable, Env, Vec};

mod error;
mod events;
mod mechanics;
mod storage;
mod types;

pub use error::Error;
pub use events::{
    AdminChanged, AdminProposed, Attested, AttesterAdded, AttesterRemoved, Revoked, Upgraded,
};
pub use mechanics::*;
pub use storage::TTL_TOP_UP_MARGIN_LEDGERS;
pub use types::{Attestation, DataKey, Revocation, Safety};

#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

/// Interface version, bumped whenever a function is added or changes.
pub const INTERFACE_VERSION: u32 = 2;

#[contract]
pub struct SafetyRegistry;

#[contractimpl]
impl SafetyRegistry {
    /// Deploys the registry under `admin`. Replaces the earlier `init(admin)`: the constructor runs
    /// once, atomically with deployment, so nobody can front-run initialisation.
    ///
    /// # Arguments
    /// * `admin` - manages the attester set, admin transfer and upgrades. It cannot attest until
    ///   it adds itself as an attester.
    pub fn __constructor(env: Env, admin: Address) {
        storage::set_admin(&env, &admin);
        storage::extend_instance(&env);
    }

    /// Interface version of this code (2; the earlier registry had no such function).
    pub fn version(_env: Env) -> u32 {
        INTERFACE_VERSION
    }

    // ---- admin ------------------------------------------------------------------------------

    /// The current admin.
    pub fn admin(env: Env) -> Address {
        storage::admin(&env)
    }

    /// The admin proposed by `transfer_admin` and not yet accepted, if any.
    pub fn pending_admin(env: Env) -> Option<Address> {
        storage::pending_admin(&env)
    }

    /// First step of an admin transfer: proposes `new_admin`, replacing any earlier proposal.
    /// The current admin keeps full power until `accept_admin`.
    ///
    /// # Arguments
    /// * `new_admin` - the proposed successor; must call `accept_admin` itself.
    ///
    /// # Errors
    /// Host auth error unless the current admin authorised the call.
    ///
    /// # Events
    /// `["admin_proposed", admin]` with data `{pending_admin}`.
    pub fn transfer_admin(env: Env, new_admin: Address) -> Result<(), Error> {
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

    /// Second step of an admin transfer: the proposed admin takes over.
    ///
    /// # Errors
    /// * [`Error::NoPendingAdmin`] (6) - no transfer is pending.
    /// * Host auth error unless the pending admin authorised the call.
    ///
    /// # Events
    /// `["admin_changed", new admin]` with data `{previous_admin}`.
    pub fn accept_admin(env: Env) -> Result<(), Error> {
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

    /// Lets `attester` write attestations.
    ///
    /// # Errors
    /// * [`Error::AttesterExists`] (11) - already in the set.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_added", attester]`.
    pub fn add_attester(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        if storage::is_attester(&env, &attester) {
            return Err(Error::AttesterExists);
        }
        storage::add_attester(&env, &attester);
        storage::extend_instance(&env);
        AttesterAdded { attester }.publish(&env);
        Ok(())
    }

    /// Withdraws `attester`'s right to write. Its existing attestations stay until revoked or
    /// overwritten; their events name who wrote them.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - not in the set.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_removed", attester]`.
    pub fn remove_attester(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        if !storage::is_attester(&env, &attester) {
            return Err(Error::NotAttester);
        }
        storage::remove_attester(&env, &attester);
        storage::extend_instance(&env);
        AttesterRemoved { attester }.publish(&env);
        Ok(())
    }

    /// Whether `attester` may currently write.
    pub fn is_attester(env: Env, attester: Address) -> bool {
        storage::is_attester(&env, &attester)
    }

    /// Replaces the contract code with already-uploaded WASM; storage and address are kept.
    ///
    /// # Arguments
    /// * `new_wasm_hash` - hash of WASM uploaded to the network.
    ///
    /// # Errors
    /// Host auth error unless the admin authorised the call; host storage error if no WASM with
    /// that hash is uploaded.
    ///
    /// # Events
    /// `["upgraded"]` with data `{wasm_hash}`.
    pub fn upgrade(env: Env, new_wasm_hash: BytesN<32>) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        env.deployer()
            .update_current_contract(ContractExecutable::Wasm(new_wasm_hash.clone()));
        Upgraded {
            wasm_hash: new_wasm_hash,
        }
        .publish(&env);
        Ok(())
    }

    // ---- writes -----------------------------------------------------------------------------

    /// Records `asset`'s verdict, stamped with the ledger time, replacing any earlier one.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `asset` - the token contract address (a classic asset's SAC address).
    /// * `severity` - 0..=4.
    /// * `flags` - mechanics bits 0..=8 (see `MECH_*`).
    /// * `evidence_hash` - SHA-256 of the evidence.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::InvalidSeverity`] (3), [`Error::ReservedFlags`] (8),
    ///   [`Error::InconsistentAttestation`] (4), [`Error::ViolationBelowCritical`] (9) -
    ///   see [`validate`], checked in that order.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// `["attest", asset]` with data `{attester, severity, flags, attested_at}`.
    pub fn attest(
        env: Env,
        attester: Address,
        asset: Address,
        severity: u32,
        flags: u32,
        evidence_hash: BytesN<32>,
    ) -> Result<(), Error> {
        storage::require_attester(&env, &attester)?;
        validate(severity, flags)?;
        let attested_at = env.ledger().timestamp();
        write(&env, &attester, &asset, severity, flags, evidence_hash, attested_at);
        storage::extend_instance(&env);
        Ok(())
    }

    /// Records up to `MAX_BATCH_SIZE` verdicts with one timestamp, all or nothing: every element
    /// is validated before anything is written. A repeated asset is applied in order (the last
    /// wins, each gets an event). An empty batch writes nothing and emits nothing.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `attestations` - at most 50 elements.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::BatchTooLarge`] (7) - more than 50 elements; nothing is truncated.
    /// * Any error of [`validate`] for the first invalid element; nothing is written.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// One `["attest", asset]` per element, in order.
    pub fn attest_many(
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
        for a in attestations.iter() {
            validate(a.severity, a.flags)?;
        }
        let attested_at = env.ledger().timestamp();
        for a in attestations.iter() {
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
        storage::extend_instance(&env);
        Ok(())
    }

    /// Withdraws `asset`'s attestation, so every read answers "no" until it is attested again.
    /// Leaves a trace readable with `get_revocation`.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `asset` - the token contract address.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::NotAttested`] (5) - `asset` has no attestation.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// `["revoke", asset]` with data `{attester, revoked_at}`.
    pub fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error> {
        storage::require_attester(&env, &attester)?;
        let revoked = storage::safety(&env, &asset).ok_or(Error::NotAttested)?;
        let revoked_at = env.ledger().timestamp();
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
        storage::extend_instance(&env);
        Revoked {
            asset,
            attester,
            revoked_at,
        }
        .publish(&env);
        Ok(())
    }

    // ---- reads (never write, never extend) ------------------------------------------------

    /// The current attestation of `asset`, or `None` if it was never attested or was revoked.
    pub fn get_safety(env: Env, asset: Address) -> Option<Safety> {
        storage::safety(&env, &asset)
    }

    /// True only if `asset` is attested, its severity is at most `max_severity`, it carries no
    /// clawback bit when `max_severity` is below 3, and (when `max_age_secs > 0`) it is at most
    /// `max_age_secs` old. `max_age_secs = 0` disables the age check.
    pub fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool {
        let Some(safety) = storage::safety(&env, &asset) else {
            return false;
        };
        if safety.severity > max_severity {
            return false;
        }
        if safety.flags & MECH_CLAWBACK_ENABLED != 0 && max_severity < SEVERITY_HIGH {
            return false;
        }
        is_fresh(&env, &safety, max_age_secs)
    }

    /// True only if `asset` is attested, none of `forbidden_mask`'s bits are set, and (when
    /// `max_age_secs > 0`) it is at most `max_age_secs` old. A mask of 0 still needs an entry.
    /// The mask sees powers, not reputation: pair it with a severity ceiling.
    pub fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool {
        let Some(safety) = storage::safety(&env, &asset) else {
            return false;
        };
        if safety.flags & forbidden_mask != 0 {
            return false;
        }
        is_fresh(&env, &safety, max_age_secs)
    }

    /// The latest revocation of `asset`, if it was ever revoked (kept after re-attestation).
    pub fn get_revocation(env: Env, asset: Address) -> Option<Revocation> {
        storage::revocation(&env, &asset)
    }
}

fn is_fresh(env: &Env, safety: &Safety, max_age_secs: u64) -> bool {
    max_age_secs == 0 || env.ledger().timestamp().saturating_sub(safety.attested_at) <= max_age_secs
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
