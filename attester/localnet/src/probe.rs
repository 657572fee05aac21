//! A sandbox for probing a contract: calls run in the real Soroban host on a private copy of this
//! network's state (in fork mode, entries it never held still come from the upstream, read once), with
//! whatever authorization each call asks for granted, and nothing reaches the network itself. A
//! checkpoint taken before a call and restored after it lets a prober compare state before and after
//! one call at a time — how power discovery observes what a token's functions do to holders.

use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;

use soroban_env_host::budget::Budget;
use soroban_env_host::storage::SnapshotSource;
use soroban_env_host::xdr::{
    AccountId, ContractCodeEntry, ContractCodeEntryExt, ContractEvent, Hash, HostFunction,
    InvokeContractArgs, LedgerEntry, LedgerEntryData, LedgerEntryExt, LedgerFootprint, LedgerKey,
    LedgerKeyContractCode, Limits, ScAddress, ScEnvMetaEntry, ScEnvMetaEntryInterfaceVersion,
    ScSymbol, ScVal, SorobanAuthorizationEntry, WriteXdr,
};
use soroban_env_host::{LedgerInfo, ModuleCache};
use soroban_simulation::NetworkConfig;

use crate::error::LocalNetError;
use crate::genesis::{MAX_ENTRY_TTL, PROTOCOL_VERSION};
use crate::record;
use crate::source::{EntrySource, Fallthrough, Snapshot};
use crate::state::{EntryMap, Overlay, Stored};
use crate::xdrutil::{sha256, to_bytes};
use crate::{simulate, LocalNet};

/// A private copy of a network's state to run calls on. See the module docs.
pub struct Sandbox {
    entries: EntryMap,
    faulted: BTreeSet<LedgerKey>,
    fork: Option<Arc<dyn EntrySource>>,
    ledger_info: LedgerInfo,
    net: NetworkConfig,
    source: AccountId,
    calls: u64,
    /// Addresses made up for this sandbox: keys naming them are never asked of a fork's upstream.
    made_up: Arc<BTreeSet<ScAddress>>,
    /// Contract code parsed once for every call of this sandbox.
    modules: ModuleCache,
}

/// A ledger clock: the sequence number and close time (Unix seconds) calls run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    pub sequence: u32,
    pub timestamp: u64,
}

impl Clock {
    /// Seconds a ledger takes to close on the public networks: how far the sequence moves with the time.
    pub const LEDGER_SECS: u64 = 5;

    /// This clock `seconds` later, its sequence moved by as many ledgers as close in that time.
    pub fn later(self, seconds: u64) -> Clock {
        let ledgers = u32::try_from(seconds / Self::LEDGER_SECS).unwrap_or(u32::MAX);
        Clock {
            sequence: self.sequence.saturating_add(ledgers),
            timestamp: self.timestamp.saturating_add(seconds),
        }
    }
}

/// The state of a [`Sandbox`] at one moment, to return to.
#[derive(Clone)]
pub struct Checkpoint {
    entries: EntryMap,
    faulted: BTreeSet<LedgerKey>,
}

/// One entry a call changed: its value before and after (`None`: absent).
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    pub key: LedgerKey,
    pub before: Option<LedgerEntry>,
    pub after: Option<LedgerEntry>,
}

/// What one call did.
#[derive(Clone, Debug)]
pub struct Call {
    /// The returned value, or why the host refused or trapped.
    pub result: Result<ScVal, CallError>,
    /// The authorizations the call asked for (recorded; every one was granted). The calls' source account
    /// is nobody's, so every party's authorization is an address credential here.
    pub auth: Vec<SorobanAuthorizationEntry>,
    /// Every entry it read or wrote.
    pub footprint: LedgerFootprint,
    /// The contract events it emitted (empty when it failed).
    pub events: Vec<ContractEvent>,
    /// The entries whose value it changed (empty when it failed).
    pub writes: Vec<Write>,
    /// The fork's upstream failed during the call: the result says nothing about the contract.
    pub upstream_error: Option<String>,
}

/// Why a call returned no value: the sandbox could not make it, or the host ran it and it failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The function name is not a Soroban symbol.
    #[error("{0:?} is not a function name")]
    NotAFunctionName(String),
    /// More arguments than a call can carry.
    #[error("too many arguments")]
    TooManyArguments,
    /// The host's budget could not be built from the network's cost parameters.
    #[error("cannot build the host's budget: {0}")]
    Budget(String),
    /// The host could not run the invocation at all.
    #[error("{function} could not run: {error}")]
    CouldNotRun {
        /// The function called.
        function: String,
        /// The host's error.
        error: String,
    },
    /// The invocation ran and failed: trapped, refused, or a host error.
    #[error("{function} failed: {error}")]
    Failed {
        /// The function called.
        function: String,
        /// The host's error.
        error: String,
    },
}

impl Call {
    /// Whether the call returned a value.
    pub fn succeeded(&self) -> bool {
        self.result.is_ok()
    }
}

impl LocalNet {
    /// A sandbox holding a copy of this network's current state (see [`Sandbox`]). Calls run at the next
    /// ledger's sequence number and this moment's close time.
    pub fn sandbox(&self) -> Result<Sandbox, LocalNetError> {
        let l = self.shared.lock();
        let (input, net) = simulate::prepare(&l).map_err(LocalNetError::Genesis)?;
        Ok(Sandbox {
            entries: l.entries.clone(),
            faulted: l.faulted.clone(),
            fork: l.fork.clone(),
            ledger_info: input.ledger_info,
            net,
            source: crate::xdrutil::account_id(sha256(b"assay sandbox source: nobody's account")),
            calls: 0,
            made_up: Arc::default(),
            modules: crate::host::new_module_cache().map_err(LocalNetError::Genesis)?,
        })
    }
}

impl Sandbox {
    /// The ledger sequence calls run at.
    pub fn ledger(&self) -> u32 {
        self.ledger_info.sequence_number
    }

    /// The ledger clock calls run at: sequence number and close time (Unix seconds).
    pub fn clock(&self) -> Clock {
        Clock {
            sequence: self.ledger_info.sequence_number,
            timestamp: self.ledger_info.timestamp,
        }
    }

    /// Runs later calls at `clock` (a probe of what a token does once time has passed). Entries whose TTL
    /// ends before its sequence are read as the host reads them there: a temporary entry as absent, an
    /// archived persistent entry restored (protocol 23's automatic restore).
    pub fn set_clock(&mut self, clock: Clock) {
        self.ledger_info.sequence_number = clock.sequence;
        self.ledger_info.timestamp = clock.timestamp;
    }

    /// Declares `addresses` made up for this sandbox (parties derived from a private seed that no one
    /// else uses): in fork mode a key that names one is absent, and the upstream is never asked for it.
    pub fn made_up(&mut self, addresses: impl IntoIterator<Item = ScAddress>) {
        let mut set = (*self.made_up).clone();
        set.extend(addresses);
        self.made_up = Arc::new(set);
    }

    /// Host invocations run so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// The current state, to [`restore`](Sandbox::restore) later.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            entries: self.entries.clone(),
            faulted: self.faulted.clone(),
        }
    }

    /// Returns to a checkpoint: every write since it is undone.
    pub fn restore(&mut self, checkpoint: &Checkpoint) {
        self.entries = checkpoint.entries.clone();
        self.faulted = checkpoint.faulted.clone();
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            entries: self.entries.clone(),
            fallthrough: self.fork.clone().map(|source| Fallthrough {
                source,
                faulted: self.faulted.clone(),
                made_up: self.made_up.clone(),
                local_nonces: true,
            }),
        }
    }

    /// The current value of `key` (in fork mode, the upstream's when the sandbox never held it).
    ///
    /// # Errors
    /// [`LocalNetError::Fork`] when the upstream could not be read.
    pub fn entry(&self, key: &LedgerKey) -> Result<Option<LedgerEntry>, LocalNetError> {
        self.snapshot()
            .get(&Rc::new(key.clone()))
            .map(|v| v.map(|(e, _)| (*e).clone()))
            .map_err(|e| LocalNetError::Fork(format!("cannot read an entry: {e:?}")))
    }

    /// Runs `function(args)` on `contract` and keeps its writes when it succeeds.
    pub fn invoke(&mut self, contract: &ScAddress, function: &str, args: Vec<ScVal>) -> Call {
        let call = self.run(contract, function, args);
        if call.succeeded() && call.upstream_error.is_none() {
            for w in &call.writes {
                self.faulted.insert(w.key.clone());
            }
            let seq = self.ledger();
            let mut overlay = Overlay::default();
            for w in &call.writes {
                match &w.after {
                    Some(entry) => {
                        let live = self
                            .entries
                            .get(&w.key)
                            .and_then(|s| s.live_until)
                            // An entry past its TTL (a later clock) was restored or re-created.
                            .filter(|l| *l >= seq)
                            .or_else(|| {
                                crate::state::durability(&w.key)
                                    .map(|_| seq.saturating_add(MAX_ENTRY_TTL - 1))
                            });
                        overlay.put(w.key.clone(), entry.clone(), live);
                    }
                    None => overlay.remove(w.key.clone()),
                }
            }
            overlay.commit(&mut self.entries, seq);
        }
        call
    }

    /// Runs `function(args)` on `contract` and keeps nothing: a read, or a what-if.
    pub fn simulate(&mut self, contract: &ScAddress, function: &str, args: Vec<ScVal>) -> Call {
        self.run(contract, function, args)
    }

    /// Adds a contract code entry holding `wasm` (not validated: a call that runs it validates it) and
    /// returns its hash, so a probe can name code other than the token's own.
    pub fn install_code(&mut self, wasm: &[u8]) -> [u8; 32] {
        let hash = sha256(wasm);
        let key = LedgerKey::ContractCode(LedgerKeyContractCode { hash: Hash(hash) });
        let entry = LedgerEntry {
            last_modified_ledger_seq: self.ledger(),
            data: LedgerEntryData::ContractCode(ContractCodeEntry {
                ext: ContractCodeEntryExt::V0,
                hash: Hash(hash),
                code: wasm.to_vec().try_into().unwrap_or_default(),
            }),
            ext: LedgerEntryExt::V0,
        };
        self.faulted.insert(key.clone());
        self.entries.insert(
            key,
            Arc::new(Stored {
                entry,
                live_until: Some(self.ledger().saturating_add(MAX_ENTRY_TTL - 1)),
            }),
        );
        hash
    }

    fn run(&mut self, contract: &ScAddress, function: &str, args: Vec<ScVal>) -> Call {
        self.calls += 1;
        let refused = |why: CallError| Call {
            result: Err(why),
            auth: vec![],
            footprint: LedgerFootprint::default(),
            events: vec![],
            writes: vec![],
            upstream_error: None,
        };
        let Ok(name) = ScSymbol::try_from(function) else {
            return refused(CallError::NotAFunctionName(function.to_string()));
        };
        let Ok(args) = args.try_into() else {
            return refused(CallError::TooManyArguments);
        };
        let host_fn = HostFunction::InvokeContract(InvokeContractArgs {
            contract_address: contract.clone(),
            function_name: name,
            args,
        });
        let budget = match Budget::try_from_configs(
            u64::try_from(self.net.tx_max_instructions).unwrap_or(0),
            u64::from(self.net.tx_memory_limit),
            self.net.cpu_cost_params.clone(),
            self.net.memory_cost_params.clone(),
        ) {
            Ok(b) => b,
            Err(e) => return refused(CallError::Budget(format!("{e:?}"))),
        };
        if let Some(f) = &self.fork {
            f.take_error(); // only this call's upstream failures are reported below
        }
        let snapshot = Rc::new(self.snapshot());
        let mut seed = to_bytes(&host_fn);
        seed.extend_from_slice(&self.calls.to_be_bytes());
        let outcome = record::invoke(
            record::Invocation {
                budget: &budget,
                source: &self.source,
                ledger_info: self.ledger_info.clone(),
                prng_seed: sha256(&seed),
            },
            host_fn,
            snapshot.clone(),
            &self.modules,
        );
        let upstream_error = self.fork.as_ref().and_then(|f| f.take_error());
        let r = match outcome {
            Ok(r) => r,
            Err(e) => {
                return Call {
                    upstream_error,
                    ..refused(CallError::CouldNotRun {
                        function: function.to_string(),
                        error: format!("{:?}", e.error),
                    })
                }
            }
        };
        let mut writes = Vec::new();
        if r.result.is_ok() {
            for (key, after) in r.stored {
                let before = snapshot
                    .get(&Rc::new(key.clone()))
                    .ok()
                    .flatten()
                    .map(|(e, _)| (*e).clone());
                let same = match (&before, &after) {
                    (Some(b), Some(a)) => b.data == a.data,
                    (None, None) => true,
                    _ => false,
                };
                if !same {
                    writes.push(Write { key, before, after });
                }
            }
        }
        // Read-write: the entries the call changed; everything else it touched read-only.
        let read_write: Vec<LedgerKey> = writes.iter().map(|w| w.key.clone()).collect();
        let read_only: Vec<LedgerKey> = (r.footprint.into_iter())
            .filter(|k| !read_write.contains(k))
            .collect();
        let footprint = LedgerFootprint {
            read_only: read_only.try_into().unwrap_or_default(),
            read_write: read_write.try_into().unwrap_or_default(),
        };
        Call {
            result: r.result.map_err(|e| CallError::Failed {
                function: function.to_string(),
                error: format!("{:?}", e.error),
            }),
            auth: r.auth,
            footprint,
            events: r.events,
            writes,
            upstream_error,
        }
    }
}

/// A minimal module that is valid contract code and exports nothing: what a probe hands a function that
/// asks for a code hash, so replacing the token's code is observable as a changed executable.
pub fn placeholder_wasm() -> Vec<u8> {
    let meta = ScEnvMetaEntry::ScEnvMetaKindInterfaceVersion(ScEnvMetaEntryInterfaceVersion {
        protocol: PROTOCOL_VERSION,
        pre_release: 0,
    })
    .to_xdr(Limits::none())
    .unwrap_or_default();
    let name = b"contractenvmetav0";
    let mut section = vec![name.len() as u8];
    section.extend_from_slice(name);
    section.extend_from_slice(&meta);
    let mut wasm = b"\0asm\x01\0\0\0".to_vec();
    wasm.push(0);
    wasm.push(section.len() as u8);
    wasm.extend(section);
    wasm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_code_is_a_module_with_only_its_interface_version() {
        let wasm = placeholder_wasm();
        assert_eq!(&wasm[..8], b"\0asm\x01\0\0\0");
        assert_eq!(wasm[8], 0, "one custom section");
        assert_eq!(wasm.len(), 8 + 2 + 1 + 17 + 12);
    }
}
