//! `assay sep41`: does this token behave as SEP-41 says?
//!
//! Twenty-seven checks ([`model::CHECKS`], in run order, in four layers: interface, behavior,
//! authorization, events) over a [`chain::TokenChain`]: on a live network through stellar-rpc
//! ([`chain::RpcChain`]) or on an embedded local network ([`offline`]). Verdicts are PASS/FAIL about the contract, UNVERIFIABLE when a premise is
//! missing, SKIPPED on harness faults, NOT_IMPLEMENTED when the spec lacks the member.
pub mod chain;
pub mod checks;
pub mod deployment;
pub mod describe;
pub mod fork;
pub mod hook;
pub mod live;
pub mod model;
pub mod offline;
pub mod render;
pub mod spec;

pub use chain::{NoAnswer, Role, RpcChain, TokenChain, WriteFault};
pub use checks::{run_suite, ExercisedPower, Party, SuiteConfig};
pub use hook::{BeforeSuite, Exercised};
pub use model::{CheckResult, Layer, Report, Status, CHECKS};

mod scripted;
#[cfg(test)]
mod tests;
