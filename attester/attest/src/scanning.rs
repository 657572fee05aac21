//! Scans for attestation: always fresh (the answer cache is bypassed), with the report bound to the
//! network the asset lives on.

use std::sync::Arc;
use std::time::Duration;

use assay_core::{Asset, HomeDomain, Report, Subject, TomlOutcome};
use assay_scan::hosts::HostLimits;
use assay_scan::net::mapping::Mappings;
use assay_scan::net::{HttpClient, NetConfig};
use assay_scan::options;
use assay_scan::{ScanConfig, Scanner};

use crate::AttestError;

/// Where the asset's sources are read.
#[derive(Debug, Clone)]
pub struct ScanSettings {
    /// Passphrase of the network the asset lives on (bound into the evidence hash).
    pub asset_passphrase: String,
    /// Horizon of that network: where ledger facts are cited (the evidence binds these addresses, whichever
    /// source read the fact), read for them when `rpc_url` is `None`, and as the optional second copy of the
    /// flags otherwise.
    pub horizon_url: String,
    /// stellar-rpc of that network: when set, the issuer account and a holder's trustlines are read from the
    /// ledger with `getLedgerEntries`, and Horizon need not be reachable.
    pub rpc_url: Option<String>,
    /// The lowest ledger those reads may be served at (`watch` raises it to the ledger its reaction saw).
    pub ledger_floor: assay_scan::scanner::LedgerFloor,
    /// StellarExpert API base.
    pub expert_url: String,
    /// curl-style name mappings (tests and pinned deployments).
    pub mappings: Mappings,
    /// Extra trusted roots.
    pub extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// Per-fetch bound.
    pub timeout: Duration,
    /// How many assets are scanned at once, and the bound on each source host.
    pub limits: ScanLimits,
}

/// How hard a scan may press its sources.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanLimits {
    /// Assets scanned at once. Requests wait on their host's bound, not on each other, so a slow
    /// host holds only the assets that need it.
    pub assets: usize,
    /// The bound on each source host: requests in flight, rate, `Retry-After`.
    pub per_host: HostLimits,
    /// Hosts bound by limits of their own instead (lower-cased, with the port when the URL names one).
    pub hosts: std::collections::BTreeMap<String, HostLimits>,
}

impl Default for ScanLimits {
    /// Eight assets at once, [`HostLimits::default`] per host.
    fn default() -> Self {
        ScanLimits {
            assets: 8,
            per_host: HostLimits::default(),
            hosts: Default::default(),
        }
    }
}

impl ScanSettings {
    /// The HTTP client's settings: the mappings, extra roots and per-fetch bound.
    pub fn net_config(&self) -> NetConfig {
        NetConfig {
            mappings: self.mappings.clone(),
            extra_roots: self.extra_roots.clone(),
            connect_timeout: self.timeout.min(Duration::from_secs(10)),
            request_timeout: self.timeout,
            dns_answers: Default::default(),
        }
    }

    /// The scanner's settings: these sources, with `concurrency` assets in flight, `per_host` requests to
    /// one host, the SEP-42 lists and the cache given.
    pub fn scan_config(
        &self,
        asset_lists: Vec<String>,
        cache: Option<assay_scan::cache::AnswerCache>,
        concurrency: usize,
        per_host: HostLimits,
    ) -> ScanConfig {
        ScanConfig {
            network_passphrase: self.asset_passphrase.clone(),
            horizon_url: self.horizon_url.clone(),
            rpc_url: self.rpc_url.clone(),
            ledger_floor: self.ledger_floor.clone(),
            expert_url: self.expert_url.clone(),
            asset_lists,
            cache,
            concurrency,
            per_host,
        }
    }

    /// The default Horizon for a passphrase, when there is one.
    pub fn default_horizon(passphrase: &str) -> Option<&'static str> {
        assay_core::network::by_passphrase(passphrase).map(|n| n.horizon_url)
    }

    /// The one resolution of where a scan's sources are read, whoever asked (`scan`, `exposure`, `attest`
    /// and `verify` from their flags, `watch` from `watch.toml`): every value checked, errors naming it as
    /// `names` spells it. The ledger facts are read from `sources.rpc_url` when given (Horizon is then
    /// optional) and cited at `horizon_url`, else the network's public Horizon, else (a network without
    /// one) at that RPC. The scan limits are the defaults; the caller sets its own.
    ///
    /// # Errors
    /// [`AttestError::Input`] for a URL that is not http(s), a timeout out of range, a `cacert` file that
    /// cannot be read or holds no certificate, or a network with no default Horizon and neither
    /// `horizon_url` nor `rpc_url`.
    pub fn resolve(
        sources: SourceChoice,
        names: SettingNames,
    ) -> Result<ScanSettings, AttestError> {
        let SourceChoice {
            asset_passphrase,
            rpc_url,
            horizon_url,
            expert_url,
            mappings,
            cacert,
            timeout_secs,
        } = sources;
        let horizon_url = match (
            horizon_url,
            ScanSettings::default_horizon(&asset_passphrase),
            &rpc_url,
        ) {
            (Some(url), _, _) => url,
            (None, Some(default), _) => default.to_string(),
            (None, None, Some(rpc)) => rpc.clone(),
            (None, None, None) => return Err(AttestError::Input(names.no_horizon().into())),
        };
        let [horizon_key, expert_key, rpc_key] = names.keys();
        options::check_base_url(horizon_key, &horizon_url)?;
        options::check_base_url(expert_key, &expert_url)?;
        if let Some(rpc) = &rpc_url {
            options::check_base_url(rpc_key, rpc)?;
        }
        let timeout = options::fetch_timeout(timeout_secs)?;
        let extra_roots = options::read_pem_roots(&cacert)?;
        Ok(ScanSettings {
            asset_passphrase,
            horizon_url,
            rpc_url,
            ledger_floor: Default::default(),
            expert_url,
            mappings,
            extra_roots,
            timeout,
            limits: Default::default(),
        })
    }
}

/// The stellar-rpc the assets' ledger facts are read through when a registry's network is configured
/// (`attest`, `verify`, `watch`): that network's when the assets live there (`asset_passphrase` is its
/// passphrase), else none (their network's Horizon).
pub fn ledger_rpc(
    registry_network: &assay_chain::network::NetworkSpec,
    asset_passphrase: &str,
) -> Option<String> {
    (asset_passphrase == registry_network.passphrase).then(|| registry_network.rpc_url.clone())
}

/// Where a scan's sources are, as its caller was given them (flags, `watch.toml`, the environment), before
/// [`ScanSettings::resolve`] checks them.
#[derive(Debug, Clone)]
pub struct SourceChoice {
    /// Passphrase of the network the assets live on.
    pub asset_passphrase: String,
    /// That network's stellar-rpc, when the ledger facts are read through it.
    pub rpc_url: Option<String>,
    /// Its Horizon, when named (default: the network's public Horizon).
    pub horizon_url: Option<String>,
    /// StellarExpert API base.
    pub expert_url: String,
    /// curl-style name mappings.
    pub mappings: Mappings,
    /// PEM files of extra trusted roots.
    pub cacert: Vec<std::path::PathBuf>,
    /// Seconds allowed for one fetch.
    pub timeout_secs: f64,
}

/// How the caller's settings are named in an error: the command line's flags or `watch.toml`'s keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingNames {
    /// `--horizon-url`, `--expert-url`, `--rpc-url`.
    Flags,
    /// `horizon_url`, `expert_url`, `rpc_url` of `watch.toml`.
    WatchConfig,
}

impl SettingNames {
    /// The Horizon, StellarExpert and stellar-rpc settings' names.
    fn keys(self) -> [&'static str; 3] {
        match self {
            SettingNames::Flags => ["--horizon-url", "--expert-url", "--rpc-url"],
            SettingNames::WatchConfig => ["horizon_url", "expert_url", "rpc_url"],
        }
    }

    /// The error for a network with no default Horizon and no stellar-rpc to read instead, with its fix.
    fn no_horizon(self) -> &'static str {
        match self {
            SettingNames::Flags => {
                "this network has no default Horizon: pass --horizon-url URL (or --rpc-url URL to read the \
                 ledger through stellar-rpc)"
            }
            SettingNames::WatchConfig => {
                "this network has no default Horizon: set horizon_url in the config (or \
                 ASSAY_HORIZON_URL), or run the watch on the assets' own network so their ledger facts are \
                 read through its stellar-rpc"
            }
        }
    }
}

/// One asset's scan outcome: a report, or why there is none.
pub type ScanResult = Result<Report, AttestError>;

/// Scans `assets` with the cache bypassed and evaluates them. Results are in input order.
pub fn scan_fresh(
    settings: &ScanSettings,
    assets: &[Asset],
) -> Result<Vec<ScanResult>, AttestError> {
    Ok(scan_subjects(settings, assets)?
        .into_iter()
        .map(|r| Ok(assay_core::engine::evaluate(&r?)?))
        .collect())
}

/// Scans `assets` with the cache bypassed, bound to the asset network, without evaluating them (so a
/// caller can add checks, e.g. `sep41`). Results are in input order.
pub fn scan_subjects(
    settings: &ScanSettings,
    assets: &[Asset],
) -> Result<Vec<Result<Subject, AttestError>>, AttestError> {
    let mut results: Vec<Option<Result<Subject, AttestError>>> = Vec::new();
    results.resize_with(assets.len(), || None);
    scan_subjects_each(settings, assets, |index, result| {
        results[index] = Some(result);
    })?;
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(AttestError::Internal("a scan result is missing".into()))))
        .collect())
}

/// [`scan_subjects`], handing each asset's subject (with its index in `assets`) to `each` as soon as
/// its scan finishes, in the order they finish, so a caller can act on the first while the rest are
/// still being read. The sources shared between assets (an issuer's account, a home domain's
/// stellar.toml) are read once for the whole call, as in [`scan_subjects`].
pub fn scan_subjects_each(
    settings: &ScanSettings,
    assets: &[Asset],
    mut each: impl FnMut(usize, Result<Subject, AttestError>),
) -> Result<(), AttestError> {
    let assets = assets.to_vec();
    with_scanner(settings, |scanner| async move {
        scanner
            .scan_each(assets, |index, result| {
                each(
                    index,
                    result
                        .map(|mut subject| {
                            subject.network = Some(settings.asset_passphrase.clone());
                            subject
                        })
                        .map_err(|e| AttestError::Source(e.to_string())),
                )
            })
            .await
    })
}

/// The `home_domain` of `account` (a token contract's admin) and its stellar.toml, read fresh under the
/// scan's fetch policy: the account URL, the domain and the toml outcome.
pub fn account_domain(
    settings: &ScanSettings,
    account: &str,
) -> Result<(String, HomeDomain, TomlOutcome), AttestError> {
    let account = account.to_string();
    with_scanner(settings, |scanner| async move {
        scanner
            .account_domain(&account)
            .await
            .map_err(|e| AttestError::Source(e.to_string()))
    })?
}

/// Where `assay watch` discovers assets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscoverySource {
    /// A SEP-42 asset list URL.
    AssetList(String),
    /// Every asset an issuer account issued.
    Issuer(String),
}

impl std::fmt::Display for DiscoverySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiscoverySource::AssetList(url) => {
                write!(f, "asset list {}", assay_core::redact::url(url))
            }
            DiscoverySource::Issuer(issuer) => write!(f, "issuer {issuer}"),
        }
    }
}

/// The assets each source names now (fetched at once, each host under its bound), in source order.
pub fn discover(
    settings: &ScanSettings,
    sources: &[DiscoverySource],
) -> Result<Vec<Result<Vec<Asset>, AttestError>>, AttestError> {
    let sources = sources.to_vec();
    with_scanner(settings, |scanner| async move {
        let mut tasks = Vec::new();
        for source in sources {
            let scanner = scanner.clone();
            tasks.push(tokio::spawn(async move {
                match &source {
                    DiscoverySource::AssetList(url) => scanner.list_assets(url).await,
                    DiscoverySource::Issuer(issuer) => scanner.issuer_assets(issuer).await,
                }
                .map_err(|e| AttestError::Source(e.to_string()))
            }));
        }
        let mut out = Vec::with_capacity(tasks.len());
        for task in tasks {
            out.push(
                task.await
                    .unwrap_or_else(|e| Err(AttestError::Internal(e.to_string()))),
            );
        }
        out
    })
}

/// Runs `work` with a fresh scanner (cache bypassed) for `settings` on a runtime of its own.
fn with_scanner<F, Fut, T>(settings: &ScanSettings, work: F) -> Result<T, AttestError>
where
    F: FnOnce(Arc<Scanner>) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let net = settings.net_config();
    let config = settings.scan_config(
        Vec::new(),
        None,
        settings.limits.assets.max(1),
        settings.limits.per_host,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| AttestError::Local(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let http = HttpClient::new(&net)?;
        let scanner = Scanner::new(http, config).with_host_limits(settings.limits.hosts.clone());
        Ok::<_, AttestError>(work(Arc::new(scanner)).await)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(passphrase: &str) -> SourceChoice {
        SourceChoice {
            asset_passphrase: passphrase.to_string(),
            rpc_url: None,
            horizon_url: None,
            expert_url: assay_core::DEFAULT_STELLAR_EXPERT_URL.to_string(),
            mappings: Mappings::default(),
            cacert: Vec::new(),
            timeout_secs: 15.0,
        }
    }

    #[test]
    fn one_resolution_names_the_settings_as_their_caller_spells_them() {
        // The network's public Horizon by default; the ledger read through stellar-rpc when given.
        let settings =
            ScanSettings::resolve(choice(assay_core::PUBNET_PASSPHRASE), SettingNames::Flags)
                .unwrap();
        assert_eq!(settings.horizon_url, "https://horizon.stellar.org");
        assert_eq!(settings.timeout, Duration::from_secs(15));
        let bad = SourceChoice {
            expert_url: "ftp://example.org".into(),
            ..choice(assay_core::PUBNET_PASSPHRASE)
        };
        let flags = ScanSettings::resolve(bad.clone(), SettingNames::Flags).unwrap_err();
        assert!(
            flags.to_string().contains("invalid --expert-url"),
            "{flags}"
        );
        let config = ScanSettings::resolve(bad, SettingNames::WatchConfig).unwrap_err();
        assert!(
            config.to_string().contains("invalid expert_url"),
            "{config}"
        );
        // A network without a public Horizon: the fix each caller can make.
        let private = "Private Network ; 2026";
        let flags = ScanSettings::resolve(choice(private), SettingNames::Flags).unwrap_err();
        assert!(
            flags.to_string().contains("pass --horizon-url URL"),
            "{flags}"
        );
        let config = ScanSettings::resolve(choice(private), SettingNames::WatchConfig).unwrap_err();
        assert!(
            config.to_string().contains("set horizon_url in the config"),
            "{config}"
        );
        let with_rpc = SourceChoice {
            rpc_url: Some("http://127.0.0.1:8000/rpc".into()),
            ..choice(private)
        };
        let settings = ScanSettings::resolve(with_rpc, SettingNames::WatchConfig).unwrap();
        assert_eq!(settings.horizon_url, "http://127.0.0.1:8000/rpc");
    }
}
