//! The eval subjects end to end: testdata/eval/<subject>/ raw answers replayed for the real host names
//! over HTTPS, scanned by the real binary, and the JSON report compared with expected.json.
//!
//! `*.status` files stand for a source that did not answer: an HTTP status, `timeout` (the server
//! never answers; the scan runs with `--timeout 1`), or `dns-failure` (the host is not mapped, so the
//! name goes to the system resolver; the recorded domains do not resolve in public DNS either).
//! Hand-made subjects use placeholder issuers that are not valid StrKeys; the CLI rejects those by
//! design, so they are replaced everywhere by a valid key derived from the placeholder.
mod common;

use std::path::{Path, PathBuf};

use assay_scan::testsupport::Reply;
use common::*;
use serde_json::Value;

fn eval_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/eval")
}

fn valid_issuer(issuer: &str) -> String {
    if stellar_strkey::ed25519::PublicKey::from_string(issuer).is_ok() {
        return issuer.to_string();
    }
    use sha2::Digest;
    let key: [u8; 32] = sha2::Sha256::digest(issuer.as_bytes()).into();
    stellar_strkey::ed25519::PublicKey(key)
        .to_string()
        .as_str()
        .to_string()
}

fn read(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

/// The scripted reply for `name` (or `name.status`), with placeholder issuers replaced.
fn reply_for(
    dir: &Path,
    name: &str,
    fix: &dyn Fn(String) -> String,
    content_type: &str,
) -> Option<Reply> {
    if let Some(body) = read(dir, name) {
        return Some(Reply::status_with(
            200,
            &[("content-type", content_type)],
            fix(body),
        ));
    }
    let status = read(dir, &format!("{name}.status"))?;
    Some(match status.trim() {
        "timeout" => Reply::Hang,
        // Never served: the host is left unmapped, so the name goes to the resolver and fails.
        "dns-failure" | "000" => Reply::status(599),
        "malformed" => Reply::text("\u{0}{ not a document"),
        "body-too-large" => Reply::text(vec![b' '; assay_scan::net::client::BODY_CAP + 1]),
        code => Reply::status(
            code.parse()
                .unwrap_or_else(|_| panic!("{}: bad status {code:?}", dir.display())),
        ),
    })
}

fn links(toml: &str) -> Vec<String> {
    toml.lines()
        .filter_map(|l| l.trim().strip_prefix("toml"))
        .filter_map(|rest| rest.split('"').nth(1))
        .map(str::to_string)
        .collect()
}

fn host_of(url: &str) -> String {
    url.split("://")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

fn path_of(url: &str) -> String {
    let rest = url.split("://").nth(1).unwrap();
    rest[rest.find('/').unwrap()..].to_string()
}

fn run_subject(dir: &Path) -> (Value, Run) {
    let subject: Value = serde_json::from_str(&read(dir, "subject.json").unwrap()).unwrap();
    let expected: Value = serde_json::from_str(&read(dir, "expected.json").unwrap()).unwrap();
    let (code, placeholder) = subject["asset"].as_str().unwrap().split_once('-').unwrap();
    let issuer = valid_issuer(placeholder);
    let fix = |body: String| body.replace(placeholder, &issuer);
    let account: Value =
        serde_json::from_str(&fix(read(dir, "horizon-account.json").unwrap())).unwrap();
    let home_domain = account["home_domain"].as_str().map(str::to_string);
    let toml_text = read(dir, "stellar.toml").unwrap_or_default();
    let toml_dns_fails =
        read(dir, "stellar.toml.status").is_some_and(|s| matches!(s.trim(), "dns-failure" | "000"));

    let mut hosts: Vec<String> = Vec::new();
    if let Some(domain) = home_domain.as_ref().filter(|_| !toml_dns_fails) {
        hosts.push(domain.clone());
    }
    let linked = links(&toml_text);
    hosts.extend(linked.iter().map(|l| host_of(l)));
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let h = Harness::new(&names);

    let json = "application/json";
    h.route(
        HORIZON,
        &assets_path(code, &issuer),
        vec![reply_for(dir, "horizon-assets.json", &fix, json).unwrap()],
    );
    h.route(
        HORIZON,
        &account_path(&issuer),
        vec![reply_for(dir, "horizon-account.json", &fix, json).unwrap()],
    );
    if let Some(reply) = reply_for(dir, "directory.json", &fix, json) {
        h.route(EXPERT, &directory_path(&issuer), vec![reply]);
    }
    if let Some(domain) = &home_domain {
        if let Some(reply) = reply_for(dir, "blocked.json", &fix, json) {
            h.route(EXPERT, &blocked_path(domain), vec![reply]);
        }
        if let Some(reply) = reply_for(dir, "stellar.toml", &fix, "text/plain") {
            h.route(domain, TOML_PATH, vec![reply]);
        }
    }
    for link in &linked {
        let file = link.rsplit('/').next().unwrap();
        if let Some(reply) = reply_for(&dir.join("linked"), file, &fix, "text/plain") {
            h.route(&host_of(link), &path_of(link), vec![reply]);
        }
    }
    let asset = format!("{code}-{issuer}");
    let run = h.assay(&[
        "scan",
        "--output",
        "json",
        "--timeout",
        "1",
        "--no-cache",
        "--no-history",
        &asset,
    ]);
    (expected, run)
}

#[test]
fn eval_subjects_match_their_expected_verdicts_end_to_end() {
    let mut subjects: Vec<PathBuf> = std::fs::read_dir(eval_dir())
        .expect("testdata/eval")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").exists())
        .collect();
    subjects.sort();
    assert!(
        subjects.len() >= 10,
        "expected the eval corpus, found {}",
        subjects.len()
    );
    let mut failures = Vec::new();
    for dir in &subjects {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let (expected, run) = run_subject(dir);
        let undetermined = !expected["undetermined_checks"]
            .as_array()
            .unwrap()
            .is_empty();
        let want_code = if undetermined { 2 } else { 0 };
        if run.code != want_code {
            failures.push(format!(
                "{name}: exit {} (want {want_code}): {}",
                run.code, run.stderr
            ));
            continue;
        }
        let report = run.report();
        for key in [
            "severity",
            "base_severity",
            "escalated",
            "accountability",
            "mechanics",
            "state",
            "undetermined_checks",
        ] {
            if report[key] != expected[key] {
                failures.push(format!(
                    "{name}: {key} = {} (want {})",
                    report[key], expected[key]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
