//! Contract deployment, in one place: the host functions that upload code, create a contract from it, and
//! deploy a Stellar Asset Contract, and the [`Invoker`] calls that run them. [`crate::tx::NetworkClient`] and the
//! local world both deploy through here.

use sha2::{Digest, Sha256};
use stellar_xdr::{
    Asset, ContractExecutable, ContractIdPreimage, ContractIdPreimageFromAddress,
    CreateContractArgs, CreateContractArgsV2, Hash, HostFunction, ScAddress, ScVal, Uint256,
};

use crate::address::{contract_id_from_asset, contract_id_from_deployer};
use crate::submit::{ChainError, Invoker};

/// The host function that uploads `wasm`, and the code's hash (what a contract is created from).
pub fn upload_wasm(wasm: &[u8]) -> Result<(HostFunction, [u8; 32]), ChainError> {
    let hash: [u8; 32] = Sha256::digest(wasm).into();
    let code = wasm.to_vec().try_into().map_err(|_| {
        ChainError::Simulation(format!(
            "contract code of {} bytes is too large for a transaction",
            wasm.len()
        ))
    })?;
    Ok((HostFunction::UploadContractWasm(code), hash))
}

/// The host function that creates a contract running `wasm_hash` at the id `deployer` and `salt` derive,
/// calling its constructor with `args`.
pub fn create_contract(
    deployer: ScAddress,
    wasm_hash: [u8; 32],
    salt: [u8; 32],
    args: Vec<ScVal>,
) -> Result<HostFunction, ChainError> {
    Ok(HostFunction::CreateContractV2(CreateContractArgsV2 {
        contract_id_preimage: ContractIdPreimage::Address(ContractIdPreimageFromAddress {
            address: deployer,
            salt: Uint256(salt),
        }),
        executable: ContractExecutable::Wasm(Hash(wasm_hash)),
        constructor_args: args
            .try_into()
            .map_err(|_| ChainError::Simulation("too many constructor arguments".into()))?,
    }))
}

/// The host function that deploys the Stellar Asset Contract of `asset`.
pub fn create_asset_contract(asset: &Asset) -> HostFunction {
    HostFunction::CreateContract(CreateContractArgs {
        contract_id_preimage: ContractIdPreimage::Asset(asset.clone()),
        executable: ContractExecutable::StellarAsset,
    })
}

impl Invoker<'_> {
    /// Uploads `wasm` as the signer; returns its hash.
    pub fn upload_wasm(&self, wasm: &[u8]) -> Result<[u8; 32], ChainError> {
        let (host_function, hash) = upload_wasm(wasm)?;
        self.invoke(&host_function)?;
        Ok(hash)
    }

    /// Creates a contract running `wasm_hash`, deployed by the signer with `salt`, calling its constructor
    /// with `args`; returns the contract id.
    pub fn create_contract(
        &self,
        wasm_hash: [u8; 32],
        salt: [u8; 32],
        args: Vec<ScVal>,
    ) -> Result<[u8; 32], ChainError> {
        let deployer = self.signer.sc_address();
        let id = contract_id_from_deployer(&deployer, salt, &self.network.passphrase);
        self.invoke(&create_contract(deployer, wasm_hash, salt, args)?)?;
        Ok(id)
    }

    /// Deploys the Stellar Asset Contract of `asset`; returns the contract id.
    pub fn deploy_sac(&self, asset: &Asset) -> Result<[u8; 32], ChainError> {
        let id = contract_id_from_asset(asset, &self.network.passphrase);
        self.invoke(&create_asset_contract(asset))?;
        Ok(id)
    }
}
