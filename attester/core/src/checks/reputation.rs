//! `reputation`: relays StellarExpert's curated determinations (directory tags, domain blocklist) and any
//! configured SEP-42 lists. Escalation only, upward only; absence from a list is not an observation.

use std::collections::BTreeMap;

use super::sep1::verify_domain;
use crate::evidence::{claims, Evidence, SOURCE_ASSET_LIST, SOURCE_BLOCKLIST, SOURCE_DIRECTORY};
use crate::finding::{Check, Finding};
use crate::model::{Accountability, Mechanics, Rating, Severity};
use crate::subject::{AssetListResult, BlocklistOutcome, DirectoryOutcome, Subject};

/// Directory tags that escalate to critical.
pub const ADVERSE_TAGS: [&str; 2] = ["malicious", "unsafe"];

/// StellarExpert's documented tag vocabulary (plus `obsolete-inflation-pool`, seen live). A tag outside it is
/// recorded as evidence and never scored.
pub const KNOWN_TAGS: [&str; 12] = [
    "malicious",
    "unsafe",
    "exchange",
    "anchor",
    "issuer",
    "wallet",
    "custodian",
    "personal",
    "sdf",
    "memo-required",
    "airdrop",
    "obsolete-inflation-pool",
];

/// The reputation check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reputation;

impl Check for Reputation {
    fn id(&self) -> &'static str {
        "reputation"
    }

    fn title(&self) -> &'static str {
        "Curated reputation signals"
    }

    fn run(&self, s: &Subject) -> Finding {
        let mut f = Finding::new(self);
        f.escalation = true;
        let mut signals = Signals::default();
        signals.directory(&mut f, s);
        signals.blocklist(&mut f, s);
        signals.asset_lists(&mut f, s);
        signals.conclude(f)
    }
}

/// What the curated sources said, gathered source by source before the verdict is drawn.
#[derive(Default)]
struct Signals {
    /// Adverse observations, each naming its source; any one escalates to critical.
    hits: Vec<String>,
    escalated: bool,
    /// Sources that were not consulted, counted for the undetermined rate.
    missing: BTreeMap<String, u32>,
    /// Context for the reasoning that does not change the level.
    notes: Vec<String>,
    present_in: Vec<String>,
    absent_from: Vec<String>,
}

impl Signals {
    /// StellarExpert's directory: an adverse tag on the issuer address escalates.
    fn directory(&mut self, f: &mut Finding, s: &Subject) {
        let o = match &s.directory {
            DirectoryOutcome::Listed(o) => o,
            DirectoryOutcome::NotListed { .. } => {
                self.notes.push(
                    "StellarExpert's directory has no entry for the issuer. Absence is not an \
                     observation: most legitimate issuers are absent, and so is every scam nobody has \
                     reported yet."
                        .to_string(),
                );
                return;
            }
            DirectoryOutcome::Failed(a) => {
                f.evidence
                    .push(Evidence::failed_attempt(SOURCE_DIRECTORY, a));
                self.missing.insert(SOURCE_DIRECTORY.to_string(), 1);
                self.notes.push(format!(
                    "StellarExpert's directory could not be read ({}), so it was never consulted; \
                     this is not a clean answer.",
                    a.failure.describe()
                ));
                return;
            }
            DirectoryOutcome::NotAsked => {
                self.missing.insert(SOURCE_DIRECTORY.to_string(), 1);
                self.notes.push(
                    "StellarExpert's directory was never asked, so it was never consulted."
                        .to_string(),
                );
                return;
            }
        };
        let line = |claim| Evidence::answer(SOURCE_DIRECTORY, &o.url, claim, o.retrieved_at);
        f.evidence.push(line(claims::directory_entry(&o.value)));
        let adverse: Vec<&str> = o
            .value
            .tags
            .iter()
            .map(String::as_str)
            .filter(|t| ADVERSE_TAGS.contains(t))
            .collect();
        if !adverse.is_empty() {
            self.escalated = true;
            self.hits.push(format!(
                "StellarExpert's directory tags the issuer address {} ({}), a curated determination \
                 keyed on the address itself",
                adverse.join(", "),
                o.url
            ));
        } else {
            self.notes.push(format!(
                "StellarExpert's directory lists the issuer as {:?} with no adverse tag; a listing is \
                 not an endorsement.",
                o.value.name
            ));
        }
        for tag in o
            .value
            .tags
            .iter()
            .filter(|t| !KNOWN_TAGS.contains(&t.as_str()))
        {
            f.evidence.push(line(claims::unknown_tag(tag)));
            self.notes.push(format!(
                "The directory tag {tag:?} is outside Assay's documented vocabulary; it was recorded, \
                 not scored."
            ));
        }
    }

    /// StellarExpert's malicious-domain blocklist, keyed on the home domain or the directory's domain.
    fn blocklist(&mut self, f: &mut Finding, s: &Subject) {
        match &s.blocklist {
            BlocklistOutcome::Answered(o) => {
                f.evidence.push(Evidence::answer(
                    SOURCE_BLOCKLIST,
                    &o.url,
                    claims::blocklist(&o.value.domain, o.value.blocked),
                    o.retrieved_at,
                ));
                // With no home_domain, the domain asked about is the one the directory lists the issuer under.
                let from_directory = s.home_domain.domain().is_none();
                if o.value.blocked {
                    self.escalated = true;
                    let verdict = verify_domain(s);
                    let caveat = if from_directory {
                        " — the domain StellarExpert's directory lists the issuer under (the issuer advertises no \
                     home_domain), so the link between issuer and domain is the directory's own curated \
                     association"
                        .to_string()
                    } else if verdict.accountability == Accountability::Verified {
                        " (the domain's stellar.toml reciprocally claims this asset)".to_string()
                    } else {
                        " — caveat: this domain has not reciprocally claimed the asset; the link between issuer and \
                     domain is only the issuer's own home_domain, yet an issuer advertising a blocklisted domain \
                     is itself part of the finding"
                        .to_string()
                    };
                    self.hits.push(format!(
                        "StellarExpert's malicious-domain blocklist lists {:?}{caveat}",
                        o.value.domain
                    ));
                } else {
                    let keyed = if from_directory {
                        " (the domain the directory lists the issuer under, which advertises no home_domain)"
                    } else {
                        ""
                    };
                    self.notes.push(format!(
                    "StellarExpert's blocklist does not list {:?}{keyed}; that is not an observation of safety.",
                    o.value.domain
                ));
                }
            }
            BlocklistOutcome::Failed(a) => {
                f.evidence
                    .push(Evidence::failed_attempt(SOURCE_BLOCKLIST, a));
                self.missing.insert(SOURCE_BLOCKLIST.to_string(), 1);
                self.notes.push(format!(
                "StellarExpert's domain blocklist could not be read ({}), so it was never consulted.",
                a.failure.describe()
            ));
            }
            BlocklistOutcome::SkippedNoHomeDomain => {
                self.missing.insert(SOURCE_BLOCKLIST.to_string(), 1);
                self.notes.push(
                "The domain blocklist was never asked: the issuer advertises no home_domain and StellarExpert's \
                 directory names no domain for it, so the lookup could not be keyed. That is a missing question, \
                 not an empty answer."
                    .to_string(),
            );
            }
        }
    }

    /// SEP-42 asset lists: evidence only; presence never lowers a level.
    fn asset_lists(&mut self, f: &mut Finding, s: &Subject) {
        for list in &s.asset_lists {
            match &list.result {
                AssetListResult::Read { list_name, entry } => {
                    let source = format!("{SOURCE_ASSET_LIST}/{list_name}");
                    let claim = match entry {
                        Some(e) => {
                            self.present_in.push(list_name.clone());
                            claims::list_present(list_name, e)
                        }
                        None => {
                            self.absent_from.push(list_name.clone());
                            claims::list_absent(list_name)
                        }
                    };
                    f.evidence.push(Evidence::answer(
                        &source,
                        &list.url,
                        claim,
                        list.retrieved_at,
                    ));
                }
                AssetListResult::Failed(failure) => {
                    f.evidence.push(Evidence::failure(
                        SOURCE_ASSET_LIST,
                        &list.url,
                        failure,
                        list.retrieved_at,
                    ));
                    self.notes.push(format!(
                    "The asset list at {} could not be read ({}); lists are evidence only, so this does not \
                     leave the verdict undetermined.",
                    list.url,
                    failure.describe()
                ));
                }
            }
        }
    }

    /// The level and the reasoning: critical on any hit, undetermined when a source was not consulted.
    fn conclude(mut self, mut f: Finding) -> Finding {
        if !self.present_in.is_empty() && self.escalated {
            self.notes.push(format!(
            "The sources disagree and Assay leaves it unresolved: {} include(s) the asset while StellarExpert \
             reports adverse evidence. Inclusion in a list is not endorsement and cannot lower a level.",
            self.present_in.join(", ")
        ));
        } else if !self.present_in.is_empty() && !self.absent_from.is_empty() {
            self.notes.push(format!(
            "The asset lists disagree and Assay leaves it unresolved: present in {}, absent from {}.",
            self.present_in.join(", "),
            self.absent_from.join(", ")
        ));
        }
        let mut reasoning = String::new();
        if self.escalated {
            f.severity = Rating::Level(Severity::Critical);
            f.mechanics.set(Mechanics::BLOCKLISTED);
            reasoning.push_str(&format!(
            "Escalated to critical: {}. This is a positive observation from a curated source; it raises the \
             level and never grants or implies an issuer power.",
            self.hits.join("; and ")
        ));
            if !self.missing.is_empty() {
                reasoning.push_str(
                " A source that could not be read does not weaken it: critical is the ceiling, so nothing \
                 missing could raise the level further.",
            );
            }
        } else if !self.missing.is_empty() {
            f.undetermined = true;
            f.undetermined_rate = Some(format!("{}/2", self.missing.len()));
            f.undetermined_by_source = self.missing;
            reasoning.push_str(
            "Undetermined: a reputation source the verdict depends on was not consulted, so the reported \
             severity is a floor — a hit there would have escalated it.",
        );
        } else {
            reasoning.push_str("No curated source reports adverse evidence.");
        }
        for n in self.notes {
            reasoning.push(' ');
            reasoning.push_str(&n);
        }
        f.reasoning = reasoning;
        f
    }
}
