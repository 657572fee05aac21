//! Storage access and TTL policy. Writes top up what they touch; reads never extend anything.
use soroban_sdk::{unwrap::UnwrapOptimized, Address, Env};

use crate::{DataKey, Error, Revocation, Safety};

/// How far below the network maximum an entry's TTL may fall before a write tops it up.
/// Zero means every write extends what it touches to `max_ttl()` (~180 days on pubnet).
pub const TTL_TOP_UP_MARGIN_LEDGERS: u32 = 0;

fn ttl_target(env: &Env) -> (u32, u32) {
    let extend_to = env.storage().max_ttl();
    (
        extend_to.saturating_sub(TTL_TOP_UP_MARGIN_LEDGERS),
        extend_to,
    )
}

/// Extends the instance (admin keys) and the contract code.
pub fn extend_instance(env: &Env) {
    let (threshold, extend_to) = ttl_target(env);
    env.storage().instance().extend_ttl(threshold, extend_to);
}

fn extend_persistent(env: &Env, key: &DataKey) {
    let (threshold, extend_to) = ttl_target(env);
    env.storage()
        .persistent()
        .extend_ttl(key, threshold, extend_to);
}

pub fn admin(env: &Env) -> Address {
    // The constructor always stores an admin, so absence is unreachable on a deployed registry;
    // `unwrap_optimized` traps without pulling panic formatting into the .wasm.
    env.storage()
        .instance()
        .get(&DataKey::Admin)
        .unwrap_optimized()
}

pub fn set_admin(env: &Env, admin: &Address) {
    env.storage().instance().set(&DataKey::Admin, admin);
}

pub fn pending_admin(env: &Env) -> Option<Address> {
    env.storage().instance().get(&DataKey::PendingAdmin)
}

pub fn set_pending_admin(env: &Env, pending: &Address) {
    env.storage()
        .instance()
        .set(&DataKey::PendingAdmin, pending);
}

pub fn clear_pending_admin(env: &Env) {
    env.storage().instance().remove(&DataKey::PendingAdmin);
}

pub fn is_attester(env: &Env, attester: &Address) -> bool {
    env.storage()
        .persistent()
        .has(&DataKey::Attester(attester.clone()))
}

pub fn add_attester(env: &Env, attester: &Address) {
    let key = DataKey::Attester(attester.clone());
    env.storage().persistent().set(&key, &());
    extend_persistent(env, &key);
}

pub fn remove_attester(env: &Env, attester: &Address) {
    env.storage()
        .persistent()
        .remove(&DataKey::Attester(attester.clone()));
}

/// Fails unless `attester` authorised this call and is in the set.
pub fn require_attester(env: &Env, attester: &Address) -> Result<(), Error> {
    attester.require_auth();
    if !is_attester(env, attester) {
        return Err(Error::NotAttester);
    }
    Ok(())
}

/// After a successful write: keeps the writer's membership and the instance alive.
pub fn extend_after_write(env: &Env, attester: &Address) {
    extend_persistent(env, &DataKey::Attester(attester.clone()));
    extend_instance(env);
}

pub fn safety(env: &Env, asset: &Address) -> Option<Safety> {
    env.storage()
        .persistent()
        .get(&DataKey::Safety(asset.clone()))
}

pub fn set_safety(env: &Env, asset: &Address, safety: &Safety) {
    let key = DataKey::Safety(asset.clone());
    env.storage().persistent().set(&key, safety);
    extend_persistent(env, &key);
}

pub fn remove_safety(env: &Env, asset: &Address) {
    env.storage()
        .persistent()
        .remove(&DataKey::Safety(asset.clone()));
}

pub fn revocation(env: &Env, asset: &Address) -> Option<Revocation> {
    env.storage()
        .persistent()
        .get(&DataKey::Revoked(asset.clone()))
}

pub fn set_revocation(env: &Env, asset: &Address, revocation: &Revocation) {
    let key = DataKey::Revoked(asset.clone());
    env.storage().persistent().set(&key, revocation);
    extend_persistent(env, &key);
}
