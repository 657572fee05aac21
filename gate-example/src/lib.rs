#![no_std]
//! Example vault that fails closed on the Assay registry.
//!
//! `deposit` admits a token only if the registry holds a fresh attestation for it, at or below
//! the severity ceiling, with none of the forbidden mechanics. Both checks are needed: the mask
//! sees powers but not reputation (a critical-by-reputation token carries no capability bits),
//! the ceiling sees badness but cannot tell freezing from confiscation. `withdraw` never consults
//! the registry, so a stale or revoked attestation never traps funds already inside. The gate asks
//! the registry's `assess`, which judges the verdict under the gate's policy and says why it
//! refuses; the gate only maps that reason to its own error.
use soroban_sdk::{
    contract, contractimpl, contracttype, token, unwrap::UnwrapOptimized, Address, Env,
};

mod error;
mod events;

// The registry's interface crate is its ABI and a client, with none of its code: the gate's
// `.wasm` carries only what it calls.
use assay_registry_interface::SafetyRegistryInterfaceClient as SafetyRegistryClient;
pub use assay_registry_interface::{
    Assessment, Safety, MECH_ADMIN_CLAWBACK, MECH_ADMIN_FREEZE, MECH_ADMIN_TRANSFER_FEE,
    MECH_AUTH_CLAWBACK_ENABLED, MECH_AUTH_REVOCABLE, MECH_CODE_MUTABLE,
};
pub use error::Error;
pub use events::{Deposited, Withdrawn};
/// Default forbidden mechanics: freezing and confiscation, by issuer flags (bits 1, 2) or by a
/// token's code (bits 10, 11), code that can be replaced (bit 9), and a transfer fee the admin
/// sets (bit 14: what a deposit delivers is the admin's to decide): 19,974.
pub const REFUSED_MECHANICS: u32 = MECH_AUTH_REVOCABLE
    | MECH_AUTH_CLAWBACK_ENABLED
    | MECH_CODE_MUTABLE
    | MECH_ADMIN_CLAWBACK
    | MECH_ADMIN_FREEZE
    | MECH_ADMIN_TRANSFER_FEE;
/// Default severity ceiling: medium.
pub const MAX_SEVERITY: u32 = 2;
/// Default freshness window: 24 hours.
pub const MAX_ATTESTATION_AGE: u64 = 86_400;
/// The highest ceiling a policy may set: a critical token is never admissible.
pub const HIGHEST_ADMISSIBLE_SEVERITY: u32 = 3;

/// Ledgers in a day at ~5 s per ledger.
const DAY_IN_LEDGERS: u32 = 17_280;
/// Balance entries and the instance are topped up to 180 days whenever they fall below 150.
const BALANCE_EXTEND_TO: u32 = 180 * DAY_IN_LEDGERS;
const BALANCE_TTL_THRESHOLD: u32 = BALANCE_EXTEND_TO - 30 * DAY_IN_LEDGERS;
const INSTANCE_EXTEND_TO: u32 = BALANCE_EXTEND_TO;
const INSTANCE_TTL_THRESHOLD: u32 = BALANCE_TTL_THRESHOLD;

/// What the gate admits.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Policy {
    /// Highest admissible severity (0..=3).
    pub max_severity: u32,
    /// Mechanics bits that refuse a token.
    pub forbidden_mask: u32,
    /// Oldest admissible attestation, in seconds (> 0; the boundary itself is admitted).
    pub max_age_secs: u64,
}

impl Policy {
    /// Ceiling 2, forbidden mechanics 19,974 (bits 1, 2, 9, 10, 11, 14), 24 h.
    pub fn default_policy() -> Self {
        Policy {
            max_severity: MAX_SEVERITY,
            forbidden_mask: REFUSED_MECHANICS,
            max_age_secs: MAX_ATTESTATION_AGE,
        }
    }
}

#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum DataKey {
    /// Instance: the registry consulted on deposit.
    Registry,
    /// Instance: the admission policy.
    Policy,
    /// Persistent: what `holder` has deposited of `asset`.
    Balance(Address, Address),
}

#[contract]
pub struct Gate;

#[contractimpl]
impl Gate {
    /// # Arguments
    /// * `registry` - the Assay registry to consult.
    /// * `policy` - `None` for the defaults (ceiling 2, mask 19,974, 86,400 s).
    ///
    /// # Errors
    /// * [`Error::InvalidPolicy`] (5) - ceiling above 3 or `max_age_secs` of 0.
    pub fn __constructor(env: Env, registry: Address, policy: Option<Policy>) -> Result<(), Error> {
        let policy = policy.unwrap_or_else(Policy::default_policy);
        if policy.max_severity > HIGHEST_ADMISSIBLE_SEVERITY || policy.max_age_secs == 0 {
            return Err(Error::InvalidPolicy);
        }
        env.storage().instance().set(&DataKey::Registry, &registry);
        env.storage().instance().set(&DataKey::Policy, &policy);
        Ok(())
    }

    /// The registry this gate consults.
    pub fn registry(env: Env) -> Address {
        registry_address(&env)
    }

    /// The admission policy.
    pub fn policy(env: Env) -> Policy {
        policy(&env)
    }

    /// Why `asset` would be refused right now, or `Ok` if it would be admitted.
    ///
    /// # Errors
    /// [`Error::NotAttested`] (1, also for a revoked verdict), [`Error::AttestationStale`] (2),
    /// [`Error::SeverityTooHigh`] (4), [`Error::IssuerCanTakeIt`] (3), checked in that order.
    pub fn check(env: Env, asset: Address) -> Result<(), Error> {
        admit(&env, &asset)
    }

    /// Whether `asset` would be admitted right now.
    pub fn would_admit(env: Env, asset: Address) -> bool {
        admit(&env, &asset).is_ok()
    }

    /// Moves `amount` of `asset` from `from` into the vault, if the registry admits `asset`.
    ///
    /// # Arguments
    /// * `asset` - the token contract (a classic asset's SAC).
    /// * `from` - the depositor; must authorise this call and the token transfer.
    /// * `amount` - positive.
    ///
    /// # Errors
    /// * [`Error::InvalidAmount`] (6).
    /// * Any error of [`Gate::check`]; nothing moves.
    ///
    /// # Events
    /// `["deposit", asset, from]` with data `{amount}`, after the token's own `transfer`.
    pub fn deposit(env: Env, asset: Address, from: Address, amount: i128) -> Result<(), Error> {
        if amount <= 0 {
            return Err(Error::InvalidAmount);
        }
        from.require_auth();
        admit(&env, &asset)?;
        token::Client::new(&env, &asset).transfer(&from, env.current_contract_address(), &amount);
        let balance = balance(&env, &asset, &from);
        set_balance(&env, &asset, &from, balance + amount);
        Deposited {
            asset,
            from,
            amount,
        }
        .publish(&env);
        Ok(())
    }

    /// Returns `amount` of `asset` to `to`. Never consults the registry.
    ///
    /// # Errors
    /// * [`Error::InvalidAmount`] (6).
    /// * [`Error::InsufficientBalance`] (7) - more than `to` deposited.
    ///
    /// # Events
    /// `["withdraw", asset, to]` with data `{amount}`.
    pub fn withdraw(env: Env, asset: Address, to: Address, amount: i128) -> Result<(), Error> {
        if amount <= 0 {
            return Err(Error::InvalidAmount);
        }
        to.require_auth();
        let balance = balance(&env, &asset, &to);
        if balance < amount {
            return Err(Error::InsufficientBalance);
        }
        set_balance(&env, &asset, &to, balance - amount);
        token::Client::new(&env, &asset).transfer(&env.current_contract_address(), &to, &amount);
        Withdrawn { asset, to, amount }.publish(&env);
        Ok(())
    }

    /// What `holder` has deposited of `asset`.
    pub fn balance(env: Env, asset: Address, holder: Address) -> i128 {
        balance(&env, &asset, &holder)
    }
}

fn registry_address(env: &Env) -> Address {
    // Set by the constructor, so always present; trap without panic formatting in the .wasm.
    env.storage()
        .instance()
        .get(&DataKey::Registry)
        .unwrap_optimized()
}

fn policy(env: &Env) -> Policy {
    env.storage()
        .instance()
        .get(&DataKey::Policy)
        .unwrap_or_else(Policy::default_policy)
}

/// The admission rule: the registry's `assess` judges, the gate maps its reason to an error.
fn admit(env: &Env, asset: &Address) -> Result<(), Error> {
    let policy = policy(env);
    let assessment = SafetyRegistryClient::new(env, &registry_address(env)).assess(
        asset,
        &policy.max_severity,
        &policy.forbidden_mask,
        &policy.max_age_secs,
    );
    match assessment {
        Assessment::Safe(_) => Ok(()),
        Assessment::NotAttested | Assessment::Revoked(_) => Err(Error::NotAttested),
        Assessment::Stale(_) => Err(Error::AttestationStale),
        Assessment::SeverityTooHigh(_) => Err(Error::SeverityTooHigh),
        Assessment::ForbiddenMechanics(_) => Err(Error::IssuerCanTakeIt),
        Assessment::CodeChanged => Err(Error::CodeChanged),
    }
}

fn balance(env: &Env, asset: &Address, holder: &Address) -> i128 {
    env.storage()
        .persistent()
        .get(&DataKey::Balance(asset.clone(), holder.clone()))
        .unwrap_or(0)
}

fn set_balance(env: &Env, asset: &Address, holder: &Address, amount: i128) {
    let key = DataKey::Balance(asset.clone(), holder.clone());
    if amount == 0 {
        env.storage().persistent().remove(&key);
        return;
    }
    env.storage().persistent().set(&key, &amount);
    env.storage()
        .persistent()
        .extend_ttl(&key, BALANCE_TTL_THRESHOLD, BALANCE_EXTEND_TO);
    env.storage()
        .instance()
        .extend_ttl(INSTANCE_TTL_THRESHOLD, INSTANCE_EXTEND_TO);
}

#[cfg(test)]
mod test;
