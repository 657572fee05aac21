//! The four checks, in run order: capability, mutability, sep1-domain, reputation; and `sep41`, added when a
//! SEP-41 conformance run accompanies a scan.

mod capability;
pub mod holder;
mod mutability;
mod reputation;
pub mod sac_admin;
mod sep1;
pub mod sep41;

pub use capability::{latent_freeze, severity_of, Capability};
pub use holder::{HolderTrustline, HOLDER_CHECK};
pub use mutability::Mutability;
pub use reputation::{Reputation, ADVERSE_TAGS, KNOWN_TAGS};
pub use sep1::{verify_domain, DomainVerdict, Sep1Domain};

use crate::finding::Check;
use crate::subject::{DirectoryOutcome, FlagsOutcome, HomeDomain, IssuerFlags, Observed, Subject};

/// The default check set in run order.
pub fn default_checks() -> Vec<Box<dyn Check + Send + Sync>> {
    vec![
        Box::new(Capability),
        Box::new(Mutability),
        Box::new(Sep1Domain),
        Box::new(Reputation),
    ]
}

/// The two flag copies, reconciled: a power counts if either copy holds it; the lock only if both say so.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reconciled<'a> {
    pub assets: Option<&'a Observed<IssuerFlags>>,
    pub account: Option<&'a Observed<IssuerFlags>>,
}

impl<'a> Reconciled<'a> {
    pub fn of(s: &'a Subject) -> Reconciled<'a> {
        let read = |o: &'a FlagsOutcome| match o {
            FlagsOutcome::Read(obs) => Some(obs),
            _ => None,
        };
        Reconciled {
            assets: read(&s.asset_flags),
            account: read(&s.account_flags),
        }
    }

    /// Powers held by either read copy (`None` when the `/assets` copy was not read: unevaluated).
    pub fn powers(&self) -> Option<IssuerFlags> {
        let a = self.assets?.value;
        let b = self.account.map(|o| o.value).unwrap_or(a);
        Some(IssuerFlags {
            auth_required: a.auth_required || b.auth_required,
            auth_revocable: a.auth_revocable || b.auth_revocable,
            auth_clawback_enabled: a.auth_clawback_enabled || b.auth_clawback_enabled,
            auth_immutable: self.locked(),
        })
    }

    /// Locked only when both copies were read and both say so.
    pub fn locked(&self) -> bool {
        matches!((self.assets, self.account), (Some(a), Some(b)) if a.value.auth_immutable && b.value.auth_immutable)
    }

    /// Both read and different.
    pub fn disagree(&self) -> bool {
        matches!((self.assets, self.account), (Some(a), Some(b)) if a.value != b.value)
    }
}

/// The domain the blocklist is asked about: the issuer's `home_domain`, or, when it advertises none, the
/// domain StellarExpert's directory lists the issuer under (a curated association of that address with that
/// domain). `None` when there is neither: the lookup cannot be keyed.
pub fn blocklist_key(home_domain: &HomeDomain, directory: &DirectoryOutcome) -> Option<String> {
    match (home_domain, directory) {
        (HomeDomain::Present(d), _) => Some(d.clone()),
        (HomeDomain::Absent, DirectoryOutcome::Listed(o)) => {
            o.value.domain.clone().filter(|d| !d.trim().is_empty())
        }
        _ => None,
    }
}

pub(crate) fn normalize_domain(d: &str) -> String {
    d.trim().trim_end_matches('.').to_ascii_lowercase()
}
