//! Who can use an issuer's powers: from its signers and thresholds, how many keys must sign to act, or that
//! no signer can reach the threshold any more (the powers are dormant for good).
//!
//! stellar-core accepts an operation when the weights of the signers that signed reach the operation's
//! threshold, and at least one signer signed (a threshold of 0 still needs one signature). The thresholds
//! that matter for an issuer's powers over held balances:
//!
//! - `SetTrustLineFlags` / `AllowTrust` (freeze, unfreeze): low;
//! - `SetOptions` setting or clearing a flag (e.g. `AUTH_REVOCABLE`), `Clawback`: medium;
//! - `SetOptions` changing signers or thresholds: high. Whoever reaches it can rewrite the rest, so reaching
//!   high is enough to do anything.
//!
//! The weight that lets an issuer use every power (set `AUTH_REVOCABLE`, then freeze; or claw back) is
//! therefore `min(high, max(low, medium))`.

use std::fmt;

use crate::subject::{AccountControl, ControlOutcome, Subject};

/// How many keys must sign for the issuer to act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhoCanAct {
    /// `needed` of the `of` signers (with weight) must sign to use every power.
    Keys {
        /// The fewest keys whose weights reach the threshold.
        needed: u32,
        /// Signers with a weight above 0.
        of: u32,
    },
    /// Only the low threshold can still be reached: trustline authorization (freeze and unfreeze where
    /// `AUTH_REVOCABLE` is already set), never a flag change.
    LowOnly {
        /// The fewest keys whose weights reach the low threshold.
        needed: u32,
        /// Signers with a weight above 0.
        of: u32,
    },
    /// No combination of signers reaches any threshold: the account can never sign again.
    Locked,
    /// The signers and thresholds were not read: who can act is not known (taken to be someone).
    Unknown,
}

impl WhoCanAct {
    /// Whether the issuer can still sign a flag change and a freeze (fails closed: `Unknown` can).
    pub fn can_set_flags(self) -> bool {
        matches!(self, WhoCanAct::Keys { .. } | WhoCanAct::Unknown)
    }

    /// Whether no signer can ever act again.
    pub fn is_locked(self) -> bool {
        self == WhoCanAct::Locked
    }
}

fn keys(needed: u32, of: u32) -> String {
    if needed == 1 && of == 1 {
        "1 key".to_string()
    } else {
        format!("{needed} of {of} keys")
    }
}

impl fmt::Display for WhoCanAct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WhoCanAct::Keys { needed, of } => f.write_str(&keys(needed, of)),
            WhoCanAct::LowOnly { needed, of } => write!(
                f,
                "{}, for trustline authorization only: no signer can reach the threshold to change its flags",
                keys(needed, of)
            ),
            WhoCanAct::Locked => f.write_str("locked: no signer can reach the threshold"),
            WhoCanAct::Unknown => f.write_str("not known: the issuer's signers and thresholds were not read"),
        }
    }
}

impl AccountControl {
    /// Weights of the signers that can sign (above 0, each at most 255), heaviest first.
    fn weights(&self) -> Vec<u32> {
        let mut w: Vec<u32> = self
            .signers
            .iter()
            .map(|s| s.weight.min(255))
            .filter(|w| *w > 0)
            .collect();
        w.sort_unstable_by(|a, b| b.cmp(a));
        w
    }

    /// The fewest signers whose weights reach `threshold` (at least one signature is always needed), or
    /// `None` when all of them together do not.
    pub fn keys_to_reach(&self, threshold: u32) -> Option<u32> {
        let needed = threshold.max(1);
        let mut total = 0u32;
        for (i, w) in self.weights().into_iter().enumerate() {
            total += w;
            if total >= needed {
                return Some(i as u32 + 1);
            }
        }
        None
    }

    /// The weight that lets the account use every power: `min(high, max(low, medium))`.
    pub fn acting_threshold(&self) -> u32 {
        self.high.min(self.low.max(self.medium))
    }

    /// Who can act for this account.
    pub fn who_can_act(&self) -> WhoCanAct {
        let of = self.weights().len() as u32;
        if let Some(needed) = self.keys_to_reach(self.acting_threshold()) {
            return WhoCanAct::Keys { needed, of };
        }
        match self.keys_to_reach(self.low.min(self.high)) {
            Some(needed) => WhoCanAct::LowOnly { needed, of },
            None => WhoCanAct::Locked,
        }
    }
}

/// Who can use the powers of `subject`'s issuer.
pub fn who_can_act(subject: &Subject) -> WhoCanAct {
    match &subject.issuer_control {
        ControlOutcome::Read(o) => o.value.who_can_act(),
        ControlOutcome::Missing { .. } | ControlOutcome::NotRead => WhoCanAct::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::AccountSigner;

    fn control(weights: &[u32], low: u32, medium: u32, high: u32) -> AccountControl {
        AccountControl {
            signers: weights
                .iter()
                .enumerate()
                .map(|(i, w)| AccountSigner {
                    key: format!("G{i}"),
                    kind: "ed25519_public_key".into(),
                    weight: *w,
                })
                .collect(),
            low,
            medium,
            high,
        }
    }

    #[test]
    fn one_key_two_of_three_and_locked() {
        assert_eq!(control(&[1], 0, 0, 0).who_can_act().to_string(), "1 key");
        assert_eq!(
            control(&[0, 1, 1, 1], 2, 2, 2).who_can_act().to_string(),
            "2 of 3 keys"
        );
        assert_eq!(
            control(&[0], 0, 0, 0).who_can_act().to_string(),
            "locked: no signer can reach the threshold"
        );
        assert_eq!(control(&[], 0, 0, 0).who_can_act(), WhoCanAct::Locked);
        // Weights above the threshold: the heaviest key alone.
        assert_eq!(
            control(&[1, 5, 1], 0, 5, 5).who_can_act(),
            WhoCanAct::Keys { needed: 1, of: 3 }
        );
        // The sum falls short of every threshold.
        assert_eq!(control(&[1, 1], 3, 3, 3).who_can_act(), WhoCanAct::Locked);
    }

    #[test]
    fn reaching_high_is_enough_and_low_alone_cannot_change_flags() {
        // Medium 10 is out of reach, but high 2 is reached: the signers can lower medium, so they can act.
        let c = control(&[1, 1], 0, 10, 2);
        assert_eq!(c.who_can_act(), WhoCanAct::Keys { needed: 2, of: 2 });
        assert!(c.who_can_act().can_set_flags());
        // Only low is reached: freeze where AUTH_REVOCABLE is set, never a flag change.
        let c = control(&[1], 1, 5, 5);
        assert_eq!(c.who_can_act(), WhoCanAct::LowOnly { needed: 1, of: 1 });
        assert!(!c.who_can_act().can_set_flags());
        assert!(!c.who_can_act().is_locked());
    }

    #[test]
    fn unknown_fails_closed() {
        assert!(WhoCanAct::Unknown.can_set_flags());
        assert!(!WhoCanAct::Unknown.is_locked());
    }
}
