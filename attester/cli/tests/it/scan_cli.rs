//! `assay scan` end to end over real HTTPS against local replay servers.
use crate::common;

use assay_scan::testsupport::Reply;
use common::*;

#[test]
fn healthy_subject_is_a_complete_report_with_attributed_evidence() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let run = h.assay(&[
        "scan",
        "--output",
        "json",
        "--asset-list",
        "https://lists.example.org/list.json",
        &USDC.id(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["severity"], "medium");
    assert_eq!(report["accountability"], "verified");
    assert_eq!(report["undetermined"], false);
    assert_eq!(report["state"], "valid");
    let toml = evidence_from(&report, "stellar.toml");
    assert_eq!(
        toml[0]["url"],
        "https://circle.com/.well-known/stellar.toml"
    );
    assert_eq!(toml[0]["claim"], format!("CURRENCIES claims {}", USDC.id()));
    let horizon = evidence_from(&report, "horizon");
    assert_eq!(
        horizon[0]["url"],
        format!(
            "https://horizon.stellar.org/assets?asset_code=USDC&asset_issuer={}",
            USDC.issuer
        )
    );
    let _ = Reply::status(200);
}

#[test]
fn a_report_binds_the_scanner_version_into_its_evidence_hash() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let run = h.assay(&["scan", "--output", "json", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.report();
    let version = concat!("v", env!("CARGO_PKG_VERSION"));
    assert_eq!(json["scanner_bound"], version);
    assert_eq!(assay_scan::SCANNER_VERSION, version);
    // The v3 preimage carries it as its `scanner` line, so a hash names the scanner that made it.
    let report: assay_core::Report = serde_json::from_value(json).unwrap();
    let input = assay_core::PreimageInput::from_report(&report).unwrap();
    let preimage = assay_core::preimage(&input, assay_core::EvidenceVersion::V3);
    assert!(
        preimage.contains(&format!("\nscanner\t{version}\n")),
        "{preimage}"
    );
}

#[test]
fn text_output_puts_severity_beside_accountability() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let run = h.assay(&["scan", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    println!("{}", run.stdout);
    assert!(
        run.stdout
            .contains("severity: MEDIUM    |    accountability: VERIFIED"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("could not be checked:\n    nothing: every source answered"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("[stellar.toml] CURRENCIES claims USDC-"),
        "{}",
        run.stdout
    );
}

#[test]
fn bad_input_is_a_one_line_usage_error_naming_the_input() {
    let h = Harness::new(&[]);
    let bad_checksum = format!("USDC-{}A", &USDC.issuer[..55]);
    let cases: Vec<(String, &str)> = vec![
        ("".into(), "the asset is empty"),
        ("USDC".into(), "no '-' or ':'"),
        ("USDC-NOTAKEY".into(), "56-character"),
        (bad_checksum, "checksum"),
        (format!("ABCDEFGHIJKLM-{}", USDC.issuer), "longer than 12"),
        (format!("US DC-{}", USDC.issuer), "other than ASCII"),
        (format!("-{}", USDC.issuer), "code is empty"),
        ("\u{1F600}-\u{7}".into(), "other than ASCII"),
    ];
    for (input, reason) in cases {
        let run = h.assay(&["scan", "--no-history", "--", &input]);
        assert_eq!(run.code, 64, "{input:?}: {}", run.stderr);
        assert!(run.stdout.is_empty());
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{input:?}: {}", run.stderr);
        assert!(
            lines[0].contains(&format!("{input:?}")),
            "{input:?}: {}",
            lines[0]
        );
        assert!(
            lines[0].contains(reason) && lines[0].contains("expected CODE-ISSUER or CODE:ISSUER"),
            "{}",
            lines[0]
        );
        assert!(!run.stderr.contains("panicked"));
    }
    // No asset at all, and malformed options, are usage errors too.
    assert_eq!(h.assay(&["scan", "--no-history"]).code, 64);
    for (flag, value) in [
        ("--connect-to", "horizon.stellar.org:443"),
        ("--resolve", "horizon.stellar.org:443:not-an-ip"),
        ("--horizon-url", "ftp://x"),
        ("--output", "yaml"),
        ("--network", "nosuchnet"),
        ("--cacert", "/nonexistent/ca.pem"),
        ("--timeout", "0"),
    ] {
        let run = h.assay(&["scan", "--no-history", flag, value, &USDC.id()]);
        assert_eq!(run.code, 64, "{flag} {value}: {}", run.stderr);
        assert!(
            run.stderr.contains(value) || run.stderr.contains(flag),
            "{flag}: {}",
            run.stderr
        );
    }
}

#[test]
fn colon_form_and_several_assets_give_one_report_per_line_sharing_issuer_answers() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    // A second asset of the same issuer: the account, toml, directory and blocklist are read once.
    h.route(
        HORIZON,
        &assets_path("EURC", USDC.issuer),
        vec![Reply::json(assets_body("EURC", USDC.issuer, USDC.flags))],
    );
    let colon = format!("USDC:{}", USDC.issuer);
    let eurc = format!("EURC-{}", USDC.issuer);
    let run = h.assay(&[
        "scan",
        "--output",
        "json",
        "--no-cache",
        "--no-history",
        &colon,
        &eurc,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let reports = run.reports();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["asset"]["code"], "USDC");
    assert_eq!(reports[1]["asset"]["code"], "EURC");
    assert_eq!(
        reports[1]["accountability"], "unverified",
        "circle.com's toml claims USDC only"
    );
    assert_eq!(h.server.hit_count(HORIZON, &account_path(USDC.issuer)), 1);
    assert_eq!(h.server.hit_count(USDC.domain, TOML_PATH), 1);
    assert_eq!(h.server.hit_count(EXPERT, &directory_path(USDC.issuer)), 1);
    assert_eq!(h.server.hit_count(EXPERT, &blocked_path(USDC.domain)), 1);
}

#[test]
fn unknown_asset_is_an_error_and_other_assets_still_report() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    h.route(
        HORIZON,
        &assets_path("NOPE", USDC.issuer),
        vec![Reply::json(r#"{"_links":{},"_embedded":{"records":[]}}"#)],
    );
    let nope = format!("NOPE-{}", USDC.issuer);
    let run = h.assay(&[
        "scan",
        "--output",
        "json",
        "--no-history",
        &nope,
        &USDC.id(),
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.reports().len(), 1, "USDC still reports");
    assert!(
        run.stderr.contains("unknown asset") && run.stderr.contains(&nope),
        "{}",
        run.stderr
    );
    // An issuer account Horizon does not know (yFLR's shape: /assets has a record, /accounts is 404).
    h.route(
        HORIZON,
        &account_path(USDC.issuer),
        vec![Reply::status(404)],
    );
    let run = h.assay(&["scan", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("issuer account not found"),
        "{}",
        run.stderr
    );
}

#[test]
fn redirect_to_www_is_followed_and_both_urls_recorded() {
    let h = Harness::new(&[USDC.domain, "www.circle.com"]);
    USDC.route_all(&h);
    h.route(
        USDC.domain,
        TOML_PATH,
        vec![Reply::redirect(
            "https://www.circle.com/.well-known/stellar.toml",
        )],
    );
    h.route("www.circle.com", TOML_PATH, vec![Reply::status(404)]);
    let run = h.assay(&["scan", "--output", "json", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report();
    let toml = evidence_from(&report, "stellar.toml");
    assert_eq!(toml[0]["claim"], "not retrievable: status 404");
    assert_eq!(
        toml[0]["url"],
        "https://circle.com/.well-known/stellar.toml"
    );
}

#[test]
fn a_foreign_redirect_is_recorded_as_refused_never_as_a_claim() {
    let h = Harness::new(&[USDC.domain, "evil.example"]);
    USDC.route_all(&h);
    h.route(
        USDC.domain,
        TOML_PATH,
        vec![Reply::redirect(
            "https://evil.example/.well-known/stellar.toml",
        )],
    );
    h.route(
        "evil.example",
        TOML_PATH,
        vec![Reply::text(toml_claiming(USDC.code, USDC.issuer))],
    );
    let run = h.assay(&["scan", "--output", "json", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["accountability"], "unverified");
    let toml = evidence_from(&report, "stellar.toml");
    assert_eq!(toml[0]["refused"], true, "{report}");
    assert!(
        toml[0]["claim"].as_str().unwrap().starts_with("refused: "),
        "{}",
        toml[0]["claim"]
    );
    assert!(toml[0]["claim"].as_str().unwrap().contains("evil.example"));
    assert_eq!(h.server.hit_count("evil.example", TOML_PATH), 0);
}

#[test]
fn stellar_expert_429_is_retried_honouring_retry_after() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let path = directory_path(USDC.issuer);
    h.route(
        EXPERT,
        &path,
        vec![
            Reply::status_with(429, &[("retry-after", "1")], "slow down"),
            expert_json(directory_body(
                USDC.issuer,
                "Test Org",
                USDC.domain,
                &["issuer"],
            )),
        ],
    );
    let run = h.assay(&[
        "scan",
        "--output",
        "json",
        "--no-cache",
        "--no-history",
        &USDC.id(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.report()["undetermined"], false);
    assert_eq!(h.server.hit_count(EXPERT, &path), 2);
}

#[test]
fn stellar_expert_answers_are_cached_with_their_original_time_and_failures_are_not() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    let dir_path = directory_path(USDC.issuer);
    let first = h
        .assay(&["scan", "--output", "json", "--no-history", &USDC.id()])
        .report();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = h
        .assay(&["scan", "--output", "json", "--no-history", &USDC.id()])
        .report();
    assert_eq!(
        h.server.hit_count(EXPERT, &dir_path),
        1,
        "the second scan reads the cache"
    );
    let at = |r: &serde_json::Value| {
        evidence_from(r, "stellar.expert/directory")[0]["retrieved_at"].clone()
    };
    assert_eq!(
        at(&first),
        at(&second),
        "a cache hit keeps the original retrieved_at"
    );
    assert_ne!(first["scanned_at"], second["scanned_at"]);
    // Horizon is never cached.
    assert_eq!(h.server.hit_count(HORIZON, &account_path(USDC.issuer)), 2);
    // --no-cache goes to the source.
    h.assay(&["scan", "--no-cache", "--no-history", &USDC.id()]);
    assert_eq!(h.server.hit_count(EXPERT, &dir_path), 2);
    // A failure is never cached: with a fresh cache dir, a 500 then a recovery.
    let fresh = h.dir.path().join("fresh-cache");
    let fresh = fresh.to_str().unwrap();
    h.route(EXPERT, &blocked_path(USDC.domain), vec![Reply::status(500)]);
    let failed = h.assay(&[
        "scan",
        "--output",
        "json",
        "--no-history",
        "--cache-dir",
        fresh,
        &USDC.id(),
    ]);
    assert_eq!(failed.code, 2);
    h.route(
        EXPERT,
        &blocked_path(USDC.domain),
        vec![expert_json(blocked_body(USDC.domain, false))],
    );
    h.server.clear_hits();
    let recovered = h.assay(&[
        "scan",
        "--output",
        "json",
        "--no-history",
        "--cache-dir",
        fresh,
        &USDC.id(),
    ]);
    assert_eq!(recovered.code, 0, "{}", recovered.stderr);
    assert_eq!(h.server.hit_count(EXPERT, &blocked_path(USDC.domain)), 1);
}

#[test]
fn history_records_every_report_and_lists_transitions() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    assert_eq!(
        h.assay(&["history", &USDC.id()]).code,
        4,
        "nothing recorded yet"
    );
    assert_eq!(h.assay(&["scan", "--no-cache", &USDC.id()]).code, 0);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // The issuer adds clawback: a capability transition.
    let clawback = Flags(false, true, false, true);
    h.route(
        HORIZON,
        &assets_path(USDC.code, USDC.issuer),
        vec![Reply::json(assets_body(USDC.code, USDC.issuer, clawback))],
    );
    h.route(
        HORIZON,
        &account_path(USDC.issuer),
        vec![Reply::json(account_body(
            USDC.issuer,
            Some(USDC.domain),
            clawback,
        ))],
    );
    assert_eq!(h.assay(&["scan", "--no-cache", &USDC.id()]).code, 0);
    let run = h.assay(&["history", "--output", "json", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let listing: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(listing["observations"].as_array().unwrap().len(), 2);
    let t = &listing["transitions"][0];
    assert_eq!(t["state"], "valid");
    assert_eq!(strings(&t["added"]), ["auth_clawback_enabled"]);
    assert_eq!(t["attribution"], "capability");
    assert_eq!(t["severity_before"], "medium");
    assert_eq!(t["severity_after"], "high");
    let text = h.assay(&["history", &USDC.id()]);
    assert!(
        text.stdout.contains("added auth_clawback_enabled"),
        "{}",
        text.stdout
    );
    // --no-history leaves the store untouched.
    h.assay(&["scan", "--no-cache", "--no-history", &USDC.id()]);
    let run = h.assay(&["history", "--output", "json", &USDC.id()]);
    let listing: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(listing["observations"].as_array().unwrap().len(), 2);
}

#[test]
fn an_undetermined_report_never_renders_like_a_clean_one() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    h.route(
        EXPERT,
        &directory_path(USDC.issuer),
        vec![Reply::status(503)],
    );
    let run = h.assay(&["scan", "--no-cache", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("state: unknown: the scan could not be completed"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("every source answered"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("check reputation"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("stellar.expert/directory: not retrievable: status 503"),
        "{}",
        run.stdout
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let h = Harness::new(&[]);
    for command in ["scan", "history"] {
        let run = h.assay(&[command, "--help"]);
        assert_eq!(run.code, 0);
        assert!(run.stdout.contains("Exit codes:"), "{}", run.stdout);
        assert!(run.stdout.contains("64  usage error"), "{}", run.stdout);
    }
}

/// Issue #16 item 2: a Horizon serving another network (a leftover testnet ASSAY_HORIZON_URL) is
/// refused before anything is read from it: an error naming the URL (credentials redacted) and both
/// passphrases, no report.
#[test]
fn item2_scan_refuses_a_horizon_that_serves_another_network() {
    let h = Harness::new(&[USDC.domain]);
    USDC.route_all(&h);
    h.route(
        HORIZON,
        "/",
        vec![Reply::horizon_root(assay_core::TESTNET_PASSPHRASE)],
    );
    // A URL with credentials goes in the environment (the command line refuses it).
    let run = h.assay_env(
        &["scan", "--output", "json", "--no-history", &USDC.id()],
        &[],
        &[(
            "ASSAY_HORIZON_URL",
            "https://ops:hunter2@horizon.stellar.org",
        )],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "no report: {}", run.stdout);
    for needle in [
        "https://horizon.stellar.org serves the network",
        assay_core::TESTNET_PASSPHRASE,
        assay_core::PUBNET_PASSPHRASE,
        "--horizon-url",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
    assert_eq!(
        h.server
            .hit_count(HORIZON, &assets_path(USDC.code, USDC.issuer)),
        0,
        "nothing is read from the wrong network"
    );

    // A root that does not name its network is not taken on trust either.
    h.route(HORIZON, "/", vec![Reply::json("{}")]);
    let run = h.assay(&["scan", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("network_passphrase") && run.stdout.is_empty(),
        "{}",
        run.stderr
    );

    // The matching network scans as before.
    h.route(
        HORIZON,
        "/",
        vec![Reply::horizon_root(assay_core::PUBNET_PASSPHRASE)],
    );
    let run = h.assay(&["scan", "--output", "json", "--no-history", &USDC.id()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.report()["severity"], "medium");
}
