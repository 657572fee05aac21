//! Fork mode: the network starts from another network's ledger. Entries it does not hold are
//! read from the upstream's stellar-rpc (`getLedgerEntries`, batched) the first time something
//! needs them, kept for the run, and optionally written to a `stellar snapshot` JSON file, so a
//! later run replays offline. Everything written stays here; nothing is ever sent upstream.
//!
//! stellar-rpc serves only its latest state, so the fork pins the ledger it starts from and
//! records every entry the upstream reports modified after that ledger (drift): the fork then
//! holds entries of two ledgers, and a run on it is undetermined unless it starts again pinned
//! at a ledger that covers them. A fork below the upstream's latest ledger is therefore only
//! served from a cache recorded there.
//!
//! The ledger reads the fork through [`EntrySource`], which [`ForkSource`] implements.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use assay_chain::rpc::RpcClient;

use serde::{Deserialize, Serialize};
use soroban_env_host::xdr::{
    AccountId, AlphaNum12, AlphaNum4, Asset, AssetCode, ChangeTrustAsset, LedgerEntry,
    LedgerEntryData, LedgerEntryExt, LedgerKey, OperationBody, TransactionEnvelope, TransactionExt,
};
use soroban_ledger_snapshot::LedgerSnapshot;

use crate::classic;
use crate::error::LocalNetError;
use crate::genesis::{
    BASE_RESERVE, MAX_ENTRY_TTL, MIN_PERSISTENT_TTL, MIN_TEMPORARY_TTL, PROTOCOL_VERSION,
};
use crate::host::add_to_module_cache;
use crate::node::Shared;
use crate::source::{EntrySource, ForkError};
use crate::state::Stored;
use crate::xdrutil::{self, from_b64, muxed_to_account};

/// getLedgerEntries takes at most this many keys per call.
const MAX_KEYS_PER_CALL: usize = 200;

/// The largest cache file replayed ([`assay_chain::files::MAX_FORK_CACHE_BYTES`]).
pub const MAX_CACHE_BYTES: u64 = assay_chain::files::MAX_FORK_CACHE_BYTES;

/// The highest ledger number a cache may hold (its fork ledger, an entry's last modification or TTL): far
/// above any network's (pubnet's is below 10⁸) and far enough below `u32::MAX` that the ledgers a run closes
/// and the TTLs it extends (at most [`MAX_ENTRY_TTL`] ahead) cannot overflow.
pub const MAX_CACHE_LEDGER: u32 = i32::MAX as u32;

/// The latest close time a cache may hold: the end of year 9999 (Unix seconds).
pub const MAX_CACHE_TIMESTAMP: u64 = 253_402_300_799;

/// Where a fork's state comes from.
#[derive(Clone, Debug, Default)]
pub struct ForkConfig {
    /// The upstream's stellar-rpc URL. Not needed when `cache` names an existing file.
    pub rpc_url: Option<String>,
    /// The ledger to fork at; the upstream's latest when `None`.
    pub ledger: Option<u32>,
    /// A `stellar snapshot` JSON file: replayed offline when it exists, written as entries
    /// arrive when it does not.
    pub cache: Option<PathBuf>,
}

/// What a fork has done so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkStats {
    /// The ledger the fork started from.
    pub ledger: u32,
    /// The fork replays a cache file and makes no upstream calls.
    pub offline: bool,
    /// Calls made to the upstream's stellar-rpc.
    pub upstream_round_trips: u64,
    /// Entries the upstream (or the cache file) supplied.
    pub entries: usize,
    /// Entries the upstream reported modified after the fork ledger (base64 keys).
    pub drifted: Vec<String>,
    /// The newest `lastModifiedLedgerSeq` of the entries read: a fork pinned at this ledger or
    /// later covers every one of them.
    pub newest_entry_ledger: u32,
}

/// The upstream answers, pinned for the run: `None` = the upstream has no such entry.
pub(crate) struct ForkSource {
    upstream: Option<RpcClient>,
    ledger: u32,
    timestamp: u64,
    passphrase: String,
    cache_path: Option<PathBuf>,
    known: Mutex<BTreeMap<LedgerKey, Option<Stored>>>,
    notes: Mutex<BTreeMap<String, serde_json::Value>>,
    drifted: Mutex<Vec<String>>,
    newest_entry_ledger: std::sync::atomic::AtomicU32,
    last_error: Mutex<Option<String>>,
}

/// The cache file: a `stellar snapshot` (soroban-ledger-snapshot's `LedgerSnapshot`) plus what a
/// replay needs that the snapshot format lacks. stellar-cli ignores the extra field.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    #[serde(flatten)]
    snapshot: LedgerSnapshot,
    #[serde(default)]
    assay_fork: CacheExtras,
}

#[derive(Serialize, Deserialize, Default)]
struct CacheExtras {
    #[serde(default)]
    passphrase: Option<String>,
    /// Facts an embedding program recorded for its own replay (see [`crate::LocalNet::fork_note`]).
    #[serde(default)]
    notes: BTreeMap<String, serde_json::Value>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn fork_error(message: String) -> LocalNetError {
    LocalNetError::Fork(message)
}

impl ForkSource {
    /// Opens the cache file when it exists (offline), otherwise asks the upstream for its
    /// passphrase and latest ledger. `passphrase` is used for a cache file that does not name one.
    pub(crate) fn open(config: &ForkConfig, passphrase: &str) -> Result<ForkSource, LocalNetError> {
        if let Some(path) = config.cache.as_deref().filter(|p| p.exists()) {
            return Self::replay(path, config.ledger, passphrase);
        }
        let Some(url) = config.rpc_url.as_deref() else {
            return Err(fork_error(
                "a fork needs the upstream's RPC URL (--fork-rpc-url URL), or an existing --fork-cache FILE to replay"
                    .into(),
            ));
        };
        let client = RpcClient::new(url).map_err(|e| fork_error(format!("--fork-rpc-url: {e}")))?;
        let network = client
            .get_network()
            .map_err(|e| fork_error(format!("cannot reach the fork's upstream: {e}")))?;
        let latest = client
            .get_latest_ledger()
            .map_err(|e| fork_error(format!("cannot read the upstream's latest ledger: {e}")))?
            .sequence;
        let ledger = match config.ledger {
            Some(n) if n > latest => {
                return Err(LocalNetError::ForkLedger(format!(
                    "--fork-ledger {n} is ahead of the upstream's latest ledger {latest}; pass {latest} or less"
                )))
            }
            Some(0) => {
                return Err(LocalNetError::ForkLedger(
                    "--fork-ledger must be at least 1".into(),
                ))
            }
            // stellar-rpc answers with its latest state only: entries read from it could be newer
            // than ledger n, so a past ledger is served from a cache recorded there or not at all.
            Some(n) if n < latest => {
                return Err(LocalNetError::ForkLedger(format!(
                    "--fork-ledger {n} is behind the upstream's latest ledger {latest}, and stellar-rpc \
                     serves only its latest state; omit --fork-ledger to fork at the latest ledger, or \
                     pass --fork-cache FILE naming a cache recorded at ledger {n}"
                )))
            }
            Some(n) => n,
            None => latest,
        };
        Ok(ForkSource {
            upstream: Some(client),
            ledger,
            timestamp: assay_core::Timestamp::now().unix_secs(),
            passphrase: network.passphrase,
            cache_path: config.cache.clone(),
            known: Mutex::new(BTreeMap::new()),
            notes: Mutex::new(BTreeMap::new()),
            drifted: Mutex::new(Vec::new()),
            newest_entry_ledger: Default::default(),
            last_error: Mutex::new(None),
        })
    }

    fn replay(
        path: &Path,
        ledger: Option<u32>,
        passphrase: &str,
    ) -> Result<ForkSource, LocalNetError> {
        let shown = path.display();
        let text = assay_chain::files::read_capped(path, MAX_CACHE_BYTES, "fork caches")
            .map_err(|e| fork_error(format!("--fork-cache {e}")))?;
        let file: CacheFile = serde_json::from_str(&text).map_err(|e| {
            fork_error(format!(
                "--fork-cache {shown} is not a stellar snapshot JSON file ({e}); remove it to record a new one"
            ))
        })?;
        let snap = file.snapshot;
        check_cache(&snap)
            .map_err(|why| fork_error(format!("--fork-cache {shown} is refused: {why}")))?;
        if let Some(n) = ledger.filter(|n| *n != snap.sequence_number) {
            return Err(LocalNetError::ForkLedger(format!(
                "--fork-cache {shown} holds ledger {}, not --fork-ledger {n}; drop one of them",
                snap.sequence_number
            )));
        }
        let passphrase = file
            .assay_fork
            .passphrase
            .unwrap_or_else(|| passphrase.to_string());
        if xdrutil::network_id(&passphrase) != snap.network_id {
            return Err(fork_error(format!(
                "--fork-cache {shown} is from another network than {passphrase:?}; pass its --network-passphrase"
            )));
        }
        let newest = (snap.ledger_entries.iter())
            .map(|(_, (entry, _))| entry.last_modified_ledger_seq)
            .max()
            .unwrap_or(0);
        let known = snap
            .ledger_entries
            .into_iter()
            .map(|(key, (entry, live_until))| {
                (
                    *key,
                    Some(Stored {
                        entry: *entry,
                        live_until,
                    }),
                )
            })
            .collect();
        Ok(ForkSource {
            upstream: None,
            ledger: snap.sequence_number,
            timestamp: snap.timestamp,
            passphrase,
            cache_path: None,
            known: Mutex::new(known),
            notes: Mutex::new(file.assay_fork.notes),
            drifted: Mutex::new(Vec::new()),
            newest_entry_ledger: newest.into(),
            last_error: Mutex::new(None),
        })
    }

    pub(crate) fn passphrase(&self) -> &str {
        &self.passphrase
    }

    pub(crate) fn stats(&self) -> ForkStats {
        ForkStats {
            ledger: self.ledger,
            offline: self.upstream.is_none(),
            upstream_round_trips: self.upstream.as_ref().map_or(0, RpcClient::round_trips),
            entries: lock(&self.known).values().flatten().count(),
            drifted: lock(&self.drifted).clone(),
            newest_entry_ledger: self
                .newest_entry_ledger
                .load(std::sync::atomic::Ordering::SeqCst),
        }
    }

    pub(crate) fn note(&self, key: &str, value: serde_json::Value) -> Result<(), ForkError> {
        lock(&self.notes).insert(key.to_string(), value);
        self.persist(&lock(&self.known))
    }

    pub(crate) fn noted(&self, key: &str) -> Option<serde_json::Value> {
        lock(&self.notes).get(key).cloned()
    }

    fn fetch(
        &self,
        client: &RpcClient,
        keys: &[LedgerKey],
    ) -> Result<Vec<(LedgerKey, Option<Stored>)>, ForkError> {
        let response = client
            .get_ledger_entries(keys)
            .map_err(|e| ForkError::Unanswered(e.to_string()))?;
        let mut got = BTreeMap::new();
        for r in response.entries.unwrap_or_default() {
            let key: LedgerKey = from_b64(&r.key)?;
            let data: LedgerEntryData = from_b64(&r.xdr)?;
            if r.last_modified_ledger > self.ledger {
                lock(&self.drifted).push(r.key.clone());
            }
            self.newest_entry_ledger
                .fetch_max(r.last_modified_ledger, std::sync::atomic::Ordering::SeqCst);
            let entry = LedgerEntry {
                last_modified_ledger_seq: r.last_modified_ledger,
                data,
                ext: LedgerEntryExt::V0,
            };
            let live_until = r.live_until_ledger_seq_ledger_seq;
            got.insert(key, Stored { entry, live_until });
        }
        Ok(keys.iter().map(|k| (k.clone(), got.remove(k))).collect())
    }

    /// Rewrites the cache file (write then rename, so an interrupted run leaves the old one).
    fn persist(&self, known: &BTreeMap<LedgerKey, Option<Stored>>) -> Result<(), ForkError> {
        let Some(path) = &self.cache_path else {
            return Ok(());
        };
        let snapshot = LedgerSnapshot {
            protocol_version: PROTOCOL_VERSION,
            sequence_number: self.ledger,
            timestamp: self.timestamp,
            network_id: xdrutil::network_id(&self.passphrase),
            base_reserve: BASE_RESERVE,
            min_persistent_entry_ttl: MIN_PERSISTENT_TTL,
            min_temp_entry_ttl: MIN_TEMPORARY_TTL,
            max_entry_ttl: MAX_ENTRY_TTL,
            ledger_entries: known
                .iter()
                .filter_map(|(k, s)| {
                    let s = s.as_ref()?;
                    Some((
                        Box::new(k.clone()),
                        (Box::new(s.entry.clone()), s.live_until),
                    ))
                })
                .collect(),
        };
        let file = CacheFile {
            snapshot,
            assay_fork: CacheExtras {
                passphrase: Some(self.passphrase.clone()),
                notes: lock(&self.notes).clone(),
            },
        };
        let shown = path.display().to_string();
        let text = serde_json::to_vec(&file).map_err(|e| ForkError::CacheEncode {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        assay_chain::files::write_atomic(path, &text).map_err(|e| ForkError::CacheWrite {
            path: shown,
            message: e.to_string(),
        })
    }
}

/// Every value of a cache that the run computes with is bounded, and every entry is the one its key names:
/// a code entry's code hashes to its key, so a replay runs only the code the key (and so the instance that
/// names it) says.
fn check_cache(snap: &LedgerSnapshot) -> Result<(), CacheDefect> {
    if snap.sequence_number == 0 || snap.sequence_number > MAX_CACHE_LEDGER {
        return Err(CacheDefect::Ledger(snap.sequence_number));
    }
    if snap.timestamp > MAX_CACHE_TIMESTAMP {
        return Err(CacheDefect::CloseTime(snap.timestamp));
    }
    for (key, (entry, live_until)) in &snap.ledger_entries {
        let shown = || xdrutil::to_b64(key.as_ref());
        let ledgers = [Some(entry.last_modified_ledger_seq), *live_until];
        if let Some(n) = ledgers
            .into_iter()
            .flatten()
            .find(|n| *n > MAX_CACHE_LEDGER)
        {
            return Err(CacheDefect::EntryLedger { key: shown(), n });
        }
        if crate::state::key_of(entry).is_some_and(|k| k != **key) {
            return Err(CacheDefect::MisfiledEntry(shown()));
        }
        if let LedgerEntryData::ContractCode(code) = &entry.data {
            let actual = xdrutil::sha256(code.code.as_slice());
            if actual != code.hash.0 {
                return Err(CacheDefect::CodeHash {
                    key: hex::encode(code.hash.0),
                    actual: hex::encode(actual),
                });
            }
        }
    }
    Ok(())
}

/// What makes a fork cache unusable: a value out of its bounds, or an entry that is not the one its key names.
#[derive(Debug, thiserror::Error)]
enum CacheDefect {
    #[error("its ledger {0} is not between 1 and {MAX_CACHE_LEDGER}")]
    Ledger(u32),
    #[error("its close time {0} is after {MAX_CACHE_TIMESTAMP} (year 9999)")]
    CloseTime(u64),
    #[error("entry {key} names ledger {n}, above {MAX_CACHE_LEDGER}")]
    EntryLedger { key: String, n: u32 },
    #[error("the entry stored under key {0} is not that key's entry")]
    MisfiledEntry(String),
    #[error("the code stored under hash {key} hashes to {actual}")]
    CodeHash { key: String, actual: String },
}

impl EntrySource for ForkSource {
    fn ledger(&self) -> u32 {
        self.ledger
    }

    /// Fetches the unknown keys in batches; a replay answers them as absent.
    fn get_many(&self, keys: &[LedgerKey]) -> Result<Vec<Option<Stored>>, ForkError> {
        let mut known = lock(&self.known);
        let missing: Vec<LedgerKey> = keys
            .iter()
            .filter(|k| !known.contains_key(*k))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !missing.is_empty() {
            match &self.upstream {
                // Replaying: the recording run read every key it needed, so a key the file
                // lacks was absent then too.
                None => known.extend(missing.into_iter().map(|k| (k, None))),
                Some(client) => {
                    for chunk in missing.chunks(MAX_KEYS_PER_CALL) {
                        let fetched = self.fetch(client, chunk).inspect_err(|e| {
                            *lock(&self.last_error) = Some(e.to_string());
                        })?;
                        known.extend(fetched);
                    }
                    self.persist(&known)?;
                }
            }
        }
        Ok(keys
            .iter()
            .map(|k| known.get(k).cloned().flatten())
            .collect())
    }

    fn take_error(&self) -> Option<String> {
        lock(&self.last_error).take()
    }
}

/// Makes the local ledger hold the upstream's value of every key in `keys` it has never held,
/// so the code that reads the ledger directly (validation, classic operations, apply) sees the
/// fork's state. A no-op without a fork. The upstream is asked without the ledger lock held.
pub(crate) fn fault_in(shared: &Shared, keys: Vec<LedgerKey>) -> Result<(), ForkError> {
    let (source, missing) = {
        let mut l = shared.lock();
        let Some(source) = l.fork.clone() else {
            return Ok(());
        };
        let mut missing = Vec::new();
        for key in keys {
            if l.faulted.contains(&key) {
                continue;
            }
            if l.entries.contains_key(&key) {
                l.faulted.insert(key);
            } else {
                missing.push(key);
            }
        }
        (source, missing)
    };
    if missing.is_empty() {
        return Ok(());
    }
    let values = source.get_many(&missing).inspect_err(|_| {
        source.take_error(); // reported here; a later host run must not see it as its own
    })?;
    let mut l = shared.lock();
    for (key, value) in missing.into_iter().zip(values) {
        if !l.faulted.insert(key.clone()) || l.entries.contains_key(&key) {
            continue;
        }
        if let Some(stored) = value {
            if let LedgerEntryData::ContractCode(code) = &stored.entry.data {
                add_to_module_cache(&l.module_cache, code)?;
            }
            l.entries.insert(key, Arc::new(stored));
        }
    }
    Ok(())
}

/// Every key a transaction can read or write: its accounts, the trustlines and issuers its
/// classic operations touch, and its Soroban footprint.
pub(crate) fn touched_keys(envelope: &TransactionEnvelope) -> Vec<LedgerKey> {
    let Some((tx, _)) = xdrutil::normalize(envelope) else {
        return Vec::new();
    };
    let source = muxed_to_account(&tx.source_account);
    let mut keys = vec![classic::account_key(&source)];
    for op in tx.operations.iter() {
        let op_source = op
            .source_account
            .as_ref()
            .map(muxed_to_account)
            .unwrap_or_else(|| source.clone());
        keys.push(classic::account_key(&op_source));
        match &op.body {
            OperationBody::CreateAccount(o) => keys.push(classic::account_key(&o.destination)),
            OperationBody::Payment(o) => {
                let destination = muxed_to_account(&o.destination);
                keys.push(classic::account_key(&destination));
                keys.extend(asset_keys(&op_source, &o.asset));
                keys.extend(asset_keys(&destination, &o.asset));
            }
            OperationBody::SetTrustLineFlags(o) => keys.extend(asset_keys(&o.trustor, &o.asset)),
            OperationBody::ChangeTrust(o) => match &o.line {
                ChangeTrustAsset::CreditAlphanum4(a) => {
                    keys.extend(asset_keys(&op_source, &Asset::CreditAlphanum4(a.clone())));
                }
                ChangeTrustAsset::CreditAlphanum12(a) => {
                    keys.extend(asset_keys(&op_source, &Asset::CreditAlphanum12(a.clone())));
                }
                _ => {}
            },
            OperationBody::AllowTrust(o) => {
                let asset = match &o.asset {
                    AssetCode::CreditAlphanum4(c) => Asset::CreditAlphanum4(AlphaNum4 {
                        asset_code: c.clone(),
                        issuer: op_source.clone(),
                    }),
                    AssetCode::CreditAlphanum12(c) => Asset::CreditAlphanum12(AlphaNum12 {
                        asset_code: c.clone(),
                        issuer: op_source.clone(),
                    }),
                };
                keys.push(classic::account_key(&o.trustor));
                keys.extend(asset_keys(&o.trustor, &asset));
            }
            _ => {}
        }
    }
    if let TransactionExt::V1(data) = &tx.ext {
        let fp = &data.resources.footprint;
        keys.extend(fp.read_only.iter().chain(fp.read_write.iter()).cloned());
    }
    keys
}

/// An asset's issuer and `holder`'s trustline to it (none for native XLM).
fn asset_keys(holder: &AccountId, asset: &Asset) -> Vec<LedgerKey> {
    let issuer = classic::asset_issuer(asset).map(classic::account_key);
    let line = classic::trustline_asset(asset).map(|line| classic::trustline_key(holder, &line));
    issuer.into_iter().chain(line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use soroban_env_host::xdr::{
        ContractCodeEntry, ContractCodeEntryExt, Hash, LedgerKeyContractCode,
    };

    const PASSPHRASE: &str = "Test SDF Network ; September 2015";

    /// A cache file at `ledger` holding one code entry of `code` stored under `hash`.
    fn cache(dir: &Path, ledger: u32, hash: [u8; 32], code: &[u8]) -> PathBuf {
        let entry = LedgerEntry {
            last_modified_ledger_seq: 1,
            data: LedgerEntryData::ContractCode(ContractCodeEntry {
                ext: ContractCodeEntryExt::V0,
                hash: Hash(hash),
                code: code.to_vec().try_into().unwrap(),
            }),
            ext: LedgerEntryExt::V0,
        };
        let key = LedgerKey::ContractCode(LedgerKeyContractCode { hash: Hash(hash) });
        let file = CacheFile {
            snapshot: LedgerSnapshot {
                sequence_number: ledger,
                network_id: xdrutil::network_id(PASSPHRASE),
                ledger_entries: vec![(Box::new(key), (Box::new(entry), Some(ledger)))],
                ..LedgerSnapshot::default()
            },
            assay_fork: CacheExtras::default(),
        };
        let path = dir.join("cache.json");
        std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
        path
    }

    fn replay_error(path: &Path) -> String {
        match ForkSource::replay(path, None, PASSPHRASE) {
            Ok(_) => panic!("{} replayed", path.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_genuine_cache_replays() {
        let dir = tempfile::tempdir().unwrap();
        let code = b"\0asm code";
        let path = cache(dir.path(), 100, xdrutil::sha256(code), code);
        let source = ForkSource::replay(&path, None, PASSPHRASE).expect("replays");
        assert_eq!(source.ledger, 100);
    }

    #[test]
    fn the_last_ledger_number_is_refused_not_overflowed() {
        let dir = tempfile::tempdir().unwrap();
        let code = b"\0asm code";
        let path = cache(dir.path(), u32::MAX, xdrutil::sha256(code), code);
        let err = replay_error(&path);
        assert!(
            err.contains("its ledger 4294967295 is not between 1 and 2147483647"),
            "{err}"
        );
    }

    #[test]
    fn code_under_a_key_it_does_not_hash_to_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let genuine = b"\0asm the hashed code";
        let other = b"\0asm other code";
        let path = cache(dir.path(), 100, xdrutil::sha256(genuine), other);
        let err = replay_error(&path);
        assert!(
            err.contains(&format!(
                "the code stored under hash {} hashes to {}",
                hex::encode(xdrutil::sha256(genuine)),
                hex::encode(xdrutil::sha256(other))
            )),
            "{err}"
        );
    }

    #[test]
    fn a_huge_or_deeply_nested_cache_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.json");
        // Sparse: over the cap without taking the space; refused before it is read.
        std::fs::File::create(&path)
            .unwrap()
            .set_len(MAX_CACHE_BYTES + 1)
            .unwrap();
        let err = replay_error(&path);
        assert!(err.contains("is larger than 67108864 bytes"), "{err}");
        let nested = dir.path().join("nested.json");
        let depth = 100_000;
        std::fs::write(
            &nested,
            format!(
                "{{\"ledger_entries\":{}{}}}",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
        )
        .unwrap();
        let err = replay_error(&nested);
        assert!(
            err.contains("is not a stellar snapshot JSON file") && err.contains("recursion limit"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn recording_never_writes_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.path().join("cache.json");
        // The name the cache was once written through.
        std::os::unix::fs::symlink(&victim, dir.path().join("cache.partial")).unwrap();
        let source = ForkSource {
            upstream: None,
            ledger: 7,
            timestamp: 1,
            passphrase: PASSPHRASE.into(),
            cache_path: Some(path.clone()),
            known: Mutex::new(BTreeMap::new()),
            notes: Mutex::new(BTreeMap::new()),
            drifted: Mutex::new(Vec::new()),
            newest_entry_ledger: Default::default(),
            last_error: Mutex::new(None),
        };
        source.note("k", serde_json::json!(1)).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let replayed = ForkSource::replay(&path, None, PASSPHRASE).expect("the cache written");
        assert_eq!(replayed.noted("k"), Some(serde_json::json!(1)));
    }
}
