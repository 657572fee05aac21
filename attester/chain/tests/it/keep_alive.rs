//! The chain client never sends a call on a kept-alive connection that sat unused past its idle limit:
//! a server may have closed it meanwhile, and the private runtime, idle between calls, cannot see the
//! close, so the call would break after its request was written. Measured at a 127.0.0.1 server that
//! keeps every connection open and counts them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use assay_chain::RpcClient;
use serde_json::{json, Value};

/// A keep-alive JSON-RPC server answering every call with `"ok"`; returns its URL and the count of
/// connections it accepted.
fn keep_alive_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(stream) = conn else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end().to_ascii_lowercase();
                        if line.is_empty() {
                            break;
                        }
                        if let Some(v) = line.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let answer =
                        json!({"jsonrpc": "2.0", "id": request["id"], "result": "ok"}).to_string();
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                        answer.len()
                    );
                    if writer.write_all(head.as_bytes()).is_err()
                        || writer.write_all(answer.as_bytes()).is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (url, accepted)
}

#[test]
fn calls_within_the_idle_limit_share_a_connection_and_a_call_after_it_opens_a_new_one() {
    let (url, accepted) = keep_alive_server();
    let client = RpcClient::new(&url)
        .unwrap()
        .with_idle_limit(Duration::from_millis(300));
    for _ in 0..3 {
        assert_eq!(client.call("getHealth", Value::Null).unwrap(), json!("ok"));
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "back-to-back calls reuse the kept-alive connection"
    );
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(client.call("getHealth", Value::Null).unwrap(), json!("ok"));
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "a call after the idle limit does not trust the old connection"
    );
    // A clone shares the pool and its idle clock.
    let clone = client.clone();
    assert_eq!(clone.call("getHealth", Value::Null).unwrap(), json!("ok"));
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}
