//! Capability transitions between two observations of the same asset. Pure; stores nothing.

use serde::{Deserialize, Serialize};

use crate::model::{Mechanics, Rating};
use crate::report::Report;
use crate::time::Timestamp;

/// One observation of an asset: the parts of a report a transition compares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// `CODE-ISSUER`.
    pub asset: String,
    /// The report's `scanned_at`.
    pub at: Timestamp,
    /// Mechanics bitset.
    pub mechanics: Mechanics,
    /// Base severity.
    pub base_severity: Rating,
    /// Severity.
    pub severity: Rating,
    /// Whether undetermined.
    pub undetermined: bool,
    /// Which checks were undetermined.
    pub undetermined_checks: Vec<String>,
}

impl Observation {
    /// The observation a report records.
    pub fn of(r: &Report) -> Observation {
        Observation {
            asset: r.asset.to_string(),
            at: r.scanned_at,
            mechanics: r.mechanics,
            base_severity: r.base_severity,
            severity: r.severity,
            undetermined: r.undetermined,
            undetermined_checks: r.undetermined_checks.clone(),
        }
    }
}

/// Whether a transition can be stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransitionState {
    /// Two complete observations at distinct instants.
    Valid,
    /// Either side undetermined or unevaluated, or both at the same instant.
    Unknown,
    /// Fewer than two observations.
    Missing,
}

/// Which axis moved severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attribution {
    /// Base severity (flags) moved; escalation did not change.
    Capability,
    /// Escalation changed with the same base.
    Reputation,
    /// Both moved.
    Both,
    /// Severity did not move.
    None,
}

/// The difference between the two latest observations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    /// valid / unknown / missing.
    pub state: TransitionState,
    /// Why, when not valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Capability bits gained.
    pub added: Mechanics,
    /// Capability bits lost.
    pub removed: Mechanics,
    /// Which axis moved severity (valid transitions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    /// Severity of the earlier observation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity_before: Option<Rating>,
    /// Severity of the later observation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity_after: Option<Rating>,
}

impl Transition {
    fn without(state: TransitionState, reason: String) -> Transition {
        Transition {
            state,
            reason: Some(reason),
            added: Mechanics::empty(),
            removed: Mechanics::empty(),
            attribution: None,
            severity_before: None,
            severity_after: None,
        }
    }
}

/// The transition between the two latest observations (by `at`; ties keep input order) of `observations`.
pub fn transition(observations: &[Observation]) -> Transition {
    if observations.len() < 2 {
        return Transition::without(
            TransitionState::Missing,
            format!(
                "{} observation(s); a transition needs two",
                observations.len()
            ),
        );
    }
    let mut sorted: Vec<&Observation> = observations.iter().collect();
    sorted.sort_by_key(|o| o.at);
    let (before, after) = (sorted[sorted.len() - 2], sorted[sorted.len() - 1]);
    let mut t = Transition::without(TransitionState::Valid, String::new());
    t.reason = None;
    t.severity_before = Some(before.severity);
    t.severity_after = Some(after.severity);
    let unevaluated = |o: &Observation| {
        o.severity == Rating::Unevaluated || o.base_severity == Rating::Unevaluated
    };
    if before.undetermined || after.undetermined || unevaluated(before) || unevaluated(after) {
        t.state = TransitionState::Unknown;
        t.reason = Some("an observation is undetermined or unevaluated, so nothing can be said about the change".into());
        return t;
    }
    if before.at == after.at {
        t.state = TransitionState::Unknown;
        t.reason = Some("both observations are at the same instant".into());
        return t;
    }
    let (b, a) = (
        before.mechanics.capabilities().bits(),
        after.mechanics.capabilities().bits(),
    );
    t.added = Mechanics::from_bits(a & !b).unwrap_or_default();
    t.removed = Mechanics::from_bits(b & !a).unwrap_or_default();
    let base_moved = before.base_severity != after.base_severity;
    let escalation = |o: &Observation| o.severity != o.base_severity;
    let reputation_moved = escalation(before) != escalation(after);
    t.attribution = Some(match (base_moved, reputation_moved) {
        _ if before.severity == after.severity && !base_moved => Attribution::None,
        (true, true) => Attribution::Both,
        (true, false) => Attribution::Capability,
        (false, true) => Attribution::Reputation,
        (false, false) => Attribution::None,
    });
    t
}
