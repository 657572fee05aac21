//! A check's conclusion, and the interface every check implements.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::evidence::Evidence;
use crate::model::{Accountability, Mechanics, Rating, Severity};
use crate::subject::Subject;

/// What one check concluded about a subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The check's id (`capability`, `mutability`, `sep1-domain`, `reputation`).
    pub check: String,
    /// The check's title.
    pub title: String,
    /// The level this finding contributes (`clear` for checks that never set severity).
    pub severity: Rating,
    /// True for checks that can only raise severity above the capability base (reputation). Such a finding
    /// may never carry a capability bit.
    pub escalation: bool,
    /// True when the check could not conclude.
    pub undetermined: bool,
    /// Which sources kept the check from concluding, with how many failed reads each.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub undetermined_by_source: BTreeMap<String, u32>,
    /// `unanswered/asked` over the sources this check depends on, when undetermined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undetermined_rate: Option<String>,
    /// Why, in plain language.
    pub reasoning: String,
    /// Bits this finding contributes.
    pub mechanics: Mechanics,
    /// Set by `sep1-domain` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accountability: Option<Accountability>,
    /// Attributed claims this finding rests on.
    pub evidence: Vec<Evidence>,
}

impl Finding {
    /// A determined finding at `clear` with no bits and no evidence.
    pub fn new(check: &dyn Check) -> Finding {
        Finding::named(check.id(), check.title())
    }

    /// A determined finding at `clear` with no bits and no evidence, for the check `id` titled `title`.
    pub fn named(id: &str, title: &str) -> Finding {
        Finding {
            check: id.to_string(),
            title: title.to_string(),
            severity: Rating::Level(Severity::Clear),
            escalation: false,
            undetermined: false,
            undetermined_by_source: BTreeMap::new(),
            undetermined_rate: None,
            reasoning: String::new(),
            mechanics: Mechanics::empty(),
            accountability: None,
            evidence: Vec::new(),
        }
    }
}

/// A pure function from a pre-fetched subject to a finding. Checks perform no I/O.
pub trait Check {
    /// Stable id; appears in reports, `undetermined_checks` and the preimage `checks` line.
    fn id(&self) -> &'static str;
    /// Human title.
    fn title(&self) -> &'static str;
    /// Runs the check.
    fn run(&self, subject: &Subject) -> Finding;
}
