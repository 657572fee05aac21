//! The fault matrix: each source × {timeout, 429 with Retry-After, 500, connection refused, TLS failure,
//! DNS failure, malformed body, oversized body}, over real HTTP(S), through the real binary.
//!
//! Path-level faults are scripted on the route; host-level faults (refused, TLS, DNS) apply to the host
//! serving the source (the directory and the blocklist share api.stellar.expert, so a host-level fault
//! takes both down, as it would in production). DNS failures use `.invalid` names (RFC 6761: never resolve).
use crate::common;

use assay_scan::net::client::BODY_CAP;
use assay_scan::testsupport::{closed_port, Reply};
use common::*;
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
enum Fault {
    Timeout,
    RateLimited,
    ServerError,
    ConnectionRefused,
    Tls,
    Dns,
    Malformed,
    Oversized,
}

const ALL: [Fault; 8] = [
    Fault::Timeout,
    Fault::RateLimited,
    Fault::ServerError,
    Fault::ConnectionRefused,
    Fault::Tls,
    Fault::Dns,
    Fault::Malformed,
    Fault::Oversized,
];

impl Fault {
    /// The canonical category the evidence must carry.
    fn category(self) -> &'static str {
        match self {
            Fault::Timeout => "timeout",
            Fault::RateLimited => "status 429",
            Fault::ServerError => "status 500",
            Fault::ConnectionRefused => "connection-refused",
            Fault::Tls => "tls-failure",
            Fault::Dns => "dns-failure",
            Fault::Malformed => "malformed",
            Fault::Oversized => "body-too-large",
        }
    }

    /// The scripted reply for path-level faults.
    fn reply(self, malformed: &str) -> Option<Reply> {
        match self {
            Fault::Timeout => Some(Reply::Hang),
            Fault::RateLimited => Some(Reply::status_with(
                429,
                &[
                    ("retry-after", "1"),
                    ("content-type", "application/problem+json"),
                ],
                r#"{"type":"https://stellar.org/horizon-errors/rate_limit_exceeded","title":"Rate Limit Exceeded","status":429}"#,
            )),
            Fault::ServerError => Some(Reply::status_with(
                500,
                &[("content-type", "application/json")],
                r#"{"error":"Internal server error","status":500}"#,
            )),
            Fault::Malformed => Some(Reply::text(malformed.to_string())),
            Fault::Oversized => Some(Reply::text(vec![b' '; BODY_CAP + 1])),
            Fault::ConnectionRefused | Fault::Tls | Fault::Dns => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    HorizonAssets,
    HorizonAccount,
    StellarToml,
    Directory,
    Blocklist,
    AssetList,
}

const LIST_URL: &str = "https://lists.example.org/list.json";

/// Runs USDC with `fault` injected into `source`; everything else healthy.
fn run_with(source: Source, fault: Fault) -> Run {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let mut args: Vec<String> = [
        "scan",
        "--output",
        "json",
        "--timeout",
        "1",
        "--no-cache",
        "--no-history",
        "--asset-list",
        LIST_URL,
    ]
    .map(String::from)
    .to_vec();
    let mut overrides = Vec::new();
    let (host, path, malformed) = match source {
        Source::HorizonAssets => (
            HORIZON,
            assets_path(USDC.code, USDC.issuer),
            "{\"_embedded\": ",
        ),
        Source::HorizonAccount => (HORIZON, account_path(USDC.issuer), "<html>oops</html>"),
        Source::StellarToml => (USDC.domain, TOML_PATH.to_string(), "[[CURRENCIES]\ncode=="),
        Source::Directory => (EXPERT, directory_path(USDC.issuer), "{\"address\": [1,"),
        Source::Blocklist => (
            EXPERT,
            blocked_path(USDC.domain),
            "{\"domain\":\"circle.com\"}",
        ),
        Source::AssetList => (LISTS, "/list.json".to_string(), "[]"),
    };
    if let Some(reply) = fault.reply(malformed) {
        h.route(host, &path, vec![reply]);
    }
    match fault {
        Fault::ConnectionRefused => {
            overrides.push(format!("{host}:443:127.0.0.1:{}", closed_port()))
        }
        Fault::Tls => overrides.push(h.server.connect_bad_tls(host)),
        Fault::Dns => match source {
            Source::HorizonAssets | Source::HorizonAccount => {
                args.extend(["--horizon-url".into(), "https://horizon.invalid".into()])
            }
            Source::Directory | Source::Blocklist => args.extend([
                "--expert-url".into(),
                "https://api.stellar-expert.invalid".into(),
            ]),
            Source::AssetList => {
                let idx = args.iter().position(|a| a == LIST_URL).unwrap();
                args[idx] = "https://lists.invalid/list.json".into();
            }
            Source::StellarToml => {
                // The issuer advertises a domain that does not resolve.
                h.route(
                    HORIZON,
                    &account_path(USDC.issuer),
                    vec![Reply::json(account_body(
                        USDC.issuer,
                        Some("circle.invalid"),
                        USDC.flags,
                    ))],
                );
                h.route(
                    EXPERT,
                    &blocked_path("circle.invalid"),
                    vec![expert_json(blocked_body("circle.invalid", false))],
                );
                h.route(
                    EXPERT,
                    &directory_path(USDC.issuer),
                    vec![expert_json(directory_body(
                        USDC.issuer,
                        "Test Org",
                        "circle.invalid",
                        &["issuer"],
                    ))],
                );
            }
        },
        _ => {}
    }
    args.push(USDC.id());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    h.assay_with(&refs, &overrides)
}

fn claim_of(report: &Value, source: &str) -> Vec<String> {
    evidence_from(report, source)
        .iter()
        .map(|e| e["claim"].as_str().unwrap().to_string())
        .collect()
}

fn assert_horizon_failure_is_an_error(source: Source) {
    for fault in ALL {
        let run = run_with(source, fault);
        assert_eq!(run.code, 1, "{source:?} {fault:?}: {}", run.stderr);
        assert!(
            run.stdout.is_empty(),
            "{source:?} {fault:?}: a Horizon failure must never be a report: {}",
            run.stdout
        );
        assert!(
            run.stderr.contains("horizon"),
            "{source:?} {fault:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(fault.category()),
            "{source:?} {fault:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn horizon_assets_failure_is_an_error_never_a_report() {
    assert_horizon_failure_is_an_error(Source::HorizonAssets);
}

#[test]
fn horizon_account_failure_is_an_error_never_a_report() {
    assert_horizon_failure_is_an_error(Source::HorizonAccount);
}

#[test]
fn stellar_toml_failure_is_recorded_by_category_and_leaves_the_report_determined() {
    for fault in ALL {
        let run = run_with(Source::StellarToml, fault);
        assert_eq!(run.code, 0, "{fault:?}: {}", run.stderr);
        let report = run.report();
        assert_eq!(report["undetermined"], false, "{fault:?}: {report}");
        assert_eq!(
            report["severity"], "medium",
            "{fault:?}: a toml failure cannot move severity"
        );
        assert_eq!(report["accountability"], "unverified", "{fault:?}");
        assert!(
            strings(&report["mechanics"]).contains(&"domain_unverified".to_string()),
            "{fault:?}: {}",
            report["mechanics"]
        );
        let toml = evidence_from(&report, "stellar.toml");
        assert_eq!(toml.len(), 1, "{fault:?}: {report}");
        assert_eq!(
            toml[0]["claim"],
            format!("not retrievable: {}", fault.category()),
            "{fault:?}"
        );
        assert_eq!(toml[0]["attempted"], true);
        let domain = if matches!(fault, Fault::Dns) {
            "circle.invalid"
        } else {
            "circle.com"
        };
        assert_eq!(
            toml[0]["url"],
            format!("https://{domain}/.well-known/stellar.toml"),
            "{fault:?}"
        );
    }
}

fn assert_reputation_failure_is_undetermined(source: Source, evidence_source: &str) {
    for fault in ALL {
        let run = run_with(source, fault);
        assert_eq!(run.code, 2, "{source:?} {fault:?}: {}", run.stderr);
        let report = run.report();
        assert_eq!(
            report["undetermined"], true,
            "{source:?} {fault:?}: {report}"
        );
        assert_ne!(report["state"], "valid", "{source:?} {fault:?}");
        assert!(
            strings(&report["undetermined_checks"]).contains(&"reputation".to_string()),
            "{source:?} {fault:?}"
        );
        assert_eq!(
            report["severity"], "medium",
            "{source:?} {fault:?}: severity is not raised to compensate"
        );
        let claims = claim_of(&report, evidence_source);
        assert!(
            claims.contains(&format!("not retrievable: {}", fault.category())),
            "{source:?} {fault:?}: {claims:?}"
        );
    }
}

#[test]
fn directory_failure_makes_the_report_undetermined() {
    assert_reputation_failure_is_undetermined(Source::Directory, "stellar.expert/directory");
}

#[test]
fn blocklist_failure_makes_the_report_undetermined() {
    assert_reputation_failure_is_undetermined(Source::Blocklist, "stellar.expert/blocked-domains");
}

#[test]
fn asset_list_failure_alone_leaves_the_report_determined() {
    for fault in ALL {
        let run = run_with(Source::AssetList, fault);
        assert_eq!(run.code, 0, "{fault:?}: {}", run.stderr);
        let report = run.report();
        assert_eq!(report["undetermined"], false, "{fault:?}: {report}");
        assert_eq!(report["accountability"], "verified");
        let claims = claim_of(&report, "asset-list");
        assert_eq!(
            claims,
            vec![format!("not retrievable: {}", fault.category())],
            "{fault:?}"
        );
    }
}

#[test]
fn a_blocklist_hit_still_escalates_when_the_directory_is_down() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    h.route(
        EXPERT,
        &directory_path(USDC.issuer),
        vec![Reply::status(503)],
    );
    h.route(
        EXPERT,
        &blocked_path(USDC.domain),
        vec![expert_json(blocked_body(USDC.domain, true))],
    );
    let run = h.assay(&["scan", "--output", "json", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["severity"], "critical");
    assert_eq!(report["base_severity"], "medium");
    assert_eq!(report["escalated"], true);
    assert_eq!(
        report["undetermined"], false,
        "a positive hit already escalated to the ceiling: {report}"
    );
    assert!(claim_of(&report, "stellar.expert/directory")
        .contains(&"not retrievable: status 503".to_string()));
    assert_eq!(
        h.server.hit_count(EXPERT, &directory_path(USDC.issuer)),
        3,
        "three attempts on 5xx"
    );
}

/// Issue #16 item 10: a blocklist 404 is "read, no entry" (the spec), not an outage; 5xx, 429 and
/// timeouts stay failures (the fault matrix above).
#[test]
fn item10_blocklist_404_is_read_no_entry_not_an_outage() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    h.route(
        EXPERT,
        &blocked_path(USDC.domain),
        vec![Reply::status_with(
            404,
            &[("content-type", "application/json")],
            r#"{"error":"Not found","status":404}"#,
        )],
    );
    let run = h.assay(&["scan", "--output", "json", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["undetermined"], false, "{report}");
    assert!(
        !strings(&report["undetermined_checks"]).contains(&"reputation".to_string()),
        "{report}"
    );
    assert_eq!(report["severity"], "medium", "a 404 never escalates");
    assert_eq!(
        claim_of(&report, "stellar.expert/blocked-domains"),
        vec![r#"domain "circle.com" blocked=false"#.to_string()]
    );
    assert_eq!(
        h.server.hit_count(EXPERT, &blocked_path(USDC.domain)),
        1,
        "an answer is not retried"
    );
}
