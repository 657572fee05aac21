//! The one rule that decides whether a report may be written on chain.

use assay_core::{
    attestation_params, EvidenceVersion, Freshness, Mechanics, Params, Rating, Refusal, Report,
    Timestamp,
};
use serde::Serialize;

use crate::registry::Safety;

/// What the attester does with a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write these parameters.
    Attest(Params),
    /// Do not write; the rule says why.
    Refuse(Refusal),
}

impl Decision {
    /// True for [`Decision::Attest`].
    pub fn is_attest(&self) -> bool {
        matches!(self, Decision::Attest(_))
    }
}

/// Decides as of `as_of`: unevaluated, stale, undetermined and inconsistent reports are refused (in that
/// order, the core's rules); anything else is attested with the default preimage (v7, for every subject).
pub fn decide(report: &Report, as_of: Timestamp, freshness: Freshness) -> Decision {
    let version = EvidenceVersion::default_for(&report.asset);
    match attestation_params(report, as_of, freshness, version, false) {
        Ok(p) => Decision::Attest(p),
        Err(r) => Decision::Refuse(r),
    }
}

/// What a report proves about the issuer's powers even when it is refused: the capability it did read
/// (flags are the premise of every scan, so a refused report still has them) as a severity and bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Floor {
    /// The least severity the report proves (its capability severity, or higher if it escalated).
    pub severity: u32,
    /// The capability bits it read (AUTH_REQUIRED, AUTH_REVOCABLE, AUTH_CLAWBACK_ENABLED).
    pub flags: u32,
}

impl Floor {
    /// The floor of `report`, or `None` when it proves nothing (unevaluated).
    pub fn of(report: &Report) -> Option<Floor> {
        let level = |r: Rating| r.level().map(|s| s.level());
        let severity = match (level(report.base_severity), level(report.severity)) {
            (Some(base), Some(now)) => base.max(now),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => return None,
        };
        Some(Floor {
            severity,
            flags: report.mechanics.bits() & Mechanics::CAPABILITY_MASK,
        })
    }

    /// True when the registry's entry claims less than this floor proves: a lower severity, or a
    /// capability bit it lacks. Gates would then admit what the issuer can now do to holders.
    pub fn exceeds(&self, on_chain: &Safety) -> bool {
        self.severity > on_chain.severity || self.flags & !on_chain.flags != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        let text = include_str!("../../../testdata/reports/hand-written-usdz.json");
        Report::from_json(text).expect("fixture")
    }

    fn held(severity: u32, flags: u32) -> Safety {
        Safety {
            severity,
            flags,
            evidence_hash: [0; 32],
            attested_at: 0,
        }
    }

    #[test]
    fn a_floor_is_the_capability_read_and_exceeds_only_a_weaker_entry() {
        let mut r = report();
        r.undetermined = true;
        let floor = Floor::of(&r).expect("flags were read");
        // USDZ: high, revocable + clawback (bits 2 and 4).
        assert_eq!(
            floor,
            Floor {
                severity: 3,
                flags: 6
            }
        );
        assert!(floor.exceeds(&held(0, 0)), "a clear entry is weaker");
        assert!(
            floor.exceeds(&held(3, 2)),
            "a missing clawback bit is weaker"
        );
        assert!(
            floor.exceeds(&held(2, 6 | 16)),
            "a lower severity is weaker"
        );
        assert!(!floor.exceeds(&held(3, 6)));
        assert!(!floor.exceeds(&held(4, 6 | 32)), "a stricter entry stays");
        r.base_severity = Rating::Unevaluated;
        r.severity = Rating::Unevaluated;
        assert_eq!(Floor::of(&r), None, "an unevaluated report proves nothing");
    }
}
