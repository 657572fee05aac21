#![no_std]
//! The Assay safety registry's interface: the types it answers with, its error codes, its
//! severity levels and mechanics bits, and the contract trait with a client for callers.
//!
//! Everything here is ABI and carries no registry code, so a consumer contract (such as
//! `assay-gate-example`) depends on this crate to call the registry without linking it, and the
//! registry implements the trait it defines. The verdict store, the registry's cheap read path,
//! implements [`VerdictStoreInterface`]; both judge with [`rules`].
mod error;
mod interface;
mod mechanics;
pub mod rules;
mod store;
mod types;

pub use error::Error;

/// Interface version of the registry and its verdict store, bumped whenever a function is added
/// or changes (what a write accepts included: 8 accepts mechanics bit 14).
pub const INTERFACE_VERSION: u32 = 8;
pub use interface::{SafetyRegistryInterface, SafetyRegistryInterfaceClient};
pub use mechanics::*;
pub use store::{standing, VerdictStoreInterface, VerdictStoreInterfaceClient};
pub use types::{
    Assessment, Attestation, CodeBinding, PendingAttesterChange, PendingUpgrade,
    PendingVerdictStore, Revocation, Safety,
};
