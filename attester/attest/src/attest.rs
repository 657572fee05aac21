//! `assay attest`: decide per asset, batch the attestable ones through `attest_many`, confirm, and say
//! per asset what was written or why not. Nothing reaches a [`Submitter`] unless [`decide`] said attest.

use assay_core::{Freshness, Params, Report, Timestamp};
use serde::Serialize;

use crate::decide::{decide, Decision, Floor};
use crate::registry::{self, Attestation, Safety, MAX_BATCH_SIZE};
use crate::targets::Target;
use crate::AttestError;
use assay_chain::submit::{ChainError, Confirmed, Invoker};

/// Writes batches. The real one signs and sends; tests record.
pub trait Submitter {
    /// Simulates only: the minimum resource fee the batch needs.
    fn simulate(&mut self, batch: &[Attestation]) -> Result<i64, ChainError>;
    /// Sends and confirms one `attest_many`, then reads it back.
    fn submit(&mut self, batch: &[Attestation]) -> Result<Submitted, ChainError>;
    /// This attester's own verdict on `asset` (`get_safety_by`, by simulation; nothing is signed).
    fn read(&mut self, asset: [u8; 32]) -> Result<Option<Safety>, ChainError>;
    /// Sends and confirms one `revoke` of `asset`'s entry.
    fn revoke(&mut self, asset: [u8; 32]) -> Result<Confirmed, ChainError>;
}

/// A confirmed `attest_many` and what reading it back found.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The transaction, confirmed successful on chain: the batch is written.
    pub confirmed: Confirmed,
    /// `Err(why)` when the read-back failed or disagreed; the write itself still happened.
    pub read_back: Result<(), ReadBackError>,
}

/// Why a confirmed write could not be confirmed by reading it back. The write itself happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadBackError {
    /// The entry reads as something other than what was written.
    #[error("transaction {tx} succeeded but get_safety_by now reads {read} for {asset}")]
    Differs {
        /// The confirmed transaction.
        tx: String,
        /// The asset's contract (`C…`).
        asset: String,
        /// What the registry reads now.
        read: String,
    },
    /// The read failed.
    #[error("transaction {tx} succeeded but reading {asset} back failed: {message}")]
    Unread {
        /// The confirmed transaction.
        tx: String,
        /// The asset's contract (`C…`).
        asset: String,
        /// Why the read failed.
        message: String,
    },
}

/// True when `held` is exactly the attestation `a` (severity, flags and evidence hash).
pub fn holds(held: &Safety, a: &Attestation) -> bool {
    held.severity == a.severity && held.flags == a.flags && held.evidence_hash == a.evidence_hash
}

/// What a confirmed write put on chain, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write {
    /// Parameters written.
    pub severity: u32,
    /// Severity name.
    pub severity_name: String,
    /// Flags.
    pub flags: u32,
    /// Evidence hash (hex).
    pub evidence_hash: String,
    /// Preimage version.
    pub evidence_version: u8,
    /// Transaction hash.
    pub tx_hash: String,
    /// Ledger.
    pub ledger: u32,
}

impl Write {
    /// The write of `params` confirmed in `confirmed`.
    fn of(params: &Params, confirmed: &Confirmed) -> Write {
        Write {
            severity: params.severity,
            severity_name: params.severity_name.clone(),
            flags: params.flags,
            evidence_hash: params.evidence_hash.clone(),
            evidence_version: params.evidence_version,
            tx_hash: confirmed.hash.clone(),
            ledger: confirmed.ledger,
        }
    }
}

/// What happened to one asset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Written and confirmed.
    Written(Write),
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
    /// Written and confirmed on chain, but reading the value back failed: it was written; check it
    /// with `assay verify` (never resend it).
    WrittenUnconfirmed {
        /// What was written.
        #[serde(flatten)]
        write: Write,
        /// Why the read-back did not confirm it.
        reason: String,
    },
    /// Not attestable, and the registry held a weaker entry than the refused report's capability floor
    /// proves: the entry was revoked so gates fail closed (an alert).
    Revoked {
        /// The refusal rule.
        rule: String,
        /// The refusal reason.
        reason: String,
        /// What the refused report proves.
        floor: Floor,
        /// The severity of the revoked entry.
        revoked_severity: u32,
        /// The flags of the revoked entry.
        revoked_flags: u32,
        /// The revoke transaction.
        tx_hash: String,
        /// Its ledger.
        ledger: u32,
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
    reports: Vec<Result<Report, AttestError>>,
    as_of: Timestamp,
    freshness: Freshness,
) -> (Vec<Planned>, Vec<Option<Outcome>>) {
    let mut planned = Vec::new();
    let mut outcomes = vec![None; targets.len()];
    for (index, (target, report)) in targets.iter().zip(reports).enumerate() {
        let report = match report {
            Ok(r) => r,
            Err(reason) => {
                outcomes[index] = Some(Outcome::NoReport {
                    reason: reason.to_string(),
                });
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
                let code = match registry::CodeBinding::judged_by(&report) {
                    Ok(code) => code,
                    Err(reason) => {
                        outcomes[index] = Some(Outcome::Refused {
                            rule: "code-binding".into(),
                            reason: reason.to_string(),
                        });
                        continue;
                    }
                };
                let mut hash = [0u8; 32];
                hex::decode_to_slice(&params.evidence_hash, &mut hash)
                    .expect("core hashes are 64 hex digits");
                let attestation = Attestation {
                    asset: target.contract,
                    severity: params.severity,
                    flags: params.flags,
                    evidence_hash: hash,
                    code,
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
                Ok(Submitted {
                    confirmed: c,
                    read_back: Ok(()),
                }) => Outcome::Written(Write::of(&p.params, c)),
                Ok(Submitted {
                    confirmed: c,
                    read_back: Err(why),
                }) => Outcome::WrittenUnconfirmed {
                    write: Write::of(&p.params, c),
                    reason: why.to_string(),
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

/// Revokes the entry of every refused asset whose report proves more than the registry holds
/// (`floors[i]` is asset `i`'s [`Floor`], from its report before planning). A refused report is never
/// written, but leaving a weaker entry in place would let gates admit an issuer that can now freeze or
/// claw back; revoking is the one write that claims nothing, and gates fail closed on the absence. Each
/// revocation is an alert on stderr. With `dry_run` nothing is sent and the outcome stays refused.
pub fn revoke_weaker_entries<S: Submitter>(
    targets: &[Target],
    floors: &[Option<Floor>],
    mut outcomes: Vec<Outcome>,
    submitter: &mut S,
    dry_run: bool,
) -> Vec<Outcome> {
    for (i, (target, floor)) in targets.iter().zip(floors).enumerate() {
        let (Some(floor), Some(Outcome::Refused { rule, reason })) = (floor, outcomes.get(i))
        else {
            continue;
        };
        let (rule, reason) = (rule.clone(), reason.clone());
        let held = match submitter.read(target.contract) {
            Ok(Some(held)) if floor.exceeds(&held) => held,
            Ok(_) => continue,
            Err(e) => {
                outcomes[i] = Outcome::Failed {
                    reason: format!(
                        "refused ({rule}); the registry could not be read to compare its entry with the \
                         capability the scan did read: {}",
                        explain(&e)
                    ),
                };
                continue;
            }
        };
        let alert = format!(
            "ALERT {}: refused ({rule}), yet its issuer flags prove severity {} / capability bits {}, more than \
             the registry holds (severity {}, flags {})",
            target.asset, floor.severity, floor.flags, held.severity, held.flags
        );
        if dry_run {
            eprintln!("assay attest: {alert}; --dry-run: the entry would be revoked");
            continue;
        }
        outcomes[i] = match submitter.revoke(target.contract) {
            Ok(c) => {
                eprintln!("assay attest: {alert}; revoked in tx {}", c.hash);
                Outcome::Revoked {
                    rule,
                    reason,
                    floor: *floor,
                    revoked_severity: held.severity,
                    revoked_flags: held.flags,
                    tx_hash: c.hash,
                    ledger: c.ledger,
                }
            }
            Err(ChainError::Unknown { hash, detail }) => {
                eprintln!("assay attest: {alert}; the revoke's outcome is unknown");
                let reason = explain(&ChainError::Unknown {
                    hash: hash.clone(),
                    detail,
                });
                Outcome::Unknown {
                    tx_hash: hash,
                    reason: format!("revoking the weaker entry: {reason}"),
                }
            }
            Err(e) => {
                eprintln!("assay attest: {alert}; revoking it failed");
                Outcome::Failed {
                    reason: format!(
                        "refused ({rule}) and the weaker on-chain entry could not be revoked: {}",
                        explain(&e)
                    ),
                }
            }
        };
    }
    outcomes
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
    /// Read back this attester's verdict (`get_safety_by`) after a write and fail if it disagrees.
    pub confirm_read_back: bool,
}

impl Submitter for ChainSubmitter<'_> {
    fn simulate(&mut self, batch: &[Attestation]) -> Result<i64, ChainError> {
        let f = registry::attest_many(self.registry, self.invoker.signer.public_key(), batch);
        Ok(self.invoker.simulate(&f)?.min_resource_fee)
    }

    fn submit(&mut self, batch: &[Attestation]) -> Result<Submitted, ChainError> {
        let f = registry::attest_many(self.registry, self.invoker.signer.public_key(), batch);
        let confirmed = self.invoker.invoke(&f)?;
        let read_back = if self.confirm_read_back {
            self.read_back(batch, &confirmed.hash)
        } else {
            Ok(())
        };
        Ok(Submitted {
            confirmed,
            read_back,
        })
    }

    /// An unsigned, sourceless simulation of `get_safety_by(asset, signer)`: nothing is signed for
    /// a read, and another attester's verdict never stands for this one's.
    fn read(&mut self, asset: [u8; 32]) -> Result<Option<Safety>, ChainError> {
        let attester = self.invoker.signer.public_key();
        registry::read_safety_by(self.invoker.rpc, self.registry, asset, attester)
            .map_err(|e| ChainError::Simulation(e.to_string()))
    }

    fn revoke(&mut self, asset: [u8; 32]) -> Result<Confirmed, ChainError> {
        let f = registry::revoke(self.registry, self.invoker.signer.public_key(), asset);
        self.invoker.invoke(&f)
    }
}

impl ChainSubmitter<'_> {
    /// Reads back every asset of a confirmed batch, in one batched `getLedgerEntries` (an entry it cannot
    /// answer, archived or after a failed read, is read on its own). An error here never means "not
    /// written": the transaction `tx` succeeded on chain.
    fn read_back(&mut self, batch: &[Attestation], tx: &str) -> Result<(), ReadBackError> {
        // The last write of an asset wins inside a batch, so compare against that one.
        let last: std::collections::BTreeMap<[u8; 32], &Attestation> =
            batch.iter().map(|a| (a.asset, a)).collect();
        let assets: Vec<[u8; 32]> = last.keys().copied().collect();
        let attester = self.invoker.signer.public_key();
        let held = registry::read_safety_many(self.invoker.rpc, self.registry, &assets, attester)
            .unwrap_or_default();
        for (asset, a) in last {
            let read = match held.get(&asset) {
                Some(h) => Ok(h.clone()),
                None => self.read(asset),
            };
            let name = crate::sac::contract_strkey(asset);
            match read {
                Ok(Some(s)) if holds(&s, a) => {}
                Ok(other) => {
                    return Err(ReadBackError::Differs {
                        tx: tx.to_string(),
                        asset: name,
                        read: format!("{other:?}"),
                    })
                }
                Err(e) => {
                    return Err(ReadBackError::Unread {
                        tx: tx.to_string(),
                        asset: name,
                        // The read's own "nothing was submitted" is about the read, not the write.
                        message: e
                            .to_string()
                            .trim_end_matches("; nothing was submitted")
                            .to_string(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Exit codes of `assay attest`.
pub mod exit {
    /// Every asset was written (or, with `--dry-run`, simulated).
    pub const ALL_WRITTEN: u8 = assay_core::exit::OK;
    /// A scan or chain step failed for an attestable asset: nothing was written for it.
    pub const ERROR: u8 = assay_core::exit::ERROR;
    /// At least one asset was refused as not attestable; every other asset was written.
    pub const REFUSED: u8 = assay_core::exit::NEGATIVE;
    /// A transaction was sent but its outcome is unknown: check the printed hash before retrying.
    pub const UNKNOWN: u8 = assay_core::exit::OUTCOME_UNKNOWN;
    /// A write was confirmed on chain but reading it back failed: it is written (the hash is printed);
    /// check it with `assay verify`, do not resend it.
    pub const WRITTEN_UNCONFIRMED: u8 = assay_core::exit::WRITTEN_UNCONFIRMED;
}

/// The exit code for a set of outcomes: unknown beats error beats written-unconfirmed beats refused
/// (a revocation is a refusal) beats success.
pub fn exit_code(outcomes: &[Outcome]) -> u8 {
    let has = |f: fn(&Outcome) -> bool| outcomes.iter().any(f);
    if has(|o| matches!(o, Outcome::Unknown { .. })) {
        exit::UNKNOWN
    } else if has(|o| matches!(o, Outcome::Failed { .. } | Outcome::NoReport { .. })) {
        exit::ERROR
    } else if has(|o| matches!(o, Outcome::WrittenUnconfirmed { .. })) {
        exit::WRITTEN_UNCONFIRMED
    } else if has(|o| matches!(o, Outcome::Refused { .. } | Outcome::Revoked { .. })) {
        exit::REFUSED
    } else {
        exit::ALL_WRITTEN
    }
}

/// One line per asset for people.
pub fn render_text(r: &AssetResult) -> String {
    match &r.outcome {
        Outcome::Written(Write { severity_name, flags, evidence_hash, tx_hash, ledger, .. }) => format!(
            "{}  written: severity {severity_name}, flags {flags}, hash {evidence_hash}, tx {tx_hash}, ledger {ledger} ({})\n",
            r.asset, r.contract
        ),
        Outcome::Simulated { severity_name, flags, evidence_hash, batch_min_resource_fee, .. } => format!(
            "{}  dry run (not sent): severity {severity_name}, flags {flags}, hash {evidence_hash}; batch min resource fee {batch_min_resource_fee} stroops ({})\n",
            r.asset, r.contract
        ),
        Outcome::WrittenUnconfirmed { write: Write { severity_name, flags, evidence_hash, tx_hash, ledger, .. }, reason } => format!(
            "{}  written, NOT READ BACK: severity {severity_name}, flags {flags}, hash {evidence_hash}, tx {tx_hash}, ledger {ledger} ({}): {reason}; check it with `assay verify`, do not resend\n",
            r.asset, r.contract
        ),
        Outcome::Refused { rule, reason } => format!("{}  not attested ({rule}): {reason}\n", r.asset),
        Outcome::Revoked { rule, reason, floor, revoked_severity, revoked_flags, tx_hash, ledger } => format!(
            "{}  not attested ({rule}): {reason}; REVOKED the weaker entry (severity {revoked_severity}, flags {revoked_flags}; the scan proves severity {}, capability bits {}) in tx {tx_hash}, ledger {ledger}\n",
            r.asset, floor.severity, floor.flags
        ),
        Outcome::NoReport { reason } => format!("{}  not attested (no report): {reason}\n", r.asset),
        Outcome::Failed { reason } => format!("{}  not attested (chain): {reason}\n", r.asset),
        Outcome::Unknown { tx_hash, reason } => format!("{}  OUTCOME UNKNOWN for tx {tx_hash}: {reason}\n", r.asset),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_serializes_flat_beside_its_status() {
        let write = Write {
            severity: 1,
            severity_name: "low".into(),
            flags: 4,
            evidence_hash: "ab".into(),
            evidence_version: 3,
            tx_hash: "cd".into(),
            ledger: 7,
        };
        let fields = r#""severity":1,"severity_name":"low","flags":4,"evidence_hash":"ab","evidence_version":3,"tx_hash":"cd","ledger":7"#;
        assert_eq!(
            serde_json::to_string(&Outcome::Written(write.clone())).unwrap(),
            format!(r#"{{"status":"written",{fields}}}"#)
        );
        let unconfirmed = Outcome::WrittenUnconfirmed {
            write,
            reason: "read back failed".into(),
        };
        assert_eq!(
            serde_json::to_string(&unconfirmed).unwrap(),
            format!(r#"{{"status":"written_unconfirmed",{fields},"reason":"read back failed"}}"#)
        );
    }
}
