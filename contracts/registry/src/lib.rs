#![no_std]
//! Assay safety registry.
//!
//! Holds, for each token contract address (a classic asset's Stellar Asset Contract address) and
//! each attester, the attested severity, mechanics bits, evidence hash and ledger time of that
//! attester's verdict. Contracts read the most recent verdict by a current attester with
//! `get_safety`, `is_safe`, `is_safe_masked` or `assess`, or name their own attesters and
//! threshold with `is_safe_quorum`, and fail closed: no entry, a stale entry or an unacceptable
//! one all answer "no".
//!
//! The read ABI (`get_safety`, `is_safe`, `is_safe_masked`, `Safety`, `Attestation`) and error
//! codes 1..=7 are those of the earlier registry. Writes name their attester, admitted by the
//! admin; code upgrades wait for a notice fixed at construction. See
//! `docs/contract-interface.md` for the full interface.
use soroban_sdk::{
    contract, contractimpl,
    unwrap::{UnwrapInfallible, UnwrapOptimized},
    Address, BytesN, Env, TryFromVal, Vec,
};

mod events;
mod storage;
mod types;

pub use assay_registry_interface::*;
pub use events::{
    AdminChanged, AdminProposed, AdminTransferCancelled, Attested, AttesterAdded, AttesterRemoved,
    Revoked, UpgradeCancelled, UpgradeProposed, Upgraded,
};
pub use storage::TTL_TOP_UP_MARGIN_LEDGERS;
pub use types::DataKey;
use types::Record;

#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

/// Interface version, bumped whenever a function is added or changes.
pub const INTERFACE_VERSION: u32 = 4;

#[contract]
pub struct SafetyRegistry;

#[contractimpl]
impl SafetyRegistry {
    /// Deploys the registry under `admin`, who manages attesters, admin transfer and upgrades.
    ///
    /// # Arguments
    /// * `admin` - manages the attester set, admin transfer and upgrades.
    /// * `upgrade_delay_secs` - the notice `apply_upgrade` waits after `propose_upgrade`; fixed
    ///   for the registry's life.
    /// * `allow_instant_upgrade` - must be true for a delay of 0, which only a local network
    ///   should use.
    ///
    /// # Errors
    /// * [`Error::UpgradeDelayRequired`] (12) - a delay of 0 without `allow_instant_upgrade`.
    pub fn __constructor(
        env: Env,
        admin: Address,
        upgrade_delay_secs: u64,
        allow_instant_upgrade: bool,
    ) -> Result<(), Error> {
        // The constructor runs exactly once, atomically with deployment, so nobody can front-run
        // initialisation (errors 1 and 2 are unreachable). The admin cannot attest until it adds
        // itself as an attester.
        if upgrade_delay_secs == 0 && !allow_instant_upgrade {
            return Err(Error::UpgradeDelayRequired);
        }
        storage::set_admin(&env, &admin);
        storage::set_upgrade_delay_secs(&env, upgrade_delay_secs);
        storage::extend_instance(&env);
        Ok(())
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
        storage::add_attester(&env, &attester)?;
        storage::extend_instance(&env);
        AttesterAdded { attester }.publish(&env);
        Ok(())
    }

    fn remove_attester(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let admission = storage::admission(&env, &attester).ok_or(Error::NotAttester)?;
        storage::remove_attester(&env, &attester, admission);
        storage::extend_instance(&env);
        AttesterRemoved { attester }.publish(&env);
        Ok(())
    }

    fn is_attester(env: Env, attester: Address) -> bool {
        storage::is_attester(&env, &attester)
    }

    fn upgrade_delay_secs(env: Env) -> u64 {
        storage::upgrade_delay_secs(&env)
    }

    fn pending_upgrade(env: Env) -> Option<PendingUpgrade> {
        storage::pending_upgrade(&env)
    }

    fn propose_upgrade(env: Env, wasm_hash: BytesN<32>) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let proposed_at = now(&env);
        let applicable_at = proposed_at.saturating_add(storage::upgrade_delay_secs(&env));
        storage::set_pending_upgrade(
            &env,
            &PendingUpgrade {
                wasm_hash: wasm_hash.clone(),
                proposed_at,
                applicable_at,
            },
        );
        storage::extend_instance(&env);
        UpgradeProposed {
            wasm_hash,
            applicable_at,
        }
        .publish(&env);
        Ok(())
    }

    fn cancel_upgrade(env: Env) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_upgrade(&env).ok_or(Error::NoPendingUpgrade)?;
        storage::clear_pending_upgrade(&env);
        storage::extend_instance(&env);
        UpgradeCancelled {
            wasm_hash: pending.wasm_hash,
        }
        .publish(&env);
        Ok(())
    }

    fn apply_upgrade(env: Env) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_upgrade(&env).ok_or(Error::NoPendingUpgrade)?;
        if now(&env) < pending.applicable_at {
            return Err(Error::UpgradeNotDue);
        }
        storage::clear_pending_upgrade(&env);
        storage::extend_instance(&env);
        // The replacement, `update_current_contract(ContractExecutable::Wasm(..))`, copies the
        // SDK's `ContractExecutable` types into this contract's interface section (~1 KB).
        #[allow(deprecated)]
        env.deployer()
            .update_current_contract_wasm(pending.wasm_hash.clone());
        Upgraded {
            wasm_hash: pending.wasm_hash,
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
        let admission = storage::require_attester(&env, &attester)?;
        validate(severity, flags)?;
        let attested_at = now(&env);
        write(
            &env,
            &asset,
            Record {
                attester: attester.clone(),
                admission,
                severity,
                flags,
                evidence_hash,
                attested_at,
            },
        );
        storage::extend_after_write(&env, &attester, admission);
        Ok(())
    }

    fn attest_many(
        env: Env,
        attester: Address,
        attestations: Vec<Attestation>,
    ) -> Result<(), Error> {
        let admission = storage::require_attester(&env, &attester)?;
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
                &a.asset,
                Record {
                    attester: attester.clone(),
                    admission,
                    severity: a.severity,
                    flags: a.flags,
                    evidence_hash: a.evidence_hash,
                    attested_at,
                },
            );
        }
        storage::extend_after_write(&env, &attester, admission);
        Ok(())
    }

    fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error> {
        let admission = storage::require_attester(&env, &attester)?;
        withdraw(&env, &attester, &asset, &attester)?;
        storage::extend_after_write(&env, &attester, admission);
        Ok(())
    }

    fn admin_revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error> {
        let admin = storage::admin(&env);
        admin.require_auth();
        withdraw(&env, &attester, &asset, &admin)?;
        storage::extend_instance(&env);
        Ok(())
    }

    fn get_safety(env: Env, asset: Address) -> Option<Safety> {
        current(&env, &asset)
    }

    fn get_safety_by(env: Env, asset: Address, attester: Address) -> Option<Safety> {
        storage::verdict(&env, &asset, &attester).map(Record::safety)
    }

    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool {
        current(&env, &asset)
            .is_some_and(|safety| admits(&env, &safety, max_severity, max_age_secs))
    }

    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool {
        let Some(safety) = current(&env, &asset) else {
            return false;
        };
        // The mask sees powers, not reputation: a critical entry (a scam, a blocklisted domain)
        // may carry no capability bit, so severity is checked here whatever the mask.
        if safety.severity >= SEVERITY_CRITICAL || safety.flags & forbidden_mask != 0 {
            return false;
        }
        is_fresh(&env, &safety, max_age_secs)
    }

    fn is_safe_quorum(
        env: Env,
        asset: Address,
        attesters: Vec<Address>,
        threshold: u32,
        max_severity: u32,
        max_age_secs: u64,
    ) -> bool {
        let len = attesters.len();
        if threshold == 0 || threshold > len || len > MAX_QUORUM_ATTESTERS {
            return false;
        }
        for i in 1..len {
            let a = attesters.get_unchecked(i);
            for j in 0..i {
                if a == attesters.get_unchecked(j) {
                    return false;
                }
            }
        }
        let mut agreeing = 0;
        for attester in attesters.try_iter() {
            let attester = attester.unwrap_optimized();
            let admits = storage::verdict(&env, &asset, &attester).is_some_and(|record| {
                counts(&env, &record) && admits(&env, &record.safety(), max_severity, max_age_secs)
            });
            if admits {
                agreeing += 1;
                if agreeing >= threshold {
                    return true;
                }
            }
        }
        false
    }

    fn assess(
        env: Env,
        asset: Address,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Assessment {
        let Some(safety) = current(&env, &asset) else {
            return match storage::revocation(&env, &asset) {
                Some(revocation) => Assessment::Revoked(revocation.revoked_at),
                None => Assessment::NotAttested,
            };
        };
        let age = now(&env).saturating_sub(safety.attested_at);
        if max_age_secs != 0 && age > max_age_secs {
            return Assessment::Stale(age);
        }
        // Clawback implies at least high at write time (`validate`), so a ceiling below high
        // refuses it here as `is_safe` does.
        if safety.severity >= SEVERITY_CRITICAL || safety.severity > max_severity {
            return Assessment::SeverityTooHigh(safety.severity);
        }
        let forbidden = safety.flags & forbidden_mask;
        if forbidden != 0 {
            return Assessment::ForbiddenMechanics(forbidden);
        }
        Assessment::Safe(safety)
    }

    fn get_revocation(env: Env, asset: Address) -> Option<Revocation> {
        storage::revocation(&env, &asset)
    }
}

/// `is_safe`'s rule for one verdict: below critical, at or below the ceiling, no clawback under
/// a ceiling below high, fresh.
fn admits(env: &Env, safety: &Safety, max_severity: u32, max_age_secs: u64) -> bool {
    // Critical is never safe, whatever ceiling the caller passes (a ceiling of 4 or more would
    // otherwise admit it).
    if safety.severity >= SEVERITY_CRITICAL || safety.severity > max_severity {
        return false;
    }
    if safety.flags & MECH_AUTH_CLAWBACK_ENABLED != 0 && max_severity < SEVERITY_HIGH {
        return false;
    }
    is_fresh(env, safety, max_age_secs)
}

fn is_fresh(env: &Env, safety: &Safety, max_age_secs: u64) -> bool {
    max_age_secs == 0 || now(env).saturating_sub(safety.attested_at) <= max_age_secs
}

/// Whether a stored verdict counts now: its writer is an attester, and wrote it during its
/// current admission (a removed and re-admitted attester's earlier verdicts stay void).
fn counts(env: &Env, record: &Record) -> bool {
    storage::is_current_admission(env, record.admission)
}

/// The most recent verdict on `asset` that counts. Two lookups while its writer is still an
/// attester; otherwise every current attester's verdict is read (at most `MAX_ATTESTERS`).
fn current(env: &Env, asset: &Address) -> Option<Safety> {
    let latest = storage::latest(env, asset)?;
    if counts(env, &latest) {
        return Some(latest.safety());
    }
    most_recent_counting(env, asset).map(Record::safety)
}

/// The most recent verdict on `asset` among current attesters; on a tie, the earliest admitted.
fn most_recent_counting(env: &Env, asset: &Address) -> Option<Record> {
    let mut best: Option<Record> = None;
    for attester in storage::attesters(env)
        .iter()
        .flat_map(|list| list.try_iter())
    {
        let attester = attester.unwrap_optimized();
        let Some(record) = storage::verdict(env, asset, &attester) else {
            continue;
        };
        let newer = best
            .as_ref()
            .is_none_or(|b| record.attested_at > b.attested_at);
        if newer && counts(env, &record) {
            best = Some(record);
        }
    }
    best
}

/// The ledger timestamp. `env.ledger().timestamp()` unwraps with a formatted panic, which drags
/// ~5 KB of `core::fmt` into the `.wasm`; this traps instead on the (impossible) bad value.
fn now(env: &Env) -> u64 {
    use soroban_env_common::Env as _;
    let raw = env.get_ledger_timestamp().unwrap_infallible();
    u64::try_from_val(env, &raw).unwrap_optimized()
}

/// Stores the writer's verdict on `asset` and makes it the asset's latest: nothing written later
/// exists.
fn write(env: &Env, asset: &Address, record: Record) {
    storage::set_verdict(env, asset, &record);
    storage::set_latest(env, asset, &record);
    Attested {
        asset: asset.clone(),
        attester: record.attester,
        severity: record.severity,
        flags: record.flags,
        evidence_hash: record.evidence_hash,
        attested_at: record.attested_at,
    }
    .publish(env);
}

/// Withdraws `attester`'s verdict on `asset` on behalf of `revoked_by`, leaves the trace, and
/// points the asset's latest entry at the next most recent verdict that counts, if it pointed at
/// the withdrawn one.
fn withdraw(
    env: &Env,
    attester: &Address,
    asset: &Address,
    revoked_by: &Address,
) -> Result<(), Error> {
    let revoked = storage::verdict(env, asset, attester)
        .ok_or(Error::NotAttested)?
        .safety();
    let revoked_at = now(env);
    storage::remove_verdict(env, asset, attester);
    if storage::latest(env, asset).is_some_and(|latest| latest.attester == *attester) {
        match most_recent_counting(env, asset) {
            Some(next) => storage::set_latest(env, asset, &next),
            None => storage::remove_latest(env, asset),
        }
    }
    storage::set_revocation(
        env,
        asset,
        &Revocation {
            revoked_at,
            attester: attester.clone(),
            revoked,
        },
    );
    Revoked {
        asset: asset.clone(),
        attester: attester.clone(),
        revoked_by: revoked_by.clone(),
        revoked_at,
    }
    .publish(env);
    Ok(())
}

#[cfg(test)]
mod test;
