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

#[allow(dead_code)] // the trait only generates the client
#[contractclient(name = "SafetyRegistryClient")]
pub trait SafetyRegistry {
    fn get_safety(env: Env, asset: Address) -> Option<Safety>;
}
