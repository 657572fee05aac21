//! The connector: name lookup with operator mappings, the SSRF policy at connect time, TCP, TLS.
//!
//! Everything that decides *where* bytes go lives here, below hyper, so a redirect, a pooled
//! connection and a first request all pass the same checks.
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::net::mapping::{Mapped, Mappings};
use crate::net::policy::{canonical_host, never_resolves, refused_address, refused_name};

/// Why a connection was not made. Kept structured so the fetch layer can map it to a category.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("name lookup failed for {host}: {detail}")]
    Dns { host: String, detail: String },
    #[error("refused: {host} is a {reason}")]
    Refused { host: String, reason: String },
    #[error("connection refused by {addr}")]
    ConnectionRefused { addr: SocketAddr },
    #[error("connect to {host} timed out")]
    Timeout { host: String },
    #[error("TLS handshake with {host} failed: {detail}")]
    Tls { host: String, detail: String },
    #[error("connect to {host} failed: {detail}")]
    Other { host: String, detail: String },
}

/// Connection settings shared by every fetch of a run.
#[derive(Clone)]
pub struct ConnectorConfig {
    pub mappings: Arc<Mappings>,
    pub tls: Arc<rustls::ClientConfig>,
    pub connect_timeout: Duration,
    /// Apply the SSRF policy to names and addresses the operator did not map.
    pub guarded: bool,
    /// Answers given *as if by DNS* (subject to the SSRF policy, unlike `--resolve`); tests use it to
    /// simulate a hostile DNS answer. Names not in it go to the system resolver.
    pub dns_answers: Arc<HashMap<String, Vec<IpAddr>>>,
}

/// A hyper-util connector implementing the policy above.
#[derive(Clone)]
pub struct Connector {
    config: ConnectorConfig,
}

impl Connector {
    pub fn new(config: ConnectorConfig) -> Self {
        Connector { config }
    }
}

/// Resolves `host:port` to the socket addresses to try, applying mappings and the SSRF policy.
pub async fn destinations(
    config: &ConnectorConfig,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, ConnectError> {
    let host = canonical_host(host);
    match config.mappings.lookup(&host, port) {
        Some(Mapped::Addrs(addrs)) => {
            return Ok(addrs
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect())
        }
        Some(Mapped::ConnectTo(target, target_port)) => {
            if let Ok(ip) = target.parse::<IpAddr>() {
                return Ok(vec![SocketAddr::new(ip, target_port)]);
            }
            return lookup(config, &target, target_port).await;
        }
        None => {}
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        if config.guarded {
            if let Some(reason) = refused_address(ip) {
                return Err(ConnectError::Refused {
                    host,
                    reason: reason.to_string(),
                });
            }
        }
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    if config.guarded {
        if let Some(reason) = refused_name(&host) {
            return Err(ConnectError::Refused {
                host,
                reason: reason.to_string(),
            });
        }
    }
    let addrs = lookup(config, &host, port).await?;
    if !config.guarded {
        return Ok(addrs);
    }
    // Drop every non-public answer; refuse when nothing public is left (a DNS answer pointing
    // at 127.0.0.1 or 169.254.169.254 is the classic rebinding attack).
    let first_reason = addrs.iter().find_map(|a| refused_address(a.ip()));
    let public: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| refused_address(a.ip()).is_none())
        .collect();
    match (public.is_empty(), first_reason) {
        (true, Some(reason)) => Err(ConnectError::Refused {
            host,
            reason: format!("name resolving to a {reason}"),
        }),
        _ => Ok(public),
    }
}

async fn lookup(
    config: &ConnectorConfig,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, ConnectError> {
    if let Some(ips) = config.dns_answers.get(host) {
        return Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect());
    }
    if never_resolves(host) {
        return Err(ConnectError::Dns {
            host: host.to_string(),
            detail: "a name under the special-use .invalid domain (RFC 6761) never resolves"
                .to_string(),
        });
    }
    match tokio::net::lookup_host((host, port)).await {
        Ok(addrs) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            if addrs.is_empty() {
                Err(ConnectError::Dns {
                    host: host.to_string(),
                    detail: "no addresses".to_string(),
                })
            } else {
                Ok(addrs)
            }
        }
        Err(err) => Err(ConnectError::Dns {
            host: host.to_string(),
            detail: err.to_string(),
        }),
    }
}

async fn connect_tcp(
    config: &ConnectorConfig,
    host: &str,
    addrs: &[SocketAddr],
) -> Result<TcpStream, ConnectError> {
    let mut last = None;
    for addr in addrs {
        match tokio::time::timeout(config.connect_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Ok(Err(err)) if err.kind() == io::ErrorKind::ConnectionRefused => {
                last = Some(ConnectError::ConnectionRefused { addr: *addr })
            }
            Ok(Err(err)) => {
                last = Some(ConnectError::Other {
                    host: host.to_string(),
                    detail: err.to_string(),
                })
            }
            Err(_) => {
                last = Some(ConnectError::Timeout {
                    host: host.to_string(),
                })
            }
        }
    }
    Err(last.unwrap_or_else(|| ConnectError::Other {
        host: host.to_string(),
        detail: "no address to connect to".to_string(),
    }))
}

async fn connect(config: ConnectorConfig, uri: Uri) -> Result<Conn, ConnectError> {
    let host = canonical_host(uri.host().unwrap_or_default());
    let https = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let addrs = destinations(&config, &host, port).await?;
    let tcp = connect_tcp(&config, &host, &addrs).await?;
    if !https {
        return Ok(Conn(TokioIo::new(MaybeTls::Plain(tcp))));
    }
    let name = ServerName::try_from(host.clone()).map_err(|err| ConnectError::Tls {
        host: host.clone(),
        detail: err.to_string(),
    })?;
    let handshake = TlsConnector::from(config.tls.clone()).connect(name, tcp);
    match tokio::time::timeout(config.connect_timeout, handshake).await {
        Ok(Ok(tls)) => Ok(Conn(TokioIo::new(MaybeTls::Tls(Box::new(tls))))),
        Ok(Err(err)) => Err(ConnectError::Tls {
            host,
            detail: err.to_string(),
        }),
        Err(_) => Err(ConnectError::Timeout { host }),
    }
}

impl tower_service::Service<Uri> for Connector {
    type Response = Conn;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Conn, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        Box::pin(connect(self.config.clone(), uri))
    }
}

/// A plain or TLS stream.
pub enum MaybeTls {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for MaybeTls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_read(cx, buf),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for MaybeTls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_write(cx, buf),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_flush(cx),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_shutdown(cx),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The connection hyper drives.
pub struct Conn(TokioIo<MaybeTls>);

impl Connection for Conn {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl hyper::rt::Read for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}
