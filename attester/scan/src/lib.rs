//! Assay's scan stage: all I/O happens here, once, up front; the result is a `Subject` for the pure core.
pub mod cache;
pub mod discover;
pub mod history;
pub mod hosts;
pub mod net;
pub mod options;
pub mod retry;
pub mod scanner;
mod shared;
#[cfg(feature = "test-support")]
pub mod testsupport;

pub use scanner::{ScanConfig, ScanError, Scanner};

/// The scanner version every report binds (its `scanner_bound`, the v3 evidence hash's `scanner` line):
/// this crate's version, `v`-prefixed.
pub const SCANNER_VERSION: &str = concat!("v", env!("CARGO_PKG_VERSION"));
