//! `watch.toml`, the environment and `--shard` resolved once into what the watcher runs on: the chain it
//! writes to and signs for ([`Chain`]), and the rest of its setup ([`Setup`]). The CLI parses and hands
//! over; [`super::Watcher::new`] builds the watcher from the result.

use assay_scan::history::Database;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assay_chain::identity::{self, Signer, SECRET_ENV};
use assay_chain::network::{self, NetworkSpec};
use assay_chain::rpc::RpcClient;
use assay_chain::submit::InvokeOptions;
use assay_core::{Shard, Token};
use assay_scan::net::mapping::Mappings;
use serde_json::json;

use super::config::WatchConfig;
use super::discovery::Discovery;
use super::health::Health;
use super::log::log;
use super::react::Reaction;
use crate::scanning::{ledger_rpc, ScanSettings, SettingNames, SourceChoice};
use crate::sep41::Sep41Runner;
use crate::targets::resolve;
use crate::AttestError;

/// Seconds allowed for one source fetch, as `--timeout`'s default.
const FETCH_TIMEOUT_SECS: f64 = 15.0;

/// The chain the watcher reads, writes to and signs for.
pub struct Chain {
    /// The registry network's stellar-rpc.
    pub rpc: RpcClient,
    /// The registry network.
    pub network: NetworkSpec,
    /// The attester.
    pub signer: Signer,
}

/// Everything else the watcher runs on.
pub struct Setup {
    /// The registry contract.
    pub registry: [u8; 32],
    /// Where and how the assets' sources are read.
    pub settings: ScanSettings,
    /// The config, its assets narrowed to this shard's (index for index with `assets`).
    pub config: WatchConfig,
    /// This shard's assets, with their contract ids and check intervals.
    pub assets: Vec<(Token, [u8; 32], Duration)>,
    /// The history store, when there is one: a SQLite file, or the PostgreSQL database the workers share.
    pub history: Option<Database>,
    /// `/health` and `/metrics` state, shared with whoever serves them.
    pub health: Arc<Mutex<Health>>,
    /// Transaction options (the fee cap).
    pub options: InvokeOptions,
    /// The SEP-41 runner, when an asset has `sep41 = true`.
    pub sep41: Option<Sep41Runner>,
    /// `[[discover]]`, when the config has any.
    pub discovery: Option<Discovery>,
    /// Following the ledger between passes, unless `react_every_ledgers = 0`.
    pub reaction: Option<Reaction>,
}

impl WatchConfig {
    /// Resolves this config, with `shard` (`--shard`, else the config's), `database` (`--database`) and
    /// the environment (`ASSAY_HORIZON_URL` when the file has no `horizon_url`, `ASSAY_DATABASE_URL`,
    /// `STELLAR_SECRET_KEY`, stellar-cli's network and identity files), into the chain and the setup the
    /// watcher runs on.
    pub fn resolve(
        mut self,
        shard: Option<&str>,
        database: Option<&str>,
    ) -> Result<(Chain, Setup), AttestError> {
        let input = |e: &dyn std::fmt::Display| AttestError::Input(e.to_string());
        let history =
            Database::resolve(database, self.database.as_deref(), self.history.as_deref())
                .map_err(AttestError::Input)?;
        if matches!(history, Some(Database::Postgres(_)))
            && shard.or(self.shard.as_deref()).is_some()
        {
            return Err(AttestError::Input(
                "--shard (or `shard`) with a PostgreSQL database: not needed, the workers share the assets \
                 through the database's work queue; start each worker with the same config and no shard"
                    .into(),
            ));
        }
        let shard = match shard.or(self.shard.as_deref()) {
            Some(s) => s
                .parse::<Shard>()
                .map_err(|m| AttestError::Input(format!("--shard: {m}")))?,
            None => Shard::ALL,
        };
        let config_dir = network::config_dir();
        let spec = network::resolve(
            self.network.as_deref(),
            self.rpc_url.as_deref(),
            self.network_passphrase.as_deref(),
            config_dir.as_deref(),
        )
        .map_err(|e| input(&e))?;
        let registry = crate::sac::parse_contract(&self.registry).ok_or_else(|| {
            AttestError::Input(format!(
                "invalid registry {:?}: expected a C… contract address (56 characters)",
                self.registry
            ))
        })?;
        let signer = identity::load(
            self.source.as_deref(),
            self.source_file.as_deref(),
            std::env::var(SECRET_ENV).ok(),
            config_dir.as_deref(),
        )
        .map_err(|e| input(&e))?;
        let mut settings = self.scan_settings(&spec)?;
        settings.limits = self.scan_limits();
        let listed = self.assets.len();
        let mut assets = Vec::new();
        let mut owned = Vec::new();
        for a in &self.assets {
            let target = resolve(&a.asset, &spec.passphrase, &settings.asset_passphrase)?;
            if shard.owns(&target.contract) {
                let interval = Duration::from_secs(a.interval_secs.unwrap_or(self.interval_secs));
                assets.push((target.asset, target.contract, interval));
                owned.push(a.clone());
            }
        }
        // The watcher reads an asset's entry by its index in `assets`, so the config keeps the same ones.
        self.assets = owned;
        if shard != Shard::ALL {
            log(
                "shard",
                json!({"shard": shard.to_string(), "owned": assets.len(), "listed": listed}),
            );
        }
        let sep41 = if self.assets.iter().any(|a| a.sep41) {
            Some(self.sep41_runner(&spec, &settings.asset_passphrase)?)
        } else {
            None
        };
        let rpc = RpcClient::new(&spec.rpc_url).map_err(|e| input(&e))?;
        let discovery = if self.discover.is_empty() {
            None
        } else {
            let sources = self
                .discover
                .iter()
                .map(|d| d.source())
                .collect::<Result<Vec<_>, _>>()?;
            Some(Discovery::new(
                sources,
                shard,
                Duration::from_secs(self.discover_interval_secs),
            ))
        };
        let reaction = (self.react_every_ledgers > 0).then(|| {
            Reaction::new(
                self.react_every_ledgers,
                settings.asset_passphrase == spec.passphrase,
            )
        });
        let health = Arc::new(Mutex::new(Health {
            shard: (shard != Shard::ALL).then_some((shard, assets.len())),
            ..Health::default()
        }));
        let setup = Setup {
            registry,
            settings,
            history,
            options: InvokeOptions {
                max_fee: self.max_fee_stroops,
                ..InvokeOptions::default()
            },
            config: self,
            assets,
            health,
            sep41,
            discovery,
            reaction,
        };
        let chain = Chain {
            rpc,
            network: spec,
            signer,
        };
        Ok((chain, setup))
    }

    /// The sources of the assets' network (`asset_network`, else the registry's).
    fn scan_settings(&self, spec: &NetworkSpec) -> Result<ScanSettings, AttestError> {
        let passphrase = match &self.asset_network {
            None => spec.passphrase.clone(),
            Some(name) => network::passphrase_of(name, network::config_dir().as_deref())
                .map_err(|e| AttestError::Input(format!("asset_network: {e}")))?,
        };
        let mut connect_to = Vec::new();
        for rule in &self.connect_to {
            connect_to.push(
                rule.parse()
                    .map_err(|e| AttestError::Input(format!("connect_to {rule:?}: {e}")))?,
            );
        }
        ScanSettings::resolve(
            SourceChoice {
                rpc_url: ledger_rpc(spec, &passphrase),
                asset_passphrase: passphrase,
                horizon_url: self
                    .horizon_url
                    .clone()
                    .or_else(|| std::env::var("ASSAY_HORIZON_URL").ok()),
                expert_url: self
                    .expert_url
                    .clone()
                    .unwrap_or_else(|| assay_core::DEFAULT_STELLAR_EXPERT_URL.to_string()),
                mappings: Mappings {
                    resolve: vec![],
                    connect_to,
                },
                cacert: self.cacert.clone(),
                timeout_secs: FETCH_TIMEOUT_SECS,
            },
            SettingNames::WatchConfig,
        )
    }

    /// The SEP-41 runner for `sep41 = true` assets: on the registry's network (the contract an asset is
    /// keyed by lives there), keyless on a fork unless the parties are named.
    fn sep41_runner(
        &self,
        spec: &NetworkSpec,
        asset_passphrase: &str,
    ) -> Result<Sep41Runner, AttestError> {
        Sep41Runner::on_registry_network(
            spec,
            asset_passphrase,
            (
                self.sep41_owner_identity.clone(),
                self.sep41_spender_identity.clone(),
                self.sep41_allow_non_testnet_write,
            ),
            "sep41 = true",
            "remove asset_network",
        )
    }
}
