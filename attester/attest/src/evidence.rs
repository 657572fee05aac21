//! Evidence bundles of fresh reports, recorded into the history store by `watch` and `attest`, and their
//! offline check: hash and verdict (`assay_core::bundle`), then the SEP-41 rows and a custom token's powers
//! replayed from the fork snapshots the run recorded.

use assay_core::bundle::{behaviour_bit, check_bundle, Bundle, BundleError, Rederived};
use assay_core::contract::{behaviour_claims, SOURCE_CONTRACT_BEHAVIOUR};
use assay_core::hash::EvidenceVersion;
use assay_core::report::Report;
use assay_core::Token;
use assay_scan::history::{History, HistoryError, Recorded};
use serde::Serialize;

use crate::evidence_binding;
use crate::sep41::Sep41Outcome;

/// The bundle of `report` under the evidence version its attestation is written in (v8), with the suite
/// run's snapshot and survey and the power discovery's snapshot; `None` for a report with no severity to
/// hash (unevaluated: never attested).
pub fn bundle_of(
    report: &Report,
    suite: Option<&Sep41Outcome>,
    powers_snapshot: Option<&serde_json::Value>,
) -> Option<Bundle> {
    let mut bundle = Bundle::of(report, EvidenceVersion::default_for(&report.asset)).ok()?;
    if let Some(run) = suite {
        bundle.snapshot = run.snapshot.clone();
        bundle.power_survey = run.survey.clone();
    }
    bundle.powers_snapshot = powers_snapshot.cloned();
    Some(bundle)
}

/// Records one check of `report` in `history` (the one recording path `watch` and `attest` share): a new
/// observation when the report changed, otherwise a re-check; its bundle kept under its evidence hash.
pub fn record_check(
    history: &mut History,
    report: &Report,
    suite: Option<&Sep41Outcome>,
    powers_snapshot: Option<&serde_json::Value>,
) -> Result<(Recorded, Option<String>), HistoryError> {
    let bundle = bundle_of(report, suite, powers_snapshot);
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

/// What replaying a custom token's power discovery from its snapshot gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PowersReplayed {
    /// The observed powers as `contract/behaviour` claims: the replay's, the bundle's missing from it, and
    /// the replay's the bundle lacks (each names the function, who authorized it and the effect).
    #[serde(flatten)]
    pub claims: Replayed,
    /// The mechanics bits the bundle's behaviour claims give.
    pub recorded_bits: u32,
    /// The mechanics bits the replayed survey gives.
    pub replayed_bits: u32,
    /// Why the replayed discovery did not cover the token, when it did not (a bound cut it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

impl PowersReplayed {
    /// The replay observed the bundle's powers exactly, with the same bits.
    pub fn same(&self) -> bool {
        self.claims.same() && self.recorded_bits == self.replayed_bits
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
    /// A custom token's power discovery replayed from its snapshot; `None` for another subject, or when
    /// discovery did not observe the token (its code unread).
    pub powers_replay: Option<PowersReplayed>,
    /// What could not be replayed, and why (e.g. a keyed live run leaves no snapshot).
    pub not_replayed: Vec<String>,
}

impl BundleVerdict {
    /// Every replay that ran reached the bundle's verdicts.
    pub fn replays_agree(&self) -> bool {
        self.sep41_replay.as_ref().is_none_or(Replayed::same)
            && self.powers_replay.as_ref().is_none_or(PowersReplayed::same)
    }
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
                    let Some(expected) = evidence_binding::expected(bundle, contract) else {
                        not_replayed.push(format!(
                            "sep41: the lines hash no code for {contract}, so the snapshot's code cannot \
                             be bound to them and is not run"
                        ));
                        return finish(bundle, rederived, None, not_replayed);
                    };
                    evidence_binding::bind(
                        "snapshot",
                        snapshot,
                        id,
                        &passphrase,
                        bundle,
                        &expected,
                    )?;
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
    finish(bundle, rederived, sep41_replay, not_replayed)
}

/// The verdict once the SEP-41 rows are settled: the powers replayed, when they can be.
fn finish(
    bundle: &Bundle,
    rederived: Rederived,
    sep41_replay: Option<Replayed>,
    mut not_replayed: Vec<String>,
) -> Result<BundleVerdict, BundleError> {
    let powers_replay = replay_powers(bundle, &mut not_replayed)?;
    Ok(BundleVerdict {
        evidence_hash: bundle.evidence_hash.clone(),
        evidence_version: bundle.evidence_version,
        rederived,
        sep41_replay,
        powers_replay,
        not_replayed,
    })
}

/// A custom token's power discovery replayed from [`Bundle::powers_snapshot`] and compared with the
/// bundle's `contract/behaviour` claims; what cannot be replayed is pushed on `not_replayed`.
///
/// # Errors
/// [`BundleError::SnapshotMismatch`] when the snapshot does not run the code the lines hash.
fn replay_powers(
    bundle: &Bundle,
    not_replayed: &mut Vec<String>,
) -> Result<Option<PowersReplayed>, BundleError> {
    let Token::Contract(contract) = &bundle.report.asset else {
        return Ok(None);
    };
    // Discovery ran when the code was read (a `contract/wasm` answer); its lines are its answers.
    let code_read = bundle
        .report
        .evidence
        .iter()
        .any(|e| e.source == assay_core::contract::SOURCE_CONTRACT_CODE && !e.attempted);
    if !code_read {
        return Ok(None);
    }
    let recorded: Vec<(String, String)> = bundle
        .report
        .evidence
        .iter()
        .filter(|e| e.source == SOURCE_CONTRACT_BEHAVIOUR && !e.attempted)
        .map(|e| (e.url.clone(), e.claim.clone()))
        .collect();
    let Some(snapshot) = &bundle.powers_snapshot else {
        not_replayed.push(
            "powers: the bundle has no snapshot of power discovery (recorded before bundles carried \
             one, or discovery could not record), so the observed powers cannot be replayed"
                .into(),
        );
        return Ok(None);
    };
    let passphrase = snapshot["assay_fork"]["passphrase"]
        .as_str()
        .map(str::to_string)
        .or_else(|| bundle.report.network.clone());
    let (Some(id), Some(passphrase)) = (crate::sac::parse_contract(contract), passphrase) else {
        not_replayed.push(format!(
            "powers: {contract:?} is not a C… address, or neither the snapshot nor the report names the \
             network passphrase"
        ));
        return Ok(None);
    };
    let Some(expected) = evidence_binding::expected(bundle, contract) else {
        not_replayed.push(format!(
            "powers: the lines hash no code for {contract}, so the snapshot's code cannot be bound to \
             them and is not run"
        ));
        return Ok(None);
    };
    evidence_binding::bind(
        "powers_snapshot",
        snapshot,
        id,
        &passphrase,
        bundle,
        &expected,
    )?;
    Ok(
        match crate::token::replay_powers(id, &passphrase, snapshot) {
            Ok(survey) => Some(compare_powers(contract, &recorded, &survey)),
            Err(why) => {
                not_replayed.push(format!(
                    "powers: discovery could not run from the snapshot: {why}"
                ));
                None
            }
        },
    )
}

/// The replayed survey against the bundle's behaviour claims: the claims as multisets, and the bits.
pub fn compare_powers(
    contract: &str,
    recorded: &[(String, String)],
    survey: &assay_core::powers::PowerSurvey,
) -> PowersReplayed {
    let produced = behaviour_claims(survey);
    let claims = compare_claims(contract, recorded, produced);
    PowersReplayed {
        recorded_bits: recorded
            .iter()
            .fold(0, |bits, (_, c)| bits | behaviour_bit(c).unwrap_or(0)),
        replayed_bits: survey.bits(),
        incomplete: survey.incomplete(),
        claims,
    }
}

/// The replayed rows against the bundle's SEP-41 claims, as multisets.
fn compare(contract: &str, lines: &[(String, String)], run: &Sep41Outcome) -> Replayed {
    let produced = run
        .rows
        .iter()
        .map(|r| format!("{} {}: {}", r.id, r.status.name(), r.detail))
        .collect();
    compare_claims(contract, lines, produced)
}

/// `produced` against the claims of `lines`, as multisets.
fn compare_claims(contract: &str, lines: &[(String, String)], produced: Vec<String>) -> Replayed {
    let mut want: Vec<String> = lines.iter().map(|(_, c)| c.clone()).collect();
    want.sort();
    let mut claims = produced;
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

#[cfg(test)]
mod tests {
    use super::*;
    use assay_core::{Asset, Timestamp, Token};
    use assay_scan::history::ChainReading;

    /// An eval subject's report (AQUA: clear, verified), judged by the core as a scan would.
    fn recorded_report() -> Report {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/eval/aqua-clear-verified");
        let read = |name: &str| std::fs::read(dir.join(name)).ok();
        let subject = assay_core::replay::load_subject(&read).expect("eval subject");
        assay_core::evaluate(&subject).expect("judged")
    }

    /// Asset `i` of the watch list: the recorded report under another code, checked at `at`.
    fn check_of(base: &Report, i: usize, at: i64) -> Report {
        let mut report = base.clone();
        let issuer = match &base.asset {
            Token::Classic(a) => a.issuer.clone(),
            other => panic!("{other:?}"),
        };
        report.asset = Token::Classic(Asset::new(&format!("A{i:03}"), &issuer).unwrap());
        report.scanned_at = Timestamp::from_unix(at).unwrap();
        report
    }

    #[test]
    fn a_powers_replay_names_the_power_it_did_not_observe() {
        use assay_core::powers::{Authority, ObservedPower, PowerEffect, PowerSurvey};
        let admin = Authority {
            address: "GADMIN".into(),
            control: "1 key".into(),
            locked: false,
        };
        let power = |function: &str, effect: PowerEffect| ObservedPower {
            function: function.into(),
            authorized_by: vec![admin.clone()],
            effect,
            label: None,
            events: vec![],
            steps: vec![],
            usable_from: None,
        };
        let mint = power(
            "mint",
            PowerEffect::CreatesSupply {
                credited: "GH".into(),
                amount: "7".into(),
            },
        );
        let take = power(
            "rebalance",
            PowerEffect::TakesBalance {
                holder: "GH".into(),
                amount: "7".into(),
                moved_to: None,
            },
        );
        let survey = |powers: Vec<ObservedPower>| PowerSurvey {
            wasm_hash: "ab".into(),
            ledger: 9,
            probed: vec!["mint".into(), "rebalance".into()],
            invocations: 4,
            holders: vec!["GH".into()],
            powers,
            unclassified: vec![],
            cut: vec![],
            unobservable: None,
            reach: None,
        };
        let recorded: Vec<(String, String)> =
            assay_core::contract::behaviour_claims(&survey(vec![mint.clone(), take.clone()]))
                .into_iter()
                .map(|c| ("CTOKEN".to_string(), c))
                .collect();
        // The same powers observed again (other amounts, same claims): the same verdicts.
        let same = compare_powers(
            "CTOKEN",
            &recorded,
            &survey(vec![take.clone(), mint.clone()]),
        );
        assert!(same.same(), "{same:?}");
        assert_eq!(
            same.recorded_bits,
            assay_core::Mechanics::ADMIN_MINT | assay_core::Mechanics::ADMIN_CLAWBACK
        );
        // The replay no longer sees the take: the difference names it, and the bits differ.
        let differs = compare_powers("CTOKEN", &recorded, &survey(vec![mint]));
        assert!(!differs.same());
        assert_eq!(
            differs.claims.missing,
            [format!(
                "rebalance authorized by GADMIN (1 key, 0 s): {}",
                take.effect.stable_claim()
            )]
        );
        assert!(differs.claims.unexpected.is_empty());
        assert_eq!(differs.replayed_bits, assay_core::Mechanics::ADMIN_MINT);
    }

    #[test]
    fn fifty_unchanged_passes_over_a_hundred_assets_add_no_rows() {
        const ASSETS: usize = 100;
        const PASSES: i64 = 50;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let base = recorded_report();
        let start = 1_780_000_000;
        let mut after_first = None;
        for pass in 0..PASSES {
            // What `watch` does per check: record (one transaction each).
            let mut history = History::open(&path).unwrap();
            for i in 0..ASSETS {
                let (recorded, hash) = record_check(
                    &mut history,
                    &check_of(&base, i, start + pass * 300),
                    None,
                    None,
                )
                .unwrap();
                assert!(hash.is_some());
                assert_eq!(
                    matches!(recorded, Recorded::Observed(_)),
                    pass == 0,
                    "pass {pass}"
                );
            }
            let counts = History::open(&path).unwrap().counts().unwrap();
            if pass == 0 {
                after_first = Some(counts);
            } else {
                // The bound: an unchanged pass adds nothing but one re-check row per asset, once.
                let first = after_first.as_ref().unwrap();
                assert_eq!(counts["observations"], first["observations"]);
                assert_eq!(counts["bundles"], first["bundles"]);
                assert_eq!(counts["rechecks"], ASSETS as i64);
            }
        }
        let history = History::open(&path).unwrap();
        let counts = history.counts().unwrap();
        assert_eq!(
            (
                counts["observations"],
                counts["bundles"],
                counts["rechecks"],
                counts["latest"]
            ),
            (100, 100, 100, 100),
            "one observation, one bundle and one re-check record per asset after {PASSES} passes"
        );
        // Freshness stays provable: the last re-check is the last pass's time.
        let page = history
            .page(&check_of(&base, 7, 0).asset.to_string(), None, 10)
            .unwrap();
        assert_eq!(page.rows.len(), 1);
        let recheck = page.rows[0].1.clone().expect("re-checked");
        assert_eq!(recheck.count, PASSES - 1);
        assert_eq!(
            recheck.last_checked_at,
            Timestamp::from_unix(start + (PASSES - 1) * 300)
                .unwrap()
                .to_string()
        );
    }

    /// A read-back of an attestation citing `hash`.
    fn attested(hash: &str) -> ChainReading {
        ChainReading::Attested {
            severity: 0,
            flags: 0,
            evidence_hash: hash.to_string(),
            attested_at: Some(1),
            tx_hash: None,
            ledger: None,
        }
    }

    #[test]
    fn prune_keeps_every_bundle_an_on_chain_attestation_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let base = recorded_report();
        let mut history = History::open(&path).unwrap();
        let start = 1_780_000_000;
        // Ten assets attested (the hash on chain), then each report changed (a new verdict not yet written).
        let mut on_chain = Vec::new();
        for i in 0..10 {
            let (_, hash) =
                record_check(&mut history, &check_of(&base, i, start), None, None).unwrap();
            on_chain.push(hash.unwrap());
        }
        let readings: Vec<(String, String, ChainReading)> = (0..10)
            .map(|i| {
                (
                    check_of(&base, i, 0).asset.to_string(),
                    Timestamp::from_unix(start).unwrap().to_string(),
                    attested(&on_chain[i]),
                )
            })
            .collect();
        history.append_chain_readings(&readings).unwrap();
        let mut changed = Vec::new();
        for i in 0..10 {
            let mut report = check_of(&base, i, start + 86_400);
            report.accountability = assay_core::Accountability::Unverified;
            report
                .mechanics
                .set(assay_core::Mechanics::DOMAIN_UNVERIFIED);
            let (_, hash) = record_check(&mut history, &report, None, None).unwrap();
            changed.push(hash.unwrap());
        }
        // Everything is older than the cutoff.
        let pruned = history
            .prune(
                &Timestamp::from_unix(start + 400 * 86_400)
                    .unwrap()
                    .to_string(),
            )
            .unwrap();
        assert_eq!(pruned.kept_on_chain, 10);
        for hash in on_chain.iter().chain(&changed) {
            let (_, _, json) = history.bundle(hash).unwrap().expect("kept");
            let bundle: Bundle = serde_json::from_str(&json).unwrap();
            check_bundle(&bundle).unwrap();
        }
        // Once the chain holds the new verdicts, the old bundles can go.
        let readings: Vec<(String, String, ChainReading)> = (0..10)
            .map(|i| {
                (
                    check_of(&base, i, 0).asset.to_string(),
                    Timestamp::from_unix(start + 86_400).unwrap().to_string(),
                    attested(&changed[i]),
                )
            })
            .collect();
        history.append_chain_readings(&readings).unwrap();
        let pruned = history
            .prune(
                &Timestamp::from_unix(start + 400 * 86_400)
                    .unwrap()
                    .to_string(),
            )
            .unwrap();
        assert_eq!((pruned.bundles, pruned.observations), (10, 10));
        assert!(on_chain
            .iter()
            .all(|h| history.bundle(h).unwrap().is_none()));
        assert!(changed.iter().all(|h| history.bundle(h).unwrap().is_some()));
    }
}
