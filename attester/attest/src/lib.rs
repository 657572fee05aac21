//! Assay's attester: turns reports into registry writes, and nothing else.
//!
//! - The chain client is `assay-chain` (stellar-rpc-client underneath): networks and identities compatible
//!   with stellar-cli, and the simulate → assemble → sign → send → poll path, which never loses track of a
//!   sent transaction.
//! - [`sac`]: the Stellar Asset Contract address of a classic asset, derived locally.
//! - [`decide`]: the single rule that decides whether a report may be written.
//! - [`attest`], [`verify`], [`watch`]: the operator commands' logic (their front ends are in assay-cli).

pub mod attest;
pub mod batch;
pub mod decide;
pub mod error;
pub mod evidence;
mod evidence_binding;
#[cfg(feature = "local-world")]
pub mod local_world;
pub mod registry;
pub mod sac;
pub mod scan_reports;
pub mod scanning;
pub mod sep41;
pub mod targets;
pub mod token;
pub mod verify;
pub mod watch;

pub use decide::{decide, Decision};
pub use error::{AttestError, SnapshotError};
