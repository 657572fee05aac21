//! The suite's only window on the token: simulated reads, signed writes, simulations that show
//! the authorization a call asks for and the events it publishes, the ledger clock.
//!
//! [`RpcChain`] speaks stellar-rpc, so the same suite runs against any network; tests script it.
use std::time::Duration;

use assay_chain::{AuthMode, InvokeOutcome, NetworkClient, ReadOutcome, Signer};
use stellar_xdr::{
    AccountId, ContractEvent, ContractEventType, DiagnosticEvent, PublicKey, ReadXdr, ScAddress,
    ScVal, SorobanAuthorizationEntry, Uint256,
};

/// Which party signs a write. Every write is signed by the party the clause names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Holder,
    Spender,
}

/// How a simulation treats authorization. Neither signs anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authorization {
    /// Record the authorizations the call asks for.
    Record,
    /// Enforce, with no authorization at all: the call as if nobody had signed it.
    None,
}

/// A call run by the host against the current state and never submitted.
#[derive(Debug, Clone, PartialEq)]
pub enum Simulation {
    /// The call succeeded: the authorizations recorded (from a source account that is neither party,
    /// so every one names its address) and the contract events it published, in order.
    Ran {
        auth: Vec<SorobanAuthorizationEntry>,
        events: Vec<ContractEvent>,
    },
    /// The host refused the call; its error text.
    Refused(String),
    /// The call needs archived state restored first: no answer.
    Archived,
}

/// Why a write produced no answer about the contract. Neither was submitted.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteFault {
    /// The signing guard refused: the simulation asked the signer to authorize something other
    /// than exactly the call being sent (a nested call, another call), or asked another address's
    /// authorization. Nothing was signed or submitted. `auth` is every entry the simulation asked
    /// for, the signer's own under source-account credentials.
    Unsigned {
        reason: String,
        auth: Vec<SorobanAuthorizationEntry>,
    },
    /// A harness or network fault: the attempt never produced an answer.
    NoAnswer(String),
}

impl std::fmt::Display for WriteFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteFault::Unsigned { reason, .. } => f.write_str(reason),
            WriteFault::NoAnswer(fault) => f.write_str(fault),
        }
    }
}

impl From<String> for WriteFault {
    fn from(fault: String) -> Self {
        WriteFault::NoAnswer(fault)
    }
}

/// Why a read, a simulation or a ledger query of the token got no answer: the network's or the
/// harness's fault, never an answer of the token's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoAnswer {
    /// stellar-rpc failed or refused the request.
    #[error("{0}")]
    NetworkClient(String),
    /// The RPC server answered something that does not decode.
    #[error("the RPC server sent {what} that does not decode: {message}")]
    Undecodable {
        /// What was being decoded.
        what: &'static str,
        /// The decoder's message.
        message: String,
    },
    /// A simulation answered with neither an error nor a result.
    #[error("simulation answered with no result")]
    NoResult,
}

/// The source account of authorization simulations: the all-zero key (`GAAA…AWHF`, the null account
/// @stellar/stellar-sdk also simulates from), which is neither party, so no authorization is folded
/// into the source account's and every one names its address.
pub fn observer() -> AccountId {
    AccountId(PublicKey::PublicKeyTypeEd25519(Uint256([0; 32])))
}

/// The token under test, as the suite sees it.
pub trait TokenChain {
    /// The token's contract address.
    fn token(&self) -> ScAddress;
    /// A read-only call of `function`. `Err` is a harness or network fault (no answer).
    fn read(&mut self, function: &str, args: Vec<ScVal>) -> Result<ReadOutcome, NoAnswer>;
    /// A signed call of `function`. `Err` is a call never sent: the signing guard refused it, or
    /// a harness or network fault left it without an answer.
    fn write(
        &mut self,
        signer: Role,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<InvokeOutcome, WriteFault>;
    /// `function` run by the host and never submitted, from [`observer`]. `Err` is a harness or
    /// network fault (no answer).
    fn simulate(
        &mut self,
        function: &str,
        args: Vec<ScVal>,
        authorization: Authorization,
    ) -> Result<Simulation, NoAnswer>;
    /// The latest closed ledger.
    fn latest_ledger(&mut self) -> Result<u32, NoAnswer>;
    /// Waits `duration` of wall-clock time (scripted chains advance their own clock instead).
    fn pause(&mut self, duration: Duration);
}

/// A token reached over stellar-rpc.
pub struct RpcChain<'a> {
    pub network: &'a NetworkClient,
    pub contract: ScAddress,
    /// Simulation source for reads (any account id; never charged).
    pub read_source: AccountId,
    pub holder: Option<Signer>,
    pub spender: Option<Signer>,
    /// Inside a fork, a holder acted for by address instead of `holder`'s key.
    pub fork_holder: Option<ForkHolder<'a>>,
}

/// An existing holder the suite acts as inside a fork, without its key: each of the holder's writes
/// is run by the fork's host with exactly that address's authorization of exactly the call
/// ([`LocalNet::invoke_authorized_as`]); nothing is signed, and nothing reaches the real network.
pub struct ForkHolder<'a> {
    pub localnet: &'a assay_localnet::LocalNet,
    pub address: ScAddress,
}

impl ForkHolder<'_> {
    /// The write as the holder; a call the host refuses, or that asks for any authorization but the
    /// holder's of exactly the call, is refused with the host's text.
    fn write(&self, contract: &ScAddress, function: &str, args: Vec<ScVal>) -> InvokeOutcome {
        match (self.localnet).invoke_authorized_as(&self.address, contract, function, args) {
            Ok(_) => InvokeOutcome::Landed {
                hash: format!("(authorized as the holder inside the fork: {function})"),
                ledger: self.localnet.latest_ledger(),
            },
            Err(e) => InvokeOutcome::Refused(e.to_string()),
        }
    }
}

impl<'a> RpcChain<'a> {
    /// A token on an embedded network (a fork or an offline run) whose holder and spender are keys made
    /// there: both sign, and reads are simulated from the holder's account.
    pub fn embedded(
        network: &'a NetworkClient,
        contract: &ScAddress,
        holder: &Signer,
        spender: &Signer,
    ) -> RpcChain<'a> {
        RpcChain {
            network,
            contract: contract.clone(),
            read_source: holder.account_id(),
            holder: Some(holder.clone()),
            spender: Some(spender.clone()),
            fork_holder: None,
        }
    }
}

impl TokenChain for RpcChain<'_> {
    fn token(&self) -> ScAddress {
        self.contract.clone()
    }

    fn read(&mut self, function: &str, args: Vec<ScVal>) -> Result<ReadOutcome, NoAnswer> {
        self.network
            .read(&self.read_source, &self.contract, function, args)
            .map_err(|e| NoAnswer::NetworkClient(e.to_string()))
    }

    fn write(
        &mut self,
        signer: Role,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<InvokeOutcome, WriteFault> {
        if let (Role::Holder, Some(holder)) = (signer, &self.fork_holder) {
            return Ok(holder.write(&self.contract, function, args));
        }
        let key = match signer {
            Role::Holder => self.holder.as_ref(),
            Role::Spender => self.spender.as_ref(),
        };
        let Some(key) = key else {
            return Err(WriteFault::NoAnswer(format!(
                "no key for the {signer:?} (a premise the suite checks first)"
            )));
        };
        self.network
            .invoke(key, &self.contract, function, args)
            .map_err(|e| match e.refused_authorization() {
                Some(auth) => WriteFault::Unsigned {
                    auth: auth.to_vec(),
                    reason: e.to_string(),
                },
                None => WriteFault::NoAnswer(e.to_string()),
            })
    }

    fn simulate(
        &mut self,
        function: &str,
        args: Vec<ScVal>,
        authorization: Authorization,
    ) -> Result<Simulation, NoAnswer> {
        let mode = match authorization {
            Authorization::Record => AuthMode::Record,
            Authorization::None => AuthMode::Enforce,
        };
        let sim = self
            .network
            .simulate_call(&observer(), &self.contract, function, args, Some(mode))
            .map_err(|e| NoAnswer::NetworkClient(e.to_string()))?;
        if let Some(error) = sim.error {
            return Ok(Simulation::Refused(error));
        }
        if sim.restore_preamble.is_some() {
            return Ok(Simulation::Archived);
        }
        let auth = match sim.results.first() {
            Some(result) => result
                .auth
                .iter()
                .map(|entry| decode::<SorobanAuthorizationEntry>(entry, "an authorization entry"))
                .collect::<Result<_, _>>()?,
            None => return Err(NoAnswer::NoResult),
        };
        let mut events = Vec::new();
        for text in &sim.events {
            let event: DiagnosticEvent = decode(text, "an event")?;
            if event.in_successful_contract_call && event.event.type_ == ContractEventType::Contract
            {
                events.push(event.event);
            }
        }
        Ok(Simulation::Ran { auth, events })
    }

    fn latest_ledger(&mut self) -> Result<u32, NoAnswer> {
        self.network
            .latest_ledger()
            .map_err(|e| NoAnswer::NetworkClient(e.to_string()))
    }

    fn pause(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Decodes a value from an RPC answer within the depth and size limits of every RPC answer
/// ([`assay_chain::submit::decode_rpc_xdr`]): a hostile server gets an error, never a crash.
fn decode<T: ReadXdr>(base64: &str, what: &'static str) -> Result<T, NoAnswer> {
    assay_chain::submit::decode_rpc_xdr(what, Some(base64)).map_err(|e| NoAnswer::Undecodable {
        what,
        message: e.to_string(),
    })
}
