//! The engine: runs checks over a subject and assembles the report.

use std::collections::BTreeMap;

use crate::checks::default_checks;
use crate::finding::{Check, Finding};
use crate::model::{Accountability, Mechanics, Rating, Severity};
use crate::report::{Report, SCHEMA_VERSION};
use crate::subject::Subject;
use crate::time::Timestamp;
use crate::token::Token;

/// A finding broke an invariant the on-chain gate relies on. Never masked: the report is not produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// An escalation finding carried a capability bit (0-2): reputation would read as the ledger granting a
    /// power.
    #[error("escalation finding {check:?} carries capability bits {bits:#x}; an escalation must never set bits 0-2")]
    EscalationSetsCapability {
        /// The check id.
        check: String,
        /// The offending capability bits.
        bits: u32,
    },
    /// A non-escalation finding claimed critical (reserved for escalation) or an escalation-only bit.
    #[error("finding {check:?} is not an escalation but {what}")]
    NonEscalationEscalates {
        /// The check id.
        check: String,
        /// What it did.
        what: &'static str,
    },
    /// Two checks share an id.
    #[error("check id {0:?} is used twice")]
    DuplicateCheck(String),
}

/// Runs a list of checks.
pub struct Engine {
    checks: Vec<Box<dyn Check + Send + Sync>>,
}

impl Default for Engine {
    fn default() -> Engine {
        Engine {
            checks: default_checks(),
        }
    }
}

impl Engine {
    /// An engine over these checks, run in this order.
    pub fn with_checks(checks: Vec<Box<dyn Check + Send + Sync>>) -> Engine {
        Engine { checks }
    }

    /// Runs every check and assembles the report. The state is `valid` or `unknown`; staleness is applied
    /// later with [`Report::apply_freshness`].
    pub fn run(&self, subject: &Subject) -> Result<Report, EngineError> {
        let findings: Vec<Finding> = self.checks.iter().map(|c| c.run(subject)).collect();
        assemble(subject, findings)
    }
}

/// Evaluates a subject with the default checks.
pub fn evaluate(subject: &Subject) -> Result<Report, EngineError> {
    Engine::default().run(subject)
}

/// What a report is about, apart from its findings.
#[derive(Debug, Clone)]
pub struct ReportHeader {
    /// The asset or token contract.
    pub asset: Token,
    /// Network passphrase.
    pub network: Option<String>,
    /// Scanner version bound into the hash.
    pub scanner_version: Option<String>,
    /// When the scan ran.
    pub scanned_at: Timestamp,
}

/// Builds a report from findings in run order, enforcing the escalation invariants.
pub fn assemble(subject: &Subject, findings: Vec<Finding>) -> Result<Report, EngineError> {
    let mut report = assemble_token(
        ReportHeader {
            asset: Token::Classic(subject.asset.clone()),
            network: subject.network.clone(),
            scanner_version: subject.scanner_version.clone(),
            scanned_at: subject.scanned_at,
        },
        findings,
    )?;
    report.who_can_act = Some(crate::control::who_can_act(subject).to_string());
    Ok(report)
}

/// Builds a report about `header.asset` from findings in run order, enforcing the escalation invariants.
pub fn assemble_token(
    header: ReportHeader,
    mut findings: Vec<Finding>,
) -> Result<Report, EngineError> {
    let mut ids: Vec<String> = Vec::new();
    for f in &findings {
        if ids.contains(&f.check) {
            return Err(EngineError::DuplicateCheck(f.check.clone()));
        }
        ids.push(f.check.clone());
        // Capability bits and a token's code powers are both the ledger's record of a power.
        let caps = f.mechanics.bits() & (Mechanics::CAPABILITY_MASK | Mechanics::CONTRACT_MASK);
        if f.escalation && caps != 0 {
            return Err(EngineError::EscalationSetsCapability {
                check: f.check.clone(),
                bits: caps,
            });
        }
        if !f.escalation {
            if f.severity == Rating::Level(Severity::Critical) {
                return Err(EngineError::NonEscalationEscalates {
                    check: f.check.clone(),
                    what: "claims critical",
                });
            }
            if f.mechanics.has(Mechanics::BLOCKLISTED)
                || f.mechanics.has(Mechanics::SEP41_VIOLATION)
            {
                return Err(EngineError::NonEscalationEscalates {
                    check: f.check.clone(),
                    what: "sets an escalation-only bit",
                });
            }
        }
    }
    let severity = findings
        .iter()
        .map(|f| f.severity)
        .max()
        .unwrap_or(Rating::Unevaluated);
    let base_severity = findings
        .iter()
        .filter(|f| !f.escalation)
        .map(|f| f.severity)
        .max()
        // With no capability-bearing finding there is no base reading at all.
        .unwrap_or(Rating::Unevaluated);
    let severity = severity.max(base_severity);
    let escalated =
        matches!((severity, base_severity), (Rating::Level(a), Rating::Level(b)) if a > b);
    let accountability = findings
        .iter()
        .find_map(|f| f.accountability)
        .unwrap_or(Accountability::Unknown);
    let mechanics = findings
        .iter()
        .fold(Mechanics::empty(), |m, f| m.union(f.mechanics));
    let evidence: Vec<_> = findings
        .iter()
        .flat_map(|f| f.evidence.iter().cloned())
        .collect();
    let mut undetermined_checks: Vec<String> = findings
        .iter()
        .filter(|f| f.undetermined)
        .map(|f| f.check.clone())
        .collect();
    undetermined_checks.sort();
    let mut by_source: BTreeMap<String, u32> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.undetermined) {
        for (k, v) in &f.undetermined_by_source {
            *by_source.entry(k.clone()).or_default() += v;
        }
    }
    let undetermined = !undetermined_checks.is_empty();
    let undetermined_rate =
        undetermined.then(|| format!("{}/{}", undetermined_checks.len(), findings.len()));
    let mut checks = ids;
    checks.sort();
    // Stable: equal levels keep run order.
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let start = evidence
        .iter()
        .map(|e| e.retrieved_at)
        .min()
        .unwrap_or(header.scanned_at);
    let end = evidence
        .iter()
        .map(|e| e.retrieved_at)
        .max()
        .unwrap_or(header.scanned_at);
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        asset: header.asset,
        severity,
        base_severity,
        escalated,
        accountability,
        state: crate::model::State::Valid,
        stale: false,
        stale_reason: None,
        undetermined,
        undetermined_checks,
        undetermined_by_source: by_source,
        undetermined_rate,
        network: header.network,
        checks,
        scanner_bound: header.scanner_version,
        mechanics,
        who_can_act: None,
        findings,
        evidence,
        observation_window_start: start,
        observation_window_end: end,
        scanned_at: header.scanned_at,
        powers: None,
    };
    report.state = report.complete_state();
    Ok(report)
}
