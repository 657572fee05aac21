//! Local replay servers for integration tests and the benchmark (feature `test-support`).
//!
//! One HTTPS listener (a certificate for every named host, signed by a CA generated here), one plain
//! HTTP listener, and one HTTPS listener whose certificate chains to a *different*, untrusted CA (for
//! TLS failures), all bound to 127.0.0.1. Requests are routed by `Host` and path, so real host names
//! (horizon.stellar.org, api.stellar.expert, home domains) are reached through `--connect-to` and
//! `--cacert`, and the evidence keeps the real URLs. Faults are injected per route.
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

pub mod postgres;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A complete response.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Accept the request and never answer (a timeout for the client).
    Hang,
}

impl Reply {
    /// 200 with a JSON body.
    pub fn json(body: impl Into<Vec<u8>>) -> Reply {
        Reply::status_with(200, &[("content-type", "application/json")], body)
    }

    /// 200 with a text body.
    pub fn text(body: impl Into<Vec<u8>>) -> Reply {
        Reply::status_with(200, &[("content-type", "text/plain")], body)
    }

    /// A bare status with a short body.
    pub fn status(status: u16) -> Reply {
        Reply::status_with(status, &[], format!("status {status}"))
    }

    /// A status with headers and a body.
    pub fn status_with(status: u16, headers: &[(&str, &str)], body: impl Into<Vec<u8>>) -> Reply {
        Reply::Respond {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.into(),
        }
    }

    /// Horizon's root document for the network `passphrase` (what the scan reads to confirm the network).
    pub fn horizon_root(passphrase: &str) -> Reply {
        Reply::json(
            serde_json::json!({
                "horizon_version": "replay",
                "network_passphrase": passphrase,
            })
            .to_string(),
        )
    }

    /// A redirect to `location`.
    pub fn redirect(location: &str) -> Reply {
        Reply::status_with(301, &[("location", location)], Vec::new())
    }
}

/// A route's scripted answers: served in order, the last one repeating.
#[derive(Default)]
struct Route {
    replies: Vec<Reply>,
    served: usize,
}

#[derive(Default)]
struct State {
    routes: HashMap<(String, String), Route>,
    hits: Vec<(String, String)>,
    latency: Duration,
    /// Per-host delay, added to `latency`.
    host_latency: HashMap<String, Duration>,
}

/// The running servers. Dropping this leaves the listener tasks running until the runtime ends.
#[derive(Clone)]
pub struct ReplayServer {
    state: Arc<Mutex<State>>,
    /// HTTPS listener trusted through `ca_pem_path`.
    pub https: SocketAddr,
    /// Plain HTTP listener.
    pub http: SocketAddr,
    /// HTTPS listener whose certificate chains to an untrusted CA.
    pub bad_tls: SocketAddr,
    /// PEM of the CA to pass as `--cacert`.
    pub ca_pem: String,
}

fn generate_ca(name: &str) -> (CertificateParams, KeyPair, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().expect("CA key");
    let cert = params.self_signed(&key).expect("CA certificate");
    (params, key, cert.pem())
}

fn leaf(hosts: &[String], ca_params: CertificateParams, ca_key: &KeyPair) -> rustls::ServerConfig {
    let issuer = Issuer::new(ca_params, ca_key);
    let mut params = CertificateParams::new(hosts.to_vec()).expect("leaf params");
    params
        .distinguished_name
        .push(DnType::CommonName, "assay replay");
    let key = KeyPair::generate().expect("leaf key");
    let cert = params.signed_by(&key, &issuer).expect("leaf certificate");
    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("server certificate")
}

impl ReplayServer {
    /// Starts the three listeners on 127.0.0.1 with a certificate naming `hosts` (wildcards like
    /// `*.example.test` allowed). Must be called inside a tokio runtime.
    pub async fn start(hosts: &[&str]) -> ReplayServer {
        let hosts: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
        let (ca_params, ca_key, ca_pem) = generate_ca("assay test CA");
        let good = leaf(&hosts, ca_params, &ca_key);
        let (rogue_params, rogue_key, _) = generate_ca("untrusted CA");
        let rogue = leaf(&hosts, rogue_params, &rogue_key);
        let state = Arc::new(Mutex::new(State::default()));
        let https = listen(state.clone(), Some(TlsAcceptor::from(Arc::new(good)))).await;
        let http = listen(state.clone(), None).await;
        let bad_tls = listen(state.clone(), Some(TlsAcceptor::from(Arc::new(rogue)))).await;
        ReplayServer {
            state,
            https,
            http,
            bad_tls,
            ca_pem,
        }
    }

    /// Scripts `host` + `path_and_query` to answer `replies` in order (the last repeats).
    pub fn route(&self, host: &str, path_and_query: &str, replies: Vec<Reply>) {
        let mut state = self.state.lock().expect("state");
        state.routes.insert(
            (host.to_ascii_lowercase(), path_and_query.to_string()),
            Route { replies, served: 0 },
        );
    }

    /// Delay added before every answer.
    pub fn set_latency(&self, latency: Duration) {
        self.state.lock().expect("state").latency = latency;
    }

    /// Delay added before every answer from `host` (on top of [`ReplayServer::set_latency`]): a slow source.
    pub fn set_host_latency(&self, host: &str, latency: Duration) {
        self.state
            .lock()
            .expect("state")
            .host_latency
            .insert(host.to_ascii_lowercase(), latency);
    }

    /// Every request seen so far, as (host, path and query).
    pub fn hits(&self) -> Vec<(String, String)> {
        self.state.lock().expect("state").hits.clone()
    }

    /// How many requests reached `host` + `path_and_query`.
    pub fn hit_count(&self, host: &str, path_and_query: &str) -> usize {
        self.hits()
            .iter()
            .filter(|(h, p)| h == host && p == path_and_query)
            .count()
    }

    /// Forgets the recorded hits.
    pub fn clear_hits(&self) {
        self.state.lock().expect("state").hits.clear();
    }

    /// Writes the CA certificate to `dir/ca.pem` and returns the path, for `--cacert`.
    pub fn write_ca(&self, dir: &Path) -> PathBuf {
        let path = dir.join("ca.pem");
        std::fs::write(&path, &self.ca_pem).expect("write CA");
        path
    }

    /// `--connect-to` value sending `host:443` to the trusted HTTPS listener.
    pub fn connect_https(&self, host: &str) -> String {
        format!("{host}:443:127.0.0.1:{}", self.https.port())
    }

    /// `--connect-to` value sending `host:443` to the listener with an untrusted certificate.
    pub fn connect_bad_tls(&self, host: &str) -> String {
        format!("{host}:443:127.0.0.1:{}", self.bad_tls.port())
    }

    /// `--connect-to` value sending `host:80` to the plain HTTP listener.
    pub fn connect_http(&self, host: &str) -> String {
        format!("{host}:80:127.0.0.1:{}", self.http.port())
    }
}

/// A port on 127.0.0.1 with nothing listening (for connection-refused).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

async fn listen(state: Arc<Mutex<State>>, tls: Option<TlsAcceptor>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let state = state.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| answer(state.clone(), req));
                let builder = hyper::server::conn::http1::Builder::new();
                match tls {
                    Some(acceptor) => {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            let _ = builder
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        }
                    }
                    None => {
                        let _ = builder
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                }
            });
        }
    });
    addr
}

async fn answer(
    state: Arc<Mutex<State>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let host = req
        .headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, p)| {
        if p.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            host
        }
    });
    let host = host.to_ascii_lowercase();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".to_string());
    let (reply, latency) = {
        let mut state = state.lock().expect("state");
        state.hits.push((host.clone(), path.clone()));
        let latency = state.latency + state.host_latency.get(&host).copied().unwrap_or_default();
        let reply = match state.routes.get_mut(&(host, path)) {
            Some(route) if !route.replies.is_empty() => {
                let i = route.served.min(route.replies.len() - 1);
                route.served += 1;
                route.replies[i].clone()
            }
            _ => Reply::status_with(
                404,
                &[("content-type", "text/plain")],
                "API endpoint was not found",
            ),
        };
        (reply, latency)
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    match reply {
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(Response::new(Full::new(Bytes::new())))
        }
        Reply::Respond {
            status,
            headers,
            body,
        } => {
            let mut response = Response::new(Full::new(Bytes::from(body)));
            *response.status_mut() = hyper::StatusCode::from_u16(status)
                .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    hyper::header::HeaderName::from_bytes(name.as_bytes()),
                    hyper::header::HeaderValue::from_str(&value),
                ) {
                    response.headers_mut().append(name, value);
                }
            }
            Ok(response)
        }
    }
}
