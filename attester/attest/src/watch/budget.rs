//! The operator's spend budget: what one pass and one UTC day may spend on transactions
//! (`max_spend_per_pass_xlm`, `max_spend_per_day_xlm`).
//!
//! The fee cap (`max_fee_stroops`) bounds one transaction; the budget bounds how many a pass and a day may
//! send, so a hostile or broken RPC (one that answers "absent" to every read-back, making every pass rewrite
//! everything) cannot spend without end. Each transaction is counted, before it is signed, at the most it
//! may cost: the fee cap for itself plus the fee cap for a restore of archived entries it may need first.
//! A transaction the budget has no room for is not sent; its write is deferred (checked again at the next
//! pass, never dropped), `/health` turns `degraded` and an alert is raised.

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
    /// `max_spend_per_day_xlm`.
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
}

impl<S, B: SpendBook> Budgeted<'_, S, B> {
    fn reserve(&self) -> Result<(), ChainError> {
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        let limits = self.limits;
        match book.spend().reserve(&limits) {
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
