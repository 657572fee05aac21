//! `[[discover]]`: the watched set follows SEP-42 asset lists and issuer accounts. Each read adds the
//! assets a source newly names (scanned at the next pass) and retires the ones no source names any more:
//! a retired asset is no longer checked, so its registry entry is not refreshed and ages out (gates then
//! fail closed on it). A source that cannot be read retires nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use assay_core::{Shard, Token};
use serde_json::json;

use super::config::{AssetConfig, WatchConfig};
use super::log::log;
use crate::scanning::{discover, DiscoverySource, ScanSettings};
use crate::targets::resolve;

/// The discovery state of a watcher.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// Where assets are found.
    pub sources: Vec<DiscoverySource>,
    /// Discovered assets outside this shard are left to the other instances.
    pub shard: Shard,
    /// Time between reads of the sources.
    pub interval: Duration,
    /// Indices (in the watcher's assets) that discovery added.
    pub found: BTreeSet<usize>,
    /// Indices no source names any more: never due again unless a source names them again.
    pub retired: BTreeSet<usize>,
    /// When the sources are next read.
    pub next: Instant,
}

impl Discovery {
    /// Discovery from `sources`, first read at once.
    pub fn new(sources: Vec<DiscoverySource>, shard: Shard, interval: Duration) -> Discovery {
        Discovery {
            sources,
            shard,
            interval,
            found: BTreeSet::new(),
            retired: BTreeSet::new(),
            next: Instant::now(),
        }
    }
}

/// The watched assets as the watcher keeps them: the token, its contract id, its check interval.
pub type WatchedAssets = Vec<(Token, [u8; 32], Duration)>;

impl Discovery {
    /// Whether asset `index` is still watched (not retired).
    pub fn is_active(&self, index: usize) -> bool {
        !self.retired.contains(&index)
    }

    /// Whether the sources are due to be read.
    pub fn is_due(&self) -> bool {
        Instant::now() >= self.next
    }

    /// Reads every source now: adds to `assets` (and `config.assets`, which the watcher keeps index for
    /// index) what they newly name, with `config.interval_secs`, and retires what none names any more.
    /// Returns the names of the retired assets. An issuer source adds at most
    /// `config.discover_max_assets_per_issuer`.
    pub fn read(
        &mut self,
        settings: &ScanSettings,
        network_passphrase: &str,
        assets: &mut WatchedAssets,
        config: &mut WatchConfig,
    ) -> Vec<String> {
        self.next = Instant::now() + self.interval;
        let answers = match discover(settings, &self.sources) {
            Ok(answers) => answers,
            Err(m) => {
                log("discover_failed", json!({"error": m}));
                return Vec::new();
            }
        };
        let mut named: BTreeMap<[u8; 32], Token> = BTreeMap::new();
        let mut complete = true;
        for (source, answer) in self.sources.iter().zip(answers) {
            let mut found = match answer {
                Ok(found) => found,
                Err(m) => {
                    complete = false;
                    log(
                        "discover_failed",
                        json!({"source": source.to_string(), "error": m,
                        "note": "nothing is retired until every source is read"}),
                    );
                    continue;
                }
            };
            let cap = config.discover_max_assets_per_issuer;
            if matches!(source, DiscoverySource::Issuer(_)) && found.len() > cap {
                // The judged issuer decides how many assets it issues: the same first `cap` by name are
                // kept on every read, so the watched set does not churn.
                found.sort_by_key(|a| a.to_string());
                log(
                    "discover_capped",
                    json!({"source": source.to_string(), "listed": found.len(), "kept": cap,
                    "note": "discover_max_assets_per_issuer bounds what one issuer can add; raise it in watch.toml to watch more"}),
                );
                found.truncate(cap);
            }
            for asset in found {
                let name = asset.to_string();
                match resolve(&name, network_passphrase, &settings.asset_passphrase) {
                    Ok(t) if self.shard.owns(&t.contract) => {
                        named.insert(t.contract, t.asset);
                    }
                    Ok(_) => {}
                    Err(m) => log(
                        "discover_skipped",
                        json!({"source": source.to_string(), "asset": name, "error": m.to_string()}),
                    ),
                }
            }
        }
        self.apply(named, complete, assets, config)
    }

    fn apply(
        &mut self,
        named: BTreeMap<[u8; 32], Token>,
        complete: bool,
        assets: &mut WatchedAssets,
        config: &mut WatchConfig,
    ) -> Vec<String> {
        let interval = Duration::from_secs(config.interval_secs);
        let by_contract: BTreeMap<[u8; 32], usize> = assets
            .iter()
            .enumerate()
            .map(|(i, (_, contract, _))| (*contract, i))
            .collect();
        let mut added = Vec::new();
        let mut retired = Vec::new();
        for (contract, token) in &named {
            match by_contract.get(contract) {
                Some(&i) => {
                    if self.retired.remove(&i) {
                        added.push(token.to_string());
                    }
                }
                None => {
                    self.found.insert(assets.len());
                    assets.push((token.clone(), *contract, interval));
                    config.assets.push(AssetConfig {
                        asset: token.to_string(),
                        interval_secs: None,
                        sep41: false,
                    });
                    added.push(token.to_string());
                }
            }
        }
        if complete {
            for &i in &self.found {
                if !named.contains_key(&assets[i].1) && self.retired.insert(i) {
                    retired.push(assets[i].0.to_string());
                }
            }
        }
        for name in &added {
            log("discovered", json!({"asset": name}));
        }
        for name in &retired {
            log(
                "retired",
                json!({"asset": name, "note": "no discovery source names it any more: it is no longer refreshed, and its registry entry ages out"}),
            );
        }
        retired
    }
}
