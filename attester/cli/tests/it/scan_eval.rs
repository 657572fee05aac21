//! The eval subjects end to end: testdata/eval/<subject>/ raw answers replayed for the real host names
//! over HTTPS, scanned by the real binary, and the JSON report compared with expected.json.
//!
//! `*.status` files stand for a source that did not answer: an HTTP status, `timeout` (the server
//! never answers; the scan runs with `--timeout 1`), or `dns-failure` (the host is sent with
//! `--connect-to` to the same name under RFC 6761's `.invalid`, which the scanner answers as a failed
//! lookup without any query, so the run never depends on what public DNS says about the real name).
use crate::common;

use std::path::{Path, PathBuf};

use assay_scan::testsupport::Reply;
use common::*;
use serde_json::Value;

pub(crate) fn eval_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/eval")
}

fn read(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

/// The scripted reply for `name` (or `name.status`).
fn reply_for(dir: &Path, name: &str, content_type: &str) -> Option<Reply> {
    if let Some(body) = read(dir, name) {
        return Some(Reply::status_with(
            200,
            &[("content-type", content_type)],
            body,
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
    run_subject_as(dir, "json")
}

/// Scans the eval subject in `dir` with `--output output`: its expected report and the run.
pub(crate) fn run_subject_as(dir: &Path, output: &str) -> (Value, Run) {
    let subject: Value = serde_json::from_str(&read(dir, "subject.json").unwrap()).unwrap();
    let expected: Value = serde_json::from_str(&read(dir, "expected.json").unwrap()).unwrap();
    let (code, issuer) = subject["asset"].as_str().unwrap().split_once('-').unwrap();
    assert!(
        stellar_strkey::ed25519::PublicKey::from_string(issuer).is_ok(),
        "{}: issuer {issuer} is not a valid StrKey (see testdata/eval/README.md)",
        dir.display()
    );
    let account: Value = serde_json::from_str(&read(dir, "horizon-account.json").unwrap()).unwrap();
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
        &assets_path(code, issuer),
        vec![reply_for(dir, "horizon-assets.json", json).unwrap()],
    );
    h.route(
        HORIZON,
        &account_path(issuer),
        vec![reply_for(dir, "horizon-account.json", json).unwrap()],
    );
    if let Some(reply) = reply_for(dir, "directory.json", json) {
        h.route(EXPERT, &directory_path(issuer), vec![reply]);
    }
    if let Some(domain) = &home_domain {
        if let Some(reply) = reply_for(dir, "blocked.json", json) {
            h.route(EXPERT, &blocked_path(domain), vec![reply]);
        }
        if let Some(reply) = reply_for(dir, "stellar.toml", "text/plain") {
            h.route(domain, TOML_PATH, vec![reply]);
        }
    }
    for link in &linked {
        let file = link.rsplit('/').next().unwrap();
        if let Some(reply) = reply_for(&dir.join("linked"), file, "text/plain") {
            h.route(&host_of(link), &path_of(link), vec![reply]);
        }
    }
    // A recorded DNS failure: the lookup fails for certain, and without leaving the machine.
    let dns_failures: Vec<String> = home_domain
        .iter()
        .filter(|_| toml_dns_fails)
        .map(|domain| format!("{domain}:443:{domain}.invalid:443"))
        .collect();
    let asset = format!("{code}-{issuer}");
    let run = h.assay_with(
        &[
            "scan",
            "--output",
            output,
            "--timeout",
            "1",
            "--no-cache",
            "--no-history",
            &asset,
        ],
        &dns_failures,
    );
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
        let dns_failure = read(dir, "stellar.toml.status")
            .is_some_and(|s| matches!(s.trim(), "dns-failure" | "000"));
        let toml = evidence_from(&report, "stellar.toml");
        if dns_failure
            && !toml
                .iter()
                .any(|e| e["claim"] == "not retrievable: dns-failure")
        {
            failures.push(format!(
                "{name}: stellar.toml evidence {toml:?} (want not retrievable: dns-failure)"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
