//! Where a ledger's entries come from beyond its own map, and the read-only views a host run reads.
//!
//! In fork mode a ledger faults in the entries it has never held from an upstream, through the
//! [`EntrySource`] trait (the fork implements it), and host runs that must not hold the ledger lock
//! read a [`Snapshot`]: the local entries first, then, through a [`Fallthrough`], the upstream.

use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;

use soroban_env_host::storage::{EntryWithLiveUntil, SnapshotSource};
use soroban_env_host::xdr::{
    ConfigSettingEntry, ConfigSettingId, LedgerEntryData, LedgerKey, LedgerKeyConfigSetting,
    ScAddress, ScVal,
};
use soroban_env_host::HostError;
use soroban_simulation::NetworkConfig;

use crate::host::HostSetupError;
use crate::state::{EntryMap, Stored};
use crate::xdrutil::XdrDecodeError;

/// The upstream a ledger faults entries in from: in fork mode, the other network's ledger.
pub(crate) trait EntrySource: Send + Sync {
    /// The ledger the upstream's entries are pinned at; the local ledger continues from it.
    fn ledger(&self) -> u32;
    /// The upstream's entries for `keys`, in order (`None`: it has no such entry).
    fn get_many(&self, keys: &[LedgerKey]) -> Result<Vec<Option<Stored>>, ForkError>;
    /// The last upstream failure, taken, for an error message that would otherwise not say why.
    fn take_error(&self) -> Option<String>;
}

/// Fork mode, while running: the upstream or the cache file failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForkError {
    /// The upstream did not answer.
    #[error("the fork's upstream did not answer getLedgerEntries: {0}")]
    Unanswered(String),
    /// The upstream answered an entry that does not decode.
    #[error("the fork's upstream sent an unreadable entry: {0}")]
    UnreadableEntry(#[from] XdrDecodeError),
    /// The cache file could not be encoded.
    #[error("cannot encode the fork cache {path}: {message}")]
    CacheEncode {
        /// The cache file.
        path: String,
        /// Why.
        message: String,
    },
    /// The cache file could not be written.
    #[error("cannot write the fork cache {path}: {message}")]
    CacheWrite {
        /// The cache file.
        path: String,
        /// Why.
        message: String,
    },
    /// Contract code faulted in from the upstream does not load.
    #[error(transparent)]
    Code(#[from] HostSetupError),
}

/// A read-only view for a host run: the local entries first, then the upstream for keys the
/// fork has never held.
pub(crate) struct Fallthrough {
    pub(crate) source: Arc<dyn EntrySource>,
    /// Keys the local ledger is authoritative for (held, or held once and removed).
    pub(crate) faulted: BTreeSet<LedgerKey>,
    /// Addresses made up for this run (a sandbox's fresh parties): no upstream entry can be keyed by them,
    /// so a key that names one is absent without asking.
    pub(crate) made_up: Arc<BTreeSet<ScAddress>>,
    /// Authorization nonces are absent without asking: a sandbox records every authorization with a fresh
    /// random nonce, which no upstream entry can hold, and each would otherwise cost a round trip.
    pub(crate) local_nonces: bool,
}

impl Fallthrough {
    pub(crate) fn get(&self, key: &LedgerKey) -> Result<Option<EntryWithLiveUntil>, HostError> {
        let nonce =
            matches!(key, LedgerKey::ContractData(d) if matches!(d.key, ScVal::LedgerKeyNonce(_)));
        if self.faulted.contains(key)
            || names_any(key, &self.made_up)
            || (self.local_nonces && nonce)
        {
            return Ok(None);
        }
        match self.source.get_many(std::slice::from_ref(key)) {
            Ok(mut v) => Ok(v.pop().flatten().map(|s| (Rc::new(s.entry), s.live_until))),
            Err(_) => Err(HostError::from(
                soroban_env_host::Error::from_type_and_code(
                    soroban_env_host::xdr::ScErrorType::Storage,
                    soroban_env_host::xdr::ScErrorCode::InternalError,
                ),
            )),
        }
    }
}

/// Whether `key` is keyed by one of `addresses`: an account or trustline of one, or contract data whose
/// key holds one (at any depth a stored key can have).
fn names_any(key: &LedgerKey, addresses: &BTreeSet<ScAddress>) -> bool {
    fn in_val(v: &ScVal, addresses: &BTreeSet<ScAddress>, depth: u8) -> bool {
        if depth > 8 {
            return false;
        }
        match v {
            ScVal::Address(a) => addresses.contains(a),
            ScVal::Vec(Some(items)) => items.iter().any(|i| in_val(i, addresses, depth + 1)),
            ScVal::Map(Some(m)) => m.iter().any(|e| {
                in_val(&e.key, addresses, depth + 1) || in_val(&e.val, addresses, depth + 1)
            }),
            _ => false,
        }
    }
    if addresses.is_empty() {
        return false;
    }
    match key {
        LedgerKey::Account(a) => addresses.contains(&ScAddress::Account(a.account_id.clone())),
        LedgerKey::Trustline(t) => addresses.contains(&ScAddress::Account(t.account_id.clone())),
        LedgerKey::ContractData(d) => in_val(&d.key, addresses, 0),
        _ => false,
    }
}

/// A read-only view of the ledger for `soroban-simulation` and `NetworkConfig`; in fork mode,
/// keys the ledger has never held fall through to the fork's upstream.
pub struct Snapshot {
    pub entries: EntryMap,
    pub fallthrough: Option<Fallthrough>,
}

impl Snapshot {
    /// The local entries only.
    pub fn local(entries: EntryMap) -> Snapshot {
        Snapshot {
            entries,
            fallthrough: None,
        }
    }
}

impl SnapshotSource for Snapshot {
    fn get(&self, key: &Rc<LedgerKey>) -> Result<Option<EntryWithLiveUntil>, HostError> {
        if let Some(s) = self.entries.get(key.as_ref()) {
            return Ok(Some((Rc::new(s.entry.clone()), s.live_until)));
        }
        match &self.fallthrough {
            Some(f) => f.get(key),
            None => Ok(None),
        }
    }
}

/// The network configuration the `ConfigSetting` entries of `entries` carry.
pub fn network_config(entries: &EntryMap) -> Result<NetworkConfig, HostSetupError> {
    NetworkConfig::load_from_snapshot(&Snapshot::local(entries.clone()))
        .map_err(|e| HostSetupError::NetworkConfig(e.to_string()))
}

/// One `ConfigSetting` entry of `entries`.
pub fn config_setting(entries: &EntryMap, id: ConfigSettingId) -> Option<ConfigSettingEntry> {
    let key = LedgerKey::ConfigSetting(LedgerKeyConfigSetting {
        config_setting_id: id,
    });
    match entries.get(&key).map(|s| &s.entry.data) {
        Some(LedgerEntryData::ConfigSetting(cs)) => Some(cs.clone()),
        _ => None,
    }
}
