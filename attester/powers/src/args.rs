//! Arguments for a probe: a small, ordered set of candidate values per position — typed by the spec where
//! it has an entry, a bounded set of kinds where it has none — and their combinations, the most likely
//! first (lowest sum of candidate ranks), so a bound keeps the sensible ones.

use std::cell::Cell;

use assay_chain::scval::{i128_val, symbol};
use stellar_xdr::{
    BytesM, ScBytes, ScMap, ScMapEntry, ScSpecEntry, ScSpecTypeDef, ScSpecUdtUnionCaseV0, ScString,
    ScVal, ScVec, UInt128Parts,
};

use crate::observe::World;
use crate::spec::Spec;

/// How deep a user-defined type is built (a struct of structs of …).
const MAX_TYPE_DEPTH: u8 = 3;
/// How deep any type is built (options of vectors of tuples of …): a spec is the token author's, and its
/// types may nest without end.
const MAX_NESTING: u8 = 12;
/// How many types one argument may take to build (each `Option`, field, case counts one): a
/// struct whose fields nest `Option<Self>` many ways multiplies without this, until memory runs out.
pub const MAX_BUILD_WORK: usize = 4_096;

/// Candidate values, by type, for one pass.
pub struct Candidates<'a> {
    world: &'a World,
    spec: &'a Spec,
    holder_balance: Option<i128>,
    /// Types built for the current function (see [`MAX_BUILD_WORK`]).
    work: Cell<usize>,
}

/// One function's candidate lists, and whether the size bound cut their building.
pub struct Built {
    pub positions: Vec<Vec<ScVal>>,
    pub cut: bool,
}

impl<'a> Candidates<'a> {
    pub fn new(world: &'a World, spec: &'a Spec, holder_balance: Option<i128>) -> Candidates<'a> {
        Candidates {
            world,
            spec,
            holder_balance,
            work: Cell::new(0),
        }
    }

    /// The candidate lists for each argument of `function` (`arity` from its WASM type).
    /// A type whose building passed the bound yields no candidate (an `Option` of it, `None` alone), so
    /// the lists stay small whatever the spec declares; `cut` says so.
    pub fn for_function(&self, function: &str, arity: u32) -> Built {
        let mut cut = false;
        let positions = match self.spec.function(function, arity) {
            Some(f) => f
                .inputs
                .iter()
                .map(|t| {
                    self.work.set(0);
                    let values = self.of_type(t, 0, 0);
                    cut |= self.work.get() > MAX_BUILD_WORK;
                    values
                })
                .collect(),
            None => (0..arity).map(|_| self.untyped()).collect(),
        };
        Built { positions, cut }
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

    fn of_type(&self, t: &ScSpecTypeDef, depth: u8, nest: u8) -> Vec<ScVal> {
        self.work.set(self.work.get().saturating_add(1));
        if self.work.get() > MAX_BUILD_WORK || nest > MAX_NESTING {
            // Past the bound only what costs nothing to build: `None`, an empty vector or map.
            return match t {
                ScSpecTypeDef::Option(_) | ScSpecTypeDef::Void => vec![ScVal::Void],
                ScSpecTypeDef::Vec(_) => vec![ScVal::Vec(Some(ScVec::default()))],
                ScSpecTypeDef::Map(_) => vec![ScVal::Map(Some(ScMap::default()))],
                _ => vec![],
            };
        }
        let nest = nest + 1;
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
                let mut out = self.of_type(&o.value_type, depth, nest);
                out.truncate(2);
                if !out.contains(&ScVal::Void) {
                    out.push(ScVal::Void);
                }
                out
            }
            ScSpecTypeDef::Vec(v) => {
                let first = self
                    .of_type(&v.element_type, depth, nest)
                    .into_iter()
                    .next();
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
                    .map(|t| self.of_type(t, depth, nest).into_iter().next())
                    .collect();
                items
                    .and_then(|i| i.try_into().ok())
                    .map(|v| vec![ScVal::Vec(Some(ScVec(v)))])
                    .unwrap_or_default()
            }
            ScSpecTypeDef::Udt(u) if depth < MAX_TYPE_DEPTH => {
                self.of_udt(&u.name.to_utf8_string_lossy(), depth + 1, nest)
            }
            ScSpecTypeDef::Val => vec![self.addresses()[0].clone(), i128_val(1), ScVal::Bool(true)],
            _ => vec![],
        }
    }

    fn of_udt(&self, name: &str, depth: u8, nest: u8) -> Vec<ScVal> {
        match self.spec.types.get(name) {
            Some(ScSpecEntry::UdtStructV0(s)) => {
                let numbered = s
                    .fields
                    .iter()
                    .all(|f| f.name.to_utf8_string_lossy().parse::<u32>().is_ok());
                let values: Option<Vec<ScVal>> = s
                    .fields
                    .iter()
                    .map(|f| self.of_type(&f.type_, depth, nest).into_iter().next())
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
                            items.push(self.of_type(ty, depth, nest).into_iter().next()?);
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

    /// The index tuples whose ranks add up to `sum`, in lexicographic order: at most [`MAX_PENDING`] of
    /// them (a function of many arguments has more tuples of one sum than memory holds; the search takes
    /// the first few). Only prefixes that can still reach `sum` are followed, so the work is bounded by
    /// what is returned.
    fn tuples(&self, sum: usize) -> Vec<Vec<usize>> {
        struct Fill<'a> {
            lists: &'a [Vec<ScVal>],
            /// The most rank the positions from `at` on can add.
            reach: Vec<usize>,
            out: Vec<Vec<usize>>,
        }
        impl Fill<'_> {
            fn fill(&mut self, at: usize, left: usize, cur: &mut Vec<usize>) {
                if self.out.len() >= MAX_PENDING || left > self.reach[at] {
                    return;
                }
                if at == self.lists.len() {
                    self.out.push(cur.clone());
                    return;
                }
                let most = left.min(self.lists[at].len() - 1);
                for i in 0..=most {
                    cur.push(i);
                    self.fill(at + 1, left - i, cur);
                    cur.pop();
                }
            }
        }
        let mut reach = vec![0usize; self.lists.len() + 1];
        for at in (0..self.lists.len()).rev() {
            reach[at] = reach[at + 1].saturating_add(self.lists[at].len() - 1);
        }
        let mut fill = Fill {
            lists: &self.lists,
            reach,
            out: Vec::new(),
        };
        fill.fill(0, sum, &mut Vec::new());
        let mut out = fill.out;
        out.reverse(); // popped from the back
        out
    }
}

/// The most index tuples of one rank sum held at once.
const MAX_PENDING: usize = 1_024;

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
    fn many_positions_yield_the_first_sets_without_enumerating_them_all() {
        // 40 positions of 12 candidates: more tuples of rank sum 20 than memory holds.
        let lists = vec![(0..12).map(ScVal::U32).collect::<Vec<_>>(); 40];
        let first: Vec<Vec<ScVal>> = Combinations::new(&lists).take(200).collect();
        assert_eq!(first.len(), 200);
        assert_eq!(first[0], vec![ScVal::U32(0); 40]);
        let mut c = Combinations::new(&lists);
        c.sum = 20;
        assert_eq!(c.tuples(20).len(), MAX_PENDING);
    }

    #[test]
    fn no_arguments_is_one_call_and_an_empty_position_is_none() {
        assert_eq!(Combinations::new(&[]).count(), 1);
        assert_eq!(Combinations::new(&[vec![ScVal::Void], vec![]]).count(), 0);
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;
    use stellar_xdr::{
        ContractId, Hash, ScAddress, ScSpecTypeOption, ScSpecTypeUdt, ScSpecUdtStructFieldV0,
        ScSpecUdtStructV0, ScSpecUdtUnionCaseTupleV0,
    };

    fn size(v: &ScVal) -> usize {
        1 + match v {
            ScVal::Vec(Some(items)) => items.iter().map(size).sum(),
            ScVal::Map(Some(m)) => m.iter().map(|e| size(&e.key) + size(&e.val)).sum(),
            _ => 0,
        }
    }

    fn world() -> World {
        let a = ScAddress::Contract(ContractId(Hash([1; 32])));
        World {
            token: a.clone(),
            holders: vec![a.clone()],
            recipient: a.clone(),
            second_recipient: None,
            fresh: vec![a.clone()],
            authorities: vec![],
            roles: vec![],
            placeholder: [0; 32],
            own_hash: [1; 32],
            ledger: 10,
        }
    }

    /// A spec bomb: `Bomb` has 40 fields, each an `Option<Bomb>` (or a union of 12 cases of it), and the
    /// function takes 12 of them. Built naively it is 40^3 values per argument, each cloned per set.
    fn bomb() -> Spec {
        let udt = |name: &str| {
            ScSpecTypeDef::Udt(ScSpecTypeUdt {
                name: name.try_into().unwrap(),
            })
        };
        let opt = |t: ScSpecTypeDef| {
            ScSpecTypeDef::Option(Box::new(ScSpecTypeOption {
                value_type: Box::new(t),
            }))
        };
        let mut spec = Spec::default();
        let fields: Vec<ScSpecUdtStructFieldV0> = (0..40)
            .map(|i| ScSpecUdtStructFieldV0 {
                doc: Default::default(),
                name: format!("f{i}").as_str().try_into().unwrap(),
                type_: opt(udt(if i % 2 == 0 { "Bomb" } else { "Many" })),
            })
            .collect();
        spec.types.insert(
            "Bomb".into(),
            ScSpecEntry::UdtStructV0(ScSpecUdtStructV0 {
                doc: Default::default(),
                lib: Default::default(),
                name: "Bomb".try_into().unwrap(),
                fields: fields.try_into().unwrap(),
            }),
        );
        let cases: Vec<ScSpecUdtUnionCaseV0> = (0..12)
            .map(|i| {
                ScSpecUdtUnionCaseV0::TupleV0(ScSpecUdtUnionCaseTupleV0 {
                    doc: Default::default(),
                    name: format!("C{i}").as_str().try_into().unwrap(),
                    type_: vec![opt(udt("Bomb")); 12].try_into().unwrap(),
                })
            })
            .collect();
        spec.types.insert(
            "Many".into(),
            ScSpecEntry::UdtUnionV0(stellar_xdr::ScSpecUdtUnionV0 {
                doc: Default::default(),
                lib: Default::default(),
                name: "Many".try_into().unwrap(),
                cases: cases.try_into().unwrap(),
            }),
        );
        spec.functions.insert(
            "detonate".into(),
            crate::spec::Function {
                inputs: vec![udt("Bomb"); 12],
                outputs: vec![],
            },
        );
        spec
    }

    #[test]
    fn a_spec_bomb_builds_small_arguments_and_says_the_bound_cut_them() {
        let (world, spec) = (world(), bomb());
        let candidates = Candidates::new(&world, &spec, Some(100));
        let built = candidates.for_function("detonate", 12);
        assert!(built.cut, "the bound must be named");
        assert_eq!(built.positions.len(), 12);
        for values in &built.positions {
            assert!(!values.is_empty(), "every argument still has a value");
            let total: usize = values.iter().map(size).sum();
            assert!(total <= 4 * MAX_BUILD_WORK, "{total} values built");
        }
        // A plain function after it is built in full again.
        let built = candidates.for_function("transfer", 0);
        assert!(!built.cut);
    }

    #[test]
    fn a_type_nested_without_end_stops_at_the_nesting_bound() {
        let mut t = ScSpecTypeDef::I128;
        for _ in 0..200 {
            t = ScSpecTypeDef::Option(Box::new(stellar_xdr::ScSpecTypeOption {
                value_type: Box::new(t),
            }));
        }
        let mut spec = Spec::default();
        spec.functions.insert(
            "deep".into(),
            crate::spec::Function {
                inputs: vec![t],
                outputs: vec![],
            },
        );
        let world = world();
        let built = Candidates::new(&world, &spec, None).for_function("deep", 1);
        assert_eq!(built.positions[0], vec![ScVal::Void]);
    }
}
