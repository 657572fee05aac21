//! `[[discover]]`: the watched set follows SEP-42 asset lists and issuer accounts. Each read adds the
//! assets a source newly names (scanned at the next pass) and retires the ones no source names any more:
//! a retired asset is no longer checked, so its registry entry is not refreshed and ages out (gates then
//! fail closed on it). A source that cannot be read retires nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use assay_core::{Shard, Token};
use serde_json::json;

use super::config::AssetConfig;
use super::log::log;
use super::watcher::Watcher;
use crate::scanning::{discover, DiscoverySource};
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

impl Watcher<'_> {
    /// Whether asset `index` is still watched (not retired by discovery).
    pub fn is_active(&self, index: usize) -> bool {
        self.discovery
            .as_ref()
            .is_none_or(|d| !d.retired.contains(&index))
    }

    /// The watched assets' names, in index order.
    pub fn active_assets(&self) -> Vec<String> {
        (0..self.assets.len())
            .filter(|&i| self.is_active(i))
            .map(|i| self.assets[i].0.to_string())
            .collect()
    }

    /// Reads the discovery sources when due and updates the watched set; returns true when it was read.
    pub fn discover_if_due(&mut self) -> bool {
        match &self.discovery {
            Some(d) if Instant::now() >= d.next => {}
            _ => return false,
        }
        self.discover_now();
        true
    }

    /// Reads every discovery source now: adds what they newly name, retires what none names any more.
    pub fn discover_now(&mut self) {
        let Some(discovery) = self.discovery.as_mut() else {
            return;
        };
        discovery.next = Instant::now() + discovery.interval;
        let (sources, shard) = (discovery.sources.clone(), discovery.shard);
        let answers = match discover(&self.settings, &sources) {
            Ok(answers) => answers,
            Err(m) => {
                log("discover_failed", json!({"error": m}));
                return;
            }
        };
        let mut named: BTreeMap<[u8; 32], Token> = BTreeMap::new();
        let mut complete = true;
        for (source, answer) in sources.iter().zip(answers) {
            let mut assets = match answer {
                Ok(assets) => assets,
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
            let cap = self.config.discover_max_assets_per_issuer;
            if matches!(source, DiscoverySource::Issuer(_)) && assets.len() > cap {
                // The judged issuer decides how many assets it issues: the same first `cap` by name are
                // kept on every read, so the watched set does not churn.
                assets.sort_by_key(|a| a.to_string());
                log(
                    "discover_capped",
                    json!({"source": source.to_string(), "listed": assets.len(), "kept": cap,
                    "note": "discover_max_assets_per_issuer bounds what one issuer can add; raise it in watch.toml to watch more"}),
                );
                assets.truncate(cap);
            }
            for asset in assets {
                let name = asset.to_string();
                match resolve(
                    &name,
                    &self.network.passphrase,
                    &self.settings.asset_passphrase,
                ) {
                    Ok(t) if shard.owns(&t.contract) => {
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
        self.apply_discovered(named, complete);
    }

    fn apply_discovered(&mut self, named: BTreeMap<[u8; 32], Token>, complete: bool) {
        let interval = Duration::from_secs(self.config.interval_secs);
        let by_contract: BTreeMap<[u8; 32], usize> = self
            .assets
            .iter()
            .enumerate()
            .map(|(i, (_, contract, _))| (*contract, i))
            .collect();
        let mut added = Vec::new();
        let mut retired = Vec::new();
        let discovery = self.discovery.as_mut().expect("discovery is configured");
        for (contract, token) in &named {
            match by_contract.get(contract) {
                Some(&i) => {
                    if discovery.retired.remove(&i) {
                        added.push(token.to_string());
                    }
                }
                None => {
                    discovery.found.insert(self.assets.len());
                    self.assets.push((token.clone(), *contract, interval));
                    self.config.assets.push(AssetConfig {
                        asset: token.to_string(),
                        interval_secs: None,
                        sep41: false,
                    });
                    added.push(token.to_string());
                }
            }
        }
        if complete {
            for &i in &discovery.found {
                if !named.contains_key(&self.assets[i].1) && discovery.retired.insert(i) {
                    retired.push(self.assets[i].0.to_string());
                }
            }
        }
        {
            let mut health = self.health.lock().expect("health lock");
            for name in &retired {
                health.assets.remove(name);
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
    }
}
