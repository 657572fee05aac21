//! The TOML file `assay watch --config` reads, and the checks that refuse a config which could let an
//! entry go stale or leak a secret.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

use crate::AttestError;

/// The TOML file `assay watch --config` reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchConfig {
    /// Registry contract (C…).
    pub registry: String,
    /// Registry network name (stellar-cli compatible).
    pub network: Option<String>,
    /// stellar-rpc URL override.
    pub rpc_url: Option<String>,
    /// Passphrase (with rpc_url and no network).
    pub network_passphrase: Option<String>,
    /// stellar-cli identity name. Secrets never go in this file: use an identity, `source_file` or
    /// STELLAR_SECRET_KEY.
    pub source: Option<String>,
    /// File holding an S… secret.
    pub source_file: Option<PathBuf>,
    /// Network the assets live on (default: the registry's).
    pub asset_network: Option<String>,
    /// Horizon of the asset network.
    pub horizon_url: Option<String>,
    /// StellarExpert API base.
    pub expert_url: Option<String>,
    /// Seconds between checks of an asset.
    #[serde(default = "default_interval")]
    pub interval_secs: u64,
    /// The freshness window gates use (seconds).
    #[serde(default = "default_max_age")]
    pub max_age_secs: u64,
    /// Re-attest when an attestation is this close to `max_age_secs`.
    #[serde(default = "default_margin")]
    pub refresh_margin_secs: u64,
    /// The most one write may cost, in stroops (inclusion plus resource fee); a transaction priced
    /// above it is refused before it is signed and counts as a failure.
    #[serde(default = "default_max_fee")]
    pub max_fee_stroops: u32,
    /// What one pass may spend on transactions, in XLM; each transaction counts at the most it may cost
    /// (twice `max_fee_stroops`: itself and a restore it may need). Reached, writes wait for the next pass.
    #[serde(default = "default_per_pass_xlm")]
    pub max_spend_per_pass_xlm: f64,
    /// What one UTC day may spend on transactions, in XLM, counted as `max_spend_per_pass_xlm` is.
    #[serde(default = "default_per_day_xlm")]
    pub max_spend_per_day_xlm: f64,
    /// curl-style `HOST:PORT:ADDR:PORT2` connection mappings for source fetches (pinned deployments).
    #[serde(default)]
    pub connect_to: Vec<String>,
    /// PEM files of extra trusted roots for source fetches.
    #[serde(default)]
    pub cacert: Vec<PathBuf>,
    /// History database (default: the user's data directory).
    pub history: Option<PathBuf>,
    /// A PostgreSQL database (`postgres://USER@HOST:PORT/DB`) for the history, the evidence bundles, the
    /// spend budget and the work queue, shared by every `watch` worker and `serve` replica. Its password
    /// comes from ASSAY_DATABASE_URL or PGPASSWORD, never this file. `--database` and ASSAY_DATABASE_URL
    /// override it.
    pub database: Option<String>,
    /// With a database: how long a worker holds the assets it claimed before another may take them, so
    /// the assets of a worker that dies are checked by another within this time.
    #[serde(default = "default_lease_secs")]
    pub lease_secs: u64,
    /// Retention: once a day, drop what is older than this many days and that no attestation's bundle
    /// needs (`assay history prune --keep-days N`); everything is kept when absent.
    pub history_keep_days: Option<u32>,
    /// `127.0.0.1:PORT` for `/health` and `/metrics` (loopback only).
    pub metrics_addr: Option<String>,
    /// stellar-cli identity of the SEP-41 suite's holder (else ASSAY_OWNER_SECRET), for `sep41 = true`
    /// assets. Never a secret in this file.
    pub sep41_owner_identity: Option<String>,
    /// stellar-cli identity of the SEP-41 suite's spender (else ASSAY_SPENDER_SECRET).
    pub sep41_spender_identity: Option<String>,
    /// Consent to the suite's writes on a network other than testnet, futurenet or standalone.
    #[serde(default)]
    pub sep41_allow_non_testnet_write: bool,
    /// Assets scanned at once in a pass. Their requests wait on each host's own bound, so this only
    /// needs to exceed the assets one slow host can hold back.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Requests in flight to one source host (Horizon, StellarExpert, a home domain) at once.
    #[serde(default = "default_per_host_concurrency")]
    pub per_host_concurrency: usize,
    /// Requests started per second to one source host (its published rate limit); unlimited when absent.
    pub per_host_requests_per_sec: Option<f64>,
    /// `[hosts."NAME"]`: a source host bound by limits of its own (its published rate limit, a
    /// self-hosted Horizon that takes more) instead of `per_host_concurrency` / `per_host_requests_per_sec`.
    #[serde(default)]
    pub hosts: BTreeMap<String, HostConfig>,
    /// Writes per `attest_many` transaction (at most the registry's cap, 50).
    #[serde(default = "default_batch_size")]
    pub batch_size: usize,
    /// `I/N`: watch only the assets of shard I of N (by SHA-256 of the registry key); `--shard` overrides.
    pub shard: Option<String>,
    /// Between passes, re-check the assets whose issuer account or contract instance changed, polling
    /// every this many ledgers; 0 turns it off (checks then follow the clock only).
    #[serde(default = "default_react_every_ledgers")]
    pub react_every_ledgers: u32,
    /// The most assets one `[[discover]] issuer` entry may add (the judged issuer decides how many it
    /// issues, and each one is scanned and paid for); counted in the interval check at this cap.
    #[serde(default = "default_discover_max_assets_per_issuer")]
    pub discover_max_assets_per_issuer: usize,
    /// Seconds between reads of the `[[discover]]` sources.
    #[serde(default = "default_discover_interval")]
    pub discover_interval_secs: u64,
    /// The assets.
    #[serde(rename = "asset", default)]
    pub assets: Vec<AssetConfig>,
    /// Where more assets are found: each entry names a SEP-42 asset list or an issuer account.
    #[serde(rename = "discover", default)]
    pub discover: Vec<DiscoverConfig>,
}

/// `[hosts."NAME"]`: one source host's own limits; a key left out takes the top-level value.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Requests in flight to this host at once (1 to 64).
    pub concurrency: Option<usize>,
    /// Requests started per second to this host.
    pub requests_per_sec: Option<f64>,
}

/// One discovery source: exactly one of `asset_list` and `issuer`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoverConfig {
    /// A SEP-42 asset list URL (http or https): the watched set follows its classic entries.
    pub asset_list: Option<String>,
    /// An issuer account (G…): the watched set follows the assets Horizon lists for it.
    pub issuer: Option<String>,
}

impl DiscoverConfig {
    /// The source this entry names.
    pub fn source(&self) -> Result<crate::scanning::DiscoverySource, AttestError> {
        use crate::scanning::DiscoverySource;
        match (&self.asset_list, &self.issuer) {
            (Some(url), None) => {
                assay_scan::options::check_base_url("[[discover]] asset_list", url)?;
                Ok(DiscoverySource::AssetList(url.clone()))
            }
            (None, Some(issuer)) => {
                if stellar_strkey::ed25519::PublicKey::from_string(issuer).is_err() {
                    return Err(AttestError::Input(format!(
                        "[[discover]] issuer {issuer:?}: expected an account address (G…)"
                    )));
                }
                Ok(DiscoverySource::Issuer(issuer.clone()))
            }
            _ => Err(AttestError::Input(
                "each [[discover]] entry names exactly one of asset_list = \"https://…\" or issuer = \"G…\""
                    .into(),
            )),
        }
    }
}

/// One watched asset.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssetConfig {
    /// CODE-ISSUER.
    pub asset: String,
    /// Overrides `interval_secs`.
    pub interval_secs: Option<u64>,
    /// Also run the SEP-41 conformance suite against the asset's Stellar Asset Contract on every check
    /// and bind its verdicts into the report (as `assay attest --sep41`).
    #[serde(default)]
    pub sep41: bool,
}

/// Line and column (1-based) of the first value in `text` that looks like key material: an
/// `S…` secret key anywhere, or a seed phrase in quotes. Found in the raw text, so a secret on a
/// line that is not even valid TOML is caught before a parse error could quote it.
fn secret_position(text: &str) -> Option<(usize, usize)> {
    for (number, line) in text.lines().enumerate() {
        let mut column = 0;
        for piece in line.split_inclusive(|c: char| !c.is_ascii_alphanumeric()) {
            let token = piece.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
            if assay_core::redact::is_secret_strkey(token) {
                return Some((number + 1, line[..column].chars().count() + 1));
            }
            column += piece.len();
        }
        let mut offset = 0;
        for (i, quoted) in line.split('"').enumerate() {
            if i % 2 == 1 && assay_core::redact::is_seed_phrase(quoted) {
                return Some((number + 1, line[..offset].chars().count() + 1));
            }
            offset += quoted.len() + 1;
        }
    }
    None
}

/// A TOML error as line, column and what was expected, never the offending text: a value (which
/// may be a secret pasted in the wrong place) is replaced by `"…"`.
fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let message: String = error
        .message()
        .split('"')
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { "…" } else { part })
        .collect::<Vec<_>>()
        .join("\"");
    match error.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("invalid TOML at line {line}, column {column}: {message}")
        }
        None => format!("invalid TOML: {message}"),
    }
}

fn default_max_fee() -> u32 {
    assay_chain::submit::DEFAULT_MAX_FEE_STROOPS
}
/// Default `discover_max_assets_per_issuer`: issuers rarely issue more than a handful of assets.
pub const DEFAULT_DISCOVER_MAX_ASSETS_PER_ISSUER: usize = 10;
fn default_discover_max_assets_per_issuer() -> usize {
    DEFAULT_DISCOVER_MAX_ASSETS_PER_ISSUER
}
fn default_per_pass_xlm() -> f64 {
    super::budget::DEFAULT_PER_PASS_XLM
}
fn default_per_day_xlm() -> f64 {
    super::budget::DEFAULT_PER_DAY_XLM
}
fn default_react_every_ledgers() -> u32 {
    1
}
fn default_discover_interval() -> u64 {
    3_600
}
fn default_lease_secs() -> u64 {
    120
}

fn default_concurrency() -> usize {
    64
}
fn default_per_host_concurrency() -> usize {
    assay_scan::hosts::HostLimits::default().concurrency
}
fn default_batch_size() -> usize {
    crate::registry::MAX_BATCH_SIZE
}
fn default_interval() -> u64 {
    300
}
fn default_max_age() -> u64 {
    86_400
}
fn default_margin() -> u64 {
    3_600
}

/// The longest one asset's check is allowed to take when deciding whether a config can keep entries
/// fresh: its source fetches (15 s each, up to six in sequence with the root, asset, account and
/// StellarExpert retries) and a transaction followed to its final status.
pub const CHECK_ALLOWANCE_SECS: u64 = 120;

impl WatchConfig {
    /// Parses and checks the file's values.
    pub fn parse(text: &str) -> Result<WatchConfig, AttestError> {
        if let Some((line, column)) = secret_position(text) {
            return Err(AttestError::Input(format!(
                "line {line}, column {column}: this value looks like a secret key or seed phrase, \
                 and secrets never go in this file (it is not shown here): name a stellar-cli \
                 identity with `source`, point `source_file` at a key file, or set STELLAR_SECRET_KEY"
            )));
        }
        let c: WatchConfig =
            toml::from_str(text).map_err(|e| AttestError::Input(toml_error(text, &e)))?;
        if c.assets.is_empty() && c.discover.is_empty() {
            return Err(AttestError::Input(
                "no [[asset]] or [[discover]] entries: add at least one `[[asset]]` with `asset = \"CODE-ISSUER\"`, \
                 or a `[[discover]]` with `asset_list = \"https://…\"` or `issuer = \"G…\"`"
                    .into(),
            ));
        }
        for d in &c.discover {
            d.source()?;
        }
        if !(1..=1_000).contains(&c.discover_max_assets_per_issuer) {
            return Err(AttestError::Input(format!(
                "discover_max_assets_per_issuer ({}) must be 1 to 1000",
                c.discover_max_assets_per_issuer
            )));
        }
        if c.discover_interval_secs == 0 {
            return Err(AttestError::Input(
                "discover_interval_secs must be at least 1".into(),
            ));
        }
        if c.interval_secs == 0 || c.assets.iter().any(|a| a.interval_secs == Some(0)) {
            return Err(AttestError::Input(
                "interval_secs must be at least 1".into(),
            ));
        }
        if c.refresh_margin_secs >= c.max_age_secs {
            return Err(AttestError::Input(format!(
                "refresh_margin_secs ({}) must be below max_age_secs ({}) or every check would re-attest",
                c.refresh_margin_secs, c.max_age_secs
            )));
        }
        c.check_interval_fits_margin()?;
        c.check_scale()?;
        c.check_spend()?;
        if let Some(addr) = &c.metrics_addr {
            let parsed: SocketAddr = addr.parse().map_err(|_| {
                AttestError::Input(format!("metrics_addr {addr:?}: expected 127.0.0.1:PORT"))
            })?;
            if !parsed.ip().is_loopback() {
                return Err(AttestError::Input(format!(
                    "metrics_addr {addr:?}: only a loopback address is allowed"
                )));
            }
        }
        Ok(c)
    }
}

/// Refuses a request rate the scanner cannot hold a host to: not a number, or slower than one
/// request per 1,000 s (`assay_scan::hosts::MIN_REQUESTS_PER_SEC`).
fn check_rate(key: &str, rate: f64, instead: &str) -> Result<(), AttestError> {
    let min = assay_scan::hosts::MIN_REQUESTS_PER_SEC;
    if rate.is_finite() && rate >= min {
        return Ok(());
    }
    // A tiny or huge value reads as 1e-300, not three hundred digits.
    let shown = if rate != 0.0 && !(1e-6..1e9).contains(&rate.abs()) {
        format!("{rate:e}")
    } else {
        format!("{rate}")
    };
    Err(AttestError::Input(format!(
        "{key} ({shown}) must be a positive number, at least {min} (one request per 1,000 s); {instead}"
    )))
}

impl WatchConfig {
    /// The spend budget these keys set.
    pub fn spend_limits(&self) -> super::budget::SpendLimits {
        super::budget::SpendLimits::new(
            self.max_spend_per_pass_xlm,
            self.max_spend_per_day_xlm,
            self.max_fee_stroops,
        )
    }

    /// The spend budgets: positive, finite, and room for at least one transaction at the fee cap.
    fn check_spend(&self) -> Result<(), AttestError> {
        let per_send = self.spend_limits().per_send as f64 / super::budget::STROOPS_PER_XLM as f64;
        for (key, xlm) in [
            ("max_spend_per_pass_xlm", self.max_spend_per_pass_xlm),
            ("max_spend_per_day_xlm", self.max_spend_per_day_xlm),
        ] {
            if !xlm.is_finite() || xlm < per_send {
                return Err(AttestError::Input(format!(
                    "{key} ({xlm}) must be at least {per_send} XLM: one transaction counts twice max_fee_stroops \
                     (itself and a restore it may need); raise {key} or lower max_fee_stroops"
                )));
            }
        }
        if self.max_spend_per_day_xlm < self.max_spend_per_pass_xlm {
            return Err(AttestError::Input(format!(
                "max_spend_per_day_xlm ({}) is below max_spend_per_pass_xlm ({}): a day holds many passes",
                self.max_spend_per_day_xlm, self.max_spend_per_pass_xlm
            )));
        }
        Ok(())
    }

    /// The concurrency, rate and batch keys, and `shard`.
    fn check_scale(&self) -> Result<(), AttestError> {
        if !(1..=256).contains(&self.concurrency) {
            return Err(AttestError::Input(format!(
                "concurrency ({}) must be 1 to 256",
                self.concurrency
            )));
        }
        if !(1..=64).contains(&self.per_host_concurrency) {
            return Err(AttestError::Input(format!(
                "per_host_concurrency ({}) must be 1 to 64",
                self.per_host_concurrency
            )));
        }
        if let Some(rate) = self.per_host_requests_per_sec {
            check_rate("per_host_requests_per_sec", rate, "remove it for no limit")?;
        }
        for (host, limits) in &self.hosts {
            // A name with credentials in it is refused without being repeated.
            if host.contains('@') {
                return Err(AttestError::Input(
                    "a [hosts] name carries credentials (user@ or user:password@): name the host alone, e.g. \"horizon.stellar.org\"".into(),
                ));
            }
            let named = assay_scan::hosts::host_of(&format!("https://{host}/"));
            if named.as_deref() != Some(host.to_ascii_lowercase().as_str()) {
                return Err(AttestError::Input(format!(
                    "[hosts.{host:?}]: name a host as it appears in a URL, e.g. \"horizon.stellar.org\" or \"localhost:8000\" (no scheme or path)"
                )));
            }
            if let Some(c) = limits.concurrency.filter(|c| !(1..=64).contains(c)) {
                return Err(AttestError::Input(format!(
                    "[hosts.{host:?}] concurrency ({c}) must be 1 to 64"
                )));
            }
            if let Some(rate) = limits.requests_per_sec {
                check_rate(
                    &format!("[hosts.{host:?}] requests_per_sec"),
                    rate,
                    "remove it for the top-level value",
                )?;
            }
        }
        let cap = crate::registry::MAX_BATCH_SIZE;
        if !(1..=cap).contains(&self.batch_size) {
            return Err(AttestError::Input(format!(
                "batch_size ({}) must be 1 to {cap}, the registry's cap",
                self.batch_size
            )));
        }
        if let Some(shard) = &self.shard {
            shard
                .parse::<assay_core::Shard>()
                .map_err(|e| AttestError::Input(e.to_string()))?;
        }
        if !(2..=3600).contains(&self.lease_secs) {
            return Err(AttestError::Input(format!(
                "lease_secs ({}) must be 2 to 3600",
                self.lease_secs
            )));
        }
        if let Some(database) = &self.database {
            match assay_scan::history::Database::parse(database) {
                assay_scan::history::Database::Postgres(url) if url.has_password() => {
                    return Err(AttestError::Input(
                        "`database` carries a password: a config file is copied and committed; give the \
                         password in PGPASSWORD (or the whole URL in ASSAY_DATABASE_URL)"
                            .into(),
                    ))
                }
                assay_scan::history::Database::Postgres(_) => {}
                assay_scan::history::Database::Sqlite(_) => {
                    return Err(AttestError::Input(
                        "`database` takes a PostgreSQL URL (postgres://USER@HOST:PORT/DB); a SQLite file is \
                         named by `history`"
                            .into(),
                    ))
                }
            }
        }
        Ok(())
    }

    /// The scan limits these keys set.
    pub fn scan_limits(&self) -> crate::scanning::ScanLimits {
        let per_host = assay_scan::hosts::HostLimits {
            concurrency: self.per_host_concurrency,
            per_second: self.per_host_requests_per_sec,
        };
        crate::scanning::ScanLimits {
            assets: self.concurrency,
            per_host,
            hosts: self
                .hosts
                .iter()
                .map(|(host, own)| {
                    let limits = assay_scan::hosts::HostLimits {
                        concurrency: own.concurrency.unwrap_or(per_host.concurrency),
                        per_second: own.requests_per_sec.or(per_host.per_second),
                    };
                    (host.to_ascii_lowercase(), limits)
                })
                .collect(),
        }
    }
}

impl WatchConfig {
    /// Refuses a config whose checks can come too far apart to refresh an entry before it goes stale.
    /// An asset is next checked at most its interval plus one pass over every asset later (each check
    /// bounded by [`CHECK_ALLOWANCE_SECS`]); that must fit inside `refresh_margin_secs`, the head start
    /// a refresh gets before `max_age_secs`.
    fn check_interval_fits_margin(&self) -> Result<(), AttestError> {
        // Checks run `parallel` at a time (the assets in flight, bounded again by each host's bound, which
        // every asset's Horizon reads share), so a pass is that many waves of the allowance.
        // A host with a lower bound of its own counts too (it may be the Horizon every asset needs).
        let narrowest_host = self
            .hosts
            .values()
            .filter_map(|h| h.concurrency)
            .fold(self.per_host_concurrency, usize::min);
        let parallel = self.concurrency.min(narrowest_host).max(1);
        // Each issuer entry may add up to its cap of assets, which the passes must have room for too.
        let issuers = self.discover.iter().filter(|d| d.issuer.is_some()).count();
        let checked = self
            .assets
            .len()
            .saturating_add(issuers.saturating_mul(self.discover_max_assets_per_issuer));
        let waves = checked.div_ceil(parallel) as u64;
        let pass = CHECK_ALLOWANCE_SECS.saturating_mul(waves);
        let widest = self
            .assets
            .iter()
            .map(|a| (a.interval_secs.unwrap_or(self.interval_secs), Some(a)))
            .chain((!self.discover.is_empty()).then_some((self.interval_secs, None)))
            .max_by_key(|(interval, _)| *interval);
        let Some((interval, asset)) = widest else {
            return Ok(());
        };
        let gap = interval.saturating_add(pass);
        if gap <= self.refresh_margin_secs {
            return Ok(());
        }
        let key = match asset {
            Some(AssetConfig {
                interval_secs: Some(_),
                asset,
                ..
            }) => format!("interval_secs of [[asset]] {asset:?}"),
            _ => "interval_secs".to_string(),
        };
        let most = self.refresh_margin_secs.saturating_sub(pass);
        Err(AttestError::Input(format!(
            "{key} ({interval}) plus a pass over {} asset(s){} ({parallel} at a time, {} s each, {pass} s) can reach {gap} s between \
             checks, more than refresh_margin_secs ({}): an entry could go stale before it is refreshed. \
             Lower {key} to at most {most}, or raise refresh_margin_secs to at least {gap} (it must stay below \
             max_age_secs, {})",
            checked,
            if issuers > 0 {
                " (issuer discovery counted at its cap)"
            } else {
                ""
            },
            CHECK_ALLOWANCE_SECS,
            self.refresh_margin_secs,
            self.max_age_secs
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item3_watch_toml_never_echoes_a_secret_or_a_bad_line() {
        const SECRET: &str = "SBK2VIYYSVG76E7VC3QHYARNFLY2EAQXDHRC7BMXBBGIFG74ARPRMNQM";
        let phrase = "abandon ".repeat(11) + "about";
        let cases = [
            (
                format!("registry = \"C\"\nsecret_key = \"{SECRET}\"\n"),
                "line 2, column 15",
            ),
            (
                format!("registry = \"C\"\nsource = {SECRET}\n"),
                "line 2, column 10",
            ),
            (format!("source = \"{phrase}\"\n"), "line 1, column 11"),
            (
                format!("[[asset]]\nasset = \"X\"\nsep41 = \"{SECRET}x\"\n"),
                "line 3",
            ),
        ];
        for (text, position) in &cases {
            let err = WatchConfig::parse(text).unwrap_err().to_string();
            assert!(!err.contains(SECRET) && !err.contains("abandon"), "{err}");
            assert!(err.contains(position), "{position}: {err}");
        }
        // A TOML error names the line and column and never quotes the value.
        let err = WatchConfig::parse("registry = \"C\"\ninterval_secs = \"hunter2\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2, column"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        let err = WatchConfig::parse("registry = \"C\"\npassword hunter2\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && !err.contains("hunter2"), "{err}");
    }

    /// Issue #16, "Also": an interval plus a pass over the assets that can exceed the refresh margin
    /// is refused, naming the keys and the fix.
    #[test]
    fn also_watch_refuses_an_interval_that_can_outrun_the_refresh_margin() {
        let asset = "[[asset]]\nasset = \"A-B\"\n";
        let config = |top: &str, assets: &str| {
            WatchConfig::parse(&format!(
                "registry = \"C\"\nnetwork = \"testnet\"\n{top}{assets}"
            ))
        };
        // 3500 + 120 > 3600: refused, with the bound and both ways out.
        let err = config("interval_secs = 3500\n", asset)
            .unwrap_err()
            .to_string();
        for needle in [
            "interval_secs (3500)",
            "refresh_margin_secs (3600)",
            "Lower interval_secs to at most 3480",
            "raise refresh_margin_secs to at least 3620",
        ] {
            assert!(err.contains(needle), "{needle}: {err}");
        }
        assert!(config("interval_secs = 3480\n", asset).is_ok());
        // A per-asset override is named as such.
        let err = config("", "[[asset]]\nasset = \"A-B\"\ninterval_secs = 4000\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("interval_secs of [[asset]] \"A-B\" (4000)"),
            "{err}"
        );
        // One check at a time, every asset adds a check to the pass: 30 (300 + 30 x 120 = 3900) is too many.
        let serial = "per_host_concurrency = 1\n";
        let many = asset.repeat(30);
        let err = config(serial, &many).unwrap_err().to_string();
        assert!(
            err.contains("a pass over 30 asset(s) (1 at a time"),
            "{err}"
        );
        assert!(config(&format!("{serial}refresh_margin_secs = 3900\n"), &many).is_ok());
        assert!(config(serial, &asset.repeat(27)).is_ok());
        // At the defaults checks run 8 at a time: 30 assets are 4 waves (300 + 480), 216 fit the hour.
        assert!(config("", &many).is_ok());
        assert!(config("", &asset.repeat(216)).is_ok());
        let err = config("", &asset.repeat(217)).unwrap_err().to_string();
        assert!(err.contains("(8 at a time, 120 s each, 3360 s)"), "{err}");
    }

    #[test]
    fn config_is_checked() {
        let ok = "registry = \"C\"\nnetwork = \"testnet\"\n[[asset]]\nasset = \"A-B\"\n";
        assert_eq!(WatchConfig::parse(ok).unwrap().interval_secs, 300);
        assert!(WatchConfig::parse("registry = \"C\"\n")
            .unwrap_err()
            .to_string()
            .contains("[[asset]]"));
        assert!(
            WatchConfig::parse(&format!("metrics_addr = \"0.0.0.0:9\"\n{ok}"))
                .unwrap_err()
                .to_string()
                .contains("loopback")
        );
        assert!(
            WatchConfig::parse(&ok.replace("[[asset]]", "secret = \"S\"\n[[asset]]")).is_err(),
            "unknown keys refused"
        );
        assert!(WatchConfig::parse(&format!("refresh_margin_secs = 90000\n{ok}")).is_err());
        let sep41 = WatchConfig::parse(&format!(
            "sep41_owner_identity = \"holder\"\nsep41_spender_identity = \"spender\"\n{ok}sep41 = true\n"
        ))
        .unwrap();
        assert!(sep41.assets[0].sep41 && !sep41.sep41_allow_non_testnet_write);
        assert_eq!(sep41.sep41_owner_identity.as_deref(), Some("holder"));
        assert!(
            !WatchConfig::parse(ok).unwrap().assets[0].sep41,
            "off by default"
        );
        assert!(
            WatchConfig::parse(&format!("{ok}sep41 = \"yes\"\n")).is_err(),
            "sep41 is a boolean"
        );
    }

    #[test]
    fn a_host_with_limits_of_its_own_falls_back_to_the_top_level_keys() {
        let top = "registry = \"C\"\nnetwork = \"testnet\"\nper_host_requests_per_sec = 5.0\n";
        let asset = "[[asset]]\nasset = \"A-B\"\n";
        let hosts = "[hosts.\"Horizon.Example\"]\nrequests_per_sec = 1.0\n[hosts.\"localhost:8000\"]\nconcurrency = 32\n";
        let c = WatchConfig::parse(&format!("{top}{asset}{hosts}")).unwrap();
        let limits = c.scan_limits();
        let own = |host: &str| {
            let l = limits.hosts[host];
            (l.concurrency, l.per_second)
        };
        assert_eq!(own("horizon.example"), (8, Some(1.0)));
        assert_eq!(own("localhost:8000"), (32, Some(5.0)));
        assert_eq!(limits.hosts.len(), 2);
        assert_eq!(
            (limits.per_host.concurrency, limits.per_host.per_second),
            (8, Some(5.0))
        );
        for (entry, needle) in [
            (
                "[hosts.\"https://h.example/\"]\nconcurrency = 2\n",
                "no scheme or path",
            ),
            (
                "[hosts.\"h.example\"]\nconcurrency = 0\n",
                "[hosts.\"h.example\"] concurrency (0) must be 1 to 64",
            ),
            (
                "[hosts.\"h.example\"]\nrequests_per_sec = -1.0\n",
                "requests_per_sec (-1) must be a positive number",
            ),
            (
                "[hosts.\"h.example\"]\nrequests_per_sec = 1e-300\n",
                "requests_per_sec (1e-300) must be a positive number",
            ),
            (
                "[hosts.\"h.example\"]\nrequests_per_sec = nan\n",
                "requests_per_sec (NaN) must be a positive number, at least 0.001",
            ),
            ("[hosts.\"h.example\"]\nrate = 1.0\n", "unknown field"),
        ] {
            let err = WatchConfig::parse(&format!("{top}{asset}{entry}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{entry}: {err}");
        }
        // Credentials in a host's name are refused without being repeated.
        let err = WatchConfig::parse(&format!(
            "{top}{asset}[hosts.\"user:hunter2@h.example\"]\nconcurrency = 2\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("carries credentials"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        // A host's narrower bound counts in the pass the refresh margin must hold: 30 assets one at a
        // time do not fit the default hour.
        let serial = "[hosts.\"h.example\"]\nconcurrency = 1\n";
        let err = WatchConfig::parse(&format!("{top}{}{serial}", asset.repeat(30)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("(1 at a time"), "{err}");
    }

    #[test]
    fn scale_and_discovery_keys_are_checked() {
        let top = "registry = \"C\"\nnetwork = \"testnet\"\n";
        let asset = "[[asset]]\nasset = \"A-B\"\n";
        let c = WatchConfig::parse(&format!("{top}{asset}")).unwrap();
        assert_eq!(
            (c.concurrency, c.per_host_concurrency, c.batch_size),
            (64, 8, 35)
        );
        for (key, needle) in [
            ("batch_size = 36", "batch_size (36) must be 1 to 35"),
            ("batch_size = 0", "batch_size (0)"),
            ("concurrency = 0", "concurrency (0)"),
            ("per_host_concurrency = 0", "per_host_concurrency (0)"),
            (
                "per_host_requests_per_sec = 0.0",
                "must be a positive number",
            ),
            (
                "per_host_requests_per_sec = 0.0001",
                "per_host_requests_per_sec (0.0001) must be a positive number, at least 0.001",
            ),
            ("shard = \"2/2\"", "must be below 2"),
        ] {
            let err = WatchConfig::parse(&format!("{top}{key}\n{asset}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{key}: {err}");
        }
        // A config may name no asset when it discovers them.
        let list = "[[discover]]\nasset_list = \"https://lists.example/list.json\"\n";
        let c = WatchConfig::parse(&format!("{top}{list}")).unwrap();
        assert!(c.assets.is_empty() && c.discover.len() == 1);
        for (entry, needle) in [
            ("[[discover]]\n", "exactly one of"),
            (
                "[[discover]]\nasset_list = \"https://a.example/l\"\nissuer = \"GABC\"\n",
                "exactly one of",
            ),
            (
                "[[discover]]\nissuer = \"GABC\"\n",
                "expected an account address",
            ),
            (
                "[[discover]]\nasset_list = \"ftp://a.example/l\"\n",
                "http:// or https://",
            ),
        ] {
            let err = WatchConfig::parse(&format!("{top}{entry}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{entry}: {err}");
        }
    }

    #[test]
    fn spend_budgets_and_the_issuer_cap_are_checked() {
        let ok = "registry = \"C\"\nnetwork = \"testnet\"\n[[asset]]\nasset = \"USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN\"\n";
        let c = WatchConfig::parse(ok).unwrap();
        assert_eq!(
            (
                c.max_spend_per_pass_xlm,
                c.max_spend_per_day_xlm,
                c.discover_max_assets_per_issuer
            ),
            (500.0, 2_000.0, 10)
        );
        for (keys, named) in [
            // The default 10 XLM cap counts 20 XLM per transaction.
            (
                "max_spend_per_pass_xlm = 19\n",
                "max_spend_per_pass_xlm (19) must be at least 20 XLM",
            ),
            (
                "max_spend_per_day_xlm = nan\n",
                "max_spend_per_day_xlm (NaN)",
            ),
            (
                "max_spend_per_day_xlm = 100\n",
                "is below max_spend_per_pass_xlm",
            ),
            (
                "discover_max_assets_per_issuer = 0\n",
                "discover_max_assets_per_issuer (0) must be 1 to 1000",
            ),
        ] {
            let err = WatchConfig::parse(&format!("{keys}{ok}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(named), "{keys}: {err}");
        }
        assert!(WatchConfig::parse(&format!("max_fee_stroops = 10000000\nmax_spend_per_pass_xlm = 2\nmax_spend_per_day_xlm = 2\n{ok}")).is_ok());
    }

    #[test]
    fn issuer_discovery_counts_at_its_cap_in_the_interval_check() {
        // 64 at a time (the default) and 120 s each: 100 issuers at 10 assets each are 16 waves, 1,920 s,
        // which with a 300 s interval no longer fits a 2,000 s margin; one issuer (one wave) does.
        let issuer =
            "[[discover]]\nissuer = \"GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN\"\n";
        let head = "registry = \"C\"\nnetwork = \"testnet\"\nrefresh_margin_secs = 2000\nper_host_concurrency = 64\n";
        assert!(WatchConfig::parse(&format!("{head}{issuer}")).is_ok());
        let err = WatchConfig::parse(&format!("{head}{}", issuer.repeat(100)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a pass over 1000 asset(s) (issuer discovery counted at its cap)"),
            "{err}"
        );
    }
}
