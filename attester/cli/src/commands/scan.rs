//! `assay scan ASSET...`: fetch every source once, judge with the core, print, append to history.
use std::io::Write;
use std::path::PathBuf;

use assay_attest::scan_reports::{scan_reports, ScanRequest, ScannedAsset};
use assay_attest::AttestError;
use assay_core::exit;
use assay_core::{Asset, Report, Token};
use assay_scan::history::History;
use assay_scan::options::check_base_url;
use clap::{Args, ValueEnum};

use super::ci_formats::{scan_junit, scan_sarif, Scanned};
use super::scan_progress::ProgressLine;
use super::shared::{
    scan_passphrase, CacheArgs, NetworkArgs, OutputFormat, ProgressArgs, SourceArgs,
};
use super::{failed, CommandError, CommandResult};

const EXIT_CODES: &str = "\
Exit codes:
  0   every report is complete (determined)
  1   error: at least one asset has no report (Horizon or stellar-rpc failure, unknown asset or issuer) or the
      history could not be written; reports for the other assets are still printed
  2   at least one report could not be completed (undetermined: a source the verdict depends on
      did not answer); the report says which check and which source
  64  usage error: a malformed asset, mapping, URL or option (the message names it)

When several outcomes apply, the highest-priority code wins: 64, then 1, then 2.

Examples:
  assay scan USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN
  assay scan --output json AQUA:GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA SHX-GDSTRSHXHGJ7ZIVRBXEYE5Q74XUVCUSEKEBR7UCHEUUEK72N7I7KJ6JH
  assay scan --output junit USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN > scan.xml   (CI: --output sarif too)
  assay scan --connect-to horizon.stellar.org:443:127.0.0.1:8443 --cacert ca.pem USDC-GA5Z...
  assay scan --network testnet --rpc-url https://soroban-testnet.stellar.org CDLZ...
  assay scan --network testnet --rpc-url https://soroban-testnet.stellar.org USDC-GBBD...   (no Horizon needed)

A token contract (C...) is judged by its code (bits 9-12 and their floors) and by whether its admin()
account's home domain lists it in [[CURRENCIES]]; see docs/severity-model.md, \"Contract tokens\".";

/// Help of the network flags as `scan` shows them (the flags are [`NetworkArgs`]'s; `scan` has no registry,
/// so the network defaults to mainnet and gives the assets' default Horizon and passphrase).
const NETWORK_HELP: &str = "Network the assets live on: mainnet, testnet, futurenet, local, or a NAME from \
~/.config/stellar/network/NAME.toml (then pass --horizon-url). Gives the default Horizon and the passphrase \
reports bind";
const RPC_URL_HELP: &str = "stellar-rpc endpoint of the assets' network. Classic assets' ledger facts (the \
issuer account's flags, home domain, signers and thresholds; a --holder's trustlines) are then read from the \
ledger with getLedgerEntries, and Horizon is optional (its asset record is read beside as a second copy of the \
flags when it answers). A token contract (C…) is read from it: its instance and WASM by getLedgerEntries, its \
admin() by simulation; needed for C… arguments";
const PASSPHRASE_HELP: &str =
    "Passphrase of the network at --rpc-url (default: --network's), bound \
     into a token's evidence hash";

/// Arguments of `assay scan`.
#[derive(Args, Debug)]
#[command(
    about = "Scan assets: what can the issuer do to a balance, and who stands behind that power?",
    long_about = "Reads the issuer account (from stellar-rpc with --rpc-url, Horizon's asset record beside it \
when it answers; else Horizon's asset record and issuer account; never cached), the issuer's stellar.toml \
(HTTPS only, at most 5 same-host redirects, internal addresses refused), StellarExpert's directory and \
blocklist (retried, cached for the lifetime the source advertises) and any --asset-list, then prints \
severity (what the ledger lets the issuer do) beside accountability (who has publicly claimed the asset). \
A source that did not answer is reported as not retrievable, never as a clean answer.",
    after_help = EXIT_CODES,
    mut_arg("network", |a| a.help(NETWORK_HELP).default_value(MAINNET)),
    mut_arg("rpc_url", |a| a.help(RPC_URL_HELP)),
    mut_arg("network_passphrase", |a| a.help(PASSPHRASE_HELP))
)]
pub struct ScanArgs {
    /// Assets to scan, as CODE-ISSUER or CODE:ISSUER, or token contracts as C… (read through --rpc-url).
    #[arg(value_name = "ASSET", required = true)]
    pub assets: Vec<String>,

    /// Also run the 27-check SEP-41 conformance suite against each token contract (C…), keyless on a
    /// fork of the network at --rpc-url (nothing signed, nothing sent there), and include its verdicts
    /// in the report: a FAIL makes it critical with sep41_violation (bit 8); without a FAIL, an
    /// UNVERIFIABLE or SKIPPED row leaves it undetermined.
    #[arg(long)]
    pub sep41: bool,

    /// Output format: text for people, json for one schema_version 1 report per line, junit for JUnit XML
    /// (a suite per asset, a case per check: an escalation to critical a failure, a check that could not
    /// conclude or an unverified accountability skipped), sarif for SARIF 2.1.0 (a result per FAIL and per
    /// power found, located at the asset).
    #[arg(long, value_enum, default_value_t = ScanOutput::Text)]
    pub output: ScanOutput,

    #[command(flatten)]
    pub network: NetworkArgs,

    #[command(flatten)]
    pub sources: SourceArgs,

    /// A SEP-42 asset list to consult (repeatable). Lists are evidence only: they never move severity.
    #[arg(long = "asset-list", value_name = "URL")]
    pub asset_lists: Vec<String>,

    #[command(flatten)]
    pub cache: CacheArgs,

    /// History database to append to (default: the user's data directory).
    #[arg(long, value_name = "PATH", env = "ASSAY_HISTORY")]
    pub history: Option<PathBuf>,

    /// Do not append this scan to the history (wins over --history and ASSAY_HISTORY).
    #[arg(long)]
    pub no_history: bool,

    /// Assets scanned at once (sources are shared between assets of the same issuer or domain).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub concurrency: usize,

    /// Also read this account's own trustline to each classic asset (from stellar-rpc with --rpc-url, else
    /// its Horizon /accounts record) and add
    /// its exposure to the report: the `holder-trustline` finding and bits 6 (`trustline_clawback_enabled`)
    /// and 7 (`trustline_deauthorized`). Off-chain only: such a report is never attested.
    #[arg(long, value_name = "G…")]
    pub holder: Option<String>,

    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// `assay scan`'s output formats: `assay exposure`'s two ([`OutputFormat`]) and the CI formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScanOutput {
    /// For people.
    Text,
    /// One schema_version 1 report per line, for machines.
    Json,
    /// JUnit XML: a test suite per asset, a test case per check of its report.
    Junit,
    /// SARIF 2.1.0: a result per FAIL and per power found.
    Sarif,
}

impl From<OutputFormat> for ScanOutput {
    fn from(output: OutputFormat) -> ScanOutput {
        match output {
            OutputFormat::Text => ScanOutput::Text,
            OutputFormat::Json => ScanOutput::Json,
        }
    }
}

/// The network `scan` reads when none is named.
const MAINNET: &str = "mainnet";

/// Runs `assay scan`: its flags resolved into one [`ScanRequest`], scanned, rendered.
pub fn run(args: ScanArgs) -> CommandResult {
    let request = request(&args)?;
    run_request(&request, args.output, &args.progress)
}

/// Scans `request` through the library (a progress line on a terminal's stderr unless `progress` turns it
/// off), renders the reports in `output` and returns the exit code: `assay scan`'s and `assay exposure`'s
/// one path once their flags are resolved.
pub(crate) fn run_request(
    request: &ScanRequest,
    output: ScanOutput,
    progress: &ProgressArgs,
) -> CommandResult {
    let line = ProgressLine::start(!progress.no_progress);
    let scanned = scan_reports(request, line.progress()).map_err(|e| match e {
        AttestError::Source(m) => CommandError::failed(m),
        other => other.into(),
    });
    drop(line);
    let scanned = scanned?;
    if request.every_trustline && scanned.outcomes.is_empty() && output == ScanOutput::Text {
        println!(
            "{} holds no trustline to a classic asset",
            request.holder.as_deref().unwrap_or_default()
        );
    }
    let mut code = render(scanned.outcomes, output)?;
    if let Some(err) = scanned.history_error {
        eprintln!(
            "assay scan: {err}; the reports above were not recorded (use --history PATH or --no-history)"
        );
        code = exit::ERROR;
    }
    Ok(code)
}

/// The scan `args` ask for, every argument checked.
fn request(args: &ScanArgs) -> Result<ScanRequest, CommandError> {
    if let Some(holder) = &args.holder {
        check_holder(holder)?;
    }
    let mut assets: Vec<Asset> = Vec::with_capacity(args.assets.len());
    let mut contracts: Vec<String> = Vec::new();
    for input in &args.assets {
        match Token::parse(input).map_err(CommandError::usage)? {
            Token::Classic(asset) => assets.push(asset),
            Token::Contract(c) => contracts.push(c),
            Token::Native => {
                return Err(CommandError::usage(format!(
                    "invalid asset {input:?}: the native asset has no issuer to read; name a classic asset \
                     (CODE-ISSUER) or a token contract (C…)"
                )))
            }
        }
    }
    if args.sep41 && contracts.is_empty() {
        return Err(CommandError::usage(
            "--sep41 runs the conformance suite against token contracts: name one as C… (a classic \
             asset's Stellar Asset Contract is named by its C… address too)",
        ));
    }
    let rpc_url = args.network.rpc_url.clone();
    if !contracts.is_empty() && rpc_url.is_none() {
        return Err(CommandError::usage(format!(
            "{} is a token contract: pass --rpc-url (or STELLAR_RPC_URL) of the network it lives on",
            contracts[0]
        )));
    }
    let passphrase = scan_passphrase(
        args.network.network.as_deref().unwrap_or(MAINNET),
        args.network.network_passphrase.as_deref(),
    )?;
    let settings = args.sources.settings(passphrase, rpc_url)?;
    for list in &args.asset_lists {
        check_base_url("--asset-list", list).map_err(CommandError::usage)?;
    }
    let concurrency = check_concurrency(args.concurrency)?;
    let history = match (args.no_history, args.history.clone()) {
        (true, _) => None,
        (false, Some(path)) => Some(path),
        (false, None) => Some(History::default_path().ok_or_else(|| {
            CommandError::usage(
                "no data directory for the history: pass --history PATH or --no-history",
            )
        })?),
    };
    Ok(ScanRequest {
        settings,
        assets,
        contracts,
        holder: args.holder.clone(),
        every_trustline: false,
        sep41: args.sep41,
        asset_lists: args.asset_lists.clone(),
        cache: args.cache.cache(),
        concurrency,
        history,
    })
}

/// Refuses a holder that is not an account address.
pub(crate) fn check_holder(holder: &str) -> Result<(), CommandError> {
    if stellar_strkey::ed25519::PublicKey::from_string(holder).is_err() {
        return Err(CommandError::usage(format!(
            "invalid --holder {holder:?}: expected an account address (G… of 56 characters)"
        )));
    }
    Ok(())
}

/// `--concurrency`, when it is 1 to 256.
pub(crate) fn check_concurrency(concurrency: usize) -> Result<usize, CommandError> {
    if concurrency == 0 || concurrency > 256 {
        return Err(CommandError::usage(format!(
            "invalid --concurrency {concurrency}: expected 1 to 256"
        )));
    }
    Ok(concurrency)
}

/// Prints every report (classic assets, then token contracts) and returns the exit code they make: 1 when
/// one has no report (its error on stderr), else 2 when one is undetermined, else 0. Text and JSON print
/// each report as it comes; JUnit and SARIF print one document over all of them (an asset with no report in
/// it too).
fn render(outcomes: Vec<ScannedAsset>, output: ScanOutput) -> CommandResult {
    let mut code = exit::OK;
    let mut stdout = std::io::stdout().lock();
    let mut documents: Vec<(String, Result<Report, String>)> = Vec::new();
    for ScannedAsset {
        name,
        report,
        suite,
    } in outcomes
    {
        let report = match report {
            Ok(report) => report,
            Err(message) => {
                let message = assay_core::redact::text(&message.to_string());
                eprintln!("assay scan: {name}: {message}");
                code = exit::ERROR;
                documents.push((name, Err(message)));
                continue;
            }
        };
        if report.undetermined && code == exit::OK {
            code = exit::UNDETERMINED;
        }
        let rendered = match output {
            ScanOutput::Json => {
                serde_json::to_string(&report).expect("a report always serialises") + "\n"
            }
            ScanOutput::Text => {
                let suite = suite.map(|run| run.render_text(&name)).unwrap_or_default();
                super::scan_text::render(&report) + &suite
            }
            ScanOutput::Junit | ScanOutput::Sarif => {
                documents.push((name, Ok(report)));
                continue;
            }
        };
        if let Err(err) = stdout.write_all(rendered.as_bytes()) {
            return failed(format!("cannot write the report to stdout: {err}"));
        }
    }
    if matches!(output, ScanOutput::Junit | ScanOutput::Sarif) {
        let scanned: Vec<Scanned> = (documents.iter())
            .map(|(name, report)| Scanned {
                name,
                report: report.as_ref().map_err(String::clone),
            })
            .collect();
        let document = match output {
            ScanOutput::Junit => scan_junit(&scanned),
            _ => scan_sarif(&scanned),
        };
        if let Err(err) = stdout.write_all(document.as_bytes()) {
            return failed(format!("cannot write the report to stdout: {err}"));
        }
    }
    let _ = stdout.flush();
    Ok(code)
}
