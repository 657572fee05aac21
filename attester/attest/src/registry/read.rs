//! The registry's reads, by simulation (nothing is signed or sent) or, for many assets at once,
//! straight from its storage through `getLedgerEntries`.

use stellar_xdr::{
    HostFunction, InvokeHostFunctionOp, Memo, MuxedAccount, Operation, OperationBody,
    Preconditions, SequenceNumber, Transaction, TransactionEnvelope, TransactionExt,
    TransactionV1Envelope, Uint256,
};

use super::Safety;
use crate::AttestError;
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{contract_error_code, Simulated};

/// Reads `get_safety(asset)` (the most severe verdict that counts) by simulation only
/// (nothing is signed or sent).
pub fn read_safety(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
) -> Result<Option<Safety>, AttestError> {
    let value = simulate_read(rpc, super::get_safety(registry_id, asset), "get_safety")?;
    super::decode_safety(&value)
}

/// Whether the registry refuses `asset` because a verdict that counts is bound to code that is no
/// longer live (`assess` answers `CodeChanged`), by simulation only. `get_safety` answers `None`
/// then, as for an asset nobody attested; this tells the two apart.
pub fn read_code_changed(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
) -> Result<bool, AttestError> {
    let f = super::assess(registry_id, asset, 3, 0, u64::MAX);
    let value = simulate_read(rpc, f, "assess")?;
    Ok(super::is_code_changed(&value))
}

/// `assess(asset, max_severity, forbidden_mask, max_age_secs)` of `contract` (a registry or its
/// verdict store, which answer alike), undecoded, by simulation only (see
/// [`super::describe_assessment`]).
pub fn read_assessment(
    rpc: &RpcClient,
    contract: [u8; 32],
    asset: [u8; 32],
    (max_severity, forbidden_mask, max_age_secs): (u32, u32, u64),
) -> Result<stellar_xdr::ScVal, AttestError> {
    let f = super::assess(contract, asset, max_severity, forbidden_mask, max_age_secs);
    simulate_read(rpc, f, "assess")
}

/// The verdict store the registry publishes to (`verdict_store()`), if one is bound, by simulation
/// only. Consumers read the store; `verify` checks that it answers as the registry does.
pub fn read_verdict_store(
    rpc: &RpcClient,
    registry_id: [u8; 32],
) -> Result<Option<[u8; 32]>, AttestError> {
    use stellar_xdr::{ContractId, Hash, ScAddress, ScVal};
    let value = simulate_read(
        rpc,
        super::call(registry_id, "verdict_store", vec![]),
        "verdict_store",
    )?;
    match value {
        ScVal::Void => Ok(None),
        ScVal::Address(ScAddress::Contract(ContractId(Hash(id)))) => Ok(Some(id)),
        other => Err(AttestError::Chain(format!(
            "verdict_store answered {other:?}, not a contract address or nothing"
        ))),
    }
}

/// Reads `get_safety_by(asset, attester)`: that attester's own verdict, by simulation only.
pub fn read_safety_by(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
    attester: [u8; 32],
) -> Result<Option<Safety>, AttestError> {
    let f = super::get_safety_by(registry_id, asset, attester);
    let value = simulate_read(rpc, f, "get_safety_by")?;
    super::decode_safety(&value)
}

/// Asks the registry's `is_safe_quorum`, by simulation only.
pub fn read_quorum(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    asset: [u8; 32],
    attesters: &[[u8; 32]],
    threshold: u32,
    max_severity: u32,
    max_age_secs: u64,
) -> Result<bool, AttestError> {
    let f = super::is_safe_quorum(
        registry_id,
        asset,
        attesters,
        threshold,
        max_severity,
        max_age_secs,
    );
    match simulate_read(rpc, f, "is_safe_quorum")? {
        stellar_xdr::ScVal::Bool(b) => Ok(b),
        other => Err(AttestError::Chain(format!(
            "is_safe_quorum returned {other:?}, expected a bool"
        ))),
    }
}

/// Simulates the read `f` of registry function `name`. The simulated transaction's source is the
/// all-zero key: simulation needs no real account for a read.
fn simulate_read(
    rpc: &RpcClient,
    f: HostFunction,
    name: &str,
) -> Result<stellar_xdr::ScVal, AttestError> {
    let tx = Transaction {
        source_account: MuxedAccount::Ed25519(Uint256([0; 32])),
        fee: 100,
        seq_num: SequenceNumber(1),
        cond: Preconditions::None,
        memo: Memo::None,
        operations: vec![Operation {
            source_account: None,
            body: OperationBody::InvokeHostFunction(InvokeHostFunctionOp {
                host_function: f,
                auth: Default::default(),
            }),
        }]
        .try_into()
        .expect("one operation"),
        ext: TransactionExt::V0,
    };
    let env = TransactionEnvelope::Tx(TransactionV1Envelope {
        tx,
        signatures: Default::default(),
    });
    let chain = AttestError::Chain;
    let response = rpc
        .simulate_transaction(&env)
        .map_err(|e| chain(e.to_string()))?;
    let sim = Simulated::from_response(&response).map_err(|e| {
        chain(match contract_error_code(&e.to_string()) {
            Some(code) => format!("{name} failed: {e} ({})", super::registry_error(code)),
            None => {
                format!("{name} failed: {e} (is --registry an Assay registry on this network?)")
            }
        })
    })?;
    sim.result
        .ok_or_else(|| chain(format!("{name} returned no value")))
}

/// What `attester` holds in the registry for each of `assets`, read in batches of `getLedgerEntries`
/// (200 keys a call) straight from its storage (interface 5: the asset's verdicts, one record per
/// attester, under the bare asset address), instead of one simulation each. An asset with no entry, or
/// no record of `attester`, maps to `None`. The record as stored: whether it still counts (a current
/// admission, a code binding that still holds) is the contract's to say, through a simulation
/// ([`read_safety_by`]). An archived entry is left out of the map: only a simulation can say what the
/// contract would answer for it.
pub fn read_safety_many(
    rpc: &RpcClient,
    registry_id: [u8; 32],
    assets: &[[u8; 32]],
    attester: [u8; 32],
) -> Result<std::collections::BTreeMap<[u8; 32], Option<Safety>>, AttestError> {
    use stellar_xdr::{
        AccountId, ContractDataDurability, ContractId, Hash, LedgerEntryData, LedgerKey,
        LedgerKeyContractData, Limits, PublicKey, ScAddress, ScVal, Uint256, WriteXdr,
    };
    let attester = ScAddress::Account(AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(
        attester,
    ))));
    let key_of = |asset: [u8; 32]| {
        LedgerKey::ContractData(LedgerKeyContractData {
            contract: ScAddress::Contract(ContractId(Hash(registry_id))),
            key: ScVal::Address(ScAddress::Contract(ContractId(Hash(asset)))),
            durability: ContractDataDurability::Persistent,
        })
    };
    let mut held = std::collections::BTreeMap::new();
    for chunk in assets.chunks(200) {
        let keys: Vec<LedgerKey> = chunk.iter().map(|a| key_of(*a)).collect();
        let by_key: std::collections::BTreeMap<String, [u8; 32]> = keys
            .iter()
            .zip(chunk)
            .map(|(k, a)| (k.to_xdr_base64(Limits::none()).expect("a key encodes"), *a))
            .collect();
        let answer = rpc
            .get_ledger_entries(&keys)
            .map_err(|e| AttestError::Chain(e.to_string()))?;
        let latest = u32::try_from(answer.latest_ledger).unwrap_or(u32::MAX);
        for asset in chunk {
            held.insert(*asset, None);
        }
        for entry in answer.entries.unwrap_or_default() {
            let Some(asset) = by_key.get(&entry.key) else {
                continue;
            };
            if entry
                .live_until_ledger_seq_ledger_seq
                .is_some_and(|live_until| live_until < latest)
            {
                held.remove(asset);
                continue;
            }
            let data: LedgerEntryData =
                assay_chain::submit::decode_rpc_xdr("entry xdr", Some(&entry.xdr))
                    .map_err(|e| AttestError::Chain(e.to_string()))?;
            let LedgerEntryData::ContractData(d) = data else {
                return Err(AttestError::Chain(
                    "getLedgerEntries answered a registry key with another entry type".into(),
                ));
            };
            held.insert(*asset, super::record_of(&d.val, &attester)?);
        }
    }
    Ok(held)
}

/// Why a contract's WASM could not be hashed: what it runs instead, or why its code could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NoWasm {
    /// The address holds a Stellar Asset Contract.
    #[error("it is a Stellar Asset Contract, not WASM")]
    StellarAsset,
    /// No contract instance at the address.
    #[error("no contract instance at that address")]
    Missing,
    /// The instance or its code is archived.
    #[error("its instance or code is archived")]
    Archived,
    /// The instance runs another contract's code.
    #[error("it runs another contract's code (an external reference)")]
    ExternalRef,
    /// The read itself failed.
    #[error("reading its code: {0}")]
    Unread(String),
}

/// The SHA-256 (hex) of the WASM `contract` runs, read from the network: `Err` says what it runs
/// instead (a Stellar Asset Contract, nothing, an archived entry) or why it could not be read.
pub fn contract_wasm_sha256(
    rpc_url: &str,
    passphrase: &str,
    contract: [u8; 32],
) -> Result<String, NoWasm> {
    use assay_chain::tx::{ContractCode, NetworkClient};
    use stellar_xdr::{ContractId, Hash, ScAddress};
    let network = NetworkClient::new(rpc_url, passphrase);
    match network.contract_code(&ScAddress::Contract(ContractId(Hash(contract)))) {
        Ok(ContractCode::Wasm(code)) => Ok(sha256_hex(&code)),
        Ok(ContractCode::StellarAsset) => Err(NoWasm::StellarAsset),
        Ok(ContractCode::Missing) => Err(NoWasm::Missing),
        Ok(ContractCode::Archived) => Err(NoWasm::Archived),
        Ok(ContractCode::ExternalRef(_)) => Err(NoWasm::ExternalRef),
        Err(e) => Err(NoWasm::Unread(e.to_string())),
    }
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}
