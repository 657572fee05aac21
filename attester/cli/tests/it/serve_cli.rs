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

/// A running `assay serve` over the PostgreSQL database at `url`.
pub(crate) fn serve_database(url: &str) -> Served {
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--database", url])
        .env_remove("ASSAY_HISTORY")
        .env_remove("ASSAY_DATABASE_URL")
        .stderr(Stdio::piped());
    spawn_served(command).0
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

/// Headless Chromium run with `args` after the options every run takes; its stdout.
fn chromium(args: &[&str]) -> String {
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
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{browser}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The DOM headless Chromium builds for `url` (no JavaScript is needed: the page has none).
fn rendered(url: &str) -> String {
    chromium(&["--dump-dom", url])
}

/// A PNG of `url` as headless Chromium draws it in a 1200 × `height` window, written to `path`.
fn screenshot(url: &str, height: u32, path: &std::path::Path) {
    chromium(&[
        &format!("--screenshot={}", path.display()),
        &format!("--window-size=1200,{height}"),
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        url,
    ]);
    let png = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{} is not a drawn page ({} bytes)",
        path.display(),
        png.len()
    );
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
    let out = crate::common::watch_once(&cfg, &secret, w.dir.path());
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

/// The token of the powers page: a contract id, its admin and the holder discovery watched.
fn token_parties() -> (String, String, String) {
    (
        format!("{}", stellar_strkey::Contract([0x39; 32])),
        format!("{}", stellar_strkey::ed25519::PublicKey([0x01; 32])),
        format!("{}", stellar_strkey::ed25519::PublicKey([0x42; 32])),
    )
}

/// A complete report on token contract `id` scanned `at`, as `assay scan C…` records it: its mechanics
/// and severity, the evidence line of the behaviour observed, and the power survey with `powers`.
fn token_report(
    id: &str,
    at: &str,
    severity: &str,
    mechanics: &[&str],
    powers: Value,
    claim: &str,
) -> String {
    serde_json::json!({
        "schema_version": 1,
        "asset": {"contract": id},
        "severity": severity,
        "base_severity": severity,
        "escalated": false,
        "accountability": "unknown",
        "state": "valid",
        "stale": false,
        "undetermined": false,
        "undetermined_checks": [],
        "network": "Test SDF Network ; September 2015",
        "checks": ["contract-mechanics"],
        "mechanics": mechanics,
        "findings": [{
            "check": "contract-mechanics",
            "title": "powers over holders observed on a fork",
            "severity": severity,
            "escalation": false,
            "undetermined": false,
            "reasoning": format!("{claim}; severity is the floor of the strongest bit"),
            "mechanics": mechanics,
            "evidence": [],
        }],
        "evidence": [{
            "source": "contract/behaviour",
            "url": format!("https://soroban-testnet.stellar.org/?fork-of={id}&ledger=51234&probe=powers"),
            "claim": claim,
            "retrieved_at": at,
            "attempted": false,
        }],
        "observation_window_start": at,
        "observation_window_end": at,
        "scanned_at": at,
        "powers": {
            "wasm_hash": "5a2f0c7d9e61b3a48c0f1e2d3b4a59687766554433221100ffeeddccbbaa9988",
            "ledger": 51_234,
            "probed": ["reward", "clawback", "transfer"],
            "invocations": 24,
            "holders": [token_parties().2],
            "powers": powers,
            "unclassified": [],
            "cut": [],
        },
    })
    .to_string()
}

/// The power a `clawback`-like `function` exercised: `holder`'s balance burned on `admin`'s authorization.
fn take_power(function: &str, label: Option<&str>, admin: &str, holder: &str) -> Value {
    let mut p = serde_json::json!({
        "function": function,
        "authorized_by": [{"address": admin, "control": "1 key"}],
        "effect": "takes_balance",
        "holder": holder,
        "amount": "1000",
    });
    if let Some(label) = label {
        p["label"] = Value::String(label.into());
    }
    p
}

/// The power a `reward`-like `function` exercised: supply created on `admin`'s authorization.
fn mint_power(function: &str, admin: &str, holder: &str) -> Value {
    serde_json::json!({
        "function": function,
        "authorized_by": [{"address": admin, "control": "2 of 3 keys"}],
        "effect": "creates_supply",
        "credited": holder,
        "amount": "5000",
    })
}

/// Where the test leaves its screenshots: `ASSAY_SCREENSHOTS` when set (to look at them), else `dir`.
fn screenshot_dir(dir: &std::path::Path) -> std::path::PathBuf {
    let out = std::env::var_os("ASSAY_SCREENSHOTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.to_path_buf());
    std::fs::create_dir_all(&out).unwrap();
    out
}

/// Issue #39 item 5: a critical asset scanned four times (three transitions: its home domain's claim
/// found, clawback enabled, then critical by a blocked domain) and a token with two powers, as headless Chromium renders their pages:
/// the severity badge with the accountability beside it, the timeline of transitions (inline SVG with
/// text labels), the powers table with who holds each power and since when; screenshots of both. The JSON
/// twin of the token's page is pinned byte for byte.
#[test]
fn asset_pages_show_the_badge_the_powers_and_the_timeline() {
    use crate::common as c;

    let h = c::Harness::new(&[c::USDC.domain]);
    c::USDC.route_all(&h);
    let id = c::USDC.id();
    let flags = [
        c::Flags(false, false, false, false),
        c::Flags(false, true, false, false),
        c::Flags(false, true, false, true),
        c::Flags(false, true, false, true),
    ];
    let mut severities = Vec::new();
    for (n, f) in flags.into_iter().enumerate() {
        h.route(
            c::HORIZON,
            &c::assets_path(c::USDC.code, c::USDC.issuer),
            vec![assay_scan::testsupport::Reply::json(c::assets_body(
                c::USDC.code,
                c::USDC.issuer,
                f,
            ))],
        );
        h.route(
            c::HORIZON,
            &c::account_path(c::USDC.issuer),
            vec![assay_scan::testsupport::Reply::json(c::account_body(
                c::USDC.issuer,
                Some(c::USDC.domain),
                f,
            ))],
        );
        // The first scan finds a stellar.toml that does not claim the asset (unverified); the next ones
        // find the claim.
        h.route(
            c::USDC.domain,
            c::TOML_PATH,
            vec![assay_scan::testsupport::Reply::text(if n == 0 {
                "[DOCUMENTATION]\nORG_NAME=\"Test Org\"\n".to_string()
            } else {
                c::toml_claiming(c::USDC.code, c::USDC.issuer)
            })],
        );
        // The last scan finds the home domain blocked: escalated to critical.
        h.route(
            c::EXPERT,
            &c::blocked_path(c::USDC.domain),
            vec![c::expert_json(c::blocked_body(c::USDC.domain, n == 3))],
        );
        if n > 0 {
            // Observations a second apart: a transition needs two distinct instants.
            std::thread::sleep(Duration::from_millis(1_100));
        }
        let run = h.assay(&["scan", "--output", "json", "--no-cache", &id]);
        assert_eq!(run.code, 0, "scan {n}: {}", run.stderr);
        let report = run.report();
        assert_eq!(report["undetermined"], false, "scan {n}: {report}");
        severities.push(report["severity"].as_str().unwrap().to_string());
    }
    assert_eq!(severities, ["medium", "medium", "high", "critical"]);

    // The token: its first observation saw one power (reward, supply created on a 2-of-3 key), the second
    // also a clawback on a single key.
    let (token, admin, holder) = token_parties();
    let reward = mint_power("reward", &admin, &holder);
    let clawback = take_power("clawback", Some("clawback"), &admin, &holder);
    let mut store = assay_scan::history::History::open(&h.history_path()).unwrap();
    store
        .append(&[
            (
                token.clone(),
                "2026-11-02T09:00:00Z".into(),
                token_report(
                    &token,
                    "2026-11-02T09:00:00Z",
                    "clear",
                    &["admin_mint"],
                    serde_json::json!([reward]),
                    "reward(to, amount) created supply",
                ),
            ),
            (
                token.clone(),
                "2026-11-20T14:30:00Z".into(),
                token_report(
                    &token,
                    "2026-11-20T14:30:00Z",
                    "high",
                    &["admin_clawback", "admin_mint"],
                    serde_json::json!([reward, clawback]),
                    "clawback(from, amount) took a holder's balance; reward(to, amount) created supply",
                ),
            ),
        ])
        .unwrap();
    drop(store);

    let served = serve(&h.history_path());
    let base = format!("http://{}", served.addr);

    // The JSON twin is what it was before the page was drawn: byte for byte.
    let (status, _, twin) = get(&served.addr, &format!("/v1/assets/{token}"));
    assert_eq!(status, 200, "{twin}");
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/serve_token_twin.json"
    );
    if twin != std::fs::read_to_string(golden).unwrap_or_default() {
        let actual =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve_token_twin.json");
        std::fs::write(&actual, &twin).unwrap();
        panic!(
            "/v1/assets/{token} changed: compare {} with {golden}",
            actual.display()
        );
    }

    // The critical asset: the badge reads at a glance, with the accountability beside it.
    let dom = rendered(&format!("{base}/assets/{id}"));
    let verdict = section(&dom, "verdict");
    assert!(
        verdict.contains("class=\"badge severity sev-critical\"")
            && verdict.contains(">critical<")
            && verdict.contains("class=\"badge accountability acc-verified\"")
            && verdict.contains(">verified<"),
        "{verdict}"
    );
    // Its text says what a colour cannot: the escalation.
    assert!(verdict.contains("escalated"), "{verdict}");
    assert!(
        section(&dom, "severity").contains("<span class=\"value\">critical</span>"),
        "{dom}"
    );
    // The timeline: one point per observation, a segment per transition, each with a text label and a title.
    let timeline = section(&dom, "timeline");
    assert!(timeline.contains("<svg"), "{timeline}");
    assert_eq!(
        timeline.matches("class=\"observation\"").count(),
        4,
        "{timeline}"
    );
    assert_eq!(
        timeline.matches("class=\"transition\"").count(),
        3,
        "{timeline}"
    );
    for level in ["medium", "high", "critical"] {
        assert!(
            timeline.contains(&format!(">{level}</text>")),
            "{level}: {timeline}"
        );
    }
    assert!(
        timeline.contains("−domain_unverified")
            && timeline.contains("+auth_clawback_enabled")
            && timeline.contains("+blocklisted")
            && timeline.contains("<title>"),
        "{timeline}"
    );
    // The check column does not wrap mid-word.
    assert!(
        section(&dom, "findings").contains("<td class=\"check\">"),
        "{dom}"
    );
    // Not a token: no powers table.
    assert!(!dom.contains("<section id=\"powers\">"), "{dom}");

    // The token: the powers table, one row per power, who holds it and since when (the first observation
    // that shows it, as the column header says).
    let dom = rendered(&format!("{base}/assets/{token}"));
    let powers = section(&dom, "powers");
    assert!(
        powers.contains("first observed"),
        "the header says what the column is: {powers}"
    );
    let rows: Vec<&str> = powers.split("<tr class=\"power\">").skip(1).collect();
    assert_eq!(rows.len(), 2, "{powers}");
    let row = |function: &str| {
        rows.iter()
            .find(|r| r.contains(&format!(">{function}<")))
            .unwrap_or_else(|| panic!("no row for {function}: {powers}"))
    };
    let (reward, clawback) = (row("reward"), row("clawback"));
    assert!(
        reward.contains("creates supply")
            && reward.contains(&admin)
            && reward.contains("2 of 3 keys")
            && reward.contains("2026-11-02<br>09:00:00Z"),
        "{reward}"
    );
    assert!(
        clawback.contains("takes a holder")
            && clawback.contains("1 key")
            && clawback.contains("2026-11-20<br>14:30:00Z")
            && !clawback.contains("2026-11-02"),
        "{clawback}"
    );
    let verdict = section(&dom, "verdict");
    assert!(
        verdict.contains("sev-high") && verdict.contains("acc-unknown"),
        "{verdict}"
    );
    assert_eq!(
        section(&dom, "timeline")
            .matches("class=\"transition\"")
            .count(),
        1
    );

    let shots = screenshot_dir(h.dir.path());
    screenshot(
        &format!("{base}/assets/{id}"),
        1300,
        &shots.join("asset-critical.png"),
    );
    screenshot(
        &format!("{base}/assets/{token}"),
        1300,
        &shots.join("token-powers.png"),
    );
}

/// Issue #39 item 5: markup in what a token's code or an issuer's home domain says (a function name, a
/// label, an address, a claim, a URL) is text on the page, never an element: the browser's DOM has no
/// script or image the page did not write.
#[test]
fn hostile_strings_on_the_asset_page_stay_text() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("h.sqlite3");
    let (token, admin, holder) = token_parties();
    let hostile_fn = "<img src=x onerror=alert(1)>";
    let hostile_label = "\"><script>alert(2)</script>";
    let hostile_domain = "evil.example\"><script>alert(3)</script>";
    let mut power = take_power(hostile_fn, Some(hostile_label), &admin, &holder);
    power["authorized_by"][0]["control"] = Value::String("<svg onload=alert(4)>".into());
    let mut report: Value = serde_json::from_str(&token_report(
        &token,
        "2026-11-20T14:30:00Z",
        "high",
        &["admin_clawback"],
        serde_json::json!([power]),
        &format!("home_domain {hostile_domain} </td></tr></table><script>alert(5)</script>"),
    ))
    .unwrap();
    report["evidence"][0]["url"] =
        Value::String(format!("https://{hostile_domain}/.well-known/stellar.toml"));
    report["findings"][0]["check"] = Value::String("<b>contract-mechanics</b>".into());
    assay_scan::history::History::open(&history)
        .unwrap()
        .append(&[(
            token.clone(),
            "2026-11-20T14:30:00Z".into(),
            report.to_string(),
        )])
        .unwrap();

    let served = serve(&history);
    let (status, _, raw) = get(&served.addr, &format!("/assets/{token}"));
    assert_eq!(status, 200, "{raw}");
    let dom = rendered(&format!("http://{}/assets/{token}", served.addr));
    for page in [&raw, &dom] {
        let lower = page.to_ascii_lowercase();
        for element in ["<script", "<img", "<b>", "<svg onload"] {
            assert!(!lower.contains(element), "{element} injected: {page}");
        }
        assert!(
            page.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{page}"
        );
        assert!(
            page.contains("&lt;script&gt;alert(3)&lt;/script&gt;"),
            "{page}"
        );
    }
    // Still one powers table with its row: the hostile name did not break the markup around it.
    let powers = section(&dom, "powers");
    assert_eq!(
        powers.matches("<tr class=\"power\">").count(),
        1,
        "{powers}"
    );
    assert!(powers.contains("&lt;svg onload=alert(4)&gt;"), "{powers}");
}
