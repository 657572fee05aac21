//! How a verdict is judged under a caller's policy: the one copy of the rules that the registry's
//! reads and the verdict store's reads both apply, so the two never judge a verdict apart. They
//! take a verdict's three judged fields, since the store judges without decoding a [`Safety`].
#[cfg(doc)]
use crate::Safety;
use crate::{MECH_AUTH_CLAWBACK_ENABLED, SEVERITY_CRITICAL, SEVERITY_HIGH};

/// The fields of a [`Safety`] a policy judges.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Judged {
    pub severity: u32,
    pub flags: u32,
    pub attested_at: u64,
}

/// `assess`'s answer for a verdict that answers, without the verdict itself.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Judgment {
    Safe,
    Stale(u64),
    SeverityTooHigh(u32),
    ForbiddenMechanics(u32),
}

/// `is_safe`'s rule at ledger time `now`: below critical, at or below the ceiling, no clawback
/// under a ceiling below high, fresh.
pub fn admits(verdict: Judged, max_severity: u32, max_age_secs: u64, now: u64) -> bool {
    // Critical is never safe, whatever ceiling the caller passes (a ceiling of 4 or more would
    // otherwise admit it).
    if verdict.severity >= SEVERITY_CRITICAL || verdict.severity > max_severity {
        return false;
    }
    if verdict.flags & MECH_AUTH_CLAWBACK_ENABLED != 0 && max_severity < SEVERITY_HIGH {
        return false;
    }
    is_fresh(now, verdict.attested_at, max_age_secs)
}

/// `is_safe_masked`'s rule at ledger time `now`. The mask sees powers, not reputation: a critical
/// entry (a scam, a blocklisted domain) may carry no capability bit, so severity is checked
/// whatever the mask.
pub fn admits_masked(verdict: Judged, forbidden_mask: u32, max_age_secs: u64, now: u64) -> bool {
    if verdict.severity >= SEVERITY_CRITICAL || verdict.flags & forbidden_mask != 0 {
        return false;
    }
    is_fresh(now, verdict.attested_at, max_age_secs)
}

/// `assess`'s rules for the verdict that answers, in their order: stale, severity, mechanics.
pub fn judge(
    verdict: Judged,
    (max_severity, forbidden_mask, max_age_secs): (u32, u32, u64),
    now: u64,
) -> Judgment {
    if !is_fresh(now, verdict.attested_at, max_age_secs) {
        return Judgment::Stale(now.saturating_sub(verdict.attested_at));
    }
    // Clawback implies at least high at write time (`validate`), so a ceiling below high
    // refuses it here as `is_safe` does.
    if verdict.severity >= SEVERITY_CRITICAL || verdict.severity > max_severity {
        return Judgment::SeverityTooHigh(verdict.severity);
    }
    let forbidden = verdict.flags & forbidden_mask;
    if forbidden != 0 {
        return Judgment::ForbiddenMechanics(forbidden);
    }
    Judgment::Safe
}

/// Within the caller's window at ledger time `now` (read once per call: every clock read is a
/// host call). A window of 0 admits nothing: it used to turn the check off, which let a caller
/// that forgot to set it accept a verdict of any age.
pub fn is_fresh(now: u64, attested_at: u64, max_age_secs: u64) -> bool {
    max_age_secs != 0 && now.saturating_sub(attested_at) <= max_age_secs
}

/// Whether a verdict written at `attested_at` is vetoed by the asset's latest revocation at
/// `revoked_at`: written before it, or in the same ledger (a ledger's writes share one time, so
/// the order within it is not known and the verdict is taken as older: fail closed). A vetoed
/// verdict keeps its power to refuse (it still leads when it is the most severe) and loses the
/// power to admit: when it leads, the asset is refused as revoked.
pub fn vetoed(attested_at: u64, revoked_at: Option<u64>) -> bool {
    revoked_at.is_some_and(|revoked_at| attested_at <= revoked_at)
}
