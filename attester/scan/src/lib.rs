//! Assay's scan stage: all I/O happens here, once, up front; the result is a `Subject` for the pure core.
pub mod asset_arg;
pub mod cache;
pub mod history;
pub mod net;
pub mod retry;
pub mod scanner;
mod shared;
#[cfg(feature = "test-support")]
pub mod testsupport;

pub use scanner::{Network, ScanConfig, ScanError, Scanner};
