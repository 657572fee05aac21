#![no_std]
//! The Assay safety registry's interface: the types it answers with, its error codes, its
//! severity levels and mechanics bits, and the contract trait with a client for callers.
//!
//! Everything here is ABI and carries no registry code, so a consumer contract (such as
//! `assay-gate-example`) depends on this crate to call the registry without linking it, and the
//! registry implements the trait it defines.
mod error;
mod interface;
mod mechanics;
mod types;

pub use error::Error;
pub use interface::{SafetyRegistryInterface, SafetyRegistryInterfaceClient};
pub use mechanics::*;
pub use types::{
    Assessment, Attestation, CodeBinding, PendingAttesterChange, PendingUpgrade, Revocation, Safety,
};
