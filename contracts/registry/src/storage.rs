//! Storage access and TTL policy. Writes top up what they touch; reads never extend anything.
//! An asset's verdicts and the admissions are keyed outside [`DataKey`], for the read path's sake
//! (see its docs).
use soroban_sdk::{
    unwrap::{UnwrapInfallible, UnwrapOptimized},
    Address, Env, IntoVal, Val, Vec,
};

use crate::{
    types::Record, DataKey, Error, PendingAttesterChange, PendingUpgrade, PendingVerdictStore,
    Revocation, MAX_ATTESTERS,
};

/// How far below the network maximum an entry's TTL may fall before a write tops it up: none,
/// every write extends what it touches to the network maximum (~180 days on pubnet).
pub const TTL_TOP_UP_MARGIN_LEDGERS: u32 = 0;

/// Every write asks for the longest TTL there is and the host clamps it to the network maximum.
/// Reading the maximum instead (`max_ttl()`) would import two more host functions, which every
/// call of the registry, reads included, pays to instantiate.
const TTL_THRESHOLD: u32 = u32::MAX - TTL_TOP_UP_MARGIN_LEDGERS;
const TTL_EXTEND_TO: u32 = u32::MAX;

/// Extends the instance (admin keys) and the contract code. Through the same host function as
/// [`extend_verdict_store`] (with this contract's address), so the two import one function.
pub fn extend_instance(env: &Env) {
    env.deployer()
        .extend_ttl(env.current_contract_address(), TTL_THRESHOLD, TTL_EXTEND_TO);
}

/// Extends the verdict store's instance and code, on binding and on each publish: the store then
/// imports no TTL extension of its own, which every read of it would pay to instantiate.
pub fn extend_verdict_store(env: &Env, store: &Address) {
    env.deployer()
        .extend_ttl(store.clone(), TTL_THRESHOLD, TTL_EXTEND_TO);
}

fn extend_persistent<K: IntoVal<Env, Val>>(env: &Env, key: &K) {
    env.storage()
        .persistent()
        .extend_ttl(key, TTL_THRESHOLD, TTL_EXTEND_TO);
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

/// `attester`'s current admission id, if it is an attester now.
pub fn admission(env: &Env, attester: &Address) -> Option<u32> {
    env.storage()
        .persistent()
        .get(&DataKey::Attester(attester.clone()))
}

/// Whether admission `id` is current: its attester has not been removed since.
pub fn is_current_admission(env: &Env, id: u32) -> bool {
    env.storage().persistent().has(&id)
}

/// The current attesters, in the order they were added (`None` before the first admission).
pub fn attesters(env: &Env) -> Option<Vec<Address>> {
    env.storage().instance().get(&DataKey::Attesters)
}

/// Stores the list through one host call from a stack buffer: `Vec::push_back` and friends
/// would each import another host function, which every call of the registry pays for.
fn set_attesters(env: &Env, list: &[Val]) {
    use soroban_sdk::EnvBase as _;
    let raw = env.vec_new_from_slice(list).unwrap_infallible();
    env.storage().instance().set(&DataKey::Attesters, &raw);
}

/// Admits `attester` (not yet in the set) under a new admission id, keeping the list, the
/// per-attester entry and the admission entry in step.
pub fn add_attester(env: &Env, attester: &Address) -> Result<(), Error> {
    let mut buffer = [Val::VOID.to_val(); MAX_ATTESTERS as usize + 1];
    let mut len = 0;
    for a in attesters(env)
        .iter()
        .flat_map(|list| list.to_vals().try_iter())
    {
        if len == MAX_ATTESTERS as usize {
            return Err(Error::TooManyAttesters);
        }
        buffer[len] = a.unwrap_optimized();
        len += 1;
    }
    if len == MAX_ATTESTERS as usize {
        return Err(Error::TooManyAttesters);
    }
    buffer[len] = attester.to_val();
    set_attesters(env, &buffer[..=len]);
    let id: u32 = env
        .storage()
        .instance()
        .get(&DataKey::Admissions)
        .unwrap_or(0);
    // 2^32 admissions cannot happen; an id is never reused, so trap rather than wrap.
    let next = id.checked_add(1).unwrap_optimized();
    env.storage().instance().set(&DataKey::Admissions, &next);
    let key = DataKey::Attester(attester.clone());
    env.storage().persistent().set(&key, &id);
    env.storage().persistent().set(&id, attester);
    extend_persistent(env, &key);
    extend_persistent(env, &id);
    Ok(())
}

/// Withdraws `attester` (in the set, under `admission`) from the list, its per-attester entry
/// and its admission entry.
pub fn remove_attester(env: &Env, attester: &Address, admission: u32) {
    let mut buffer = [Val::VOID.to_val(); MAX_ATTESTERS as usize];
    let mut len = 0;
    for a in attesters(env).iter().flat_map(|list| list.try_iter()) {
        let a = a.unwrap_optimized();
        if a != *attester && len < buffer.len() {
            buffer[len] = a.to_val();
            len += 1;
        }
    }
    set_attesters(env, &buffer[..len]);
    env.storage().persistent().remove(&admission);
    env.storage()
        .persistent()
        .remove(&DataKey::Attester(attester.clone()));
}

/// Fails unless `attester` authorised this call and is in the set; its current admission id.
pub fn require_attester(env: &Env, attester: &Address) -> Result<u32, Error> {
    attester.require_auth();
    admission(env, attester).ok_or(Error::NotAttester)
}

/// After a successful write: keeps the writer's membership (both entries) and the instance alive.
pub fn extend_after_write(env: &Env, attester: &Address, admission: u32) {
    extend_persistent(env, &DataKey::Attester(attester.clone()));
    extend_persistent(env, &admission);
    extend_instance(env);
}

/// The verdicts on `asset` (keyed by the bare address), at most one per attester, oldest first;
/// some may no longer count (their writer was removed).
pub fn verdicts(env: &Env, asset: &Address) -> Option<Vec<Record>> {
    env.storage().persistent().get(asset)
}

/// Stores `asset`'s verdicts (encoded [`Record`]s, oldest first) through one host call from a
/// stack buffer, as [`set_attesters`] does, and returns the list stored (the same host object),
/// which the publish of the same call folds instead of reading it back.
pub fn set_verdicts(env: &Env, asset: &Address, records: &[Val]) -> Val {
    use soroban_sdk::EnvBase as _;
    let raw = env.vec_new_from_slice(records).unwrap_infallible();
    env.storage().persistent().set(asset, &raw);
    extend_persistent(env, asset);
    raw.to_val()
}

/// Removes `asset`'s verdicts entry (its last verdict was withdrawn).
pub fn remove_verdicts(env: &Env, asset: &Address) {
    env.storage().persistent().remove(asset);
}

/// How many attesters the set holds now.
pub fn attester_count(env: &Env) -> u32 {
    attesters(env).map_or(0, |list| list.len())
}

pub fn pending_attester_change(env: &Env, attester: &Address) -> Option<PendingAttesterChange> {
    env.storage()
        .persistent()
        .get(&DataKey::AttesterChange(attester.clone()))
}

pub fn set_pending_attester_change(env: &Env, attester: &Address, change: &PendingAttesterChange) {
    let key = DataKey::AttesterChange(attester.clone());
    env.storage().persistent().set(&key, change);
    extend_persistent(env, &key);
}

pub fn clear_pending_attester_change(env: &Env, attester: &Address) {
    env.storage()
        .persistent()
        .remove(&DataKey::AttesterChange(attester.clone()));
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

pub fn upgrade_delay_secs(env: &Env) -> u64 {
    // Set by the constructor.
    env.storage()
        .instance()
        .get(&DataKey::UpgradeDelay)
        .unwrap_optimized()
}

pub fn set_upgrade_delay_secs(env: &Env, secs: u64) {
    env.storage().instance().set(&DataKey::UpgradeDelay, &secs);
}

pub fn pending_upgrade(env: &Env) -> Option<PendingUpgrade> {
    env.storage().instance().get(&DataKey::PendingUpgrade)
}

pub fn set_pending_upgrade(env: &Env, pending: &PendingUpgrade) {
    env.storage()
        .instance()
        .set(&DataKey::PendingUpgrade, pending);
}

pub fn clear_pending_upgrade(env: &Env) {
    env.storage().instance().remove(&DataKey::PendingUpgrade);
}

/// The verdict store the registry publishes to, once bound.
pub fn verdict_store(env: &Env) -> Option<Address> {
    env.storage().instance().get(&DataKey::VerdictStore)
}

pub fn set_verdict_store(env: &Env, store: &Address) {
    env.storage().instance().set(&DataKey::VerdictStore, store);
}

/// Whether `attester`'s removal is proposed and not yet applied.
pub fn is_leaving(env: &Env, attester: &Address) -> bool {
    pending_attester_change(env, attester).is_some_and(|change| !change.adding)
}

pub fn pending_verdict_store(env: &Env) -> Option<PendingVerdictStore> {
    env.storage().instance().get(&DataKey::PendingVerdictStore)
}

pub fn set_pending_verdict_store(env: &Env, pending: &PendingVerdictStore) {
    env.storage()
        .instance()
        .set(&DataKey::PendingVerdictStore, pending);
}

pub fn clear_pending_verdict_store(env: &Env) {
    env.storage()
        .instance()
        .remove(&DataKey::PendingVerdictStore);
}
