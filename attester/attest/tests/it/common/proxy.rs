//! A scripted JSON-RPC proxy on 127.0.0.1 in front of the local network: per method, forward, answer with
//! canned JSON, forward and then lose the response, or rewrite the upstream answer.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// What to do with one request of a method.
#[derive(Clone)]
pub enum Fault {
    /// Answer with this `result` without forwarding.
    Answer(Value),
    /// Forward, let it take effect, then close the connection without answering.
    LoseResponse,
    /// Forward and rewrite the upstream `result`.
    Rewrite(Arc<dyn Fn(Value) -> Value + Send + Sync>),
}

#[derive(Default)]
pub struct Script {
    /// Faults per method, consumed in order; when empty, requests are forwarded untouched.
    pub faults: HashMap<String, Vec<Fault>>,
    /// Faults applied to every request of a method, after the queued ones.
    pub always: HashMap<String, Fault>,
    /// Methods seen, in order.
    pub seen: Vec<String>,
    /// sendTransaction requests that reached the upstream.
    pub forwarded_sends: usize,
}

pub struct Proxy {
    pub url: String,
    pub script: Arc<Mutex<Script>>,
}

fn read_request(s: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    loop {
        let n = s.read(&mut tmp).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..pos]).to_string();
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0);
            while buf.len() < pos + 4 + len {
                let n = s.read(&mut tmp).ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&tmp[..n]);
            }
            return Some((head, buf[pos + 4..pos + 4 + len].to_vec()));
        }
    }
}

fn forward(upstream: &str, body: &[u8]) -> Value {
    let rest = upstream.strip_prefix("http://").unwrap();
    let (host, path) = rest
        .split_once('/')
        .map(|(h, p)| (h, format!("/{p}")))
        .unwrap_or((rest, "/".into()));
    let mut s = TcpStream::connect(host).unwrap();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).unwrap();
    let pos = resp.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    serde_json::from_slice(&resp[pos + 4..]).unwrap()
}

fn reply(s: &mut TcpStream, v: &Value) {
    let body = v.to_string();
    let _ = write!(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
}

impl Proxy {
    pub fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let script: Arc<Mutex<Script>> = Arc::default();
        let sc = script.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut s) = conn else { continue };
                let Some((_, body)) = read_request(&mut s) else {
                    continue;
                };
                let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let method = req["method"].as_str().unwrap_or("").to_string();
                let fault = {
                    let mut g = sc.lock().unwrap();
                    g.seen.push(method.clone());
                    let queued = g.faults.get_mut(&method).and_then(|q| {
                        if q.is_empty() {
                            None
                        } else {
                            Some(q.remove(0))
                        }
                    });
                    queued.or_else(|| g.always.get(&method).cloned())
                };
                let forward_counted = |sc: &Arc<Mutex<Script>>| {
                    if method == "sendTransaction" {
                        sc.lock().unwrap().forwarded_sends += 1;
                    }
                    forward(&upstream, &body)
                };
                match fault {
                    None => {
                        let v = forward_counted(&sc);
                        reply(&mut s, &v);
                    }
                    Some(Fault::Answer(result)) => {
                        reply(
                            &mut s,
                            &serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result": result}),
                        );
                    }
                    Some(Fault::LoseResponse) => {
                        let _ = forward_counted(&sc);
                        drop(s);
                    }
                    Some(Fault::Rewrite(f)) => {
                        let mut v = forward_counted(&sc);
                        v["result"] = f(v["result"].clone());
                        reply(&mut s, &v);
                    }
                }
            }
        });
        Proxy { url, script }
    }

    pub fn queue(&self, method: &str, faults: Vec<Fault>) {
        self.script
            .lock()
            .unwrap()
            .faults
            .insert(method.into(), faults);
    }

    pub fn always(&self, method: &str, fault: Fault) {
        self.script
            .lock()
            .unwrap()
            .always
            .insert(method.into(), fault);
    }

    pub fn count(&self, method: &str) -> usize {
        self.script
            .lock()
            .unwrap()
            .seen
            .iter()
            .filter(|m| *m == method)
            .count()
    }

    pub fn forwarded_sends(&self) -> usize {
        self.script.lock().unwrap().forwarded_sends
    }
}
