//! From two observations and the call between them to the effects it had: pure comparison, no I/O.

use std::collections::BTreeSet;

use assay_chain::strkey_of;
use assay_core::powers::{FreezeScope, PowerEffect};
use assay_localnet::Call;
use stellar_xdr::{ContractExecutable, LedgerEntryData, ScAddress, ScVal};

use crate::observe::{Observation, World};

/// One observed effect, in discovery's terms (addresses still XDR).
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Takes {
        holder: ScAddress,
        amount: i128,
        moved_to: Option<ScAddress>,
    },
    Freezes {
        holder: ScAddress,
        everyone: bool,
    },
    Creates {
        credited: ScAddress,
        amount: i128,
    },
    ReplacesCode {
        before: String,
        after: String,
    },
    ReplacesDependency {
        dependency: ScAddress,
    },
    /// The first holder's transfer delivers a smaller share of what it sends than before the call.
    TransferFee {
        holder: ScAddress,
        sent: i128,
        delivered: i128,
        credited: Option<ScAddress>,
    },
}

impl Effect {
    /// The holder an effect on one holder names (taken from, frozen).
    pub fn holder(&self) -> Option<&ScAddress> {
        match self {
            Effect::Takes { holder, .. }
            | Effect::Freezes { holder, .. }
            | Effect::TransferFee { holder, .. } => Some(holder),
            _ => None,
        }
    }

    pub fn into_core(self) -> PowerEffect {
        match self {
            Effect::Takes {
                holder,
                amount,
                moved_to,
            } => PowerEffect::TakesBalance {
                holder: strkey_of(&holder),
                amount: amount.to_string(),
                moved_to: moved_to.as_ref().map(strkey_of),
            },
            Effect::Freezes { holder, everyone } => PowerEffect::Freezes {
                holder: strkey_of(&holder),
                scope: if everyone {
                    FreezeScope::Everyone
                } else {
                    FreezeScope::OneAccount
                },
            },
            Effect::Creates { credited, amount } => PowerEffect::CreatesSupply {
                credited: strkey_of(&credited),
                amount: amount.to_string(),
            },
            Effect::ReplacesCode { before, after } => PowerEffect::ReplacesCode { before, after },
            Effect::ReplacesDependency { dependency } => PowerEffect::ReplacesDependency {
                dependency: strkey_of(&dependency),
            },
            Effect::TransferFee {
                holder,
                sent,
                delivered,
                credited,
            } => PowerEffect::TransferFee {
                holder: strkey_of(&holder),
                sent: sent.to_string(),
                delivered: delivered.to_string(),
                share_bps: assay_core::powers::undelivered_share_bps(sent, delivered),
                credited: credited.as_ref().map(strkey_of),
            },
        }
    }
}

fn describe(e: &Option<ContractExecutable>) -> String {
    match e {
        Some(ContractExecutable::Wasm(h)) => format!("wasm {}", hex::encode(h.0)),
        Some(ContractExecutable::StellarAsset) => "the Stellar Asset Contract".into(),
        Some(ContractExecutable::ExternalRef(r)) => format!("{r:?}"),
        None => "no instance".into(),
    }
}

/// The effects `call` had, from `before` to `after`. A call that replaced the token's code is reported as
/// that alone: whatever else changed follows from running other code.
pub fn classify(
    world: &World,
    before: &Observation,
    after: &Observation,
    call: &Call,
    authorizers: &[ScAddress],
) -> Vec<Effect> {
    if before.executable != after.executable {
        return vec![Effect::ReplacesCode {
            before: describe(&before.executable),
            after: describe(&after.executable),
        }];
    }
    let mut effects = Vec::new();
    let delta = |a: &ScAddress| -> Option<i128> {
        let b = before.balances.get(a).copied().flatten()?;
        let c = after.balances.get(a).copied().flatten()?;
        c.checked_sub(b)
    };
    for holder in &world.holders {
        let Some(d) = delta(holder).filter(|d| *d < 0) else {
            continue;
        };
        if authorizers.contains(holder) {
            continue; // the holder spent its own units
        }
        let taken = -d;
        let moved_to = before
            .balances
            .keys()
            .filter(|a| *a != holder)
            .find(|a| delta(a) == Some(taken))
            .cloned();
        effects.push(Effect::Takes {
            holder: holder.clone(),
            amount: taken,
            moved_to,
        });
    }
    let total: i128 = before
        .balances
        .keys()
        .filter_map(&delta)
        .fold(0i128, |s, d| s.saturating_add(d));
    if total > 0 {
        let credited = before
            .balances
            .keys()
            .filter_map(|a| Some((a, delta(a)?)))
            .max_by_key(|(_, d)| *d)
            .map(|(a, _)| a.clone());
        if let Some(credited) = credited {
            effects.push(Effect::Creates {
                credited,
                amount: total,
            });
        }
    }
    let refused_now = |i: usize| {
        before.can_send.get(i) == Some(&true)
            && after.can_send.get(i) == Some(&false)
            && world
                .holders
                .get(i)
                .and_then(|h| after.balances.get(h).copied().flatten())
                .is_some_and(|b| b >= 1)
    };
    if refused_now(0) {
        let others: Vec<usize> = (1..world.holders.len())
            .filter(|i| before.can_send.get(*i) == Some(&true))
            .collect();
        effects.push(Effect::Freezes {
            holder: world.holders[0].clone(),
            everyone: !others.is_empty() && others.iter().all(|i| refused_now(*i)),
        });
    }
    for dependency in replaced_dependencies(call, &before.transfer_calls_into) {
        effects.push(Effect::ReplacesDependency { dependency });
    }
    if let Some(fee) = transfer_fee(world, before, after, authorizers) {
        effects.push(fee);
    }
    effects
}

/// The first holder's transfer delivers a smaller share of what it sends after the call than before it,
/// and neither the holder nor its recipient authorized the call (a party changing its own terms is not a
/// power over it).
fn transfer_fee(
    world: &World,
    before: &Observation,
    after: &Observation,
    authorizers: &[ScAddress],
) -> Option<Effect> {
    let (then, now) = (before.delivery.as_ref()?, after.delivery.as_ref()?);
    let holder = world.holders.first()?;
    if authorizers.contains(holder) || authorizers.contains(&world.recipient) {
        return None;
    }
    now.delivers_less_than(then).then(|| Effect::TransferFee {
        holder: holder.clone(),
        sent: now.sent,
        delivered: now.delivered,
        credited: now.credited.as_ref().map(|(a, _)| a.clone()),
    })
}

/// Contracts the transfer called into before the call whose address a write removed from stored state.
fn replaced_dependencies(call: &Call, calls_into: &BTreeSet<ScAddress>) -> Vec<ScAddress> {
    let mut out = Vec::new();
    for w in &call.writes {
        let mut before = BTreeSet::new();
        let mut after = BTreeSet::new();
        if let Some(e) = &w.before {
            addresses_in_entry(&e.data, &mut before);
        }
        if let Some(e) = &w.after {
            addresses_in_entry(&e.data, &mut after);
        }
        for gone in before.difference(&after) {
            if calls_into.contains(gone) && !out.contains(gone) {
                out.push(gone.clone());
            }
        }
    }
    out
}

fn addresses_in_entry(data: &LedgerEntryData, out: &mut BTreeSet<ScAddress>) {
    if let LedgerEntryData::ContractData(d) = data {
        addresses_in(&d.val, out, 0);
    }
}

/// Addresses anywhere in a value (bounded depth: a stored value is not an attacker's stack).
pub(crate) fn addresses_in(v: &ScVal, out: &mut BTreeSet<ScAddress>, depth: u8) {
    if depth > 16 {
        return;
    }
    match v {
        ScVal::Address(a) => {
            out.insert(a.clone());
        }
        ScVal::Vec(Some(items)) => {
            for i in items.iter() {
                addresses_in(i, out, depth + 1);
            }
        }
        ScVal::Map(Some(m)) => {
            for e in m.iter() {
                addresses_in(&e.key, out, depth + 1);
                addresses_in(&e.val, out, depth + 1);
            }
        }
        ScVal::ContractInstance(i) => {
            if let Some(m) = &i.storage {
                for e in m.iter() {
                    addresses_in(&e.key, out, depth + 1);
                    addresses_in(&e.val, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Delivery;
    use std::collections::BTreeMap;
    use stellar_xdr::{ContractId, Hash, LedgerFootprint};

    fn account(n: u8) -> ScAddress {
        ScAddress::Account(assay_chain::account_id([n; 32]))
    }

    fn world() -> World {
        World {
            token: ScAddress::Contract(ContractId(Hash([9; 32]))),
            holders: vec![account(1), account(2)],
            recipient: account(3),
            second_recipient: None,
            fresh: vec![account(4)],
            authorities: vec![account(5)],
            roles: vec![],
            placeholder: [0; 32],
            own_hash: [1; 32],
            ledger: 10,
        }
    }

    fn obs(balances: &[(u8, i128)], can_send: [bool; 2]) -> Observation {
        Observation {
            balances: balances
                .iter()
                .map(|(n, b)| (account(*n), Some(*b)))
                .collect::<BTreeMap<_, _>>(),
            can_send: can_send.to_vec(),
            executable: Some(ContractExecutable::Wasm(Hash([1; 32]))),
            transfer_calls_into: BTreeSet::new(),
            read: BTreeSet::new(),
            balance_reads: BTreeMap::new(),
            send_reads: vec![],
            delivery: None,
            delivery_reads: BTreeSet::new(),
        }
    }

    fn delivery(sent: i128, delivered: i128, credited: Option<u8>) -> Option<Delivery> {
        Some(Delivery {
            sent,
            delivered,
            credited: credited.map(|n| (account(n), sent - delivered)),
        })
    }

    #[test]
    fn a_transfer_that_delivers_a_smaller_share_after_the_call_is_a_transfer_fee() {
        let w = world();
        let mut before = obs(&[(1, 100), (2, 2), (3, 0), (5, 0)], [true, true]);
        before.delivery = delivery(100, 100, None);
        let mut after = before.clone();
        after.delivery = delivery(100, 70, Some(5));
        assert_eq!(
            classify(&w, &before, &after, &call(), &[account(5)]),
            [Effect::TransferFee {
                holder: account(1),
                sent: 100,
                delivered: 70,
                credited: Some(account(5)),
            }]
        );
        // Everything kept back and burned.
        after.delivery = delivery(100, 0, None);
        assert!(matches!(
            classify(&w, &before, &after, &call(), &[account(5)]).as_slice(),
            [Effect::TransferFee {
                delivered: 0,
                credited: None,
                ..
            }]
        ));
        // The holder (or its recipient) changing its own terms is not a power over it.
        assert!(classify(&w, &before, &after, &call(), &[account(1)]).is_empty());
        assert!(classify(&w, &before, &after, &call(), &[account(3)]).is_empty());
        // The same share of a different amount (a mint or a take moved the balance), or a transfer
        // refused after the call (a freeze's, judged as one), is no fee.
        after.delivery = delivery(50, 50, None);
        assert!(classify(&w, &before, &after, &call(), &[account(5)]).is_empty());
        after.delivery = None;
        assert!(classify(&w, &before, &after, &call(), &[account(5)]).is_empty());
        // A token that kept a share back before the call only has a power if the call raised it.
        before.delivery = delivery(100, 90, Some(5));
        after.delivery = delivery(200, 180, Some(5));
        assert!(classify(&w, &before, &after, &call(), &[account(5)]).is_empty());
        after.delivery = delivery(200, 170, Some(5));
        assert_eq!(
            classify(&w, &before, &after, &call(), &[account(5)]).len(),
            1
        );
        // A 1 % fee rounded up, on a balance one unit larger: rounding, not a fee the call raised.
        before.delivery = delivery(1_000, 990, Some(5));
        after.delivery = delivery(1_001, 990, Some(5));
        assert!(classify(&w, &before, &after, &call(), &[account(5)]).is_empty());
        // The same amount sent: one unit less is less.
        after.delivery = delivery(1_000, 989, Some(5));
        assert_eq!(
            classify(&w, &before, &after, &call(), &[account(5)]).len(),
            1
        );
    }

    fn call() -> Call {
        Call {
            result: Ok(ScVal::Void),
            auth: vec![],
            footprint: LedgerFootprint::default(),
            events: vec![],
            writes: vec![],
            upstream_error: None,
        }
    }

    #[test]
    fn a_holder_debited_without_its_authorization_is_taken_burned_or_moved() {
        let w = world();
        let before = obs(&[(1, 100), (2, 2), (3, 0)], [true, true]);
        let burned = obs(&[(1, 99), (2, 2), (3, 0)], [true, true]);
        assert_eq!(
            classify(&w, &before, &burned, &call(), &[account(5)]),
            [Effect::Takes {
                holder: account(1),
                amount: 1,
                moved_to: None
            }]
        );
        let moved = obs(&[(1, 99), (2, 2), (3, 1)], [true, true]);
        assert_eq!(
            classify(&w, &before, &moved, &call(), &[]),
            [Effect::Takes {
                holder: account(1),
                amount: 1,
                moved_to: Some(account(3))
            }]
        );
        // The holder's own transfer: authorized by it, nothing taken.
        assert!(classify(&w, &before, &moved, &call(), &[account(1)]).is_empty());
    }

    #[test]
    fn a_rise_without_a_debit_creates_supply() {
        let w = world();
        let before = obs(&[(1, 100), (3, 0)], [true, true]);
        let after = obs(&[(1, 100), (3, 5)], [true, true]);
        assert_eq!(
            classify(&w, &before, &after, &call(), &[account(5)]),
            [Effect::Creates {
                credited: account(3),
                amount: 5
            }]
        );
    }

    #[test]
    fn a_refused_transfer_after_the_call_is_a_freeze_of_one_or_everyone() {
        let w = world();
        let before = obs(&[(1, 100), (2, 2)], [true, true]);
        let one = obs(&[(1, 100), (2, 2)], [false, true]);
        let all = obs(&[(1, 100), (2, 2)], [false, false]);
        assert_eq!(
            classify(&w, &before, &one, &call(), &[account(5)]),
            [Effect::Freezes {
                holder: account(1),
                everyone: false
            }]
        );
        assert_eq!(
            classify(&w, &before, &all, &call(), &[account(5)]),
            [Effect::Freezes {
                holder: account(1),
                everyone: true
            }]
        );
        // Emptied, not frozen: the refusal is the missing units (the clawback says so).
        let emptied = obs(&[(1, 0), (2, 2)], [false, true]);
        let effects = classify(&w, &before, &emptied, &call(), &[account(5)]);
        assert!(
            effects.iter().all(|e| !matches!(e, Effect::Freezes { .. })),
            "{effects:?}"
        );
    }

    #[test]
    fn a_changed_executable_is_reported_alone() {
        let w = world();
        let before = obs(&[(1, 100)], [true, true]);
        let mut after = obs(&[(1, 0)], [false, false]);
        after.executable = Some(ContractExecutable::Wasm(Hash([2; 32])));
        let effects = classify(&w, &before, &after, &call(), &[account(5)]);
        assert!(
            matches!(effects.as_slice(), [Effect::ReplacesCode { .. }]),
            "{effects:?}"
        );
    }
}
