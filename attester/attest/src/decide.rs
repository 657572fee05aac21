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
/// order, the core's rules); anything else is attested with the default preimage for its subject (v3 for a
/// classic asset, v4 for a token contract).
pub fn decide(report: &Report, as_of: Timestamp, freshness: Freshness) -> Decision {
    let version = EvidenceVersion::default_for(&report.asset);
    match attestation_params(report, as_of, freshness, version, false) {
        Ok(p) => Decision::Attest(p),
        Err(r) => Decision::Refuse(r),
    }
}
