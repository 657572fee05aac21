//! One asset's check (scan, record, decide, compare with the chain, write or revoke) and the loop over
//! every asset.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use assay_chain::rpc::RpcClient;
use assay_chain::submit::{ChainError, InvokeOptions, Invoker};
use assay_core::{Freshness, Token};
use serde_json::json;

use super::budget::{Budgeted, SharedSpend};
use super::config::WatchConfig;
use super::health::Health;
use super::log::log;
use super::policy::{write_reason, WriteReason};
use super::setup::{Chain, Setup};
use crate::attest::{explain, holds, ChainSubmitter, Submitter};
use crate::batch::{write_batched, Landed};
use crate::decide::{decide, Decision, Floor};
use crate::registry::{read_safety_by, read_safety_many};
use crate::registry::{Attestation, CodeBinding, MAX_BATCH_SIZE};
use crate::scanning::ScanSettings;
use crate::targets::{evaluate_targets_each, Evaluated};
use crate::verify::ledger_time;
use crate::AttestError;
use assay_scan::history::ChainReading;

/// Everything one pass needs.
pub struct Watcher<'a> {
    /// Reads the registry's entries and the ledger (its time, the watched assets' entries) and sends
    /// the writes.
    pub rpc: &'a RpcClient,
    /// The registry's network: token contracts are read at its endpoint, and its passphrase keys the
    /// assets' contract ids and the signatures.
    pub network: &'a assay_chain::network::NetworkSpec,
    /// Signs the writes; the registry entries compared with are this attester's own.
    pub signer: &'a assay_chain::identity::Signer,
    /// The registry contract written to and read from.
    pub registry: [u8; 32],
    /// Where and how the assets' sources (Horizon, stellar.toml, directory, blocklist) are read.
    pub settings: ScanSettings,
    /// This shard's config (index for index with `assets`): concurrency, batch size, freshness, spend
    /// limits, history retention.
    pub config: WatchConfig,
    /// Parsed assets (classic, or token contracts) with the contract ids they are keyed by and their
    /// check intervals.
    pub assets: Vec<(Token, [u8; 32], Duration)>,
    /// The history store each report and the registry's answer are recorded in, when there is one.
    pub history: Option<assay_scan::history::Database>,
    /// What `/health` and `/metrics` show (outcomes, pass times, spend), shared with whoever serves them.
    pub health: Arc<Mutex<Health>>,
    /// Every write's transaction options (the fee cap).
    pub options: InvokeOptions,
    /// The SEP-41 suite's runner, when any asset has `sep41 = true`.
    pub sep41: Option<crate::sep41::Sep41Runner>,
    /// Writes confirmed on chain whose read-back failed, by asset index: the next check re-reads them
    /// instead of scanning and writing again.
    pub unconfirmed: Mutex<BTreeMap<usize, (Attestation, String)>>,
    /// `[[discover]]` sources and the assets they added or retired; `None` without any.
    pub discovery: Option<super::discovery::Discovery>,
    /// Following the ledger between passes; `None` to check on the clock only.
    pub reaction: Option<super::react::Reaction>,
}

/// The result of checking one asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Written now.
    Written(String),
    /// On chain already agrees and is fresh.
    Unchanged,
    /// Not attestable.
    Refused(String),
    /// A write (or revocation) the spend budget had no room for: nothing was sent; checked again soon.
    Deferred(String),
    /// Not attestable, and the weaker on-chain entry was revoked (rule, transaction).
    Revoked(String, String),
    /// Written and confirmed, but the read-back failed (transaction, why); re-read next check.
    WrittenUnconfirmed(String, String),
    /// Failed (will back off).
    Failed(String),
    /// Sent, outcome unknown.
    Unknown(String),
}

/// How soon an asset whose write the spend budget deferred is checked again (at most its interval).
pub const DEFERRED_RECHECK: Duration = Duration::from_secs(60);

/// Registry reads in flight at once during a pass (bounded by `concurrency` too).
pub const CHAIN_READERS: usize = 16;

/// How often `history_keep_days` is applied.
const PRUNE_EVERY: Duration = Duration::from_secs(86_400);

/// Serialises this process's appends to the history store.
static HISTORY_WRITER: Mutex<()> = Mutex::new(());

/// A verdict a pass decided to write, waiting for its batch.
struct Write {
    index: usize,
    attestation: Attestation,
    severity: u32,
    flags: u32,
    evidence_hash: String,
    reason: WriteReason,
}

/// One asset's check up to the write: finished, or a write for the pass's batches.
enum Step {
    Done(Checked),
    Write(Write),
}

impl<'a> Watcher<'a> {
    /// The watcher of a resolved config ([`WatchConfig::resolve`]), on `chain`.
    pub fn new(chain: &'a Chain, setup: Setup) -> Watcher<'a> {
        Watcher {
            rpc: &chain.rpc,
            network: &chain.network,
            signer: &chain.signer,
            registry: setup.registry,
            settings: setup.settings,
            config: setup.config,
            assets: setup.assets,
            history: setup.history,
            health: setup.health,
            options: setup.options,
            sep41: setup.sep41,
            unconfirmed: Default::default(),
            discovery: setup.discovery,
            reaction: setup.reaction,
        }
    }
}

impl Watcher<'_> {
    /// Checks one asset: a pass over it alone.
    pub fn check(&self, index: usize) -> Checked {
        self.pass(&[index])
            .pop()
            .map_or_else(|| Checked::Failed("not checked".into()), |(_, c)| c)
    }

    /// One pass over the assets at `indices`: their scans run at once (each source host under its own
    /// bound), each report is recorded and decided as its scan finishes, and the writes the pass decides
    /// go out in `attest_many` batches of `batch_size` while the other assets are still being scanned
    /// (the remainder when the scanning is done; a refused batch split until the entry at fault stands
    /// alone). A pass so takes about the longer of its scanning and its writing, not their sum.
    /// Outcomes come back in the order of `indices`.
    pub fn pass(&self, indices: &[usize]) -> Vec<(usize, Checked)> {
        let now = assay_core::Timestamp::now().unix_secs();
        let counted = self.shared_spend().and_then(|s| s.spent_today(now));
        {
            let mut health = self.health.lock().expect("health lock");
            if let Some(counted) = counted {
                health.spend.sync_day(now, counted);
            }
            health.spend.start_pass(now, &self.config.spend_limits());
        }
        let mut done: BTreeMap<usize, Checked> = BTreeMap::new();
        let mut to_scan = Vec::new();
        for &index in indices {
            match self.re_read_unconfirmed(index) {
                Some(checked) => {
                    done.insert(index, checked);
                }
                None => to_scan.push(index),
            }
        }
        let ledger_now = OnceLock::new();
        // Each report is recorded, decided and compared with the registry on its own; the registry reads
        // are round trips to stellar-rpc, so they run side by side.
        let workers = self.config.concurrency.clamp(1, CHAIN_READERS);
        // The registry's entries for the whole pass in a few batched reads; an asset missing from them
        // (archived, or the batch failed) is read on its own.
        let contracts: Vec<[u8; 32]> = to_scan.iter().map(|&i| self.assets[i].1).collect();
        let held = read_safety_many(
            self.rpc,
            self.registry,
            &contracts,
            self.signer.public_key(),
        )
        .unwrap_or_else(|m| {
            log(
                "chain_read_failed",
                json!({"error": m, "note": "reading each asset on its own"}),
            );
            BTreeMap::new()
        });
        let done = Mutex::new(done);
        let finish = |index: usize, checked: Checked| {
            done.lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(index, checked);
        };
        // Scanned → deciders (up to `workers` at once) → the writer, each stage handing over as it goes.
        let (scanned_tx, scanned_rx) = mpsc::channel::<(usize, Result<Evaluated, AttestError>)>();
        let (decided_tx, decided_rx) = mpsc::channel::<Write>();
        let scanned_rx = Mutex::new(scanned_rx);
        let (written, write_seconds) = std::thread::scope(|s| {
            let writer = s.spawn(|| self.write_as_decided(decided_rx));
            let mut deciders = Vec::new();
            for _ in 0..workers.min(to_scan.len().max(1)) {
                let (scanned_rx, decided_tx, finish) = (&scanned_rx, decided_tx.clone(), &finish);
                let ledger_now = &ledger_now;
                let held = &held;
                deciders.push(s.spawn(move || loop {
                    let next = scanned_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((index, evaluated)) = next else { break };
                    let name = self.assets[index].0.to_string();
                    let step = check_guarded(
                        &name,
                        || match evaluated {
                            Ok(evaluated) => self.decide_one(index, evaluated, held, ledger_now),
                            Err(m) => {
                                log("scan_failed", json!({"asset": name, "error": m}));
                                Step::Done(Checked::Failed(m.to_string()))
                            }
                        },
                        |m| Step::Done(Checked::Failed(m)),
                    );
                    match step {
                        Step::Done(checked) => finish(index, checked),
                        Step::Write(w) => {
                            if let Err(mpsc::SendError(w)) = decided_tx.send(w) {
                                finish(
                                    w.index,
                                    Checked::Failed("internal: the pass's writer stopped".into()),
                                );
                            }
                        }
                    }
                }));
            }
            drop(decided_tx);
            let scan_started = Instant::now();
            self.evaluate_each(&to_scan, |index, evaluated| {
                if let Err(mpsc::SendError((index, _))) = scanned_tx.send((index, evaluated)) {
                    finish(
                        index,
                        Checked::Failed("internal: the pass's deciders stopped".into()),
                    );
                }
            });
            drop(scanned_tx);
            self.health.lock().expect("health lock").last_scan_seconds =
                Some(scan_started.elapsed().as_secs_f64());
            // Joined here, so that a thread that died (a bug) costs its assets their outcome ("lost"
            // below), never the process.
            for decider in deciders {
                let _ = decider.join();
            }
            writer.join().unwrap_or_else(|_| (Vec::new(), 0.0))
        });
        self.health.lock().expect("health lock").last_write_seconds = Some(write_seconds);
        let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
        done.extend(written);
        indices
            .iter()
            .map(|&i| {
                let checked = done.remove(&i).unwrap_or_else(|| {
                    Checked::Failed("internal: the check lost its outcome".into())
                });
                (i, checked)
            })
            .collect()
    }

    /// Fresh reports for `indices`, scanned at once and each handed to `each` as it is ready; the assets
    /// with `sep41 = true` go with the suite. Every index is handed over exactly once.
    fn evaluate_each(
        &self,
        indices: &[usize],
        mut each: impl FnMut(usize, Result<Evaluated, AttestError>),
    ) {
        let (with_suite, without): (Vec<usize>, Vec<usize>) = indices.iter().partition(|&&i| {
            self.sep41.is_some() && self.config.assets.get(i).is_some_and(|a| a.sep41)
        });
        for (group, runner) in [(without, None), (with_suite, self.sep41.as_ref())] {
            if group.is_empty() {
                continue;
            }
            let targets: Vec<crate::targets::Target> = group
                .iter()
                .map(|&i| crate::targets::Target {
                    asset: self.assets[i].0.clone(),
                    contract: self.assets[i].1,
                })
                .collect();
            let mut handed = vec![false; group.len()];
            let evaluated = evaluate_targets_each(
                &self.settings,
                &self.network.rpc_url,
                &self.network.passphrase,
                &targets,
                runner,
                |k, evaluated| {
                    handed[k] = true;
                    each(group[k], Ok(evaluated));
                },
            );
            if let Err(m) = evaluated {
                for (k, _) in handed.iter().enumerate().filter(|(_, h)| !**h) {
                    each(group[k], Err(m.clone()));
                }
            }
        }
    }

    /// Records one fresh report, decides it, and compares it with the registry: finished (refused,
    /// revoked, unchanged, failed) or a write for the pass's batches. The ledger's time is read once per
    /// pass.
    fn decide_one(
        &self,
        index: usize,
        Evaluated {
            report,
            suite,
            powers_snapshot,
        }: Evaluated,
        held: &BTreeMap<[u8; 32], Option<crate::registry::Safety>>,
        ledger_now: &OnceLock<Result<u64, AttestError>>,
    ) -> Step {
        let (asset, contract, _) = &self.assets[index];
        let name = asset.to_string();
        if let Some(run) = &suite {
            log(
                "sep41",
                json!({"asset": name, "contract": run.contract, "verdict": run.verdict(),
                "summary": run.summary()}),
            );
        }
        let report = match report {
            Ok(r) => r,
            Err(m) => {
                log("scan_failed", json!({"asset": name, "error": m}));
                return Step::Done(Checked::Failed(m.to_string()));
            }
        };
        if let Some(path) = &self.history {
            // One writer at a time: the checks of a pass record side by side.
            let _one_writer = HISTORY_WRITER.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = assay_scan::history::History::connect(path).and_then(|mut h| {
                crate::evidence::record_check(
                    &mut h,
                    &report,
                    suite.as_ref(),
                    powers_snapshot.as_ref(),
                )
            }) {
                log(
                    "history_failed",
                    json!({"asset": name, "error": e.to_string()}),
                );
            }
        }
        let now = assay_core::Timestamp::now();
        let params = match decide(&report, now, Freshness::default()) {
            Decision::Refuse(r) => {
                log(
                    "refused",
                    json!({"asset": name, "rule": r.rule(), "reason": r.to_string(),
                    "note": "not written; the on-chain value (if any) ages out and gates fail closed"}),
                );
                return Step::Done(self.revoke_if_weaker(index, r.rule(), Floor::of(&report)));
            }
            Decision::Attest(p) => p,
        };
        let code = match CodeBinding::judged_by(&report) {
            Ok(code) => code,
            Err(m) => {
                let m = m.to_string();
                log("scan_failed", json!({"asset": name, "error": m}));
                return Step::Done(Checked::Failed(m));
            }
        };
        // This watcher's own verdict: another attester's never stands for it.
        let read = match held.get(contract) {
            Some(entry) => Ok(entry.clone()),
            None => read_safety_by(self.rpc, self.registry, *contract, self.signer.public_key()),
        };
        let on_chain = match read {
            Ok(s) => s,
            Err(m) => {
                log("chain_read_failed", json!({"asset": name, "error": m}));
                return Step::Done(Checked::Failed(m.to_string()));
            }
        };
        let ledger_now = match ledger_now.get_or_init(|| ledger_time(self.rpc)) {
            Ok(t) => *t,
            Err(m) => return Step::Done(Checked::Failed(m.to_string())),
        };
        let Some(reason) = write_reason(
            on_chain.as_ref(),
            &params,
            ledger_now,
            self.config.max_age_secs,
            self.config.refresh_margin_secs,
        ) else {
            log(
                "unchanged",
                json!({"asset": name, "severity": params.severity, "flags": params.flags}),
            );
            if let Some(held) = &on_chain {
                self.record_chain(vec![(
                    name,
                    ChainReading::Attested {
                        severity: held.severity,
                        flags: held.flags,
                        evidence_hash: hex::encode(held.evidence_hash),
                        attested_at: Some(held.attested_at),
                        tx_hash: None,
                        ledger: None,
                    },
                )]);
            }
            return Step::Done(Checked::Unchanged);
        };
        let mut hash = [0u8; 32];
        hex::decode_to_slice(&params.evidence_hash, &mut hash).expect("64 hex digits");
        Step::Write(Write {
            index,
            attestation: Attestation {
                asset: *contract,
                severity: params.severity,
                flags: params.flags,
                evidence_hash: hash,
                code,
            },
            severity: params.severity,
            flags: params.flags,
            evidence_hash: params.evidence_hash,
            reason,
        })
    }

    /// The pass's writer: sends an `attest_many` batch whenever `batch_size` decided writes are queued,
    /// and the remainder once the deciders are done. Returns each write's outcome and the seconds spent
    /// sending batches and waiting for their ledgers.
    fn write_as_decided(&self, decided: mpsc::Receiver<Write>) -> (Vec<(usize, Checked)>, f64) {
        let cap = self.config.batch_size.clamp(1, MAX_BATCH_SIZE);
        let mut outcomes = Vec::new();
        let mut busy = Duration::ZERO;
        let mut send = |batch: Vec<Write>| {
            let started = Instant::now();
            let indices: Vec<usize> = batch.iter().map(|w| w.index).collect();
            // Workers sharing a database send one at a time for the key (held until the batch landed).
            let _alone = match self.sending_alone() {
                Ok(held) => held,
                Err(m) => {
                    log("write_failed", json!({"assets": indices.len(), "error": m}));
                    outcomes.extend(indices.iter().map(|&i| (i, Checked::Failed(m.clone()))));
                    return;
                }
            };
            // A bug while writing leaves the batch's outcome unknown: never re-sent blindly.
            outcomes.extend(check_guarded(
                "a batch of writes",
                || self.write(batch),
                |m| {
                    indices
                        .iter()
                        .map(|&i| (i, Checked::Unknown(m.clone())))
                        .collect()
                },
            ));
            busy += started.elapsed();
        };
        let mut queued = Vec::with_capacity(cap);
        for write in decided {
            queued.push(write);
            if queued.len() >= cap {
                send(std::mem::replace(&mut queued, Vec::with_capacity(cap)));
            }
        }
        if !queued.is_empty() {
            send(queued);
        }
        (outcomes, busy.as_secs_f64())
    }

    /// Sends a pass's writes in batches and says per asset what landed.
    fn write(&self, writes: Vec<Write>) -> Vec<(usize, Checked)> {
        if writes.is_empty() {
            return Vec::new();
        }
        for w in &writes {
            log(
                "submitting",
                json!({"asset": self.assets[w.index].0.to_string(), "why": w.reason.as_str(),
                "severity": w.severity, "flags": w.flags, "evidence_hash": w.evidence_hash}),
            );
        }
        let batch: Vec<Attestation> = writes.iter().map(|w| w.attestation.clone()).collect();
        let sent = write_batched(&mut self.budgeted(), &batch, self.config.batch_size);
        {
            let mut h = self.health.lock().expect("health lock");
            h.transactions_total += sent.transactions as u64;
            h.batch_splits_total += sent.splits as u64;
        }
        log(
            "batched",
            json!({"writes": writes.len(), "transactions": sent.transactions, "splits": sent.splits}),
        );
        let mut readings = Vec::new();
        let outcomes = writes
            .into_iter()
            .zip(sent.landed)
            .map(|(w, landed)| {
                let name = self.assets[w.index].0.to_string();
                let fields = json!({"asset": name, "why": w.reason.as_str(), "severity": w.severity,
                    "flags": w.flags, "evidence_hash": w.evidence_hash});
                let checked = match landed {
                    Landed::Written { tx, ledger } => {
                        readings.push((
                            name.clone(),
                            ChainReading::Attested {
                                severity: w.severity,
                                flags: w.flags,
                                evidence_hash: w.evidence_hash.clone(),
                                attested_at: None,
                                tx_hash: Some(tx.clone()),
                                ledger: Some(ledger),
                            },
                        ));
                        log("written", with(fields, json!({"tx_hash": tx, "ledger": ledger})));
                        Checked::Written(tx)
                    }
                    Landed::WrittenUnconfirmed { tx, ledger, why } => {
                        log(
                            "written_unconfirmed",
                            with(fields, json!({"tx_hash": tx, "ledger": ledger, "error": why,
                            "note": "the transaction succeeded; the next check re-reads the entry instead of writing again"})),
                        );
                        self.unconfirmed
                            .lock()
                            .expect("unconfirmed lock")
                            .insert(w.index, (w.attestation, tx.clone()));
                        Checked::WrittenUnconfirmed(tx, why)
                    }
                    Landed::Unknown(why) => {
                        log("outcome_unknown", json!({"asset": name, "error": why}));
                        Checked::Unknown(why)
                    }
                    Landed::Failed(why) => {
                        log("write_failed", json!({"asset": name, "error": why}));
                        Checked::Failed(why)
                    }
                    Landed::Deferred(why) => {
                        log("deferred", with(fields, json!({"reason": why})));
                        Checked::Deferred(why)
                    }
                };
                (w.index, checked)
            })
            .collect();
        self.record_chain(readings);
        outcomes
    }

    /// Records in the history what the registry holds for assets after this check (read, written or
    /// revoked), for `assay serve` to show beside the report.
    fn record_chain(&self, readings: Vec<(String, ChainReading)>) {
        let Some(path) = &self.history else {
            return;
        };
        if readings.is_empty() {
            return;
        }
        let at = assay_core::Timestamp::now().to_string();
        let rows: Vec<(String, String, ChainReading)> = readings
            .into_iter()
            .map(|(asset, entry)| (asset, at.clone(), entry))
            .collect();
        let _one_writer = HISTORY_WRITER.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = assay_scan::history::History::connect(path)
            .and_then(|mut h| h.append_chain_readings(&rows))
        {
            log("history_failed", json!({"error": e.to_string()}));
        }
    }

    /// Applies `history_keep_days` after a pass, at most once a day.
    fn prune_if_due(&self, pruned_at: &mut Option<Instant>) {
        let (Some(path), Some(days)) = (&self.history, self.config.history_keep_days) else {
            return;
        };
        if pruned_at.is_some_and(|at| at.elapsed() < PRUNE_EVERY) {
            return;
        }
        *pruned_at = Some(Instant::now());
        let now = std::time::SystemTime::now();
        let cutoff = now
            .checked_sub(Duration::from_secs(u64::from(days) * 86_400))
            .unwrap_or(std::time::UNIX_EPOCH);
        let cutoff = assay_core::Timestamp::from_system_time(cutoff).to_string();
        let _one_writer = HISTORY_WRITER.lock().unwrap_or_else(|e| e.into_inner());
        match assay_scan::history::History::connect(path).and_then(|mut h| h.prune(&cutoff)) {
            Ok(pruned) => log(
                "history_pruned",
                json!({"cutoff": cutoff, "removed": pruned}),
            ),
            Err(e) => log("history_failed", json!({"error": e.to_string()})),
        }
    }

    /// [`Watcher::submitter`] under the operator's spend budget: every write and revocation is counted
    /// first, and one the budget has no room for is not sent.
    fn budgeted(&self) -> Budgeted<'_, ChainSubmitter<'_>, Health> {
        Budgeted {
            inner: self.submitter(),
            limits: self.config.spend_limits(),
            book: &self.health,
            shared: self.shared_spend(),
        }
    }

    /// The day's spend as the history store counts it for this signing key, when there is a store.
    fn shared_spend(&self) -> Option<SharedSpend<'_>> {
        self.history.as_ref().map(|history| SharedSpend {
            history,
            account: self.signer.address(),
        })
    }

    fn submitter(&self) -> ChainSubmitter<'_> {
        ChainSubmitter {
            invoker: Invoker {
                rpc: self.rpc,
                network: self.network,
                signer: self.signer,
                options: self.options.clone(),
            },
            registry: self.registry,
            confirm_read_back: true,
        }
    }

    /// After a write whose read-back failed: read the entry again rather than scan and write again.
    /// `None` when nothing is pending or the entry no longer holds the write (then the full check runs).
    fn re_read_unconfirmed(&self, index: usize) -> Option<Checked> {
        let pending = self
            .unconfirmed
            .lock()
            .expect("unconfirmed lock")
            .get(&index)
            .cloned();
        let (written, tx) = pending?;
        let (asset, contract, _) = &self.assets[index];
        let name = asset.to_string();
        let result = self.submitter().read(*contract);
        if let Ok(held) = &result {
            self.unconfirmed
                .lock()
                .expect("unconfirmed lock")
                .remove(&index);
            if held.as_ref().is_some_and(|h| holds(h, &written)) {
                log("read_back_confirmed", json!({"asset": name, "tx_hash": tx}));
                return Some(Checked::Unchanged);
            }
            log(
                "read_back_differs",
                json!({"asset": name, "tx_hash": tx, "on_chain": held.as_ref().map(|h| json!({"severity": h.severity, "flags": h.flags, "evidence_hash": hex::encode(h.evidence_hash)})),
                "note": "the entry no longer holds that write; checking afresh"}),
            );
            return None;
        }
        let error = result.err().map(|e| explain(&e)).unwrap_or_default();
        log(
            "read_back_failed",
            json!({"asset": name, "tx_hash": tx, "error": error, "note": "not writing again; re-reading later"}),
        );
        Some(Checked::Failed(error))
    }

    /// A refused report still proves the flags it read. When that floor is stricter than the
    /// registry's entry, the entry is revoked (gates then fail closed) and an alert is raised; a
    /// weaker entry left in place would keep admitting an issuer that can now freeze or claw back.
    fn revoke_if_weaker(&self, index: usize, rule: &str, floor: Option<Floor>) -> Checked {
        let refused = Checked::Refused(rule.to_string());
        let Some(floor) = floor else {
            return refused;
        };
        let (asset, contract, _) = &self.assets[index];
        let name = asset.to_string();
        let mut submitter = self.budgeted();
        let held = match submitter.read(*contract) {
            Ok(Some(held)) if floor.exceeds(&held) => held,
            Ok(_) => return refused,
            Err(e) => {
                log(
                    "chain_read_failed",
                    json!({"asset": name, "error": explain(&e)}),
                );
                return Checked::Failed(explain(&e));
            }
        };
        {
            let mut h = self.health.lock().expect("health lock");
            *h.alerts_total
                .entry("refused_stricter_floor".into())
                .or_default() += 1;
        }
        log(
            "alert",
            json!({"alert": "refused_stricter_floor", "asset": name, "rule": rule,
            "floor": floor, "on_chain": {"severity": held.severity, "flags": held.flags},
            "note": "the refused report proves more than the registry holds; revoking the entry so gates fail closed"}),
        );
        let _alone = match self.sending_alone() {
            Ok(held) => held,
            Err(m) => {
                log("revoke_failed", json!({"asset": name, "error": m}));
                return Checked::Failed(m);
            }
        };
        match submitter.revoke(*contract) {
            Ok(c) => {
                log(
                    "revoked",
                    json!({"asset": name, "rule": rule, "tx_hash": c.hash, "ledger": c.ledger}),
                );
                self.record_chain(vec![(
                    name.clone(),
                    ChainReading::Revoked {
                        rule: rule.to_string(),
                        tx_hash: c.hash.clone(),
                        ledger: c.ledger,
                    },
                )]);
                Checked::Revoked(rule.to_string(), c.hash)
            }
            Err(ChainError::OverBudget(why)) => {
                log(
                    "deferred",
                    json!({"asset": name, "rule": rule, "reason": why}),
                );
                Checked::Deferred(why)
            }
            Err(e) => chain_failure(&name, "revoke_failed", &e),
        }
    }

    pub(crate) fn record(&self, index: usize, outcome: &Checked) {
        let name = self.assets[index].0.to_string();
        let mut h = self.health.lock().expect("health lock");
        h.checks_total += 1;
        match outcome {
            Checked::Written(_) | Checked::WrittenUnconfirmed(..) => h.written_total += 1,
            Checked::Refused(rule) => *h.refused_total.entry(rule.clone()).or_default() += 1,
            Checked::Revoked(rule, _) => {
                *h.refused_total.entry(rule.clone()).or_default() += 1;
                h.revoked_total += 1;
            }
            Checked::Failed(_) | Checked::Unknown(_) => h.failures_total += 1,
            Checked::Unchanged | Checked::Deferred(_) => {}
        }
        let a = h.assets.entry(name).or_default();
        match outcome {
            // A written-unconfirmed check backs off like a failure, so the re-read comes soon.
            Checked::Failed(m) | Checked::Unknown(m) | Checked::WrittenUnconfirmed(_, m) => {
                a.consecutive_failures += 1;
                // The health page is read by whoever reaches metrics_addr: the same redaction as the journal.
                a.last_error = Some(assay_core::redact::text(m));
            }
            // Neither a success nor a failure of the asset: the budget (counted in `/health`) held it back.
            Checked::Deferred(_) => {}
            other => {
                a.consecutive_failures = 0;
                a.last_success = Some(assay_core::Timestamp::now().unix_secs());
                if let Checked::Written(tx) = other {
                    a.last_tx = Some(tx.clone());
                }
            }
        }
        if let Checked::WrittenUnconfirmed(tx, _) = outcome {
            a.last_tx = Some(tx.clone());
        }
        match outcome {
            Checked::Refused(_) | Checked::Revoked(..) => a.consecutive_refusals += 1,
            Checked::Failed(_) | Checked::Unknown(_) | Checked::Deferred(_) => {}
            _ => a.consecutive_refusals = 0,
        }
        a.last_outcome = Some(match outcome {
            Checked::Written(_) => "written".into(),
            Checked::WrittenUnconfirmed(..) => "written_unconfirmed".into(),
            Checked::Unchanged => "unchanged".into(),
            Checked::Refused(rule) => format!("refused:{rule}"),
            Checked::Revoked(rule, _) => format!("revoked:{rule}"),
            Checked::Failed(_) => "failed".into(),
            Checked::Unknown(_) => "unknown".into(),
            Checked::Deferred(_) => "deferred".into(),
        });
    }

    /// Whether asset `index` is still watched (not retired by discovery).
    pub fn is_active(&self, index: usize) -> bool {
        self.discovery.as_ref().is_none_or(|d| d.is_active(index))
    }

    /// The watched assets' names, in index order.
    pub fn active_assets(&self) -> Vec<String> {
        (0..self.assets.len())
            .filter(|&i| self.is_active(i))
            .map(|i| self.assets[i].0.to_string())
            .collect()
    }

    /// Reads the discovery sources when due and updates the watched set; returns true when it was read.
    pub fn discover_if_due(&mut self) -> bool {
        if !self.discovery.as_ref().is_some_and(|d| d.is_due()) {
            return false;
        }
        self.discover_now();
        true
    }

    /// Reads every discovery source now: adds what they newly name, retires what none names any more
    /// (and drops the retired assets from `/health`).
    pub fn discover_now(&mut self) {
        let Some(discovery) = self.discovery.as_mut() else {
            return;
        };
        let retired = discovery.read(
            &self.settings,
            &self.network.passphrase,
            &mut self.assets,
            &mut self.config,
        );
        let mut health = self.health.lock().expect("health lock");
        for name in &retired {
            health.assets.remove(name);
        }
    }

    /// The indices of the watched assets whose ledger entries changed since the last poll (none without
    /// a reaction, or when no poll is due).
    pub fn ledger_changes(&mut self) -> Vec<usize> {
        let Some(reaction) = self.reaction.as_mut() else {
            return Vec::new();
        };
        let discovery = self.discovery.as_ref();
        let active = |i: usize| discovery.is_none_or(|d| d.is_active(i));
        let changed = reaction.changes(self.rpc, &self.assets, &active);
        // The re-scans this poll asks for read the ledger through the same stellar-rpc, at this ledger or later.
        if let Some(polled) = reaction.polled_ledger() {
            self.settings
                .ledger_floor
                .fetch_max(polled, std::sync::atomic::Ordering::AcqRel);
        }
        changed
    }

    /// Runs until `stop` (or after one pass with `once`); returns the last outcome of each watched asset
    /// (retired ones left out), in index order. A check in progress, including a sent
    /// transaction being followed, always finishes before the loop stops.
    pub fn run(&mut self, stop: &AtomicBool, once: bool) -> Vec<Checked> {
        let mut due: Vec<Instant> = vec![Instant::now(); self.assets.len()];
        let mut last = vec![None; self.assets.len()];
        let mut pruned_at: Option<Instant> = None;
        log(
            "started",
            json!({"assets": self.assets.len(), "signer": self.signer.address()}),
        );
        loop {
            if self.discover_if_due() {
                // Newly discovered assets are due at once.
                due.resize(self.assets.len(), Instant::now());
                last.resize(self.assets.len(), None);
            }
            for i in self.ledger_changes() {
                due[i] = Instant::now();
            }
            let now = Instant::now();
            let due_now: Vec<usize> = (0..self.assets.len())
                .filter(|&i| now >= due[i] && self.is_active(i))
                .collect();
            if !due_now.is_empty() && !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                for (i, outcome) in self.pass(&due_now) {
                    self.record(i, &outcome);
                    due[i] = Instant::now() + self.next_check(i, &outcome);
                    last[i] = Some(outcome);
                }
                let seconds = started.elapsed().as_secs_f64();
                self.health.lock().expect("health lock").last_pass_seconds = Some(seconds);
                log("pass", json!({"assets": due_now.len(), "seconds": seconds}));
                self.prune_if_due(&mut pruned_at);
            }
            if once || stop.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        log("stopped", json!({}));
        last.into_iter()
            .enumerate()
            .filter(|(i, _)| self.is_active(*i))
            .map(|(_, o)| o.unwrap_or(Checked::Failed("not checked".into())))
            .collect()
    }
}

/// A failed transaction as a check's outcome, logged: `outcome_unknown` when it may have applied (never
/// retried blindly), else `failed_event` with the registry's error named.
fn chain_failure(asset: &str, failed_event: &str, e: &ChainError) -> Checked {
    if e.may_have_written() {
        log(
            "outcome_unknown",
            json!({"asset": asset, "error": e.to_string()}),
        );
        return Checked::Unknown(e.to_string());
    }
    log(failed_event, json!({"asset": asset, "error": explain(e)}));
    Checked::Failed(explain(e))
}

/// `fields` with `more`'s keys added (both JSON objects).
fn with(mut fields: serde_json::Value, more: serde_json::Value) -> serde_json::Value {
    if let (Some(f), serde_json::Value::Object(m)) = (fields.as_object_mut(), more) {
        f.extend(m);
    }
    fields
}

/// Runs one asset's check; a panic inside it (a bug on some input) becomes that asset's failure,
/// counted and backed off like any other, never the end of the process.
fn check_guarded<T>(asset: &str, check: impl FnOnce() -> T, failed: impl FnOnce(String) -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).unwrap_or_else(|payload| {
        let detail = assay_scan::scanner::panic_message(payload.as_ref());
        let message =
            format!("internal error while checking {asset} ({detail}); please report this");
        log("check_panicked", json!({"asset": asset, "error": message}));
        failed(message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item5_a_panicking_check_is_that_assets_failure() {
        let outcome = check_guarded("AAA-G", || panic!("planted {}", 7), Checked::Failed);
        let Checked::Failed(message) = outcome else {
            panic!("expected a failure, got {outcome:?}");
        };
        assert!(
            message.contains("AAA-G") && message.contains("planted 7"),
            "{message}"
        );
        assert_eq!(
            check_guarded("AAA-G", || Checked::Unchanged, Checked::Failed),
            Checked::Unchanged
        );
    }
}
