//! The vocabulary of a verdict: severity levels, accountability, mechanics bits, lifecycle state.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A severity level (ABI: never renumber). Derived from issuer flags; `Critical` only by escalation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// 0: no auth flag; the issuer has no special power over holders.
    Clear = 0,
    /// 1: `auth_required`; the issuer decides who may open a trustline.
    Low = 1,
    /// 2: `auth_revocable`; the issuer can freeze a held balance.
    Medium = 2,
    /// 3: `auth_clawback_enabled`; the issuer can take and burn a balance.
    High = 3,
    /// 4: reserved for escalation by curated adverse evidence; never read from flags.
    Critical = 4,
}

impl Severity {
    /// All levels, lowest first.
    pub const ALL: [Severity; 5] = [
        Severity::Clear,
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// The on-chain number.
    pub fn level(self) -> u32 {
        self as u32
    }

    /// The JSON name (`clear`, `low`, `medium`, `high`, `critical`).
    pub fn name(self) -> &'static str {
        match self {
            Severity::Clear => "clear",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// The level with this JSON name; only the five names are accepted.
    pub fn from_name(name: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Severity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Severity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Severity, D::Error> {
        let name = String::deserialize(d)?;
        Severity::from_name(&name).ok_or_else(|| {
            D::Error::custom(format!(
                "unknown severity {name:?}: expected clear, low, medium, high or critical"
            ))
        })
    }
}

/// A severity as a report carries it: a level, or `Unevaluated` when the flags were never read.
///
/// `Unevaluated` is not a level and has no number: [`Rating::level`] is `None`, so it can never reach an
/// attestation. On the wire it is written `"unknown"` (never a level name) and read back as `Unevaluated`.
/// It orders above every level, so a maximum over findings can never hide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rating {
    /// A level established from evidence.
    Level(Severity),
    /// The flags were never read; there is no level, including "clear".
    Unevaluated,
}

impl Rating {
    /// The level, if evaluated.
    pub fn level(self) -> Option<Severity> {
        match self {
            Rating::Level(s) => Some(s),
            Rating::Unevaluated => None,
        }
    }

    /// The JSON name: a level name, or `unknown` for `Unevaluated`.
    pub fn name(self) -> &'static str {
        match self {
            Rating::Level(s) => s.name(),
            Rating::Unevaluated => "unknown",
        }
    }
}

impl From<Severity> for Rating {
    fn from(s: Severity) -> Rating {
        Rating::Level(s)
    }
}

impl fmt::Display for Rating {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Rating {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Rating {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rating, D::Error> {
        let name = String::deserialize(d)?;
        if name == "unknown" {
            return Ok(Rating::Unevaluated);
        }
        Severity::from_name(&name).map(Rating::Level).ok_or_else(|| {
            D::Error::custom(format!(
                "unknown severity {name:?}: expected clear, low, medium, high, critical, or unknown (unevaluated)"
            ))
        })
    }
}

/// Who, if anyone, has publicly claimed the asset. Never affects severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accountability {
    /// A stellar.toml served from home_domain declares this code and issuer.
    Verified,
    /// A domain is advertised but the claim could not be confirmed (unreachable, refused, not claiming,
    /// links unresolved, or the directory names a different domain).
    Unverified,
    /// No home_domain: nobody has claimed the asset.
    Unknown,
}

impl Accountability {
    /// The JSON / preimage name.
    pub fn name(self) -> &'static str {
        match self {
            Accountability::Verified => "verified",
            Accountability::Unverified => "unverified",
            Accountability::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Accountability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The mechanics bitset (u32, ABI). Bits 0-2 are capability bits: the ledger's record of the issuer's
/// powers. Every other bit is a report bit and never implies a power.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Mechanics(u32);

impl Mechanics {
    /// Bit 0: `auth_required` held (capability).
    pub const AUTH_REQUIRED: u32 = 1;
    /// Bit 1: `auth_revocable` held (capability).
    pub const AUTH_REVOCABLE: u32 = 2;
    /// Bit 2: `auth_clawback_enabled` held (capability).
    pub const AUTH_CLAWBACK_ENABLED: u32 = 4;
    /// Bit 3: both flag copies say the flag set is locked (`auth_immutable`).
    pub const AUTH_IMMUTABLE: u32 = 8;
    /// Bit 4: the domain claim is not verified (no home_domain, toml unreachable/refused/not claiming,
    /// links unresolved, or directory domain ≠ home_domain).
    pub const DOMAIN_UNVERIFIED: u32 = 16;
    /// Bit 5: reputation escalated (adverse directory tag or blocklisted domain).
    pub const BLOCKLISTED: u32 = 32;
    /// Bit 6: the holder's trustline has clawback enabled (holder-specific check).
    pub const TRUSTLINE_CLAWBACK_ENABLED: u32 = 64;
    /// Bit 7: the holder's trustline is deauthorized (holder-specific check).
    pub const TRUSTLINE_DEAUTHORIZED: u32 = 128;
    /// Bit 8: a SEP-41 conformance check (`sep41`) failed and escalated to critical. Not a capability bit;
    /// set only together with that escalation.
    pub const SEP41_VIOLATION: u32 = 256;
    /// Bit 9: a custom token's code can be replaced: a call was seen to change its executable or a contract
    /// its transfer calls into, its executable is an external (CAP-85) reference, or its WASM imports the
    /// host's contract-update function. Implies at least high.
    pub const CODE_MUTABLE: u32 = 512;
    /// Bit 10: a call was seen to make a holder's balance fall without the holder's authorization (burned or
    /// moved). Implies at least high.
    pub const ADMIN_CLAWBACK: u32 = 1024;
    /// Bit 11: a call was seen to make a holder's transfer that succeeded before it fail after it (one
    /// account or everyone). Implies at least medium.
    pub const ADMIN_FREEZE: u32 = 2048;
    /// Bit 12: a call was seen to raise a balance with no matching debit. Recorded; no severity floor
    /// (minting does not move a holder's balance).
    pub const ADMIN_MINT: u32 = 4096;
    /// Bit 13: a privileged entry point wrote state but its effect on holders could not be classified within
    /// the search's bound; the report names it. Recorded; no severity floor.
    pub const ADMIN_UNCLASSIFIED: u32 = 8192;
    /// Bit 14: after a privileged call, a holder's transfer of N was seen to deliver less than N to its
    /// recipient (the rest burned or credited to someone else): the admin can change what every
    /// transfer delivers. Implies at least medium; the `contract-mechanics` check rates it high when the
    /// transfer was seen to deliver nothing.
    pub const ADMIN_TRANSFER_FEE: u32 = 16384;

    /// Bits 0-2: mask a bitset with this to read the issuer's powers.
    pub const CAPABILITY_MASK: u32 = 7;
    /// Bit 2: confiscation.
    pub const CONFISCATION_MASK: u32 = 4;
    /// Bits 6-7: one holder's own trustline (clawback enabled on it, deauthorized). Off-chain only.
    pub const HOLDER_MASK: u32 = 64 | 128;
    /// Bits 9-14: powers a custom token's code was seen to grant.
    pub const CONTRACT_MASK: u32 = 512 | 1024 | 2048 | 4096 | 8192 | 16384;
    /// Every defined bit.
    pub const KNOWN_MASK: u32 = 32767;

    /// Names in bit order.
    pub const NAMES: [(u32, &'static str); 15] = [
        (Self::AUTH_REQUIRED, "auth_required"),
        (Self::AUTH_REVOCABLE, "auth_revocable"),
        (Self::AUTH_CLAWBACK_ENABLED, "auth_clawback_enabled"),
        (Self::AUTH_IMMUTABLE, "auth_immutable"),
        (Self::DOMAIN_UNVERIFIED, "domain_unverified"),
        (Self::BLOCKLISTED, "blocklisted"),
        (
            Self::TRUSTLINE_CLAWBACK_ENABLED,
            "trustline_clawback_enabled",
        ),
        (Self::TRUSTLINE_DEAUTHORIZED, "trustline_deauthorized"),
        (Self::SEP41_VIOLATION, "sep41_violation"),
        (Self::CODE_MUTABLE, "code_mutable"),
        (Self::ADMIN_CLAWBACK, "admin_clawback"),
        (Self::ADMIN_FREEZE, "admin_freeze"),
        (Self::ADMIN_MINT, "admin_mint"),
        (Self::ADMIN_UNCLASSIFIED, "admin_unclassified"),
        (Self::ADMIN_TRANSFER_FEE, "admin_transfer_fee"),
    ];

    /// The lowest severity the set bits imply (the registry's consistency rule): clawback (bit 2),
    /// `code_mutable` (9) or `admin_clawback` (10) → high; revocable (1), `admin_freeze` (11) or
    /// `admin_transfer_fee` (14) → medium; auth required (0) → low; otherwise clear. `admin_mint` (12),
    /// `admin_unclassified` (13) and the report bits imply nothing.
    pub fn floor(self) -> Severity {
        let b = self.0;
        if b & (Self::AUTH_CLAWBACK_ENABLED | Self::CODE_MUTABLE | Self::ADMIN_CLAWBACK) != 0 {
            Severity::High
        } else if b & (Self::AUTH_REVOCABLE | Self::ADMIN_FREEZE | Self::ADMIN_TRANSFER_FEE) != 0 {
            Severity::Medium
        } else if b & Self::AUTH_REQUIRED != 0 {
            Severity::Low
        } else {
            Severity::Clear
        }
    }

    /// No bits.
    pub const fn empty() -> Mechanics {
        Mechanics(0)
    }

    /// From raw bits; `None` if an undefined bit is set.
    pub fn from_bits(bits: u32) -> Option<Mechanics> {
        (bits & !Self::KNOWN_MASK == 0).then_some(Mechanics(bits))
    }

    /// The raw bits (the on-chain `flags`).
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Sets `bit` (one of the constants).
    pub fn set(&mut self, bit: u32) {
        self.0 |= bit & Self::KNOWN_MASK;
    }

    /// Whether every bit of `bit` is set.
    pub fn has(self, bit: u32) -> bool {
        bit != 0 && self.0 & bit == bit
    }

    /// The union.
    pub fn union(self, other: Mechanics) -> Mechanics {
        Mechanics(self.0 | other.0)
    }

    /// Only the capability bits (0-2).
    pub fn capabilities(self) -> Mechanics {
        Mechanics(self.0 & Self::CAPABILITY_MASK)
    }

    /// Names of the set bits, in bit order.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES
            .iter()
            .filter(|(b, _)| self.0 & b != 0)
            .map(|(_, n)| *n)
            .collect()
    }

    /// The bit with this name.
    pub fn bit_named(name: &str) -> Option<u32> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(b, _)| *b)
    }
}

impl Serialize for Mechanics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Mechanics {
    /// Strict: known names only, each at most once, in bit order.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Mechanics, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        let mut bits = 0u32;
        let mut last = 0u32;
        for name in &names {
            let bit = Mechanics::bit_named(name)
                .ok_or_else(|| D::Error::custom(format!("unknown mechanics name {name:?}")))?;
            if bit <= last {
                return Err(D::Error::custom(format!(
                    "mechanics name {name:?} repeated or out of bit order"
                )));
            }
            last = bit;
            bits |= bit;
        }
        Ok(Mechanics(bits))
    }
}

/// A verdict's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Complete and within the freshness window.
    Valid,
    /// A check could not conclude (undetermined) or the flags were never read (unevaluated). Never becomes
    /// `valid` or `stale`.
    Unknown,
    /// Was complete, now older than the freshness window.
    Stale,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mechanics_names_and_masks() {
        let m = Mechanics::from_bits(54).unwrap();
        assert_eq!(
            m.names(),
            [
                "auth_revocable",
                "auth_clawback_enabled",
                "domain_unverified",
                "blocklisted"
            ]
        );
        assert_eq!(m.capabilities().bits(), 6);
        assert_eq!(Mechanics::SEP41_VIOLATION, 1 << 8);
        assert!(Mechanics::from_bits(1 << 15).is_none());
        assert_eq!(
            Mechanics::from_bits(1 << 14).unwrap().names(),
            ["admin_transfer_fee"]
        );
        assert_eq!(
            Mechanics::from_bits(1 << 13).unwrap().names(),
            ["admin_unclassified"]
        );
        assert_eq!(
            Mechanics::from_bits(1 << 13).unwrap().floor(),
            Severity::Clear,
            "an unclassified privileged write has no floor"
        );
        assert_eq!(
            Mechanics::from_bits(512 | 4096).unwrap().names(),
            ["code_mutable", "admin_mint"]
        );
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<Mechanics>(&json).unwrap(), m);
        assert!(serde_json::from_str::<Mechanics>(r#"["blocklisted","auth_required"]"#).is_err());
        assert!(serde_json::from_str::<Mechanics>(r#"["auth_required","auth_required"]"#).is_err());
        assert!(serde_json::from_str::<Mechanics>(r#"["flying"]"#).is_err());
    }

    #[test]
    fn each_bit_implies_its_floor() {
        let floor = |bits| Mechanics::from_bits(bits).unwrap().floor();
        assert_eq!(floor(0), Severity::Clear);
        assert_eq!(floor(Mechanics::AUTH_REQUIRED), Severity::Low);
        assert_eq!(floor(Mechanics::AUTH_REVOCABLE), Severity::Medium);
        assert_eq!(floor(Mechanics::AUTH_CLAWBACK_ENABLED), Severity::High);
        assert_eq!(floor(Mechanics::CODE_MUTABLE), Severity::High);
        assert_eq!(floor(Mechanics::ADMIN_CLAWBACK), Severity::High);
        assert_eq!(floor(Mechanics::ADMIN_FREEZE), Severity::Medium);
        assert_eq!(floor(Mechanics::ADMIN_MINT), Severity::Clear);
        assert_eq!(floor(Mechanics::ADMIN_TRANSFER_FEE), Severity::Medium);
        assert_eq!(
            floor(Mechanics::ADMIN_TRANSFER_FEE | Mechanics::ADMIN_CLAWBACK),
            Severity::High
        );
        assert_eq!(
            floor(Mechanics::ADMIN_MINT | Mechanics::ADMIN_FREEZE),
            Severity::Medium
        );
        assert_eq!(floor(Mechanics::SEP41_VIOLATION), Severity::Clear);
    }

    #[test]
    fn unevaluated_is_not_a_level() {
        assert_eq!(Rating::Unevaluated.level(), None);
        assert!(Rating::Unevaluated > Rating::Level(Severity::Critical));
        assert_eq!(
            serde_json::to_string(&Rating::Unevaluated).unwrap(),
            r#""unknown""#
        );
        assert!(serde_json::from_str::<Severity>(r#""unknown""#).is_err());
        assert_eq!(
            serde_json::from_str::<Rating>(r#""unknown""#).unwrap(),
            Rating::Unevaluated
        );
    }
}
