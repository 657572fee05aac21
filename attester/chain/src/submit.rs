//! Simulate → assemble → sign → send → poll for one operation, signed by one key that is both the
//! transaction source and the address the contract asks to authorize.
//!
//! The rule that matters: once a signed envelope may have reached the network, the only ways out are a
//! final `getTransaction` answer (SUCCESS or FAILED), proof that it can no longer be included (its time
//! bound passed), or [`ChainError::Unknown`] naming the hash. Re-sending is always the *same* envelope (same
//! sequence number, same hash), so a retry can never write twice.

use std::time::{Duration, Instant};

use assay_core::Timestamp;
use sha2::{Digest, Sha256};
use stellar_rpc_client::SimulateTransactionResponse;
use stellar_xdr::{
    AccountId, DecoratedSignature, ExtensionPoint, Hash, HostFunction, InvokeContractArgs,
    InvokeHostFunctionOp, InvokeHostFunctionResult, LedgerEntryData, LedgerKey, LedgerKeyAccount,
    Limits, Memo, MuxedAccount, Operation, OperationBody, OperationResult, OperationResultTr,
    Preconditions, PublicKey, ReadXdr, RestoreFootprintOp, ScVal, SequenceNumber, Signature,
    SignatureHint, SorobanAuthorizationEntry, SorobanAuthorizedFunction,
    SorobanAuthorizedInvocation, SorobanCredentials, SorobanTransactionData, TimeBounds, TimePoint,
    Transaction, TransactionEnvelope, TransactionExt, TransactionMeta, TransactionResult,
    TransactionResultResult, TransactionSignaturePayload,
    TransactionSignaturePayloadTaggedTransaction, TransactionV1Envelope, Uint256, WriteXdr,
};

use crate::identity::Signer;
use crate::network::NetworkSpec;
use crate::rpc::{RpcClient, RpcError, TransactionStatus};

/// How transactions are priced and tracked.
#[derive(Debug, Clone)]
pub struct InvokeOptions {
    /// Inclusion fee bid in stroops.
    pub inclusion_fee: u32,
    /// Percent added to the simulated resource fee (simulation is an estimate; state can move before apply).
    pub resource_fee_margin_pct: u32,
    /// Seconds until the transaction's time bound: past it, a not-found transaction is certainly dead.
    pub validity_secs: u64,
    /// Pause between `getTransaction` polls.
    pub poll_interval: Duration,
    /// `TRY_AGAIN_LATER` answers tolerated before giving up (the envelope was never accepted).
    pub max_try_again: u32,
    /// Pause after `TRY_AGAIN_LATER`, doubled each time.
    pub try_again_backoff: Duration,
    /// How long past the time bound to keep asking about a sent transaction before calling it unknown.
    pub follow_grace: Duration,
    /// The most this signer pays for one transaction, in stroops (inclusion plus resource fee): a
    /// transaction priced above it is refused before it is signed ([`ChainError::FeeOverCap`]).
    pub max_fee: u32,
    /// The nested calls the caller means to authorize under the invocation it sends, exactly (for
    /// example the token transfer inside a gate's `deposit`). Empty, the default, for every write
    /// the attester makes: an authorization entry with any other sub-invocation is refused
    /// ([`ChainError::UnexpectedAuth`]).
    pub authorized_sub_invocations: Vec<SorobanAuthorizedInvocation>,
}

/// The operation result code of a call that needed more resources than its simulation declared.
const RESOURCE_LIMIT_EXCEEDED: &str = "INVOKE_HOST_FUNCTION_RESOURCE_LIMIT_EXCEEDED";

/// The default fee cap: 10 XLM per transaction, about twice a full `attest_many` of 50 (4.8 XLM
/// with its margin on the local network) and far below what a hostile simulation answer could
/// otherwise make the attester pay.
pub const DEFAULT_MAX_FEE_STROOPS: u32 = 100_000_000;

impl Default for InvokeOptions {
    fn default() -> InvokeOptions {
        InvokeOptions {
            inclusion_fee: 100,
            resource_fee_margin_pct: 15,
            validity_secs: 90,
            poll_interval: Duration::from_millis(500),
            max_try_again: 5,
            try_again_backoff: Duration::from_millis(500),
            follow_grace: Duration::from_secs(30),
            max_fee: DEFAULT_MAX_FEE_STROOPS,
            authorized_sub_invocations: Vec::new(),
        }
    }
}

/// Why an invocation did not end in a confirmed success. The variant says whether anything may have been
/// written: only [`ChainError::Unknown`] leaves that open, and it names the hash to check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The RPC could not be used before anything was sent. Nothing was submitted.
    #[error("{0}; nothing was submitted")]
    Rpc(#[from] RpcError),
    /// The source account does not exist on this network.
    #[error("source account {0} does not exist on this network; fund it first (e.g. `stellar keys fund NAME`)")]
    NoAccount(String),
    /// Simulation refused the call. Nothing was submitted.
    #[error("simulation failed: {0}; nothing was submitted")]
    Simulation(String),
    /// The call needs a signature from another address, which this run does not hold. Nothing was submitted.
    #[error(
        "the call needs a signature from {address}, which this run does not hold; nothing was submitted"
    )]
    ForeignAuth {
        /// The other address.
        address: String,
        /// Every authorization entry the simulation asked for.
        auth: Vec<SorobanAuthorizationEntry>,
    },
    /// The simulation asks this signer to authorize something other than exactly the call being
    /// sent (another function, other arguments, or sub-invocations such as a payment to a third
    /// party). Nothing was signed or submitted.
    #[error("refusing to sign: the simulation asks {signer} to authorize {asked}, which is not exactly the call being sent ({sent}); nothing was signed or submitted")]
    UnexpectedAuth {
        /// The signer's address.
        signer: String,
        /// What the authorization entry covers.
        asked: String,
        /// The call being sent.
        sent: String,
        /// Every authorization entry the simulation asked for.
        auth: Vec<SorobanAuthorizationEntry>,
    },
    /// The transaction's fee is above the configured cap. Nothing was signed or submitted.
    #[error("refusing to sign: the transaction's fee is {fee} stroops, above the cap of {cap} stroops; nothing was submitted (raise the cap with --max-fee / max_fee_stroops if this fee is expected)")]
    FeeOverCap {
        /// The fee the transaction would bid.
        fee: u64,
        /// The cap.
        cap: u32,
    },
    /// The caller's spend budget has no room for another transaction (`watch`'s `max_spend_per_*_xlm`).
    /// Nothing was signed or submitted.
    #[error("refusing to send: {0}; nothing was submitted")]
    OverBudget(String),
    /// `sendTransaction` answered ERROR: the network refused the envelope; it will never apply.
    #[error("the network rejected transaction {hash}: {code}; nothing was written")]
    Rejected {
        /// Envelope hash.
        hash: String,
        /// Result code (e.g. `txBAD_SEQ`, `txINSUFFICIENT_FEE`).
        code: String,
    },
    /// `TRY_AGAIN_LATER` every time: the envelope was never accepted.
    #[error(
        "stellar-rpc kept answering TRY_AGAIN_LATER ({0} times); nothing was written — retry later"
    )]
    Busy(u32),
    /// Included in a ledger but failed there.
    #[error("transaction {hash} failed on chain in ledger {ledger}: {code}; nothing was written")]
    Failed {
        /// Transaction hash.
        hash: String,
        /// Ledger.
        ledger: u32,
        /// Result code or operation failure.
        code: String,
    },
    /// Never included, and its time bound has passed: it can no longer apply.
    #[error("transaction {hash} was not included before its time bound and can no longer apply; nothing was written")]
    Expired {
        /// Transaction hash.
        hash: String,
    },
    /// Sent, but its fate could not be learned. It may still apply: check the hash before retrying.
    #[error("transaction {hash} was sent but its outcome is unknown ({detail}); check it with `stellar tx fetch --hash {hash}` (or getTransaction) before writing again")]
    Unknown {
        /// Transaction hash.
        hash: String,
        /// Why.
        detail: String,
    },
}

impl ChainError {
    /// True when the write might have happened despite the error.
    pub fn may_have_written(&self) -> bool {
        matches!(self, ChainError::Unknown { .. })
    }

    /// The authorization entries the signing guard refused to sign, when that is why nothing was
    /// signed or sent ([`ChainError::ForeignAuth`], [`ChainError::UnexpectedAuth`]).
    pub fn refused_authorization(&self) -> Option<&[SorobanAuthorizationEntry]> {
        match self {
            ChainError::ForeignAuth { auth, .. } | ChainError::UnexpectedAuth { auth, .. } => {
                Some(auth)
            }
            _ => None,
        }
    }
}

/// A confirmed, successful transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmed {
    /// Transaction hash (hex).
    pub hash: String,
    /// Ledger it applied in.
    pub ledger: u32,
    /// Ledger close time (unix seconds) when known.
    pub created_at: Option<u64>,
    /// What the function returned.
    pub return_value: Option<ScVal>,
    /// Fee bid (inclusion + resource).
    pub fee: u32,
}

/// A simulation's useful answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulated {
    /// Resources and footprint.
    pub data: SorobanTransactionData,
    /// Authorisations to attach.
    pub auth: Vec<SorobanAuthorizationEntry>,
    /// Minimum resource fee in stroops.
    pub min_resource_fee: i64,
    /// Return value.
    pub result: Option<ScVal>,
    /// Archived entries to restore first: (transaction data, min resource fee).
    pub restore: Option<(SorobanTransactionData, i64)>,
}

impl Simulated {
    /// Reads a `simulateTransaction` answer; `Err` carries the summary of a refused simulation or of an
    /// answer that cannot be decoded.
    pub fn from_response(r: &SimulateTransactionResponse) -> Result<Simulated, SimulationError> {
        if let Some(err) = &r.error {
            return Err(SimulationError::Refused(simulation_summary(err)));
        }
        let data: SorobanTransactionData =
            decode_rpc_xdr("transactionData", Some(&r.transaction_data))?;
        let first = r.results.first();
        let auth = first
            .map(|f| {
                f.auth
                    .iter()
                    .map(|e| decode_rpc_xdr("auth", Some(e)))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        let result = first
            .map(|f| decode_rpc_xdr::<ScVal>("result xdr", Some(&f.xdr)))
            .transpose()?;
        let restore = r
            .restore_preamble
            .as_ref()
            .map(|p| {
                Ok::<_, SimulationError>((
                    decode_rpc_xdr("restorePreamble.transactionData", Some(&p.transaction_data))?,
                    fee_i64(p.min_resource_fee)?,
                ))
            })
            .transpose()?;
        Ok(Simulated {
            data,
            auth,
            min_resource_fee: fee_i64(r.min_resource_fee)?,
            result,
            restore,
        })
    }
}

/// A simulation that gave no [`Simulated`] refused the call before anything was sent.
impl From<SimulationError> for ChainError {
    fn from(error: SimulationError) -> Self {
        ChainError::Simulation(error.to_string())
    }
}

/// Why a `simulateTransaction` answer gave no [`Simulated`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimulationError {
    /// The simulation refused the call; the most useful line of its error.
    #[error("{0}")]
    Refused(String),
    /// A field of the answer is missing or does not decode.
    #[error(transparent)]
    Answer(#[from] RpcXdrError),
    /// The resource fee does not fit a transaction's fee.
    #[error("minResourceFee {0} is out of range")]
    FeeOutOfRange(u64),
}

fn fee_i64(fee: u64) -> Result<i64, SimulationError> {
    i64::try_from(fee).map_err(|_| SimulationError::FeeOutOfRange(fee))
}

/// A base64 XDR field of an RPC answer that is missing or does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcXdrError {
    /// The answer has no such field.
    #[error("missing {0}")]
    Missing(String),
    /// The field is not the XDR it should be, or is nested too deep or too large.
    #[error("bad {field}: {message}")]
    Bad {
        /// The field's name.
        field: String,
        /// The decoder's message.
        message: String,
    },
}

/// Written into JSON logs as its message.
impl serde::Serialize for RpcXdrError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Nesting the decoder follows in an RPC answer: the Soroban host's own XDR read limit, so every
/// value a contract can build (at most 100 levels, four decoder steps each) still decodes.
pub const RPC_XDR_MAX_DEPTH: u32 = 500;
/// Bytes one decoded RPC value may hold: many times the largest contract code a network accepts
/// (128 KiB), and far below what would exhaust memory.
pub const RPC_XDR_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Decodes a base64 XDR value from an RPC answer, bounded in depth and size: a hostile server
/// gets an error, never a stack overflow or an unbounded allocation.
pub fn decode_rpc_xdr<T: ReadXdr>(field: &str, s: Option<&str>) -> Result<T, RpcXdrError> {
    let s = s.ok_or_else(|| RpcXdrError::Missing(field.to_string()))?;
    let limits = Limits {
        depth: RPC_XDR_MAX_DEPTH,
        len: RPC_XDR_MAX_BYTES,
    };
    T::from_xdr_base64(s, limits).map_err(|e| RpcXdrError::Bad {
        field: field.to_string(),
        message: e.to_string(),
    })
}

/// Extracts the most useful line of a failed simulation (`HostError: Error(Contract, #N)` when present).
pub fn simulation_summary(error: &str) -> String {
    let host = error
        .lines()
        .find(|l| l.trim_start().starts_with("HostError:"))
        .map(|l| l.trim().to_string());
    match host {
        Some(h) => h,
        None => error
            .lines()
            .next()
            .unwrap_or(error)
            .chars()
            .take(300)
            .collect(),
    }
}

/// The `Error(Contract, #N)` code in a simulation error, if any.
pub fn contract_error_code(error: &str) -> Option<u32> {
    let at = error.find("Error(Contract, #")? + "Error(Contract, #".len();
    error[at..].split(')').next()?.parse().ok()
}

/// The address a non-source-account authorization entry asks for, if any.
pub fn foreign_auth(auth: &[SorobanAuthorizationEntry]) -> Option<String> {
    auth.iter().find_map(|entry| match &entry.credentials {
        SorobanCredentials::SourceAccount => None,
        SorobanCredentials::Address(c) | SorobanCredentials::AddressV2(c) => {
            Some(crate::address::strkey_of(&c.address))
        }
        other => Some(format!("{other:?}")),
    })
}

/// The first authorization entry that is not exactly `host_function` with exactly the `nested`
/// sub-invocations (none for the attester's writes), described as (what it asks, what is sent).
/// Entries for other addresses are [`foreign_auth`]'s.
pub fn unexpected_auth(
    auth: &[SorobanAuthorizationEntry],
    host_function: &HostFunction,
    nested: &[SorobanAuthorizedInvocation],
) -> Option<(String, String)> {
    let sent = describe_host_function(host_function);
    auth.iter().find_map(|entry| {
        let root = &entry.root_invocation;
        let exact = match (&root.function, host_function) {
            (SorobanAuthorizedFunction::ContractFn(a), HostFunction::InvokeContract(b)) => a == b,
            (
                SorobanAuthorizedFunction::CreateContractHostFn(a),
                HostFunction::CreateContract(b),
            ) => a == b,
            (
                SorobanAuthorizedFunction::CreateContractV2HostFn(a),
                HostFunction::CreateContractV2(b),
            ) => a == b,
            _ => false,
        };
        if !exact {
            return Some((describe_authorized(&root.function), sent.clone()));
        }
        if root.sub_invocations.as_slice() == nested {
            return None;
        }
        let first = root.sub_invocations.first().map_or_else(
            || "none of the nested calls it means to authorize".into(),
            |call| format!("the first {}", describe_authorized(&call.function)),
        );
        Some((
            format!(
                "{sent} with {} sub-invocation(s), {first}",
                root.sub_invocations.len()
            ),
            sent.clone(),
        ))
    })
}

fn describe_authorized(function: &SorobanAuthorizedFunction) -> String {
    match function {
        SorobanAuthorizedFunction::ContractFn(call) => describe_call(call),
        SorobanAuthorizedFunction::CreateContractHostFn(_)
        | SorobanAuthorizedFunction::CreateContractV2HostFn(_) => "a contract deployment".into(),
    }
}

fn describe_host_function(function: &HostFunction) -> String {
    match function {
        HostFunction::InvokeContract(call) => describe_call(call),
        HostFunction::CreateContract(_) | HostFunction::CreateContractV2(_) => {
            "a contract deployment".into()
        }
        HostFunction::UploadContractWasm(_) => "a code upload".into(),
    }
}

/// `C….function(n args)`.
fn describe_call(call: &InvokeContractArgs) -> String {
    format!(
        "{}.{}({} args)",
        crate::address::strkey_of(&call.contract_address),
        String::from_utf8_lossy(call.function_name.0.as_slice()),
        call.args.len()
    )
}

/// Talks to one network as one signer.
pub struct Invoker<'a> {
    /// Endpoint.
    pub rpc: &'a RpcClient,
    /// Network (passphrase signs).
    pub network: &'a NetworkSpec,
    /// Source account and signer.
    pub signer: &'a Signer,
    /// Pricing and tracking.
    pub options: InvokeOptions,
}

impl Invoker<'_> {
    fn account_id(&self) -> AccountId {
        AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(
            self.signer.public_key(),
        )))
    }

    /// The next sequence number of the source account.
    pub fn next_sequence(&self) -> Result<i64, ChainError> {
        let key = LedgerKey::Account(LedgerKeyAccount {
            account_id: self.account_id(),
        });
        let r = self
            .rpc
            .get_ledger_entries(&[key])
            .map_err(ChainError::Rpc)?;
        let Some(entry) = r.entries.unwrap_or_default().into_iter().next() else {
            return Err(ChainError::NoAccount(self.signer.address()));
        };
        match decode_rpc_xdr::<LedgerEntryData>("entry xdr", Some(&entry.xdr)) {
            // The server's answer: checked, so a hostile i64::MAX is an error, not a panic.
            Ok(LedgerEntryData::Account(a)) => a.seq_num.0.checked_add(1).ok_or_else(|| {
                ChainError::Simulation(format!(
                    "the account's sequence number {} has no successor",
                    a.seq_num.0
                ))
            }),
            Ok(_) => Err(ChainError::Simulation(
                "getLedgerEntries returned a non-account entry".into(),
            )),
            Err(detail) => Err(ChainError::Rpc(RpcError::Protocol {
                url: self.rpc.url().into(),
                method: "getLedgerEntries".into(),
                detail: detail.to_string(),
            })),
        }
    }

    /// A one-operation transaction from the signer with a time bound `validity_secs` ahead.
    pub fn transaction(
        &self,
        seq: i64,
        fee: u32,
        op: Operation,
        data: Option<SorobanTransactionData>,
    ) -> Transaction {
        self.transaction_of(seq, fee, vec![op], data)
            .expect("one operation fits")
    }

    /// A transaction of `ops` (at most 100) from the signer with a time bound `validity_secs` ahead.
    pub fn transaction_of(
        &self,
        seq: i64,
        fee: u32,
        ops: Vec<Operation>,
        data: Option<SorobanTransactionData>,
    ) -> Result<Transaction, ChainError> {
        let count = ops.len();
        let operations = ops.try_into().map_err(|_| {
            ChainError::Simulation(format!(
                "{count} operations do not fit one transaction (at most 100)"
            ))
        })?;
        Ok(Transaction {
            source_account: MuxedAccount::Ed25519(Uint256(self.signer.public_key())),
            fee,
            seq_num: SequenceNumber(seq),
            cond: Preconditions::Time(TimeBounds {
                min_time: TimePoint(0),
                max_time: TimePoint(
                    Timestamp::now()
                        .unix_secs()
                        .saturating_add(self.options.validity_secs),
                ),
            }),
            memo: Memo::None,
            operations,
            ext: match data {
                Some(d) => TransactionExt::V1(d),
                None => TransactionExt::V0,
            },
        })
    }

    /// Signs `tx`, returning the envelope and its hash.
    pub fn sign(&self, tx: Transaction) -> (TransactionEnvelope, [u8; 32]) {
        let payload = TransactionSignaturePayload {
            network_id: Hash(self.network.network_id()),
            tagged_transaction: TransactionSignaturePayloadTaggedTransaction::Tx(tx.clone()),
        };
        let hash: [u8; 32] =
            Sha256::digest(payload.to_xdr(Limits::none()).expect("payload encodes")).into();
        let public = self.signer.public_key();
        let sig = DecoratedSignature {
            hint: SignatureHint([public[28], public[29], public[30], public[31]]),
            signature: Signature(
                self.signer
                    .sign(&hash)
                    .to_vec()
                    .try_into()
                    .expect("64 bytes"),
            ),
        };
        let env = TransactionEnvelope::Tx(TransactionV1Envelope {
            tx,
            signatures: vec![sig].try_into().expect("one signature"),
        });
        (env, hash)
    }

    fn invoke_op(host_function: HostFunction, auth: Vec<SorobanAuthorizationEntry>) -> Operation {
        Operation {
            source_account: None,
            body: OperationBody::InvokeHostFunction(InvokeHostFunctionOp {
                host_function,
                auth: auth.try_into().expect("auth entries fit"),
            }),
        }
    }

    /// `simulateTransaction` for `host_function` at sequence `seq`, the answer as sent. The
    /// envelope carries no signature (simulation needs none): the signer signs only what it sends.
    pub fn simulate_raw(
        &self,
        seq: i64,
        host_function: &HostFunction,
    ) -> Result<SimulateTransactionResponse, ChainError> {
        let tx = self.transaction(
            seq,
            self.options.inclusion_fee,
            Self::invoke_op(host_function.clone(), vec![]),
            None,
        );
        let env = TransactionEnvelope::Tx(TransactionV1Envelope {
            tx,
            signatures: Default::default(),
        });
        self.rpc.simulate_transaction(&env).map_err(ChainError::Rpc)
    }

    /// Simulates `host_function` from the source account. Never sends anything.
    pub fn simulate(&self, host_function: &HostFunction) -> Result<Simulated, ChainError> {
        let seq = self.next_sequence()?;
        Ok(Simulated::from_response(
            &self.simulate_raw(seq, host_function)?,
        )?)
    }

    /// Reads a contract function's return value by simulation only.
    pub fn read(&self, host_function: &HostFunction) -> Result<Option<ScVal>, ChainError> {
        Ok(self.simulate(host_function)?.result)
    }

    /// Simulates, restores archived entries if asked, assembles, signs, sends and confirms.
    pub fn invoke(&self, host_function: &HostFunction) -> Result<Confirmed, ChainError> {
        let mut restored = false;
        let mut bad_seq_retries = 0;
        let mut resource_retries = 0;
        loop {
            let seq = self.next_sequence()?;
            let sim = Simulated::from_response(&self.simulate_raw(seq, host_function)?)?;
            if let Some((data, fee)) = sim.restore.clone() {
                if restored {
                    return Err(ChainError::Simulation(
                        "still asks for a restore after restoring".into(),
                    ));
                }
                self.restore(seq, data, fee)?;
                restored = true;
                continue;
            }
            match self.submit(self.assemble(seq, host_function, &sim)?) {
                Err(ChainError::Rejected { code, .. })
                    if code == "txBAD_SEQ" && bad_seq_retries < 2 =>
                {
                    // Refused outright, so rebuilding with a fresh sequence number cannot double-write.
                    bad_seq_retries += 1;
                }
                Err(ChainError::Failed { code, .. })
                    if code.contains(RESOURCE_LIMIT_EXCEEDED) && resource_retries < 1 =>
                {
                    // Simulation priced the call on the state and ledger time it saw; a call whose path
                    // depends on them (the registry's fold right after a revocation in the same second)
                    // can need more once applied. The failed transaction wrote nothing, so simulating
                    // again on the state it met and sending once more cannot double-write.
                    resource_retries += 1;
                }
                other => return other,
            }
        }
    }

    /// The transaction simulation describes: footprint, resources, auth, and the resource fee plus margin.
    pub fn assemble(
        &self,
        seq: i64,
        host_function: &HostFunction,
        sim: &Simulated,
    ) -> Result<Transaction, ChainError> {
        if let Some(address) = foreign_auth(&sim.auth) {
            return Err(ChainError::ForeignAuth {
                address,
                auth: sim.auth.clone(),
            });
        }
        // The transaction signature covers every source-account entry: sign only the call itself.
        if let Some((asked, sent)) = unexpected_auth(
            &sim.auth,
            host_function,
            &self.options.authorized_sub_invocations,
        ) {
            return Err(ChainError::UnexpectedAuth {
                signer: self.signer.address(),
                asked,
                sent,
                auth: sim.auth.clone(),
            });
        }
        let (data, fee) = self.priced(sim.data.clone(), sim.min_resource_fee)?;
        Ok(self.transaction(
            seq,
            fee,
            Self::invoke_op(host_function.clone(), sim.auth.clone()),
            Some(data),
        ))
    }

    /// Sets the resource fee (simulated minimum plus the margin) and returns the total fee bid.
    fn priced(
        &self,
        mut data: SorobanTransactionData,
        min_fee: i64,
    ) -> Result<(SorobanTransactionData, u32), ChainError> {
        // `min_fee` is the server's answer: checked, so a hostile value is an error, not a panic.
        let out_of_range = || {
            ChainError::Simulation(format!(
                "minResourceFee {min_fee} with a {}% margin does not fit a transaction fee",
                self.options.resource_fee_margin_pct
            ))
        };
        let margin = i128::from(min_fee) * i128::from(self.options.resource_fee_margin_pct) / 100;
        let resource_fee = i128::from(min_fee) + margin;
        let total = resource_fee + i128::from(self.options.inclusion_fee);
        if min_fee < 0 || total > i128::from(u32::MAX) {
            return Err(out_of_range());
        }
        if total > i128::from(self.options.max_fee) {
            return Err(ChainError::FeeOverCap {
                fee: u64::try_from(total).map_err(|_| out_of_range())?,
                cap: self.options.max_fee,
            });
        }
        data.resource_fee = i64::try_from(resource_fee).map_err(|_| out_of_range())?;
        let fee = u32::try_from(total).map_err(|_| out_of_range())?;
        Ok((data, fee))
    }

    fn restore(
        &self,
        seq: i64,
        data: SorobanTransactionData,
        min_fee: i64,
    ) -> Result<Confirmed, ChainError> {
        let (data, fee) = self.priced(data, min_fee)?;
        let op = Operation {
            source_account: None,
            body: OperationBody::RestoreFootprint(RestoreFootprintOp {
                ext: ExtensionPoint::V0,
            }),
        };
        self.submit(self.transaction(seq, fee, op, Some(data)))
    }

    /// Sends a signed transaction and follows it to a final answer.
    pub fn submit(&self, tx: Transaction) -> Result<Confirmed, ChainError> {
        let fee = tx.fee;
        if fee > self.options.max_fee {
            return Err(ChainError::FeeOverCap {
                fee: u64::from(fee),
                cap: self.options.max_fee,
            });
        }
        let max_time = match &tx.cond {
            Preconditions::Time(tb) => tb.max_time.0,
            _ => u64::MAX,
        };
        let (env, hash) = self.sign(tx);
        let hash_hex = hex::encode(hash);
        let mut backoff = self.options.try_again_backoff;
        let mut try_again = 0;
        loop {
            match self.rpc.send_transaction(&env) {
                Ok(r) => match r.status.as_str() {
                    "PENDING" | "DUPLICATE" => break,
                    "TRY_AGAIN_LATER" => {
                        try_again += 1;
                        if try_again > self.options.max_try_again {
                            return Err(ChainError::Busy(try_again));
                        }
                        std::thread::sleep(backoff);
                        backoff = (backoff * 2).min(Duration::from_secs(10));
                    }
                    "ERROR" => {
                        let code = match decode_rpc_xdr::<TransactionResult>(
                            "errorResultXdr",
                            r.error_result_xdr.as_deref(),
                        ) {
                            Ok(res) => result_code(&res.result),
                            Err(e) => e.to_string(),
                        };
                        return Err(ChainError::Rejected {
                            hash: hash_hex,
                            code,
                        });
                    }
                    other => {
                        // An answer we do not understand: the envelope may be in the queue. Follow the hash.
                        return self.follow(
                            &hash_hex,
                            &env,
                            max_time,
                            fee,
                            Some(format!("sendTransaction status {other:?}")),
                        );
                    }
                },
                Err(e) if !e.maybe_delivered() && try_again == 0 => return Err(ChainError::Rpc(e)),
                Err(e) => return self.follow(&hash_hex, &env, max_time, fee, Some(e.to_string())),
            }
        }
        self.follow(&hash_hex, &env, max_time, fee, None)
    }

    /// Polls `hash` until it is final or provably dead. When the send's answer was lost, re-sends the same
    /// envelope while it is not found (idempotent: same hash, same sequence number).
    fn follow(
        &self,
        hash: &str,
        env: &TransactionEnvelope,
        max_time: u64,
        fee: u32,
        lost: Option<String>,
    ) -> Result<Confirmed, ChainError> {
        let resend = lost.is_some();
        let mut last_problem = lost.unwrap_or_default();
        // Wall-clock backstop: the time bound plus a few ledgers of slack.
        let give_up = Instant::now()
            + Duration::from_secs(
                max_time
                    .saturating_sub(Timestamp::now().unix_secs())
                    .min(3600),
            )
            + self.options.follow_grace;
        loop {
            match self.rpc.get_transaction(hash) {
                Ok(r) => match r.status.as_str() {
                    "SUCCESS" => return Ok(confirmed(hash, &r, fee)),
                    "FAILED" => {
                        let code = match decode_rpc_xdr::<TransactionResult>(
                            "resultXdr",
                            r.result_xdr.as_deref(),
                        ) {
                            Ok(res) => result_code(&res.result),
                            Err(e) => e.to_string(),
                        };
                        return Err(ChainError::Failed {
                            hash: hash.into(),
                            ledger: r.ledger.unwrap_or(0),
                            code,
                        });
                    }
                    _ => {
                        if r.latest_ledger_close_time.unwrap_or(0) > max_time {
                            return Err(ChainError::Expired { hash: hash.into() });
                        }
                        if resend {
                            // Same envelope again: DUPLICATE or PENDING are both fine; ERROR txBAD_SEQ means
                            // it (or something else) already used the sequence number, so keep polling.
                            let _ = self.rpc.send_transaction(env);
                        }
                    }
                },
                Err(e) => last_problem = e.to_string(),
            }
            if Instant::now() > give_up {
                let detail = if last_problem.is_empty() {
                    "no final status before the deadline".into()
                } else {
                    last_problem
                };
                return Err(ChainError::Unknown {
                    hash: hash.into(),
                    detail,
                });
            }
            std::thread::sleep(self.options.poll_interval);
        }
    }
}

fn confirmed(hash: &str, r: &TransactionStatus, fee: u32) -> Confirmed {
    let return_value =
        decode_rpc_xdr::<TransactionMeta>("resultMetaXdr", r.result_meta_xdr.as_deref())
            .ok()
            .and_then(|m| match m {
                TransactionMeta::V3(v3) => v3.soroban_meta.map(|s| s.return_value),
                TransactionMeta::V4(v4) => v4.soroban_meta.and_then(|s| s.return_value),
                _ => None,
            });
    Confirmed {
        hash: hash.into(),
        ledger: r.ledger.unwrap_or(0),
        created_at: r.created_at,
        return_value,
        fee,
    }
}

/// stellar-core's name for a result code (`txBAD_SEQ`, `txTOO_LATE`), with the operation codes on
/// failure (`txFAILED [INVOKE_HOST_FUNCTION_TRAPPED]`).
pub fn result_code(result: &TransactionResultResult) -> String {
    match result {
        TransactionResultResult::TxFailed(ops) => {
            let codes: Vec<String> = ops.iter().map(op_code).collect();
            format!("txFAILED [{}]", codes.join(", "))
        }
        _ => format!("tx{}", screaming(result.name().trim_start_matches("Tx"))),
    }
}

/// `BadSeq` → `BAD_SEQ`.
fn screaming(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn op_code(op: &OperationResult) -> String {
    match op {
        OperationResult::OpInner(OperationResultTr::InvokeHostFunction(r)) => {
            let name = match r {
                InvokeHostFunctionResult::Success(_) => "Success",
                other => other.name(),
            };
            format!("INVOKE_HOST_FUNCTION_{}", screaming(name))
        }
        OperationResult::OpInner(inner) => format!("{inner:?}"),
        other => format!("op{}", screaming(other.name().trim_start_matches("Op"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_host_errors() {
        let e = "host invocation failed\n\nCaused by:\n    HostError: Error(Contract, #10)\n    \nEvent log (newest first):\n   0: [Diagnostic Event] ...";
        assert_eq!(simulation_summary(e), "HostError: Error(Contract, #10)");
        assert_eq!(contract_error_code(e), Some(10));
        assert_eq!(contract_error_code("no code"), None);
    }

    #[test]
    fn result_codes_name_the_failure() {
        assert_eq!(result_code(&TransactionResultResult::TxBadSeq), "txBAD_SEQ");
        assert_eq!(
            result_code(&TransactionResultResult::TxTooLate),
            "txTOO_LATE"
        );
        let failed = TransactionResultResult::TxFailed(
            vec![
                OperationResult::OpInner(OperationResultTr::InvokeHostFunction(
                    InvokeHostFunctionResult::EntryArchived,
                )),
                OperationResult::OpBadAuth,
            ]
            .try_into()
            .unwrap(),
        );
        assert_eq!(
            result_code(&failed),
            "txFAILED [INVOKE_HOST_FUNCTION_ENTRY_ARCHIVED, opBAD_AUTH]"
        );
    }
}
