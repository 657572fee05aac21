//! The report: schema_version 1 JSON, strict parsing, lifecycle state and freshness.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::evidence::Evidence;
use crate::finding::Finding;
use crate::model::{Accountability, Mechanics, Rating, State};
use crate::subject::Asset;
use crate::time::{format_duration, Timestamp};
use crate::token::Token;

/// The only schema version this crate writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Default freshness window: 24 h, the example gate's `MAX_ATTESTATION_AGE`.
pub const DEFAULT_FRESHNESS_SECS: i64 = 86_400;

/// A verdict on one asset. Field order is the JSON key order of schema_version 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Always 1.
    pub schema_version: u32,
    /// The asset: `{code, issuer}`, or `{contract}` for a custom token.
    pub asset: Token,
    /// Highest level over all findings (after escalation); `unknown` when unevaluated.
    pub severity: Rating,
    /// Highest level over non-escalation findings: the capability reading alone.
    pub base_severity: Rating,
    /// `severity > base_severity`.
    pub escalated: bool,
    /// From `sep1-domain`.
    pub accountability: Accountability,
    /// valid / unknown / stale.
    pub state: State,
    /// True exactly when `state` is stale.
    pub stale: bool,
    /// Why it is stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_reason: Option<String>,
    /// True when any check could not conclude.
    pub undetermined: bool,
    /// Sorted ids of the checks that could not conclude; `[]`, never null.
    pub undetermined_checks: Vec<String>,
    /// Source → failed reads behind undetermined checks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub undetermined_by_source: BTreeMap<String, u32>,
    /// `undetermined checks / checks run`, when undetermined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undetermined_rate: Option<String>,
    /// Full network passphrase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Sorted ids of the checks run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// Scanner version bound into the evidence hash (v3 `scanner` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scanner_bound: Option<String>,
    /// Union of all findings' bits, as names in bit order.
    pub mechanics: Mechanics,
    /// Who can use a classic issuer's powers, from its signers and thresholds: `1 key`, `2 of 3 keys`,
    /// `locked: no signer can reach the threshold`, … Absent for a token contract and in reports written before
    /// signers were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who_can_act: Option<String>,
    /// Findings, stable-sorted highest severity first.
    pub findings: Vec<Finding>,
    /// All findings' evidence in check-run order.
    pub evidence: Vec<Evidence>,
    /// Earliest `retrieved_at` among the evidence (the scan time when there is none).
    pub observation_window_start: Timestamp,
    /// Latest `retrieved_at` among the evidence (the scan time when there is none).
    pub observation_window_end: Timestamp,
    /// When the scan ran.
    pub scanned_at: Timestamp,
    /// A custom token's powers as power discovery observed them: per power the function, who can use it,
    /// and the effect before vs after. Not hashed (the `contract/behaviour` evidence lines are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub powers: Option<crate::powers::PowerSurvey>,
}

/// Why a report text was rejected.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Not JSON of the schema_version 1 shape.
    #[error("not a schema_version 1 report: {0}")]
    Shape(#[from] serde_json::Error),
    /// Well-formed JSON whose values contradict each other.
    #[error("inconsistent report: {0}")]
    Inconsistent(String),
}

/// The freshness policy: a verdict older than `window_secs` is stale. `window_secs <= 0` disables it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// Window in seconds.
    pub window_secs: i64,
}

impl Default for Freshness {
    fn default() -> Freshness {
        Freshness {
            window_secs: DEFAULT_FRESHNESS_SECS,
        }
    }
}

impl Report {
    /// True when the flags were never read.
    pub fn unevaluated(&self) -> bool {
        self.severity == Rating::Unevaluated || self.base_severity == Rating::Unevaluated
    }

    /// The state this report's own content implies before any freshness check: `unknown` when undetermined
    /// or unevaluated, otherwise `valid`.
    pub fn complete_state(&self) -> State {
        if self.undetermined || self.unevaluated() {
            State::Unknown
        } else {
            State::Valid
        }
    }

    /// Applies the freshness policy as of `as_of`. An unknown report stays unknown; a complete report becomes
    /// stale only when its age is strictly greater than the window. Never turns stale back into valid.
    pub fn apply_freshness(&mut self, as_of: Timestamp, policy: Freshness) {
        if self.complete_state() == State::Unknown {
            self.state = State::Unknown;
            self.stale = false;
            self.stale_reason = None;
            return;
        }
        if self.stale {
            return;
        }
        let age = as_of.seconds_since(self.scanned_at);
        if policy.window_secs > 0 && age > policy.window_secs {
            self.state = State::Stale;
            self.stale = true;
            self.stale_reason = Some(format!(
                "verdict age {} exceeds policy window {}",
                format_duration(age),
                format_duration(policy.window_secs)
            ));
        }
    }

    /// Pretty JSON (two-space indent) with a trailing newline.
    pub fn to_json_pretty(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a report always serialises");
        s.push('\n');
        s
    }

    /// Parses a report strictly: unknown keys, wrong types, non-canonical times, unknown names and
    /// contradictory values are all rejected.
    pub fn from_json(text: &str) -> Result<Report, ReportError> {
        let report: Report = serde_json::from_str(text)?;
        report.validate()?;
        Ok(report)
    }

    /// Checks the values agree with each other.
    pub fn validate(&self) -> Result<(), ReportError> {
        let bad = |m: String| Err(ReportError::Inconsistent(m));
        if self.schema_version != SCHEMA_VERSION {
            return bad(format!(
                "schema_version {} is not supported (expected 1)",
                self.schema_version
            ));
        }
        match &self.asset {
            Token::Classic(a) => {
                if let Err(e) = Asset::new(&a.code, &a.issuer) {
                    return bad(e.to_string());
                }
            }
            Token::Contract(_) => {}
            Token::Native => {
                return bad(
                    "a report is about a classic asset or a token contract, not native".into(),
                )
            }
        }
        if self.severity < self.base_severity {
            return bad(format!(
                "severity {} is below base_severity {}",
                self.severity, self.base_severity
            ));
        }
        let escalated = matches!((self.severity, self.base_severity), (Rating::Level(a), Rating::Level(b)) if a > b);
        if self.escalated != escalated {
            return bad(format!(
                "escalated is {} but severity {} and base_severity {} say {}",
                self.escalated, self.severity, self.base_severity, escalated
            ));
        }
        if self.undetermined == self.undetermined_checks.is_empty() {
            return bad("undetermined disagrees with undetermined_checks".to_string());
        }
        if self.stale != (self.state == State::Stale) {
            return bad(format!(
                "stale is {} but state is {:?}",
                self.stale, self.state
            ));
        }
        if self.complete_state() == State::Unknown && self.state != State::Unknown {
            return bad(
                "an undetermined or unevaluated report must have state \"unknown\"".to_string(),
            );
        }
        if self.complete_state() == State::Valid && self.state == State::Unknown {
            return bad("a complete report cannot have state \"unknown\"".to_string());
        }
        if self.stale_reason.is_some() && !self.stale {
            return bad("stale_reason on a report that is not stale".to_string());
        }
        if self.observation_window_start > self.observation_window_end {
            return bad("observation_window_start is after observation_window_end".to_string());
        }
        Ok(())
    }
}
