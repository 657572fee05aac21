//! `assay scan` and `assay exposure` as one library call: classic assets scanned through the shared
//! fetch policy (their ledger facts from stellar-rpc when it is configured, else Horizon), a holder's own
//! trustlines when asked, token contracts judged by their code, each report evaluated, and the reports
//! appended to the history. The command front end only parses its arguments and renders the result.

use std::path::PathBuf;
use std::sync::Arc;

use assay_core::checks::HolderTrustline;
use assay_core::{Asset, Report, Subject};
use assay_scan::cache::AnswerCache;
use assay_scan::history::{History, HistoryError};
use assay_scan::net::HttpClient;
use assay_scan::{ScanError, Scanner};

use crate::scanning::ScanSettings;
use crate::sep41::{Sep41Outcome, Sep41Runner};
use crate::targets::{evaluate_targets, resolve, Evaluated};
use crate::AttestError;

/// What to scan and how (`assay scan`'s arguments, checked).
pub struct ScanRequest {
    /// Where the sources are read. With `rpc_url` set, classic assets' ledger facts come from it, and
    /// token contracts are read there.
    pub settings: ScanSettings,
    /// Classic assets, in argument order.
    pub assets: Vec<Asset>,
    /// Token contracts (`C…`), in argument order; they need `settings.rpc_url`.
    pub contracts: Vec<String>,
    /// A holder whose own trustline to each classic asset is added to its report.
    pub holder: Option<String>,
    /// `assay exposure`: scan every asset the holder holds a trustline to instead of `assets`.
    pub every_trustline: bool,
    /// Run the SEP-41 suite, keyless on a fork, against each token contract.
    pub sep41: bool,
    /// SEP-42 lists consulted.
    pub asset_lists: Vec<String>,
    /// The StellarExpert answer cache, when used.
    pub cache: Option<AnswerCache>,
    /// Assets scanned at once.
    pub concurrency: usize,
    /// The history database the reports are appended to, when recorded.
    pub history: Option<PathBuf>,
}

/// One asset's or contract's outcome: its report (or why there is none) and the suite's run.
pub struct ScannedAsset {
    /// The asset as named (`CODE-ISSUER` or `C…`).
    pub name: String,
    /// Its report, or why it has none.
    pub report: Result<Report, AttestError>,
    /// The SEP-41 suite's run, with `--sep41`.
    pub suite: Option<Sep41Outcome>,
}

/// What a scan produced: classic assets first, then token contracts.
pub struct ScanReports {
    /// Every outcome, in that order.
    pub outcomes: Vec<ScannedAsset>,
    /// Why the reports could not be appended to the history, when they could not.
    pub history_error: Option<HistoryError>,
}

/// Progress of the classic assets' scans: called with (assets done, assets in all, the asset that just
/// finished) once with none done as they start, then as each one's scan finishes (from the scan's threads).
pub type Progress = Arc<dyn Fn(usize, usize, Option<&Asset>) + Send + Sync>;

/// Scans `request`'s assets and contracts, evaluates them and records the reports.
///
/// # Errors
/// [`AttestError::Input`] for a bad `--cacert` or a contract without `rpc_url`; [`AttestError::Source`]
/// when the holder's account cannot be read; [`AttestError::Local`] when no async runtime starts.
pub fn scan_reports(request: &ScanRequest, progress: Progress) -> Result<ScanReports, AttestError> {
    let (assets, results, holder) = scan_classic(request, progress)?;
    let mut outcomes: Vec<ScannedAsset> = assets
        .iter()
        .zip(results)
        .map(|(asset, result)| ScannedAsset {
            name: asset.to_string(),
            report: evaluate(result, holder.as_ref()),
            suite: None,
        })
        .collect();
    outcomes.extend(scan_contracts(request)?);
    let history_error = request
        .history
        .as_ref()
        .and_then(|path| record(path, &outcomes).err());
    Ok(ScanReports {
        outcomes,
        history_error,
    })
}

/// The classic assets scanned (the holder's trustlines' assets with `every_trustline`), their subjects
/// and the holder's trustline check.
type Classic = (
    Vec<Asset>,
    Vec<Result<Subject, ScanError>>,
    Option<HolderTrustline>,
);

fn scan_classic(request: &ScanRequest, progress: Progress) -> Result<Classic, AttestError> {
    let settings = &request.settings;
    let config = settings.scan_config(
        request.asset_lists.clone(),
        request.cache.clone(),
        request.concurrency,
        // One run's assets share their sources: as many requests to one host as assets in flight.
        assay_scan::hosts::HostLimits {
            concurrency: request.concurrency,
            per_second: None,
        },
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| AttestError::Local(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let http = HttpClient::new(&settings.net_config())?;
        let scanner = Arc::new(Scanner::new(http, config));
        let mut assets = request.assets.clone();
        let holder = match &request.holder {
            None => None,
            Some(holder) => {
                let named = (!request.every_trustline).then_some(assets.as_slice());
                let (url, retrieved_at, trustlines) = scanner
                    .holder_trustlines(holder, named)
                    .await
                    .map_err(|e| AttestError::Source(format!("--holder {holder}: {e}")))?;
                if request.every_trustline {
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
        if assets.is_empty() {
            return Ok((assets, Vec::new(), holder));
        }
        let total = assets.len();
        progress(0, total, None);
        let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let scanned = assets.clone();
        let on_done: Arc<dyn Fn(usize) + Send + Sync> = Arc::new(move |index| {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, total, scanned.get(index));
        });
        let results = scanner.scan_many(assets.clone(), on_done).await;
        Ok((assets, results, holder))
    })
}

/// A classic asset's report under the default checks, plus the holder's trustline check when asked.
fn evaluate(
    scanned: Result<Subject, ScanError>,
    holder: Option<&HolderTrustline>,
) -> Result<Report, AttestError> {
    let subject = scanned.map_err(|e| AttestError::Source(e.to_string()))?;
    let mut checks = assay_core::checks::default_checks();
    if let Some(h) = holder {
        checks.push(Box::new(h.clone()));
    }
    Ok(assay_core::Engine::with_checks(checks).run(&subject)?)
}

/// The token contracts' reports (and suite runs), read through `settings.rpc_url`.
fn scan_contracts(request: &ScanRequest) -> Result<Vec<ScannedAsset>, AttestError> {
    if request.contracts.is_empty() {
        return Ok(Vec::new());
    }
    let settings = &request.settings;
    let Some(rpc_url) = &settings.rpc_url else {
        return Err(AttestError::Input(format!(
            "{} is a token contract: pass --rpc-url (or STELLAR_RPC_URL) of the network it lives on",
            request.contracts[0]
        )));
    };
    let passphrase = &settings.asset_passphrase;
    let targets = request
        .contracts
        .iter()
        .map(|c| resolve(c, passphrase, passphrase))
        .collect::<Result<Vec<_>, _>>()?;
    let suite = request
        .sep41
        .then(|| Sep41Runner::keyless(rpc_url, passphrase));
    let evaluated = evaluate_targets(settings, rpc_url, passphrase, &targets, suite.as_ref())?;
    Ok(request
        .contracts
        .iter()
        .zip(evaluated)
        .map(|(name, Evaluated { report, suite, .. })| ScannedAsset {
            name: name.clone(),
            report,
            suite,
        })
        .collect())
}

/// Appends every report to the history at `path`.
fn record(path: &std::path::Path, outcomes: &[ScannedAsset]) -> Result<(), HistoryError> {
    let rows: Vec<(String, String, String)> = outcomes
        .iter()
        .filter_map(|o| {
            let report = o.report.as_ref().ok()?;
            let line = serde_json::to_string(report).ok()?;
            Some((o.name.clone(), report.scanned_at.to_string(), line))
        })
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    History::open(path).and_then(|mut h| h.append(&rows))
}
