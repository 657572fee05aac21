//! A token author's in-test run (assay-testkit) and `assay sep41 --wasm` reach the same verdicts: for every
//! token of fixtures/ and fixtures/third-party an offline run can deploy (the list: fixture_tokens.rs), the
//! per-check statuses, the exit code and the powers discovery observed are equal, and so for the tokens
//! deployed with a set-up file (`--setup` / `Token::setup_file`); a token neither can set up is refused by
//! both with the same message. Prints each token's in-test figure (discovery plus suite) as
//! `testkit bench:` lines.
use assay_testkit::Token;
use serde_json::Value;

use crate::fixture_tokens::{ensure_built, set_up_tokens, tokens, wasm, FixtureToken};

/// (function, kind) of each power, sorted: what discovery observed, free of run-specific addresses.
fn powers_of(survey: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = (survey["powers"].as_array().unwrap().iter())
        .map(|p| {
            (
                p["function"].as_str().unwrap().to_string(),
                p["effect"].as_str().unwrap().to_string(),
            )
        })
        .chain(
            (survey["unclassified"].as_array().unwrap().iter()).map(|w| {
                (
                    w["function"].as_str().unwrap().to_string(),
                    "unclassified".to_string(),
                )
            }),
        )
        .collect();
    out.sort();
    out
}

#[test]
fn the_in_test_run_and_the_cli_agree_on_every_fixture_and_third_party_token() {
    let tokens = tokens();
    let count = |prefix: &str| tokens.iter().filter(|t| t.name.starts_with(prefix)).count();
    assert!(count("defect_token_") >= 16, "{tokens:?}");
    assert!(count("power_token_") >= 8, "{tokens:?}");
    assert_eq!(count("tp_"), 7, "{tokens:?}");
    ensure_built(&tokens);
    let cases = (tokens.into_iter()).map(
        |FixtureToken {
             name,
             args,
             mint_fn,
         }| {
            let path = wasm(&name);
            let cli = [
                "--constructor-args",
                &args.to_string(),
                "--mint-fn",
                mint_fn,
            ]
            .map(String::from);
            let kit = Token::wasm_file(&path)
                .constructor_args(args.to_string())
                .mint_fn(mint_fn);
            (name, cli.to_vec(), kit)
        },
    );
    assert_equivalent(cases);
}

#[test]
fn the_in_test_run_and_the_cli_agree_on_tokens_deployed_with_a_set_up_file() {
    let cases = set_up_tokens().into_iter().map(|t| {
        t.ensure_built();
        let setup = t.setup_path();
        let cli = vec!["--setup".to_string(), setup.display().to_string()];
        (
            t.name.to_string(),
            cli,
            Token::wasm_file(wasm(t.name)).setup_file(&setup),
        )
    });
    assert_equivalent(cases);
}

/// For each token (its name, the `assay sep41 --wasm` arguments after the WASM, the in-test token): the
/// in-test run's statuses, exit code and powers equal `assay sep41 --wasm`'s. The CLI runs in its own
/// process while the in-test run goes on in this one: two cores, half the time.
fn assert_equivalent(cases: impl Iterator<Item = (String, Vec<String>, Token)>) {
    for (name, cli_args, kit) in cases {
        let path = wasm(&name);
        let cli = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["sep41", "--wasm", path.to_str().unwrap()])
            .args(&cli_args)
            .args(["--output", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("assay runs");
        let kit = kit.run();
        let out = cli.wait_with_output().expect("assay runs");
        let suite = match kit {
            Ok(suite) => suite,
            // A token neither can set up: the CLI refuses it too, with the same message, as a usage error
            // (the token offers no way to fund a holder: the upgradable fixture has no mint function; the
            // RWA token's `mint` takes an operator, so without its set-up file nothing funds the holder).
            Err(why) => {
                let why = why.to_string();
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(64), "{name}: {stderr}");
                assert!(
                    without_ids(&stderr).contains(&without_ids(&why)),
                    "{name}: {why}\n{stderr}"
                );
                println!("testkit bench: {name}: refused by both before the suite: {why}");
                continue;
            }
        };
        println!(
            "testkit bench: {name}: discovery + suite {:.1} s (setup {:.1} s)",
            (suite.discovery_time + suite.suite_time).as_secs_f64(),
            suite.setup_time.as_secs_f64()
        );
        let cli_json: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let cli_rows: Vec<(String, String)> = (cli_json["results"].as_array().unwrap().iter())
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["status"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let kit_rows: Vec<(String, String)> = (suite.report.results.iter())
            .map(|r| (r.id.to_string(), r.status.as_str().to_string()))
            .collect();
        assert_eq!(kit_rows, cli_rows, "{name}: per-check statuses");
        assert_eq!(
            out.status.code(),
            Some(suite.report.exit_code() as i32),
            "{name}: exit code"
        );
        let kit_powers =
            serde_json::to_value(suite.powers.as_ref().expect("discovery ran")).unwrap();
        assert_eq!(
            powers_of(&kit_powers),
            powers_of(&cli_json["powers"]),
            "{name}: powers"
        );
        assert_eq!(
            kit_powers["unobservable"], cli_json["powers"]["unobservable"],
            "{name}"
        );
    }
}

/// `text` with what differs between two runs of the same token left out: each deploys its own contract and
/// parties, so addresses (56 base32 characters) and contract hashes (64 hex digits) become `…`.
fn without_ids(text: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let id = (word.len() == 56
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || ('2'..='7').contains(&c)))
            || (word.len() == 64 && word.chars().all(|c| c.is_ascii_hexdigit()));
        out.push_str(if id { "…" } else { word });
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}
