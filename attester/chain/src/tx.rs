//! Transactions: build, simulate, sign, submit, poll.
//!
//! Every write is signed by one key that is both the transaction source and the address the
//! contract asks to authorize, so simulation's recorded auth comes back as source-account
//! credentials and needs no separate signature.
use std::{
    collections::HashMap,
    sync::Mutex,
    thread,
    time::{Duration, Instant},
};

use sha2::{Digest, Sha256};
use stellar_xdr::{
    AccountId, Asset, ContractDataDurability, ContractExecutable, ContractId, ContractIdPreimage,
    ContractIdPreimageFromAddress, CreateContractArgs, CreateContractArgsV2, DecoratedSignature,
    Hash, HostFunction, InvokeContractArgs, InvokeHostFunctionOp, InvokeHostFunctionResult,
    LedgerEntryData, LedgerKey, LedgerKeyAccount, LedgerKeyContractCode, LedgerKeyContractData,
    Limits, Memo, MuxedAccount, Operation, OperationBody, OperationResult, OperationResultTr,
    Preconditions, ReadXdr, ScAddress, ScSymbol, ScVal, SequenceNumber, Signature, SignatureHint,
    SorobanAuthorizationEntry, SorobanCredentials, SorobanTransactionData, Transaction,
    TransactionEnvelope, TransactionExt, TransactionResult, TransactionResultResult,
    TransactionSignaturePayload, TransactionSignaturePayloadTaggedTransaction,
    TransactionV1Envelope, Uint256, WriteXdr,
};

use crate::{
    address::{contract_id_from_asset, contract_id_from_deployer, network_id},
    rpc::{RpcClient, RpcError, SimulateResponse},
    secret::Secret,
};

/// Inclusion fee per operation, in stroops (the network minimum).
const BASE_FEE: u32 = 100;
/// Resource fee headroom over simulation's minimum, in percent: state can change between
/// simulation and application on a live network.
const RESOURCE_FEE_MARGIN_PERCENT: i64 = 30;
/// Instruction headroom over simulation, in percent, for the same reason.
const INSTRUCTION_MARGIN_PERCENT: u32 = 10;

#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error("cannot decode {what} from the RPC server: {reason}")]
    Xdr { what: &'static str, reason: String },
    #[error("account {0} does not exist on this network; fund it first (friendbot on testnet)")]
    NoAccount(String),
    #[error("the network rejected transaction {hash}: {status} {detail}")]
    Rejected {
        hash: String,
        status: String,
        detail: String,
    },
    #[error("transaction {hash} was not final after {seconds} s; check it with getTransaction")]
    Timeout { hash: String, seconds: u64 },
    #[error("the call needs a signature from {0}, which this run does not hold")]
    ForeignAuth(String),
    #[error("contract call failed in simulation: {0}")]
    Simulation(String),
    #[error("transaction {hash} failed on the network: {code}")]
    Failed { hash: String, code: String },
}

/// A read (a simulated call that is never submitted).
#[derive(Debug, Clone, PartialEq)]
pub enum ReadOutcome {
    /// The call returned this value.
    Value(ScVal),
    /// The call trapped; the simulation's error text.
    Trapped(String),
    /// The call needs archived state restored first: no answer.
    Archived,
}

/// A write.
#[derive(Debug, Clone, PartialEq)]
pub enum InvokeOutcome {
    /// Simulation refused the call; its error text.
    Refused(String),
    /// Archived state stands in the way (simulation asked for a restore, or the network answered
    /// `INVOKE_HOST_FUNCTION_ENTRY_ARCHIVED`).
    Archived(String),
    /// Applied successfully.
    Landed { hash: String, ledger: u32 },
    /// Included but failed (fee charged, nothing applied), with the result code.
    FailedOnChain {
        hash: String,
        ledger: Option<u32>,
        code: String,
    },
}

/// What a contract id runs.
#[derive(Debug, Clone, PartialEq)]
pub enum ContractCode {
    Wasm(Vec<u8>),
    StellarAsset,
    /// No contract instance at this id.
    Missing,
    /// The instance or its code is archived.
    Archived,
}

/// One network: an RPC endpoint and the passphrase transactions are signed for.
pub struct Network {
    pub rpc: RpcClient,
    passphrase: String,
    network_id: [u8; 32],
    /// How often to ask whether a submitted transaction is final.
    pub poll_interval: Duration,
    /// How long to wait for it before giving up.
    pub poll_timeout: Duration,
    next_sequence: Mutex<HashMap<[u8; 32], i64>>,
}

impl Network {
    pub fn new(rpc_url: &str, passphrase: &str) -> Self {
        Network {
            rpc: RpcClient::new(rpc_url),
            passphrase: passphrase.to_string(),
            network_id: network_id(passphrase),
            poll_interval: Duration::from_millis(500),
            poll_timeout: Duration::from_secs(60),
            next_sequence: Mutex::new(HashMap::new()),
        }
    }

    pub fn passphrase(&self) -> &str {
        &self.passphrase
    }

    pub fn latest_ledger(&self) -> Result<u32, ChainError> {
        Ok(self.rpc.get_latest_ledger()?.sequence)
    }

    /// The account's current sequence number, `None` when the account does not exist.
    pub fn account_sequence(&self, account: &AccountId) -> Result<Option<i64>, ChainError> {
        let key = LedgerKey::Account(LedgerKeyAccount {
            account_id: account.clone(),
        });
        let entries = self
            .rpc
            .get_ledger_entries(&[key])?
            .entries
            .unwrap_or_default();
        let Some(entry) = entries.first() else {
            return Ok(None);
        };
        match decode::<LedgerEntryData>(&entry.xdr, "an account entry")? {
            LedgerEntryData::Account(a) => Ok(Some(a.seq_num.0)),
            _ => Err(ChainError::Xdr {
                what: "an account entry",
                reason: "not an account".into(),
            }),
        }
    }

    /// Whether `account` exists.
    pub fn account_exists(&self, account: &AccountId) -> Result<bool, ChainError> {
        Ok(self.account_sequence(account)?.is_some())
    }

    /// Calls `function` read-only: simulated from `source`, never submitted.
    pub fn read(
        &self,
        source: &AccountId,
        contract: &ScAddress,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<ReadOutcome, ChainError> {
        let op = invoke_op(invoke_contract(contract, function, args)?);
        let tx = transaction(source, 0, BASE_FEE, vec![op], TransactionExt::V0);
        let sim = self.rpc.simulate_transaction(&unsigned(tx))?;
        if let Some(error) = sim.error {
            return Ok(ReadOutcome::Trapped(error));
        }
        if sim.restore_preamble.is_some() {
            return Ok(ReadOutcome::Archived);
        }
        let result = sim.results.first().ok_or_else(|| ChainError::Xdr {
            what: "a simulation result",
            reason: "no results".into(),
        })?;
        Ok(ReadOutcome::Value(decode(&result.xdr, "a return value")?))
    }

    /// Invokes `function` on `contract`, signed and authorized by `signer`.
    pub fn invoke(
        &self,
        signer: &Secret,
        contract: &ScAddress,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<InvokeOutcome, ChainError> {
        self.run_host_function(signer, invoke_contract(contract, function, args)?)
    }

    /// Uploads contract code; returns its hash.
    pub fn upload_wasm(&self, signer: &Secret, wasm: &[u8]) -> Result<[u8; 32], ChainError> {
        let hash: [u8; 32] = Sha256::digest(wasm).into();
        let code = wasm.to_vec().try_into().map_err(|_| ChainError::Xdr {
            what: "contract code",
            reason: "too large".into(),
        })?;
        self.expect_landed(
            self.run_host_function(signer, HostFunction::UploadContractWasm(code))?,
        )?;
        Ok(hash)
    }

    /// Deploys `wasm_hash` from `signer` with `salt`, calling its constructor with `args`.
    pub fn create_contract(
        &self,
        signer: &Secret,
        wasm_hash: [u8; 32],
        salt: [u8; 32],
        args: Vec<ScVal>,
    ) -> Result<ScAddress, ChainError> {
        let deployer = signer.sc_address();
        let id = contract_id_from_deployer(&deployer, salt, &self.passphrase);
        let host_function = HostFunction::CreateContractV2(CreateContractArgsV2 {
            contract_id_preimage: ContractIdPreimage::Address(ContractIdPreimageFromAddress {
                address: deployer,
                salt: Uint256(salt),
            }),
            executable: ContractExecutable::Wasm(Hash(wasm_hash)),
            constructor_args: args.try_into().map_err(|_| ChainError::Xdr {
                what: "constructor arguments",
                reason: "too many".into(),
            })?,
        });
        self.expect_landed(self.run_host_function(signer, host_function)?)?;
        Ok(ScAddress::Contract(ContractId(Hash(id))))
    }

    /// Deploys the Stellar Asset Contract for `asset`.
    pub fn deploy_sac(&self, signer: &Secret, asset: &Asset) -> Result<ScAddress, ChainError> {
        let id = contract_id_from_asset(asset, &self.passphrase);
        let host_function = HostFunction::CreateContract(CreateContractArgs {
            contract_id_preimage: ContractIdPreimage::Asset(asset.clone()),
            executable: ContractExecutable::StellarAsset,
        });
        self.expect_landed(self.run_host_function(signer, host_function)?)?;
        Ok(ScAddress::Contract(ContractId(Hash(id))))
    }

    /// Submits classic operations signed by `signer`; returns (hash, ledger).
    pub fn submit_classic(
        &self,
        signer: &Secret,
        ops: Vec<OperationBody>,
    ) -> Result<(String, u32), ChainError> {
        let fee = BASE_FEE * ops.len() as u32;
        let ops = ops
            .into_iter()
            .map(|body| Operation {
                source_account: None,
                body,
            })
            .collect();
        let seq = self.take_sequence(signer)?;
        let tx = transaction(&signer.account_id(), seq, fee, ops, TransactionExt::V0);
        match self.sign_submit_poll(signer, tx, seq)? {
            InvokeOutcome::Landed { hash, ledger } => Ok((hash, ledger)),
            InvokeOutcome::FailedOnChain { hash, code, .. } => {
                Err(ChainError::Failed { hash, code })
            }
            other => Err(ChainError::Simulation(format!("{other:?}"))),
        }
    }

    /// What the contract at `contract` runs, read from its instance entry.
    pub fn contract_code(&self, contract: &ScAddress) -> Result<ContractCode, ChainError> {
        let key = LedgerKey::ContractData(LedgerKeyContractData {
            contract: contract.clone(),
            key: ScVal::LedgerKeyContractInstance,
            durability: ContractDataDurability::Persistent,
        });
        let response = self.rpc.get_ledger_entries(&[key])?;
        let Some(entry) = response.entries.unwrap_or_default().into_iter().next() else {
            return Ok(ContractCode::Missing);
        };
        if entry
            .live_until_ledger_seq
            .is_some_and(|l| l < response.latest_ledger)
        {
            return Ok(ContractCode::Archived);
        }
        let LedgerEntryData::ContractData(data) = decode(&entry.xdr, "a contract instance")? else {
            return Ok(ContractCode::Missing);
        };
        let ScVal::ContractInstance(instance) = data.val else {
            return Ok(ContractCode::Missing);
        };
        let hash = match instance.executable {
            ContractExecutable::Wasm(hash) => hash,
            ContractExecutable::StellarAsset => return Ok(ContractCode::StellarAsset),
            ContractExecutable::ExternalRef(_) => return Ok(ContractCode::Missing),
        };
        let key = LedgerKey::ContractCode(LedgerKeyContractCode { hash });
        let response = self.rpc.get_ledger_entries(&[key])?;
        let Some(entry) = response.entries.unwrap_or_default().into_iter().next() else {
            return Ok(ContractCode::Archived);
        };
        match decode(&entry.xdr, "contract code")? {
            LedgerEntryData::ContractCode(code) => Ok(ContractCode::Wasm(code.code.to_vec())),
            _ => Ok(ContractCode::Missing),
        }
    }

    fn expect_landed(&self, outcome: InvokeOutcome) -> Result<(String, u32), ChainError> {
        match outcome {
            InvokeOutcome::Landed { hash, ledger } => Ok((hash, ledger)),
            InvokeOutcome::Refused(e) | InvokeOutcome::Archived(e) => {
                Err(ChainError::Simulation(e))
            }
            InvokeOutcome::FailedOnChain { hash, code, .. } => {
                Err(ChainError::Failed { hash, code })
            }
        }
    }

    /// Simulate, attach footprint/resources/auth and a fee with headroom, sign, submit, poll.
    fn run_host_function(
        &self,
        signer: &Secret,
        host_function: HostFunction,
    ) -> Result<InvokeOutcome, ChainError> {
        let source = signer.account_id();
        let seq = self.take_sequence(signer)?;
        let op = invoke_op(host_function.clone());
        let draft = transaction(&source, seq, BASE_FEE, vec![op], TransactionExt::V0);
        let sim = match self.rpc.simulate_transaction(&unsigned(draft)) {
            Ok(sim) => sim,
            Err(e) => {
                self.forget_sequence(signer);
                return Err(e.into());
            }
        };
        let prepared = match prepare(&source, seq, host_function, sim) {
            Ok(Ok(tx)) => tx,
            Ok(Err(outcome)) => {
                self.forget_sequence(signer);
                return Ok(outcome);
            }
            Err(e) => {
                self.forget_sequence(signer);
                return Err(e);
            }
        };
        self.sign_submit_poll(signer, prepared, seq)
    }

    fn sign_submit_poll(
        &self,
        signer: &Secret,
        tx: Transaction,
        seq: i64,
    ) -> Result<InvokeOutcome, ChainError> {
        let envelope = self.sign(signer, tx)?;
        let hash = hex::encode(self.tx_hash(&envelope)?);
        let sent = match self.send_with_retry(&envelope) {
            Ok(sent) => sent,
            Err(e) => {
                self.forget_sequence(signer);
                return Err(e);
            }
        };
        match sent.status.as_str() {
            "PENDING" | "DUPLICATE" => {}
            status => {
                self.forget_sequence(signer);
                let detail = sent
                    .error_result_xdr
                    .as_deref()
                    .map(describe_result)
                    .unwrap_or_default();
                return Err(ChainError::Rejected {
                    hash,
                    status: status.into(),
                    detail,
                });
            }
        }
        // From here the sequence number is consumed whatever the outcome.
        self.remember_sequence(signer, seq);
        let started = Instant::now();
        loop {
            let got = self.rpc.get_transaction(&hash)?;
            match got.status.as_str() {
                "SUCCESS" => {
                    return Ok(InvokeOutcome::Landed {
                        hash,
                        ledger: got.ledger.unwrap_or(0),
                    })
                }
                "FAILED" => {
                    let code = got
                        .result_xdr
                        .as_deref()
                        .map(describe_result)
                        .unwrap_or_default();
                    if code.contains("ENTRY_ARCHIVED") {
                        return Ok(InvokeOutcome::Archived(code));
                    }
                    return Ok(InvokeOutcome::FailedOnChain {
                        hash,
                        ledger: got.ledger,
                        code,
                    });
                }
                _ => {}
            }
            if started.elapsed() >= self.poll_timeout {
                self.forget_sequence(signer);
                return Err(ChainError::Timeout {
                    hash,
                    seconds: self.poll_timeout.as_secs(),
                });
            }
            thread::sleep(self.poll_interval);
        }
    }

    fn send_with_retry(
        &self,
        envelope: &TransactionEnvelope,
    ) -> Result<crate::rpc::SendResponse, ChainError> {
        let mut attempts = 0;
        loop {
            let sent = self.rpc.send_transaction(envelope)?;
            attempts += 1;
            if sent.status != "TRY_AGAIN_LATER" || attempts >= 5 {
                return Ok(sent);
            }
            thread::sleep(self.poll_interval.max(Duration::from_millis(200)));
        }
    }

    fn sign(&self, signer: &Secret, tx: Transaction) -> Result<TransactionEnvelope, ChainError> {
        let payload = TransactionSignaturePayload {
            network_id: Hash(self.network_id),
            tagged_transaction: TransactionSignaturePayloadTaggedTransaction::Tx(tx.clone()),
        };
        let digest: [u8; 32] = Sha256::digest(encode(&payload)?).into();
        let public = signer.public_key();
        let signature = DecoratedSignature {
            hint: SignatureHint([public[28], public[29], public[30], public[31]]),
            signature: Signature(signer.sign(&digest).to_vec().try_into().map_err(|_| {
                ChainError::Xdr {
                    what: "a signature",
                    reason: "not 64 bytes".into(),
                }
            })?),
        };
        Ok(TransactionEnvelope::Tx(TransactionV1Envelope {
            tx,
            signatures: vec![signature].try_into().expect("one signature fits"),
        }))
    }

    fn tx_hash(&self, envelope: &TransactionEnvelope) -> Result<[u8; 32], ChainError> {
        let TransactionEnvelope::Tx(v1) = envelope else {
            unreachable!("only v1 envelopes are built here")
        };
        let payload = TransactionSignaturePayload {
            network_id: Hash(self.network_id),
            tagged_transaction: TransactionSignaturePayloadTaggedTransaction::Tx(v1.tx.clone()),
        };
        Ok(Sha256::digest(encode(&payload)?).into())
    }

    /// The sequence number for the signer's next transaction (cached after the first lookup).
    fn take_sequence(&self, signer: &Secret) -> Result<i64, ChainError> {
        let key = signer.public_key();
        if let Some(seq) = self.next_sequence.lock().expect("not poisoned").get(&key) {
            return Ok(*seq);
        }
        match self.account_sequence(&signer.account_id())? {
            Some(seq) => Ok(seq + 1),
            None => Err(ChainError::NoAccount(signer.address())),
        }
    }

    fn remember_sequence(&self, signer: &Secret, used: i64) {
        self.next_sequence
            .lock()
            .expect("not poisoned")
            .insert(signer.public_key(), used + 1);
    }

    fn forget_sequence(&self, signer: &Secret) {
        self.next_sequence
            .lock()
            .expect("not poisoned")
            .remove(&signer.public_key());
    }
}

/// Applies a simulation to a host-function call: `Ok(Err(outcome))` when simulation refused it.
fn prepare(
    source: &AccountId,
    seq: i64,
    host_function: HostFunction,
    sim: SimulateResponse,
) -> Result<Result<Transaction, InvokeOutcome>, ChainError> {
    if let Some(error) = sim.error {
        return Ok(Err(InvokeOutcome::Refused(error)));
    }
    if sim.restore_preamble.is_some() {
        return Ok(Err(InvokeOutcome::Archived(
            "simulation asked to restore archived entries first".into(),
        )));
    }
    let data_b64 = sim.transaction_data.ok_or_else(|| ChainError::Xdr {
        what: "simulation transactionData",
        reason: "missing".into(),
    })?;
    let mut data: SorobanTransactionData = decode(&data_b64, "simulation transactionData")?;
    let min_fee: i64 = sim
        .min_resource_fee
        .as_deref()
        .unwrap_or("0")
        .parse()
        .map_err(|_| ChainError::Xdr {
            what: "minResourceFee",
            reason: "not a number".into(),
        })?;
    let mut auth: Vec<SorobanAuthorizationEntry> = Vec::new();
    for result in &sim.results {
        for entry in &result.auth {
            let entry: SorobanAuthorizationEntry = decode(entry, "an authorization entry")?;
            if !matches!(entry.credentials, SorobanCredentials::SourceAccount) {
                let who = match &entry.credentials {
                    SorobanCredentials::Address(c) | SorobanCredentials::AddressV2(c) => {
                        crate::address::strkey_of(&c.address)
                    }
                    other => format!("{other:?}"),
                };
                return Err(ChainError::ForeignAuth(who));
            }
            auth.push(entry);
        }
    }
    data.resources.instructions = data
        .resources
        .instructions
        .saturating_add(data.resources.instructions / 100 * INSTRUCTION_MARGIN_PERCENT);
    let resource_fee = min_fee + min_fee * RESOURCE_FEE_MARGIN_PERCENT / 100 + 1_000;
    data.resource_fee = resource_fee;
    let fee = u32::try_from(resource_fee + i64::from(BASE_FEE)).unwrap_or(u32::MAX);
    let op = Operation {
        source_account: None,
        body: OperationBody::InvokeHostFunction(InvokeHostFunctionOp {
            host_function,
            auth: auth.try_into().map_err(|_| ChainError::Xdr {
                what: "authorization entries",
                reason: "too many".into(),
            })?,
        }),
    };
    Ok(Ok(transaction(
        source,
        seq,
        fee,
        vec![op],
        TransactionExt::V1(data),
    )))
}

fn invoke_contract(
    contract: &ScAddress,
    function: &str,
    args: Vec<ScVal>,
) -> Result<HostFunction, ChainError> {
    Ok(HostFunction::InvokeContract(InvokeContractArgs {
        contract_address: contract.clone(),
        function_name: ScSymbol(function.try_into().map_err(|_| ChainError::Xdr {
            what: "a function name",
            reason: format!("`{function}` is not a valid Soroban symbol"),
        })?),
        args: args.try_into().map_err(|_| ChainError::Xdr {
            what: "call arguments",
            reason: "too many".into(),
        })?,
    }))
}

fn invoke_op(host_function: HostFunction) -> Operation {
    Operation {
        source_account: None,
        body: OperationBody::InvokeHostFunction(InvokeHostFunctionOp {
            host_function,
            auth: Default::default(),
        }),
    }
}

fn transaction(
    source: &AccountId,
    seq: i64,
    fee: u32,
    ops: Vec<Operation>,
    ext: TransactionExt,
) -> Transaction {
    let AccountId(stellar_xdr::PublicKey::PublicKeyTypeEd25519(key)) = source;
    Transaction {
        source_account: MuxedAccount::Ed25519(key.clone()),
        fee,
        seq_num: SequenceNumber(seq),
        cond: Preconditions::None,
        memo: Memo::None,
        operations: ops
            .try_into()
            .expect("at most 100 operations are built here"),
        ext,
    }
}

fn unsigned(tx: Transaction) -> TransactionEnvelope {
    TransactionEnvelope::Tx(TransactionV1Envelope {
        tx,
        signatures: Default::default(),
    })
}

fn encode<T: WriteXdr>(value: &T) -> Result<Vec<u8>, ChainError> {
    value.to_xdr(Limits::none()).map_err(|e| ChainError::Xdr {
        what: "a transaction",
        reason: e.to_string(),
    })
}

fn decode<T: ReadXdr>(b64: &str, what: &'static str) -> Result<T, ChainError> {
    T::from_xdr_base64(b64, Limits::none()).map_err(|e| ChainError::Xdr {
        what,
        reason: e.to_string(),
    })
}

/// A transaction result as a short code, e.g. `INVOKE_HOST_FUNCTION_ENTRY_ARCHIVED`.
pub fn describe_result(b64: &str) -> String {
    let Ok(result) = TransactionResult::from_xdr_base64(b64, Limits::none()) else {
        return format!("undecodable result {b64}");
    };
    match result.result {
        TransactionResultResult::TxFailed(ops) => {
            let codes: Vec<String> = ops.iter().map(describe_op).collect();
            format!("txFAILED [{}]", codes.join(", "))
        }
        other => format!("{:?}", other.discriminant()),
    }
}

fn describe_op(op: &OperationResult) -> String {
    match op {
        OperationResult::OpInner(OperationResultTr::InvokeHostFunction(r)) => match r {
            InvokeHostFunctionResult::EntryArchived => "INVOKE_HOST_FUNCTION_ENTRY_ARCHIVED".into(),
            InvokeHostFunctionResult::Trapped => "INVOKE_HOST_FUNCTION_TRAPPED".into(),
            InvokeHostFunctionResult::ResourceLimitExceeded => {
                "INVOKE_HOST_FUNCTION_RESOURCE_LIMIT_EXCEEDED".into()
            }
            InvokeHostFunctionResult::InsufficientRefundableFee => {
                "INVOKE_HOST_FUNCTION_INSUFFICIENT_REFUNDABLE_FEE".into()
            }
            other => format!("{:?}", other.discriminant()),
        },
        OperationResult::OpInner(inner) => format!("{inner:?}"),
        other => format!("{:?}", other.discriminant()),
    }
}
