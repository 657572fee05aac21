//! Arguments for a probe: a small, ordered set of candidate values per position — typed by the spec where
//! it has an entry, a bounded set of kinds where it has none — and their combinations, the most likely
//! first (lowest sum of candidate ranks), so a bound keeps the sensible ones.

use assay_chain::scval::{i128_val, symbol};
use stellar_xdr::{
    BytesM, ScBytes, ScMap, ScMapEntry, ScSpecEntry, ScSpecTypeDef, ScSpecUdtUnionCaseV0, ScString,
    ScVal, ScVec, UInt128Parts,
};

use crate::observe::World;
use crate::spec::Spec;

/// How deep a user-defined type is built (a struct of structs of …).
const MAX_TYPE_DEPTH: u8 = 3;

/// Candidate values, by type, for one pass.
pub struct Candidates<'a> {
    world: &'a World,
    spec: &'a Spec,
    holder_balance: Option<i128>,
}

impl<'a> Candidates<'a> {
    pub fn new(world: &'a World, spec: &'a Spec, holder_balance: Option<i128>) -> Candidates<'a> {
        Candidates {
            world,
            spec,
            holder_balance,
        }
    }

    /// The candidate lists for each argument of `function` (`arity` from its WASM type).
    pub fn for_function(&self, function: &str, arity: u32) -> Vec<Vec<ScVal>> {
        match self.spec.function(function, arity) {
            Some(f) => f.inputs.iter().map(|t| self.of_type(t, 0)).collect(),
            None => (0..arity).map(|_| self.untyped()).collect(),
        }
    }

    /// Addresses, most likely first: the holder, a fresh recipient, the parties the contract names, the
    /// second holder, another fresh address.
    fn addresses(&self) -> Vec<ScVal> {
        let w = self.world;
        let mut out: Vec<ScVal> = Vec::new();
        let mut push = |a: &stellar_xdr::ScAddress| {
            let v = ScVal::Address(a.clone());
            if !out.contains(&v) {
                out.push(v);
            }
        };
        if let Some(h) = w.holders.first() {
            push(h);
        }
        push(&w.recipient);
        for a in &w.authorities {
            push(a);
        }
        for h in w.holders.iter().skip(1) {
            push(h);
        }
        if let Some(f) = w.fresh.last() {
            push(f);
        }
        out
    }

    fn amounts(&self, signed: bool) -> Vec<ScVal> {
        let mut values = vec![1i128];
        if let Some(b) = self.holder_balance.filter(|b| *b > 1) {
            values.push(b);
        }
        values
            .into_iter()
            .map(|v| {
                if signed {
                    i128_val(v)
                } else {
                    ScVal::U128(UInt128Parts {
                        hi: (v >> 64) as u64,
                        lo: v as u64,
                    })
                }
            })
            .collect()
    }

    fn hashes(&self) -> Vec<ScVal> {
        [self.world.placeholder, self.world.own_hash, [0u8; 32]]
            .into_iter()
            .map(|h| ScVal::Bytes(ScBytes(h.to_vec().try_into().unwrap_or_default())))
            .collect()
    }

    /// A bounded set of kinds for a position the spec does not type.
    fn untyped(&self) -> Vec<ScVal> {
        let addresses = self.addresses();
        let mut out = vec![
            addresses[0].clone(),
            i128_val(1),
            ScVal::Bool(true),
            ScVal::U32(1),
        ];
        out.extend(addresses.into_iter().skip(1).take(2));
        out.push(ScVal::Bool(false));
        out
    }

    fn of_type(&self, t: &ScSpecTypeDef, depth: u8) -> Vec<ScVal> {
        let ledger = self.world.ledger;
        match t {
            ScSpecTypeDef::Address | ScSpecTypeDef::MuxedAddress => self.addresses(),
            ScSpecTypeDef::I128 => self.amounts(true),
            ScSpecTypeDef::U128 => self.amounts(false),
            ScSpecTypeDef::I256 | ScSpecTypeDef::U256 => vec![ScVal::Void],
            ScSpecTypeDef::Bool => vec![ScVal::Bool(true), ScVal::Bool(false)],
            ScSpecTypeDef::U32 => vec![
                ScVal::U32(1),
                ScVal::U32(0),
                ScVal::U32(2),
                ScVal::U32(ledger.saturating_add(1_000)),
            ],
            ScSpecTypeDef::I32 => vec![ScVal::I32(1), ScVal::I32(0)],
            ScSpecTypeDef::U64 => vec![ScVal::U64(1), ScVal::U64(0)],
            ScSpecTypeDef::I64 => vec![ScVal::I64(1), ScVal::I64(0)],
            ScSpecTypeDef::Timepoint => vec![ScVal::Timepoint(1u64.into())],
            ScSpecTypeDef::Duration => vec![ScVal::Duration(1u64.into())],
            ScSpecTypeDef::Symbol => {
                let mut out: Vec<ScVal> = self.world.roles.iter().map(|r| symbol(r)).collect();
                out.push(symbol("admin"));
                out
            }
            ScSpecTypeDef::String => vec![ScVal::String(ScString(
                b"assay".to_vec().try_into().unwrap_or_default(),
            ))],
            ScSpecTypeDef::Bytes => vec![ScVal::Bytes(ScBytes(BytesM::default()))],
            ScSpecTypeDef::BytesN(n) if n.n == 32 => self.hashes(),
            ScSpecTypeDef::BytesN(n) => vec![ScVal::Bytes(ScBytes(
                vec![0u8; n.n as usize].try_into().unwrap_or_default(),
            ))],
            ScSpecTypeDef::Void => vec![ScVal::Void],
            ScSpecTypeDef::Option(o) => {
                let mut out = self.of_type(&o.value_type, depth);
                out.truncate(2);
                out.push(ScVal::Void);
                out
            }
            ScSpecTypeDef::Vec(v) => {
                let first = self.of_type(&v.element_type, depth).into_iter().next();
                let mut out = vec![ScVal::Vec(Some(ScVec::default()))];
                if let Some(first) = first {
                    out.push(ScVal::Vec(Some(ScVec(
                        vec![first].try_into().unwrap_or_default(),
                    ))));
                }
                out
            }
            ScSpecTypeDef::Map(_) => vec![ScVal::Map(Some(ScMap::default()))],
            ScSpecTypeDef::Tuple(t) => {
                let items: Option<Vec<ScVal>> = t
                    .value_types
                    .iter()
                    .map(|t| self.of_type(t, depth).into_iter().next())
                    .collect();
                items
                    .and_then(|i| i.try_into().ok())
                    .map(|v| vec![ScVal::Vec(Some(ScVec(v)))])
                    .unwrap_or_default()
            }
            ScSpecTypeDef::Udt(u) if depth < MAX_TYPE_DEPTH => {
                self.of_udt(&u.name.to_utf8_string_lossy(), depth + 1)
            }
            ScSpecTypeDef::Val => vec![self.addresses()[0].clone(), i128_val(1), ScVal::Bool(true)],
            _ => vec![],
        }
    }

    fn of_udt(&self, name: &str, depth: u8) -> Vec<ScVal> {
        match self.spec.types.get(name) {
            Some(ScSpecEntry::UdtStructV0(s)) => {
                let numbered = s
                    .fields
                    .iter()
                    .all(|f| f.name.to_utf8_string_lossy().parse::<u32>().is_ok());
                let values: Option<Vec<ScVal>> = s
                    .fields
                    .iter()
                    .map(|f| self.of_type(&f.type_, depth).into_iter().next())
                    .collect();
                let Some(values) = values else {
                    return vec![];
                };
                if numbered {
                    return values
                        .try_into()
                        .map(|v| vec![ScVal::Vec(Some(ScVec(v)))])
                        .unwrap_or_default();
                }
                let mut entries: Vec<ScMapEntry> = s
                    .fields
                    .iter()
                    .zip(values)
                    .map(|(f, val)| ScMapEntry {
                        key: symbol(&f.name.to_utf8_string_lossy()),
                        val,
                    })
                    .collect();
                entries.sort_by(|a, b| a.key.cmp(&b.key));
                entries
                    .try_into()
                    .map(|m| vec![ScVal::Map(Some(ScMap(m)))])
                    .unwrap_or_default()
            }
            Some(ScSpecEntry::UdtUnionV0(u)) => u
                .cases
                .iter()
                .take(3)
                .filter_map(|case| match case {
                    ScSpecUdtUnionCaseV0::VoidV0(v) => Some(ScVal::Vec(Some(ScVec(
                        vec![symbol(&v.name.to_utf8_string_lossy())]
                            .try_into()
                            .ok()?,
                    )))),
                    ScSpecUdtUnionCaseV0::TupleV0(t) => {
                        let mut items = vec![symbol(&t.name.to_utf8_string_lossy())];
                        for ty in t.type_.iter() {
                            items.push(self.of_type(ty, depth).into_iter().next()?);
                        }
                        Some(ScVal::Vec(Some(ScVec(items.try_into().ok()?))))
                    }
                })
                .collect(),
            Some(ScSpecEntry::UdtEnumV0(e)) => e
                .cases
                .iter()
                .take(3)
                .map(|c| ScVal::U32(c.value))
                .collect(),
            _ => vec![],
        }
    }
}

/// Every combination of one candidate per position, in order of the sum of the candidates' ranks (the
/// first candidates of every position first, then one position moved one step, …). A position with no
/// candidate yields nothing.
pub struct Combinations {
    lists: Vec<Vec<ScVal>>,
    /// The rank sum being enumerated, and the index tuples of that sum not yet handed out.
    sum: usize,
    pending: Vec<Vec<usize>>,
    max_sum: usize,
}

impl Combinations {
    pub fn new(lists: &[Vec<ScVal>]) -> Combinations {
        let empty = lists.iter().any(|l| l.is_empty());
        let max_sum = lists.iter().map(|l| l.len().saturating_sub(1)).sum();
        Combinations {
            lists: lists.to_vec(),
            sum: 0,
            pending: if empty {
                vec![]
            } else {
                vec![vec![0; lists.len()]]
            },
            max_sum: if empty { 0 } else { max_sum },
        }
    }

    /// The index tuples whose ranks add up to `sum`, in lexicographic order.
    fn tuples(&self, sum: usize) -> Vec<Vec<usize>> {
        fn fill(
            lists: &[Vec<ScVal>],
            at: usize,
            left: usize,
            cur: &mut Vec<usize>,
            out: &mut Vec<Vec<usize>>,
        ) {
            if at == lists.len() {
                if left == 0 {
                    out.push(cur.clone());
                }
                return;
            }
            let most = left.min(lists[at].len() - 1);
            for i in 0..=most {
                cur.push(i);
                fill(lists, at + 1, left - i, cur, out);
                cur.pop();
            }
        }
        let mut out = Vec::new();
        fill(&self.lists, 0, sum, &mut Vec::new(), &mut out);
        out.reverse(); // popped from the back
        out
    }
}

impl Iterator for Combinations {
    type Item = Vec<ScVal>;

    fn next(&mut self) -> Option<Vec<ScVal>> {
        loop {
            if let Some(idx) = self.pending.pop() {
                return Some(
                    idx.iter()
                        .zip(&self.lists)
                        .map(|(i, l)| l[*i].clone())
                        .collect(),
                );
            }
            if self.sum >= self.max_sum || self.lists.iter().any(|l| l.is_empty()) {
                return None;
            }
            self.sum += 1;
            self.pending = self.tuples(self.sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_come_most_likely_first_and_cover_the_product() {
        let lists = vec![
            vec![ScVal::U32(0), ScVal::U32(1)],
            vec![ScVal::U32(10), ScVal::U32(11), ScVal::U32(12)],
        ];
        let all: Vec<Vec<ScVal>> = Combinations::new(&lists).collect();
        assert_eq!(all.len(), 6);
        assert_eq!(all[0], vec![ScVal::U32(0), ScVal::U32(10)]);
        let sums: Vec<u32> = all
            .iter()
            .map(|c| match (&c[0], &c[1]) {
                (ScVal::U32(a), ScVal::U32(b)) => a + (b - 10),
                _ => unreachable!(),
            })
            .collect();
        assert!(sums.windows(2).all(|w| w[0] <= w[1]), "{sums:?}");
        let unique: std::collections::BTreeSet<_> = all.iter().map(|c| format!("{c:?}")).collect();
        assert_eq!(unique.len(), 6);
    }

    #[test]
    fn no_arguments_is_one_call_and_an_empty_position_is_none() {
        assert_eq!(Combinations::new(&[]).count(), 1);
        assert_eq!(Combinations::new(&[vec![ScVal::Void], vec![]]).count(), 0);
    }
}
