//! Integers the module itself holds: the immediates of its `i32.const` / `i64.const` instructions and the
//! aligned words of its data segments. A function that acts only when an argument equals a compiled-in
//! key shows its power to no value a probe makes up; seeded with these, it does.
//!
//! Structural numbers are left out (pointers into the module's own data, masks of the form 2^n - 1 or
//! -2^n, and the raw form of an encoded `Val`, whose payload is kept instead), so the bound keeps the
//! candidates a key is likely among. Distinctive values (at least 256 in magnitude) come first, most
//! frequent first; small ones (shifts, lengths, tags as often as keys) after them.

use std::collections::BTreeMap;

use wasmparser::{Operator, Parser, Payload};

/// Operators read at most (a hostile module may be large; the scan stays bounded).
const MAX_OPERATORS: usize = 1 << 20;
/// Data bytes read at most.
const MAX_DATA_BYTES: usize = 1 << 16;

/// The module's integer constants, best candidates first (all of them: the caller bounds how many it tries).
#[derive(Debug, Default)]
pub struct ModuleConstants {
    pub values: Vec<i128>,
}

/// Reads `wasm`'s constants (nothing when it does not parse: discovery has already said so).
pub fn read(wasm: &[u8]) -> ModuleConstants {
    let mut code: BTreeMap<i128, u32> = BTreeMap::new();
    let mut data_words: Vec<i64> = Vec::new();
    let mut data_range: Option<(i64, i64)> = None;
    let (mut operators, mut data_bytes) = (0usize, 0usize);
    for payload in Parser::new(0).parse_all(wasm) {
        let Ok(payload) = payload else { break };
        match payload {
            Payload::CodeSectionEntry(body) => {
                let Ok(mut ops) = body.get_operators_reader() else {
                    continue;
                };
                while !ops.eof() && operators < MAX_OPERATORS {
                    operators += 1;
                    match ops.read() {
                        Ok(Operator::I32Const { value }) => {
                            *code.entry(i128::from(value)).or_default() += 1
                        }
                        Ok(Operator::I64Const { value }) => {
                            *code.entry(i128::from(value)).or_default() += 1
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            }
            Payload::DataSection(reader) => {
                for data in reader.into_iter().flatten() {
                    if let wasmparser::DataKind::Active { offset_expr, .. } = &data.kind {
                        let mut r = offset_expr.get_operators_reader();
                        if let Ok(Operator::I32Const { value }) = r.read() {
                            let start = i64::from(value);
                            let end = start + data.data.len() as i64;
                            data_range = Some(match data_range {
                                Some((lo, hi)) => (lo.min(start), hi.max(end)),
                                None => (start, end),
                            });
                        }
                    }
                    let room = MAX_DATA_BYTES.saturating_sub(data_bytes);
                    let bytes = &data.data[..data.data.len().min(room)];
                    data_bytes += bytes.len();
                    data_words.extend(
                        bytes
                            .chunks_exact(8)
                            .map(|w| i64::from_le_bytes(w.try_into().unwrap_or_default())),
                    );
                }
            }
            _ => {}
        }
    }
    // Each value: how often it occurs, and whether every occurrence looked like an encoded `Val`.
    let mut counts: BTreeMap<i128, (u32, bool)> = BTreeMap::new();
    let mut add = |v: i128, n: u32, encoded: bool| {
        let e = counts.entry(v).or_insert((0, true));
        e.0 += n;
        e.1 &= encoded;
    };
    for (&v, &n) in &code {
        let payload = val_payload(v);
        add(v, n, payload.is_some() || other_val(v));
        if let Some(p) = payload {
            add(p, n, false);
        }
    }
    // Data words: strings and tables mostly; an integer there has a plausible magnitude.
    for w in data_words {
        if (256..1u64 << 53).contains(&w.unsigned_abs()) {
            add(i128::from(w), 1, false);
        }
    }
    let structural = |v: i128| {
        let pointer = data_range
            .is_some_and(|(lo, hi)| (i128::from(lo)..=i128::from(hi) + 4096).contains(&v));
        let mask = v > 2 && (v + 1).count_ones() == 1;
        let negative_power = v < -1 && (-v).count_ones() == 1;
        // What a probe tries anyway: 0, 1, 2, -1.
        pointer || mask || negative_power || (-1..=2).contains(&v)
    };
    let mut ranked: Vec<(i128, (u32, bool))> = counts
        .into_iter()
        .filter(|(v, _)| !structural(*v))
        .collect();
    ranked.sort_by_key(|(v, (n, encoded))| {
        (v.unsigned_abs() < 256, *encoded, std::cmp::Reverse(*n), *v)
    });
    ModuleConstants {
        values: ranked.into_iter().map(|(v, _)| v).collect(),
    }
}

/// Whether `v` looks like an encoded `Val` that is no integer (an error code, a small symbol).
fn other_val(v: i128) -> bool {
    v.unsigned_abs() >= 1 << 8 && matches!(v & 0xff, 3 | 14)
}

/// The payload of a raw encoded `Val` (a constant the compiler compared a whole `Val` against): the low
/// byte is the tag. `None` for a number that is no such encoding.
fn val_payload(v: i128) -> Option<i128> {
    let raw = i64::try_from(v).ok()?;
    if raw.unsigned_abs() < 1 << 8 {
        return None; // too small to carry a payload above its tag
    }
    match raw & 0xff {
        4 => Some(i128::from((raw as u64 >> 32) as u32)),
        5 => Some(i128::from((raw >> 32) as i32)),
        6 | 8 | 9 | 10 => Some(i128::from(raw as u64 >> 8)),
        7 | 11 => Some(i128::from(raw >> 8)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_vals_give_their_payload() {
        assert_eq!(val_payload((7 << 32) | 4), Some(7));
        assert_eq!(val_payload((12345 << 8) | 6), Some(12345));
        assert_eq!(val_payload((-5i128 << 8) | 7), Some(-5));
        assert_eq!(val_payload(0x1_00), None, "tag 0 is no integer");
        assert_eq!(val_payload(4), None);
    }

    #[test]
    fn garbage_reads_as_no_constants() {
        let c = read(b"not a module");
        assert!(c.values.is_empty());
    }
}
