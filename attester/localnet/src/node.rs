//! The running node: the state the HTTP handlers and the ledger thread share, and the loop that
//! closes a ledger every interval.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::ledger;

/// Timing of one ledger close.
#[derive(Clone, Copy, Debug)]
pub struct CloseStat {
    pub ledger: u32,
    pub transactions: usize,
    pub duration: Duration,
}

pub(crate) struct Shared {
    pub(crate) ledger: Mutex<ledger::Ledger>,
    pub(crate) closed: Condvar,
    pub(crate) stop: AtomicBool,
    /// While set, the interval closes nothing (tests close ledgers explicitly).
    pub(crate) paused: AtomicBool,
    pub(crate) base_url: OnceLock<String>,
    pub(crate) close_stats: Mutex<Vec<CloseStat>>,
}

impl Shared {
    pub(crate) fn new(ledger: ledger::Ledger) -> Shared {
        Shared {
            ledger: Mutex::new(ledger),
            closed: Condvar::new(),
            stop: AtomicBool::new(false),
            paused: AtomicBool::new(false),
            base_url: OnceLock::new(),
            close_stats: Mutex::new(Vec::new()),
        }
    }
    pub(crate) fn lock(&self) -> MutexGuard<'_, ledger::Ledger> {
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub(crate) fn friendbot_url(&self) -> String {
        format!(
            "{}/friendbot",
            self.base_url.get().map(String::as_str).unwrap_or("")
        )
    }
}

pub(crate) fn close_loop(shared: Arc<Shared>, interval: Duration) {
    let mut next = Instant::now() + interval;
    loop {
        {
            let mut l = shared.lock();
            loop {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                let now = Instant::now();
                if now >= next {
                    break;
                }
                l = shared
                    .closed
                    .wait_timeout(l, next - now)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
            drop(l);
            close_now(&shared, true);
        }
        next += interval;
        let now = Instant::now();
        if next < now {
            next = now;
        }
    }
}

/// Closes a ledger; the interval's closes (`respect_pause`) are skipped while paused, checked
/// under the lock so a pause set before a submission always holds that submission back.
pub(crate) fn close_now(shared: &Shared, respect_pause: bool) -> u32 {
    let mut l = shared.lock();
    if respect_pause && shared.paused.load(Ordering::SeqCst) {
        return l.latest_seq();
    }
    let started = Instant::now();
    let count = l.queue.len();
    l.close();
    let seq = l.latest_seq();
    let stat = CloseStat {
        ledger: seq,
        transactions: count,
        duration: started.elapsed(),
    };
    // Published before the ledger lock is released: a client that sees this ledger's results
    // (getTransaction, getLatestLedger) then reads its statistics too (lock order: ledger, then
    // close_stats; readers of close_stats take it alone).
    if let Ok(mut s) = shared.close_stats.lock() {
        if s.len() >= 100_000 {
            s.clear();
        }
        s.push(stat);
    }
    drop(l);
    shared.closed.notify_all();
    seq
}

pub(crate) fn wait_tx(
    shared: &Shared,
    hash: &[u8; 32],
    timeout: Duration,
) -> Option<ledger::TxRecord> {
    let deadline = Instant::now() + timeout;
    let mut l = shared.lock();
    loop {
        if let Some(r) = l.txs.get(hash) {
            return Some(r.clone());
        }
        let now = Instant::now();
        if now >= deadline || shared.stop.load(Ordering::SeqCst) {
            return None;
        }
        l = shared
            .closed
            .wait_timeout(l, deadline - now)
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
}
