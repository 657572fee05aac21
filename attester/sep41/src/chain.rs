//! The suite's only window on the token: simulated reads, signed writes, the ledger clock.
//!
//! [`RpcChain`] speaks stellar-rpc, so the same suite runs against any network; tests script it.
use std::time::Duration;

use assay_chain::{InvokeOutcome, Network, ReadOutcome, Secret};
use stellar_xdr::{AccountId, ScAddress, ScVal};

/// Which party signs a write. Every write is signed by the party the clause names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signer {
    Holder,
    Spender,
}

/// The token under test, as the suite sees it.
pub trait TokenChain {
    /// A read-only call of `function`. `Err` is a harness or network fault (no answer).
    fn read(&mut self, function: &str, args: Vec<ScVal>) -> Result<ReadOutcome, String>;
    /// A signed call of `function`. `Err` is a harness or network fault: the attempt never
    /// produced an answer about the contract.
    fn write(
        &mut self,
        signer: Signer,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<InvokeOutcome, String>;
    /// The latest closed ledger.
    fn latest_ledger(&mut self) -> Result<u32, String>;
    /// Waits `duration` of wall-clock time (scripted chains advance their own clock instead).
    fn pause(&mut self, duration: Duration);
}

/// A token reached over stellar-rpc.
pub struct RpcChain<'a> {
    pub network: &'a Network,
    pub contract: ScAddress,
    /// Simulation source for reads (any account id; never charged).
    pub read_source: AccountId,
    pub holder: Option<Secret>,
    pub spender: Option<Secret>,
}

impl TokenChain for RpcChain<'_> {
    fn read(&mut self, function: &str, args: Vec<ScVal>) -> Result<ReadOutcome, String> {
        self.network
            .read(&self.read_source, &self.contract, function, args)
            .map_err(|e| e.to_string())
    }

    fn write(
        &mut self,
        signer: Signer,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<InvokeOutcome, String> {
        let key = match signer {
            Signer::Holder => self.holder.as_ref(),
            Signer::Spender => self.spender.as_ref(),
        };
        let Some(key) = key else {
            return Err(format!(
                "no key for the {signer:?} (a premise the suite checks first)"
            ));
        };
        self.network
            .invoke(key, &self.contract, function, args)
            .map_err(|e| e.to_string())
    }

    fn latest_ledger(&mut self) -> Result<u32, String> {
        self.network.latest_ledger().map_err(|e| e.to_string())
    }

    fn pause(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}
