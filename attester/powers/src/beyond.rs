//! The search past today's clock and today's values, each bounded so it adds little to a token's cost:
//!
//! - **later**: argument sets a function refused at the ledger's time are run again with the sandbox's
//!   clock moved forward (+1 h, +1 d, +7 d, +30 d, +365 d; the host reads expired entries as it would
//!   then). A power shown there is the same power, usable from the earliest time found (to the hour).
//! - **module values**: integer arguments take the module's own constants ([`crate::constants`]) and
//!   address arguments the addresses its instance storage holds, one position at a time, the other
//!   positions at their most likely value.

use std::collections::BTreeSet;

use assay_chain::scval::i128_val;
use assay_core::time::Timestamp;
use assay_localnet::{Checkpoint, Clock, Sandbox};
use stellar_xdr::{
    ContractDataDurability, LedgerEntryData, LedgerKey, LedgerKeyContractData, ScAddress, ScVal,
    UInt128Parts,
};

/// The clock offsets a refused set is tried at (seconds after the ledger's time).
pub const LATER_OFFSETS: [u64; 5] = [3_600, 86_400, 7 * 86_400, 30 * 86_400, 365 * 86_400];
/// Refused argument sets kept per function (its most likely ones).
pub const LATER_SETS_PER_FUNCTION: usize = 2;
/// Refused argument sets re-probed per token (each at up to every offset).
pub const MAX_LATER_SETS: usize = 16;
/// How close the earliest usable time is searched for, in seconds.
const LATER_PRECISION: u64 = 3_600;

/// Module constants tried per integer position.
pub const MODULE_VALUES: usize = 16;
/// Module constants tried per integer position of a SEP-41 write (the suite exercises those; a key in
/// their amounts is unlikely, and every token has five of them).
pub const INTERFACE_MODULE_VALUES: usize = 4;
/// Instance-storage addresses tried per address position.
pub const INSTANCE_ADDRESSES: usize = 8;
/// Invocations the module values may take per token.
pub const MAX_MODULE_CALLS: usize = 64;

/// An argument set a function refused at the ledger's time.
pub struct Refused {
    pub function: String,
    pub args: Vec<ScVal>,
    /// The function refused every set it was given (probed first).
    pub every_set: bool,
}

/// Orders refused sets (functions that refused everything first) and keeps [`MAX_LATER_SETS`]; whether
/// the bound cut some.
pub fn later_sets(mut refused: Vec<Refused>) -> (Vec<Refused>, bool) {
    refused.sort_by_key(|r| !r.every_set); // stable: the search's order within each group
    let cut = refused.len() > MAX_LATER_SETS;
    refused.truncate(MAX_LATER_SETS);
    (refused, cut)
}

/// The earliest offset in `(lo, hi]` at which `works` holds, to [`LATER_PRECISION`], given it holds at
/// `hi` and not at `lo`.
pub fn earliest(mut lo: u64, mut hi: u64, mut works: impl FnMut(u64) -> bool) -> u64 {
    while hi - lo > LATER_PRECISION {
        let mid = lo + (hi - lo) / 2;
        if works(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The instant `offset` seconds after `clock`'s time, rounded up to the hour.
pub fn usable_from(clock: Clock, offset: u64) -> Option<Timestamp> {
    let at = clock.timestamp.saturating_add(offset);
    let at = at.div_ceil(LATER_PRECISION).saturating_mul(LATER_PRECISION);
    Timestamp::from_unix(i64::try_from(at).ok()?)
}

/// Runs `function(args)` from `base` with the clock at `clock`; whether it succeeded and wrote state.
pub fn works_at(
    sandbox: &mut Sandbox,
    base: &Checkpoint,
    clock: Clock,
    token: &ScAddress,
    function: &str,
    args: &[ScVal],
) -> bool {
    sandbox.restore(base);
    sandbox.set_clock(clock);
    let call = sandbox.invoke(token, function, args.to_vec());
    call.succeeded() && !call.writes.is_empty()
}

/// `value` as an argument of the integer kind `like` is, when it fits; `None` for a non-integer kind.
pub fn integer_like(like: &ScVal, value: i128) -> Option<ScVal> {
    Some(match like {
        ScVal::U32(_) => ScVal::U32(u32::try_from(value).ok()?),
        ScVal::I32(_) => ScVal::I32(i32::try_from(value).ok()?),
        ScVal::U64(_) => ScVal::U64(u64::try_from(value).ok()?),
        ScVal::I64(_) => ScVal::I64(i64::try_from(value).ok()?),
        ScVal::Timepoint(_) => ScVal::Timepoint(u64::try_from(value).ok()?.into()),
        ScVal::Duration(_) => ScVal::Duration(u64::try_from(value).ok()?.into()),
        ScVal::U128(_) => {
            let v = u128::try_from(value).ok()?;
            ScVal::U128(UInt128Parts {
                hi: (v >> 64) as u64,
                lo: v as u64,
            })
        }
        ScVal::I128(_) => i128_val(value),
        _ => return None,
    })
}

/// The addresses the contract's instance storage holds (keys and values, a few levels deep).
pub fn instance_addresses(sandbox: &Sandbox, token: &ScAddress) -> Vec<ScAddress> {
    fn walk(v: &ScVal, depth: u8, out: &mut Vec<ScAddress>) {
        if depth > 4 || out.len() >= 64 {
            return;
        }
        match v {
            ScVal::Address(a) if !out.contains(a) => out.push(a.clone()),
            ScVal::Vec(Some(items)) => items.iter().for_each(|i| walk(i, depth + 1, out)),
            ScVal::Map(Some(m)) => m.iter().for_each(|e| {
                walk(&e.key, depth + 1, out);
                walk(&e.val, depth + 1, out);
            }),
            _ => {}
        }
    }
    let key = LedgerKey::ContractData(LedgerKeyContractData {
        contract: token.clone(),
        key: ScVal::LedgerKeyContractInstance,
        durability: ContractDataDurability::Persistent,
    });
    let mut out = Vec::new();
    if let Ok(Some(entry)) = sandbox.entry(&key) {
        if let LedgerEntryData::ContractData(d) = entry.data {
            if let ScVal::ContractInstance(i) = d.val {
                if let Some(storage) = i.storage {
                    for e in storage.iter() {
                        walk(&e.key, 0, &mut out);
                        walk(&e.val, 0, &mut out);
                    }
                }
            }
        }
    }
    out.retain(|a| a != token);
    out
}

/// The argument sets the module's values make for one function: `first` (each position's most likely
/// value) with one position replaced by a value of the module it did not already try. Integer positions
/// take `constants`, address positions `addresses`.
pub fn module_sets(
    positions: &[Vec<ScVal>],
    constants: &[i128],
    per_position: usize,
    addresses: &[ScAddress],
) -> Vec<Vec<ScVal>> {
    let Some(first) = positions
        .iter()
        .map(|p| p.first().cloned())
        .collect::<Option<Vec<ScVal>>>()
    else {
        return vec![];
    };
    let mut out = Vec::new();
    for (at, tried) in positions.iter().enumerate() {
        let tried: BTreeSet<String> = tried.iter().map(|v| format!("{v:?}")).collect();
        let values: Vec<ScVal> = match &first[at] {
            ScVal::Address(_) => addresses
                .iter()
                .take(INSTANCE_ADDRESSES)
                .map(|a| ScVal::Address(a.clone()))
                .collect(),
            like => constants
                .iter()
                .filter_map(|c| integer_like(like, *c))
                .take(per_position)
                .collect(),
        };
        // A position the spec does not type holds mixed kinds: only typed positions are seeded.
        let typed = positions[at]
            .iter()
            .all(|v| std::mem::discriminant(v) == std::mem::discriminant(&first[at]));
        if !typed {
            continue;
        }
        for v in values {
            if tried.contains(&format!("{v:?}")) {
                continue;
            }
            let mut set = first.clone();
            set[at] = v;
            out.push(set);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_time_is_found_to_the_hour() {
        let key = 7 * 86_400 - 5_000;
        let found = earliest(86_400, 7 * 86_400, |t| t >= key);
        assert!(found >= key && found - key <= LATER_PRECISION, "{found}");
    }

    #[test]
    fn module_sets_vary_one_typed_position_and_skip_what_was_tried() {
        let positions = vec![
            vec![ScVal::Bool(true), ScVal::Bool(false)],
            vec![ScVal::U64(1), ScVal::U64(0)],
        ];
        let sets = module_sets(&positions, &[1, 77, -3, 9_000], MODULE_VALUES, &[]);
        assert_eq!(
            sets,
            vec![
                vec![ScVal::Bool(true), ScVal::U64(77)],
                vec![ScVal::Bool(true), ScVal::U64(9_000)],
            ]
        );
        // An untyped position (mixed kinds) takes none.
        let mixed = vec![vec![ScVal::U32(1), ScVal::Bool(true)]];
        assert!(module_sets(&mixed, &[77], MODULE_VALUES, &[]).is_empty());
        // The per-position bound.
        assert_eq!(module_sets(&positions, &[77, 9_000], 1, &[]).len(), 1);
    }

    #[test]
    fn refused_sets_of_functions_that_refused_everything_come_first_within_the_bound() {
        let r = |f: &str, every_set| Refused {
            function: f.into(),
            args: vec![],
            every_set,
        };
        let mut all = vec![r("a", false), r("b", true)];
        all.extend((0..MAX_LATER_SETS).map(|_| r("c", false)));
        let (kept, cut) = later_sets(all);
        assert!(cut);
        assert_eq!(kept.len(), MAX_LATER_SETS);
        assert_eq!(kept[0].function, "b");
    }
}
