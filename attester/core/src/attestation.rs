//! Attestation parameters derived from a report, with refusals for anything that must not go on chain.

use serde::Serialize;

use crate::hash::{evidence_hash, preimage, EvidenceVersion, PreimageInput};
use crate::model::{Mechanics, Rating, State};
use crate::report::{Freshness, Report};
use crate::time::Timestamp;
use crate::token::Token;

/// Why a report cannot be attested. Checked in this order; the first match wins.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Rule 1: severity or base severity is unevaluated.
    #[error("attest: capability axis was never evaluated, so there is no severity to attest: capability was never derived from issuer flags")]
    Unevaluated,
    /// Rule 2: the report is stale (in itself, or under the freshness policy now).
    #[error("attest: report is stale, so it cannot be attested as fresh: {reason}")]
    Stale {
        /// The stale reason.
        reason: String,
    },
    /// Rule 3: a check could not conclude.
    #[error("attest: scan is undetermined, so there is nothing to attest: {} could not complete", .checks.join(", "))]
    Undetermined {
        /// The undetermined checks.
        checks: Vec<String>,
    },
    /// Rule 4: the clawback bit is set below high: the registry would reject it as InconsistentAttestation.
    #[error("attest: attestation violates the confiscation invariant: clawback bit set at severity {severity}")]
    Inconsistent {
        /// The severity level number.
        severity: u32,
    },
    /// Rule 4: another mechanics bit is set below the severity it implies (e.g. `code_mutable` below high):
    /// the registry would reject it as InconsistentAttestation.
    #[error("attest: attestation is below the floor its mechanics imply: {bits} implies at least {floor}, the report says {severity}")]
    BelowFloor {
        /// The report's severity name.
        severity: String,
        /// The implied floor's name.
        floor: String,
        /// The mechanics names.
        bits: String,
    },
    /// Rule 5: the preimage version does not fit the subject (v4 is for token contracts only, v1-v3 for
    /// classic assets only), or does not bind a bit the report carries (bit 14 before v8).
    #[error("attest: evidence version {version} does not apply to {asset}: {expected}")]
    WrongVersion {
        /// The version asked for.
        version: String,
        /// The asset.
        asset: String,
        /// Which versions do.
        expected: &'static str,
    },
    /// Rule 6: the report carries a holder's own trustline (bits 6-7, `holder-trustline`): off-chain only,
    /// never part of a per-asset verdict.
    #[error("attest: the report describes one holder's trustline ({bits}); the registry's per-asset verdict never carries a holder's bits: scan without --holder")]
    HolderSpecific {
        /// The holder bits' names.
        bits: String,
    },
}

impl Refusal {
    /// A short name for the rule: `unevaluated`, `stale`, `undetermined`, `inconsistent`.
    pub fn rule(&self) -> &'static str {
        match self {
            Refusal::Unevaluated => "unevaluated",
            Refusal::Stale { .. } => "stale",
            Refusal::Undetermined { .. } => "undetermined",
            Refusal::Inconsistent { .. } | Refusal::BelowFloor { .. } => "inconsistent",
            Refusal::WrongVersion { .. } => "version",
            Refusal::HolderSpecific { .. } => "holder",
        }
    }
}

/// What an attester writes on chain, plus what a person needs to check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Params {
    /// `CODE-ISSUER`, or the token contract's `C…` address.
    pub asset: String,
    /// Severity level number.
    pub severity: u32,
    /// Severity name.
    pub severity_name: String,
    /// Mechanics bitset (on-chain `flags`).
    pub flags: u32,
    /// Mechanics names.
    pub mechanics: Mechanics,
    /// Checks bound by the hash (v2+ only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// Network bound by the hash (v3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Preimage version used.
    pub evidence_version: u8,
    /// Lowercase hex SHA-256.
    pub evidence_hash: String,
    /// When the scan ran.
    pub scanned_at: crate::time::Timestamp,
    /// The preimage text, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preimage: Option<String>,
}

impl Params {
    /// `SEVERITY<TAB>FLAGS<TAB>HASH<LF>`.
    pub fn raw_line(&self) -> String {
        format!(
            "{}\t{}\t{}\n",
            self.severity, self.flags, self.evidence_hash
        )
    }
}

/// Derives attestation parameters from `report` as of `as_of`, or refuses.
///
/// Refusal order: unevaluated, stale (the report says so, or its age under `freshness` is strictly past the
/// window), undetermined, inconsistent.
pub fn attestation_params(
    report: &Report,
    as_of: Timestamp,
    freshness: Freshness,
    version: EvidenceVersion,
    with_preimage: bool,
) -> Result<Params, Refusal> {
    if report.unevaluated() {
        return Err(Refusal::Unevaluated);
    }
    let mut aged = report.clone();
    aged.apply_freshness(as_of, freshness);
    if aged.stale || aged.state == State::Stale || report.stale || report.state == State::Stale {
        let reason = aged
            .stale_reason
            .clone()
            .or_else(|| report.stale_reason.clone())
            .unwrap_or_else(|| "verdict is older than freshness policy window".to_string());
        return Err(Refusal::Stale { reason });
    }
    if report.undetermined {
        return Err(Refusal::Undetermined {
            checks: report.undetermined_checks.clone(),
        });
    }
    let Rating::Level(severity) = report.severity else {
        return Err(Refusal::Unevaluated);
    };
    if report.mechanics.has(Mechanics::AUTH_CLAWBACK_ENABLED) && severity.level() < 3 {
        return Err(Refusal::Inconsistent {
            severity: severity.level(),
        });
    }
    if severity < report.mechanics.floor() {
        return Err(Refusal::BelowFloor {
            severity: severity.name().into(),
            floor: report.mechanics.floor().name().into(),
            bits: report.mechanics.names().join(", "),
        });
    }
    let contract = matches!(report.asset, Token::Contract(_));
    let admitted = if contract {
        version.admits_contract()
    } else {
        version.admits_classic()
    };
    if !admitted {
        return Err(Refusal::WrongVersion {
            version: version.to_string(),
            asset: report.asset.to_string(),
            expected: if contract {
                "a token contract is hashed with v8, v7, v5 or v4"
            } else {
                "a classic asset is hashed with v8, v7, v6, v3, v2 or v1"
            },
        });
    }
    if report.mechanics.has(Mechanics::ADMIN_TRANSFER_FEE) && !version.binds_transfer_fee() {
        return Err(Refusal::WrongVersion {
            version: version.to_string(),
            asset: report.asset.to_string(),
            expected: "admin_transfer_fee (bit 14) is bound from v8 on: hash it with v8",
        });
    }
    let holder_bits = report.mechanics.bits() & Mechanics::HOLDER_MASK;
    if holder_bits != 0
        || report
            .checks
            .iter()
            .any(|c| c == crate::checks::HOLDER_CHECK)
    {
        return Err(Refusal::HolderSpecific {
            bits: Mechanics::from_bits(holder_bits)
                .unwrap_or_default()
                .names()
                .join(", "),
        });
    }
    let mut input = PreimageInput::from_report(report).map_err(|_| Refusal::Unevaluated)?;
    if version < EvidenceVersion::V2 {
        input.checks.clear();
    }
    if version < EvidenceVersion::V3 {
        input.network = None;
        input.scanner = None;
    }
    if version < EvidenceVersion::V6 {
        input
            .evidence
            .retain(|(source, _, _)| !crate::hash::V6_ONLY_SOURCES.contains(&source.as_str()));
    }
    Ok(Params {
        asset: report.asset.to_string(),
        severity: severity.level(),
        severity_name: severity.name().to_string(),
        flags: report.mechanics.bits(),
        mechanics: report.mechanics,
        checks: {
            let mut c = input.checks.clone();
            c.sort();
            c
        },
        network: input.network.clone(),
        evidence_version: version.number(),
        evidence_hash: evidence_hash(&input, version),
        scanned_at: report.scanned_at,
        preimage: with_preimage.then(|| preimage(&input, version)),
    })
}
