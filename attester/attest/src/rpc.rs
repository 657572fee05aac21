//! A small blocking stellar-rpc JSON-RPC 2.0 client over HTTP/1.1 (rustls for https). Blocking keeps the
//! submit path easy to reason about: one request at a time, every outcome handled where it happens.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

/// Why an RPC call produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcError {
    /// Could not connect, or the connection broke: the server may or may not have acted.
    #[error("stellar-rpc at {url} unreachable: {detail}")]
    Transport {
        /// Endpoint.
        url: String,
        /// What failed.
        detail: String,
    },
    /// A non-200 status or a body that is not JSON-RPC.
    #[error("stellar-rpc at {url} answered badly: {detail}")]
    Protocol {
        /// Endpoint.
        url: String,
        /// What was wrong.
        detail: String,
    },
    /// A JSON-RPC error object.
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
    /// True when the request may have reached the server (its effect is unknown).
    pub fn maybe_delivered(&self) -> bool {
        matches!(self, RpcError::Transport { detail, .. } if !detail.starts_with("connect"))
    }
}

/// A stellar-rpc endpoint.
#[derive(Clone)]
pub struct RpcClient {
    url: url::Url,
    shown: String,
    timeout: Duration,
    tls: Arc<rustls::ClientConfig>,
    next_id: Arc<AtomicU64>,
}

impl std::fmt::Debug for RpcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RpcClient({})", self.shown)
    }
}

fn tls_config() -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

impl RpcClient {
    /// A client for `url` (http or https).
    pub fn new(url: &str) -> Result<RpcClient, RpcError> {
        let parsed = url::Url::parse(url).map_err(|e| RpcError::Protocol {
            url: url.into(),
            detail: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(RpcError::Protocol {
                url: url.into(),
                detail: "expected an http(s) URL".into(),
            });
        }
        // Never show credentials that may be embedded in a provider URL.
        let mut shown = parsed.clone();
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        shown.set_query(None);
        Ok(RpcClient {
            url: parsed,
            shown: shown.to_string(),
            timeout: Duration::from_secs(30),
            tls: tls_config(),
            next_id: Arc::new(AtomicU64::new(1)),
        })
    }

    /// Sets the per-request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> RpcClient {
        self.timeout = timeout;
        self
    }

    /// The endpoint, without credentials.
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// Calls `method` with named `params` and returns `result`.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let (status, text) = self.post(&body)?;
        let protocol = |detail: String| RpcError::Protocol {
            url: self.shown.clone(),
            detail,
        };
        if status != 200 {
            let snippet: String = text.chars().take(200).collect();
            return Err(protocol(format!("HTTP {status}: {snippet}")));
        }
        let v: Value =
            serde_json::from_str(&text).map_err(|e| protocol(format!("not JSON: {e}")))?;
        if let Some(err) = v.get("error") {
            return Err(RpcError::Server {
                method: method.into(),
                code: err["code"].as_i64().unwrap_or(0),
                message: err["message"]
                    .as_str()
                    .unwrap_or("(no message)")
                    .to_string(),
            });
        }
        v.get("result")
            .cloned()
            .ok_or_else(|| protocol("no result".into()))
    }

    fn post(&self, body: &str) -> Result<(u16, String), RpcError> {
        let host = self.url.host_str().unwrap_or_default().to_string();
        let port = self.url.port_or_known_default().unwrap_or(80);
        let transport = |detail: String| RpcError::Transport {
            url: self.shown.clone(),
            detail,
        };
        let addr = (host.trim_start_matches('[').trim_end_matches(']'), port)
            .to_socket_addrs()
            .map_err(|e| transport(format!("connect: resolve {host}: {e}")))?
            .next()
            .ok_or_else(|| transport(format!("connect: {host} has no address")))?;
        let tcp = TcpStream::connect_timeout(&addr, self.timeout.min(Duration::from_secs(10)))
            .map_err(|e| transport(format!("connect: {e}")))?;
        tcp.set_read_timeout(Some(self.timeout)).ok();
        tcp.set_write_timeout(Some(self.timeout)).ok();
        let mut path = self.url.path().to_string();
        if let Some(q) = self.url.query() {
            path.push('?');
            path.push_str(q);
        }
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: assay-attest/{}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            env!("CARGO_PKG_VERSION"),
            body.len()
        );
        let raw = if self.url.scheme() == "https" {
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|e| transport(format!("connect: bad TLS name {host}: {e}")))?;
            let conn = rustls::ClientConnection::new(self.tls.clone(), name)
                .map_err(|e| transport(format!("connect: tls: {e}")))?;
            let mut stream = rustls::StreamOwned::new(conn, tcp);
            exchange(&mut stream, &request).map_err(|e| transport(format!("exchange: {e}")))?
        } else {
            let mut stream = tcp;
            exchange(&mut stream, &request).map_err(|e| transport(format!("exchange: {e}")))?
        };
        parse_response(&raw).map_err(|detail| RpcError::Protocol {
            url: self.shown.clone(),
            detail,
        })
    }
}

fn exchange<S: Read + Write>(stream: &mut S, request: &str) -> std::io::Result<Vec<u8>> {
    stream.write_all(request.as_bytes())?;
    stream.flush()?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buf[..n]);
                if raw.len() > 64 * 1024 * 1024 {
                    return Err(std::io::Error::other("response larger than 64 MiB"));
                }
            }
            // Servers that close TLS without close_notify: keep what arrived.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => break,
            Err(e) => return Err(e),
        }
    }
    if raw.is_empty() {
        return Err(std::io::Error::other("connection closed with no response"));
    }
    Ok(raw)
}

fn parse_response(raw: &[u8]) -> Result<(u16, String), String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("truncated HTTP response")?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let body = &raw[split + 4..];
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {:?}", head.lines().next().unwrap_or("")))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok((status, String::from_utf8_lossy(&body).to_string()))
}

fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("truncated chunk")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&body[..size]);
        body = body.get(size + 2..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_chunked() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse_response(plain).unwrap(), (200, "{}".into()));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4\r\n\":1}\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (200, "{\"a\":1}".into()));
        assert!(parse_response(b"garbage").is_err());
    }

    #[test]
    fn credentials_never_shown() {
        let c = RpcClient::new("https://user:pw@rpc.example/x?apikey=k").unwrap();
        assert!(
            !c.url().contains("pw") && !c.url().contains("apikey"),
            "{}",
            c.url()
        );
    }

    #[test]
    fn down_server_is_a_connect_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = RpcClient::new(&format!("http://127.0.0.1:{port}")).unwrap();
        let err = c.call("getHealth", json!({})).unwrap_err();
        assert!(
            matches!(err, RpcError::Transport { .. }) && !err.maybe_delivered(),
            "{err}"
        );
    }
}
