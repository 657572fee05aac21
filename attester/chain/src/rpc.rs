//! JSON-RPC 2.0 over HTTP(S) to a stellar-rpc server, params by name.
use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use serde::{de::DeserializeOwned, Deserialize};
use serde_json::{json, Value};
use stellar_xdr::{Limits, WriteXdr};

#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    #[error("cannot reach the RPC server at {url}: {reason}")]
    Transport { url: String, reason: String },
    #[error("the RPC server answered {method} with error {code}: {message}")]
    Rpc {
        method: String,
        code: i64,
        message: String,
    },
    #[error("the RPC server's answer to {method} is not what stellar-rpc sends: {reason}")]
    Decode { method: String, reason: String },
}

/// A stellar-rpc endpoint. Counts every HTTP round trip it makes.
pub struct RpcClient {
    url: String,
    agent: ureq::Agent,
    round_trips: AtomicU64,
    next_id: AtomicU64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInfo {
    pub passphrase: String,
    #[serde(default)]
    pub friendbot_url: Option<String>,
    #[serde(default)]
    pub protocol_version: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LatestLedger {
    pub sequence: u32,
    #[serde(default)]
    pub protocol_version: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulateResult {
    #[serde(default)]
    pub auth: Vec<String>,
    #[serde(default)]
    pub xdr: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestorePreamble {
    pub transaction_data: String,
    pub min_resource_fee: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulateResponse {
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub transaction_data: Option<String>,
    #[serde(default)]
    pub min_resource_fee: Option<String>,
    #[serde(default)]
    pub results: Vec<SimulateResult>,
    #[serde(default)]
    pub events: Vec<String>,
    #[serde(default)]
    pub restore_preamble: Option<RestorePreamble>,
    #[serde(default)]
    pub latest_ledger: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendResponse {
    pub status: String,
    pub hash: String,
    #[serde(default)]
    pub error_result_xdr: Option<String>,
    #[serde(default)]
    pub latest_ledger: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTransactionResponse {
    pub status: String,
    #[serde(default)]
    pub ledger: Option<u32>,
    #[serde(default)]
    pub result_xdr: Option<String>,
    #[serde(default)]
    pub result_meta_xdr: Option<String>,
    #[serde(default)]
    pub latest_ledger: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntryResult {
    pub key: String,
    pub xdr: String,
    #[serde(default)]
    pub last_modified_ledger_seq: Option<u32>,
    #[serde(default)]
    pub live_until_ledger_seq: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntriesResponse {
    #[serde(default)]
    pub entries: Option<Vec<LedgerEntryResult>>,
    pub latest_ledger: u32,
}

impl RpcClient {
    /// A client for `url` (trailing `/` removed). No request is made here.
    pub fn new(url: &str) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .build();
        RpcClient {
            url: url.trim_end_matches('/').to_string(),
            agent,
            round_trips: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// HTTP round trips made so far.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// One JSON-RPC call; `params` are by name.
    pub fn call<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut body = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            body["params"] = params;
        }
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        let response = match self.agent.post(&self.url).send_json(body) {
            Ok(r) => r,
            // stellar-rpc answers JSON-RPC errors with 200; a non-2xx may still carry one.
            Err(ureq::Error::Status(code, r)) => {
                let text = r.into_string().unwrap_or_default();
                return match serde_json::from_str::<Value>(&text) {
                    Ok(v) if v.get("error").is_some() => Err(rpc_error(method, &v["error"])),
                    _ => Err(RpcError::Transport {
                        url: self.url.clone(),
                        reason: format!("HTTP {code}"),
                    }),
                };
            }
            Err(e) => {
                return Err(RpcError::Transport {
                    url: self.url.clone(),
                    reason: e.to_string(),
                })
            }
        };
        let value: Value = response.into_json().map_err(|e| RpcError::Decode {
            method: method.into(),
            reason: e.to_string(),
        })?;
        if let Some(err) = value.get("error") {
            return Err(rpc_error(method, err));
        }
        let result = value
            .get("result")
            .cloned()
            .ok_or_else(|| RpcError::Decode {
                method: method.into(),
                reason: "no `result` and no `error`".into(),
            })?;
        serde_json::from_value(result).map_err(|e| RpcError::Decode {
            method: method.into(),
            reason: e.to_string(),
        })
    }

    pub fn get_network(&self) -> Result<NetworkInfo, RpcError> {
        self.call("getNetwork", Value::Null)
    }

    pub fn get_latest_ledger(&self) -> Result<LatestLedger, RpcError> {
        self.call("getLatestLedger", Value::Null)
    }

    pub fn simulate_transaction(
        &self,
        envelope: &stellar_xdr::TransactionEnvelope,
    ) -> Result<SimulateResponse, RpcError> {
        self.call(
            "simulateTransaction",
            json!({"transaction": to_b64(envelope)}),
        )
    }

    pub fn send_transaction(
        &self,
        envelope: &stellar_xdr::TransactionEnvelope,
    ) -> Result<SendResponse, RpcError> {
        self.call("sendTransaction", json!({"transaction": to_b64(envelope)}))
    }

    pub fn get_transaction(&self, hash: &str) -> Result<GetTransactionResponse, RpcError> {
        self.call("getTransaction", json!({"hash": hash}))
    }

    pub fn get_ledger_entries(
        &self,
        keys: &[stellar_xdr::LedgerKey],
    ) -> Result<LedgerEntriesResponse, RpcError> {
        let keys: Vec<String> = keys.iter().map(to_b64).collect();
        self.call("getLedgerEntries", json!({"keys": keys}))
    }

    /// Contract events from `start_ledger` for the given contract ids (raw JSON result).
    pub fn get_events(
        &self,
        start_ledger: u32,
        contract_ids: &[String],
    ) -> Result<Value, RpcError> {
        self.call(
            "getEvents",
            json!({
                "startLedger": start_ledger,
                "filters": [{"type": "contract", "contractIds": contract_ids}],
                "pagination": {"limit": 100},
            }),
        )
    }
}

fn rpc_error(method: &str, err: &Value) -> RpcError {
    RpcError::Rpc {
        method: method.into(),
        code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)")
            .to_string(),
    }
}

pub(crate) fn to_b64<T: WriteXdr>(value: &T) -> String {
    value
        .to_xdr_base64(Limits::none())
        .expect("in-memory XDR values always encode")
}
