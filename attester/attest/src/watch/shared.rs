//! Many `watch` workers on one PostgreSQL database. The assets are rows of a work queue: a worker leases
//! the due ones no one else holds (`FOR UPDATE SKIP LOCKED`), checks them as one pass, and hands each back
//! with the time it is due again. A worker that dies keeps its lease only until the lease ends
//! (`lease_secs`); then another takes its assets. One worker per queue, the leader, holds an advisory lock
//! and turns ledger changes into due assets; its reaction baseline is kept in the database, so a new leader
//! misses no change made while the lock changed hands. Transactions are sent by one worker at a time (an
//! advisory lock per signing key), so the workers never race for the account's sequence number; the spend
//! budget is one count in the database for all of them.
//!
//! A check is idempotent: a worker killed after its write landed but before it handed the asset back
//! leaves the asset to be checked again, which finds the same report (a re-check, not a new observation)
//! and the registry already holding the verdict (nothing written).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use assay_scan::history::{Database, HeldLock, History, HistoryError};
use serde_json::json;

use super::log::log;
use super::policy::backoff;
use super::watcher::{Checked, Watcher, DEFERRED_RECHECK};

/// When an asset a worker's config lacks is due again after that worker handed it back.
const UNKNOWN_HERE_RETRY: Duration = Duration::from_secs(60);

/// How long a starting worker waits, once it has said it is alive, before its first claim.
const SETTLE: Duration = Duration::from_secs(1);

/// The most assets one claim (one pass) takes.
const MAX_CLAIM: usize = 5_000;

/// The smallest claim holds this many rounds of `max(concurrency, batch_size)` assets.
const CLAIM_ROUNDS: usize = 4;

/// How long `--once` keeps trying a database that does not answer before it gives up.
const ONCE_PATIENCE: Duration = Duration::from_secs(60);

/// A worker's name in the queue and in the journal: host, process and a random tag, so two workers on
/// one host (or a restarted one) never share leases.
pub fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    // A per-process random tag without a random-number crate: the standard library's seeded hasher.
    use std::hash::{BuildHasher, Hasher};
    let tag = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{host}:{}:{:04x}", std::process::id(), tag & 0xffff)
}

/// The queue of a registry, an attesting key (`G…`) and a network passphrase.
pub fn queue_scope(registry: [u8; 32], attester: &str, passphrase: &str) -> String {
    format!(
        "{} {attester} {passphrase}",
        stellar_strkey::Contract(registry)
    )
}

/// The queue's word for an outcome, and whether it counts as a failure.
fn outcome_name(outcome: &Checked) -> (&'static str, bool) {
    match outcome {
        Checked::Written(_) => ("written", false),
        Checked::Unchanged => ("unchanged", false),
        Checked::Refused(_) => ("refused", false),
        Checked::Deferred(_) => ("deferred", false),
        Checked::Revoked(..) => ("revoked", false),
        Checked::WrittenUnconfirmed(..) => ("written_unconfirmed", true),
        Checked::Failed(_) => ("failed", true),
        Checked::Unknown(_) => ("unknown", true),
    }
}

/// Lowers its flag when dropped.
struct Lowered<'a>(&'a AtomicBool);

impl Drop for Lowered<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

impl Watcher<'_> {
    /// The queue this watcher's workers share: one per registry, attesting key and network, so workers
    /// of another attester (or another network) on the same database never take these assets.
    pub fn queue_scope(&self) -> String {
        queue_scope(
            self.registry,
            &self.signer.address(),
            &self.network.passphrase,
        )
    }

    /// The database, when the history is the shared one.
    fn shared_database(&self) -> Option<&Database> {
        self.history
            .as_ref()
            .filter(|d| matches!(d, Database::Postgres(_)))
    }

    /// With a shared database, the lock that makes this worker the only one sending a transaction for
    /// the signing key until it drops (`Ok(None)` without one). An error means the database cannot be
    /// reached: nothing is sent then.
    pub(crate) fn sending_alone(&self) -> Result<Option<HeldLock>, String> {
        let Some(database) = self.shared_database() else {
            return Ok(None);
        };
        History::connect(database)
            .and_then(|h| h.lock(&format!("submit {}", self.signer.address())))
            .map(Some)
            .map_err(|e| {
                format!(
                    "not sent: the database that orders the workers' transactions does not answer ({e})"
                )
            })
    }

    /// Runs as one of many workers on the shared database until `stop` (with `once`, until no asset of
    /// the queue is due or leased). Returns the last outcome of each asset this worker checked, in index
    /// order.
    pub fn run_shared(&mut self, stop: &AtomicBool, once: bool, worker: &str) -> Vec<Checked> {
        let Some(database) = self.shared_database().cloned() else {
            return vec![Checked::Failed(
                "internal: the shared loop needs a PostgreSQL database".into(),
            )];
        };
        let scope = self.queue_scope();
        let lease = Duration::from_secs(self.config.lease_secs);
        // The smallest claim: several rounds of the scanners and several batches of writes, so a pass keeps
        // its scanning and writing side by side. Claims grow to an even share of what is due (below).
        let claim = (self.config.concurrency.max(self.config.batch_size) * CLAIM_ROUNDS).max(1);
        log(
            "started",
            json!({"assets": self.assets.len(), "signer": self.signer.address(), "worker": worker,
            "database": database.to_string(), "lease_secs": self.config.lease_secs}),
        );
        let mut outcomes: BTreeMap<usize, Checked> = BTreeMap::new();
        let mut leader: Option<HeldLock> = None;
        let mut synced = false;
        let mut unavailable_since: Option<Instant> = None;
        // Workers started together see each other before the first claim, so they share the first pass
        // instead of the first one taking it all.
        if History::connect(&database)
            .and_then(|h| h.worker_seen(&scope, worker))
            .is_ok()
        {
            std::thread::sleep(SETTLE);
        }
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let step = self.shared_step(
                &database,
                &scope,
                worker,
                claim,
                lease,
                &mut leader,
                &mut synced,
            );
            match step {
                Ok(Some(checked)) => {
                    unavailable_since = None;
                    outcomes.extend(checked);
                    continue;
                }
                Ok(None) => {
                    unavailable_since = None;
                    if once && self.queue_drained(&database, &scope) {
                        break;
                    }
                }
                Err(e) => {
                    let since = *unavailable_since.get_or_insert_with(Instant::now);
                    log(
                        "database_unavailable",
                        json!({"error": e.to_string(),
                        "note": "checking and writing nothing until the database answers; leases held elsewhere end on their own"}),
                    );
                    leader = None;
                    synced = false;
                    if once && since.elapsed() > ONCE_PATIENCE {
                        outcomes.insert(usize::MAX, Checked::Failed(e.to_string()));
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        drop(leader);
        log("stopped", json!({"worker": worker}));
        outcomes.into_values().collect()
    }

    /// One turn of the shared loop: keep the queue and the leadership current, then lease and check a
    /// pass. `Ok(None)` when nothing was due.
    #[allow(clippy::too_many_arguments)]
    fn shared_step(
        &mut self,
        database: &Database,
        scope: &str,
        worker: &str,
        claim: usize,
        lease: Duration,
        leader: &mut Option<HeldLock>,
        synced: &mut bool,
    ) -> Result<Option<Vec<(usize, Checked)>>, HistoryError> {
        let history = History::connect(database)?;
        if self.discover_if_due() || !*synced {
            let added = history.queue_sync(scope, &self.active_assets())?;
            if added > 0 {
                log("queue_added", json!({"assets": added, "worker": worker}));
            }
            *synced = true;
        }
        self.lead_if_free(&history, scope, worker, leader)?;
        if leader.is_some() {
            history.leader_heartbeat(scope, worker)?;
            let changed = self.ledger_changes();
            self.save_baseline(&history, scope)?;
            if !changed.is_empty() {
                let names: Vec<String> = changed
                    .iter()
                    .map(|&i| self.assets[i].0.to_string())
                    .collect();
                history.queue_mark_due(scope, &names)?;
            }
        }
        // An even share of what is due among the live workers: one worker takes a whole pass at once (the
        // sources shared between assets are read once a pass), N workers a pass each.
        let live = history.worker_seen(scope, worker)?.max(1);
        let due = history.queue_stats(Some(scope))?.due;
        let (due, live) = (
            u64::try_from(due).unwrap_or(0),
            u64::try_from(live).unwrap_or(1),
        );
        let share = usize::try_from(due.div_ceil(live)).unwrap_or(claim);
        let claimed = history.queue_claim(scope, worker, claim.max(share).min(MAX_CLAIM), lease)?;
        if claimed.is_empty() {
            return Ok(None);
        }
        let by_name: BTreeMap<String, usize> = (0..self.assets.len())
            .filter(|&i| self.is_active(i))
            .map(|i| (self.assets[i].0.to_string(), i))
            .collect();
        let mut indices = Vec::new();
        for name in &claimed {
            match by_name.get(name) {
                Some(&i) => indices.push(i),
                None => {
                    // Another worker's config (or discovery) lists it and this one does not: handed
                    // back for a worker that knows it, due again in a minute (not at once, or this
                    // worker would take it straight back).
                    log(
                        "queue_unknown_asset",
                        json!({"asset": name, "worker": worker,
                        "note": "not in this worker's config; every worker of a queue should run the same config"}),
                    );
                    history.queue_complete(
                        scope,
                        worker,
                        name,
                        UNKNOWN_HERE_RETRY,
                        "unknown_here",
                        false,
                    )?;
                }
            }
        }
        drop(history);
        if indices.is_empty() {
            return Ok(None);
        }
        log(
            "leased",
            json!({"worker": worker, "assets": indices.len(), "lease_secs": lease.as_secs()}),
        );
        let started = Instant::now();
        // The leases are renewed while the pass runs, so a slow pass keeps its assets; a dead worker stops
        // renewing and loses them within `lease`.
        let passing = AtomicBool::new(true);
        let checked = std::thread::scope(|s| {
            s.spawn(|| {
                let mut renewed = Instant::now();
                while passing.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if renewed.elapsed() >= lease / 3 {
                        renewed = Instant::now();
                        let renewal = History::connect(database)
                            .and_then(|h| h.queue_renew(scope, worker, &claimed, lease));
                        if let Err(e) = renewal {
                            log(
                                "lease_renewal_failed",
                                json!({"worker": worker, "error": e.to_string()}),
                            );
                        }
                    }
                }
            });
            // Lowered however the pass ends, so the renewer never outlives it.
            let _done = Lowered(&passing);
            self.pass(&indices)
        });
        let history = History::connect(database)?;
        for (i, outcome) in &checked {
            self.record(*i, outcome);
            let name = self.assets[*i].0.to_string();
            let (word, failed) = outcome_name(outcome);
            if !history.queue_complete(
                scope,
                worker,
                &name,
                self.next_check(*i, outcome),
                word,
                failed,
            )? {
                log(
                    "lease_lost",
                    json!({"asset": name, "worker": worker,
                    "note": "the lease ended before the check did and another worker has the asset; its check stands"}),
                );
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        self.health.lock().expect("health lock").last_pass_seconds = Some(seconds);
        log(
            "pass",
            json!({"assets": indices.len(), "seconds": seconds, "worker": worker}),
        );
        Ok(Some(checked))
    }

    /// Takes the leadership when it is free, and notices when it was lost (the database restarted).
    fn lead_if_free(
        &mut self,
        history: &History,
        scope: &str,
        worker: &str,
        leader: &mut Option<HeldLock>,
    ) -> Result<(), HistoryError> {
        if leader.as_ref().is_some_and(|held| !held.is_held()) {
            *leader = None;
            log("leader_lost", json!({"worker": worker}));
        }
        if leader.is_some() || self.reaction.is_none() {
            return Ok(());
        }
        if let Some(held) = history.try_lock(&format!("leader {scope}"))? {
            // Continue from the last leader's view of the ledger: a change made while the lock changed
            // hands is a change, not a new baseline.
            let baseline = history.ledger_baseline(scope)?;
            let carried = baseline.len();
            if let Some(reaction) = self.reaction.as_mut() {
                reaction.adopt_baseline(baseline);
            }
            log(
                "leader",
                json!({"worker": worker, "baseline_entries": carried,
                "note": "this worker now turns ledger changes into due assets"}),
            );
            *leader = Some(held);
        }
        Ok(())
    }

    /// Writes the entries of the reaction baseline that changed since they were last saved.
    fn save_baseline(&mut self, history: &History, scope: &str) -> Result<(), HistoryError> {
        let Some(reaction) = self.reaction.as_mut() else {
            return Ok(());
        };
        let unsaved = reaction.take_unsaved();
        if unsaved.is_empty() {
            return Ok(());
        }
        history.save_ledger_baseline(scope, &unsaved)
    }

    /// Whether `scope`'s queue has nothing due and nothing leased (`--once` is done).
    fn queue_drained(&self, database: &Database, scope: &str) -> bool {
        History::connect(database)
            .and_then(|h| h.queue_stats(Some(scope)))
            .is_ok_and(|s| s.due == 0 && s.leased == 0)
    }

    /// When asset `index` is due again after `outcome`: its interval, sooner after a deferral, backed off
    /// after failures.
    pub(crate) fn next_check(&self, index: usize, outcome: &Checked) -> Duration {
        let interval = self.assets[index].2;
        let failures = self
            .health
            .lock()
            .expect("health lock")
            .assets
            .get(&self.assets[index].0.to_string())
            .map_or(0, |a| a.consecutive_failures);
        if matches!(outcome, Checked::Deferred(_)) {
            interval.min(DEFERRED_RECHECK)
        } else if failures > 0 {
            backoff(failures, interval)
        } else {
            interval
        }
    }
}
