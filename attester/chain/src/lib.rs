//! A small, synchronous stellar-rpc client for the attester.
//!
//! - [`rpc`]: JSON-RPC 2.0 calls by name, with a round-trip counter;
//! - [`tx`]: building, simulating, signing, submitting and polling transactions;
//! - [`address`]: strkeys (G…, C…) to XDR and back, contract id derivation (SAC and deployer);
//! - [`secret`]: signing keys that never print, from env vars or stellar-cli identity files.
pub mod address;
pub mod rpc;
pub mod secret;
pub mod tx;

pub use address::{
    account_id, contract_id_from_asset, contract_id_from_deployer, network_id, parse_address,
    strkey_of, AddressError,
};
pub use rpc::{RpcClient, RpcError};
pub use secret::{Secret, SecretError};
pub use tx::{ChainError, InvokeOutcome, Network, ReadOutcome};

/// The testnet passphrase, the default network for writes.
pub const TESTNET_PASSPHRASE: &str = "Test SDF Network ; September 2015";
/// The futurenet passphrase.
pub const FUTURENET_PASSPHRASE: &str = "Test SDF Future Network ; October 2022";
/// The pubnet passphrase.
pub const PUBNET_PASSPHRASE: &str = "Public Global Stellar Network ; September 2015";
/// The passphrase of a stellar-cli / quickstart standalone network.
pub const STANDALONE_PASSPHRASE: &str = "Standalone Network ; February 2017";
