//! The `sep41` check at work in the attester: running the suite against a token contract and turning its
//! results into the core's `sep41` rows (the check itself, with the FAIL-ceiling rule, is
//! `assay_core::checks::sep41`).

use assay_core::checks::default_checks;
pub use assay_core::checks::sep41::{Sep41Check, Sep41Row, Sep41Status, SOURCE_SEP41};
use assay_core::contract::{evaluate_contract, ContractSubject};
use assay_core::{Engine, EngineError, Report, Subject, Timestamp};

use crate::SnapshotError;

/// Evaluates `subject` with the default checks plus the `sep41` check.
pub fn evaluate_with_sep41(subject: &Subject, check: Sep41Check) -> Result<Report, EngineError> {
    let mut checks = default_checks();
    checks.push(Box::new(check));
    Engine::with_checks(checks).run(subject)
}

/// Evaluates a scanned subject, with the `sep41` check when the suite ran for it.
pub fn evaluate_subject(
    subject: &Subject,
    sep41: Option<&Sep41Outcome>,
    at: Timestamp,
) -> Result<Report, crate::AttestError> {
    Ok(match sep41 {
        Some(run) => evaluate_with_sep41(subject, run.check(at)),
        None => assay_core::engine::evaluate(subject),
    }?)
}

/// Evaluates a custom token contract's subject, with the `sep41` check when the suite ran for it.
pub fn evaluate_contract_subject(
    subject: &ContractSubject,
    sep41: Option<&Sep41Outcome>,
    at: Timestamp,
) -> Result<Report, crate::AttestError> {
    let check = sep41.map(|run| run.check(at));
    Ok(evaluate_contract(subject, check.as_ref())?)
}

/// Converts the suite's results into report rows. The bound line carries the check id, the verdict and the
/// requirement asserted — not the observed numbers or transaction hashes, which change on every run — so a
/// re-run that reaches the same verdicts reproduces the same evidence hash (watch leaves it alone, verify can
/// agree). NOT_IMPLEMENTED (a required SEP-41 member missing from the contract spec) is a violation: FAIL.
/// A power-event row with no power to judge is left out: it says nothing about the token.
pub fn rows_from_suite(results: &[assay_sep41::CheckResult]) -> Vec<Sep41Row> {
    use assay_sep41::Status;
    results
        .iter()
        .filter(|r| !r.no_power_observed())
        .map(|r| {
            let (status, detail) = match r.status {
                Status::Pass => (Sep41Status::Pass, format!("requires {}", r.expected)),
                Status::Fail => (Sep41Status::Fail, format!("requires {}", r.expected)),
                Status::Unverifiable => (
                    Sep41Status::Unverifiable,
                    format!("requires {}", r.expected),
                ),
                Status::Skipped => (Sep41Status::Skipped, format!("requires {}", r.expected)),
                Status::NotImplemented => (
                    Sep41Status::Fail,
                    format!(
                        "not implemented: the contract spec lacks `{}`",
                        assay_sep41::CHECKS
                            .iter()
                            .find(|c| c.id == r.id)
                            .map_or(r.clause, |c| c.member)
                    ),
                ),
            };
            Sep41Row {
                id: r.id.to_string(),
                status,
                detail,
            }
        })
        .collect()
}

/// Where and as whom the suite runs for `assay attest --sep41`, `assay verify` and `assay watch`.
#[derive(Debug, Clone)]
pub struct Sep41Runner {
    /// stellar-rpc of the network the token lives on (the registry's).
    pub rpc_url: String,
    /// Its passphrase.
    pub passphrase: String,
    /// The holder's and spender's keys (never printed) for a key-based live run; `None` runs the
    /// suite keyless on a fork of the network, where nothing is signed for it or sent to it.
    pub parties: Option<assay_sep41::live::Parties>,
}

/// The fork's ledger close interval for the suite (as `assay sep41` defaults to).
pub const FORK_LEDGER_CLOSE_MS: u64 = 100;

impl Sep41Runner {
    /// The suite keyless on a fork of the network at `rpc_url`.
    pub fn keyless(rpc_url: &str, passphrase: &str) -> Sep41Runner {
        Sep41Runner {
            rpc_url: rpc_url.into(),
            passphrase: passphrase.into(),
            parties: None,
        }
    }

    /// [`Sep41Runner::with_parties`] on the registry's network `spec` (the contract an asset is keyed by
    /// lives there), refused when the assets live elsewhere (`asset_passphrase`). `key` is the flag or
    /// config key that asked for the suite, and `fix` what to change when the assets live elsewhere.
    pub fn on_registry_network(
        spec: &assay_chain::network::NetworkSpec,
        asset_passphrase: &str,
        parties: (Option<String>, Option<String>, bool),
        key: &str,
        fix: &str,
    ) -> Result<Sep41Runner, crate::AttestError> {
        if asset_passphrase != spec.passphrase {
            return Err(crate::AttestError::Input(format!(
                "{key} runs the conformance suite against the contract on the registry's network, so the \
                 assets must live there: {fix}"
            )));
        }
        let (owner_identity, spender_identity, allow_non_testnet_write) = parties;
        Sep41Runner::with_parties(
            &spec.rpc_url,
            &spec.passphrase,
            owner_identity,
            spender_identity,
            allow_non_testnet_write,
        )
        .map_err(|e| crate::AttestError::Input(format!("{key}: {e}")))
    }

    /// The runner the command line and the watch config ask for: a key-based live run when the
    /// holder's or spender's key is given (a stellar-cli identity, or ASSAY_OWNER_SECRET /
    /// ASSAY_SPENDER_SECRET), behind the consent gate; otherwise keyless on a fork.
    pub fn with_parties(
        rpc_url: &str,
        passphrase: &str,
        owner_identity: Option<String>,
        spender_identity: Option<String>,
        allow_non_testnet_write: bool,
    ) -> Result<Sep41Runner, assay_sep41::live::LiveError> {
        use assay_sep41::live::{self, PartiesInput, PartyInput};
        let parties = live::resolve_parties(&PartiesInput {
            owner: PartyInput {
                address: None,
                identity: owner_identity,
            },
            spender: PartyInput {
                address: None,
                identity: spender_identity,
            },
        })?;
        if !parties.writes() {
            return Ok(Sep41Runner::keyless(rpc_url, passphrase));
        }
        live::consent(passphrase, &parties, allow_non_testnet_write)?;
        Ok(Sep41Runner {
            parties: Some(parties),
            ..Sep41Runner::keyless(rpc_url, passphrase)
        })
    }
}

/// One suite run against an asset's token contract, for output and for the report.
#[derive(Debug, Clone)]
pub struct Sep41Outcome {
    /// The token contract (`C…`).
    pub contract: String,
    /// The suite's report, when it ran.
    pub report: Option<assay_sep41::Report>,
    /// Why it did not run.
    pub error: Option<String>,
    /// The rows that enter the report.
    pub rows: Vec<Sep41Row>,
    /// The fork's snapshot of every entry the run read (the `--fork-cache` file), for a keyless run: an
    /// evidence bundle carries it so the run replays offline ([`replay`]).
    pub snapshot: Option<serde_json::Value>,
    /// The power discovery handed to the suite (its exercised mint and clawback are what the event rows
    /// judge), kept for the replay.
    pub survey: Option<assay_core::powers::PowerSurvey>,
}

/// Check id of the row standing in for a suite that could not start.
pub const SUITE_DID_NOT_RUN: &str = "sep41-suite";
/// Check id of the row added when a fork run's state drifted (`assay_sep41::Report::drifted`): its
/// verdicts rest on entries of two ledgers, so the report is undetermined and never attested.
pub const FORK_DRIFTED: &str = "sep41-fork-drift";

impl Sep41Runner {
    /// Runs the suite against `contract`. A suite that could not start (no contract at the address, network
    /// unreachable) yields one SKIPPED row, so the report is undetermined and never attested.
    pub fn run(&self, contract: [u8; 32]) -> Sep41Outcome {
        self.run_with(contract, None)
    }

    /// [`Sep41Runner::run`], with what an earlier power discovery of the same code observed: the mint and
    /// clawback it exercised are the calls the event rows judge (keyless runs; a keyed live run has none).
    pub fn run_with(
        &self,
        contract: [u8; 32],
        powers: Option<assay_core::powers::PowerSurvey>,
    ) -> Sep41Outcome {
        let address =
            stellar_xdr::ScAddress::Contract(stellar_xdr::ContractId(stellar_xdr::Hash(contract)));
        let contract_text = crate::sac::contract_strkey(contract);
        let report = match &self.parties {
            Some(parties) => {
                assay_sep41::live::run_live(&self.rpc_url, &self.passphrase, &address, parties)
            }
            None => {
                // Recorded into a file of its own, so the evidence bundle can carry what the run read.
                let dir = tempfile::tempdir().ok();
                let cache = dir.as_ref().map(|d| d.path().join("fork-cache.json"));
                let options = assay_sep41::fork::ForkOptions {
                    rpc_url: Some(self.rpc_url.clone()),
                    passphrase: self.passphrase.clone(),
                    ledger: None,
                    cache: cache.clone(),
                    holder: None,
                    ledger_close_ms: FORK_LEDGER_CLOSE_MS,
                    before_suite: powers.clone().map(assay_sep41::BeforeSuite::found),
                };
                let report = assay_sep41::fork::run_fork(&address, &options).map(|run| run.report);
                let mut done = outcome(contract_text, report);
                done.snapshot = cache.and_then(|path| assay_chain::files::read_fork_cache(&path));
                done.survey = powers;
                return done;
            }
        };
        outcome(contract_text, report)
    }
}

/// Runs the suite again, offline, from a recorded fork snapshot (an evidence bundle's): the same fork
/// ledger, the same entries, the same power survey handed over. Nothing reaches a network.
///
/// # Errors
/// [`SnapshotError`] for a snapshot that cannot be written to a temporary file; a suite that cannot start is
/// a SKIPPED row.
pub fn replay(
    contract: [u8; 32],
    passphrase: &str,
    snapshot: &serde_json::Value,
    survey: Option<assay_core::powers::PowerSurvey>,
) -> Result<Sep41Outcome, SnapshotError> {
    let (_dir, cache) = snapshot_file(snapshot, "fork-cache.json")?;
    let address =
        stellar_xdr::ScAddress::Contract(stellar_xdr::ContractId(stellar_xdr::Hash(contract)));
    let options = assay_sep41::fork::ForkOptions {
        rpc_url: None,
        passphrase: passphrase.into(),
        ledger: None,
        cache: Some(cache),
        holder: None,
        ledger_close_ms: FORK_LEDGER_CLOSE_MS,
        before_suite: survey.clone().map(assay_sep41::BeforeSuite::found),
    };
    let report = assay_sep41::fork::run_fork(&address, &options).map(|run| run.report);
    let mut done = outcome(crate::sac::contract_strkey(contract), report);
    done.survey = survey;
    Ok(done)
}

/// `snapshot` written to a file `name` in a fresh temporary directory (the file lives as long as the
/// directory returned), for a fork to replay from.
pub(crate) fn snapshot_file(
    snapshot: &serde_json::Value,
    name: &str,
) -> Result<(tempfile::TempDir, std::path::PathBuf), SnapshotError> {
    let dir = tempfile::tempdir().map_err(SnapshotError::TempDir)?;
    let path = dir.path().join(name);
    match std::fs::write(&path, snapshot.to_string()) {
        Ok(()) => Ok((dir, path)),
        Err(source) => Err(SnapshotError::WriteSnapshot { path, source }),
    }
}

/// The outcome of a suite run: its rows, plus a SKIPPED row for a suite that could not start or a
/// fork run whose state drifted, so neither report is ever attested as determined.
fn outcome(
    contract: String,
    report: Result<assay_sep41::Report, assay_sep41::live::LiveError>,
) -> Sep41Outcome {
    match report {
        Ok(report) => {
            let mut rows = rows_from_suite(&report.results);
            if report.drifted() {
                rows.push(Sep41Row {
                    id: FORK_DRIFTED.into(),
                    status: Sep41Status::Skipped,
                    detail: "entries the suite read changed upstream after the fork ledger".into(),
                });
            }
            Sep41Outcome {
                contract,
                rows,
                report: Some(report),
                error: None,
                snapshot: None,
                survey: None,
            }
        }
        Err(e) => Sep41Outcome {
            contract,
            rows: vec![Sep41Row {
                id: SUITE_DID_NOT_RUN.into(),
                status: Sep41Status::Skipped,
                detail: "the conformance suite could not start".into(),
            }],
            report: None,
            error: Some(e.to_string()),
            snapshot: None,
            survey: None,
        },
    }
}

impl Sep41Outcome {
    /// The `sep41` check over this run, timestamped `at`.
    pub fn check(&self, at: Timestamp) -> Sep41Check {
        Sep41Check {
            contract: self.contract.clone(),
            rows: self.rows.clone(),
            at,
        }
    }

    /// `27 checks: 25 pass, 0 fail, 0 unverifiable, 2 skipped, 0 not implemented`, or why it did not run.
    pub fn summary(&self) -> String {
        match (&self.report, &self.error) {
            (Some(r), _) => {
                let s = r.summary();
                format!(
                    "{} checks: {} pass, {} fail, {} unverifiable, {} skipped, {} not implemented",
                    s.total, s.pass, s.fail, s.unverifiable, s.skipped, s.not_implemented
                )
            }
            (None, Some(e)) => format!("did not run: {e}"),
            (None, None) => "did not run".into(),
        }
    }

    /// The suite's verdict in one word: `conformant`, `violation` or `incomplete`.
    pub fn verdict(&self) -> &'static str {
        match &self.report {
            Some(r) => match r.exit_code() {
                assay_sep41::model::EXIT_CONFORMANT => "conformant",
                assay_sep41::model::EXIT_VIOLATION => "violation",
                _ => "incomplete",
            },
            None => "incomplete",
        }
    }

    /// The JSON object `--output json` carries under `sep41` (`fork`: the ledger forked and the
    /// holder's premise, for a keyless run; null for a key-based one).
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = match &self.report {
            Some(r) => r
                .results
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id,
                        "status": c.status.as_str(),
                        "expected": c.expected,
                        "actual": c.actual,
                        "tx_hash": c.evidence.tx_hash,
                        "ledger": c.evidence.ledger,
                    })
                })
                .collect(),
            None => Vec::new(),
        };
        serde_json::json!({
            "contract": self.contract,
            "fork": self.report.as_ref().and_then(|r| r.fork.as_ref()),
            "verdict": self.verdict(),
            "summary": self.summary(),
            "error": self.error,
            "rows": rows,
            "evidence_lines": self.rows.iter().map(|r| format!("{} {}: {}", r.id, r.status.name(), r.detail)).collect::<Vec<_>>(),
        })
    }

    /// Text lines for people: the summary, then every row that did not pass.
    pub fn render_text(&self, asset: &str) -> String {
        let mut s = format!(
            "{asset}  sep41 {} on {}: {}\n",
            self.verdict(),
            self.contract,
            self.summary()
        );
        if let Some(r) = &self.report {
            for c in r
                .results
                .iter()
                .filter(|c| c.status != assay_sep41::Status::Pass)
            {
                s.push_str(&format!(
                    "    {} {} {}: {}\n",
                    c.status.mark(),
                    c.id,
                    c.status.as_str(),
                    c.actual
                ));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use assay_core::{Mechanics, Rating, Severity};

    fn subject() -> Subject {
        let dir = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/eval/usdz-clawback-verified"
        ));
        assay_core::replay::load_subject(&|name: &str| std::fs::read(dir.join(name)).ok())
            .expect("eval subject")
    }

    fn rows(statuses: &[Sep41Status]) -> Vec<Sep41Row> {
        statuses
            .iter()
            .enumerate()
            .map(|(i, s)| Sep41Row {
                id: format!("c{i}"),
                status: *s,
                detail: "d".into(),
            })
            .collect()
    }

    fn eval(statuses: &[Sep41Status]) -> Report {
        let s = subject();
        let at = s.scanned_at;
        evaluate_with_sep41(
            &s,
            Sep41Check {
                contract: "CTOKEN".into(),
                rows: rows(statuses),
                at,
            },
        )
        .unwrap()
    }

    #[test]
    fn pass_changes_nothing_but_binds_evidence() {
        let plain = assay_core::evaluate(&subject()).unwrap();
        let r = eval(&[Sep41Status::Pass, Sep41Status::Pass]);
        assert_eq!(
            (r.severity, r.base_severity, r.mechanics),
            (plain.severity, plain.base_severity, plain.mechanics)
        );
        assert!(!r.undetermined);
        assert!(r.checks.contains(&"sep41".to_string()));
        assert_eq!(
            r.evidence
                .iter()
                .filter(|e| e.source == SOURCE_SEP41)
                .count(),
            2
        );
        let now = r.scanned_at;
        let a = crate::decide(&r, now, Default::default());
        let b = crate::decide(
            &eval(&[Sep41Status::Pass, Sep41Status::Pass]),
            now,
            Default::default(),
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            crate::decide(&plain, now, Default::default()),
            "the sep41 lines are bound by the hash"
        );
    }

    #[test]
    fn fail_escalates_to_critical_with_bit_8_only() {
        let plain = assay_core::evaluate(&subject()).unwrap();
        let r = eval(&[Sep41Status::Pass, Sep41Status::Fail]);
        assert_eq!(r.severity, Rating::Level(Severity::Critical));
        assert_eq!(r.base_severity, plain.base_severity);
        assert!(r.escalated);
        assert_eq!(
            r.mechanics.bits() & Mechanics::CAPABILITY_MASK,
            plain.mechanics.bits() & Mechanics::CAPABILITY_MASK
        );
        assert!(r.mechanics.has(Mechanics::SEP41_VIOLATION));
        assert!(crate::decide(&r, r.scanned_at, Default::default()).is_attest());
    }

    fn suite_row(
        id: &'static str,
        status: assay_sep41::Status,
        actual: &str,
    ) -> assay_sep41::CheckResult {
        let def = assay_sep41::CHECKS.iter().find(|c| c.id == id).unwrap();
        assay_sep41::CheckResult {
            id,
            clause: def.clause,
            layer: def.layer,
            requirement: def.expected,
            status,
            expected: def.expected,
            actual: actual.into(),
            evidence: Default::default(),
            duration_ms: 7,
        }
    }

    #[test]
    fn suite_rows_bind_verdicts_not_run_details() {
        use assay_sep41::Status;
        let a = rows_from_suite(&[
            suite_row("sep41-transfer", Status::Pass, "holder 5 → 4"),
            suite_row("sep41-burn", Status::NotImplemented, "no burn in the spec"),
            suite_row("sep41-approve", Status::Unverifiable, "no key"),
        ]);
        let b = rows_from_suite(&[
            suite_row("sep41-transfer", Status::Pass, "holder 4 → 3"),
            suite_row("sep41-burn", Status::NotImplemented, "other text"),
            suite_row("sep41-approve", Status::Unverifiable, "still no key"),
        ]);
        assert_eq!(a, b, "observed numbers stay out of the bound lines");
        assert_eq!(
            a[0],
            Sep41Row {
                id: "sep41-transfer".into(),
                status: Sep41Status::Pass,
                detail: "requires holder -1, recipient +1".into(),
            }
        );
        assert_eq!(
            a[1].status,
            Sep41Status::Fail,
            "a missing member is a violation"
        );
        assert_eq!(
            a[1].detail,
            "not implemented: the contract spec lacks `burn`"
        );
        assert_eq!(a[2].status, Sep41Status::Unverifiable);
        let c = rows_from_suite(&[suite_row("sep41-transfer", Status::Fail, "holder 5 → 5")]);
        assert_ne!(a[0], c[0], "a different verdict is a different line");
    }

    #[test]
    fn unverifiable_or_skipped_is_undetermined_and_refused() {
        for s in [Sep41Status::Unverifiable, Sep41Status::Skipped] {
            let r = eval(&[Sep41Status::Pass, s]);
            assert!(r.undetermined && r.undetermined_checks.contains(&"sep41".to_string()));
            let d = crate::decide(&r, r.scanned_at, Default::default());
            assert!(
                matches!(
                    d,
                    crate::Decision::Refuse(assay_core::Refusal::Undetermined { .. })
                ),
                "{d:?}"
            );
        }
        // A FAIL is the ceiling: beside open rows the report is critical, determined and attested.
        let r = eval(&[Sep41Status::Fail, Sep41Status::Skipped]);
        assert!(!r.undetermined && r.mechanics.has(Mechanics::SEP41_VIOLATION));
        assert_eq!(r.severity, Rating::Level(Severity::Critical));
        assert!(crate::decide(&r, r.scanned_at, Default::default()).is_attest());
    }

    #[test]
    fn a_drifted_fork_run_is_never_attested_and_rows_without_a_power_stay_out() {
        use assay_sep41::Status;
        let report = |drifted: Vec<String>| assay_sep41::Report {
            contract_id: "CTOKEN".into(),
            network: "n".into(),
            ran_at: "t".into(),
            results: vec![
                suite_row("sep41-transfer", Status::Pass, "holder -1, recipient +1"),
                suite_row(
                    "sep41-events-mint",
                    Status::Skipped,
                    "no mint power observed",
                ),
            ],
            fork: Some(assay_sep41::model::ForkFacts {
                ledger: 9,
                premise: "mint",
                detail: "1000 units minted".into(),
                repinned_from: vec![8],
                drifted,
            }),
        };
        let held = outcome("CTOKEN".into(), Ok(report(vec![])));
        let ids: Vec<&str> = held.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            ["sep41-transfer"],
            "no power observed: nothing to bind"
        );
        assert_eq!(held.verdict(), "conformant");

        let drifted = outcome("CTOKEN".into(), Ok(report(vec!["AAAA".into()])));
        assert_eq!(drifted.verdict(), "incomplete");
        let last = drifted.rows.last().unwrap();
        assert_eq!(
            (last.id.as_str(), last.status),
            (FORK_DRIFTED, Sep41Status::Skipped)
        );
        let s = subject();
        let r = evaluate_with_sep41(&s, drifted.check(s.scanned_at)).unwrap();
        assert!(r.undetermined, "{:?}", r.undetermined_checks);
        assert!(!crate::decide(&r, r.scanned_at, Default::default()).is_attest());
    }
}
