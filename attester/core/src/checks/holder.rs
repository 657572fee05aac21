//! `holder-trustline`: one holder's own trustline to the asset — what the issuer can do to *that* balance,
//! beside what it can do to any holder. Bits 6 (`trustline_clawback_enabled`) and 7
//! (`trustline_deauthorized`). Off-chain only: a report carrying it is never attested (rule `holder`).

use crate::evidence::Evidence;
use crate::finding::{Check, Finding};
use crate::model::Mechanics;
use crate::subject::{HeldTrustline, Subject};
use crate::time::Timestamp;

/// The check's id; a report that ran it is holder-specific.
pub const HOLDER_CHECK: &str = "holder-trustline";

/// Evidence source of a holder's trustline (the holder's Horizon `/accounts` record).
pub const SOURCE_HOLDER: &str = "horizon/holder";

/// The check over one holder's account record.
#[derive(Debug, Clone)]
pub struct HolderTrustline {
    /// The holder's `G…` address.
    pub holder: String,
    /// The account record's URL.
    pub url: String,
    /// When it was read.
    pub retrieved_at: Timestamp,
    /// Every trustline the holder's record lists.
    pub trustlines: Vec<HeldTrustline>,
}

/// The trustline's own state in words: `authorized`, `authorized to maintain liabilities only (frozen for
/// payments)` or `deauthorized (frozen)`.
pub fn trustline_state(t: &HeldTrustline) -> &'static str {
    if t.authorized {
        "authorized"
    } else if t.authorized_to_maintain_liabilities {
        "authorized to maintain liabilities only (frozen for payments)"
    } else {
        "deauthorized (frozen)"
    }
}

impl Check for HolderTrustline {
    fn id(&self) -> &'static str {
        HOLDER_CHECK
    }

    fn title(&self) -> &'static str {
        "Holder's trustline"
    }

    fn run(&self, s: &Subject) -> Finding {
        let mut f = Finding::new(self);
        let holder = &self.holder;
        let Some(t) = self.trustlines.iter().find(|t| t.asset == s.asset) else {
            f.reasoning = format!(
                "{holder} holds no trustline to {}: nothing of theirs is exposed to this issuer yet.",
                s.asset
            );
            f.evidence.push(Evidence::answer(
                SOURCE_HOLDER,
                &self.url,
                format!("no trustline to {}", s.asset),
                self.retrieved_at,
            ));
            return f;
        };
        if t.clawback_enabled {
            f.mechanics.set(Mechanics::TRUSTLINE_CLAWBACK_ENABLED);
        }
        if !t.authorized {
            f.mechanics.set(Mechanics::TRUSTLINE_DEAUTHORIZED);
        }
        f.evidence.push(Evidence::answer(
            SOURCE_HOLDER,
            &self.url,
            format!(
                "trustline to {}: balance {}, authorized={} authorized_to_maintain_liabilities={} clawback_enabled={}",
                s.asset, t.balance, t.authorized, t.authorized_to_maintain_liabilities, t.clawback_enabled
            ),
            self.retrieved_at,
        ));
        let clawback = if t.clawback_enabled {
            "clawback is enabled on it: the issuer can take this balance without the holder's signature"
        } else {
            "clawback is not enabled on it: the issuer can never claw this balance back (a trustline inherits \
             clawback only when it is created)"
        };
        f.reasoning = format!(
            "{holder}'s trustline to {} holds {}; it is {}; {clawback}. This is one holder's position, never part \
             of the asset's verdict on chain.",
            s.asset,
            t.balance,
            trustline_state(t)
        );
        f
    }
}
