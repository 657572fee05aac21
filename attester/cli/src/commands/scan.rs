//! `assay scan ASSET...`: fetch every source once, judge with the core, print, append to history.
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use assay_attest::sep41::{Sep41Outcome, Sep41Runner};
use assay_attest::targets::{evaluate_targets, resolve};
use assay_attest::AttestError;
use assay_chain::network;
use assay_core::{Asset, Report, Token};
use assay_scan::cache::AnswerCache;
use assay_scan::history::History;
use assay_scan::net::HttpClient;
use assay_scan::options::check_base_url;
use assay_scan::{ScanConfig, Scanner};
use clap::Args;

use super::shared::{OutputFormat, SourceArgs};
use super::{failed, usage, CommandError, CommandResult};
use assay_core::checks::HolderTrustline;
use assay_core::exit;

const EXIT_CODES: &str = "\
Exit codes:
  0   every report is complete (determined)
  1   error: at least one asset has no report (Horizon failure, unknown asset or issuer) or the
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

A token contract (C...) is judged by its code (bits 9-12 and their floors) and by whether its admin()
account's home domain lists it in [[CURRENCIES]]; see docs/severity-model.md, \"Contract tokens\".";

/// Arguments of `assay scan`.
#[derive(Args, Debug)]
#[command(
    about = "Scan assets: what can the issuer do to a balance, and who stands behind that power?",
    long_about = "Reads Horizon (asset record and issuer account, never cached), the issuer's stellar.toml \
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

    /// stellar-rpc endpoint a token contract (C…) is read from: its instance and WASM by
    /// getLedgerEntries, its admin() by simulation. Needed only for C… arguments.
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

    /// Also read this account's own trustline to each classic asset (its Horizon /accounts record) and add
    /// its exposure to the report: the `holder-trustline` finding and bits 6 (`trustline_clawback_enabled`)
    /// and 7 (`trustline_deauthorized`). Off-chain only: such a report is never attested.
    #[arg(long, value_name = "G…")]
    pub holder: Option<String>,
}

/// Runs `assay scan`.
pub fn run(args: ScanArgs) -> CommandResult {
    run_scan(args, false)
}

/// What the scan's runtime produced: the classic assets scanned (the holder's trustlines' assets when
/// `every_trustline`), their results, and the holder's trustline check when `--holder` was given.
type Scanned = (
    Vec<Asset>,
    Vec<Result<assay_core::Subject, assay_scan::ScanError>>,
    Option<HolderTrustline>,
);

/// `assay scan`, or with `every_trustline` `assay exposure`: the classic assets are those the holder's
/// account holds trustlines to.
pub(crate) fn run_scan(args: ScanArgs, every_trustline: bool) -> CommandResult {
    if let Some(holder) = &args.holder {
        if stellar_strkey::ed25519::PublicKey::from_string(holder).is_err() {
            return usage(format!(
                "invalid --holder {holder:?}: expected an account address (G… of 56 characters)"
            ));
        }
    }
    let mut assets: Vec<Asset> = Vec::with_capacity(args.assets.len());
    let mut contracts: Vec<String> = Vec::new();
    for input in &args.assets {
        match Token::parse(input) {
            Ok(Token::Classic(asset)) => assets.push(asset),
            Ok(Token::Contract(c)) => contracts.push(c),
            Ok(Token::Native) => {
                return usage(format!(
                    "invalid asset {input:?}: the native asset has no issuer to read; name a classic asset \
                     (CODE-ISSUER) or a token contract (C…)"
                ))
            }
            Err(err) => return usage(err),
        }
    }
    if args.sep41 && contracts.is_empty() {
        return usage(
            "--sep41 runs the conformance suite against token contracts: name one as C… (a classic \
             asset's Stellar Asset Contract is named by its C… address too)",
        );
    }
    if !contracts.is_empty() && args.rpc_url.is_none() {
        return usage(format!(
            "{} is a token contract: pass --rpc-url (or STELLAR_RPC_URL) of the network it lives on",
            contracts[0]
        ));
    }
    let passphrase = match &args.network_passphrase {
        Some(passphrase) => passphrase.clone(),
        None => match network::passphrase_of(&args.network, network::config_dir().as_deref()) {
            Ok(passphrase) => passphrase,
            Err(e) => return usage(format!("--network: {e}")),
        },
    };
    let settings = args.sources.settings(passphrase.clone())?;
    for list in &args.asset_lists {
        if let Err(message) = check_base_url("--asset-list", list) {
            return usage(message);
        }
    }
    if args.concurrency == 0 || args.concurrency > 256 {
        return usage(format!(
            "invalid --concurrency {}: expected 1 to 256",
            args.concurrency
        ));
    }
    let net = settings.net_config();
    let cache = if args.no_cache {
        None
    } else {
        args.cache_dir
            .clone()
            .or_else(AnswerCache::default_dir)
            .map(AnswerCache::new)
    };
    let history_path = if args.no_history {
        None
    } else {
        match args.history.clone().or_else(History::default_path) {
            Some(path) => Some(path),
            None => {
                return usage(
                    "no data directory for the history: pass --history PATH or --no-history",
                )
            }
        }
    };
    let config = ScanConfig {
        network_passphrase: passphrase.clone(),
        horizon_url: settings.horizon_url.clone(),
        expert_url: settings.expert_url.clone(),
        asset_lists: args.asset_lists.clone(),
        cache,
        concurrency: args.concurrency,
        // One run's assets share Horizon: as many requests to one host as assets in flight, as before.
        per_host: assay_scan::hosts::HostLimits {
            concurrency: args.concurrency,
            per_second: None,
        },
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => return failed(format!("cannot start the async runtime: {err}")),
    };
    let holder = args.holder.clone();
    let results = runtime.block_on(async {
        let http =
            HttpClient::new(&net).map_err(|e| CommandError::usage(format!("--cacert: {e}")))?;
        let scanner = Arc::new(Scanner::new(http, config));
        let mut assets = assets;
        let holder = match &holder {
            None => None,
            Some(holder) => {
                let (url, retrieved_at, trustlines) = scanner
                    .holder_trustlines(holder)
                    .await
                    .map_err(|e| CommandError::failed(format!("--holder {holder}: {e}")))?;
                if every_trustline {
                    assets = trustlines.iter().map(|t| t.asset.clone()).collect();
                }
                Some(HolderTrustline {
                    holder: holder.clone(),
                    url,
                    retrieved_at,
                    trustlines,
                })
            }
        };
        let total = assets.len();
        let show_progress = total > 1 && std::io::stderr().is_terminal();
        let done = Arc::new(AtomicUsize::new(0));
        let on_done: Arc<dyn Fn(usize) + Send + Sync> = Arc::new(move |_| {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if show_progress {
                eprint!("\rassay: scanned {n}/{total}");
                if n == total {
                    eprintln!();
                }
            }
        });
        if assets.is_empty() {
            return Ok::<Scanned, CommandError>((assets, Vec::new(), holder));
        }
        let results = scanner.scan_many(assets.clone(), on_done).await;
        Ok((assets, results, holder))
    });
    let (assets, results, holder) = results?;
    if every_trustline && assets.is_empty() && args.output == OutputFormat::Text {
        println!(
            "{} holds no trustline to a classic asset",
            args.holder.as_deref().unwrap_or_default()
        );
    }

    // Every report in argument-kind order: classic assets, then token contracts.
    let mut outcomes: Vec<(String, Result<Report, AttestError>, Option<Sep41Outcome>)> = assets
        .iter()
        .zip(results)
        .map(|(asset, result)| {
            let report = result
                .map_err(|e| AttestError::Source(e.to_string()))
                .and_then(|subject| {
                    let mut checks = assay_core::checks::default_checks();
                    if let Some(h) = &holder {
                        checks.push(Box::new(h.clone()));
                    }
                    Ok(assay_core::Engine::with_checks(checks).run(&subject)?)
                });
            (asset.to_string(), report, None)
        })
        .collect();
    if let Some(rpc_url) = &args.rpc_url {
        let mut targets = Vec::with_capacity(contracts.len());
        for c in &contracts {
            targets.push(resolve(c, &passphrase, &passphrase)?);
        }
        let suite = (args.sep41).then(|| Sep41Runner::keyless(rpc_url, &passphrase));
        let evaluated =
            evaluate_targets(&settings, rpc_url, &passphrase, &targets, suite.as_ref())?;
        outcomes.extend(
            (contracts.iter().cloned())
                .zip(evaluated)
                .map(|(c, (report, run))| (c, report, run)),
        );
    }

    let mut code = exit::OK;
    let mut stdout = std::io::stdout().lock();
    let mut rows = Vec::new();
    for (name, report, suite) in outcomes {
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
        let line = serde_json::to_string(&report).expect("a report always serialises");
        let rendered = match args.output {
            OutputFormat::Json => format!("{line}\n"),
            OutputFormat::Text => {
                let suite = suite.map(|run| run.render_text(&name)).unwrap_or_default();
                super::scan_text::render(&report) + &suite
            }
        };
        if let Err(err) = stdout.write_all(rendered.as_bytes()) {
            return failed(format!("cannot write the report to stdout: {err}"));
        }
        rows.push((name, report.scanned_at.to_string(), line));
    }
    let _ = stdout.flush();
    if let Some(path) = history_path {
        if !rows.is_empty() {
            if let Err(err) = History::open(&path).and_then(|mut h| h.append(&rows)) {
                eprintln!("assay scan: {err}; the reports above were not recorded (use --history PATH or --no-history)");
                code = exit::ERROR;
            }
        }
    }
    Ok(code)
}
