//! `mutability`: whether the issuer's flag set can still change. No severity, no evidence (the flag read is
//! already attributed by the capability finding, and a second copy of that claim would move the hash).

use super::Reconciled;
use crate::finding::{Check, Finding};
use crate::model::Mechanics;
use crate::subject::Subject;

/// What flags that can still change mean: a freeze is checked when it runs, clawback when a trustline is made.
const UNLOCKED: &str = "The issuer can set auth_revocable whenever it can sign, and Stellar checks that flag \
when a freeze runs, not when the trustline was made: it can freeze any holder at any time, existing trustlines \
included (the capability finding counts this). Clawback is different: under CAP-0035 a trustline inherits \
auth_clawback_enabled when it is created, so clawback added later reaches only trustlines opened after the change.";

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
            format!(
                "Only one copy of the issuer flags says the flag set is locked; the other does not, so the cautious \
                 reading stands: the flags may still change. {UNLOCKED}"
            )
        } else if !crate::control::who_can_act(s).can_set_flags() {
            "The flag set is not locked (auth_immutable is not set), but no signer of the issuer can reach the \
             threshold a flag change needs, nor the one that changes signers: the flags can never change again."
                .to_string()
        } else {
            format!("The flag set is not locked (auth_immutable is not set). {UNLOCKED}")
        };
        f
    }
}
