//! `assay scan ASSET...`: fetch every source once, judge with the core, print, append to history.
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use assay_attest::scan_reports::{scan_reports, Progress, ScanRequest, ScannedAsset};
use assay_attest::AttestError;
use assay_chain::network;
use assay_core::exit;
use assay_core::{Asset, Token};
use assay_scan::cache::AnswerCache;
use assay_scan::history::History;
use assay_scan::options::check_base_url;
use clap::Args;

use super::shared::{OutputFormat, SourceArgs};
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
  assay scan --connect-to horizon.stellar.org:443:127.0.0.1:8443 --cacert ca.pem USDC-GA5Z...
  assay scan --network testnet --rpc-url https://soroban-testnet.stellar.org CDLZ...
  assay scan --network testnet --rpc-url https://soroban-testnet.stellar.org USDC-GBBD...   (no Horizon needed)

A token contract (C...) is judged by its code (bits 9-12 and their floors) and by whether its admin()
account's home domain lists it in [[CURRENCIES]]; see docs/severity-model.md, \"Contract tokens\".";

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
    after_help = EXIT_CODES
)]
pub struct ScanArgs {
    /// Assets to scan, as CODE-ISSUER or CODE:ISSUER, or token contracts as C… (read through --rpc-url).
    #[arg(value_name = "ASSET", required = true)]
    pub assets: Vec<String>,

    /// stellar-rpc endpoint of the assets' network. Classic assets' ledger facts (the issuer account's
    /// flags, home domain, signers and thresholds; a --holder's trustlines) are then read from the ledger
    /// with getLedgerEntries, and Horizon is optional (its asset record is read beside as a second copy of
    /// the flags when it answers). A token contract (C…) is read from it: its instance and WASM by
    /// getLedgerEntries, its admin() by simulation; needed for C… arguments.
    #[arg(long, value_name = "URL", env = "STELLAR_RPC_URL")]
    pub rpc_url: Option<String>,

    /// Passphrase of the network at --rpc-url (default: --network's), bound into a token's evidence hash.
    #[arg(long, value_name = "TEXT", env = "STELLAR_NETWORK_PASSPHRASE")]
    pub network_passphrase: Option<String>,

    /// Also run the 27-check SEP-41 conformance suite against each token contract (C…), keyless on a
    /// fork of the network at --rpc-url (nothing signed, nothing sent there), and include its verdicts
    /// in the report: a FAIL makes it critical with sep41_violation (bit 8); without a FAIL, an
    /// UNVERIFIABLE or SKIPPED row leaves it undetermined.
    #[arg(long)]
    pub sep41: bool,

    /// Output format: text for people, json for one schema_version 1 report per line.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// Network the assets live on: mainnet, testnet, futurenet, local, or a NAME from
    /// ~/.config/stellar/network/NAME.toml (then pass --horizon-url). Gives the default Horizon and the
    /// passphrase reports bind.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "mainnet",
        env = "STELLAR_NETWORK"
    )]
    pub network: String,

    #[command(flatten)]
    pub sources: SourceArgs,

    /// A SEP-42 asset list to consult (repeatable). Lists are evidence only: they never move severity.
    #[arg(long = "asset-list", value_name = "URL")]
    pub asset_lists: Vec<String>,

    /// Do not read or write the StellarExpert answer cache.
    #[arg(long)]
    pub no_cache: bool,

    /// Directory of the StellarExpert answer cache (default: the user's cache directory).
    #[arg(long, value_name = "DIR", env = "ASSAY_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,

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
}

/// Runs `assay scan`.
pub fn run(args: ScanArgs) -> CommandResult {
    run_scan(args, false)
}

/// `assay scan`, or with `every_trustline` `assay exposure` (the classic assets are those the holder's
/// account holds trustlines to): parse, scan through the library, render, exit.
pub(crate) fn run_scan(args: ScanArgs, every_trustline: bool) -> CommandResult {
    let request = request(&args, every_trustline)?;
    let show_progress = std::io::stderr().is_terminal();
    let progress: Progress = Arc::new(move |n, total| {
        if show_progress && total > 1 {
            eprint!("\rassay: scanned {n}/{total}");
            if n == total {
                eprintln!();
            }
        }
    });
    let scanned = scan_reports(&request, progress).map_err(|e| match e {
        AttestError::Source(m) => CommandError::failed(m),
        other => other.into(),
    })?;
    if every_trustline && scanned.outcomes.is_empty() && args.output == OutputFormat::Text {
        println!(
            "{} holds no trustline to a classic asset",
            args.holder.as_deref().unwrap_or_default()
        );
    }
    let mut code = render(scanned.outcomes, args.output)?;
    if let Some(err) = scanned.history_error {
        eprintln!(
            "assay scan: {err}; the reports above were not recorded (use --history PATH or --no-history)"
        );
        code = exit::ERROR;
    }
    Ok(code)
}

/// The scan `args` ask for, every argument checked.
fn request(args: &ScanArgs, every_trustline: bool) -> Result<ScanRequest, CommandError> {
    if let Some(holder) = &args.holder {
        if stellar_strkey::ed25519::PublicKey::from_string(holder).is_err() {
            return Err(CommandError::usage(format!(
                "invalid --holder {holder:?}: expected an account address (G… of 56 characters)"
            )));
        }
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
    if !contracts.is_empty() && args.rpc_url.is_none() {
        return Err(CommandError::usage(format!(
            "{} is a token contract: pass --rpc-url (or STELLAR_RPC_URL) of the network it lives on",
            contracts[0]
        )));
    }
    let passphrase = match &args.network_passphrase {
        Some(passphrase) => passphrase.clone(),
        None => network::passphrase_of(&args.network, network::config_dir().as_deref())
            .map_err(|e| CommandError::usage(format!("--network: {e}")))?,
    };
    let settings = args.sources.settings(passphrase, args.rpc_url.clone())?;
    for list in &args.asset_lists {
        check_base_url("--asset-list", list).map_err(CommandError::usage)?;
    }
    if args.concurrency == 0 || args.concurrency > 256 {
        return Err(CommandError::usage(format!(
            "invalid --concurrency {}: expected 1 to 256",
            args.concurrency
        )));
    }
    let cache = if args.no_cache {
        None
    } else {
        args.cache_dir
            .clone()
            .or_else(AnswerCache::default_dir)
            .map(AnswerCache::new)
    };
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
        every_trustline,
        sep41: args.sep41,
        asset_lists: args.asset_lists.clone(),
        cache,
        concurrency: args.concurrency,
        history,
    })
}

/// Prints every report (classic assets, then token contracts) and returns the exit code they make: 1 when
/// one has no report (its error on stderr), else 2 when one is undetermined, else 0.
fn render(outcomes: Vec<ScannedAsset>, output: OutputFormat) -> CommandResult {
    let mut code = exit::OK;
    let mut stdout = std::io::stdout().lock();
    for ScannedAsset {
        name,
        report,
        suite,
    } in outcomes
    {
        let report = match report {
            Ok(report) => report,
            Err(message) => {
                eprintln!(
                    "assay scan: {name}: {}",
                    assay_core::redact::text(&message.to_string())
                );
                code = exit::ERROR;
                continue;
            }
        };
        if report.undetermined && code == exit::OK {
            code = exit::UNDETERMINED;
        }
        let rendered = match output {
            OutputFormat::Json => {
                serde_json::to_string(&report).expect("a report always serialises") + "\n"
            }
            OutputFormat::Text => {
                let suite = suite.map(|run| run.render_text(&name)).unwrap_or_default();
                super::scan_text::render(&report) + &suite
            }
        };
        if let Err(err) = stdout.write_all(rendered.as_bytes()) {
            return failed(format!("cannot write the report to stdout: {err}"));
        }
    }
    let _ = stdout.flush();
    Ok(code)
}
