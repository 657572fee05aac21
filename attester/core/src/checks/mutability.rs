//! `mutability`: whether the issuer's flag set can still change. No severity, no evidence (the flag read is
//! already attributed by the capability finding, and a second copy of that claim would move the hash).

use super::Reconciled;
use crate::finding::{Check, Finding};
use crate::model::Mechanics;
use crate::subject::Subject;

/// The mutability check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mutability;

impl Check for Mutability {
    fn id(&self) -> &'static str {
        "mutability"
    }

    fn title(&self) -> &'static str {
        "Issuer flag mutability"
    }

    fn run(&self, s: &Subject) -> Finding {
        let mut f = Finding::new(self);
        let r = Reconciled::of(s);
        let Some(powers) = r.powers() else {
            f.undetermined = true;
            f.reasoning = "The issuer flags were never read, so whether the flag set can still change is not \
                known."
                .to_string();
            return f;
        };
        let dangerous = powers.auth_revocable || powers.auth_clawback_enabled;
        f.reasoning = if r.locked() {
            f.mechanics.set(Mechanics::AUTH_IMMUTABLE);
            if dangerous {
                "The flag set is locked (auth_immutable on both flag copies) with freeze or clawback held: the \
                 power is permanent. Locking does not make it safer; it removes any future in which the issuer \
                 gives it up."
                    .to_string()
            } else {
                "The flag set is locked (auth_immutable on both flag copies) and holds no freeze or clawback: \
                 neither can ever be added, so this is also the answer for a trustline opened later."
                    .to_string()
            }
        } else if r.assets.is_some_and(|o| o.value.auth_immutable)
            || r.account.is_some_and(|o| o.value.auth_immutable)
        {
            "Only one copy of the issuer flags says the flag set is locked; the other does not, so the cautious \
             reading stands: the issuer may still add freeze or clawback, which would apply to trustlines opened \
             after the change."
                .to_string()
        } else {
            "The flag set is not locked (auth_immutable is not set): the issuer may add freeze or clawback later. \
             Under CAP-0035 a flag added later does not reach existing trustlines, but it applies to any \
             trustline opened after the change, so today's answer is not a durable one."
                .to_string()
        };
        f
    }
}
