//! `assay exposure G…`: every trustline an account holds, each asset judged as `assay scan` judges it, with
//! the trustline's own state beside the asset's powers — the question a wallet asks for a user who already
//! holds.
use assay_attest::scan_reports::ScanRequest;
use clap::Args;

use super::scan::{check_concurrency, check_holder, run_request};
use super::shared::{scan_passphrase, CacheArgs, OutputFormat, ProgressArgs, SourceArgs};
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

    #[command(flatten)]
    pub cache: CacheArgs,

    /// Assets scanned at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub concurrency: usize,

    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// Runs `assay exposure`: `assay scan --holder` over every trustline the account holds (nothing is
/// appended to the history), its flags resolved into the scan request as `scan`'s are.
pub fn run(args: ExposureArgs) -> CommandResult {
    check_holder(&args.holder)?;
    let passphrase = scan_passphrase(&args.network, args.network_passphrase.as_deref())?;
    let request = ScanRequest {
        settings: args.sources.settings(passphrase, None)?,
        assets: Vec::new(),
        contracts: Vec::new(),
        holder: Some(args.holder),
        every_trustline: true,
        sep41: false,
        asset_lists: Vec::new(),
        cache: args.cache.cache(),
        concurrency: check_concurrency(args.concurrency)?,
        history: None,
    };
    run_request(&request, args.output.into(), &args.progress)
}
