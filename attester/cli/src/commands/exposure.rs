//! `assay exposure G…`: every trustline an account holds, each asset judged as `assay scan` judges it, with
//! the trustline's own state beside the asset's powers — the question a wallet asks for a user who already
//! holds.
use std::path::PathBuf;

use clap::Args;

use super::scan::{run_scan, ScanArgs};
use super::shared::{OutputFormat, SourceArgs};
use super::CommandResult;

const EXIT_CODES: &str = "\
Exit codes: as assay scan's (0 every report complete, 1 an error, 2 a report undetermined, 64 usage).

Each report is a schema_version 1 report (docs/report-format.md) with the holder-trustline finding: bits 6
(trustline_clawback_enabled: the issuer can claw this balance back) and 7 (trustline_deauthorized: the
trustline is frozen, fully or to maintaining liabilities), and the evidence line of source horizon/holder
naming the trustline's balance and flags. --output json prints one report per line, in the order the
account lists its trustlines. Such reports are never attested (rule holder).

Examples:
  assay exposure GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN
  assay exposure --network testnet --output json GB...";

/// Arguments of `assay exposure`.
#[derive(Args, Debug)]
#[command(
    about = "List every trustline of an account: each asset's powers and the trustline's own state",
    after_help = EXIT_CODES
)]
pub struct ExposureArgs {
    /// The account (G…) whose trustlines to read.
    #[arg(value_name = "G…")]
    pub holder: String,

    /// Output format: text for people, json for one schema_version 1 report per trustline, per line.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// Network the account lives on (as for assay scan).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "mainnet",
        env = "STELLAR_NETWORK"
    )]
    pub network: String,

    /// Passphrase of the network (default: --network's), bound into the reports.
    #[arg(long, value_name = "TEXT", env = "STELLAR_NETWORK_PASSPHRASE")]
    pub network_passphrase: Option<String>,

    #[command(flatten)]
    pub sources: SourceArgs,

    /// Do not read or write the StellarExpert answer cache.
    #[arg(long)]
    pub no_cache: bool,

    /// Directory of the StellarExpert answer cache (default: the user's cache directory).
    #[arg(long, value_name = "DIR", env = "ASSAY_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Assets scanned at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub concurrency: usize,
}

/// Runs `assay exposure`: `assay scan --holder` over every trustline the account holds (nothing is
/// appended to the history).
pub fn run(args: ExposureArgs) -> CommandResult {
    let holder = args.holder;
    run_scan(
        ScanArgs {
            assets: Vec::new(),
            rpc_url: None,
            network_passphrase: args.network_passphrase,
            sep41: false,
            output: args.output,
            network: args.network,
            sources: args.sources,
            asset_lists: Vec::new(),
            no_cache: args.no_cache,
            cache_dir: args.cache_dir,
            history: None,
            no_history: true,
            concurrency: args.concurrency,
            holder: Some(holder),
        },
        true,
    )
}
