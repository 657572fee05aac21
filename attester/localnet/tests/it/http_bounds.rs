//! The local network's HTTP front door (issue #16, items 7 and 8): admin routes are same-origin
//! only and carry no CORS headers; request header lines are bounded in length and count.
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use assay_localnet::{LocalNet, LocalNetConfig};

/// Sends `request` as raw bytes and returns (status, head, body).
fn raw(net: &LocalNet, request: &[u8]) -> (u16, String, String) {
    let host = net.rpc_url();
    let host = host
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_string();
    let mut s = TcpStream::connect(&host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = s.write_all(request);
    let mut resp = Vec::new();
    let _ = s.read_to_end(&mut resp);
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let (head, body) = resp.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

fn host_of(net: &LocalNet) -> String {
    net.rpc_url()
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_string()
}

fn post_admin(net: &LocalNet, host: &str, origin: Option<&str>) -> (u16, String, String) {
    let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
    let body = "{}";
    let req = format!(
        "POST /admin/ledger-entry HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    raw(net, req.as_bytes())
}

fn has_cors(head: &str) -> bool {
    head.to_ascii_lowercase()
        .contains("access-control-allow-origin")
}

#[test]
fn item8_admin_routes_are_same_origin_only() {
    let net = LocalNet::start(LocalNetConfig::default()).unwrap();
    let host = host_of(&net);

    // A page on another origin (a "simple" POST, which a browser sends without a preflight).
    let (status, head, body) = post_admin(&net, &host, Some("http://evil.example"));
    assert_eq!(status, 403, "{body}");
    assert!(!has_cors(&head), "{head}");
    assert!(body.contains("same-origin"), "{body}");

    // A DNS-rebinding page: its own name in Host.
    let (status, head, _) = post_admin(&net, "evil.example:80", Some("http://evil.example:80"));
    assert_eq!(status, 403);
    assert!(!has_cors(&head));

    // The preflight is answered without CORS headers, so a browser never sends the write.
    let preflight = format!(
        "OPTIONS /admin/ledger-entry HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"
    );
    let (_, head, _) = raw(&net, preflight.as_bytes());
    assert!(!has_cors(&head), "{head}");

    // Same origin and tools (no Origin) reach the handler, which judges the body; still no CORS.
    for origin in [Some(format!("http://{host}")), None] {
        let (status, head, body) = post_admin(&net, &host, origin.as_deref());
        assert_eq!(status, 400, "the handler refuses the empty entry: {body}");
        assert!(!has_cors(&head), "{head}");
    }

    // The public APIs keep CORS for browser clients.
    let rpc = r#"{"jsonrpc":"2.0","id":1,"method":"getHealth"}"#;
    let req = format!(
        "POST /rpc HTTP/1.1\r\nHost: {host}\r\nOrigin: http://wallet.example\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{rpc}",
        rpc.len()
    );
    let (status, head, _) = raw(&net, req.as_bytes());
    assert_eq!(status, 200);
    assert!(has_cors(&head), "{head}");
}

#[test]
fn item7_header_lines_are_bounded_in_length_and_count() {
    let net = LocalNet::start(LocalNetConfig::default()).unwrap();
    let host = host_of(&net);
    let long = format!(
        "GET /horizon/ HTTP/1.1\r\nHost: {host}\r\nX-Long: {}\r\n\r\n",
        "a".repeat(64 * 1024)
    );
    let (status, _, _) = raw(&net, long.as_bytes());
    assert_eq!(status, 431);

    let long_line = format!(
        "GET /{} HTTP/1.1\r\nHost: {host}\r\n\r\n",
        "a".repeat(64 * 1024)
    );
    assert_eq!(raw(&net, long_line.as_bytes()).0, 431);

    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    let req = format!("GET /horizon/ HTTP/1.1\r\nHost: {host}\r\n{many}\r\n");
    assert_eq!(raw(&net, req.as_bytes()).0, 431);

    // Within the bounds, the same request is served.
    let fine = format!("GET /friendbot HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    assert_ne!(raw(&net, fine.as_bytes()).0, 431);
}
