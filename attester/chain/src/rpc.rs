//! A synchronous facade over stellar-rpc-client: every call runs on a private current-thread tokio runtime
//! under a timeout, and every failure says whether the request may have reached the server.
//!
//! Typed calls go through stellar-rpc-client's own methods; `sendTransaction` and `getTransaction` go
//! through its raw JSON-RPC client because the submit path needs every status as sent (`TRY_AGAIN_LATER`,
//! `DUPLICATE`, `ERROR` with `errorResultXdr`, `NOT_FOUND` with `latestLedgerCloseTime`).
use std::{
    future::Future,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex, PoisonError,
    },
    time::{Duration, Instant},
};

use jsonrpsee_core::{client::ClientT, params::ObjectParams, ClientError};
use serde_json::Value;
pub use stellar_rpc_client::{AuthMode, SimulateTransactionResponse};
use stellar_rpc_client::{
    Client, Error as ClientFailure, GetEventsResponse, GetFeeStatsResponse,
    GetLatestLedgerResponse, GetLedgerEntriesResponse, GetNetworkResponse,
};
use stellar_xdr::{LedgerKey, Limits, TransactionEnvelope, WriteXdr};

/// The default per-call timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a kept-alive connection may sit unused before the next call opens a new one. A server closes
/// idle connections on its own schedule (5 s is common), and the private runtime is not polled between
/// calls, so the pool cannot see that close: a call on such a connection breaks after its request was
/// written ("connection closed before message completed"), a failure that says nothing about the server.
pub const IDLE_REUSE_LIMIT: Duration = Duration::from_secs(4);

/// Why an RPC call produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcError {
    /// Could not connect (`detail` starts with `connect`: nothing was sent), or the exchange broke after the
    /// request was written (the server may or may not have acted).
    #[error("stellar-rpc at {url} unreachable: {detail}")]
    Transport {
        /// Endpoint (without credentials).
        url: String,
        /// What failed.
        detail: String,
    },
    /// The server answered, but not with a stellar-rpc answer (non-2xx, not JSON-RPC, fields missing).
    #[error("stellar-rpc at {url} answered {method} badly: {detail}")]
    Protocol {
        /// Endpoint (without credentials).
        url: String,
        /// Method.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// A JSON-RPC error object: the server refused the call.
    #[error("stellar-rpc {method} failed: {message} (code {code})")]
    Server {
        /// Method.
        method: String,
        /// JSON-RPC code.
        code: i64,
        /// Message.
        message: String,
    },
}

impl RpcError {
    /// True when the request may have reached the server and been acted on. Only a failure to connect and
    /// an explicit JSON-RPC refusal prove it was not.
    pub fn maybe_delivered(&self) -> bool {
        match self {
            RpcError::Transport { detail, .. } => !detail.starts_with("connect"),
            RpcError::Protocol { .. } => true,
            RpcError::Server { .. } => false,
        }
    }
}

/// A stellar-rpc endpoint. Cheap to clone (clones share the connection pool, runtime and counter).
#[derive(Clone)]
pub struct RpcClient {
    /// `Err` for a client made from an unusable URL: every call answers with that error.
    client: Result<Arc<Mutex<Pooled>>, RpcError>,
    /// The URL as given (it may carry credentials: never shown), to open a new pool after an idle spell.
    url: Arc<str>,
    idle_limit: Duration,
    runtime: Arc<tokio::runtime::Runtime>,
    shown: String,
    timeout: Duration,
    round_trips: Arc<AtomicU64>,
}

/// The client whose pool the calls share, and when a call last finished on it.
struct Pooled {
    client: Client,
    last_used: Instant,
}

impl std::fmt::Debug for RpcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RpcClient({})", self.shown)
    }
}

/// `sendTransaction`'s answer, every status kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendResponse {
    /// `PENDING`, `DUPLICATE`, `TRY_AGAIN_LATER` or `ERROR` (anything else is kept as sent).
    pub status: String,
    /// The hash the server computed (may be absent on some errors).
    pub hash: String,
    /// With `ERROR`: the `TransactionResult` XDR.
    pub error_result_xdr: Option<String>,
}

/// `getTransaction`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionStatus {
    /// `SUCCESS`, `FAILED` or `NOT_FOUND`.
    pub status: String,
    /// Ledger it applied in.
    pub ledger: Option<u32>,
    /// Close time of that ledger (unix seconds).
    pub created_at: Option<u64>,
    /// The server's latest ledger close time (unix seconds): proves a time bound has passed.
    pub latest_ledger_close_time: Option<u64>,
    /// `TransactionResult` XDR.
    pub result_xdr: Option<String>,
    /// `TransactionMeta` XDR.
    pub result_meta_xdr: Option<String>,
}

fn number(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

impl RpcClient {
    /// A client for `url` (http or https). No request is made here.
    ///
    /// # Errors
    /// [`RpcError::Protocol`] when `url` is not an http(s) URL with a host.
    pub fn new(url: &str) -> Result<RpcClient, RpcError> {
        // Never show credentials that may be embedded in a provider URL, not even in an error.
        let bad = |shown: String, detail: String| RpcError::Protocol {
            url: shown,
            method: "(none)".into(),
            detail,
        };
        let parsed = url::Url::parse(url).map_err(|e| {
            bad(
                "(the RPC URL given, not shown)".into(),
                format!("not a URL: {e}"),
            )
        })?;
        let mut shown = parsed.clone();
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        shown.set_query(None);
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(bad(shown.to_string(), "expected an http(s) URL".into()));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                bad(
                    shown.to_string(),
                    format!("cannot start the I/O runtime: {e}"),
                )
            })?;
        let client = {
            let _guard = runtime.enter();
            Client::new(url)
                .map_err(|_| bad(shown.to_string(), "the RPC client refused it".into()))?
        };
        Ok(RpcClient {
            client: Ok(Arc::new(Mutex::new(Pooled {
                client,
                last_used: Instant::now(),
            }))),
            url: url.into(),
            idle_limit: IDLE_REUSE_LIMIT,
            runtime: Arc::new(runtime),
            shown: shown.to_string(),
            timeout: DEFAULT_TIMEOUT,
            round_trips: Arc::new(AtomicU64::new(0)),
        })
    }

    /// A client whose every call fails with `error` (what [`RpcClient::new`] said about `url`).
    pub fn unusable(url: &str, error: RpcError) -> RpcClient {
        RpcClient {
            client: Err(error),
            url: url.into(),
            idle_limit: IDLE_REUSE_LIMIT,
            runtime: Arc::new(
                tokio::runtime::Builder::new_current_thread()
                    .build()
                    .expect("a runtime without I/O drivers always builds"),
            ),
            shown: url.into(),
            timeout: DEFAULT_TIMEOUT,
            round_trips: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The client for the next call: the shared pool, or a new one when the pool sat unused longer than the
    /// idle limit (its connections may have been closed by the server meanwhile).
    fn inner(&self) -> Result<Client, RpcError> {
        let pooled = self.client.as_ref().map_err(Clone::clone)?;
        let mut pooled = pooled.lock().unwrap_or_else(PoisonError::into_inner);
        if pooled.last_used.elapsed() > self.idle_limit {
            let _guard = self.runtime.enter();
            if let Ok(fresh) = Client::new(&self.url) {
                pooled.client = fresh;
            }
        }
        pooled.last_used = Instant::now();
        Ok(pooled.client.clone())
    }

    /// Notes that a call just finished: the pool's connections were in use until now.
    fn used(&self) {
        if let Ok(pooled) = &self.client {
            pooled
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .last_used = Instant::now();
        }
    }

    /// Sets how long the pool may sit unused before a call opens a new connection (default
    /// [`IDLE_REUSE_LIMIT`]); below the server's own idle timeout, a call never meets a connection the
    /// server already closed.
    pub fn with_idle_limit(mut self, limit: Duration) -> RpcClient {
        self.idle_limit = limit;
        self
    }

    /// Sets the per-call timeout (connect, send and answer together).
    pub fn with_timeout(mut self, timeout: Duration) -> RpcClient {
        self.timeout = timeout;
        self
    }

    /// The endpoint, without credentials.
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// Calls made so far (by this client and its clones).
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// Runs one call to completion under the timeout. Works from plain threads; from inside another tokio
    /// runtime it runs on a scoped thread, since a runtime cannot block inside another.
    fn run<T, F>(&self, method: &str, call: F) -> Result<T, RpcError>
    where
        F: Future<Output = Result<T, ClientFailure>> + Send,
        T: Send,
    {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        let timeout = self.timeout;
        let timed = async move { tokio::time::timeout(timeout, call).await };
        let outcome = if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| self.runtime.block_on(timed))
                    .join()
                    .unwrap_or_else(|_| panic!("the RPC thread panicked"))
            })
        } else {
            self.runtime.block_on(timed)
        };
        self.used();
        match outcome {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.classify(method, e)),
            Err(_) => Err(RpcError::Transport {
                url: self.shown.clone(),
                detail: format!(
                    "exchange: no answer to {method} within {} s",
                    timeout.as_secs_f32()
                ),
            }),
        }
    }

    fn classify(&self, method: &str, e: ClientFailure) -> RpcError {
        let url = self.shown.clone();
        let protocol = |detail: String| RpcError::Protocol {
            url: url.clone(),
            method: method.into(),
            detail,
        };
        match e {
            ClientFailure::JsonRpc(ClientError::Call(obj)) => RpcError::Server {
                method: method.into(),
                code: i64::from(obj.code()),
                message: obj.message().to_string(),
            },
            ClientFailure::JsonRpc(ClientError::Transport(inner)) => {
                let chain = error_chain(inner.as_ref());
                if let Some(status) = chain
                    .split("Request rejected `")
                    .nth(1)
                    .and_then(|r| r.split('`').next())
                {
                    protocol(format!("HTTP {status}"))
                } else if is_connect_failure(inner.as_ref()) {
                    RpcError::Transport {
                        url,
                        detail: format!("connect: {chain}"),
                    }
                } else {
                    RpcError::Transport {
                        url,
                        detail: format!("exchange: {chain}"),
                    }
                }
            }
            ClientFailure::JsonRpc(ClientError::RequestTimeout) => RpcError::Transport {
                url,
                detail: format!("exchange: no answer to {method} in time"),
            },
            ClientFailure::JsonRpc(ClientError::ParseError(e)) => {
                protocol(format!("not stellar-rpc's answer shape: {e}"))
            }
            ClientFailure::JsonRpc(other) => protocol(other.to_string()),
            other => protocol(other.to_string()),
        }
    }

    /// Calls `method` with named `params` (a JSON object, or null for none) and returns `result` as sent.
    ///
    /// # Errors
    /// See [`RpcError`].
    pub fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let mut object = ObjectParams::new();
        if let Value::Object(map) = params {
            for (k, v) in map {
                object.insert(&k, v).map_err(|e| RpcError::Protocol {
                    url: self.shown.clone(),
                    method: method.into(),
                    detail: format!("cannot encode parameter {k}: {e}"),
                })?;
            }
        }
        let pooled = self.inner()?;
        let client = pooled.client();
        self.run(method, async move {
            Ok(client.request::<Value, _>(method, object).await?)
        })
    }

    /// `getNetwork`.
    pub fn get_network(&self) -> Result<GetNetworkResponse, RpcError> {
        self.run("getNetwork", self.inner()?.get_network())
    }

    /// `getHealth`.
    pub fn get_health(&self) -> Result<stellar_rpc_client::GetHealthResponse, RpcError> {
        self.run("getHealth", self.inner()?.get_health())
    }

    /// `getLatestLedger`.
    pub fn get_latest_ledger(&self) -> Result<GetLatestLedgerResponse, RpcError> {
        self.run("getLatestLedger", self.inner()?.get_latest_ledger())
    }

    /// `getFeeStats`.
    pub fn get_fee_stats(&self) -> Result<GetFeeStatsResponse, RpcError> {
        self.run("getFeeStats", self.inner()?.get_fee_stats())
    }

    /// `getLedgerEntries` for `keys`.
    pub fn get_ledger_entries(
        &self,
        keys: &[LedgerKey],
    ) -> Result<GetLedgerEntriesResponse, RpcError> {
        self.run("getLedgerEntries", self.inner()?.get_ledger_entries(keys))
    }

    /// `simulateTransaction` (stellar-rpc's default auth mode).
    pub fn simulate_transaction(
        &self,
        envelope: &TransactionEnvelope,
    ) -> Result<SimulateTransactionResponse, RpcError> {
        self.simulate_transaction_in(envelope, None)
    }

    /// `simulateTransaction` in `auth_mode`: `Record` reports the authorizations the call asks
    /// for, `Enforce` checks the ones the envelope carries (none: the call as nobody signed it).
    pub fn simulate_transaction_in(
        &self,
        envelope: &TransactionEnvelope,
        auth_mode: Option<AuthMode>,
    ) -> Result<SimulateTransactionResponse, RpcError> {
        self.run(
            "simulateTransaction",
            self.inner()?
                .simulate_transaction_envelope(envelope, auth_mode),
        )
    }

    /// Contract events from `start_ledger` for the given `C…` contract ids (at most 100).
    pub fn get_events(
        &self,
        start_ledger: u32,
        contract_ids: &[String],
    ) -> Result<GetEventsResponse, RpcError> {
        self.run(
            "getEvents",
            self.inner()?.get_events(
                stellar_rpc_client::EventStart::Ledger(start_ledger),
                Some(stellar_rpc_client::EventType::Contract),
                contract_ids,
                &[] as &[stellar_rpc_client::TopicFilter],
                Some(100),
            ),
        )
    }

    /// Contract events of ledgers `start..end` (end exclusive) for the given `C…` contract ids,
    /// oldest first, at most `limit` (the page holds the range's oldest events when it is full).
    pub fn get_events_between(
        &self,
        start: u32,
        end: u32,
        contract_ids: &[String],
        limit: usize,
    ) -> Result<GetEventsResponse, RpcError> {
        // stellar-rpc's endLedger is exclusive.
        let range = stellar_rpc_client::EventStart::ledger_range(start, end).map_err(|detail| {
            RpcError::Protocol {
                url: self.shown.clone(),
                method: "getEvents".into(),
                detail,
            }
        })?;
        self.run(
            "getEvents",
            self.inner()?.get_events(
                range,
                Some(stellar_rpc_client::EventType::Contract),
                contract_ids,
                &[] as &[stellar_rpc_client::TopicFilter],
                Some(limit),
            ),
        )
    }

    /// `sendTransaction`, every status returned as sent (no polling, no interpretation).
    pub fn send_transaction(
        &self,
        envelope: &TransactionEnvelope,
    ) -> Result<SendResponse, RpcError> {
        let xdr = envelope
            .to_xdr_base64(Limits::none())
            .expect("in-memory XDR values encode");
        let r = self.call("sendTransaction", serde_json::json!({"transaction": xdr}))?;
        let status = text(&r["status"]).ok_or_else(|| RpcError::Protocol {
            url: self.shown.clone(),
            method: "sendTransaction".into(),
            detail: "no status".into(),
        })?;
        Ok(SendResponse {
            status,
            hash: text(&r["hash"]).unwrap_or_default(),
            error_result_xdr: text(&r["errorResultXdr"]),
        })
    }

    /// `getTransaction` for a hex hash, `NOT_FOUND` included.
    pub fn get_transaction(&self, hash: &str) -> Result<TransactionStatus, RpcError> {
        let r = self.call("getTransaction", serde_json::json!({"hash": hash}))?;
        let status = text(&r["status"]).ok_or_else(|| RpcError::Protocol {
            url: self.shown.clone(),
            method: "getTransaction".into(),
            detail: "no status".into(),
        })?;
        Ok(TransactionStatus {
            status,
            ledger: number(&r["ledger"]).and_then(|l| u32::try_from(l).ok()),
            created_at: number(&r["createdAt"]),
            latest_ledger_close_time: number(&r["latestLedgerCloseTime"]),
            result_xdr: text(&r["resultXdr"]),
            result_meta_xdr: text(&r["resultMetaXdr"]),
        })
    }
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        cur = s.source();
    }
    parts.join(": ")
}

/// True when the chain shows the connection was never made (refused, unresolvable, unreachable): the
/// request was certainly not sent.
fn is_connect_failure(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::AddrNotAvailable
                    | std::io::ErrorKind::HostUnreachable
                    | std::io::ErrorKind::NetworkUnreachable
            ) {
                return true;
            }
        }
        // hyper-util's connector error displays as "client error (Connect)".
        if err.to_string().contains("(Connect)") {
            return true;
        }
        cur = err.source();
    }
    false
}
