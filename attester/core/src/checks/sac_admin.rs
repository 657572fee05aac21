//! `sac-admin`: the current `admin()` of a Stellar Asset Contract, when the asset is named by its `C…`
//! address. A fact, not a level: the issuer's flags still decide severity (a SAC's admin can mint and, with
//! the issuer's flags, freeze or claw back — the powers the flags already count).

use crate::evidence::Evidence;
use crate::finding::{Check, Finding};
use crate::subject::Subject;
use crate::time::Timestamp;

/// Evidence source of the SAC's `admin()` answer (the same source as a custom token's).
pub const SOURCE_SAC_ADMIN: &str = crate::contract::SOURCE_CONTRACT_ADMIN;

/// The check over an `admin()` answer read from the SAC at `contract`.
#[derive(Debug, Clone)]
pub struct SacAdmin {
    /// The SAC's `C…` address.
    pub contract: String,
    /// What `admin()` returned (`G…` or `C…`), or `None` when it did not answer.
    pub admin: Option<String>,
    /// When it was read.
    pub at: Timestamp,
}

impl Check for SacAdmin {
    fn id(&self) -> &'static str {
        "sac-admin"
    }

    fn title(&self) -> &'static str {
        "Stellar Asset Contract admin"
    }

    fn run(&self, s: &Subject) -> Finding {
        let mut f = Finding::new(self);
        let issuer = &s.asset.issuer;
        let claim = match &self.admin {
            Some(a) if a == issuer => {
                f.reasoning = format!("The contract's admin() is the issuer {issuer}.");
                format!("admin() is the issuer {issuer}")
            }
            Some(a) => {
                f.reasoning = format!(
                    "The contract's admin() is {a}, not the issuer {issuer}: that address, not the issuer, can \
                     mint and exercise the powers the issuer's flags grant through the contract."
                );
                format!("admin() is {a}, not the issuer {issuer}")
            }
            None => {
                f.reasoning =
                    "The contract's admin() did not answer; the issuer's flags still decide severity.".into();
                "admin() did not answer".to_string()
            }
        };
        f.evidence.push(Evidence {
            // An admin() that did not answer is an attempt, never rendered as an answer.
            attempted: self.admin.is_none(),
            ..Evidence::answer(SOURCE_SAC_ADMIN, &self.contract, claim, self.at)
        });
        f
    }
}
