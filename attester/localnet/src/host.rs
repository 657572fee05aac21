//! Setting up the Soroban host outside a transaction: the module cache every contract's code is
//! parsed into (as stellar-core keeps one), and the error when the host cannot be set up.

use soroban_env_host::budget::Budget;
use soroban_env_host::ModuleCache;

use crate::genesis::{self, PROTOCOL_VERSION};

/// The local host could not be set up for a ledger, a simulation or a contract's code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostSetupError {
    /// The ledger's network configuration entries do not load.
    #[error("network configuration entries are unusable: {0}")]
    NetworkConfig(String),
    /// The module cache could not be created.
    #[error("cannot create the module cache: {0}")]
    ModuleCache(String),
    /// The compilation budget could not be created.
    #[error("cannot create a compilation budget: {0}")]
    Budget(String),
    /// A contract's code does not parse.
    #[error("cannot parse contract code: {0}")]
    ContractCode(String),
}

/// A module cache with a compilation context of unlimited budget, as stellar-core keeps one.
pub fn new_module_cache() -> Result<ModuleCache, HostSetupError> {
    let host = compile_host()?;
    ModuleCache::new(&host).map_err(|e| HostSetupError::ModuleCache(format!("{e:?}")))
}

fn compile_host() -> Result<soroban_env_host::Host, HostSetupError> {
    let (cpu, mem) = genesis::default_cost_params();
    let budget = Budget::try_from_configs(u64::MAX / 4, u64::MAX / 4, cpu, mem)
        .map_err(|e| HostSetupError::Budget(format!("{e:?}")))?;
    Ok(soroban_env_host::Host::with_storage_and_budget(
        soroban_env_host::storage::Storage::default(),
        budget,
    ))
}

/// Parses a stored contract into the module cache (a no-op when it is already there).
pub fn add_to_module_cache(
    cache: &ModuleCache,
    code: &soroban_env_host::xdr::ContractCodeEntry,
) -> Result<(), HostSetupError> {
    use soroban_env_host::vm::VersionedContractCodeCostInputs;
    use soroban_env_host::xdr::ContractCodeEntryExt;
    let host = compile_host()?;
    let inputs = match &code.ext {
        ContractCodeEntryExt::V0 => VersionedContractCodeCostInputs::V0 {
            wasm_bytes: code.code.len(),
        },
        ContractCodeEntryExt::V1(v1) => VersionedContractCodeCostInputs::V1(v1.cost_inputs.clone()),
    };
    cache
        .parse_and_cache_module(
            &host,
            PROTOCOL_VERSION,
            &code.hash,
            code.code.as_slice(),
            inputs,
        )
        .map_err(|e| HostSetupError::ContractCode(format!("{e:?}")))
}
