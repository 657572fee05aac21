//! The operator's spend budget: what one pass and one UTC day may spend on transactions
//! (`max_spend_per_pass_xlm`, `max_spend_per_day_xlm`).
//!
//! The fee cap (`max_fee_stroops`) bounds one transaction; the budget bounds how many a pass and a day may
//! send, so a hostile or broken RPC (one that answers "absent" to every read-back, making every pass rewrite
//! everything) cannot spend without end. Each transaction is counted, before it is signed, at the most it
//! may cost: the fee cap for itself plus the fee cap for a restore of archived entries it may need first.
//! A transaction the budget has no room for is not sent; its write is deferred (checked again at the next
//! pass, never dropped), `/health` turns `degraded` and an alert is raised.
//!
//! With a history store, the day's count lives there ([`assay_scan::history::History::reserve_spend`]),
//! per signing key and UTC day: every process that writes with the same key to the same store (a restart,
//! each shard, each `watch --once` from cron) counts against one daily budget. A send is refused, before it
//! is signed, when the store's count would pass the limit, or when the store cannot be read (fail closed).

use std::sync::Mutex;

use assay_chain::submit::{ChainError, Confirmed};
use serde::Serialize;

use super::log::log;
use crate::attest::{Submitted, Submitter};
use crate::registry::{Attestation, Safety};

/// Stroops in one XLM.
pub const STROOPS_PER_XLM: u64 = 10_000_000;
/// Default `max_spend_per_pass_xlm`.
pub const DEFAULT_PER_PASS_XLM: f64 = 500.0;
/// Default `max_spend_per_day_xlm`.
pub const DEFAULT_PER_DAY_XLM: f64 = 2_000.0;
/// Transactions counted per write: the write and a restore of archived entries it may need first.
const TRANSACTIONS_PER_SEND: u64 = 2;
const SECONDS_PER_DAY: u64 = 86_400;

/// The limits, in stroops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpendLimits {
    /// What one pass may spend.
    pub per_pass: u64,
    /// What one UTC day may spend.
    pub per_day: u64,
    /// What one send is counted at: the fee cap for it and for a restore it may need.
    pub per_send: u64,
}

impl SpendLimits {
    /// The limits of `max_spend_per_pass_xlm`, `max_spend_per_day_xlm` and `max_fee_stroops`.
    pub fn new(per_pass_xlm: f64, per_day_xlm: f64, max_fee_stroops: u32) -> SpendLimits {
        SpendLimits {
            per_pass: xlm_to_stroops(per_pass_xlm),
            per_day: xlm_to_stroops(per_day_xlm),
            per_send: u64::from(max_fee_stroops).saturating_mul(TRANSACTIONS_PER_SEND),
        }
    }
}

fn xlm_to_stroops(xlm: f64) -> u64 {
    // Checked positive and finite when the config was parsed; `as` saturates anything larger.
    (xlm * STROOPS_PER_XLM as f64) as u64
}

fn stroops_to_xlm(stroops: u64) -> f64 {
    stroops as f64 / STROOPS_PER_XLM as f64
}

/// What has been counted against the budget (kept with the watch's health).
#[derive(Debug, Default, Clone, Serialize)]
pub struct Spend {
    /// Counted in the current pass, stroops.
    pub pass_stroops: u64,
    /// Counted on the current UTC day, stroops.
    pub day_stroops: u64,
    /// The UTC day (days since 1970-01-01) `day_stroops` belongs to.
    pub day: u64,
    /// Set when a send was refused for lack of budget: which budget, in words. Cleared when a pass
    /// starts with room again.
    pub reached: Option<String>,
}

impl Spend {
    /// A new pass: its count starts at zero, and a new UTC day starts the day's.
    pub fn start_pass(&mut self, now_unix: u64, limits: &SpendLimits) {
        let day = now_unix / SECONDS_PER_DAY;
        if day != self.day {
            self.day = day;
            self.day_stroops = 0;
        }
        self.pass_stroops = 0;
        if self.room(limits).is_ok() {
            self.reached = None;
        }
    }

    /// Takes the day's count from the shared store (`counted`, for `now_unix`'s UTC day), so the pass
    /// starts from what every process has spent today.
    pub fn sync_day(&mut self, now_unix: u64, counted: u64) {
        self.day = now_unix / SECONDS_PER_DAY;
        self.day_stroops = counted;
    }

    fn room(&self, limits: &SpendLimits) -> Result<(), BudgetReached> {
        let send = limits.per_send;
        if self.pass_stroops.saturating_add(send) > limits.per_pass {
            return Err(BudgetReached::Pass {
                limit: limits.per_pass,
                counted: self.pass_stroops,
                send,
            });
        }
        if self.day_stroops.saturating_add(send) > limits.per_day {
            return Err(BudgetReached::Day {
                limit: limits.per_day,
                counted: self.day_stroops,
                send,
            });
        }
        Ok(())
    }

    /// Counts one send if both budgets have room for it; otherwise says which budget is reached.
    pub fn reserve(&mut self, limits: &SpendLimits) -> Result<(), BudgetReached> {
        self.room(limits)?;
        self.pass_stroops += limits.per_send;
        self.day_stroops += limits.per_send;
        Ok(())
    }

    /// Counts one send against the pass here and against the day in `shared`, the count every process
    /// writing with the same key shares; otherwise says which budget is reached, with the figures.
    pub fn reserve_shared(
        &mut self,
        limits: &SpendLimits,
        shared: &SharedSpend<'_>,
        now_unix: u64,
    ) -> Result<(), BudgetReached> {
        let cost = limits.per_send;
        if self.pass_stroops.saturating_add(cost) > limits.per_pass {
            return self.room(limits);
        }
        let day = now_unix / SECONDS_PER_DAY;
        match shared.reserve(day, cost, limits.per_day)? {
            Ok(total) => {
                self.day = day;
                self.day_stroops = total;
                self.pass_stroops += cost;
                Ok(())
            }
            Err(spent) => {
                self.day = day;
                self.day_stroops = spent;
                Err(BudgetReached::SharedDay {
                    limit: limits.per_day,
                    counted: spent,
                    send: cost,
                })
            }
        }
    }
}

/// The day's spend as the history store keeps it for one signing key.
#[derive(Debug, Clone)]
pub struct SharedSpend<'a> {
    /// The history store.
    pub history: &'a assay_scan::history::Database,
    /// The signing key's `G…` address.
    pub account: String,
}

impl SharedSpend<'_> {
    /// [`assay_scan::history::History::reserve_spend`]; a store that cannot be opened refuses the send.
    fn reserve(&self, day: u64, cost: u64, limit: u64) -> Result<Result<u64, u64>, BudgetReached> {
        assay_scan::history::History::connect(self.history)
            .and_then(|mut h| h.reserve_spend(&self.account, day, cost, limit))
            .map_err(|e| BudgetReached::Uncounted(e.to_string()))
    }

    /// What the store has counted for the key on `now_unix`'s UTC day.
    pub fn spent_today(&self, now_unix: u64) -> Option<u64> {
        assay_scan::history::History::connect_existing(self.history)
            .ok()
            .flatten()
            .and_then(|h| h.spent(&self.account, now_unix / SECONDS_PER_DAY).ok())
    }
}

/// A budget with no room for one more send: which budget (named by its `watch.toml` key), and in stroops
/// its limit, what it has counted and what one send counts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetReached {
    /// `max_spend_per_pass_xlm`.
    #[error(
        "the pass's spend budget (max_spend_per_pass_xlm = {}) is reached: {} XLM counted, a transaction counts {} XLM",
        stroops_to_xlm(*.limit),
        stroops_to_xlm(*.counted),
        stroops_to_xlm(*.send)
    )]
    Pass {
        /// The pass's limit.
        limit: u64,
        /// Counted in this pass.
        counted: u64,
        /// What one send counts.
        send: u64,
    },
    /// `max_spend_per_day_xlm`, counted by this process alone (no history store).
    #[error(
        "the day's spend budget (max_spend_per_day_xlm = {}) is reached: {} XLM counted today (UTC), a transaction counts {} XLM",
        stroops_to_xlm(*.limit),
        stroops_to_xlm(*.counted),
        stroops_to_xlm(*.send)
    )]
    Day {
        /// The day's limit.
        limit: u64,
        /// Counted on this UTC day.
        counted: u64,
        /// What one send counts.
        send: u64,
    },
    /// `max_spend_per_day_xlm`, counted in the history store by every process writing with the key.
    #[error(
        "the day's spend budget (max_spend_per_day_xlm = {}) is reached: {} XLM counted today (UTC) by every \
         process writing with this key to the history, a transaction counts {} XLM",
        stroops_to_xlm(*.limit),
        stroops_to_xlm(*.counted),
        stroops_to_xlm(*.send)
    )]
    SharedDay {
        /// The day's limit.
        limit: u64,
        /// Counted on this UTC day by every process.
        counted: u64,
        /// What one send counts.
        send: u64,
    },
    /// The history store's count could not be read or written, so nothing is sent (fail closed).
    #[error("the day's spend cannot be counted, so nothing is sent: {0}")]
    Uncounted(String),
}

/// Where the spend is counted and its alert raised: the watch's health, which `/health` and `/metrics`
/// show.
pub trait SpendBook {
    /// The count.
    fn spend(&mut self) -> &mut Spend;
    /// Counts one alert of `kind`.
    fn alert(&mut self, kind: &str);
}

/// A submitter whose sends (writes and revocations) are counted against the budget first; reads and
/// simulations cost nothing and pass through.
pub struct Budgeted<'w, S, B> {
    /// The submitter that sends.
    pub inner: S,
    /// The limits.
    pub limits: SpendLimits,
    /// Where the count lives, with the alert counters.
    pub book: &'w Mutex<B>,
    /// The day's count shared through the history store, when there is one.
    pub shared: Option<SharedSpend<'w>>,
}

impl<S, B: SpendBook> Budgeted<'_, S, B> {
    fn reserve(&self) -> Result<(), ChainError> {
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        let limits = self.limits;
        let counted = match &self.shared {
            Some(shared) => book.spend().reserve_shared(
                &limits,
                shared,
                assay_core::Timestamp::now().unix_secs(),
            ),
            None => book.spend().reserve(&limits),
        };
        match counted {
            Ok(()) => Ok(()),
            Err(reached) => {
                let reached = reached.to_string();
                if book.spend().reached.is_none() {
                    book.spend().reached = Some(reached.clone());
                    book.alert("spend_budget_reached");
                    log(
                        "alert",
                        serde_json::json!({"alert": "spend_budget_reached", "reason": reached,
                        "note": "no transaction is sent until the budget has room; deferred writes are checked again at the next pass"}),
                    );
                }
                Err(ChainError::OverBudget(reached))
            }
        }
    }
}

impl<S: Submitter, B: SpendBook> Submitter for Budgeted<'_, S, B> {
    fn simulate(&mut self, batch: &[Attestation]) -> Result<i64, ChainError> {
        self.inner.simulate(batch)
    }

    fn submit(&mut self, batch: &[Attestation]) -> Result<Submitted, ChainError> {
        self.reserve()?;
        self.inner.submit(batch)
    }

    fn read(&mut self, asset: [u8; 32]) -> Result<Option<Safety>, ChainError> {
        self.inner.read(asset)
    }

    fn revoke(&mut self, asset: [u8; 32]) -> Result<Confirmed, ChainError> {
        self.reserve()?;
        self.inner.revoke(asset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_pass_xlm: u64, per_day_xlm: u64, fee_cap_xlm: u64) -> SpendLimits {
        SpendLimits {
            per_pass: per_pass_xlm * STROOPS_PER_XLM,
            per_day: per_day_xlm * STROOPS_PER_XLM,
            per_send: 2 * fee_cap_xlm * STROOPS_PER_XLM,
        }
    }

    #[test]
    fn two_processes_and_a_restart_share_one_day_budget_through_the_store() {
        // Each send counts 2 XLM; a pass may spend 5, the day 7.
        let l = limits(5, 7, 1);
        let dir = tempfile::tempdir().unwrap();
        let history = assay_scan::history::Database::Sqlite(dir.path().join("history.sqlite3"));
        let shared = SharedSpend {
            history: &history,
            account: "GKEY".into(),
        };
        let now = 20_000 * SECONDS_PER_DAY + 60;
        // Process A (a `watch --once` from cron): two sends, then its pass is full.
        let mut a = Spend::default();
        a.start_pass(now, &l);
        assert!(a.reserve_shared(&l, &shared, now).is_ok());
        assert!(a.reserve_shared(&l, &shared, now).is_ok());
        let refused = a.reserve_shared(&l, &shared, now).unwrap_err();
        assert!(
            matches!(refused, BudgetReached::Pass { .. })
                && refused.to_string().contains("max_spend_per_pass_xlm = 5"),
            "{refused}"
        );
        // Process B (the next cron run, or a restart): starts at zero in memory, but the store has 4 XLM
        // counted today: one send fits under 7, the next is refused with the figures.
        let mut b = Spend::default();
        b.sync_day(now, shared.spent_today(now).unwrap());
        b.start_pass(now, &l);
        assert_eq!(b.day_stroops, 4 * STROOPS_PER_XLM);
        assert!(b.reserve_shared(&l, &shared, now).is_ok());
        let refused = b.reserve_shared(&l, &shared, now).unwrap_err();
        let said = refused.to_string();
        assert!(
            matches!(refused, BudgetReached::SharedDay { .. })
                && said.contains("max_spend_per_day_xlm = 7")
                && said.contains("6 XLM counted today")
                && said.contains("a transaction counts 2 XLM"),
            "{said}"
        );
        // Another signing key has its own day; the next UTC day has room again.
        let other = SharedSpend {
            history: &history,
            account: "GOTHER".into(),
        };
        assert!(Spend::default().reserve_shared(&l, &other, now).is_ok());
        assert!(Spend::default()
            .reserve_shared(&l, &shared, now + SECONDS_PER_DAY)
            .is_ok());
        // A store that cannot be opened refuses the send: never spent uncounted.
        let broken = SharedSpend {
            history: &assay_scan::history::Database::Sqlite(dir.path().to_path_buf()),
            account: "GKEY".into(),
        };
        let refused = Spend::default()
            .reserve_shared(&l, &broken, now)
            .unwrap_err();
        assert!(
            matches!(&refused, BudgetReached::Uncounted(_))
                && refused.to_string().contains("cannot be counted"),
            "{refused}"
        );
    }

    #[test]
    fn a_pass_and_a_day_stop_at_their_budget() {
        // Each send counts 2 XLM (1 XLM cap, and a possible restore).
        let l = limits(5, 7, 1);
        let mut spend = Spend::default();
        spend.start_pass(0, &l);
        assert!(spend.reserve(&l).is_ok() && spend.reserve(&l).is_ok());
        let refused = spend.reserve(&l).unwrap_err();
        assert!(
            matches!(refused, BudgetReached::Pass { .. })
                && refused.to_string().contains("max_spend_per_pass_xlm = 5"),
            "{refused}"
        );
        assert_eq!(spend.pass_stroops, 4 * STROOPS_PER_XLM);
        // The next pass of the same day: 2 more XLM fit under 7, then the day is spent.
        spend.start_pass(60, &l);
        assert!(spend.reserve(&l).is_ok());
        let refused = spend.reserve(&l).unwrap_err();
        assert!(
            matches!(refused, BudgetReached::Day { .. })
                && refused.to_string().contains("max_spend_per_day_xlm = 7"),
            "{refused}"
        );
        spend.start_pass(120, &l);
        assert!(spend.reserve(&l).is_err(), "still the same UTC day");
        // A new UTC day has room again.
        spend.start_pass(SECONDS_PER_DAY, &l);
        assert!(spend.reached.is_none());
        assert!(spend.reserve(&l).is_ok());
        assert_eq!(spend.day_stroops, 2 * STROOPS_PER_XLM);
    }
}
