//! Issue #16, item 3: a secret key or seed phrase typed anywhere on the command line, in any
//! subcommand, is refused with a usage error that does not contain it.
use std::process::Command;

const SECRET: &str = "SBK2VIYYSVG76E7VC3QHYARNFLY2EAQXDHRC7BMXBBGIFG74ARPRMNQM";
const CONTRACT: &str = "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC";

fn refused(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env_remove("STELLAR_SECRET_KEY")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let phrase_word = "abandon abandon";
    assert_eq!(out.status.code(), Some(64), "{args:?}: {stderr}");
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains(SECRET),
            "{args:?} echoed the secret: {shown}"
        );
        assert!(
            !shown.contains(phrase_word),
            "{args:?} echoed the phrase: {shown}"
        );
    }
    assert!(
        stderr.contains("secret key or seed phrase"),
        "{args:?}: {stderr}"
    );
}

#[test]
fn item3_secrets_on_the_command_line_are_refused_unseen_in_every_subcommand() {
    let phrase = "abandon ".repeat(11) + "about";
    let flag = format!("--source={SECRET}");
    for sub in [
        "scan",
        "history",
        "attestation",
        "attest",
        "verify",
        "watch",
        "localnet",
        "sep41",
        "demo",
    ] {
        refused(&[sub, SECRET]);
        refused(&[sub, flag.as_str()]);
        refused(&[sub, phrase.as_str()]);
    }
    refused(&["sep41", CONTRACT, "--owner-identity", SECRET]);
    refused(&["sep41", SECRET, "--network", "testnet"]);
    refused(&[SECRET]);
}

#[test]
fn item3_urls_in_messages_lose_userinfo_and_query() {
    let asset = "USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
    for (url, code) in [
        // Refused as a base URL (usage error).
        ("ftp://user:pw1@h.example/?apikey=k1", 64),
        // Accepted, then unreachable (nothing listens on port 1): a Horizon error.
        ("http://user:pw1@127.0.0.1:1/?apikey=k1", 1),
    ] {
        // Through the environment: on the command line such a URL is refused before it is used.
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["scan", asset, "--no-history", "--timeout", "5"])
            .env("ASSAY_HORIZON_URL", url)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(code), "{url}: {stderr}");
        assert!(
            stderr.contains("h.example") || stderr.contains("127.0.0.1"),
            "{stderr}"
        );
        for shown in [&stdout, &stderr] {
            assert!(
                !shown.contains("pw1") && !shown.contains("k1"),
                "{url}: {shown}"
            );
        }
    }
}

/// #28 item 4: a Horizon URL with credentials and a key in its path is refused on the command line (the
/// flag named, the value not shown), and given through the environment it is used but reaches no report,
/// no evidence line, no history row and no `serve` answer.
#[test]
fn operator_urls_stay_out_of_evidence_history_and_serve() {
    use crate::common::{Harness, HORIZON, USDC};
    use assay_scan::testsupport::Reply;

    const KEY: &str = "9f3b2c7d1e8a4b6c9d0e1f2a3b4c5d6e";
    let private = format!("https://operator:pw1@{HORIZON}/{KEY}");
    let h = Harness::new(&[USDC.domain]);

    // On the command line, as one word or two: refused before anything runs, and never echoed.
    for args in [
        vec![
            "scan".to_string(),
            USDC.id(),
            "--horizon-url".into(),
            private.clone(),
        ],
        vec!["scan".into(), USDC.id(), format!("--horizon-url={private}")],
        vec![
            "verify".into(),
            USDC.id(),
            "--rpc-url".into(),
            format!("https://rpc.example/?apikey={KEY}"),
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{args:?}: {stderr}");
        let flag = if args.iter().any(|a| a.starts_with("--rpc-url")) {
            "--rpc-url"
        } else {
            "--horizon-url"
        };
        assert!(
            stderr.contains(flag)
                && (stderr.contains("ASSAY_HORIZON_URL") || stderr.contains("STELLAR_RPC_URL")),
            "{stderr}"
        );
        assert!(!stderr.contains("pw1") && !stderr.contains(KEY), "{stderr}");
    }

    // Through the environment: the scan reads Horizon under the key's path, and shows neither.
    USDC.route_all(&h);
    for (path, replies) in [
        (
            format!("/{KEY}/"),
            vec![Reply::horizon_root(assay_core::PUBNET_PASSPHRASE)],
        ),
        (
            format!(
                "/{KEY}{}",
                crate::common::assets_path(USDC.code, USDC.issuer)
            ),
            vec![Reply::json(crate::common::assets_body(
                USDC.code,
                USDC.issuer,
                USDC.flags,
            ))],
        ),
        (
            format!("/{KEY}{}", crate::common::account_path(USDC.issuer)),
            vec![Reply::json(crate::common::account_body(
                USDC.issuer,
                Some(USDC.domain),
                USDC.flags,
            ))],
        ),
    ] {
        h.route(HORIZON, &path, replies);
    }
    let run = h.assay_env(
        &["scan", &USDC.id(), "--output", "json"],
        &[],
        &[("ASSAY_HORIZON_URL", &private)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report();
    let horizon: Vec<&serde_json::Value> = crate::common::evidence_from(&report, "horizon");
    assert!(
        horizon.iter().any(|e| e["url"]
            .as_str()
            .is_some_and(|u| u.starts_with(&format!("https://{HORIZON}/(redacted)/")))),
        "the evidence names the Horizon it read, redacted: {horizon:?}"
    );
    // The stored rows themselves, evidence included (what `assay history` lists is a summary of them).
    let stored: String = assay_scan::history::History::open_existing(&h.history_path())
        .unwrap()
        .expect("the scan recorded its report")
        .list(&USDC.id())
        .unwrap()
        .rows
        .into_iter()
        .map(|row| row.report_json)
        .collect();
    let served = crate::serve_cli::serve(&h.history_path());
    let (status, _, page) =
        crate::serve_cli::get(&served.addr, &format!("/v1/assets/{}", USDC.id()));
    assert_eq!(status, 200, "{page}");
    for (what, shown) in [
        ("scan stdout", &run.stdout),
        ("scan stderr", &run.stderr),
        ("history", &stored),
        ("serve", &page),
    ] {
        if what != "scan stderr" {
            assert!(
                shown.contains(HORIZON),
                "{what} names the source's host: {shown}"
            );
        }
        assert!(
            !shown.contains("pw1") && !shown.contains("operator:") && !shown.contains(KEY),
            "{what} leaks the operator's URL: {shown}"
        );
    }
}

/// #36 item 3: an RPC URL that carries its API key in a path segment (`https://rpc.example/KEY/`), given
/// through the environment, is used, and the key reaches no report, evidence line, history row, `serve`
/// page (JSON or HTML), log line or error; an unreachable one fails naming the redacted URL only.
#[test]
fn an_rpc_key_in_the_url_path_reaches_no_report_history_page_or_error() {
    use crate::world::World;

    const KEY: &str = "k7Xq2m9Pz4Rt8Vb1Nc6Lw3Hd5Fj0Gs";
    let w = World::start(&[]);
    let ca = w.ca();
    let token = w.deploy_token("conformant_token", 91);
    w.mint(token, 17);
    let id = format!("{}", stellar_strkey::Contract(token));
    let origin = w.net.rpc_url().trim_end_matches("/rpc").to_string();
    let store = tempfile::tempdir().unwrap();
    let history = store.path().join("history.sqlite3");
    let run = |rpc_url: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["scan", &id, "--network", "local", "--output", "json"])
            .args(["--history", &history.display().to_string()])
            .args(["--network-passphrase", w.net.passphrase()])
            .args(w.source_args(&ca))
            .env("STELLAR_RPC_URL", rpc_url)
            .env("HOME", w.dir.path())
            .env_remove("ASSAY_HISTORY")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, stdout, stderr) = run(&format!("{origin}/{KEY}/"));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(stdout.lines().next().unwrap_or("")).expect("a report");
    assert_eq!(report["asset"]["contract"], id.as_str(), "{report}");
    // The same URL, unreachable (nothing listens on port 9): the error names it redacted.
    let dead = format!("http://127.0.0.1:9/{KEY}/");
    let (dead_code, dead_stdout, dead_stderr) = run(&dead);
    assert_ne!(dead_code, Some(0), "{dead_stdout}{dead_stderr}");
    let stored: String = assay_scan::history::History::open_existing(&history)
        .unwrap()
        .expect("the scan recorded its report")
        .list(&id)
        .unwrap()
        .rows
        .into_iter()
        .map(|row| row.report_json)
        .collect();
    let served = crate::serve_cli::serve(&history);
    let (status, _, json_page) = crate::serve_cli::get(&served.addr, &format!("/v1/assets/{id}"));
    assert_eq!(status, 200, "{json_page}");
    let (status, _, html_page) = crate::serve_cli::get(&served.addr, &format!("/assets/{id}"));
    assert_eq!(status, 200, "{html_page}");
    for (what, shown) in [
        ("scan stdout", &stdout),
        ("scan stderr", &stderr),
        ("failed scan stdout", &dead_stdout),
        ("failed scan stderr", &dead_stderr),
        ("history", &stored),
        ("serve JSON", &json_page),
        ("serve page", &html_page),
    ] {
        assert!(!shown.contains(KEY), "{what} leaks the RPC key: {shown}");
    }
    assert!(!stored.is_empty());
}
