//! The one HTTP/1.1 server loop: `assay serve` and `watch`'s `/health` and `/metrics` both run on it, so both
//! hold under the same load and bind under the same loopback rule.
//!
//! What keeps it answering when clients misbehave:
//! - a request head must arrive complete within [`HEADER_READ_TIMEOUT`], counted from the connection's
//!   start and, on a kept-alive connection, from its previous answer (so it is the keep-alive timeout too);
//! - at most `max_connections` connections are open; when a new one arrives at the cap, the oldest connection
//!   that is not being answered (a half-sent head, an idle keep-alive) is closed to make room, so clients
//!   that never finish their request cannot shut out the ones that do;
//! - a failed `accept` (out of descriptors, most often) backs off, doubling from 10 ms to 1 s, and a burst of
//!   failures is logged once when it starts and once when it ends, never once per failure.
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::Notify;

/// How long a client has to send a complete request head, from connecting or from its previous answer.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections open at once when none is asked for: well under a 256-descriptor limit, with room left for
/// the store's files and the runtime's own descriptors.
pub const DEFAULT_MAX_CONNECTIONS: usize = 128;
/// The first pause after a failed `accept`, and the longest.
const ACCEPT_BACKOFF_FIRST: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// One answer, as a handler builds it; the server adds the common headers and drops the body of a HEAD.
pub(crate) type Answer = hyper::Response<String>;

/// Answers one request from its method, path and query. It runs on a blocking thread (handlers read SQLite
/// or take a lock), never on the workers that keep the connections moving.
pub(crate) type Handler = Arc<dyn Fn(&str, &str, &str) -> Answer + Send + Sync>;

/// The listen rule `serve` and `watch`'s `metrics_addr` share: loopback only, unless the operator asks for
/// more with `allow_remote` (which `watch` never does). The error names `flag` and the fix.
pub(crate) fn check_listen(
    flag: &str,
    addr: SocketAddr,
    allow_remote: Option<&str>,
) -> Result<(), NotLoopback> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    Err(NotLoopback {
        flag: flag.to_string(),
        addr,
        allow_remote: allow_remote.map(str::to_string),
    })
}

/// A listen address that is not loopback, without the flag that would allow it: the flag or key that set
/// it, the address, and the flag that allows it when there is one.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {addr} is not a loopback address{}", fix(.allow_remote.as_deref()))]
pub(crate) struct NotLoopback {
    flag: String,
    addr: SocketAddr,
    allow_remote: Option<String>,
}

/// The fix [`NotLoopback`] names: the flag that allows a remote address, or a loopback one.
fn fix(allow_remote: Option<&str>) -> String {
    match allow_remote {
        Some(allow) => format!(
            "; pass {allow} to serve it (behind a reverse proxy with TLS), or listen on 127.0.0.1"
        ),
        None => ": listen on 127.0.0.1".to_string(),
    }
}

/// The connections open now, oldest first, and which of them are being answered.
#[derive(Default)]
struct Connections {
    open: Mutex<BTreeMap<u64, Arc<Connection>>>,
    /// Raised when a connection closes, so an accept waiting at the cap looks again.
    closed: Notify,
}

struct Connection {
    /// Requests of this connection being answered now; it is never closed to make room while above 0.
    answering: AtomicUsize,
    /// Raised to close the connection to make room for a new one.
    evict: Notify,
}

impl Connections {
    /// Waits until a new connection fits under `max`, closing the oldest connection not being answered
    /// when the table is full.
    async fn make_room(&self, max: usize) {
        loop {
            let notified = self.closed.notified();
            {
                let mut open = self.open.lock().expect("connection table");
                if open.len() < max {
                    return;
                }
                let idle = open
                    .iter()
                    .find(|(_, c)| c.answering.load(Ordering::SeqCst) == 0)
                    .map(|(id, _)| *id);
                if let Some(id) = idle {
                    if let Some(c) = open.remove(&id) {
                        c.evict.notify_one();
                    }
                    return;
                }
            }
            // Every connection is being answered: the next to close frees a place.
            notified.await;
        }
    }

    fn add(&self, id: u64) -> Arc<Connection> {
        let c = Arc::new(Connection {
            answering: AtomicUsize::new(0),
            evict: Notify::new(),
        });
        self.open
            .lock()
            .expect("connection table")
            .insert(id, c.clone());
        c
    }

    fn remove(&self, id: u64) {
        self.open.lock().expect("connection table").remove(&id);
        self.closed.notify_waiters();
    }
}

/// Counts a request as being answered while it lives.
struct Answering(Arc<Connection>);

impl Answering {
    fn start(c: &Arc<Connection>) -> Answering {
        c.answering.fetch_add(1, Ordering::SeqCst);
        Answering(c.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Consecutive `accept` failures: logged when the burst starts and when it ends.
struct AcceptFailures {
    name: &'static str,
    count: u64,
    pause: Duration,
}

impl AcceptFailures {
    fn failed(&mut self, err: &std::io::Error) -> Duration {
        if self.count == 0 {
            eprintln!(
                "{}: accept failed: {err}; retrying with a growing pause (up to {} ms), logged again when accepting resumes",
                self.name,
                ACCEPT_BACKOFF_MAX.as_millis()
            );
            self.pause = ACCEPT_BACKOFF_FIRST;
        } else {
            self.pause = (self.pause * 2).min(ACCEPT_BACKOFF_MAX);
        }
        self.count += 1;
        self.pause
    }

    fn accepted(&mut self) {
        if self.count > 0 {
            eprintln!(
                "{}: accepting again after {} failed accept{}",
                self.name,
                self.count,
                if self.count == 1 { "" } else { "s" }
            );
            self.count = 0;
        }
    }
}

/// Serves `handler` on `listener` until `stop` completes. `name` prefixes the server's log lines.
pub(crate) async fn run(
    name: &'static str,
    listener: tokio::net::TcpListener,
    max_connections: usize,
    handler: Handler,
    stop: impl Future<Output = ()>,
) {
    let connections = Arc::new(Connections::default());
    let mut failures = AcceptFailures {
        name,
        count: 0,
        pause: ACCEPT_BACKOFF_FIRST,
    };
    tokio::pin!(stop);
    let mut next_id = 0u64;
    loop {
        tokio::select! {
            _ = connections.make_room(max_connections.max(1)) => {}
            _ = &mut stop => break,
        }
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    failures.accepted();
                    stream
                }
                Err(err) => {
                    let pause = failures.failed(&err);
                    tokio::select! {
                        _ = tokio::time::sleep(pause) => continue,
                        _ = &mut stop => break,
                    }
                }
            },
            _ = &mut stop => break,
        };
        let id = next_id;
        next_id += 1;
        let connection = connections.add(id);
        let table = connections.clone();
        let handler = handler.clone();
        tokio::spawn(async move {
            serve_connection(stream, &connection, handler).await;
            table.remove(id);
        });
    }
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    connection: &Arc<Connection>,
    handler: Handler,
) {
    let counted = connection.clone();
    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let answering = Answering::start(&counted);
        let handler = handler.clone();
        async move {
            let response = answer(handler, &req).await;
            drop(answering);
            Ok::<_, Infallible>(response)
        }
    });
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = conn => {}
        // Chosen only while no request of it is being answered: dropping it closes the socket.
        _ = connection.evict.notified() => {}
    }
}

/// Runs the handler off the async workers and adds the headers every answer carries.
async fn answer<B>(handler: Handler, req: &hyper::Request<B>) -> hyper::Response<Full<Bytes>> {
    let (method, path, query) = (
        req.method().as_str().to_string(),
        req.uri().path().to_string(),
        req.uri().query().unwrap_or("").to_string(),
    );
    let head = method == "HEAD";
    let answered = tokio::task::spawn_blocking(move || handler(&method, &path, &query)).await;
    let (mut parts, body) = match answered {
        Ok(answer) => answer.into_parts(),
        Err(_) => {
            let mut problem = hyper::Response::new(
                "{\"status\": 500, \"detail\": \"internal error while answering\"}\n".to_string(),
            );
            *problem.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
            problem.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/problem+json"),
            );
            problem.into_parts()
        }
    };
    for (name, value) in [
        ("cache-control", "no-store"),
        ("x-content-type-options", "nosniff"),
    ] {
        parts
            .headers
            .insert(name, hyper::header::HeaderValue::from_static(value));
    }
    let body = if head { String::new() } else { body };
    hyper::Response::from_parts(parts, Full::new(Bytes::from(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_listens_unless_remote_is_allowed() {
        let public: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert!(check_listen("--listen", "127.0.0.1:1".parse().unwrap(), None).is_ok());
        assert!(check_listen("--listen", "[::1]:1".parse().unwrap(), None).is_ok());
        let err = check_listen("--listen", public, Some("--allow-remote"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--allow-remote"), "{err}");
        let err = check_listen("metrics_addr", public, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("metrics_addr 0.0.0.0:8787") && !err.contains("allow"),
            "{err}"
        );
    }

    #[test]
    fn a_burst_of_accept_failures_is_logged_once_and_backs_off() {
        let mut failures = AcceptFailures {
            name: "test",
            count: 0,
            pause: ACCEPT_BACKOFF_FIRST,
        };
        let err = std::io::Error::other("too many open files");
        let pauses: Vec<Duration> = (0..10).map(|_| failures.failed(&err)).collect();
        assert_eq!(pauses[0], ACCEPT_BACKOFF_FIRST);
        assert_eq!(pauses[1], ACCEPT_BACKOFF_FIRST * 2);
        assert_eq!(pauses[9], ACCEPT_BACKOFF_MAX);
        assert_eq!(failures.count, 10);
        failures.accepted();
        assert_eq!(failures.count, 0);
        assert_eq!(failures.failed(&err), ACCEPT_BACKOFF_FIRST);
    }

    #[test]
    fn a_full_table_closes_the_oldest_connection_not_being_answered() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let table = Connections::default();
            let first = table.add(0);
            let second = table.add(1);
            let _busy = Answering::start(&first);
            table.make_room(2).await;
            // The first is being answered, so the second made room.
            let open: Vec<u64> = table.open.lock().unwrap().keys().copied().collect();
            assert_eq!(open, vec![0]);
            tokio::time::timeout(Duration::from_secs(1), second.evict.notified())
                .await
                .expect("the idle connection was told to close");
            // Room below the cap: nobody is closed.
            table.make_room(2).await;
            assert_eq!(table.open.lock().unwrap().len(), 1);
        });
    }
}
