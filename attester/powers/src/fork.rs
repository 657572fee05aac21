//! Discovery on a fork of a network, for `assay scan C…`, `attest`, `verify` and `watch`: start a fork of
//! the network's ledger (nothing is signed or sent upstream), read the token's code from it, find holders
//! to watch in the token's newest events (`assay_chain::holders`), and run [`crate::discover`] in a
//! sandbox over the fork.

use std::path::PathBuf;

use assay_chain::holders::holders_in_events;
use assay_chain::rpc::RpcClient;
use assay_chain::strkey_of;
use assay_core::powers::PowerSurvey;
use assay_localnet::{ForkConfig, LocalNet, LocalNetConfig};
use stellar_xdr::{
    ContractExecutable, LedgerEntryData, LedgerKey, LedgerKeyContractCode, ScAddress, ScVal,
};

use crate::observe::instance_key;
use crate::{discover_on, Bounds, DiscoveryError};

/// The fork note holding the holder candidates the recording run read from the token's events, so a
/// replay of its snapshot watches the same holders without asking anyone.
pub const CANDIDATES_NOTE: &str = "powers.holder_candidates";

/// Where and whom to fork.
#[derive(Debug, Clone)]
pub struct ForkRequest {
    /// The network's stellar-rpc; not needed when `cache` names an existing snapshot (a replay).
    pub rpc_url: Option<String>,
    /// Its passphrase (checked against the upstream's, or the snapshot's).
    pub passphrase: String,
    /// The token.
    pub contract: ScAddress,
    /// An address known to hold the token, watched first.
    pub holder: Option<ScAddress>,
    pub bounds: Bounds,
    /// A `--fork-cache` snapshot file: replayed offline when it exists (the candidates come from its
    /// notes), written with every entry the discovery read when it does not (an evidence bundle carries it).
    pub cache: Option<PathBuf>,
}

/// A finished discovery on a fork.
#[derive(Debug, Clone)]
pub struct ForkDiscovery {
    pub survey: PowerSurvey,
    /// Calls to the upstream's stellar-rpc.
    pub upstream_round_trips: u64,
    /// Keys the upstream reported modified after the fork ledger (drift), base64.
    pub drifted: Vec<String>,
    /// The discovery replayed a snapshot and asked no upstream.
    pub offline: bool,
}

/// Runs discovery for `request.contract` on a fork of its network, or offline on the snapshot
/// `request.cache` names when that file exists.
///
/// # Errors
/// [`DiscoveryError::Upstream`] when the fork cannot start or its upstream fails (or a snapshot names no
/// holder candidates); [`DiscoveryError::Malformed`] when there is no WASM token at the address.
pub fn discover_on_fork(request: &ForkRequest) -> Result<ForkDiscovery, DiscoveryError> {
    let upstream = |e: &dyn std::fmt::Display| DiscoveryError::Upstream(e.to_string());
    let net = LocalNet::start_fork(
        LocalNetConfig {
            port: 0,
            ledger_close_ms: 1_000,
            passphrase: request.passphrase.clone(),
        },
        ForkConfig {
            rpc_url: request.rpc_url.clone(),
            ledger: None,
            cache: request.cache.clone(),
        },
    )
    .map_err(|e| upstream(&e))?;
    let stats = net
        .fork_stats()
        .ok_or_else(|| DiscoveryError::Upstream("the network did not start as a fork".into()))?;
    // The code first: an address with no WASM token fails before any event is read.
    code_of(&net, &request.contract)?;
    let (candidates, client) = if stats.offline {
        (noted_candidates(&net)?, None)
    } else {
        let url = request.rpc_url.as_deref().unwrap_or_default();
        let client = RpcClient::new(url).map_err(|e| upstream(&e))?;
        let mut candidates: Vec<ScAddress> = request.holder.iter().cloned().collect();
        let named = holders_in_events(&client, &request.contract, stats.ledger)
            .map_err(|e| upstream(&e))?;
        for a in named
            .iter()
            .filter_map(|t| assay_chain::parse_address(t).ok())
        {
            if !candidates.contains(&a) {
                candidates.push(a);
            }
        }
        let texts: Vec<String> = candidates.iter().map(strkey_of).collect();
        net.fork_note(CANDIDATES_NOTE, serde_json::json!(texts))
            .map_err(|e| upstream(&e))?;
        (candidates, Some(client))
    };
    let survey = discover_on(&net, &request.contract, &candidates, request.bounds)?;
    let stats = net.fork_stats().unwrap_or(stats);
    Ok(ForkDiscovery {
        survey,
        upstream_round_trips: stats.upstream_round_trips
            + client.as_ref().map_or(0, RpcClient::round_trips),
        drifted: stats.drifted,
        offline: stats.offline,
    })
}

/// The holder candidates a replayed snapshot's recording run noted.
fn noted_candidates(net: &LocalNet) -> Result<Vec<ScAddress>, DiscoveryError> {
    let texts: Vec<String> = net
        .fork_noted(CANDIDATES_NOTE)
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| {
            DiscoveryError::Upstream(format!(
                "the snapshot notes no holder candidates ({CANDIDATES_NOTE}): it was not recorded by power \
                 discovery"
            ))
        })?;
    texts
        .iter()
        .map(|t| {
            assay_chain::parse_address(t).map_err(|e| {
                DiscoveryError::Upstream(format!("the snapshot's candidate {t:?}: {e}"))
            })
        })
        .collect()
}

/// The WASM `contract` runs on `net`.
pub fn code_of(net: &LocalNet, contract: &ScAddress) -> Result<Vec<u8>, DiscoveryError> {
    let missing = |what: String| DiscoveryError::Malformed(what);
    let id = strkey_of(contract);
    let (instance, _) = net
        .ledger_entry(&instance_key(contract))
        .ok_or_else(|| missing(format!("no contract instance at {id}")))?;
    let hash = match instance.data {
        LedgerEntryData::ContractData(d) => match d.val {
            ScVal::ContractInstance(i) => match i.executable {
                ContractExecutable::Wasm(h) => h,
                ContractExecutable::StellarAsset => {
                    return Err(missing(format!(
                        "{id} is a Stellar Asset Contract: its powers are its issuer's flags"
                    )))
                }
                ContractExecutable::ExternalRef(r) => {
                    return Err(missing(format!(
                        "{id} runs code owned by {} (a CAP-85 external reference), which discovery cannot \
                         resolve yet",
                        strkey_of(&r.executable_owner)
                    )))
                }
            },
            _ => return Err(missing(format!("{id}'s instance entry holds no instance"))),
        },
        _ => return Err(missing(format!("{id}'s instance key names another entry"))),
    };
    let (code, _) = net
        .ledger_entry(&LedgerKey::ContractCode(LedgerKeyContractCode { hash }))
        .ok_or_else(|| missing(format!("the code of {id} is not on the ledger")))?;
    match code.data {
        LedgerEntryData::ContractCode(c) => Ok(c.code.to_vec()),
        _ => Err(missing(format!("the code entry of {id} holds no code"))),
    }
}
