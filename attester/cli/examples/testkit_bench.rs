//! The in-test cost a token author pays: for each token of fixtures/ and fixtures/third-party (the lists the
//! equivalence test runs, the tokens deployed with a set-up file among them), one assay-testkit run (power discovery plus the 27-check suite, on a fresh
//! embedded network), timed, one token after another so no two share the cores.
//!
//! ```sh
//! cargo run -p assay-cli --example testkit_bench                      # every token
//! cargo run -p assay-cli --example testkit_bench -- tp_oz_allowlist   # the tokens whose names contain it
//! ```
//!
//! Prints per token `discovery + suite` in seconds (the figure the ≤ 10 s target is about), with setup,
//! discovery and suite apart and discovery's invocation count; then the slowest and the total. Build it with
//! the test profile (the default here) to see what `cargo test` sees.
use std::time::Instant;

use assay_testkit::Token;

#[path = "../tests/it/fixture_tokens.rs"]
mod fixture_tokens;

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).collect();
    let chosen =
        |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()));
    let standalone: Vec<fixture_tokens::FixtureToken> = (fixture_tokens::tokens().into_iter())
        .filter(|t| chosen(&t.name))
        .collect();
    fixture_tokens::ensure_built(&standalone);
    let mut tokens: Vec<(String, Token)> = (standalone.iter())
        .map(|t| {
            let token = Token::wasm_file(fixture_tokens::wasm(&t.name))
                .constructor_args(t.args.to_string())
                .mint_fn(t.mint_fn);
            (t.name.clone(), token)
        })
        .collect();
    for t in fixture_tokens::set_up_tokens() {
        if chosen(t.name) {
            t.ensure_built();
            let token = Token::wasm_file(fixture_tokens::wasm(t.name)).setup_file(t.setup_path());
            tokens.push((format!("{} (set-up file)", t.name), token));
        }
    }
    if tokens.is_empty() {
        eprintln!("testkit_bench: no token's name contains any of {filters:?}");
        std::process::exit(64);
    }
    println!(
        "{:<44} {:>8} {:>8} {:>10} {:>8} {:>12}",
        "token", "d+s (s)", "setup", "discovery", "suite", "invocations"
    );
    let started = Instant::now();
    let mut slowest = (String::new(), 0.0f64);
    let mut over = 0;
    for (name, token) in &tokens {
        let suite = match token.run() {
            Ok(suite) => suite,
            Err(why) => {
                println!("{name:<44} refused before the suite: {why}");
                continue;
            }
        };
        let figure = (suite.discovery_time + suite.suite_time).as_secs_f64();
        let invocations = suite
            .powers
            .as_ref()
            .map_or("-".to_string(), |s| s.invocations.to_string());
        println!(
            "{:<44} {:>8.1} {:>8.1} {:>10.1} {:>8.1} {:>12}",
            name,
            figure,
            suite.setup_time.as_secs_f64(),
            suite.discovery_time.as_secs_f64(),
            suite.suite_time.as_secs_f64(),
            invocations
        );
        if figure > slowest.1 {
            slowest = (name.clone(), figure);
        }
        if figure > 10.0 {
            over += 1;
        }
    }
    println!(
        "slowest: {} {:.1} s; {over} over 10 s; {} tokens in {:.1} s",
        slowest.0,
        slowest.1,
        tokens.len(),
        started.elapsed().as_secs_f64()
    );
}
