//! One scan: every source fetched once, answers shared across assets within a run, the result a
//! `Subject` for the core. A failure to read the issuer account (from Horizon, or from stellar-rpc when one
//! is configured: `ledger`) aborts (no report); every other source failure is recorded by its canonical
//! category so "we could not check" never reads as "this is fine".
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use assay_core::parse::{self, urls, StellarToml};
use assay_core::redact;
use assay_core::{
    Asset, AssetListOutcome, AssetListResult, Attempt, BlocklistAnswer, BlocklistOutcome,
    ControlOutcome, Currency, DirectoryOutcome, FailureCategory, FetchFailure, FlagsOutcome,
    HomeDomain, LedgerRead, LinkedDocument, LinkedOutcome, Observed, Provenance, Subject,
    Timestamp, TomlDocument, TomlOutcome, MAX_LINKED_DOCUMENTS,
};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::cache::{max_age, AnswerCache};
use crate::hosts::{host_of, HostGates, HostLimits};
use crate::net::{FailureKind, FetchError, FetchOptions, Fetched, HttpClient, RedirectPolicy};
use crate::retry;
use crate::shared::Shared;

mod ledger;

/// What a scan reads and how.
#[derive(Clone, Debug)]
pub struct ScanConfig {
    /// Passphrase of the network the assets live on: Horizon and stellar-rpc must serve it, and reports
    /// bind it.
    pub network_passphrase: String,
    /// Horizon of that network. Ledger facts are cited at its record addresses whichever source read them;
    /// it is read for them only as the second copy of the flags when `rpc_url` is set.
    pub horizon_url: String,
    /// The network's stellar-rpc. When set, the issuer account (flags, home domain, signers, thresholds)
    /// and a holder's trustlines are read from the ledger with `getLedgerEntries`, and Horizon becomes
    /// optional: its `/assets` record is read beside as the second copy of the flags, and a Horizon that
    /// does not answer is a copy not read (not an observation).
    pub rpc_url: Option<String>,
    /// The lowest ledger a stellar-rpc read may be served at (`watch` raises it to the ledger its reaction
    /// saw, so the re-scan reads at least that ledger). Shared: raising it reaches every scanner holding it.
    pub ledger_floor: LedgerFloor,
    pub expert_url: String,
    /// SEP-42 list URLs, in the order given.
    pub asset_lists: Vec<String>,
    /// StellarExpert answer cache; `None` disables it (`--no-cache`).
    pub cache: Option<AnswerCache>,
    /// Assets scanned at once.
    pub concurrency: usize,
    /// The bound on each source host (requests in flight, rate, `Retry-After`).
    pub per_host: HostLimits,
}

/// The lowest ledger stellar-rpc reads may be served at; 0 (the default) admits any.
pub type LedgerFloor = Arc<AtomicU32>;

/// The whole of one asset's scan: every wait (a retry's backoff, a `Retry-After`, a host's pause or rate
/// spacing, a fetch) ends by then, and a source not read by then is recorded as not read (undetermined).
pub const SCAN_BUDGET: Duration = Duration::from_secs(30);

tokio::task_local! {
    /// The instant the current asset's scan must be done by (set by [`Scanner::scan`]).
    static SCAN_DEADLINE: Instant;
}

/// The current scan's deadline, if a scan is running on this task.
fn scan_deadline() -> Option<Instant> {
    SCAN_DEADLINE.try_with(|d| *d).ok()
}

/// Why a source was not read: the scan's budget ran out first.
const OUT_OF_BUDGET: &str = "the scan's time budget ran out before this source could be read";

fn out_of_budget(url: &str) -> FetchError {
    FetchError {
        kind: FailureKind::Timeout,
        url: url.to_string(),
        detail: OUT_OF_BUDGET.to_string(),
    }
}

fn is_out_of_budget(err: &FetchError) -> bool {
    err.kind == FailureKind::Timeout && err.detail == OUT_OF_BUDGET
}

/// Why a scan produced no report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// Horizon could not be read: the flags are the premise of every verdict.
    #[error("horizon: {}: {}", redact::url(url), redact::text(failure))]
    Horizon { url: String, failure: String },
    /// Horizon has no such asset.
    #[error(
        "horizon: unknown asset {asset}: no /assets record at {}",
        redact::url(url)
    )]
    UnknownAsset { asset: String, url: String },
    /// The ledger (Horizon, or stellar-rpc's `getLedgerEntries`) has no such issuer account.
    #[error("issuer account not found: {}", redact::url(url))]
    UnknownIssuer { url: String },
    /// The ledger has no such account (a holder whose exposure was asked for).
    #[error(
        "account not found: {} (is it funded on this network?)",
        redact::url(url)
    )]
    UnknownAccount { url: String },
    /// stellar-rpc could not be read for a ledger fact the verdict rests on.
    #[error("stellar-rpc: {}: {}", redact::url(url), redact::text(failure))]
    Rpc { url: String, failure: String },
    /// stellar-rpc serves a different network than the asset's.
    #[error(
        "stellar-rpc: {} serves the network {served:?}, but the asset's network is {expected:?}; nothing was \
         scanned. Point --rpc-url at a stellar-rpc of the asset's network, or pick the asset's network with \
         --network / --asset-network",
        redact::url(url)
    )]
    RpcWrongNetwork {
        /// The endpoint (shown redacted).
        url: String,
        served: String,
        expected: String,
    },
    /// Horizon serves a different network than the asset's: its flags would be another ledger's.
    #[error(
        "horizon: {} serves the network {served:?}, but the asset's network is {expected:?}; nothing was \
         scanned. Point --horizon-url (or ASSAY_HORIZON_URL) at a Horizon of the asset's network, or pick \
         the asset's network with --network / --asset-network",
        redact::url(url)
    )]
    WrongNetwork {
        /// Horizon's base URL (shown redacted).
        url: String,
        served: String,
        expected: String,
    },
    /// This asset's scan panicked (a bug on some input): it is this asset's error, never the
    /// process's; the other assets are scanned as usual.
    #[error("scan of {asset} stopped on an internal error ({detail}); nothing was judged for it — please report this")]
    Panicked { asset: String, detail: String },
}

/// Counters for the benchmark and progress display.
#[derive(Debug, Default)]
pub struct Stats {
    pub requests: AtomicU64,
    pub cache_hits: AtomicU64,
}

#[derive(Clone)]
enum AccountAnswer {
    Read {
        flags: Observed<assay_core::IssuerFlags>,
        home_domain: Option<String>,
        control: ControlOutcome,
        /// The ledger it was read at, when read through stellar-rpc.
        ledger: Option<u32>,
    },
    Error(ScanError),
}

#[derive(Clone)]
enum TomlAnswer {
    Read(Fetched, StellarToml),
    Failed(String, Timestamp, FetchFailure),
    Refused(String, Timestamp, String),
}

/// Which StellarExpert answer is being read (decides the parser that gates caching).
#[derive(Clone, Copy)]
enum ExpertEndpoint {
    Directory,
    Blocklist,
}

#[derive(Clone)]
enum ExpertAnswer {
    Read {
        url: String,
        status: u16,
        body: Vec<u8>,
        retrieved_at: Timestamp,
    },
    Failed(Attempt),
}

/// What a scan read about the issuer account: both copies of the flags, its home domain and signers.
struct IssuerRead {
    asset_flags: FlagsOutcome,
    account_flags: FlagsOutcome,
    home_domain: Option<String>,
    control: ControlOutcome,
    ledger_read: Option<LedgerRead>,
}

/// The scanner for a run. Cheap to share behind an `Arc`.
pub struct Scanner {
    http: HttpClient,
    config: ScanConfig,
    horizon_network: Shared<(), Result<(), ScanError>>,
    rpc_network: Shared<(), Result<(), ScanError>>,
    accounts: Shared<String, AccountAnswer>,
    tomls: Shared<String, TomlAnswer>,
    linked: Shared<String, LinkedOutcome>,
    expert: Shared<String, ExpertAnswer>,
    lists: Shared<String, (Timestamp, Result<parse::AssetList, FetchFailure>)>,
    hosts: HostGates,
    /// How long one asset's scan may take in all ([`SCAN_BUDGET`] unless set).
    budget: Duration,
    pub stats: Stats,
}

/// A failed fetch as a canonical failure (policy refusals are handled by the caller).
pub fn to_failure(err: &FetchError) -> FetchFailure {
    let category = match &err.kind {
        FailureKind::Dns => FailureCategory::DnsFailure,
        FailureKind::ConnectionRefused => FailureCategory::ConnectionRefused,
        FailureKind::Tls => FailureCategory::TlsFailure,
        FailureKind::Timeout => FailureCategory::Timeout,
        FailureKind::Status(code) => FailureCategory::Status(*code),
        FailureKind::TooManyRedirects => FailureCategory::TooManyRedirects,
        FailureKind::TooLarge => FailureCategory::BodyTooLarge,
        FailureKind::Refused(_) | FailureKind::Unknown => FailureCategory::UnknownFailure,
    };
    FetchFailure::with_detail(category, err.to_string())
}

/// True when `domain` is a plain DNS host name (what `home_domain` must be before it is put in a URL).
pub fn is_host_name(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

const JSON: &str = "application/json";
pub(crate) const API: FetchOptions = FetchOptions {
    guarded: false,
    https_only: false,
    redirects: RedirectPolicy::None,
    accept: JSON,
};
const SEP1: FetchOptions = FetchOptions {
    guarded: true,
    https_only: true,
    redirects: RedirectPolicy::SameHostOrSubdomain,
    accept: "text/plain, application/toml, */*",
};
pub(crate) const LIST: FetchOptions = FetchOptions {
    guarded: false,
    https_only: false,
    redirects: RedirectPolicy::SameHostOrSubdomain,
    accept: JSON,
};

impl Scanner {
    pub fn new(http: HttpClient, config: ScanConfig) -> Self {
        Scanner {
            http,
            hosts: HostGates::new(config.per_host),
            config,
            horizon_network: Shared::default(),
            rpc_network: Shared::default(),
            accounts: Shared::default(),
            tomls: Shared::default(),
            linked: Shared::default(),
            expert: Shared::default(),
            lists: Shared::default(),
            budget: SCAN_BUDGET,
            stats: Stats::default(),
        }
    }

    /// This scanner with `budget` in place of [`SCAN_BUDGET`] for each asset's scan.
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// This scanner with `overrides` in place of the common per-host limits for the hosts they name.
    pub fn with_host_limits(
        mut self,
        overrides: impl IntoIterator<Item = (String, HostLimits)>,
    ) -> Self {
        self.hosts = HostGates::new(self.config.per_host).with_overrides(overrides);
        self
    }

    pub fn config(&self) -> &ScanConfig {
        &self.config
    }

    /// GETs `url` through its host's gate. Within a scan, the wait for the gate and the fetch end by the
    /// scan's deadline: past it, the fetch fails as out of budget (a timeout) without being sent.
    pub(crate) async fn get(&self, url: &str, opts: FetchOptions) -> Result<Fetched, FetchError> {
        let host = host_of(url);
        let fetched = self.gated(url, self.http.get(url, opts)).await;
        // A host that asks to be left alone is: every later request to it waits, whichever asset needs it.
        if let (Some(host), Ok(f)) = (&host, &fetched) {
            if f.status == 429 || f.status == 503 {
                if let Some(wait) = retry::retry_after(&f.headers) {
                    self.hosts.pause(host, wait);
                }
            }
        }
        fetched
    }

    /// POSTs a JSON-RPC `body` to `url` through its host's gate, within the scan's deadline as [`Self::get`].
    pub(crate) async fn post(&self, url: &str, body: Vec<u8>) -> Result<Fetched, FetchError> {
        self.gated(url, self.http.post_json(url, body)).await
    }

    /// Runs `fetch` once `url`'s host admits it, both before the scan's deadline (when there is one).
    async fn gated(
        &self,
        url: &str,
        fetch: impl std::future::Future<Output = Result<Fetched, FetchError>>,
    ) -> Result<Fetched, FetchError> {
        let deadline = scan_deadline();
        let _permit = match host_of(url) {
            Some(host) => match self.hosts.acquire_before(&host, deadline).await {
                Some(permit) => Some(permit),
                None => return Err(out_of_budget(url)),
            },
            None => None,
        };
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, fetch)
                .await
                .unwrap_or_else(|_| Err(out_of_budget(url))),
            None => fetch.await,
        }
    }

    /// Scans many assets with bounded concurrency; results come back in input order.
    /// `on_done` is called as each asset finishes (for progress display).
    pub async fn scan_many(
        self: &Arc<Self>,
        assets: Vec<Asset>,
        on_done: Arc<dyn Fn(usize) + Send + Sync>,
    ) -> Vec<Result<Subject, ScanError>> {
        let mut results: Vec<Option<Result<Subject, ScanError>>> = Vec::new();
        results.resize_with(assets.len(), || None);
        self.scan_each_reporting(assets, on_done, |index, result| {
            results[index] = Some(result);
        })
        .await;
        results
            .into_iter()
            .map(|r| r.expect("every asset scanned"))
            .collect()
    }

    /// Scans many assets with bounded concurrency and hands each one's result (with its index in
    /// `assets`) to `each` as soon as it is ready, in the order they finish; every asset is handed
    /// over exactly once, a panicking scan as that asset's error.
    pub async fn scan_each(
        self: &Arc<Self>,
        assets: Vec<Asset>,
        each: impl FnMut(usize, Result<Subject, ScanError>),
    ) {
        self.scan_each_reporting(assets, Arc::new(|_| {}), each)
            .await
    }

    /// [`Scanner::scan_each`], with `on_done` called inside each asset's task as it finishes.
    async fn scan_each_reporting(
        self: &Arc<Self>,
        assets: Vec<Asset>,
        on_done: Arc<dyn Fn(usize) + Send + Sync>,
        mut each: impl FnMut(usize, Result<Subject, ScanError>),
    ) {
        let permits = Arc::new(Semaphore::new(self.config.concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        // Which asset each task scans, so a task that panics becomes that asset's error.
        let mut scanning = std::collections::HashMap::new();
        for (index, asset) in assets.into_iter().enumerate() {
            let scanner = self.clone();
            let permits = permits.clone();
            let on_done = on_done.clone();
            let name = asset.to_string();
            let task = tasks.spawn(async move {
                let _permit = permits.acquire_owned().await.expect("semaphore open");
                let result = scanner.scan(&asset).await;
                on_done(index);
                (index, result)
            });
            scanning.insert(task.id(), (index, name));
        }
        while let Some(joined) = tasks.join_next_with_id().await {
            let (index, result) = match joined {
                Ok((_, done)) => done,
                Err(failed) => {
                    let Some((index, asset)) = scanning.remove(&failed.id()) else {
                        continue;
                    };
                    let detail = panic_text(failed);
                    (index, Err(ScanError::Panicked { asset, detail }))
                }
            };
            each(index, result);
        }
    }

    /// Scans one asset: the issuer facts (Horizon's asset record, then the issuer account; or the issuer
    /// account entry through stellar-rpc with Horizon's asset record beside it),
    /// then stellar.toml, the directory, the blocklist and the asset lists concurrently; all of it within
    /// the scan's budget ([`SCAN_BUDGET`]), after which a source not yet read is recorded as not read.
    pub async fn scan(&self, asset: &Asset) -> Result<Subject, ScanError> {
        SCAN_DEADLINE
            .scope(Instant::now() + self.budget, self.scan_within_budget(asset))
            .await
    }

    async fn scan_within_budget(&self, asset: &Asset) -> Result<Subject, ScanError> {
        let issuer = match self.config.rpc_url {
            Some(_) => self.issuer_from_ledger(asset).await?,
            None => self.issuer_from_horizon(asset).await?,
        };
        let home_domain = match issuer.home_domain {
            Some(domain) => HomeDomain::Present(domain),
            None => HomeDomain::Absent,
        };

        let (stellar_toml, (directory, blocklist), asset_lists) = tokio::join!(
            self.stellar_toml(Some(asset), &home_domain),
            self.directory_and_blocklist(&asset.issuer, &home_domain),
            self.asset_lists(asset),
        );
        let sources = (stellar_toml, directory, blocklist, asset_lists);
        let provenance = Provenance {
            network: Some(self.config.network_passphrase.clone()),
            scanner_version: Some(crate::SCANNER_VERSION.to_string()),
            scanned_at: Timestamp::now(),
        };
        let answers = (issuer.asset_flags, issuer.account_flags, home_domain);
        Ok(Subject::read(asset.clone(), answers, sources, provenance)
            .with_control(issuer.control)
            .with_ledger_read(issuer.ledger_read))
    }

    /// The issuer facts from Horizon's two records: the `/assets` record, then the issuer's `/accounts`
    /// record. Either failing is an error: the flags are the premise of every verdict.
    async fn issuer_from_horizon(&self, asset: &Asset) -> Result<IssuerRead, ScanError> {
        self.horizon_network
            .get_or_fetch(&(), || self.check_horizon_network())
            .await?;
        let horizon = self.config.horizon_url.as_str();
        let assets_url = urls::horizon_assets(horizon, asset);
        let fetched = self
            .get(&assets_url, API)
            .await
            .map_err(|err| ScanError::Horizon {
                url: assets_url.clone(),
                failure: to_failure(&err).describe(),
            })?;
        if fetched.status != 200 {
            return Err(ScanError::Horizon {
                url: assets_url,
                failure: FailureCategory::Status(fetched.status).to_string(),
            });
        }
        let record = parse::parse_horizon_assets(&fetched.body, asset)
            .map_err(|err| ScanError::Horizon {
                url: assets_url.clone(),
                failure: err.to_failure().describe(),
            })?
            .ok_or_else(|| ScanError::UnknownAsset {
                asset: asset.to_string(),
                url: assets_url.clone(),
            })?;
        let asset_flags = FlagsOutcome::Read(Observed {
            url: assets_url,
            retrieved_at: Timestamp::from_system_time(fetched.retrieved_at),
            value: record.flags,
        });
        match self.account(&asset.issuer).await {
            AccountAnswer::Read {
                flags,
                home_domain,
                control,
                ..
            } => Ok(IssuerRead {
                asset_flags,
                account_flags: FlagsOutcome::Read(flags),
                home_domain,
                control,
                ledger_read: None,
            }),
            AccountAnswer::Error(err) => Err(err),
        }
    }

    /// The issuer facts from the ledger: the issuer account entry through stellar-rpc, and Horizon's
    /// `/assets` record beside it as the second copy of the flags (the two-copy reconciliation then applies
    /// as to Horizon's two records). Without that copy, the one entry stands for both: a copy not read is
    /// not an observation, and the entry is the ledger's own state, not an index of it.
    async fn issuer_from_ledger(&self, asset: &Asset) -> Result<IssuerRead, ScanError> {
        let (account, horizon_copy) =
            tokio::join!(self.account(&asset.issuer), self.horizon_asset_copy(asset));
        let (flags, home_domain, control, ledger) = match account {
            AccountAnswer::Read {
                flags,
                home_domain,
                control,
                ledger,
            } => (flags, home_domain, control, ledger),
            AccountAnswer::Error(err) => return Err(err),
        };
        let (asset_flags, unread) = match horizon_copy? {
            Ok(observed) => (observed, None),
            Err(why) => (
                Observed {
                    url: urls::horizon_assets(&self.config.horizon_url, asset),
                    ..flags.clone()
                },
                Some(why.to_string()),
            ),
        };
        Ok(IssuerRead {
            asset_flags: FlagsOutcome::Read(asset_flags),
            account_flags: FlagsOutcome::Read(flags),
            home_domain,
            control,
            ledger_read: Some(LedgerRead {
                rpc_url: self.config.rpc_url.clone().unwrap_or_default(),
                ledger: ledger.unwrap_or_default(),
                horizon_copy_unread: unread,
            }),
        })
    }

    /// Reads Horizon's root once per run and refuses a Horizon that serves another network: its
    /// flags would be another ledger's, bound into evidence as if observed on the asset's network.
    async fn check_horizon_network(&self) -> Result<(), ScanError> {
        let url = urls::horizon_root(&self.config.horizon_url);
        let horizon_error = |failure: String| ScanError::Horizon {
            url: url.clone(),
            failure: format!("{failure} (the root names the network Horizon serves)"),
        };
        let fetched = self
            .get(&url, API)
            .await
            .map_err(|err| horizon_error(to_failure(&err).describe()))?;
        if fetched.status != 200 {
            return Err(horizon_error(
                FailureCategory::Status(fetched.status).to_string(),
            ));
        }
        let served = parse::parse_horizon_root(&fetched.body)
            .map_err(|err| horizon_error(err.to_failure().describe()))?;
        if served != self.config.network_passphrase {
            return Err(ScanError::WrongNetwork {
                url: self.config.horizon_url.clone(),
                served,
                expected: self.config.network_passphrase.clone(),
            });
        }
        Ok(())
    }

    /// The account record of `issuer`: its entry through stellar-rpc when one is configured, else Horizon's
    /// `/accounts` record. Read once per run and shared by the assets of one issuer.
    async fn account(&self, issuer: &str) -> AccountAnswer {
        let url = urls::horizon_account(&self.config.horizon_url, issuer);
        self.accounts
            .get_or_fetch(&issuer.to_string(), || async {
                if self.config.rpc_url.is_some() {
                    return self.rpc_account(issuer).await;
                }
                let fetched = match self.get(&url, API).await {
                    Ok(f) => f,
                    Err(err) => {
                        return AccountAnswer::Error(ScanError::Horizon {
                            url: url.clone(),
                            failure: to_failure(&err).describe(),
                        })
                    }
                };
                match fetched.status {
                    200 => {}
                    404 => {
                        return AccountAnswer::Error(ScanError::UnknownIssuer { url: url.clone() })
                    }
                    status => {
                        return AccountAnswer::Error(ScanError::Horizon {
                            url: url.clone(),
                            failure: FailureCategory::Status(status).to_string(),
                        })
                    }
                }
                match parse::parse_horizon_account(&fetched.body) {
                    Ok(record) => AccountAnswer::Read {
                        flags: Observed {
                            url: url.clone(),
                            retrieved_at: Timestamp::from_system_time(fetched.retrieved_at),
                            value: record.flags,
                        },
                        home_domain: record.home_domain,
                        control: ControlOutcome::of_record(
                            &url,
                            Timestamp::from_system_time(fetched.retrieved_at),
                            record.control,
                        ),
                        ledger: None,
                    },
                    Err(err) => AccountAnswer::Error(ScanError::Horizon {
                        url: url.clone(),
                        failure: err.to_failure().describe(),
                    }),
                }
            })
            .await
    }

    /// The trustlines of `holder` (`G…`) with the URL they are cited at and when they were read: what a
    /// holder's own exposure is read from. With stellar-rpc configured and `assets` named, its trustlines
    /// to those assets are read from the ledger (`getLedgerEntries`); with `assets` `None` (every trustline:
    /// stellar-rpc reads entries by key and cannot list them) or without stellar-rpc, from its Horizon
    /// `/accounts` record. Never cached; a failure is an error (no exposure is read).
    pub async fn holder_trustlines(
        &self,
        holder: &str,
        assets: Option<&[Asset]>,
    ) -> Result<(String, Timestamp, Vec<assay_core::HeldTrustline>), ScanError> {
        if let (Some(_), Some(assets)) = (&self.config.rpc_url, assets) {
            return self.rpc_holder_trustlines(holder, assets).await;
        }
        self.horizon_network
            .get_or_fetch(&(), || self.check_horizon_network())
            .await?;
        let url = urls::horizon_account(&self.config.horizon_url, holder);
        let horizon = |failure: String| ScanError::Horizon {
            url: url.clone(),
            failure,
        };
        let fetched = self
            .get(&url, API)
            .await
            .map_err(|err| horizon(to_failure(&err).describe()))?;
        match fetched.status {
            200 => {}
            404 => return Err(ScanError::UnknownAccount { url: url.clone() }),
            status => return Err(horizon(FailureCategory::Status(status).to_string())),
        }
        let lines = parse::parse_account_trustlines(&fetched.body)
            .map_err(|err| horizon(err.to_failure().describe()))?;
        Ok((
            url.clone(),
            Timestamp::from_system_time(fetched.retrieved_at),
            lines,
        ))
    }

    /// The `home_domain` of `account` (a token contract's admin) and that domain's stellar.toml, under the
    /// same fetch policy as an issuer's; `toml=` links are not followed (a token's claim is an inline
    /// `contract` key). Returns the account URL read, the domain and the toml outcome.
    pub async fn account_domain(
        &self,
        account: &str,
    ) -> Result<(String, HomeDomain, TomlOutcome), ScanError> {
        let url = urls::horizon_account(&self.config.horizon_url, account);
        let home_domain = match self.account(account).await {
            AccountAnswer::Read {
                home_domain: Some(domain),
                ..
            } => HomeDomain::Present(domain),
            AccountAnswer::Read { .. } => HomeDomain::Absent,
            AccountAnswer::Error(err) => return Err(err),
        };
        let toml = self.stellar_toml(None, &home_domain).await;
        Ok((url, home_domain, toml))
    }

    async fn stellar_toml(&self, asset: Option<&Asset>, home_domain: &HomeDomain) -> TomlOutcome {
        let Some(domain) = home_domain.domain() else {
            return TomlOutcome::NotFetched;
        };
        let requested_url = urls::stellar_toml(domain);
        if !is_host_name(domain) {
            return TomlOutcome::Refused {
                requested_url,
                retrieved_at: Timestamp::now(),
                reason: format!("home_domain {domain:?} is not a host name"),
            };
        }
        let answer = self
            .tomls
            .get_or_fetch(&domain.to_ascii_lowercase(), || async {
                match self.get(&requested_url, SEP1).await {
                    Err(FetchError {
                        kind: FailureKind::Refused(reason),
                        ..
                    }) => TomlAnswer::Refused(requested_url.clone(), Timestamp::now(), reason),
                    Err(err) => TomlAnswer::Failed(
                        requested_url.clone(),
                        Timestamp::now(),
                        to_failure(&err),
                    ),
                    Ok(f) if f.status != 200 => TomlAnswer::Failed(
                        requested_url.clone(),
                        Timestamp::from_system_time(f.retrieved_at),
                        FetchFailure::with_detail(
                            FailureCategory::Status(f.status),
                            format!("{}: status {}", f.url, f.status),
                        ),
                    ),
                    Ok(f) => match parse::parse_stellar_toml(&f.body) {
                        Ok(doc) => TomlAnswer::Read(f, doc),
                        Err(err) => TomlAnswer::Failed(
                            requested_url.clone(),
                            Timestamp::from_system_time(f.retrieved_at),
                            err.to_failure(),
                        ),
                    },
                }
            })
            .await;
        match answer {
            TomlAnswer::Refused(requested_url, retrieved_at, reason) => TomlOutcome::Refused {
                requested_url,
                retrieved_at,
                reason,
            },
            TomlAnswer::Failed(requested_url, retrieved_at, failure) => TomlOutcome::Failed {
                requested_url,
                retrieved_at,
                failure,
            },
            TomlAnswer::Read(fetched, doc) => {
                let links = asset.map(|a| doc.unresolved_links(a)).unwrap_or_default();
                let mut linked = Vec::with_capacity(links.len());
                let follow = links.iter().take(MAX_LINKED_DOCUMENTS);
                let outcomes = join_all(follow.map(|link| self.linked_document(link))).await;
                for (link, outcome) in links.iter().zip(outcomes) {
                    linked.push(LinkedDocument {
                        url: link.clone(),
                        outcome,
                    });
                }
                for link in links.iter().skip(MAX_LINKED_DOCUMENTS) {
                    linked.push(LinkedDocument {
                        url: link.clone(),
                        outcome: LinkedOutcome::NotFollowed,
                    });
                }
                TomlOutcome::Document(TomlDocument {
                    requested_url: fetched.requested_url,
                    url: fetched.url,
                    retrieved_at: Timestamp::from_system_time(fetched.retrieved_at),
                    currencies: doc.currencies,
                    linked,
                })
            }
        }
    }

    /// One hop: a linked document's own links are never followed.
    async fn linked_document(&self, link: &str) -> LinkedOutcome {
        self.linked
            .get_or_fetch(&link.to_string(), || async {
                match self.get(link, SEP1).await {
                    Err(FetchError {
                        kind: FailureKind::Refused(reason),
                        ..
                    }) => LinkedOutcome::Refused {
                        retrieved_at: Timestamp::now(),
                        reason,
                    },
                    Err(err) => LinkedOutcome::Failed {
                        retrieved_at: Timestamp::now(),
                        failure: to_failure(&err),
                    },
                    Ok(f) if f.status != 200 => LinkedOutcome::Failed {
                        retrieved_at: Timestamp::from_system_time(f.retrieved_at),
                        failure: FetchFailure::new(FailureCategory::Status(f.status)),
                    },
                    Ok(f) => match parse::parse_linked_currency_document(&f.body) {
                        Ok(currencies) => LinkedOutcome::Read {
                            retrieved_at: Timestamp::from_system_time(f.retrieved_at),
                            currencies: currencies
                                .into_iter()
                                .map(|c| Currency { toml: None, ..c })
                                .collect(),
                        },
                        Err(err) => LinkedOutcome::Failed {
                            retrieved_at: Timestamp::from_system_time(f.retrieved_at),
                            failure: err.to_failure(),
                        },
                    },
                }
            })
            .await
    }

    async fn directory(&self, issuer: &str) -> DirectoryOutcome {
        let url = urls::directory(&self.config.expert_url, issuer);
        match self.stellar_expert(&url, ExpertEndpoint::Directory).await {
            ExpertAnswer::Failed(attempt) => DirectoryOutcome::Failed(attempt),
            ExpertAnswer::Read {
                url,
                status,
                body,
                retrieved_at,
            } => {
                if status == 404 {
                    return DirectoryOutcome::NotListed { url, retrieved_at };
                }
                match parse::parse_directory(&body) {
                    Ok(Some(entry)) => DirectoryOutcome::Listed(Observed {
                        url,
                        retrieved_at,
                        value: entry,
                    }),
                    Ok(None) => DirectoryOutcome::NotListed { url, retrieved_at },
                    Err(err) => DirectoryOutcome::Failed(Attempt {
                        url,
                        retrieved_at,
                        failure: err.to_failure(),
                    }),
                }
            }
        }
    }

    /// The directory entry for `issuer` and the blocklist's answer for the issuer's domain: its
    /// `home_domain`, asked beside the directory; or, when it advertises none, the domain the directory
    /// lists it under, asked once the directory answered (scanner-checks fix #4). With neither, the
    /// blocklist is never asked, and that is recorded.
    async fn directory_and_blocklist(
        &self,
        issuer: &str,
        home_domain: &HomeDomain,
    ) -> (DirectoryOutcome, BlocklistOutcome) {
        if let Some(domain) = home_domain.domain() {
            return tokio::join!(self.directory(issuer), self.blocklist(domain));
        }
        let directory = self.directory(issuer).await;
        let blocklist = match assay_core::checks::blocklist_key(home_domain, &directory) {
            Some(domain) => self.blocklist(&domain).await,
            None => BlocklistOutcome::SkippedNoHomeDomain,
        };
        (directory, blocklist)
    }

    async fn blocklist(&self, domain: &str) -> BlocklistOutcome {
        let url = urls::blocked_domain(&self.config.expert_url, domain);
        if !is_host_name(domain) {
            // Putting free text into the path could ask a different question; an unasked question
            // is not a clean answer, so the lookup is recorded as failed.
            return BlocklistOutcome::Failed(Attempt {
                url,
                retrieved_at: Timestamp::now(),
                failure: FetchFailure::with_detail(
                    FailureCategory::Malformed,
                    format!("domain {domain:?} is not a host name, so the blocklist lookup could not be keyed"),
                ),
            });
        }
        match self.stellar_expert(&url, ExpertEndpoint::Blocklist).await {
            ExpertAnswer::Failed(attempt) => BlocklistOutcome::Failed(attempt),
            // The spec's reading of a 404: the blocklist was read and has no entry for the domain.
            ExpertAnswer::Read {
                url,
                status: 404,
                retrieved_at,
                ..
            } => BlocklistOutcome::Answered(Observed {
                url,
                retrieved_at,
                value: BlocklistAnswer {
                    domain: domain.to_string(),
                    blocked: false,
                },
            }),
            ExpertAnswer::Read {
                url,
                body,
                retrieved_at,
                ..
            } => match parse::parse_blocked_domain(&body) {
                Ok(answer) => BlocklistOutcome::Answered(Observed {
                    url,
                    retrieved_at,
                    value: answer,
                }),
                Err(err) => BlocklistOutcome::Failed(Attempt {
                    url,
                    retrieved_at,
                    failure: err.to_failure(),
                }),
            },
        }
    }

    /// A StellarExpert answer: cache, then up to `retry::ATTEMPTS` tries. A 200 and a 404 are read
    /// answers (the spec: a 404 means the source was read and has no entry); 429, 5xx and timeouts are not.
    async fn stellar_expert(&self, url: &str, endpoint: ExpertEndpoint) -> ExpertAnswer {
        self.expert
            .get_or_fetch(&url.to_string(), || async {
                if let Some(cache) = &self.config.cache {
                    if let Some(hit) = cache.get(url) {
                        if let Some(retrieved_at) = Timestamp::from_unix(hit.retrieved_at) {
                            self.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
                            return ExpertAnswer::Read {
                                url: url.to_string(),
                                status: 200,
                                body: hit.body,
                                retrieved_at,
                            };
                        }
                    }
                }
                let answer = self.stellar_expert_fetch(url).await;
                if let (
                    Some(cache),
                    ExpertAnswer::Read {
                        status: 200,
                        body,
                        retrieved_at,
                        ..
                    },
                ) = (&self.config.cache, &answer.0)
                {
                    if let Some(ttl) = answer.1 {
                        // Cache only what parses: a malformed body is a failure, and failures are never cached.
                        let parses = match endpoint {
                            ExpertEndpoint::Directory => parse::parse_directory(body).is_ok(),
                            ExpertEndpoint::Blocklist => parse::parse_blocked_domain(body).is_ok(),
                        };
                        if parses {
                            cache.put(url, body, retrieved_at.unix(), ttl);
                        }
                    }
                }
                answer.0
            })
            .await
    }

    async fn stellar_expert_fetch(&self, url: &str) -> (ExpertAnswer, Option<Duration>) {
        let mut attempt = 0;
        let mut last_failure: Option<FetchFailure> = None;
        loop {
            let result = self.get(url, API).await;
            let (failure, server_asked, retryable) = match &result {
                Ok(f) if f.status == 200 || f.status == 404 => {
                    let ttl = max_age(
                        f.headers
                            .get(hyper::header::CACHE_CONTROL)
                            .and_then(|v| v.to_str().ok()),
                    );
                    return (
                        ExpertAnswer::Read {
                            url: url.to_string(),
                            status: f.status,
                            body: f.body.clone(),
                            retrieved_at: Timestamp::from_system_time(f.retrieved_at),
                        },
                        if f.status == 200 { ttl } else { None },
                    );
                }
                Ok(f) => (
                    FetchFailure::with_detail(
                        FailureCategory::Status(f.status),
                        format!("{url}: status {}", f.status),
                    ),
                    retry::retry_after(&f.headers),
                    retry::retryable_status(f.status),
                ),
                Err(err) => (
                    to_failure(err),
                    None,
                    !matches!(err.kind, FailureKind::Refused(_) | FailureKind::TooLarge),
                ),
            };
            // Out of budget: the last answer the source gave, when it gave one, says more than the timeout.
            let failure = match (&result, last_failure.take()) {
                (Err(err), Some(earlier)) if is_out_of_budget(err) => earlier,
                _ => failure,
            };
            attempt += 1;
            let wait = retry::backoff(attempt - 1, server_asked);
            let in_budget = scan_deadline().is_none_or(|d| Instant::now() + wait < d);
            let out_of_budget = matches!(&result, Err(err) if is_out_of_budget(err));
            if !retryable || attempt >= retry::ATTEMPTS || !in_budget || out_of_budget {
                return (
                    ExpertAnswer::Failed(Attempt {
                        url: url.to_string(),
                        retrieved_at: Timestamp::now(),
                        failure,
                    }),
                    None,
                );
            }
            last_failure = Some(failure);
            tokio::time::sleep(wait).await;
        }
    }

    async fn asset_lists(&self, asset: &Asset) -> Vec<AssetListOutcome> {
        let lists = join_all(
            self.config
                .asset_lists
                .iter()
                .map(|url| self.asset_list(url)),
        )
        .await;
        self.config
            .asset_lists
            .iter()
            .zip(lists)
            .map(|(url, (retrieved_at, list))| AssetListOutcome {
                url: url.clone(),
                retrieved_at,
                result: match list {
                    Ok(list) => AssetListResult::Read {
                        list_name: list.name.clone(),
                        entry: list.find(asset).cloned(),
                    },
                    Err(failure) => AssetListResult::Failed(failure),
                },
            })
            .collect()
    }

    async fn asset_list(&self, url: &str) -> (Timestamp, Result<parse::AssetList, FetchFailure>) {
        self.lists
            .get_or_fetch(&url.to_string(), || async {
                match self.get(url, LIST).await {
                    Err(err) => (Timestamp::now(), Err(to_failure(&err))),
                    Ok(f) if f.status != 200 => (
                        Timestamp::from_system_time(f.retrieved_at),
                        Err(FetchFailure::new(FailureCategory::Status(f.status))),
                    ),
                    Ok(f) => (
                        Timestamp::from_system_time(f.retrieved_at),
                        parse::parse_asset_list(&f.body).map_err(|e| e.to_failure()),
                    ),
                }
            })
            .await
    }
}

/// What a failed task says: its panic message when it has one.
fn panic_text(failed: tokio::task::JoinError) -> String {
    if failed.is_panic() {
        panic_message(failed.into_panic().as_ref())
    } else {
        failed.to_string()
    }
}

/// The message a caught panic carried (`panic!` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs futures concurrently and returns their outputs in order (a small `join_all`).
async fn join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = (0..pinned.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, fut) in pinned.iter_mut().enumerate() {
            if outputs[i].is_none() {
                match fut.as_mut().poll(cx) {
                    std::task::Poll::Ready(out) => outputs[i] = Some(out),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().map(|o| o.expect("completed")).collect()
}
