//! `assay watch`: the operator loop. Re-attests before an attestation goes stale and whenever the verdict
//! changes; never writes an unattestable report (it logs why and lets the on-chain value age out, so gates
//! fail closed); backs off on failures; records every observation; reports health.
//!
//! - [`config`]: the TOML file and its checks;
//! - [`setup`]: the config, the environment and `--shard` resolved once into what the watcher runs on;
//! - [`policy`]: when a writable verdict must be written, and the back-off after failures;
//! - [`watcher`]: one asset's check and the loop;
//! - [`shared`]: many workers on one PostgreSQL database (the work queue, the leader);
//! - [`discovery`]: the watched set following SEP-42 lists and issuer accounts;
//! - [`react`]: re-checking the assets whose ledger entries changed between passes;
//! - [`budget`]: what a pass and a day may spend on transactions;
//! - [`health`]: `/health` and `/metrics`;
//! - [`log`]: the redacted journal.

pub mod budget;
pub mod config;
pub mod discovery;
pub mod health;
pub mod log;
pub mod policy;
pub mod react;
pub mod setup;
pub mod shared;
pub mod watcher;

pub use budget::{BudgetReached, Spend, SpendLimits};
pub use config::{AssetConfig, DiscoverConfig, HostConfig, WatchConfig, CHECK_ALLOWANCE_SECS};
pub use discovery::Discovery;
pub use health::{AssetHealth, Health, REPEATED_REFUSALS};
pub use log::log;
pub use policy::{backoff, write_reason, WriteReason};
pub use react::Reaction;
pub use setup::{Chain, Setup};
pub use watcher::{Checked, Watcher};
