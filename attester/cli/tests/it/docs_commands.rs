//! Every command shown in README.md, DEVELOPERS.md and docs/*.md works as shown.
//!
//! The commands are extracted from the fenced `sh` blocks, so a doc edit cannot drift from what is tested:
//! each one is either run here, as written, or named in [`COVERED_ELSEWHERE`] with what exercises it. A
//! command that is neither makes the test fail, and so does a fenced block with no language tag (tag
//! commands `sh`, output `text`).
//!
//! The "real network" lines run unchanged against local stand-ins, set up only through the environment a
//! reader could set too:
//! - `testnet` is a stellar-cli network file (`$STELLAR_CONFIG_HOME/network/testnet.toml`) pointing at the
//!   `assay localnet` started from docs/localnet.md's own command line (`STELLAR_LOCALNET_PORT=0`);
//!   stellar-cli and `assay` both read that directory;
//! - mainnet Horizon, StellarExpert and the issuers' `stellar.toml` hosts are the recorded answers of
//!   testdata/eval replayed over local HTTPS (`ASSAY_CONNECT_TO`, `ASSAY_CACERT`);
//! - shell variables the docs define (`REGISTRY`, `SAC`, `GATE`) carry from one line to the next, as in a
//!   reader's shell; `REPLAY_PORT` and `REPLAY_CA` (docs/scan.md) are set to the replay server's.
//!
//! The README's demo transcript is compared with a real `assay demo` run, line by line, with run-dependent
//! values (ports, hashes, ledger numbers, ages, the wall time, contract ids) masked and the README's
//! `[…]` trim markers standing for any number of lines.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assay_scan::testsupport::{ReplayServer, Reply};

/// Doc commands that are not run here, each with what runs it. Every entry must still appear in the docs.
const COVERED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "createdb -O assay assay",
        "the operator's own PostgreSQL server; the tests make each database with CREATE DATABASE on the \
         private cluster scripts/postgres.sh starts (assay_scan::testsupport::postgres)",
    ),
    (
        "export ASSAY_DATABASE_URL='postgres://assay:…@db.internal/assay'",
        "attester/cli/tests/it/database_cli.rs and watch_workers.rs (ASSAY_DATABASE_URL naming the test \
         database, password-less on the private cluster)",
    ),
    (
        "assay history copy --history /var/lib/assay/history.sqlite3",
        "attester/cli/tests/it/database_cli.rs::a_copied_history_serves_alike_from_two_replicas_and_watch_writes_postgres_directly \
         (this command with --to, then every listing and served answer compared between the file and the database)",
    ),
    (
        "assay sep41 --wasm target/wasm/tp_oz_rwa_token.wasm --setup fixtures/third-party/oz-rwa.setup.json",
        "attester/cli/tests/it/modes_cli.rs::every_mode_finds_the_same_powers_on_tokens_deployed_with_a_set_up_file \
         (this command as written, with --output json, its powers compared with the two network modes') and \
         testkit_equivalence.rs (the same against Token::setup_file)",
    ),
    (
        "scripts/demo.sh",
        "`.ci/run`'s first step, on a fresh clone before anything is built; its `assay demo` is also run and \
         compared with the README transcript below",
    ),
    ("scripts/test.sh", "`.ci/run` runs exactly this command, after scripts/demo.sh"),
    (
        "cargo install --path attester/cli --locked",
        "scripts/test.sh's `the README's install line` step (into a scratch --root with --debug, then `assay \
         --version`): a release build of the whole graph has no place under this script's timeout, and CI \
         compiles the graph once, in the dev profile",
    ),
    (
        "sudo apt-get update && sudo apt-get install -y rustc-web rust-web-src cargo-web rust-web-llvm lld-22 binaryen",
        "scripts/build-wasm.sh installs these packages itself when they are missing (scripts/test.sh's \
         `contracts to wasm` step on a fresh machine); installing system packages is not a test's business",
    ),
    (
        "ASSAY_OWNER_SECRET=S… ASSAY_SPENDER_SECRET=S… assay sep41 C… --network testnet --live",
        "attester/cli/tests/it/sep41_cli.rs::live_mode_over_rpc_with_keys_from_env_passes_a_conformant_token \
         (keys in these variables, a token deployed on the local network; the network given as its RPC URL \
         and passphrase)",
    ),
    (
        "assay sep41 C… --network testnet",
        "attester/cli/tests/it/sep41_fork.rs::fork_run_discovers_the_holder_submits_nothing_upstream_and_replays_its_cache \
         (a token deployed on a local upstream, no secret in the environment; the network given as its RPC URL \
         and passphrase)",
    ),
    (
        "assay sep41 C… --network testnet --holder G… --fork-cache token.json",
        "attester/cli/tests/it/sep41_fork.rs (fork_run_takes_over_the_holder_given_with_holder; the cache recorded \
         and replayed with the upstream stopped in fork_run_discovers_the_holder_submits_nothing_upstream_and_replays_its_cache)",
    ),
    (
        "assay localnet --port 8001 --fork-rpc-url http://127.0.0.1:8000/rpc --fork-cache fork.json",
        "attester/cli/tests/it/localnet_fork_cli.rs::assay_localnet_forks_a_second_assay_localnet_and_replays_its_cache \
         (both networks on free ports)",
    ),
    (
        "cargo run --release -p assay-sep41 --example fork_bench",
        "benchmark program: compiled by scripts/test.sh (`cargo clippy --workspace --all-targets`); its \
         package and example are checked to exist here",
    ),
    (
        "assay attest USDC-GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5 --registry \"$REGISTRY\" --source assay-attester --network testnet --sep41",
        "attester/cli/tests/it/attest_sep41_cli.rs::attest_with_sep41_binds_the_suite_and_refuses_missing_premises \
         (no suite key: keyless on a fork of the local network, a classic asset with its SAC; the network given \
         as its RPC URL and passphrase; the keyed variant the prose describes runs in the same test)",
    ),
    (
        "cargo test -p assay-localnet",
        "scripts/test.sh (`cargo test --workspace`)",
    ),
    (
        "cargo test -p assay-localnet --test it interop_js::",
        "scripts/test.sh (`cargo test --workspace`; scripts/setup.sh installs the npm packages)",
    ),
    (
        "cd examples/integrator && cargo test --locked",
        "scripts/test.sh's `consumer projects` step (from that directory, with a fresh CARGO_TARGET_DIR)",
    ),
    (
        "scripts/ts-bindings.sh target/wasm/assay_registry.wasm",
        "attester/cli/tests/it/integrator_ts.rs (generates the bindings, compiles them with read.ts, reads with them)",
    ),
    (
        "node examples/typescript/dist/read.js https://soroban-testnet.stellar.org \"Test SDF Network ; September 2015\" \"$REGISTRY\" USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
        "attester/cli/tests/it/integrator_ts.rs::typescript_bindings_read_the_safety_assay_verify_reports (the \
         local network's RPC URL and passphrase, its registry, an attested and an unattested asset)",
    ),
    (
        "cargo run --release -p assay-localnet --example throughput -- --accounts 20 --rounds 5 --ledger-close-ms 20",
        "benchmark program: compiled by scripts/test.sh (`cargo clippy --workspace --all-targets`); its \
         package and example are checked to exist here",
    ),
    (
        "cargo run -p assay-gate-example --example read_cost",
        "benchmark program: compiled by scripts/test.sh (`cargo clippy --workspace --all-targets`); its \
         package and example are checked to exist here",
    ),
];

/// Commands that serve until stopped: started first (the others need them), stopped with SIGTERM at the end.
const SERVICES: &[&str] = &["assay localnet --ledger-close-ms 1000"];

/// Exit codes other than 0 that the docs state for a command.
const EXPECTED_EXIT: &[(&str, i32)] = &[(
    // docs/contract-interface.md shows the notice refusing an early upgrade (Error(Contract, #14)).
    "stellar contract invoke --id \"$NOTICED\" --network testnet --source admin -- apply_upgrade",
    1,
)];

/// What a command's stdout must contain, beyond its exit code (prefix of the command → text).
const EXPECTED_STDOUT: &[(&str, &str)] = &[
    (
        "assay scan USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
        "severity: MEDIUM",
    ),
    (
        "assay scan --output json AQUA-GBNZ",
        "\"severity\":\"clear\"",
    ),
    (
        "assay sep41 --wasm target/wasm/conformant_token.wasm",
        "26 pass, 0 fail",
    ),
    (
        "assay attest USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
        "written: severity medium",
    ),
    (
        "assay verify USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
        "agreement",
    ),
    (
        "stellar contract invoke --id \"$REGISTRY\" --network testnet --source admin -- get_safety",
        "\"severity\":2",
    ),
    (
        // `--asset` too: `-- is_safe` alone is a prefix of `-- is_safe_quorum`.
        "stellar contract invoke --id \"$REGISTRY\" --network testnet --source admin -- is_safe --asset",
        "false",
    ),
    (
        "stellar contract invoke --id \"$GATE\" --network testnet --source admin -- would_admit",
        "false",
    ),
    (
        "stellar contract invoke --id \"$REGISTRY\" --network testnet --source admin -- get_safety_by",
        "\"severity\":2",
    ),
    (
        "stellar contract invoke --id \"$REGISTRY\" --network testnet --source admin -- is_safe_quorum",
        "true",
    ),
    (
        "stellar contract invoke --id \"$REGISTRY\" --network testnet --source admin -- assess",
        "ForbiddenMechanics",
    ),
    (
        "stellar contract invoke --id \"$NOTICED\" --network testnet --source admin -- upgrade_delay_secs",
        "604800",
    ),
    (
        "stellar contract invoke --id \"$NOTICED\" --network testnet --source admin -- pending_upgrade",
        "applicable_at",
    ),
    (
        "stellar contract invoke --id \"$NOTICED\" --network testnet --source admin -- pending_attester_change",
        "applicable_at",
    ),
    ("assay history --output json USDC-", "\"severity\""),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// One command from a fenced `sh` block: continuation lines joined, trailing comment removed.
#[derive(Debug, Clone)]
struct DocCommand {
    file: String,
    line: usize,
    /// As written (continuations joined with a newline-escape, so the shell sees the original).
    script: String,
    /// Whitespace-normalised, for matching the lists above.
    text: String,
}

const SHELL_TAGS: &[&str] = &["sh", "bash", "shell", "console"];

/// Removes a ` # comment` outside quotes.
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return line[..i].trim_end(),
            _ => {}
        }
        prev = c;
    }
    line.trim_end()
}

fn normalise(s: &str) -> String {
    s.replace("\\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The commands of `text`'s fenced shell blocks, or the first untagged fence.
fn extract(file: &str, text: &str) -> Result<Vec<DocCommand>, String> {
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(rest) = raw.trim_start().strip_prefix("```") {
            match block {
                None => {
                    let tag = rest.trim();
                    if tag.is_empty() {
                        return Err(format!(
                            "{file}:{n}: fenced block without a language: tag commands `sh`, output `text`"
                        ));
                    }
                    block = Some(tag.to_string());
                }
                Some(_) => {
                    if let Some((l, s)) = pending.take() {
                        return Err(format!("{file}:{l}: continuation never ends: {s}"));
                    }
                    block = None;
                }
            }
            continue;
        }
        let Some(tag) = &block else { continue };
        if !SHELL_TAGS.contains(&tag.as_str()) {
            continue;
        }
        let trimmed = raw.trim();
        if pending.is_none() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        let line = strip_comment(raw);
        let (start, mut acc) = pending.take().unwrap_or((n, String::new()));
        match line.strip_suffix('\\') {
            Some(head) => {
                acc.push_str(head);
                acc.push_str("\\\n");
                pending = Some((start, acc));
            }
            None => {
                acc.push_str(line);
                out.push(DocCommand {
                    file: file.to_string(),
                    line: start,
                    text: normalise(&acc),
                    script: acc,
                });
            }
        }
    }
    if block.is_some() {
        return Err(format!("{file}: a fenced block is never closed"));
    }
    Ok(out)
}

/// README.md, DEVELOPERS.md, then docs/*.md in name order.
fn doc_files() -> Vec<PathBuf> {
    let root = root();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut files = vec![root.join("README.md"), root.join("DEVELOPERS.md")];
    files.extend(docs);
    files
}

fn all_commands() -> Vec<DocCommand> {
    let root = root();
    let mut out = Vec::new();
    for path in doc_files() {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        out.extend(extract(&rel, &text).unwrap_or_else(|e| panic!("{e}")));
    }
    out
}

fn covered_elsewhere(c: &DocCommand) -> Option<&'static str> {
    COVERED_ELSEWHERE
        .iter()
        .find(|(cmd, _)| normalise(cmd) == c.text)
        .map(|(_, why)| *why)
}

#[test]
fn extraction_joins_continuations_strips_comments_and_refuses_untagged_fences() {
    let doc = "x\n```sh\n# a comment\nassay scan A \\\n  --output json   # trailing\nstellar keys generate admin\n```\n```text\nassay not-a-command\n```\n";
    let got = extract("d.md", doc).unwrap();
    let texts: Vec<&str> = got.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        ["assay scan A --output json", "stellar keys generate admin"]
    );
    assert_eq!((got[0].line, got[1].line), (4, 6));
    assert_eq!(
        strip_comment("echo '# kept' \"#\" # gone"),
        "echo '# kept' \"#\""
    );
    let err = extract("d.md", "```\nassay scan\n```\n").unwrap_err();
    assert!(err.contains("d.md:1") && err.contains("language"), "{err}");
    assert!(extract("d.md", "```sh\nassay \\\n```\n").is_err());
}

#[test]
fn every_doc_command_is_run_here_or_listed_with_what_runs_it() {
    let commands = all_commands();
    assert!(
        commands.len() >= 20,
        "suspiciously few commands extracted: {commands:#?}"
    );
    // No stale list entries: each names a command the docs still show.
    for (cmd, _) in COVERED_ELSEWHERE {
        assert!(
            commands.iter().any(|c| c.text == normalise(cmd)),
            "COVERED_ELSEWHERE names {cmd:?}, which no doc shows any more: remove it"
        );
    }
    for svc in SERVICES {
        assert!(
            commands.iter().any(|c| c.text == *svc),
            "service {svc:?} is no longer in the docs"
        );
    }
    let prefixes = EXPECTED_STDOUT
        .iter()
        .map(|(p, _)| *p)
        .chain(EXPECTED_EXIT.iter().map(|(p, _)| *p));
    for prefix in prefixes {
        assert!(
            commands
                .iter()
                .any(|c| c.text.starts_with(&normalise(prefix))),
            "expectation for {prefix:?} matches no doc command"
        );
    }
    // Benchmark commands listed above: the package and example they name exist.
    for c in commands.iter().filter(|c| c.text.starts_with("cargo run")) {
        let words: Vec<&str> = c.text.split_whitespace().collect();
        let after = |flag: &str| words.iter().position(|w| *w == flag).map(|i| words[i + 1]);
        let package = after("-p").unwrap_or_else(|| panic!("{}:{}: no -p", c.file, c.line));
        let example =
            after("--example").unwrap_or_else(|| panic!("{}:{}: no --example", c.file, c.line));
        let dir = package_dir(package)
            .unwrap_or_else(|| panic!("{}:{}: no package {package}", c.file, c.line));
        assert!(
            dir.join("examples").join(format!("{example}.rs")).exists()
                || dir.join("examples").join(example).join("main.rs").exists(),
            "{}:{}: package {package} has no example {example}",
            c.file,
            c.line
        );
        if let Some(features) = after("--features") {
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            for f in features.split(',') {
                assert!(
                    manifest.contains(&format!("\n{f} =")),
                    "{}:{}: package {package} has no feature {f}",
                    c.file,
                    c.line
                );
            }
        }
    }
}

/// The directory of the workspace member named `name`.
fn package_dir(name: &str) -> Option<PathBuf> {
    let root = root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let members = manifest.split("members = [").nth(1)?.split(']').next()?;
    members
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|m| root.join(m))
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|t| t.contains(&format!("name = \"{name}\"")))
        })
}

/// stellar-cli: `ASSAY_STELLAR_CLI`, else scripts/install-stellar-cli.sh's `target/tools/bin/stellar`, else
/// `stellar` on PATH.
fn stellar_cli(root: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("ASSAY_STELLAR_CLI") {
        return PathBuf::from(p);
    }
    let local = root.join("target/tools/bin/stellar");
    if local.exists() {
        return local;
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("stellar"))
            .find(|p| p.is_file())
    });
    on_path.unwrap_or_else(|| {
        panic!("stellar-cli is needed to run the docs' stellar lines: run scripts/install-stellar-cli.sh")
    })
}

/// An eval subject's recorded answers, served as mainnet's.
fn serve_subject(server: &ReplayServer, name: &str) -> (String, Option<String>) {
    let dir = root().join("testdata/eval").join(name);
    let read = |f: &str| std::fs::read(dir.join(f)).ok();
    let status = |f: &str| {
        read(&format!("{f}.status"))
            .map(|b| String::from_utf8_lossy(&b).trim().parse::<u16>().unwrap())
    };
    let subject: serde_json::Value =
        serde_json::from_slice(&read("subject.json").unwrap()).unwrap();
    let account: serde_json::Value =
        serde_json::from_slice(&read("horizon-account.json").unwrap()).unwrap();
    let asset = subject["asset"].as_str().unwrap().to_string();
    let (code, issuer) = asset.split_once('-').unwrap();
    let domain = account["home_domain"].as_str().map(str::to_string);
    let reply = |f: &str, ct: &str| match read(f) {
        Some(body) => Reply::status_with(200, &[("content-type", ct)], body),
        None => Reply::status(status(f).unwrap_or(404)),
    };
    let json = "application/json";
    server.route(
        "horizon.stellar.org",
        &format!("/assets?asset_code={code}&asset_issuer={issuer}"),
        vec![reply("horizon-assets.json", json)],
    );
    server.route(
        "horizon.stellar.org",
        &format!("/accounts/{issuer}"),
        vec![reply("horizon-account.json", json)],
    );
    server.route(
        "api.stellar.expert",
        &format!("/explorer/directory/{issuer}"),
        vec![reply("directory.json", json)],
    );
    if let Some(d) = &domain {
        server.route(
            "api.stellar.expert",
            &format!("/explorer/directory/blocked-domains/{d}"),
            vec![reply("blocked.json", json)],
        );
        server.route(
            d,
            "/.well-known/stellar.toml",
            vec![reply("stellar.toml", "text/plain")],
        );
    }
    (asset, domain)
}

struct Service {
    child: std::process::Child,
    text: String,
}

/// Starts `command` with `bash -c` and waits for `ready_lines` lines of stdout.
fn start_service(
    command: &str,
    env: &[(String, String)],
    cwd: &Path,
    ready_lines: usize,
) -> Service {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("exec {command}"))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start service");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    let mut text = String::new();
    for _ in 0..ready_lines {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{command}: no startup summary within 60 s:\n{text}"));
        text.push_str(&line);
        text.push('\n');
    }
    Service { child, text }
}

fn field<'a>(summary: &'a str, label: &str) -> &'a str {
    summary
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {label:?} in:\n{summary}"))
}

#[test]
fn doc_commands_run_as_written_against_local_stand_ins() {
    let root = root();
    common::ensure_wasm(&root);
    let stellar = stellar_cli(&root);
    let assay = PathBuf::from(env!("CARGO_BIN_EXE_assay"));
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("stellar");
    let home = tmp.path().join("home");
    let bin = tmp.path().join("bin");
    let out = tmp.path().join("out");
    for d in [&config, &home, &bin, &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    // The binaries under test, by the names the docs use.
    std::os::unix::fs::symlink(&assay, bin.join("assay")).unwrap();
    std::os::unix::fs::symlink(&stellar, bin.join("stellar")).unwrap();

    // Recorded mainnet sources over local HTTPS.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut hosts = vec![
        "horizon.stellar.org".to_string(),
        "api.stellar.expert".into(),
    ];
    let subjects = [
        "usdc-revocable-regulated",
        "aqua-clear-verified",
        "shx-clear-flagslocked",
    ];
    let domains = ["circle.com", "aqua.network", "stronghold.co"];
    hosts.extend(domains.iter().map(|d| d.to_string()));
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let server = rt.block_on(ReplayServer::start(&names));
    server.route(
        "horizon.stellar.org",
        "/",
        vec![Reply::horizon_root(assay_core::PUBNET_PASSPHRASE)],
    );
    for s in subjects {
        serve_subject(&server, s);
    }
    let list =
        std::fs::read(root.join("testdata/eval/aqua-clear-verified/asset-lists/top-assets.json"))
            .unwrap();
    server.route(
        "api.stellar.expert",
        "/explorer/public/asset-list/top50",
        vec![Reply::json(list)],
    );
    let ca = server.write_ca(tmp.path());
    let connect_to: Vec<String> = hosts.iter().map(|h| server.connect_https(h)).collect();

    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), home.display().to_string()),
        ("STELLAR_CONFIG_HOME".into(), config.display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME".into(),
            home.join(".cache").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
        ("STELLAR_NO_UPDATE_CHECK".into(), "1".into()),
        ("ASSAY_CONNECT_TO".into(), connect_to.join(",")),
        ("ASSAY_CACERT".into(), ca.display().to_string()),
        ("REPLAY_PORT".into(), server.https.port().to_string()),
        ("REPLAY_CA".into(), ca.display().to_string()),
        ("STELLAR_LOCALNET_PORT".into(), "0".into()),
    ];
    if let Ok(t) = std::env::var("CARGO_TARGET_DIR") {
        env.push(("CARGO_TARGET_DIR".into(), t));
    }
    // HOME is a scratch directory, but cargo (under scripts/build-wasm.sh) must keep the real toolchain
    // and registry: a fresh CARGO_HOME would download and rebuild every dependency.
    let real_home = std::env::var("HOME").unwrap_or_default();
    for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        let value = std::env::var(var).unwrap_or_else(|_| format!("{real_home}/{default}"));
        env.push((var.into(), value));
    }

    let commands = all_commands();

    // The local network, from docs/localnet.md's own line, stands in for testnet.
    let mut services = Vec::new();
    for svc in SERVICES {
        services.push(start_service(svc, &env, &root, 7));
    }
    let summary = services[0].text.clone();
    let rpc = field(&summary, "rpc url:");
    let passphrase = field(&summary, "network passphrase:");
    std::fs::create_dir_all(config.join("network")).unwrap();
    std::fs::write(
        config.join("network/testnet.toml"),
        // The shape `stellar network add` writes; stellar-cli 28 ignores a file without `rpc_headers`
        // and silently falls back to its built-in testnet.
        format!("rpc_url = \"{rpc}\"\nrpc_headers = []\nnetwork_passphrase = \"{passphrase}\"\n"),
    )
    .unwrap();

    // One shell, as a reader would type them: variables carry from line to line.
    let runnable: Vec<&DocCommand> = commands
        .iter()
        .filter(|c| covered_elsewhere(c).is_none() && !SERVICES.contains(&c.text.as_str()))
        .collect();
    let mut script = String::from("cd \"$1\"\n");
    for (i, c) in runnable.iter().enumerate() {
        script.push_str(&format!(
            "t0=$(date +%s%N)\n{{\n{}\n}} >\"$2/{i}.out\" 2>\"$2/{i}.err\" </dev/null\necho \"{i} $? $(( ($(date +%s%N) - t0) / 1000000 ))\" >>\"$2/status\"\n",
            c.script
        ));
    }
    std::fs::write(tmp.path().join("docs.sh"), &script).unwrap();
    let started = Instant::now();
    let mut cmd = Command::new("timeout");
    cmd.arg("900")
        .arg("bash")
        .arg(tmp.path().join("docs.sh"))
        .arg(&root)
        .arg(&out)
        .env_clear();
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let status = cmd.status().expect("run bash");
    eprintln!(
        "{} doc commands ran in {:.1} s",
        runnable.len(),
        started.elapsed().as_secs_f64()
    );

    for mut s in services {
        // SAFETY: kill(2) on the child this test started.
        unsafe {
            libc::kill(s.child.id() as i32, libc::SIGTERM);
        }
        let code = s.child.wait().unwrap().code();
        assert_eq!(code, Some(0), "the service stopped with {code:?}");
    }
    assert!(status.success(), "the docs script did not finish: {status}");

    let codes = std::fs::read_to_string(out.join("status")).unwrap_or_default();
    let mut failures = Vec::new();
    for (i, c) in runnable.iter().enumerate() {
        // "<index> <exit code> <milliseconds>", one line per command.
        let record: Vec<&str> = codes
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{i} ")))
            .map(|v| v.split_whitespace().collect())
            .unwrap_or_default();
        let code: Option<i32> = record.first().and_then(|v| v.parse().ok());
        let millis: u64 = record.get(1).and_then(|v| v.parse().ok()).unwrap_or(0);
        let stdout = std::fs::read_to_string(out.join(format!("{i}.out"))).unwrap_or_default();
        let stderr = std::fs::read_to_string(out.join(format!("{i}.err"))).unwrap_or_default();
        let want = EXPECTED_EXIT
            .iter()
            .find(|(p, _)| c.text.starts_with(&normalise(p)))
            .map_or(0, |(_, code)| *code);
        let mut problems = Vec::new();
        if code != Some(want) {
            problems.push(format!("exit {code:?}, expected {want}"));
        }
        for (prefix, needle) in EXPECTED_STDOUT {
            if c.text.starts_with(&normalise(prefix)) && !stdout.contains(needle) {
                problems.push(format!("stdout lacks {needle:?}"));
            }
        }
        eprintln!(
            "{}:{} [{code:?}, {:.1} s] {}",
            c.file,
            c.line,
            millis as f64 / 1000.0,
            c.text
        );
        if !problems.is_empty() {
            failures.push(format!(
                "{}:{}: {}\n  {}\n  stdout: {}\n  stderr: {}",
                c.file,
                c.line,
                c.text,
                problems.join("; "),
                stdout.trim(),
                stderr.trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} doc commands do not work as shown:\n\n{}",
        failures.len(),
        runnable.len(),
        failures.join("\n\n")
    );
    drop(rt);
}

/// Hides what differs between runs of the same demo.
fn mask(line: &str) -> String {
    // A power's lines name the accounts the run generated (the admin, the holder).
    let powers_line = line.contains("usable by ") || line.contains("observed: ");
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut out = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let prev = if i > 0 { words[i - 1] } else { "" };
        let core = w.trim_matches(|c: char| "(),.:;".contains(c));
        let masked = if let Some(at) = w.find("127.0.0.1:") {
            let tail = &w[at + 10..];
            let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{}127.0.0.1:PORT{rest}", &w[..at])
        } else if core.len() >= 8
            && core.bytes().all(|b| b.is_ascii_hexdigit())
            && core.bytes().any(|b| b.is_ascii_digit())
        {
            "HEX".to_string()
        } else if core.len() == 56
            && core.starts_with('C')
            && stellar_strkey::Contract::from_string(core).is_ok()
        {
            "CONTRACT".to_string()
        } else if powers_line
            && stellar_strkey::ed25519::PublicKey::from_string(core.trim_end_matches("'s")).is_ok()
        {
            "ACCOUNT".to_string()
        } else if matches!(prev, "ledger" | "age")
            || (prev.starts_with('(') && *w == "s).")
            || (w.starts_with('(') && words.get(i + 1) == Some(&"s)."))
        {
            "N".to_string()
        } else {
            w.to_string()
        };
        out.push(masked);
    }
    out.join(" ")
}

/// The README's transcript: the ```text block after "Transcript of a real run".
fn readme_transcript() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let at = readme
        .find("Transcript of a real run")
        .expect("README has a demo transcript");
    let rest = &readme[at..];
    let start = rest.find("```text\n").expect("transcript block") + 8;
    let end = rest[start..].find("```").unwrap();
    rest[start..start + end]
        .lines()
        .map(str::to_string)
        .collect()
}

/// A README line that stands for lines left out.
fn is_trim_marker(line: &str) -> bool {
    line.contains("[…")
}

/// Matches `expected` (with trim markers) against `actual` in order; returns the first mismatch.
fn match_transcript(expected: &[String], actual: &[String]) -> Result<(), String> {
    // Blank lines are layout, not outcome.
    let expected: Vec<&String> = expected.iter().filter(|l| !l.trim().is_empty()).collect();
    let actual: Vec<&String> = actual.iter().filter(|l| !l.trim().is_empty()).collect();
    let exp: Vec<String> = expected.iter().map(|l| mask(l)).collect();
    let act: Vec<String> = actual.iter().map(|l| mask(l)).collect();
    let mut a = 0;
    let mut i = 0;
    while i < exp.len() {
        if is_trim_marker(&exp[i]) {
            // Skip actual lines up to the next expected line (or to the end).
            i += 1;
            let Some(next) = exp.get(i) else {
                return Ok(());
            };
            if is_trim_marker(next) {
                continue;
            }
            match act[a..].iter().position(|l| l == next) {
                Some(p) => a += p,
                None => {
                    return Err(format!(
                        "README line {:?} never appears in the run",
                        expected[i]
                    ))
                }
            }
            continue;
        }
        match act.get(a) {
            Some(l) if *l == exp[i] => {
                a += 1;
                i += 1;
            }
            Some(l) => {
                return Err(format!(
                "README transcript line {}:\n  README: {}\n  run:    {}\n(masked: {:?} vs {:?})",
                i + 1,
                expected[i],
                actual[a],
                exp[i],
                l
            ))
            }
            None => {
                return Err(format!(
                    "the run ended before README line {:?}",
                    expected[i]
                ))
            }
        }
    }
    if a < act.len() {
        return Err(format!(
            "the run has lines the README transcript lacks, from: {:?}",
            actual[a]
        ));
    }
    Ok(())
}

#[test]
fn transcript_matching_masks_run_values_and_honours_trim_markers() {
    let exp: Vec<String> = [
        "a",
        "| […]",
        "x ledger 42 (CCQJDYMVIYLY37WGLUOZCYVOKGPI333CQ6HZRS5RVD7SYMJ72WZLJVNX)",
        "done (10.5 s).",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let act: Vec<String> = [
        "a",
        "b",
        "c",
        "x ledger 7 (CAQL7T5OKKMETVLF6OFHCHRNIMLY6GQEPORISVFZKLMPL5MBEXC4E6TQ)",
        "done (3.1 s).",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(match_transcript(&exp, &act), Ok(()));
    let wrong: Vec<String> = ["a", "x ledger 7 (C)", "done (3.1 s)."]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(match_transcript(&exp, &wrong).is_err());
    assert!(
        match_transcript(&exp[..1], &act).is_err(),
        "extra run lines must fail"
    );
    assert_eq!(
        mask("rpc: http://127.0.0.1:33047/rpc"),
        "rpc: http://127.0.0.1:PORT/rpc"
    );
}

/// Fails with the difference when a real run's transcript (`actual`, one line each) is not the README's. The
/// demo's own test calls it on its one run, so the demo runs once for both (attester/cli/tests/it/demo.rs).
pub(crate) fn check_readme_demo_transcript(actual: &[String]) -> Result<(), String> {
    match_transcript(&readme_transcript(), actual)
}

/// docs/token-tests.md shows fixtures/third-party/oz-rwa.setup.json as it is: the JSON block under "A set-up
/// file" is the same document as the file the tests deploy.
#[test]
fn the_set_up_file_shown_in_the_docs_is_the_one_deployed() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("docs/token-tests.md")).unwrap();
    let section = doc
        .split("## A set-up file")
        .nth(1)
        .expect("docs/token-tests.md has its set-up file section");
    let shown = section
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a json block in the section");
    let shown: serde_json::Value = serde_json::from_str(shown).expect("the block is JSON");
    let file =
        std::fs::read_to_string(root.join("fixtures/third-party/oz-rwa.setup.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(shown, file);
}
