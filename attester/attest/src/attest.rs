//! `assay attest`: decide per asset, batch the attestable ones through `attest_many`, confirm, and say
//! per asset what was written or why not. Nothing reaches a [`Submitter`] unless [`decide`] said attest.

use assay_core::{Freshness, Params, Report, Timestamp, Token};
use serde::Serialize;

use crate::decide::{decide, Decision};
use crate::registry::{self, Attestation, MAX_BATCH_SIZE};
use assay_chain::submit::{ChainError, Confirmed, Invoker};

/// Writes batches. The real one signs and sends; tests record.
pub trait Submitter {
    /// Simulates only: the minimum resource fee the batch needs.
    fn simulate(&mut self, batch: &[Attestation]) -> Result<i64, ChainError>;
    /// Sends and confirms one `attest_many`.
    fn submit(&mut self, batch: &[Attestation]) -> Result<Confirmed, ChainError>;
}

/// An asset to attest: what to scan and which contract address to key it by.
#[derive(Debug, Clone)]
pub struct Target {
    /// The classic asset, or the token contract itself.
    pub asset: Token,
    /// Its SAC id on the registry's network.
    pub contract: [u8; 32],
}

/// What happened to one asset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Written and confirmed.
    Written {
        /// Parameters written.
        severity: u32,
        /// Severity name.
        severity_name: String,
        /// Flags.
        flags: u32,
        /// Evidence hash (hex).
        evidence_hash: String,
        /// Preimage version.
        evidence_version: u8,
        /// Transaction hash.
        tx_hash: String,
        /// Ledger.
        ledger: u32,
    },
    /// Would be written (`--dry-run`); the batch simulated successfully.
    Simulated {
        /// Severity.
        severity: u32,
        /// Severity name.
        severity_name: String,
        /// Flags.
        flags: u32,
        /// Evidence hash (hex).
        evidence_hash: String,
        /// Minimum resource fee of the whole batch, in stroops.
        batch_min_resource_fee: i64,
    },
    /// Not attestable: the rule and the reason.
    Refused {
        /// `unevaluated` / `stale` / `undetermined` / `inconsistent`.
        rule: String,
        /// Full reason.
        reason: String,
    },
    /// No report (a mandatory source failed).
    NoReport {
        /// Why.
        reason: String,
    },
    /// Attestable, but the chain step failed and nothing was written.
    Failed {
        /// Why.
        reason: String,
    },
    /// Sent, outcome unknown: may have been written. Check the hash.
    Unknown {
        /// Transaction hash.
        tx_hash: String,
        /// Why.
        reason: String,
    },
}

/// One asset's line in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssetResult {
    /// `CODE-ISSUER`.
    pub asset: String,
    /// The `C…` address it is keyed by.
    pub contract: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// A decided, attestable item waiting for a batch.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Index in the input.
    pub index: usize,
    /// What the core derived.
    pub params: Params,
    /// The on-chain value.
    pub attestation: Attestation,
}

/// Decides every asset. Returns the attestable items and a result slot per asset (filled for the refused).
pub fn plan(
    targets: &[Target],
    reports: Vec<Result<Report, String>>,
    as_of: Timestamp,
    freshness: Freshness,
) -> (Vec<Planned>, Vec<Option<Outcome>>) {
    let mut planned = Vec::new();
    let mut outcomes = vec![None; targets.len()];
    for (index, (target, report)) in targets.iter().zip(reports).enumerate() {
        let report = match report {
            Ok(r) => r,
            Err(reason) => {
                outcomes[index] = Some(Outcome::NoReport { reason });
                continue;
            }
        };
        match decide(&report, as_of, freshness) {
            Decision::Refuse(r) => {
                outcomes[index] = Some(Outcome::Refused {
                    rule: r.rule().into(),
                    reason: r.to_string(),
                });
            }
            Decision::Attest(params) => {
                let mut hash = [0u8; 32];
                hex::decode_to_slice(&params.evidence_hash, &mut hash)
                    .expect("core hashes are 64 hex digits");
                let attestation = Attestation {
                    asset: target.contract,
                    severity: params.severity,
                    flags: params.flags,
                    evidence_hash: hash,
                };
                planned.push(Planned {
                    index,
                    params,
                    attestation,
                });
            }
        }
    }
    (planned, outcomes)
}

/// Sends the planned items in batches of at most `batch_size` (capped at [`MAX_BATCH_SIZE`]), or only
/// simulates them with `dry_run`, and fills in every outcome.
pub fn execute<S: Submitter>(
    planned: &[Planned],
    mut outcomes: Vec<Option<Outcome>>,
    submitter: &mut S,
    batch_size: usize,
    dry_run: bool,
) -> Vec<Outcome> {
    let size = batch_size.clamp(1, MAX_BATCH_SIZE);
    for chunk in planned.chunks(size) {
        let batch: Vec<Attestation> = chunk.iter().map(|p| p.attestation.clone()).collect();
        if dry_run {
            let result = submitter.simulate(&batch);
            for p in chunk {
                outcomes[p.index] = Some(match &result {
                    Ok(fee) => Outcome::Simulated {
                        severity: p.params.severity,
                        severity_name: p.params.severity_name.clone(),
                        flags: p.params.flags,
                        evidence_hash: p.params.evidence_hash.clone(),
                        batch_min_resource_fee: *fee,
                    },
                    Err(e) => Outcome::Failed { reason: explain(e) },
                });
            }
            continue;
        }
        let result = submitter.submit(&batch);
        for p in chunk {
            outcomes[p.index] = Some(match &result {
                Ok(c) => Outcome::Written {
                    severity: p.params.severity,
                    severity_name: p.params.severity_name.clone(),
                    flags: p.params.flags,
                    evidence_hash: p.params.evidence_hash.clone(),
                    evidence_version: p.params.evidence_version,
                    tx_hash: c.hash.clone(),
                    ledger: c.ledger,
                },
                Err(e @ ChainError::Unknown { hash, .. }) => Outcome::Unknown {
                    tx_hash: hash.clone(),
                    reason: explain(e),
                },
                Err(e) => Outcome::Failed { reason: explain(e) },
            });
        }
    }
    outcomes
        .into_iter()
        .map(|o| {
            o.unwrap_or(Outcome::Failed {
                reason: "internal: asset was neither planned nor refused".into(),
            })
        })
        .collect()
}

/// An error with registry codes named.
pub fn explain(e: &ChainError) -> String {
    match e {
        ChainError::Simulation(text) => match assay_chain::submit::contract_error_code(text) {
            Some(code) => format!(
                "{e} — registry error {code}: {}",
                registry::registry_error(code)
            ),
            None => e.to_string(),
        },
        _ => e.to_string(),
    }
}

/// The real submitter: `attest_many` from the signer's account, which is also the attester.
pub struct ChainSubmitter<'a> {
    /// Transaction path.
    pub invoker: Invoker<'a>,
    /// Registry contract id.
    pub registry: [u8; 32],
    /// Read back `get_safety` after a write and fail if it disagrees.
    pub confirm_read_back: bool,
}

impl Submitter for ChainSubmitter<'_> {
    fn simulate(&mut self, batch: &[Attestation]) -> Result<i64, ChainError> {
        let f = registry::attest_many(self.registry, self.invoker.signer.public_key(), batch);
        Ok(self.invoker.simulate(&f)?.min_resource_fee)
    }

    fn submit(&mut self, batch: &[Attestation]) -> Result<Confirmed, ChainError> {
        let f = registry::attest_many(self.registry, self.invoker.signer.public_key(), batch);
        let confirmed = self.invoker.invoke(&f)?;
        if self.confirm_read_back {
            // The last write of an asset wins inside a batch, so compare against that one.
            for a in batch.iter().rev() {
                if batch.iter().rev().position(|b| b.asset == a.asset)
                    != batch.iter().rev().position(|b| b == a)
                {
                    continue;
                }
                let read = self
                    .invoker
                    .read(&registry::get_safety(self.registry, a.asset))?;
                let safety = read
                    .as_ref()
                    .map(registry::decode_safety)
                    .transpose()
                    .map_err(ChainError::Simulation)?
                    .flatten();
                match safety {
                    Some(s)
                        if s.severity == a.severity
                            && s.flags == a.flags
                            && s.evidence_hash == a.evidence_hash => {}
                    other => {
                        return Err(ChainError::Simulation(format!(
                            "transaction {} succeeded but get_safety now reads {:?} for {}",
                            confirmed.hash,
                            other,
                            crate::sac::contract_strkey(a.asset)
                        )))
                    }
                }
            }
        }
        Ok(confirmed)
    }
}

/// Exit codes of `assay attest`.
pub mod exit {
    /// Every asset was written (or, with `--dry-run`, simulated).
    pub const ALL_WRITTEN: u8 = 0;
    /// A scan or chain step failed for an attestable asset: nothing was written for it.
    pub const ERROR: u8 = 1;
    /// At least one asset was refused as not attestable; every other asset was written.
    pub const REFUSED: u8 = 2;
    /// A transaction was sent but its outcome is unknown: check the printed hash before retrying.
    pub const UNKNOWN: u8 = 3;
}

/// The exit code for a set of outcomes: unknown beats error beats refused beats success.
pub fn exit_code(outcomes: &[Outcome]) -> u8 {
    let has = |f: fn(&Outcome) -> bool| outcomes.iter().any(f);
    if has(|o| matches!(o, Outcome::Unknown { .. })) {
        exit::UNKNOWN
    } else if has(|o| matches!(o, Outcome::Failed { .. } | Outcome::NoReport { .. })) {
        exit::ERROR
    } else if has(|o| matches!(o, Outcome::Refused { .. })) {
        exit::REFUSED
    } else {
        exit::ALL_WRITTEN
    }
}

/// One line per asset for people.
pub fn render_text(r: &AssetResult) -> String {
    match &r.outcome {
        Outcome::Written { severity_name, flags, evidence_hash, tx_hash, ledger, .. } => format!(
            "{}  written: severity {severity_name}, flags {flags}, hash {evidence_hash}, tx {tx_hash}, ledger {ledger} ({})\n",
            r.asset, r.contract
        ),
        Outcome::Simulated { severity_name, flags, evidence_hash, batch_min_resource_fee, .. } => format!(
            "{}  dry run (not sent): severity {severity_name}, flags {flags}, hash {evidence_hash}; batch min resource fee {batch_min_resource_fee} stroops ({})\n",
            r.asset, r.contract
        ),
        Outcome::Refused { rule, reason } => format!("{}  not attested ({rule}): {reason}\n", r.asset),
        Outcome::NoReport { reason } => format!("{}  not attested (no report): {reason}\n", r.asset),
        Outcome::Failed { reason } => format!("{}  not attested (chain): {reason}\n", r.asset),
        Outcome::Unknown { tx_hash, reason } => format!("{}  OUTCOME UNKNOWN for tx {tx_hash}: {reason}\n", r.asset),
    }
}
