//! Command-line front ends for `assay attest`, `assay verify` and `assay watch` (clap argument structs and
//! `run` functions; the `assay` binary only dispatches to them).

use std::path::PathBuf;

use assay_scan::cache::AnswerCache;
use assay_scan::net::mapping::{ConnectToRule, Mappings, ResolveRule};
use clap::{Args, ValueEnum};

use assay_attest::sac;
use assay_attest::scanning::{ledger_rpc, ScanSettings, SettingNames, SourceChoice};
use assay_attest::sep41::Sep41Runner;
use assay_chain::identity::{self, Signer, SECRET_ENV};
use assay_chain::network::{self, NetworkSpec};
use assay_chain::rpc::RpcClient;

use super::CommandError;

/// `--sep41`: run the SEP-41 conformance suite against each target's contract and bind its verdicts.
#[derive(Args, Debug, Clone, Default)]
pub struct SuiteBindingArgs {
    /// Also run the 27-check SEP-41 conformance suite against each target's contract (a classic asset's
    /// Stellar Asset Contract, or the token contract itself, on the registry's network) and bind its
    /// verdicts into the report: a FAIL escalates to critical with sep41_violation (bit 8), even beside
    /// checks that could not conclude; without a FAIL, an UNVERIFIABLE or SKIPPED check leaves the report
    /// undetermined. The suite runs keyless on a fork of the network (nothing signed or sent for it)
    /// unless a party's key is given, which makes it a key-based live run whose transactions are sent
    /// even with --dry-run.
    #[arg(long)]
    pub sep41: bool,
    /// stellar-cli identity of the suite's holder (instead of ASSAY_OWNER_SECRET). Needs 5 units of the
    /// asset and XLM for fees.
    #[arg(long, value_name = "NAME", requires = "sep41")]
    pub owner_identity: Option<String>,
    /// stellar-cli identity of the suite's spender (instead of ASSAY_SPENDER_SECRET). Needs a trustline
    /// to the asset (for a classic asset) and XLM for fees.
    #[arg(long, value_name = "NAME", requires = "sep41")]
    pub spender_identity: Option<String>,
    /// Consent to the suite's writes on a network other than testnet, futurenet or standalone.
    #[arg(long, requires = "sep41")]
    pub allow_non_testnet_write: bool,
}

impl SuiteBindingArgs {
    /// The suite's runner when `--sep41` is given, on the registry's network (the contract an asset is
    /// keyed by lives there): keyless on a fork, or key-based live when the holder or spender is given
    /// (identities or ASSAY_OWNER_SECRET / ASSAY_SPENDER_SECRET) behind the consent gate.
    pub fn runner(
        &self,
        spec: &NetworkSpec,
        asset_passphrase: &str,
    ) -> Result<Option<Sep41Runner>, CommandError> {
        if !self.sep41 {
            return Ok(None);
        }
        suite_runner(
            spec,
            asset_passphrase,
            SuiteParties {
                owner_identity: self.owner_identity.clone(),
                spender_identity: self.spender_identity.clone(),
                allow_non_testnet_write: self.allow_non_testnet_write,
            },
            "--sep41",
            "drop --asset-network (or point --network at the assets' network)",
        )
        .map(Some)
    }
}

/// Who the SEP-41 suite's parties are, from flags or a config.
pub struct SuiteParties {
    pub owner_identity: Option<String>,
    pub spender_identity: Option<String>,
    pub allow_non_testnet_write: bool,
}

/// The SEP-41 suite's runner on the registry's network (the contract an asset is keyed by lives there):
/// keyless on a fork, or key-based live when a party is given, behind the consent gate. `key` is the flag
/// or config key that asked for it, and `fix` what to change when the assets live elsewhere.
pub fn suite_runner(
    spec: &NetworkSpec,
    asset_passphrase: &str,
    parties: SuiteParties,
    key: &str,
    fix: &str,
) -> Result<Sep41Runner, CommandError> {
    Sep41Runner::on_registry_network(
        spec,
        asset_passphrase,
        (
            parties.owner_identity,
            parties.spender_identity,
            parties.allow_non_testnet_write,
        ),
        key,
        fix,
    )
    .map_err(CommandError::from)
}

/// Output format of every command that prints results (`assay sep41` adds `md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people.
    Text,
    /// One JSON object per result per line, for machines.
    Json,
}

/// Which network to talk to, as stellar-cli names it (sep41, attest, verify; watch fills it from its
/// config).
#[derive(Args, Debug, Clone)]
pub struct NetworkArgs {
    /// Network: testnet, mainnet, futurenet, local, or a NAME from ~/.config/stellar/network/NAME.toml.
    #[arg(long, env = "STELLAR_NETWORK", value_name = "NAME")]
    pub network: Option<String>,
    /// stellar-rpc endpoint (overrides the named network's).
    #[arg(long, env = "STELLAR_RPC_URL", value_name = "URL")]
    pub rpc_url: Option<String>,
    /// Network passphrase (with --rpc-url when no --network is given).
    #[arg(long, env = "STELLAR_NETWORK_PASSPHRASE", value_name = "TEXT")]
    pub network_passphrase: Option<String>,
}

/// The StellarExpert answer cache of the commands that scan with it (scan, exposure).
#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Do not read or write the StellarExpert answer cache.
    #[arg(long)]
    pub no_cache: bool,

    /// Directory of the StellarExpert answer cache (default: the user's cache directory).
    #[arg(long, value_name = "DIR", env = "ASSAY_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
}

impl CacheArgs {
    /// The cache these flags name: none with --no-cache (or without a cache directory).
    pub fn cache(&self) -> Option<AnswerCache> {
        if self.no_cache {
            return None;
        }
        self.cache_dir
            .clone()
            .or_else(AnswerCache::default_dir)
            .map(AnswerCache::new)
    }
}

/// The progress line of the commands that scan many assets (scan, exposure).
#[derive(Args, Debug, Clone)]
pub struct ProgressArgs {
    /// Do not show the progress line (assets done of all, the last one done, the time taken) that is
    /// otherwise drawn on stderr while several assets are scanned, when stderr is a terminal. It is never
    /// written to stdout, nor to a stderr that is a file or a pipe. ASSAY_NO_PROGRESS=1 does the same.
    #[arg(long, env = "ASSAY_NO_PROGRESS", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_progress: bool,
}

/// The registry, on the network of [`NetworkArgs`].
#[derive(Args, Debug, Clone)]
pub struct RegistryArgs {
    /// The registry contract (C…).
    #[arg(long, env = "ASSAY_REGISTRY", value_name = "C…")]
    pub registry: String,
}

/// Where the assets live, when not on the registry's network (attest, verify).
#[derive(Args, Debug, Clone)]
pub struct AssetNetworkArgs {
    /// Network the assets live on, whose Horizon is read and whose passphrase the evidence binds
    /// (default: the registry's network).
    #[arg(long, value_name = "NAME")]
    pub asset_network: Option<String>,
}

impl AssetNetworkArgs {
    /// The assets' passphrase: --asset-network's, else the registry network's.
    pub fn passphrase(&self, registry_network: &NetworkSpec) -> Result<String, CommandError> {
        asset_passphrase(self.asset_network.as_deref(), registry_network)
    }
}

/// The passphrase of the network the assets live on: `asset_network`'s, else the registry's.
pub fn asset_passphrase(
    asset_network: Option<&str>,
    registry_network: &NetworkSpec,
) -> Result<String, CommandError> {
    match asset_network {
        None => Ok(registry_network.passphrase.clone()),
        Some(name) => network::passphrase_of(name, network::config_dir().as_deref())
            .map_err(|e| CommandError::usage(format!("--asset-network: {e}"))),
    }
}

/// Where and how the assets' sources are read (scan, attest, verify; watch fills it from its config).
#[derive(Args, Debug, Clone)]
pub struct SourceArgs {
    /// Horizon base URL (default: the asset network's public Horizon).
    #[arg(long, env = "ASSAY_HORIZON_URL", value_name = "URL")]
    pub horizon_url: Option<String>,
    /// StellarExpert API base URL.
    #[arg(long, env = "ASSAY_STELLAR_EXPERT_URL", value_name = "URL", default_value = assay_core::DEFAULT_STELLAR_EXPERT_URL)]
    pub expert_url: String,
    /// Answer the name lookup for HOST:PORT with ADDR (repeatable, curl-style). URLs, Host headers and TLS
    /// names stay HOST; a mapped host is your explicit choice and exempt from the internal-address policy.
    /// In the environment: comma-separated rules.
    #[arg(
        long,
        value_name = "HOST:PORT:ADDR",
        env = "ASSAY_RESOLVE",
        value_delimiter = ','
    )]
    pub resolve: Vec<ResolveRule>,
    /// Connect to ADDR:PORT2 for requests to HOST:PORT (repeatable, curl-style); URLs, Host headers and TLS
    /// names stay HOST.
    /// In the environment: comma-separated rules.
    #[arg(
        long = "connect-to",
        value_name = "HOST:PORT:ADDR:PORT2",
        env = "ASSAY_CONNECT_TO",
        value_delimiter = ','
    )]
    pub connect_to: Vec<ConnectToRule>,
    /// A PEM file of extra trusted root certificates (added to the built-in web roots).
    #[arg(long, value_name = "FILE", env = "ASSAY_CACERT")]
    pub cacert: Vec<PathBuf>,
    /// Seconds allowed for one fetch, redirects and body included.
    #[arg(long, value_name = "SECONDS", default_value_t = 15.0)]
    pub timeout: f64,
}

/// Who signs.
#[derive(Args, Debug, Clone)]
pub struct SignerArgs {
    /// A stellar-cli identity NAME (~/.config/stellar/identity/NAME.toml). Never a secret: secrets on the
    /// command line are refused. Without it, STELLAR_SECRET_KEY is used.
    #[arg(long, value_name = "NAME")]
    pub source: Option<String>,
    /// A file holding an S… secret key.
    #[arg(long, value_name = "FILE")]
    pub source_file: Option<PathBuf>,
}

impl NetworkArgs {
    /// The network these flags name.
    pub fn spec(&self) -> Result<NetworkSpec, CommandError> {
        network::resolve(
            self.network.as_deref(),
            self.rpc_url.as_deref(),
            self.network_passphrase.as_deref(),
            network::config_dir().as_deref(),
        )
        .map_err(CommandError::usage)
    }

    /// The network and the registry's contract id.
    pub fn resolve(
        &self,
        registry: &RegistryArgs,
    ) -> Result<(NetworkSpec, [u8; 32]), CommandError> {
        let spec = self.spec()?;
        let registry = sac::parse_contract(&registry.registry).ok_or_else(|| {
            CommandError::usage(format!(
                "invalid --registry {:?}: expected a C… contract address (56 characters)",
                registry.registry
            ))
        })?;
        Ok((spec, registry))
    }
}

/// The passphrase of the network the assets live on, for a command without a registry (scan, exposure):
/// `passphrase` when given, else `network`'s.
pub fn scan_passphrase(network: &str, passphrase: Option<&str>) -> Result<String, CommandError> {
    match passphrase {
        Some(passphrase) => Ok(passphrase.to_string()),
        None => network::passphrase_of(network, network::config_dir().as_deref())
            .map_err(|e| CommandError::usage(format!("--network: {e}"))),
    }
}

impl SignerArgs {
    /// Loads the signer (never echoes a secret).
    pub fn load(&self) -> Result<Signer, CommandError> {
        identity::load(
            self.source.as_deref(),
            self.source_file.as_deref(),
            std::env::var(SECRET_ENV).ok(),
            network::config_dir().as_deref(),
        )
        .map_err(CommandError::usage)
    }
}

impl SourceArgs {
    /// Scan settings for assets on the network whose passphrase is `passphrase`, their ledger facts read
    /// from `rpc_url` (that network's stellar-rpc) when given: [`ScanSettings::resolve`], the one
    /// resolution `watch.toml` goes through too.
    pub fn settings(
        &self,
        passphrase: String,
        rpc_url: Option<String>,
    ) -> Result<ScanSettings, CommandError> {
        Ok(ScanSettings::resolve(
            SourceChoice {
                asset_passphrase: passphrase,
                rpc_url,
                horizon_url: self.horizon_url.clone(),
                expert_url: self.expert_url.clone(),
                mappings: Mappings {
                    resolve: self.resolve.clone(),
                    connect_to: self.connect_to.clone(),
                },
                cacert: self.cacert.clone(),
                timeout_secs: self.timeout,
            },
            SettingNames::Flags,
        )?)
    }
}

/// The registry and where its assets' sources are read: the flags `attest` and `verify` share.
#[derive(Args, Debug, Clone)]
pub struct RegistryScanArgs {
    #[command(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub asset_network: AssetNetworkArgs,
    #[command(flatten)]
    pub sources: SourceArgs,
}

impl RegistryScanArgs {
    /// The registry's network and id, and the scan settings for the assets: when they live on the
    /// registry's network, their ledger facts are read through its stellar-rpc (Horizon optional).
    pub fn resolve(&self) -> Result<(NetworkSpec, [u8; 32], ScanSettings), CommandError> {
        let (spec, registry) = self.network.resolve(&self.registry)?;
        let passphrase = self.asset_network.passphrase(&spec)?;
        let rpc_url = ledger_rpc(&spec, &passphrase);
        let settings = self.sources.settings(passphrase, rpc_url)?;
        Ok((spec, registry, settings))
    }
}

/// An RPC client for the network.
pub fn rpc_client(spec: &NetworkSpec) -> Result<RpcClient, CommandError> {
    RpcClient::new(&spec.rpc_url).map_err(CommandError::usage)
}

/// Where a command's history is: `--database` (a PostgreSQL URL, no password in argv), else
/// ASSAY_DATABASE_URL, else `--history` / ASSAY_HISTORY, else the default file.
pub fn history_database(
    database: Option<&str>,
    history: Option<&std::path::Path>,
) -> Result<assay_scan::history::Database, CommandError> {
    assay_scan::history::Database::resolve(database, None, history)
        .map_err(CommandError::usage)?
        .ok_or_else(|| {
            CommandError::usage("no data directory for the history: pass --history PATH")
        })
}
