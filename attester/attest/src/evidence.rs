//! Evidence bundles of fresh reports, recorded into the history store by `watch` and `attest`, and their
//! offline check: hash and verdict (`assay_core::bundle`), then the SEP-41 rows replayed from the fork's
//! snapshot.

use assay_core::bundle::{check_bundle, Bundle, BundleError, Rederived};
use assay_core::hash::EvidenceVersion;
use assay_core::report::Report;
use assay_scan::history::{History, HistoryError, Recorded};
use serde::Serialize;

use crate::sep41::Sep41Outcome;

/// The bundle of `report` under the evidence version its attestation is written in (v5 for a token
/// contract, v6 for a classic asset), with the suite run's snapshot and survey; `None` for a report with
/// no severity to hash (unevaluated: never attested).
pub fn bundle_of(report: &Report, suite: Option<&Sep41Outcome>) -> Option<Bundle> {
    let mut bundle = Bundle::of(report, EvidenceVersion::default_for(&report.asset)).ok()?;
    if let Some(run) = suite {
        bundle.snapshot = run.snapshot.clone();
        bundle.power_survey = run.survey.clone();
    }
    Some(bundle)
}

/// Records one check of `report` in `history` (the one recording path `watch` and `attest` share): a new
/// observation when the report changed, otherwise a re-check; its bundle kept under its evidence hash.
pub fn record_check(
    history: &mut History,
    report: &Report,
    suite: Option<&Sep41Outcome>,
) -> Result<(Recorded, Option<String>), HistoryError> {
    let bundle = bundle_of(report, suite);
    let bundle_json = bundle
        .as_ref()
        .map(|b| serde_json::to_string(b).expect("a bundle serialises"));
    let hash = bundle.as_ref().map(|b| b.evidence_hash.clone());
    let report_json = serde_json::to_string(report).expect("a report serialises");
    let recorded = history.record(
        &report.asset.to_string(),
        &report.scanned_at.to_string(),
        &report_json,
        hash.as_deref().zip(bundle_json.as_deref()),
    )?;
    Ok((recorded, hash))
}

/// What replaying a bundle's SEP-41 rows from its snapshot gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replayed {
    /// The token contract the suite ran against.
    pub contract: String,
    /// Rows the replay produced, as hashed claims (`<id> <VERDICT>: <requirement>`), sorted.
    pub claims: Vec<String>,
    /// Claims the bundle has and the replay did not produce.
    pub missing: Vec<String>,
    /// Claims the replay produced and the bundle does not have.
    pub unexpected: Vec<String>,
}

impl Replayed {
    /// The replay reached the bundle's verdicts exactly.
    pub fn same(&self) -> bool {
        self.missing.is_empty() && self.unexpected.is_empty()
    }
}

/// A bundle checked offline.
#[derive(Debug, Clone, Serialize)]
pub struct BundleVerdict {
    pub evidence_hash: String,
    pub evidence_version: u8,
    /// What the lines re-derive.
    pub rederived: Rederived,
    /// The SEP-41 rows replayed from the snapshot; `None` when the bundle has no SEP-41 lines.
    pub sep41_replay: Option<Replayed>,
    /// What could not be replayed, and why (e.g. a keyed live run leaves no snapshot).
    pub not_replayed: Vec<String>,
}

/// Checks a bundle offline: hash, the line a tamperer changed, the verdict re-derived from the lines,
/// then the SEP-41 rows replayed from the fork snapshot (no network is reached).
///
/// # Errors
/// The bundle's refusal ([`BundleError`]), with the changed line named when one explains a wrong hash.
pub fn verify_bundle(bundle: &Bundle) -> Result<BundleVerdict, BundleError> {
    let rederived = check_bundle(bundle)?;
    let mut not_replayed = Vec::new();
    let lines: Vec<(String, String)> = bundle
        .report
        .evidence
        .iter()
        .filter(|e| e.source == assay_core::checks::sep41::SOURCE_SEP41)
        .map(|e| (e.url.clone(), e.claim.clone()))
        .collect();
    let sep41_replay = match (lines.first(), &bundle.snapshot) {
        (None, _) => None,
        (Some(_), None) => {
            not_replayed.push(
                "sep41: the bundle has no fork snapshot (a keyed live run, or a suite that could not \
                 start), so its rows cannot be replayed"
                    .into(),
            );
            None
        }
        (Some((contract, _)), Some(snapshot)) => {
            let passphrase = snapshot["assay_fork"]["passphrase"]
                .as_str()
                .map(str::to_string)
                .or_else(|| bundle.report.network.clone());
            let passphrase: Option<String> = passphrase;
            match (crate::sac::parse_contract(contract), passphrase) {
                (Some(id), Some(passphrase)) => {
                    match crate::sep41::replay(
                        id,
                        &passphrase,
                        snapshot,
                        bundle.power_survey.clone(),
                    ) {
                        Ok(run) => Some(compare(contract, &lines, &run)),
                        Err(why) => {
                            not_replayed.push(format!("sep41: {why}"));
                            None
                        }
                    }
                }
                (None, _) => {
                    not_replayed.push(format!(
                        "sep41: the lines' contract {contract:?} is not a C… address"
                    ));
                    None
                }
                (_, None) => {
                    not_replayed.push(
                        "sep41: neither the snapshot nor the report names the network passphrase"
                            .into(),
                    );
                    None
                }
            }
        }
    };
    Ok(BundleVerdict {
        evidence_hash: bundle.evidence_hash.clone(),
        evidence_version: bundle.evidence_version,
        rederived,
        sep41_replay,
        not_replayed,
    })
}

/// The replayed rows against the bundle's SEP-41 claims, as multisets.
fn compare(contract: &str, lines: &[(String, String)], run: &Sep41Outcome) -> Replayed {
    let mut want: Vec<String> = lines.iter().map(|(_, c)| c.clone()).collect();
    want.sort();
    let mut claims: Vec<String> = run
        .rows
        .iter()
        .map(|r| format!("{} {}: {}", r.id, r.status.name(), r.detail))
        .collect();
    claims.sort();
    let (mut missing, mut unexpected) = (Vec::new(), Vec::new());
    let mut produced = claims.clone();
    for claim in &want {
        match produced.iter().position(|c| c == claim) {
            Some(i) => {
                produced.remove(i);
            }
            None => missing.push(claim.clone()),
        }
    }
    unexpected.extend(produced);
    Replayed {
        contract: contract.to_string(),
        claims,
        missing,
        unexpected,
    }
}
