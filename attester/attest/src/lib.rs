//! Assay's attester: turns reports into registry writes, and nothing else.
//!
//! - [`network`] and [`identity`]: stellar-cli compatible network names and signing identities (secrets come
//!   from the environment or files, never argv, and are never printed).
//! - [`sac`]: the Stellar Asset Contract address of a classic asset, derived locally.
//! - [`rpc`] and [`tx`]: a stellar-rpc client and the simulate → assemble → sign → send → poll path, which
//!   never loses track of a sent transaction.
//! - [`decide`]: the single rule that decides whether a report may be written.
//! - [`attest`], [`verify`], [`watch`]: the operator commands' logic.

pub mod attest;
pub mod cmd;
pub mod decide;
pub mod identity;
pub mod network;
pub mod registry;
pub mod rpc;
pub mod sac;
pub mod scanning;
pub mod sep41;
pub mod tx;
pub mod verify;
pub mod watch;

pub use decide::{decide, Decision};
