//! A party acting on its own state is no power over others. A write is privileged when a party the
//! contract names (an authority) authorized it; but an owner delegating its own votes asks the owner's
//! authorization only because the votes are the owner's, as every holder's delegation asks the holder's.
//! Told apart by behaviour, not by name: the same call with the authority's place taken by a plain party
//! succeeds, asks only that party, and writes the same entries with the party's own in place of the
//! authority's. What the authority did there, any holder may do for itself.

use std::collections::{BTreeMap, BTreeSet};

use assay_localnet::{Call, Checkpoint, Sandbox};
use stellar_xdr::{
    LedgerEntryData, LedgerKey, LedgerKeyContractData, ScAddress, ScMap, ScMapEntry, ScVal, ScVec,
};

use crate::classify::addresses_in;
use crate::observe::{self, Observation, World};

/// What [`acts_for_itself`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// The question does not arise: an authorizer is not among the call's arguments (a stored party), or
    /// none is an authority. No call was made.
    NotAsked,
    /// No plain party of the authority's standing was at hand to compare with. No call was made.
    Unchecked,
    /// A plain party did the same to its own state: the authority acted on its own.
    Yes,
    /// The plain party could not, or did something else.
    No,
}

/// Whether `call` (a privileged write of no observed effect, from `base`) was its authorizers acting on
/// their own state.
#[allow(clippy::too_many_arguments)]
pub fn acts_for_itself(
    sandbox: &mut Sandbox,
    base: &Checkpoint,
    world: &World,
    before: &Observation,
    function: &str,
    args: &[ScVal],
    call: &Call,
    authorizers: &[ScAddress],
) -> Own {
    let mut named = BTreeSet::new();
    for a in args {
        addresses_in(a, &mut named, 0);
    }
    // A party that authorized without being an argument is a stored one: the contract's, not its own.
    if authorizers.is_empty() || authorizers.iter().any(|a| !named.contains(a)) {
        return Own::NotAsked;
    }
    let acting: Vec<&ScAddress> = (authorizers.iter())
        .filter(|a| world.authorities.contains(a))
        .collect();
    if acting.is_empty() {
        return Own::NotAsked;
    }
    // Plain parties: watched or fresh addresses the contract does not name and the call does not hold,
    // holding units when the authority does (its votes, its share) and none when it holds none.
    let holds = |a: &ScAddress| before.balances.get(a).copied().flatten().unwrap_or(0) > 0;
    let plain: Vec<&ScAddress> = (world.holders.iter())
        .chain(std::iter::once(&world.recipient))
        .chain(&world.fresh)
        .filter(|p| !world.authorities.contains(p) && !named.contains(p))
        .collect();
    let mut swaps: Vec<(ScAddress, ScAddress)> = Vec::new();
    for a in acting {
        let Some(p) =
            (plain.iter()).find(|p| holds(p) == holds(a) && swaps.iter().all(|(_, q)| q != **p))
        else {
            return Own::Unchecked;
        };
        swaps.push((a.clone(), (*p).clone()));
    }
    let swapped: Vec<ScVal> = args.iter().map(|v| substitute(v, &swaps, 0)).collect();
    sandbox.restore(base);
    let other = sandbox.invoke(&world.token, function, swapped);
    sandbox.restore(base);
    if !other.succeeded() || other.upstream_error.is_some() || other.writes.is_empty() {
        return Own::No;
    }
    let expected: BTreeSet<ScAddress> = (authorizers.iter())
        .map(|a| swap(a, &swaps).unwrap_or_else(|| a.clone()))
        .collect();
    let asked: BTreeSet<ScAddress> = observe::authorizers(&other.auth).into_iter().collect();
    if asked != expected {
        return Own::No;
    }
    // The same entries, the party's own for the authority's; an entry that names no party at all (a
    // setting of the whole token) must be left the same by both, or the authority set what a plain
    // party cannot.
    let written = |c: &Call, swaps: &[(ScAddress, ScAddress)]| -> Written {
        (c.writes.iter())
            .filter(|w| !is_nonce(&w.key))
            .map(|w| {
                let shared = !names_a_party(&w.key);
                let value = shared.then(|| w.after.as_ref().map(|e| e.data.clone()));
                (substitute_key(&w.key, swaps), value)
            })
            .collect()
    };
    if written(call, &swaps) == written(&other, &[]) {
        Own::Yes
    } else {
        Own::No
    }
}

/// Entries a call changed: for an entry naming no party, the value it left too.
type Written = BTreeMap<LedgerKey, Option<Option<LedgerEntryData>>>;

/// Whether a contract-data key names an address (an account's entry), rather than the whole token.
fn names_a_party(key: &LedgerKey) -> bool {
    let LedgerKey::ContractData(d) = key else {
        return true;
    };
    let mut out = BTreeSet::new();
    addresses_in(&d.key, &mut out, 0);
    !out.is_empty()
}

/// An authorization's nonce entry: bookkeeping of the authorization, not state the call changed.
fn is_nonce(key: &LedgerKey) -> bool {
    matches!(key, LedgerKey::ContractData(d) if matches!(d.key, ScVal::LedgerKeyNonce(_)))
}

fn swap(a: &ScAddress, swaps: &[(ScAddress, ScAddress)]) -> Option<ScAddress> {
    swaps
        .iter()
        .find(|(from, _)| from == a)
        .map(|(_, to)| to.clone())
}

/// `key` with every swapped address in it replaced.
fn substitute_key(key: &LedgerKey, swaps: &[(ScAddress, ScAddress)]) -> LedgerKey {
    match key {
        LedgerKey::ContractData(d) => LedgerKey::ContractData(LedgerKeyContractData {
            contract: swap(&d.contract, swaps).unwrap_or_else(|| d.contract.clone()),
            key: substitute(&d.key, swaps, 0),
            durability: d.durability,
        }),
        other => other.clone(),
    }
}

/// The deepest a value is walked (a stored key is the token author's, and may nest without end).
const MAX_DEPTH: u8 = 16;

/// `v` with every swapped address in it replaced.
fn substitute(v: &ScVal, swaps: &[(ScAddress, ScAddress)], depth: u8) -> ScVal {
    if depth > MAX_DEPTH {
        return v.clone();
    }
    match v {
        ScVal::Address(a) => ScVal::Address(swap(a, swaps).unwrap_or_else(|| a.clone())),
        ScVal::Vec(Some(items)) => {
            let items: Vec<ScVal> = items
                .iter()
                .map(|i| substitute(i, swaps, depth + 1))
                .collect();
            items
                .try_into()
                .map(|v| ScVal::Vec(Some(ScVec(v))))
                .unwrap_or_else(|_| v.clone())
        }
        ScVal::Map(Some(m)) => {
            let entries: Vec<ScMapEntry> = (m.iter())
                .map(|e| ScMapEntry {
                    key: substitute(&e.key, swaps, depth + 1),
                    val: substitute(&e.val, swaps, depth + 1),
                })
                .collect();
            entries
                .try_into()
                .map(|m| ScVal::Map(Some(ScMap(m))))
                .unwrap_or_else(|_| v.clone())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stellar_xdr::{ContractDataDurability, ContractId, Hash};

    fn account(n: u8) -> ScAddress {
        ScAddress::Account(assay_chain::account_id([n; 32]))
    }

    fn key_of(contract: &ScAddress, key: ScVal) -> LedgerKey {
        LedgerKey::ContractData(LedgerKeyContractData {
            contract: contract.clone(),
            key,
            durability: ContractDataDurability::Persistent,
        })
    }

    #[test]
    fn keys_naming_the_authority_name_the_plain_party_after_the_swap() {
        let token = ScAddress::Contract(ContractId(Hash([9; 32])));
        let owner_key = ScVal::Vec(Some(ScVec(
            vec![
                assay_chain::scval::symbol("Delegatee"),
                ScVal::Address(account(1)),
            ]
            .try_into()
            .unwrap(),
        )));
        let swaps = [(account(1), account(2))];
        let swapped = substitute_key(&key_of(&token, owner_key), &swaps);
        let plain_key = ScVal::Vec(Some(ScVec(
            vec![
                assay_chain::scval::symbol("Delegatee"),
                ScVal::Address(account(2)),
            ]
            .try_into()
            .unwrap(),
        )));
        assert_eq!(swapped, key_of(&token, plain_key));
        // A global key stays itself: the plain party's call wrote it too only if anyone may.
        let global = key_of(&token, assay_chain::scval::symbol("PAUSED"));
        assert_eq!(substitute_key(&global, &swaps), global);
        assert!(!names_a_party(&global));
        let nonce = ScVal::LedgerKeyNonce(stellar_xdr::ScNonceKey { nonce: 7 });
        assert!(is_nonce(&key_of(&account(1), nonce)));
    }
}
