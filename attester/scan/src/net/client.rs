//! GET with the fetch policy: timeouts, a body cap, manual redirects bounded in count and namespace.
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE, HOST, LOCATION, USER_AGENT};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use url::Url;

use crate::net::connect::{ConnectError, Connector, ConnectorConfig};
use crate::net::mapping::Mappings;
use crate::net::policy::{canonical_host, same_host_or_subdomain};

/// User-Agent sent on every request.
pub const USER_AGENT_VALUE: &str = concat!(
    "assay/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/assay-dev/assay)"
);

/// Largest body read from any source: 1 MiB. SEP-1 caps stellar.toml at 100 KB and SEP-42 lists at
/// 200 KB; the single, larger cap keeps a slightly oversized but real document readable while
/// still bounding memory against a hostile host.
pub const BODY_CAP: usize = 1024 * 1024;

/// Most redirects followed for an attacker-influenced fetch (SEP-1 and linked documents).
pub const MAX_REDIRECTS: usize = 5;

/// Network settings for a run.
#[derive(Clone, Debug)]
pub struct NetConfig {
    pub mappings: Mappings,
    /// Extra trusted roots (`--cacert`), DER.
    pub extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    pub connect_timeout: Duration,
    /// Bound on one whole fetch, redirects and body included.
    pub request_timeout: Duration,
    /// Simulated DNS answers (tests only): unlike `mappings`, these are subject to the SSRF policy.
    pub dns_answers: HashMap<String, Vec<IpAddr>>,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            mappings: Mappings::default(),
            extra_roots: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(15),
            dns_answers: HashMap::new(),
        }
    }
}

/// How a fetch failed. `category()` is the reproducible text for evidence; `detail` the raw text for reasoning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailureKind {
    Dns,
    ConnectionRefused,
    Tls,
    Timeout,
    Status(u16),
    /// Refused by policy before or instead of reading; the string is a reproducible reason.
    Refused(String),
    /// The redirect chain exceeded `MAX_REDIRECTS`.
    TooManyRedirects,
    TooLarge,
    Unknown,
}

/// A failed fetch: what went wrong, where, and the raw text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{url}: {detail}")]
pub struct FetchError {
    pub kind: FailureKind,
    /// The URL being fetched when it failed (the last hop of a redirect chain).
    pub url: String,
    pub detail: String,
}

/// How redirects are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectPolicy {
    /// A redirect is an answer like any other non-200 status (operator-chosen APIs do not redirect).
    None,
    /// Up to `MAX_REDIRECTS` hops, each to the requested host or a subdomain of it, HTTPS only, no loops.
    SameHostOrSubdomain,
}

/// Options for one fetch.
#[derive(Clone, Copy, Debug)]
pub struct FetchOptions {
    /// Apply the SSRF policy (anything derived from `home_domain` or a document's links).
    pub guarded: bool,
    pub https_only: bool,
    pub redirects: RedirectPolicy,
    pub accept: &'static str,
}

/// A completed HTTP exchange (any status).
#[derive(Clone, Debug)]
pub struct Fetched {
    /// Where the body was read from (after redirects).
    pub url: String,
    /// What was asked for.
    pub requested_url: String,
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub retrieved_at: SystemTime,
}

type HyperClient = Client<Connector, Full<Bytes>>;

/// The run's HTTP client: one pool for operator-chosen endpoints, one guarded by the SSRF policy.
#[derive(Clone)]
pub struct HttpClient {
    trusted: HyperClient,
    guarded: HyperClient,
    request_timeout: Duration,
}

/// Why the HTTP client could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// An extra root certificate (`--cacert`) that rustls does not accept.
    #[error("extra root certificate rejected: {0}")]
    ExtraRoot(String),
    /// The TLS provider offers no protocol version this client allows.
    #[error("{0}")]
    Tls(String),
}

fn tls_config(
    extra_roots: &[rustls::pki_types::CertificateDer<'static>],
) -> Result<rustls::ClientConfig, ClientError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for root in extra_roots {
        roots
            .add(root.clone())
            .map_err(|err| ClientError::ExtraRoot(err.to_string()))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| ClientError::Tls(err.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

impl HttpClient {
    /// Builds the client; fails only when an extra root is unusable.
    pub fn new(config: &NetConfig) -> Result<Self, ClientError> {
        let tls = Arc::new(tls_config(&config.extra_roots)?);
        let mappings = Arc::new(config.mappings.clone());
        let dns_answers = Arc::new(config.dns_answers.clone());
        let build = |guarded| {
            let connector = Connector::new(ConnectorConfig {
                mappings: mappings.clone(),
                tls: tls.clone(),
                connect_timeout: config.connect_timeout,
                guarded,
                dns_answers: dns_answers.clone(),
            });
            Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector)
        };
        Ok(HttpClient {
            trusted: build(false),
            guarded: build(true),
            request_timeout: config.request_timeout,
        })
    }

    /// GETs `url` under `opts`, bounded by the request timeout as a whole.
    pub async fn get(&self, url: &str, opts: FetchOptions) -> Result<Fetched, FetchError> {
        self.bounded(url, self.get_unbounded(url, opts)).await
    }

    /// POSTs a JSON `body` to `url` (a JSON-RPC call to an operator-chosen endpoint: never redirected,
    /// never guarded), bounded by the request timeout as a whole. Any status is an answer.
    pub async fn post_json(&self, url: &str, body: Vec<u8>) -> Result<Fetched, FetchError> {
        let exchange = async {
            let parsed = Url::parse(url).map_err(|err| FetchError {
                kind: FailureKind::Refused(format!("invalid URL: {err}")),
                url: url.to_string(),
                detail: format!("invalid URL: {err}"),
            })?;
            let opts = FetchOptions {
                guarded: false,
                https_only: false,
                redirects: RedirectPolicy::None,
                accept: "application/json",
            };
            self.exchange(&parsed, opts, Method::POST, Bytes::from(body))
                .await
        };
        self.bounded(url, exchange).await
    }

    async fn bounded(
        &self,
        url: &str,
        fetch: impl std::future::Future<Output = Result<Fetched, FetchError>>,
    ) -> Result<Fetched, FetchError> {
        match tokio::time::timeout(self.request_timeout, fetch).await {
            Ok(result) => result,
            Err(_) => Err(FetchError {
                kind: FailureKind::Timeout,
                url: url.to_string(),
                detail: format!(
                    "no complete answer within {} s",
                    self.request_timeout.as_secs_f64()
                ),
            }),
        }
    }

    async fn get_unbounded(
        &self,
        requested: &str,
        opts: FetchOptions,
    ) -> Result<Fetched, FetchError> {
        let refused = |url: &str, reason: String| FetchError {
            kind: FailureKind::Refused(reason.clone()),
            url: url.to_string(),
            detail: reason,
        };
        let first = Url::parse(requested)
            .map_err(|err| refused(requested, format!("invalid URL: {err}")))?;
        let requested_host = first.host_str().map(canonical_host).unwrap_or_default();
        let mut current = first;
        let mut visited: Vec<String> = Vec::new();
        loop {
            let here = current.to_string();
            if opts.https_only && current.scheme() != "https" {
                return Err(refused(&here, format!("not HTTPS: {}", current.scheme())));
            }
            if !matches!(current.scheme(), "http" | "https") {
                return Err(refused(
                    &here,
                    format!("unsupported scheme: {}", current.scheme()),
                ));
            }
            visited.push(here.clone());
            let response = self
                .exchange(&current, opts, Method::GET, Bytes::new())
                .await?;
            let status = response.status;
            let is_redirect = matches!(status, 301 | 302 | 303 | 307 | 308);
            if !is_redirect || opts.redirects == RedirectPolicy::None {
                return Ok(Fetched {
                    url: here,
                    requested_url: requested.to_string(),
                    ..response
                });
            }
            let location = response
                .headers
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| refused(&here, format!("redirect ({status}) without a Location")))?;
            let next = current
                .join(location)
                .map_err(|err| refused(&here, format!("redirect to an invalid URL: {err}")))?;
            let next_host = next.host_str().map(canonical_host).unwrap_or_default();
            if visited.len() > MAX_REDIRECTS {
                return Err(FetchError {
                    kind: FailureKind::TooManyRedirects,
                    url: next.to_string(),
                    detail: format!(
                        "more than {MAX_REDIRECTS} redirects (stopped before {next_host})"
                    ),
                });
            }
            if !same_host_or_subdomain(&requested_host, &next_host) {
                return Err(refused(
                    next.as_ref(),
                    format!("redirect from {requested_host} to {next_host}, which is neither {requested_host} nor a subdomain of it"),
                ));
            }
            if visited.contains(&next.to_string()) {
                return Err(refused(
                    next.as_ref(),
                    format!("redirect loop at {next_host}"),
                ));
            }
            current = next;
        }
    }

    /// One request/response; the body is read up to the cap.
    async fn exchange(
        &self,
        url: &Url,
        opts: FetchOptions,
        method: Method,
        body: Bytes,
    ) -> Result<Fetched, FetchError> {
        let here = url.to_string();
        let fail = |kind: FailureKind, detail: String| FetchError {
            kind,
            url: here.clone(),
            detail,
        };
        let host = url.host_str().unwrap_or_default();
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        let mut request = Request::builder().method(method.clone()).uri(url.as_str());
        if method == Method::POST {
            request = request.header(CONTENT_TYPE, "application/json");
        }
        let request = request
            .header(
                HOST,
                HeaderValue::from_str(&authority).map_err(|e| {
                    fail(
                        FailureKind::Refused(format!("invalid host: {e}")),
                        e.to_string(),
                    )
                })?,
            )
            .header(USER_AGENT, USER_AGENT_VALUE)
            .header(ACCEPT, opts.accept)
            .body(Full::new(body))
            .map_err(|err| {
                fail(
                    FailureKind::Refused(format!("invalid URL: {err}")),
                    err.to_string(),
                )
            })?;
        let client = if opts.guarded {
            &self.guarded
        } else {
            &self.trusted
        };
        let response = client
            .request(request)
            .await
            .map_err(|err| classify(&err, &here))?;
        let status = response.status();
        let headers = response.headers().clone();
        let declared = headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > BODY_CAP as u64) {
            return Err(fail(
                FailureKind::TooLarge,
                format!(
                    "declared body of {} bytes exceeds the {BODY_CAP}-byte cap",
                    declared.unwrap_or(0)
                ),
            ));
        }
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|err| classify(&err, &here))?;
            if let Some(data) = frame.data_ref() {
                if bytes.len() + data.len() > BODY_CAP {
                    return Err(fail(
                        FailureKind::TooLarge,
                        format!("body exceeds the {BODY_CAP}-byte cap"),
                    ));
                }
                bytes.extend_from_slice(data);
            }
        }
        Ok(Fetched {
            url: here.clone(),
            requested_url: here.clone(),
            status: status_code(status),
            headers,
            body: bytes,
            retrieved_at: SystemTime::now(),
        })
    }
}

fn status_code(status: StatusCode) -> u16 {
    status.as_u16()
}

/// Maps an error chain from hyper/the connector to a failure kind.
fn classify(err: &(dyn std::error::Error + 'static), url: &str) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    let mut kind = FailureKind::Unknown;
    let mut detail = err.to_string();
    while let Some(current) = source {
        if let Some(connect) = current.downcast_ref::<ConnectError>() {
            kind = match connect {
                ConnectError::Dns { .. } => FailureKind::Dns,
                ConnectError::Refused { host, reason } => {
                    FailureKind::Refused(format!("{host} is a {reason}"))
                }
                ConnectError::ConnectionRefused { .. } => FailureKind::ConnectionRefused,
                ConnectError::Timeout { .. } => FailureKind::Timeout,
                ConnectError::Tls { .. } => FailureKind::Tls,
                ConnectError::Other { .. } => FailureKind::Unknown,
            };
            detail = connect.to_string();
            break;
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            kind = match io.kind() {
                std::io::ErrorKind::TimedOut => FailureKind::Timeout,
                std::io::ErrorKind::ConnectionRefused => FailureKind::ConnectionRefused,
                _ if io
                    .get_ref()
                    .is_some_and(|inner| inner.is::<rustls::Error>()) =>
                {
                    FailureKind::Tls
                }
                _ => kind,
            };
            detail = io.to_string();
        }
        source = current.source();
    }
    FetchError {
        kind,
        url: url.to_string(),
        detail,
    }
}
