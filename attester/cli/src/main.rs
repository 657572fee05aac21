//! `assay`: results on stdout, diagnostics on stderr, documented exit codes.
//!
//! Exit codes are one table for every command ([`assay_core::exit`]), shown by `assay --help` and the
//! README; each subcommand's help lists the ones it returns.
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod commands;
mod server;
mod signals;

#[cfg(feature = "demo")]
use commands::demo;
use commands::{
    attest, attestation, evidence, exposure, history, localnet, scan, sep41, serve, verify, watch,
};

/// Exit code for a usage error (sysexits' EX_USAGE), whatever the subcommand.
pub const EXIT_USAGE: u8 = assay_core::exit::USAGE;

#[derive(Parser)]
#[command(
    name = "assay",
    version,
    about = "What can this asset's issuer do to my balance, and who stands behind that power?"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Each subcommand lives in its own module; add a variant and a match arm, nothing else here.
#[derive(Subcommand)]
enum Command {
    Attestation(attestation::AttestationArgs),
    Scan(scan::ScanArgs),
    Exposure(exposure::ExposureArgs),
    History(history::HistoryArgs),
    Attest(attest::AttestArgs),
    Verify(verify::VerifyArgs),
    Evidence(evidence::EvidenceArgs),
    Watch(watch::WatchArgs),
    Localnet(localnet::LocalnetArgs),
    Sep41(sep41::Sep41Args),
    #[cfg(feature = "demo")]
    Demo(demo::DemoArgs),
    /// Built without the `demo` feature: says how to get a binary that has it.
    #[cfg(not(feature = "demo"))]
    #[command(hide = true, disable_help_flag = true)]
    Demo {
        /// Whatever follows, so every `assay demo …` gets the message below.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        _args: Vec<String>,
    },
    Serve(serve::ServeArgs),
}

fn main() -> ExitCode {
    if let Some(position) = secret_argument(std::env::args_os().skip(1)) {
        eprintln!(
            "assay: refusing a secret key on the command line: argument {position} looks like a \
             secret key or seed phrase, so it is not used and not shown (the command line is visible \
             in `ps` and shell history): name a stellar-cli \
             identity, set STELLAR_SECRET_KEY (ASSAY_OWNER_SECRET / ASSAY_SPENDER_SECRET for the \
             SEP-41 parties), or use --source-file FILE"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some((flag, instead)) = private_url_argument(std::env::args_os().skip(1)) {
        eprintln!(
            "assay: refusing {flag} with credentials, a query string or a key in its path on the command \
             line (visible in `ps` and shell history); it is not used and not shown: {instead}"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let command = Cli::command().after_help(format!(
        "Exit codes (the same numbers in every command; each command's --help lists its own):\n{}",
        assay_core::exit::TABLE
    ));
    let cli = match command
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return match err.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(EXIT_USAGE),
            };
        }
    };
    let (name, result) = match cli.command {
        Command::Attestation(args) => ("attestation", attestation::run(args)),
        Command::Scan(args) => ("scan", scan::run(args)),
        Command::Exposure(args) => ("exposure", exposure::run(args)),
        Command::History(args) => ("history", history::run(args)),
        Command::Evidence(args) => ("evidence", evidence::run(args)),
        Command::Attest(args) => ("attest", attest::run(args)),
        Command::Verify(args) => ("verify", verify::run(args)),
        Command::Watch(args) => ("watch", watch::run(args)),
        Command::Localnet(args) => ("localnet", localnet::run(args)),
        Command::Sep41(args) => ("sep41", sep41::run(args)),
        #[cfg(feature = "demo")]
        Command::Demo(args) => ("demo", demo::run(args)),
        #[cfg(not(feature = "demo"))]
        Command::Demo { .. } => (
            "demo",
            Err(commands::CommandError::usage(
                "this assay was built without the `demo` feature (the demo replays recorded sources \
                 with test support the released binary leaves out); run scripts/demo.sh, or build with \
                 `cargo build -p assay-cli --features demo`",
            )),
        ),
        Command::Serve(args) => ("serve", serve::run(args)),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            // The one place a command's error is shown: redacted, so no URL credential or key leaks.
            eprintln!(
                "assay {name}: {}",
                assay_core::redact::text(&error.to_string())
            );
            ExitCode::from(error.exit_code())
        }
    }
}

/// The endpoint flags whose URL may carry an operator's credentials, and where such a URL goes instead.
const ENDPOINT_FLAGS: [(&str, &str); 3] = [
    (
        "--horizon-url",
        "set ASSAY_HORIZON_URL, or horizon_url in watch.toml",
    ),
    (
        "--rpc-url",
        "set STELLAR_RPC_URL, or rpc_url in watch.toml (or a stellar-cli network file)",
    ),
    ("--fork-rpc-url", "set ASSAY_FORK_RPC_URL"),
];

/// The first endpoint flag (`--flag URL` or `--flag=URL`) given a URL that only its operator may see
/// ([`assay_core::redact::url_is_private`]), with where to put it instead; checked before clap, whose
/// errors quote the value they refuse.
fn private_url_argument(
    args: impl Iterator<Item = std::ffi::OsString>,
) -> Option<(&'static str, &'static str)> {
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    args.iter().enumerate().find_map(|(i, arg)| {
        ENDPOINT_FLAGS.into_iter().find(|(flag, _)| {
            let value = match arg.strip_prefix(flag) {
                Some("") => args.get(i + 1).map(String::as_str),
                Some(rest) => rest.strip_prefix('='),
                None => None,
            };
            value.is_some_and(assay_core::redact::url_is_private)
        })
    })
}

/// The 1-based position of the first argument that is key material (alone or as `--flag=VALUE`),
/// checked before clap, whose errors quote the value they refuse, and before any subcommand.
fn secret_argument(args: impl Iterator<Item = std::ffi::OsString>) -> Option<usize> {
    use assay_core::redact::is_secret;
    args.map(|a| a.to_string_lossy().into_owned())
        .position(|a| is_secret(&a) || a.split_once('=').is_some_and(|(_, v)| is_secret(v)))
        .map(|i| i + 1)
}
