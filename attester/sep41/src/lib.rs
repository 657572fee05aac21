//! `assay sep41`: does this token behave as SEP-41 says?
//!
//! Twenty-five checks ([`model::CHECKS`], in run order, in four layers: interface, behavior,
//! authorization, events) over a [`chain::TokenChain`]: on a live network through stellar-rpc
//! ([`chain::RpcChain`]) or on an embedded local network ([`offline`]). Verdicts are PASS/FAIL about the contract, UNVERIFIABLE when a premise is
//! missing, SKIPPED on harness faults, NOT_IMPLEMENTED when the spec lacks the member.
pub mod chain;
pub mod checks;
pub mod describe;
pub mod live;
pub mod model;
pub mod offline;
pub mod render;
pub mod spec;

pub use chain::{RpcChain, Signer, TokenChain};
pub use checks::{run_suite, Party, SuiteConfig};
pub use model::{CheckResult, Layer, Report, Status, CHECKS};

/// The current time as ISO-8601 UTC (seconds), without a date crate.
pub fn now_iso8601() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let (h, m, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}
mod scripted;
#[cfg(test)]
mod tests;
