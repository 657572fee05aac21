//! The writes of a pass, grouped into `attest_many` transactions of at most the registry's cap
//! ([`MAX_BATCH_SIZE`]). A batch the registry refuses because of one of its entries is split in halves
//! and each half sent again, down to the single entry, so one bad write never costs the others theirs;
//! the outcome is then said per asset. A batch that may have applied is never re-sent.

use assay_chain::submit::ChainError;

use crate::attest::{explain, Submitted, Submitter};
use crate::registry::{Attestation, MAX_BATCH_SIZE};

/// What became of one write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landed {
    /// Confirmed in `tx` and read back.
    Written {
        /// Transaction hash.
        tx: String,
        /// Ledger it applied in.
        ledger: u32,
    },
    /// Confirmed in `tx`, but reading the batch back failed (`why`): written, not to be re-sent blindly.
    WrittenUnconfirmed {
        /// Transaction hash.
        tx: String,
        /// Ledger it applied in.
        ledger: u32,
        /// What the read-back found.
        why: String,
    },
    /// Not written (the error, with the registry's code named).
    Failed(String),
    /// Sent, outcome unknown: never re-sent blindly.
    Unknown(String),
    /// Not sent: the caller's spend budget had no room ([`ChainError::OverBudget`]); nothing was signed,
    /// and the write is the caller's to try again.
    Deferred(String),
}

/// Every write's outcome, in input order, and how many transactions were sent for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batched {
    /// One per input attestation.
    pub landed: Vec<Landed>,
    /// `attest_many` transactions sent to the network (confirmed, failed there, or of unknown outcome);
    /// a batch refused in simulation was never sent and is not counted.
    pub transactions: usize,
    /// Batches tried, the refused ones included.
    pub attempts: usize,
    /// Batches that failed and were split.
    pub splits: usize,
}

/// Whether a failed batch may have failed because of one of its entries, so that halves can succeed: the
/// registry refused an entry (a contract error in simulation), the transaction failed on chain (a
/// resource limit), or its fee was over the cap (smaller batches cost less). Transport and envelope
/// failures would fail every half alike; a batch that may have applied is never re-sent.
fn splittable(e: &ChainError) -> bool {
    matches!(
        e,
        ChainError::Simulation(_) | ChainError::Failed { .. } | ChainError::FeeOverCap { .. }
    )
}

/// Sends `writes` in `attest_many` transactions of at most `cap` (clamped to 1..=[`MAX_BATCH_SIZE`]),
/// splitting a refused batch until the entry at fault stands alone.
pub fn write_batched<S: Submitter>(
    submitter: &mut S,
    writes: &[Attestation],
    cap: usize,
) -> Batched {
    let mut out = Batched {
        landed: Vec::with_capacity(writes.len()),
        transactions: 0,
        attempts: 0,
        splits: 0,
    };
    for chunk in writes.chunks(cap.clamp(1, MAX_BATCH_SIZE)) {
        send(submitter, chunk, &mut out);
    }
    out
}

/// Whether a batch's transaction reached the network.
fn sent(result: &Result<Submitted, ChainError>) -> bool {
    matches!(
        result,
        Ok(_)
            | Err(ChainError::Failed { .. }
                | ChainError::Unknown { .. }
                | ChainError::Rejected { .. }
                | ChainError::Expired { .. })
    )
}

fn send<S: Submitter>(submitter: &mut S, batch: &[Attestation], out: &mut Batched) {
    out.attempts += 1;
    let result = submitter.submit(batch);
    if sent(&result) {
        out.transactions += 1;
    }
    let landed = match result {
        Ok(Submitted {
            confirmed,
            read_back,
        }) => match read_back {
            Ok(()) => Landed::Written {
                tx: confirmed.hash,
                ledger: confirmed.ledger,
            },
            Err(why) => Landed::WrittenUnconfirmed {
                tx: confirmed.hash,
                ledger: confirmed.ledger,
                why: why.to_string(),
            },
        },
        Err(e) if batch.len() > 1 && splittable(&e) => {
            out.splits += 1;
            let (left, right) = batch.split_at(batch.len() / 2);
            send(submitter, left, out);
            send(submitter, right, out);
            return;
        }
        Err(ChainError::OverBudget(why)) => Landed::Deferred(why),
        Err(e) if e.may_have_written() => Landed::Unknown(e.to_string()),
        Err(e) => Landed::Failed(explain(&e)),
    };
    out.landed.extend(std::iter::repeat_n(landed, batch.len()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Safety;
    use assay_chain::submit::Confirmed;

    /// Refuses (as the registry would, in simulation) any batch holding an entry of severity 9, and can
    /// lose a transaction's outcome.
    #[derive(Default)]
    struct Registry {
        sent: Vec<usize>,
        unknown: bool,
    }

    impl Submitter for Registry {
        fn simulate(&mut self, _: &[Attestation]) -> Result<i64, ChainError> {
            Ok(1)
        }
        fn submit(&mut self, batch: &[Attestation]) -> Result<Submitted, ChainError> {
            self.sent.push(batch.len());
            if batch.iter().any(|a| a.severity > 4) {
                return Err(ChainError::Simulation(
                    "HostError: Error(Contract, #3)".into(),
                ));
            }
            if self.unknown {
                return Err(ChainError::Unknown {
                    hash: "cd".repeat(32),
                    detail: "timeout".into(),
                });
            }
            Ok(Submitted {
                confirmed: Confirmed {
                    hash: format!("tx{}", self.sent.len()),
                    ledger: 7,
                    created_at: None,
                    return_value: None,
                    fee: 100,
                },
                read_back: Ok(()),
            })
        }
        fn read(&mut self, _: [u8; 32]) -> Result<Option<Safety>, ChainError> {
            Ok(None)
        }
        fn revoke(&mut self, _: [u8; 32]) -> Result<Confirmed, ChainError> {
            unreachable!("batches never revoke")
        }
    }

    fn writes(n: usize, bad: &[usize]) -> Vec<Attestation> {
        (0..n)
            .map(|i| Attestation {
                asset: [i as u8; 32],
                severity: if bad.contains(&i) { 9 } else { 1 },
                flags: 0,
                evidence_hash: [0; 32],
                code: crate::registry::CodeBinding::Wasm([0; 32]),
            })
            .collect()
    }

    #[test]
    fn full_batches_go_in_ceil_writes_over_cap_transactions() {
        let mut registry = Registry::default();
        let done = write_batched(&mut registry, &writes(120, &[]), MAX_BATCH_SIZE);
        // The registry's cap is 35: 120 writes are ceil(120 / 35) = 4 transactions.
        assert_eq!(registry.sent, vec![35, 35, 35, 15]);
        assert_eq!((done.attempts, done.transactions, done.splits), (4, 4, 0));
        assert!(done
            .landed
            .iter()
            .all(|l| matches!(l, Landed::Written { .. })));
        // A cap above the registry's is clamped to it.
        let mut registry = Registry::default();
        write_batched(&mut registry, &writes(60, &[]), 500);
        assert_eq!(registry.sent, vec![35, 25]);
    }

    #[test]
    fn a_refused_batch_is_split_until_the_bad_entry_stands_alone() {
        let mut registry = Registry::default();
        let done = write_batched(&mut registry, &writes(8, &[5]), 8);
        // 8 refused → 4 ok + 4 refused → 2 ok (4,5 refused → 4 ok, 5 refused) + 2 ok (6,7).
        assert_eq!(registry.sent, vec![8, 4, 4, 2, 1, 1, 2]);
        // Seven tried, four refused in simulation (never sent): three transactions.
        assert_eq!((done.attempts, done.transactions, done.splits), (7, 3, 3));
        for (i, landed) in done.landed.iter().enumerate() {
            if i == 5 {
                let Landed::Failed(why) = landed else {
                    panic!("{landed:?}")
                };
                assert!(why.contains("registry error 3: InvalidSeverity"), "{why}");
            } else {
                assert!(matches!(landed, Landed::Written { .. }), "{i}: {landed:?}");
            }
        }
    }

    #[test]
    fn a_batch_that_may_have_applied_is_never_resent() {
        let mut registry = Registry {
            unknown: true,
            ..Registry::default()
        };
        let done = write_batched(&mut registry, &writes(4, &[]), 50);
        assert_eq!(registry.sent, vec![4]);
        assert!(done
            .landed
            .iter()
            .all(|l| matches!(l, Landed::Unknown(m) if m.contains("outcome is unknown"))));
    }
}
