//! The slice of the Assay registry interface the gate reads. A mirror, not a dependency, so the
//! gate's `.wasm` carries none of the registry's code.
use soroban_sdk::{contractclient, contracttype, Address, BytesN, Env};

/// Mirror of the registry's `Safety` (same fields, names and order).
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Safety {
    pub severity: u32,
    pub flags: u32,
    pub evidence_hash: BytesN<32>,
    pub attested_at: u64,
}

/// Mirror of the registry's `Assessment` (same variants, in the same order).
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Assessment {
    Safe(Safety),
    NotAttested,
    Revoked(u64),
    Stale(u64),
    SeverityTooHigh(u32),
    ForbiddenMechanics(u32),
}

#[allow(dead_code)] // the trait only generates the client
#[contractclient(name = "SafetyRegistryClient")]
pub trait SafetyRegistry {
    fn assess(
        env: Env,
        asset: Address,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Assessment;
}
