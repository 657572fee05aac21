//! `assay serve` over a history store written by a real `assay watch --once` on the local network: the JSON
//! routes, the undetermined marker in header and body, health and metrics, and the asset page as headless
//! Chromium renders it.

use crate::world;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use world::*;

use crate::common::{aqua_and_outage, OUTG};

/// A running `assay serve`, killed on drop.
pub(crate) struct Served {
    child: Child,
    pub(crate) addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `assay serve` on a free local port over the store at `history`, not yet started.
fn serve_command(history: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--history"])
        .arg(history)
        .stderr(Stdio::piped());
    command
}

/// Starts `command` (from [`serve_command`]) and waits for the line saying where it listens: the
/// server, and the rest of its stderr.
fn spawn_served(mut command: Command) -> (Served, BufReader<ChildStderr>) {
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no listening line: {line}"))
        .to_string();
    (Served { child, addr }, stderr)
}

/// A running `assay serve` over the store at `history`.
pub(crate) fn serve(history: &std::path::Path) -> Served {
    spawn_served(serve_command(history)).0
}

/// One GET over a fresh connection: (status, headers, body).
pub(crate) fn get(addr: &str, path: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

pub(crate) fn get_json(addr: &str, path: &str) -> (u16, String, Value) {
    let (status, head, body) = get(addr, path);
    let json = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    (status, head, json)
}

/// The DOM headless Chromium builds for `url` (no JavaScript is needed: the page has none).
fn rendered(url: &str) -> String {
    let browser = ["chromium-headless-shell", "chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("no headless Chromium on PATH: scripts/setup.sh installs chromium-headless-shell");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--dump-dom",
            url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{browser}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The text of the `<section id="ID">` in a rendered DOM.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id} in {dom}"));
    let end = dom[start..].find("</section>").unwrap() + start;
    &dom[start..end]
}

#[test]
fn serve_answers_from_the_store_watch_wrote() {
    let (w, ca, secret) = aqua_and_outage();
    let (aqua, outg) = (format!("AQUA-{AQUA}"), format!("OUTG-{OUTG}"));
    let history = w.dir.path().join("h.sqlite3");
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(
        &cfg,
        w.watch_toml(&ca, &history, &["aqua.network", "outage.example"])
            + &format!("[[asset]]\nasset = \"{aqua}\"\n[[asset]]\nasset = \"{outg}\"\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--once", "--config"])
        .arg(&cfg)
        .env("STELLAR_SECRET_KEY", &secret)
        .env("HOME", w.dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let served = serve(&history);
    let addr = served.addr.as_str();

    // The listing: both assets, the outage marked undetermined, filter and paging.
    let (status, _, list) = get_json(addr, "/v1/assets");
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["assets"].as_array().unwrap().len(), 2, "{list}");
    let entry = |asset: &str| {
        list["assets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["asset"] == asset)
            .cloned()
            .unwrap_or_else(|| panic!("{asset} not listed: {list}"))
    };
    assert_eq!(entry(&aqua)["severity"], "clear");
    assert_eq!(entry(&aqua)["accountability"], "verified");
    assert_eq!(entry(&aqua)["undetermined"], false);
    assert_eq!(entry(&outg)["undetermined"], true);
    assert_eq!(entry(&outg)["undetermined_checks"][0], "reputation");
    let (_, _, paged) = get_json(addr, "/v1/assets?per_page=1");
    assert_eq!(paged["assets"].as_array().unwrap().len(), 1);
    let first = paged["assets"][0]["asset"].as_str().unwrap().to_string();
    assert_eq!(
        paged["next"],
        format!("/v1/assets?after={first}&per_page=1")
    );
    let (_, _, last) = get_json(addr, paged["next"].as_str().unwrap());
    assert_eq!(last["assets"].as_array().unwrap().len(), 1, "{last}");
    assert_ne!(last["assets"][0]["asset"], first.as_str());
    assert_eq!(last["next"], Value::Null);
    let (_, _, none) = get_json(addr, "/v1/assets?severity=critical");
    assert_eq!(none["assets"], serde_json::json!([]));
    let (status, _, bad) = get_json(addr, "/v1/assets?severity=scary");
    assert_eq!(status, 400);
    assert!(
        bad["detail"].as_str().unwrap().contains("clear, low"),
        "{bad}"
    );

    // One asset: the latest report, marked in the header and the body.
    let (status, head, clean) = get_json(addr, &format!("/v1/assets/{aqua}"));
    assert_eq!(status, 200, "{clean}");
    assert!(head.contains("assay-undetermined: false"), "{head}");
    assert_eq!(clean["undetermined"], false);
    assert_eq!(clean["report"]["severity"], "clear");
    assert_eq!(clean["report"]["asset"]["code"], "AQUA");
    assert_eq!(clean["observations"].as_array().unwrap().len(), 1);
    // The registry's entry as watch wrote it: the same verdict, with the transaction.
    let on_chain = &clean["on_chain"];
    assert_eq!(on_chain["state"], "attested", "{clean}");
    assert_eq!(on_chain["severity"], 0);
    assert_eq!(
        on_chain["tx_hash"].as_str().map(str::len),
        Some(64),
        "{on_chain}"
    );
    assert_eq!(
        on_chain["evidence_hash"].as_str().map(str::len),
        Some(64),
        "{on_chain}"
    );
    assert!(on_chain["read_at"].is_string(), "{on_chain}");
    let (status, head, gap) = get_json(addr, &format!("/v1/assets/OUTG%3A{OUTG}"));
    assert_eq!(status, 200, "{gap}");
    assert!(head.contains("assay-undetermined: true"), "{head}");
    assert_eq!(gap["undetermined"], true);
    assert_eq!(gap["report"]["state"], "unknown");
    assert_eq!(
        gap["on_chain"],
        Value::Null,
        "refused and never written: {gap}"
    );
    let (status, _, missing) = get_json(addr, &format!("/v1/assets/NONE-{AQUA}"));
    assert_eq!(status, 404, "{missing}");
    let (status, _, malformed) = get_json(addr, "/v1/assets/not-an-asset");
    assert_eq!(status, 400, "{malformed}");

    // Health and metrics read the same store.
    let (status, _, health) = get_json(addr, "/health");
    assert_eq!((status, health["assets"].as_u64()), (200, Some(2)));
    let (_, _, metrics) = get(addr, "/metrics");
    assert!(
        metrics.contains("assay_serve_assets{severity=\"clear\",undetermined=\"false\"} 1")
            // OUTG: flags 0, not locked, a live key: the latent freeze (medium), undetermined by the outage.
            && metrics.contains("assay_serve_assets{severity=\"medium\",undetermined=\"true\"} 1")
            && metrics.contains("assay_serve_assets_undetermined 1")
            && metrics.contains("assay_serve_store_up 1"),
        "{metrics}"
    );

    // The pages, as a browser renders them.
    let base = format!("http://{addr}");
    let dom = rendered(&format!("{base}/assets/{outg}"));
    assert!(dom.contains("id=\"undetermined-banner\""), "{dom}");
    assert!(
        // OUTG's latent freeze (flags not locked, a live key): medium, a floor while undetermined.
        section(&dom, "severity").contains("<span class=\"value\">medium</span>"),
        "{dom}"
    );
    let gaps = section(&dom, "could-not-check");
    assert!(gaps.contains("reputation"), "{gaps}");
    assert!(!gaps.contains("Every source the verdict depends on answered"));
    let evidence = section(&dom, "evidence");
    assert!(
        evidence.contains("horizon") && evidence.contains("no answer: "),
        "{evidence}"
    );

    let dom = rendered(&format!("{base}/assets/{aqua}"));
    assert!(!dom.contains("undetermined-banner"), "{dom}");
    assert!(section(&dom, "accountability").contains("verified"));
    assert!(
        section(&dom, "could-not-check").contains("Every source the verdict depends on answered")
    );
    assert!(
        section(&dom, "evidence").contains("stellar.toml")
            || section(&dom, "evidence").contains("aqua.network")
    );
    let index = rendered(&format!("{base}/"));
    assert!(
        index.contains(&format!("href=\"/assets/{aqua}\"")),
        "{index}"
    );
}

#[test]
fn serve_refuses_a_public_address_without_allow_remote() {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--history",
            "/nonexistent/h.sqlite3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow-remote") && err.contains("0.0.0.0"),
        "{err}"
    );
}

/// #28: 300 connections that never finish their request line, against a server limited to 256 file
/// descriptors, shut nobody out: every normal request is answered within 3 s, and the server's stderr
/// stays small (no line per refused or failed connection).
#[test]
fn serve_keeps_answering_behind_half_open_connections() {
    use std::os::unix::process::CommandExt;
    use std::time::Instant;

    let dir = tempfile::tempdir().unwrap();
    let mut command = serve_command(&dir.path().join("history.sqlite3"));
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 256,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (served, mut stderr) = spawn_served(command);
    let rest = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });

    let mut half_open = Vec::new();
    for wave in 0..2 {
        for _ in 0..300 {
            let mut stream = TcpStream::connect(&served.addr).unwrap();
            stream
                .write_all(b"GET /metrics HTTP/1.1\r\nHost: assay\r\n")
                .unwrap();
            half_open.push(stream);
        }
        for request in 0..5 {
            let started = Instant::now();
            let mut stream = TcpStream::connect(&served.addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(3)))
                .unwrap();
            write!(
                stream,
                "GET /metrics HTTP/1.1\r\nHost: assay\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut raw = String::new();
            let read = stream.read_to_string(&mut raw);
            let took = started.elapsed();
            assert!(
                read.is_ok() && took < Duration::from_secs(3),
                "wave {wave}, request {request}: no answer within 3 s ({took:?}, {read:?})"
            );
            assert!(
                raw.starts_with("HTTP/1.1 200") && raw.contains("assay_serve_requests_total"),
                "wave {wave}, request {request}: {raw}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    drop(half_open);
    drop(served);
    let stderr = rest.join().unwrap();
    assert!(
        stderr.len() < 1_000_000,
        "stderr grew to {} bytes: {}",
        stderr.len(),
        String::from_utf8_lossy(&stderr[..stderr.len().min(2_000)])
    );
}
