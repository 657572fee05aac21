//! Assay's one chain client: a synchronous facade over the official crates (stellar-rpc-client,
//! stellar-xdr, stellar-strkey, ed25519-dalek).
//!
//! - [`rpc`]: stellar-rpc calls on a private current-thread runtime, each under a timeout, with errors that
//!   say whether the request may have reached the server;
//! - [`submit`]: simulate → assemble (footprint, resources, auth, fee margin) → sign → send → poll, with the
//!   restore preamble, `TRY_AGAIN_LATER` / `DUPLICATE` / expiry / sequence handling, and a lost answer
//!   re-polled by hash so a retry never writes twice;
//! - [`deploy`]: contract deployment (upload, create, Stellar Asset Contract), the one place it is built;
//! - [`tx`]: the same path as the SEP-41 suite and the fixtures use it (reads from any account, deploys,
//!   classic operations, what a contract id runs);
//! - [`network`] and [`identity`]: stellar-cli compatible network names and signing identities (secrets
//!   from the environment, files or identity files, never argv, never printed);
//! - [`address`]: strkeys (G…, C…) to XDR and back, contract id derivation (SAC and deployer);
//! - [`scval`]: the contract values everyone builds (i128, symbol).
pub mod address;
pub mod asset;
pub mod deploy;
pub mod files;
pub mod holders;
pub mod identity;
pub mod network;
pub mod rpc;
pub mod scval;
pub mod submit;
pub mod tx;

pub use address::{
    account_id, contract_id_from_asset, contract_id_from_deployer, network_id, parse_address,
    strkey_of, AddressError,
};
pub use identity::{IdentityError, Signer};
pub use network::{
    NetworkSpec, FUTURENET_PASSPHRASE, PUBNET_PASSPHRASE, STANDALONE_PASSPHRASE, TESTNET_PASSPHRASE,
};
pub use rpc::{AuthMode, RpcClient, RpcError, SimulateTransactionResponse};
pub use submit::{ChainError, Confirmed, InvokeOptions, Invoker, Simulated};
pub use tx::{ContractCode, InvokeOutcome, NetworkClient, ReadOutcome};
