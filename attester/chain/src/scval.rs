//! Contract values the suite, discovery and the attester build and read: one definition each.

use stellar_xdr::{Int128Parts, ScSymbol, ScVal};

/// An i128 as a contract value.
pub fn i128_val(v: i128) -> ScVal {
    ScVal::I128(Int128Parts {
        hi: (v >> 64) as i64,
        lo: v as u64,
    })
}

/// The i128 an `I128` contract value holds.
pub fn i128_of(parts: &Int128Parts) -> i128 {
    (i128::from(parts.hi) << 64) | i128::from(parts.lo)
}

/// A symbol contract value. A name longer than a symbol holds (32 bytes) gives the empty symbol, which names
/// no function, event or variant, so a call or comparison built from it fails rather than the process.
pub fn symbol(name: &str) -> ScVal {
    ScVal::Symbol(ScSymbol(name.try_into().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i128_round_trips_at_the_extremes() {
        for v in [i128::MIN, -1, 0, 1, i64::MAX as i128 + 1, i128::MAX] {
            let ScVal::I128(parts) = i128_val(v) else {
                panic!("i128_val gave another type")
            };
            assert_eq!(i128_of(&parts), v);
        }
    }

    #[test]
    fn an_overlong_symbol_is_the_empty_one() {
        assert_eq!(
            symbol("transfer"),
            ScVal::Symbol(ScSymbol("transfer".try_into().unwrap()))
        );
        assert_eq!(symbol(&"x".repeat(33)), ScVal::Symbol(ScSymbol::default()));
    }
}
