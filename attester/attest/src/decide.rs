//! The one rule that decides whether a report may be written on chain.

use assay_core::{
    attestation_params, EvidenceVersion, Freshness, Params, Refusal, Report, Timestamp,
};

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
/// order, the core's rules); anything else is attested with the default (v3) preimage.
pub fn decide(report: &Report, as_of: Timestamp, freshness: Freshness) -> Decision {
    match attestation_params(report, as_of, freshness, EvidenceVersion::DEFAULT, false) {
        Ok(p) => Decision::Attest(p),
        Err(r) => Decision::Refuse(r),
    }
}
