//! One network as the SEP-41 suite and the fixtures see it: simulated reads from any account, writes signed
//! by whichever key the caller holds, contract deployment, classic operations, and what a contract id runs.
//!
//! Every write goes through [`crate::submit::Invoker`], so it inherits the submit path's guarantees (one
//! envelope per write, `TRY_AGAIN_LATER` back-off, lost answers re-polled by hash, time-bound expiry).
use std::time::Duration;

use stellar_xdr::{
    AccountId, Asset, ContractDataDurability, ContractExecutable, ContractId, Hash, HostFunction,
    InvokeContractArgs, InvokeHostFunctionOp, LedgerEntryData, LedgerKey, LedgerKeyAccount,
    LedgerKeyContractCode, LedgerKeyContractData, Memo, MuxedAccount, Operation, OperationBody,
    Preconditions, ScAddress, ScSymbol, ScVal, SequenceNumber, Transaction, TransactionEnvelope,
    TransactionExt, TransactionV1Envelope,
};

use crate::{
    address::{contract_id_from_asset, contract_id_from_deployer},
    deploy,
    identity::Signer,
    network::NetworkSpec,
    rpc::{AuthMode, RpcClient, SimulateTransactionResponse},
    submit::{decode_rpc_xdr, ChainError, InvokeOptions, Invoker, Simulated},
};

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
    /// A CAP-85 external reference: the code is owned, and replaceable, by this contract.
    ExternalRef(ScAddress),
}

/// One network: an RPC endpoint and the passphrase transactions are signed for.
pub struct NetworkClient {
    pub rpc: RpcClient,
    spec: NetworkSpec,
    /// How often to ask whether a submitted transaction is final.
    pub poll_interval: Duration,
    /// How long a transaction stays valid (its time bound); past it plus a short grace, an unconfirmed
    /// transaction is reported as expired or unknown.
    pub poll_timeout: Duration,
}

impl NetworkClient {
    /// A network at `rpc_url` signing for `passphrase`. No request is made here; an unusable URL makes
    /// every call fail with an error naming it.
    pub fn new(rpc_url: &str, passphrase: &str) -> Self {
        NetworkClient {
            rpc: RpcClient::new(rpc_url).unwrap_or_else(|e| RpcClient::unusable(rpc_url, e)),
            spec: NetworkSpec {
                name: "custom".into(),
                rpc_url: rpc_url.into(),
                passphrase: passphrase.into(),
            },
            poll_interval: Duration::from_millis(500),
            poll_timeout: Duration::from_secs(60),
        }
    }

    pub fn passphrase(&self) -> &str {
        &self.spec.passphrase
    }

    pub fn latest_ledger(&self) -> Result<u32, ChainError> {
        Ok(self.rpc.get_latest_ledger()?.sequence)
    }

    fn invoker<'a>(&'a self, signer: &'a Signer) -> Invoker<'a> {
        Invoker {
            rpc: &self.rpc,
            network: &self.spec,
            signer,
            options: InvokeOptions {
                resource_fee_margin_pct: 30,
                validity_secs: self.poll_timeout.as_secs().max(1),
                poll_interval: self.poll_interval,
                try_again_backoff: self.poll_interval.max(Duration::from_millis(200)),
                follow_grace: Duration::from_secs(10),
                ..InvokeOptions::default()
            },
        }
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
            _ => Err(ChainError::Simulation(
                "getLedgerEntries returned a non-account entry for an account key".into(),
            )),
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
        let sim = self.simulate_call(source, contract, function, args, None)?;
        if let Some(error) = sim.error {
            return Ok(ReadOutcome::Trapped(error));
        }
        if sim.restore_preamble.is_some() {
            return Ok(ReadOutcome::Archived);
        }
        let result = sim
            .results
            .first()
            .ok_or_else(|| ChainError::Simulation("simulation answered with no result".into()))?;
        Ok(ReadOutcome::Value(decode(&result.xdr, "a return value")?))
    }

    /// Simulates `function` from `source` in `auth_mode` (`None`: stellar-rpc's default) and returns
    /// stellar-rpc's answer as sent. Nothing is signed or submitted.
    pub fn simulate_call(
        &self,
        source: &AccountId,
        contract: &ScAddress,
        function: &str,
        args: Vec<ScVal>,
        auth_mode: Option<AuthMode>,
    ) -> Result<SimulateTransactionResponse, ChainError> {
        let AccountId(stellar_xdr::PublicKey::PublicKeyTypeEd25519(key)) = source;
        let tx = Transaction {
            source_account: MuxedAccount::Ed25519(key.clone()),
            fee: 100,
            seq_num: SequenceNumber(0),
            cond: Preconditions::None,
            memo: Memo::None,
            operations: vec![invoke_op(invoke_contract(contract, function, args)?)]
                .try_into()
                .expect("one operation"),
            ext: TransactionExt::V0,
        };
        let envelope = TransactionEnvelope::Tx(TransactionV1Envelope {
            tx,
            signatures: Default::default(),
        });
        Ok(self.rpc.simulate_transaction_in(&envelope, auth_mode)?)
    }

    /// Invokes `function` on `contract`, signed and authorized by `signer`.
    pub fn invoke(
        &self,
        signer: &Signer,
        contract: &ScAddress,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<InvokeOutcome, ChainError> {
        self.run_host_function(signer, invoke_contract(contract, function, args)?)
    }

    /// Uploads contract code; returns its hash.
    pub fn upload_wasm(&self, signer: &Signer, wasm: &[u8]) -> Result<[u8; 32], ChainError> {
        let (host_function, hash) = deploy::upload_wasm(wasm)?;
        expect_landed(self.run_host_function(signer, host_function)?)?;
        Ok(hash)
    }

    /// Deploys `wasm_hash` from `signer` with `salt`, calling its constructor with `args`.
    pub fn create_contract(
        &self,
        signer: &Signer,
        wasm_hash: [u8; 32],
        salt: [u8; 32],
        args: Vec<ScVal>,
    ) -> Result<ScAddress, ChainError> {
        let deployer = signer.sc_address();
        let id = contract_id_from_deployer(&deployer, salt, self.passphrase());
        let host_function = deploy::create_contract(deployer, wasm_hash, salt, args)?;
        expect_landed(self.run_host_function(signer, host_function)?)?;
        Ok(ScAddress::Contract(ContractId(Hash(id))))
    }

    /// Deploys the Stellar Asset Contract for `asset`.
    pub fn deploy_sac(&self, signer: &Signer, asset: &Asset) -> Result<ScAddress, ChainError> {
        let id = contract_id_from_asset(asset, self.passphrase());
        expect_landed(self.run_host_function(signer, deploy::create_asset_contract(asset))?)?;
        Ok(ScAddress::Contract(ContractId(Hash(id))))
    }

    /// Submits classic operations signed by `signer`; returns (hash, ledger).
    pub fn submit_classic(
        &self,
        signer: &Signer,
        ops: Vec<OperationBody>,
    ) -> Result<(String, u32), ChainError> {
        let invoker = self.invoker(signer);
        let seq = invoker.next_sequence()?;
        let fee = invoker
            .options
            .inclusion_fee
            .saturating_mul(u32::try_from(ops.len()).unwrap_or(u32::MAX));
        let ops = ops
            .into_iter()
            .map(|body| Operation {
                source_account: None,
                body,
            })
            .collect();
        let confirmed = invoker.submit(invoker.transaction_of(seq, fee, ops, None)?)?;
        Ok((confirmed.hash, confirmed.ledger))
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
            .live_until_ledger_seq_ledger_seq
            .is_some_and(|l| i64::from(l) < response.latest_ledger)
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
            ContractExecutable::ExternalRef(r) => {
                return Ok(ContractCode::ExternalRef(r.executable_owner))
            }
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

    /// Simulate, attach footprint/resources/auth and a fee with headroom, sign, submit, poll. Simulation's
    /// refusal and archived state are answers about the contract, not faults.
    fn run_host_function(
        &self,
        signer: &Signer,
        host_function: HostFunction,
    ) -> Result<InvokeOutcome, ChainError> {
        let mut invoker = self.invoker(signer);
        if !matches!(host_function, HostFunction::InvokeContract(_)) {
            // Uploading or deploying code pays rent for the maximum TTL (tens of XLM): a set-up
            // step the caller chose, not a contract call the fee cap guards.
            invoker.options.max_fee = u32::MAX;
        }
        let seq = invoker.next_sequence()?;
        let raw = invoker.simulate_raw(seq, &host_function)?;
        if let Some(error) = &raw.error {
            return Ok(InvokeOutcome::Refused(error.clone()));
        }
        if raw.restore_preamble.is_some() {
            return Ok(InvokeOutcome::Archived(
                "simulation asked to restore archived entries first".into(),
            ));
        }
        let sim = Simulated::from_response(&raw)?;
        // `assemble` refuses auth this signer cannot give (ChainError::ForeignAuth) before sending.
        match invoker.submit(invoker.assemble(seq, &host_function, &sim)?) {
            Ok(c) => Ok(InvokeOutcome::Landed {
                hash: c.hash,
                ledger: c.ledger,
            }),
            Err(ChainError::Failed { code, .. }) if code.contains("ENTRY_ARCHIVED") => {
                Ok(InvokeOutcome::Archived(code))
            }
            Err(ChainError::Failed { hash, ledger, code }) => Ok(InvokeOutcome::FailedOnChain {
                hash,
                ledger: Some(ledger),
                code,
            }),
            Err(e) => Err(e),
        }
    }
}

fn expect_landed(outcome: InvokeOutcome) -> Result<(String, u32), ChainError> {
    match outcome {
        InvokeOutcome::Landed { hash, ledger } => Ok((hash, ledger)),
        InvokeOutcome::Refused(e) | InvokeOutcome::Archived(e) => Err(ChainError::Simulation(e)),
        InvokeOutcome::FailedOnChain { hash, code, ledger } => Err(ChainError::Failed {
            hash,
            ledger: ledger.unwrap_or(0),
            code,
        }),
    }
}

fn invoke_contract(
    contract: &ScAddress,
    function: &str,
    args: Vec<ScVal>,
) -> Result<HostFunction, ChainError> {
    Ok(HostFunction::InvokeContract(InvokeContractArgs {
        contract_address: contract.clone(),
        function_name: ScSymbol(function.try_into().map_err(|_| {
            ChainError::Simulation(format!("`{function}` is not a valid Soroban symbol"))
        })?),
        args: args
            .try_into()
            .map_err(|_| ChainError::Simulation("too many call arguments".into()))?,
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

fn decode<T: stellar_xdr::ReadXdr>(b64: &str, what: &str) -> Result<T, ChainError> {
    decode_rpc_xdr(what, Some(b64))
        .map_err(|e| ChainError::Simulation(format!("the RPC server sent {e}")))
}
