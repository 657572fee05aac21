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
        let mut notes: Vec<String> = Vec::new();
        let mut hits: Vec<String> = Vec::new();
        let mut missing: BTreeMap<String, u32> = BTreeMap::new();

        let mut directory_adverse = false;
        match &s.directory {
            DirectoryOutcome::Listed(o) => {
                f.evidence.push(Evidence::answer(SOURCE_DIRECTORY, &o.url, claims::directory_entry(&o.value), o.retrieved_at));
                let adverse: Vec<&str> =
                    o.value.tags.iter().map(String::as_str).filter(|t| ADVERSE_TAGS.contains(t)).collect();
                if !adverse.is_empty() {
                    directory_adverse = true;
                    hits.push(format!(
                        "StellarExpert's directory tags the issuer address {} ({}), a curated determination keyed \
                         on the address itself",
                        adverse.join(", "),
                        o.url
                    ));
                } else {
                    notes.push(format!(
                        "StellarExpert's directory lists the issuer as {:?} with no adverse tag; a listing is not an \
                         endorsement.",
                        o.value.name
                    ));
                }
                for tag in o.value.tags.iter().filter(|t| !KNOWN_TAGS.contains(&t.as_str())) {
                    f.evidence.push(Evidence::answer(SOURCE_DIRECTORY, &o.url, claims::unknown_tag(tag), o.retrieved_at));
                    notes.push(format!("The directory tag {tag:?} is outside Assay's documented vocabulary; it was recorded, not scored."));
                }
            }
            DirectoryOutcome::NotListed { .. } => notes.push(
                "StellarExpert's directory has no entry for the issuer. Absence is not an observation: most \
                 legitimate issuers are absent, and so is every scam nobody has reported yet."
                    .to_string(),
            ),
            DirectoryOutcome::Failed(a) => {
                f.evidence.push(Evidence::failed_attempt(SOURCE_DIRECTORY, a));
                missing.insert(SOURCE_DIRECTORY.to_string(), 1);
                notes.push(format!(
                    "StellarExpert's directory could not be read ({}), so it was never consulted; this is not a \
                     clean answer.",
                    a.failure.describe()
                ));
            }
            DirectoryOutcome::NotAsked => {
                missing.insert(SOURCE_DIRECTORY.to_string(), 1);
                notes.push("StellarExpert's directory was never asked, so it was never consulted.".to_string());
            }
        }

        let mut blocked = false;
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
                    blocked = true;
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
                    hits.push(format!(
                        "StellarExpert's malicious-domain blocklist lists {:?}{caveat}",
                        o.value.domain
                    ));
                } else {
                    let keyed = if from_directory {
                        " (the domain the directory lists the issuer under, which advertises no home_domain)"
                    } else {
                        ""
                    };
                    notes.push(format!(
                        "StellarExpert's blocklist does not list {:?}{keyed}; that is not an observation of safety.",
                        o.value.domain
                    ));
                }
            }
            BlocklistOutcome::Failed(a) => {
                f.evidence
                    .push(Evidence::failed_attempt(SOURCE_BLOCKLIST, a));
                missing.insert(SOURCE_BLOCKLIST.to_string(), 1);
                notes.push(format!(
                    "StellarExpert's domain blocklist could not be read ({}), so it was never consulted.",
                    a.failure.describe()
                ));
            }
            BlocklistOutcome::SkippedNoHomeDomain => {
                missing.insert(SOURCE_BLOCKLIST.to_string(), 1);
                notes.push(
                    "The domain blocklist was never asked: the issuer advertises no home_domain and StellarExpert's \
                     directory names no domain for it, so the lookup could not be keyed. That is a missing question, \
                     not an empty answer."
                        .to_string(),
                );
            }
        }

        let mut present_in: Vec<String> = Vec::new();
        let mut absent_from: Vec<String> = Vec::new();
        for list in &s.asset_lists {
            match &list.result {
                AssetListResult::Read { list_name, entry } => {
                    let source = format!("{SOURCE_ASSET_LIST}/{list_name}");
                    let claim = match entry {
                        Some(e) => {
                            present_in.push(list_name.clone());
                            claims::list_present(list_name, e)
                        }
                        None => {
                            absent_from.push(list_name.clone());
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
                    notes.push(format!(
                        "The asset list at {} could not be read ({}); lists are evidence only, so this does not \
                         leave the verdict undetermined.",
                        list.url,
                        failure.describe()
                    ));
                }
            }
        }
        let escalated = directory_adverse || blocked;
        if !present_in.is_empty() && escalated {
            notes.push(format!(
                "The sources disagree and Assay leaves it unresolved: {} include(s) the asset while StellarExpert \
                 reports adverse evidence. Inclusion in a list is not endorsement and cannot lower a level.",
                present_in.join(", ")
            ));
        } else if !present_in.is_empty() && !absent_from.is_empty() {
            notes.push(format!(
                "The asset lists disagree and Assay leaves it unresolved: present in {}, absent from {}.",
                present_in.join(", "),
                absent_from.join(", ")
            ));
        }

        let mut reasoning = String::new();
        if escalated {
            f.severity = Rating::Level(Severity::Critical);
            f.mechanics.set(Mechanics::BLOCKLISTED);
            reasoning.push_str(&format!(
                "Escalated to critical: {}. This is a positive observation from a curated source; it raises the \
                 level and never grants or implies an issuer power.",
                hits.join("; and ")
            ));
            if !missing.is_empty() {
                reasoning.push_str(
                    " A source that could not be read does not weaken it: critical is the ceiling, so nothing \
                     missing could raise the level further.",
                );
            }
        } else if !missing.is_empty() {
            f.undetermined = true;
            f.undetermined_rate = Some(format!("{}/2", missing.len()));
            f.undetermined_by_source = missing;
            reasoning.push_str(
                "Undetermined: a reputation source the verdict depends on was not consulted, so the reported \
                 severity is a floor — a hit there would have escalated it.",
            );
        } else {
            reasoning.push_str("No curated source reports adverse evidence.");
        }
        for n in notes {
            reasoning.push(' ');
            reasoning.push_str(&n);
        }
        f.reasoning = reasoning;
        f
    }
}
