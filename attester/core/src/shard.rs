//! `--shard I/N`: which assets of a shared list one of N `assay watch` instances owns. An asset belongs to
//! shard `SHA-256(key)[0..8] mod N` (big-endian), where the key is the 32-byte contract id the registry
//! keys it by: the same on every machine and every run (never Rust's randomized hasher), and the same for
//! an asset however the config spells it (`CODE-ISSUER` or its SAC's `C…`), so two instances never
//! write the same registry entry.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

/// One shard of N (`index` counts from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// The whole list: one instance owns every asset.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`; `None` unless `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index < count).then_some(Shard { index, count })
    }

    /// This shard's index (from 0).
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many shards split the list.
    pub fn count(self) -> u32 {
        self.count
    }

    /// The shard an asset keyed by `contract` belongs to, out of `count`.
    pub fn of(contract: &[u8; 32], count: u32) -> u32 {
        let digest = Sha256::digest(contract);
        let head = u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"));
        (head % u64::from(count.max(1))) as u32
    }

    /// Whether this shard owns the asset keyed by `contract`.
    pub fn owns(self, contract: &[u8; 32]) -> bool {
        Shard::of(contract, self.count) == self.index
    }
}

impl Default for Shard {
    fn default() -> Self {
        Shard::ALL
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why a `--shard` text is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not `I/N` with two whole numbers.
    #[error(
        "shard {0:?}: expected I/N, this instance's index from 0 and the number of instances \
         (e.g. 0/3, 1/3 and 2/3 for three instances)"
    )]
    Syntax(String),
    /// `N` is 0.
    #[error("shard {0:?}: the number of instances must be at least 1")]
    NoInstances(String),
    /// `I` is not below `N`.
    #[error("shard {text:?}: the index counts from 0, so it must be below {count} (0/{count} … {last}/{count})", last = count - 1)]
    IndexTooHigh {
        /// The text as given.
        text: String,
        /// The number of instances.
        count: u32,
    },
}

impl FromStr for Shard {
    type Err = ShardError;

    /// `I/N` with `0 <= I < N`.
    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(s.to_string());
        let (index, count) = s.trim().split_once('/').ok_or_else(syntax)?;
        let index: u32 = index.trim().parse().map_err(|_| syntax())?;
        let count: u32 = count.trim().parse().map_err(|_| syntax())?;
        if count == 0 {
            return Err(ShardError::NoInstances(s.to_string()));
        }
        Shard::new(index, count).ok_or_else(|| ShardError::IndexTooHigh {
            text: s.to_string(),
            count,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> [u8; 32] {
        Sha256::digest(i.to_be_bytes()).into()
    }

    #[test]
    fn shards_split_a_list_disjointly_and_completely() {
        let keys: Vec<[u8; 32]> = (0..3000).map(key).collect();
        for count in [1u32, 2, 3, 7] {
            let mut owners = vec![0u32; keys.len()];
            let mut sizes = vec![0usize; count as usize];
            for index in 0..count {
                let shard = Shard::new(index, count).unwrap();
                for (k, owned) in keys.iter().zip(owners.iter_mut()) {
                    if shard.owns(k) {
                        *owned += 1;
                        sizes[index as usize] += 1;
                    }
                }
            }
            assert!(
                owners.iter().all(|&n| n == 1),
                "N={count}: each asset has one owner"
            );
            let fair = keys.len() / count as usize;
            assert!(
                sizes
                    .iter()
                    .all(|&s| s > fair * 8 / 10 && s < fair * 12 / 10),
                "N={count}: shards near even: {sizes:?}"
            );
        }
    }

    #[test]
    fn the_hash_is_stable_across_runs_and_machines() {
        // Pinned: SHA-256 of 32 zero bytes starts 66687aadf862bd77; mod 3 = 0, mod 7 = 3.
        assert_eq!(
            Shard::of(&[0; 32], 3),
            (0x6668_7aad_f862_bd77u64 % 3) as u32
        );
        assert_eq!(
            Shard::of(&[0; 32], 7),
            (0x6668_7aad_f862_bd77u64 % 7) as u32
        );
        assert!(Shard::ALL.owns(&[0; 32]) && Shard::ALL.owns(&[0xff; 32]));
    }

    #[test]
    fn parses_i_of_n_and_names_the_fix() {
        assert_eq!("1/3".parse::<Shard>().unwrap(), Shard::new(1, 3).unwrap());
        assert_eq!("1/3".parse::<Shard>().unwrap().to_string(), "1/3");
        for (bad, needle) in [
            ("3/3", "must be below 3 (0/3 … 2/3)"),
            ("0/0", "at least 1"),
            ("1", "expected I/N"),
            ("a/3", "expected I/N"),
            ("-1/3", "expected I/N"),
        ] {
            let err = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
    }
}
