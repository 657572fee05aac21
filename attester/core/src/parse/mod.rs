//! Pure parsers for the raw answers of each source. The scan does HTTP and hands bodies here; a body that
//! does not parse becomes a `malformed` failure ([`ParseError::category`]), never an empty answer.

mod asset_list;
mod horizon;
mod ledger;
mod stellar_expert;
mod stellar_toml;
pub mod urls;
mod wasm;

pub use asset_list::{parse_asset_list, AssetList, AssetListEntry};
pub use horizon::{
    parse_account_trustlines, parse_horizon_account, parse_horizon_assets, parse_horizon_root,
    parse_issuer_assets, AccountRecord, AssetRecord,
};
pub use ledger::{
    account_key, parse_account_entry, parse_ledger_entries, parse_rpc_network,
    parse_trustline_entry, trustline_key, LedgerEntries, MAX_KEYS_PER_CALL,
};
pub use stellar_expert::{parse_blocked_domain, parse_directory};
pub use stellar_toml::{
    parse_linked_currency_document, parse_stellar_toml, unresolved_links, StellarToml,
};
pub use wasm::{parse_wasm_exports, parse_wasm_imports, ExportedFunction};

use crate::failure::{FailureCategory, FetchFailure};

/// A source answer that does not have the shape the source always sends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct ParseError {
    /// Which parser rejected it (e.g. `horizon /assets`).
    pub source_name: &'static str,
    /// What was wrong.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(source_name: &'static str, message: impl Into<String>) -> ParseError {
        ParseError {
            source_name,
            message: message.into(),
        }
    }

    /// Always [`FailureCategory::Malformed`]: the canonical category for an unparseable answer.
    pub fn category(&self) -> FailureCategory {
        FailureCategory::Malformed
    }

    /// The failure to record for this answer (`malformed`, with this error as detail).
    pub fn to_failure(&self) -> FetchFailure {
        FetchFailure::with_detail(FailureCategory::Malformed, self.to_string())
    }
}
