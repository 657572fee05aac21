//! One invocation in recording mode — the footprint and every authorization it asks for recorded, each
//! granted — on a host that reuses parsed contract code. soroban-env-host's own recording entry point
//! builds a host without a module cache, so every call parsed every module it ran again: two thirds of
//! a probe's time on a 28 KB token. The validators run with a module cache too, and the budget charges a
//! cached module as the recording host charged its simulated cache hit, so what a call may spend is the
//! same either way.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use soroban_env_host::budget::Budget;
use soroban_env_host::storage::{EntryWithLiveUntil, SnapshotSource, Storage};
use soroban_env_host::xdr::{
    AccountId, ContractEvent, ContractEventType, HostFunction, LedgerEntry, LedgerEntryData,
    LedgerKey, ScVal, SorobanAddressCredentials, SorobanAuthorizationEntry, SorobanCredentials,
};
use soroban_env_host::{Host, HostError, LedgerInfo, ModuleCache};

use crate::host::add_to_module_cache;

/// What one recorded invocation did.
pub(crate) struct Recorded {
    /// The returned value, or the host's error.
    pub result: Result<ScVal, HostError>,
    /// The authorizations it asked for, as entries with address credentials and no signature.
    pub auth: Vec<SorobanAuthorizationEntry>,
    /// Every entry it read or wrote, failed sub-calls' included (its footprint).
    pub footprint: BTreeSet<LedgerKey>,
    /// The entries the host held when the call ended, with their values (`None`: absent). A failed call's
    /// entries are rolled back out of it: only [`Recorded::footprint`] names everything read.
    pub stored: Vec<(LedgerKey, Option<LedgerEntry>)>,
    /// The contract events of calls that did not fail (none when the invocation failed).
    pub events: Vec<ContractEvent>,
}

/// The context of one invocation: its budget, source, ledger and randomness.
pub(crate) struct Invocation<'a> {
    pub budget: &'a Budget,
    pub source: &'a AccountId,
    pub ledger_info: LedgerInfo,
    pub prng_seed: [u8; 32],
}

/// Runs `host_fn` on `snapshot` in recording mode with `cache`, then parses into `cache` every contract
/// code the call loaded that it did not hold, so the next call finds it parsed. (A module cannot be added
/// while a host runs: the cache's engine is locked during execution.)
///
/// # Errors
/// The host's error when it could not be set up or could not report what the call did (an exhausted
/// budget among them); a failed call is `Ok` with the error in [`Recorded::result`].
pub(crate) fn invoke(
    cx: Invocation<'_>,
    host_fn: HostFunction,
    snapshot: Rc<dyn SnapshotSource>,
    cache: &ModuleCache,
) -> Result<Recorded, HostError> {
    let read = Rc::new(Logged {
        source: snapshot,
        keys: RefCell::default(),
    });
    let host = Host::with_storage_and_budget(
        Storage::with_recording_footprint(read.clone()),
        cx.budget.clone(),
    );
    host.set_module_cache(cache.clone())?;
    host.set_source_account(cx.source.clone())?;
    host.set_ledger_info(cx.ledger_info)?;
    host.set_base_prng_seed(cx.prng_seed)?;
    host.switch_to_recording_auth(false)?;
    let result = host.invoke_function(host_fn);
    let auth = host
        .get_recorded_auth_payloads()?
        .into_iter()
        .map(|payload| SorobanAuthorizationEntry {
            credentials: match (payload.address, payload.nonce) {
                (Some(address), Some(nonce)) => {
                    SorobanCredentials::Address(SorobanAddressCredentials {
                        address,
                        nonce,
                        signature_expiration_ledger: 0,
                        signature: ScVal::Void,
                    })
                }
                _ => SorobanCredentials::SourceAccount,
            },
            root_invocation: payload.invocation,
        })
        .collect();
    let stored: Vec<(LedgerKey, Option<LedgerEntry>)> = host
        .get_stored_entries()?
        .into_iter()
        .map(|(key, value)| ((*key).clone(), value.map(|(entry, _)| (*entry).clone())))
        .collect();
    let (_, events) = host.try_finish()?;
    for (_, entry) in &stored {
        if let Some(LedgerEntry {
            data: LedgerEntryData::ContractCode(code),
            ..
        }) = entry
        {
            // Code that does not parse is left out: a call that runs it parses it again and fails as it
            // would have.
            if !cache.contains_module(&code.hash).unwrap_or(true) {
                let _ = add_to_module_cache(cache, code);
            }
        }
    }
    let events = if result.is_ok() {
        (events.0.into_iter())
            .filter(|e| !e.failed_call && e.event.type_ != ContractEventType::Diagnostic)
            .map(|e| e.event)
            .collect()
    } else {
        vec![]
    };
    Ok(Recorded {
        result,
        auth,
        footprint: read.keys.take(),
        stored,
        events,
    })
}

/// A snapshot that notes every key the host asks it for: in recording mode the host reads each entry
/// through once before it first touches it, so these keys are the call's footprint.
struct Logged {
    source: Rc<dyn SnapshotSource>,
    keys: RefCell<BTreeSet<LedgerKey>>,
}

impl SnapshotSource for Logged {
    fn get(&self, key: &Rc<LedgerKey>) -> Result<Option<EntryWithLiveUntil>, HostError> {
        self.keys.borrow_mut().insert((**key).clone());
        self.source.get(key)
    }
}
