//! `assay`: results on stdout, diagnostics on stderr, documented exit codes.
//!
//! Exit codes shared by every subcommand (each subcommand documents its own 0..=5 in its help):
//! - 0: the command did what was asked and the answer is complete;
//! - 64: usage error: a bad argument or malformed input (the message names it and the expected form).
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod attestation;
mod attester;
#[cfg(feature = "demo")]
mod demo;
mod history;
mod localnet;
mod scan;
mod scan_text;
mod sep41;

/// Exit code for a usage error (sysexits' EX_USAGE), whatever the subcommand.
pub const EXIT_USAGE: u8 = 64;

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
    History(history::HistoryArgs),
    Attest(attester::attest::AttestArgs),
    Verify(attester::verify::VerifyArgs),
    Watch(attester::watch::WatchArgs),
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
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
    match cli.command {
        Command::Attestation(args) => attestation::run(args),
        Command::Scan(args) => scan::run(args),
        Command::History(args) => history::run(args),
        Command::Attest(args) => attester::attest::run(args),
        Command::Verify(args) => attester::verify::run(args),
        Command::Watch(args) => attester::watch::run(args),
        Command::Localnet(args) => localnet::run(args),
        Command::Sep41(args) => sep41::run(args),
        #[cfg(feature = "demo")]
        Command::Demo(args) => demo::run(args),
        #[cfg(not(feature = "demo"))]
        Command::Demo { .. } => {
            eprintln!(
                "error: this assay was built without the `demo` feature (the demo replays recorded sources \
                 with test support the released binary leaves out); run scripts/demo.sh, or build with \
                 `cargo build -p assay-cli --features demo`"
            );
            ExitCode::from(EXIT_USAGE)
        }
    }
}
