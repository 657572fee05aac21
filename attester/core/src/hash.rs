//! `evidence_hash`: SHA-256 over a line-oriented preimage (versions v1, v2, v3 and v6 for classic assets; v4
//! and v5 for custom token contracts).
//!
//! Each line is `key<TAB>value<LF>` (the final line too). Values and each evidence field are escaped in one
//! pass (`\` → `\\`, TAB → `\t`, LF → `\n`, CR → `\r`); evidence lines are built escaped, then sorted
//! bytewise with duplicates kept. Timestamps, `requested_url`, `attempted`, `refused`, `undetermined`, titles
//! and reasoning are outside the preimage.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::model::{Accountability, Severity};
use crate::report::Report;

/// A preimage format version. Cumulative: v2 adds the `checks` line, v3 the `scanner` and `network` lines, v6
/// the evidence lines of the issuer's signers (who can use its powers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EvidenceVersion {
    /// `assay-evidence-v1`.
    V1,
    /// `assay-evidence-v2`: adds `checks` when the check set is non-empty.
    V2,
    /// `assay-evidence-v3`: adds `scanner` when scanner-bound and `network` when set.
    V3,
    /// `assay-evidence-v4`: the v3 lines with `token<TAB>C…` in place of `asset`. The only version of a
    /// custom token contract's report; never used for a classic asset, so classic hashes do not move.
    V4,
    /// `assay-evidence-v5`: the v4 lines, for a token contract judged by behaviour: its evidence carries the
    /// powers power discovery observed (`contract/behaviour` lines: the function, whose authorization it
    /// needed, the observed effect). Default for new attestations of token contracts.
    V5,
    /// `assay-evidence-v6`: the v3 lines, plus the evidence lines only v6 binds ([`V6_ONLY_SOURCES`]: the
    /// issuer's signers and thresholds, and who can use its powers). Judged under the latent-freeze rule
    /// (an issuer whose flags are not locked and who can still sign holds the freeze). Default for new
    /// attestations of classic assets.
    V6,
}

/// Evidence sources that only v6 and later bind: a report hashed in an earlier version leaves their lines
/// out, so an attestation written before they existed is still reproduced by a fresh scan whose verdict
/// did not change.
pub const V6_ONLY_SOURCES: [&str; 1] = [crate::evidence::SOURCE_ISSUER_SIGNERS];

impl EvidenceVersion {
    /// The version new attestations use.
    pub const DEFAULT: EvidenceVersion = EvidenceVersion::V6;

    /// The version's number (1 to 6).
    pub fn number(self) -> u8 {
        match self {
            EvidenceVersion::V1 => 1,
            EvidenceVersion::V2 => 2,
            EvidenceVersion::V3 => 3,
            EvidenceVersion::V4 => 4,
            EvidenceVersion::V5 => 5,
            EvidenceVersion::V6 => 6,
        }
    }

    /// Whether this version hashes a custom token contract (v4, v5) rather than a classic asset (v1-v3, v6).
    pub fn is_contract(self) -> bool {
        matches!(self, EvidenceVersion::V4 | EvidenceVersion::V5)
    }

    /// The version new attestations of `asset` use: v5 for a token contract, v6 otherwise.
    pub fn default_for(asset: &crate::token::Token) -> EvidenceVersion {
        match asset {
            crate::token::Token::Contract(_) => EvidenceVersion::V5,
            _ => EvidenceVersion::DEFAULT,
        }
    }

    /// The versions an attestation of `asset` may have been written with, newest first.
    pub fn candidates_for(asset: &crate::token::Token) -> &'static [EvidenceVersion] {
        match asset {
            crate::token::Token::Contract(_) => &[EvidenceVersion::V5, EvidenceVersion::V4],
            _ => &[
                EvidenceVersion::V6,
                EvidenceVersion::V3,
                EvidenceVersion::V2,
                EvidenceVersion::V1,
            ],
        }
    }

    /// The lowest version that carries everything `input` binds (v3 if scanner-bound or network set, else v2
    /// if there are checks, else v1): the rule the earlier implementation used to pick a version.
    pub fn minimal_for(input: &PreimageInput) -> EvidenceVersion {
        if input.scanner.is_some() || input.network.is_some() {
            EvidenceVersion::V3
        } else if !input.checks.is_empty() {
            EvidenceVersion::V2
        } else {
            EvidenceVersion::V1
        }
    }
}

impl fmt::Display for EvidenceVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.number())
    }
}

/// An evidence version text that names none of the versions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown evidence version {0:?}: expected 1, 2, 3, 6 (classic assets), 4 or 5 (token contracts)"
)]
pub struct UnknownEvidenceVersion(pub String);

impl FromStr for EvidenceVersion {
    type Err = UnknownEvidenceVersion;

    fn from_str(s: &str) -> Result<EvidenceVersion, UnknownEvidenceVersion> {
        match s.trim_start_matches('v') {
            "1" => Ok(EvidenceVersion::V1),
            "2" => Ok(EvidenceVersion::V2),
            "3" => Ok(EvidenceVersion::V3),
            "4" => Ok(EvidenceVersion::V4),
            "5" => Ok(EvidenceVersion::V5),
            "6" => Ok(EvidenceVersion::V6),
            _ => Err(UnknownEvidenceVersion(s.to_string())),
        }
    }
}

/// Everything the preimage binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreimageInput {
    /// `CODE-ISSUER`, or the token contract's `C…` address (v4).
    pub asset: String,
    /// Severity level.
    pub severity: Severity,
    /// Base severity level.
    pub base_severity: Severity,
    /// Whether escalated.
    pub escalated: bool,
    /// Mechanics bitset.
    pub mechanics: u32,
    /// Accountability.
    pub accountability: Accountability,
    /// Check ids (sorted on write).
    pub checks: Vec<String>,
    /// Network passphrase (v3).
    pub network: Option<String>,
    /// Scanner version (v3).
    pub scanner: Option<String>,
    /// `(source, url, claim)` per evidence item.
    pub evidence: Vec<(String, String, String)>,
}

/// The report has no severity to hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the report is unevaluated: capability was never derived from issuer flags, so there is nothing to hash")]
pub struct UnevaluatedError;

impl PreimageInput {
    /// The hashed fields of a report. Fails when severity or base severity is unevaluated.
    pub fn from_report(r: &Report) -> Result<PreimageInput, UnevaluatedError> {
        Ok(PreimageInput {
            asset: r.asset.to_string(),
            severity: r.severity.level().ok_or(UnevaluatedError)?,
            base_severity: r.base_severity.level().ok_or(UnevaluatedError)?,
            escalated: r.escalated,
            mechanics: r.mechanics.bits(),
            accountability: r.accountability,
            checks: r.checks.clone(),
            network: r.network.clone(),
            scanner: r.scanner_bound.clone(),
            evidence: r
                .evidence
                .iter()
                .map(|e| (e.source.clone(), e.url.clone(), e.claim.clone()))
                .collect(),
        })
    }
}

/// Escapes `\`, TAB, LF and CR in one pass.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// The preimage text for `version`.
pub fn preimage(input: &PreimageInput, version: EvidenceVersion) -> String {
    let mut out = format!("assay-evidence-v{}\n", version.number());
    let mut line = |key: &str, value: &str| {
        out.push_str(key);
        out.push('\t');
        out.push_str(&escape(value));
        out.push('\n');
    };
    if version >= EvidenceVersion::V3 {
        if let Some(scanner) = &input.scanner {
            line("scanner", scanner);
        }
    }
    line(
        if version.is_contract() {
            "token"
        } else {
            "asset"
        },
        &input.asset,
    );
    line("severity", &input.severity.level().to_string());
    line("base_severity", &input.base_severity.level().to_string());
    line("escalated", if input.escalated { "true" } else { "false" });
    line("mechanics", &input.mechanics.to_string());
    line("accountability", input.accountability.name());
    if version >= EvidenceVersion::V2 && !input.checks.is_empty() {
        let mut checks = input.checks.clone();
        checks.sort();
        line("checks", &checks.join(","));
    }
    if version >= EvidenceVersion::V3 {
        if let Some(network) = &input.network {
            line("network", network);
        }
    }
    let mut evidence: Vec<String> = input
        .evidence
        .iter()
        .map(|(s, u, c)| format!("evidence\t{}\t{}\t{}\n", escape(s), escape(u), escape(c)))
        .collect();
    evidence.sort();
    for e in evidence {
        out.push_str(&e);
    }
    out
}

/// SHA-256 of the preimage, lowercase hex.
pub fn evidence_hash(input: &PreimageInput, version: EvidenceVersion) -> String {
    hex::encode(Sha256::digest(preimage(input, version).as_bytes()))
}
