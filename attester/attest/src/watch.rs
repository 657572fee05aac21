//! `assay watch`: the operator loop. Re-attests before an attestation goes stale and whenever the verdict
//! changes; never writes an unattestable report (it logs why and lets the on-chain value age out, so gates
//! fail closed); backs off on failures; records every observation; reports health.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assay_core::{Freshness, Params, Token};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::attest::{explain, ChainSubmitter, Submitter};
use crate::decide::{decide, Decision};
use crate::registry::{Attestation, Safety};
use crate::scanning::ScanSettings;
use crate::targets::evaluate_targets;
use crate::verify::{ledger_time, read_safety};
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{ChainError, InvokeOptions, Invoker};

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
    /// curl-style `HOST:PORT:ADDR:PORT2` connection mappings for source fetches (pinned deployments).
    #[serde(default)]
    pub connect_to: Vec<String>,
    /// PEM files of extra trusted roots for source fetches.
    #[serde(default)]
    pub cacert: Vec<PathBuf>,
    /// History database (default: the user's data directory).
    pub history: Option<PathBuf>,
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
    /// The assets.
    #[serde(rename = "asset", default)]
    pub assets: Vec<AssetConfig>,
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

fn default_interval() -> u64 {
    300
}
fn default_max_age() -> u64 {
    86_400
}
fn default_margin() -> u64 {
    3_600
}

impl WatchConfig {
    /// Parses and checks the file's values.
    pub fn parse(text: &str) -> Result<WatchConfig, String> {
        let c: WatchConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        if c.assets.is_empty() {
            return Err(
                "no [[asset]] entries: add at least one `[[asset]]` with `asset = \"CODE-ISSUER\"`"
                    .into(),
            );
        }
        if c.interval_secs == 0 || c.assets.iter().any(|a| a.interval_secs == Some(0)) {
            return Err("interval_secs must be at least 1".into());
        }
        if c.refresh_margin_secs >= c.max_age_secs {
            return Err(format!(
                "refresh_margin_secs ({}) must be below max_age_secs ({}) or every check would re-attest",
                c.refresh_margin_secs, c.max_age_secs
            ));
        }
        if let Some(addr) = &c.metrics_addr {
            let parsed: SocketAddr = addr
                .parse()
                .map_err(|_| format!("metrics_addr {addr:?}: expected 127.0.0.1:PORT"))?;
            if !parsed.ip().is_loopback() {
                return Err(format!(
                    "metrics_addr {addr:?}: only a loopback address is allowed"
                ));
            }
        }
        Ok(c)
    }
}

/// Why an attestable verdict must be written now, if it must.
pub fn write_reason(
    on_chain: Option<&Safety>,
    params: &Params,
    ledger_now: u64,
    max_age: u64,
    margin: u64,
) -> Option<&'static str> {
    let Some(s) = on_chain else {
        return Some("absent on chain");
    };
    if s.severity != params.severity
        || s.flags != params.flags
        || hex::encode(s.evidence_hash) != params.evidence_hash
    {
        return Some("verdict changed");
    }
    if ledger_now.saturating_sub(s.attested_at) + margin > max_age {
        return Some("refresh before it goes stale");
    }
    None
}

/// Delay before retrying after `failures` consecutive failures: 15 s doubling, capped at the larger of the
/// interval and 15 minutes.
pub fn backoff(failures: u32, interval: Duration) -> Duration {
    let base = Duration::from_secs(15).saturating_mul(1u32 << failures.saturating_sub(1).min(10));
    base.min(interval.max(Duration::from_secs(900)))
}

/// Per-asset health.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AssetHealth {
    /// Last check that completed (scan + decision + any write), unix seconds.
    pub last_success: Option<u64>,
    /// Last failure text.
    pub last_error: Option<String>,
    /// Consecutive failures.
    pub consecutive_failures: u32,
    /// Last outcome: `written`, `unchanged`, `refused:<rule>`, `failed`, `unknown`.
    pub last_outcome: Option<String>,
    /// Last written transaction.
    pub last_tx: Option<String>,
}

/// Counters for `/metrics`.
#[derive(Debug, Default, Serialize)]
pub struct Health {
    /// Per asset.
    pub assets: BTreeMap<String, AssetHealth>,
    /// Attestations written.
    pub written_total: u64,
    /// Refusals by rule.
    pub refused_total: BTreeMap<String, u64>,
    /// Failures.
    pub failures_total: u64,
    /// Checks run.
    pub checks_total: u64,
}

impl Health {
    /// Prometheus text exposition.
    pub fn metrics(&self) -> String {
        let mut s = String::new();
        s.push_str("# HELP assay_watch_checks_total Asset checks completed or failed.\n# TYPE assay_watch_checks_total counter\n");
        s.push_str(&format!("assay_watch_checks_total {}\n", self.checks_total));
        s.push_str("# HELP assay_watch_attestations_written_total Attestations written and confirmed.\n# TYPE assay_watch_attestations_written_total counter\n");
        s.push_str(&format!(
            "assay_watch_attestations_written_total {}\n",
            self.written_total
        ));
        s.push_str("# HELP assay_watch_refusals_total Reports not written, by rule.\n# TYPE assay_watch_refusals_total counter\n");
        for (rule, n) in &self.refused_total {
            s.push_str(&format!(
                "assay_watch_refusals_total{{rule=\"{rule}\"}} {n}\n"
            ));
        }
        s.push_str("# HELP assay_watch_failures_total Failed checks (source, network or chain).\n# TYPE assay_watch_failures_total counter\n");
        s.push_str(&format!(
            "assay_watch_failures_total {}\n",
            self.failures_total
        ));
        s.push_str("# HELP assay_watch_last_success_timestamp_seconds Last completed check per asset.\n# TYPE assay_watch_last_success_timestamp_seconds gauge\n");
        for (asset, h) in &self.assets {
            if let Some(t) = h.last_success {
                s.push_str(&format!(
                    "assay_watch_last_success_timestamp_seconds{{asset=\"{asset}\"}} {t}\n"
                ));
            }
        }
        s.push_str("# HELP assay_watch_consecutive_failures Consecutive failures per asset.\n# TYPE assay_watch_consecutive_failures gauge\n");
        for (asset, h) in &self.assets {
            s.push_str(&format!(
                "assay_watch_consecutive_failures{{asset=\"{asset}\"}} {}\n",
                h.consecutive_failures
            ));
        }
        s
    }
}

/// Serves `/health` (JSON) and `/metrics` (Prometheus) from `health` on `listener` until `stop`.
pub fn serve_health(listener: TcpListener, health: Arc<Mutex<Health>>, stop: Arc<AtomicBool>) {
    listener.set_nonblocking(true).ok();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            s.set_nonblocking(false).ok();
            s.set_read_timeout(Some(Duration::from_secs(2))).ok();
            let mut buf = [0u8; 2048];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]);
            let path = req.split_whitespace().nth(1).unwrap_or("/");
            let (status, ctype, body) = match path {
                "/health" => {
                    let h = health.lock().expect("health lock");
                    let failing = h.assets.values().any(|a| a.consecutive_failures > 0);
                    let body = json!({"status": if failing { "degraded" } else { "ok" }, "assets": h.assets}).to_string();
                    ("200 OK", "application/json", body)
                }
                "/metrics" => (
                    "200 OK",
                    "text/plain; version=0.0.4",
                    health.lock().expect("health lock").metrics(),
                ),
                _ => ("404 Not Found", "text/plain", "not found\n".to_string()),
            };
            let _ = write!(s, "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
}

/// A structured log line on stderr.
pub fn log(event: &str, fields: serde_json::Value) {
    let mut v = json!({"ts": crate::verify::unix_now(), "event": event});
    if let (Some(obj), Some(extra)) = (v.as_object_mut(), fields.as_object()) {
        for (k, val) in extra {
            obj.insert(k.clone(), val.clone());
        }
    }
    eprintln!("{v}");
}

/// Everything one pass needs.
pub struct Watcher<'a> {
    /// RPC.
    pub rpc: &'a RpcClient,
    /// Registry network.
    pub network: &'a assay_chain::network::NetworkSpec,
    /// Attester.
    pub signer: &'a assay_chain::identity::Signer,
    /// Registry id.
    pub registry: [u8; 32],
    /// Sources.
    pub settings: ScanSettings,
    /// Config.
    pub config: WatchConfig,
    /// Parsed assets (classic, or token contracts) with the contract ids they are keyed by.
    pub assets: Vec<(Token, [u8; 32], Duration)>,
    /// History database path.
    pub history: Option<PathBuf>,
    /// Health state.
    pub health: Arc<Mutex<Health>>,
    /// Transaction options.
    pub options: InvokeOptions,
    /// The SEP-41 suite's runner, when any asset has `sep41 = true`.
    pub sep41: Option<crate::sep41::Sep41Runner>,
}

/// The result of checking one asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Written now.
    Written(String),
    /// On chain already agrees and is fresh.
    Unchanged,
    /// Not attestable.
    Refused(String),
    /// Failed (will back off).
    Failed(String),
    /// Sent, outcome unknown.
    Unknown(String),
}

impl Watcher<'_> {
    /// Checks one asset: scan, record, decide, compare with the chain, write if needed.
    pub fn check(&self, index: usize) -> Checked {
        let (asset, contract, _) = &self.assets[index];
        let name = asset.to_string();
        let wants_sep41 = self.config.assets.get(index).is_some_and(|a| a.sep41);
        let runner = self.sep41.as_ref().filter(|_| wants_sep41);
        let target = crate::attest::Target {
            asset: asset.clone(),
            contract: *contract,
        };
        let (report, suite) = match evaluate_targets(
            &self.settings,
            &self.network.rpc_url,
            &self.network.passphrase,
            std::slice::from_ref(&target),
            runner,
        )
        .map(|mut v| v.remove(0))
        {
            Ok(evaluated) => evaluated,
            Err(m) => {
                log("scan_failed", json!({"asset": name, "error": m}));
                return Checked::Failed(m);
            }
        };
        if let Some(run) = &suite {
            log(
                "sep41",
                json!({"asset": name, "contract": run.contract, "verdict": run.verdict(),
                "summary": run.summary()}),
            );
        }
        let report = match report {
            Ok(r) => r,
            Err(m) => {
                log("scan_failed", json!({"asset": name, "error": m}));
                return Checked::Failed(m);
            }
        };
        if let Some(path) = &self.history {
            let row = (
                name.clone(),
                report.scanned_at.to_string(),
                serde_json::to_string(&report).expect("serialises"),
            );
            if let Err(e) =
                assay_scan::history::History::open(path).and_then(|mut h| h.append(&[row]))
            {
                log(
                    "history_failed",
                    json!({"asset": name, "error": e.to_string()}),
                );
            }
        }
        let now = assay_scan::scanner::timestamp(std::time::SystemTime::now());
        let params = match decide(&report, now, Freshness::default()) {
            Decision::Refuse(r) => {
                log(
                    "refused",
                    json!({"asset": name, "rule": r.rule(), "reason": r.to_string(),
                    "note": "not written; the on-chain value (if any) ages out and gates fail closed"}),
                );
                return Checked::Refused(r.rule().to_string());
            }
            Decision::Attest(p) => p,
        };
        let on_chain = match read_safety(self.rpc, self.registry, *contract) {
            Ok(s) => s,
            Err(m) => {
                log("chain_read_failed", json!({"asset": name, "error": m}));
                return Checked::Failed(m);
            }
        };
        let ledger_now = match ledger_time(self.rpc) {
            Ok(t) => t,
            Err(m) => return Checked::Failed(m),
        };
        let Some(reason) = write_reason(
            on_chain.as_ref(),
            &params,
            ledger_now,
            self.config.max_age_secs,
            self.config.refresh_margin_secs,
        ) else {
            log(
                "unchanged",
                json!({"asset": name, "severity": params.severity, "flags": params.flags}),
            );
            return Checked::Unchanged;
        };
        let mut hash = [0u8; 32];
        hex::decode_to_slice(&params.evidence_hash, &mut hash).expect("64 hex digits");
        let batch = [Attestation {
            asset: *contract,
            severity: params.severity,
            flags: params.flags,
            evidence_hash: hash,
        }];
        let mut submitter = ChainSubmitter {
            invoker: Invoker {
                rpc: self.rpc,
                network: self.network,
                signer: self.signer,
                options: self.options.clone(),
            },
            registry: self.registry,
            confirm_read_back: true,
        };
        log(
            "submitting",
            json!({"asset": name, "why": reason, "severity": params.severity, "flags": params.flags,
            "evidence_hash": params.evidence_hash}),
        );
        match submitter.submit(&batch) {
            Ok(c) => {
                log(
                    "written",
                    json!({"asset": name, "why": reason, "severity": params.severity, "flags": params.flags,
                    "evidence_hash": params.evidence_hash, "tx_hash": c.hash, "ledger": c.ledger}),
                );
                Checked::Written(c.hash)
            }
            Err(e @ ChainError::Unknown { .. }) => {
                log(
                    "outcome_unknown",
                    json!({"asset": name, "error": e.to_string()}),
                );
                Checked::Unknown(e.to_string())
            }
            Err(e) => {
                log("write_failed", json!({"asset": name, "error": explain(&e)}));
                Checked::Failed(explain(&e))
            }
        }
    }

    fn record(&self, index: usize, outcome: &Checked) {
        let name = self.assets[index].0.to_string();
        let mut h = self.health.lock().expect("health lock");
        h.checks_total += 1;
        match outcome {
            Checked::Written(_) => h.written_total += 1,
            Checked::Refused(rule) => *h.refused_total.entry(rule.clone()).or_default() += 1,
            Checked::Failed(_) | Checked::Unknown(_) => h.failures_total += 1,
            Checked::Unchanged => {}
        }
        let a = h.assets.entry(name).or_default();
        match outcome {
            Checked::Failed(m) | Checked::Unknown(m) => {
                a.consecutive_failures += 1;
                a.last_error = Some(m.clone());
            }
            other => {
                a.consecutive_failures = 0;
                a.last_success = Some(crate::verify::unix_now());
                if let Checked::Written(tx) = other {
                    a.last_tx = Some(tx.clone());
                }
            }
        }
        a.last_outcome = Some(match outcome {
            Checked::Written(_) => "written".into(),
            Checked::Unchanged => "unchanged".into(),
            Checked::Refused(rule) => format!("refused:{rule}"),
            Checked::Failed(_) => "failed".into(),
            Checked::Unknown(_) => "unknown".into(),
        });
    }

    /// Runs until `stop` (or after one pass with `once`). A check in progress, including a sent
    /// transaction being followed, always finishes before the loop stops.
    pub fn run(&self, stop: &AtomicBool, once: bool) -> Vec<Checked> {
        let mut due: Vec<Instant> = vec![Instant::now(); self.assets.len()];
        let mut last = vec![None; self.assets.len()];
        log(
            "started",
            json!({"assets": self.assets.len(), "signer": self.signer.address()}),
        );
        loop {
            for i in 0..self.assets.len() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if Instant::now() < due[i] {
                    continue;
                }
                let outcome = self.check(i);
                self.record(i, &outcome);
                let interval = self.assets[i].2;
                let failures = self
                    .health
                    .lock()
                    .expect("health lock")
                    .assets
                    .get(&self.assets[i].0.to_string())
                    .map_or(0, |a| a.consecutive_failures);
                due[i] = Instant::now()
                    + if failures > 0 {
                        backoff(failures, interval)
                    } else {
                        interval
                    };
                last[i] = Some(outcome);
            }
            if once || stop.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        log("stopped", json!({}));
        last.into_iter()
            .map(|o| o.unwrap_or(Checked::Failed("not checked".into())))
            .collect()
    }
}

/// Sets `stop` on SIGINT or SIGTERM. The handlers are installed before this returns, so a signal that
/// arrives at any later moment stops the loop cleanly instead of killing the process mid-write.
pub fn stop_on_signals(stop: Arc<AtomicBool>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        log(
            "signals_unavailable",
            json!({"note": "could not install SIGINT/SIGTERM handlers"}),
        );
        return;
    };
    #[cfg(unix)]
    let streams = {
        use tokio::signal::unix::{signal, SignalKind};
        let _guard = rt.enter();
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => (term, int),
            _ => {
                log(
                    "signals_unavailable",
                    json!({"note": "could not install SIGINT/SIGTERM handlers"}),
                );
                return;
            }
        }
    };
    std::thread::spawn(move || {
        #[cfg(unix)]
        let signal_name = rt.block_on(async move {
            let (mut term, mut int) = streams;
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            }
        });
        #[cfg(not(unix))]
        let signal_name = {
            let _ = rt.block_on(tokio::signal::ctrl_c());
            "ctrl-c"
        };
        log(
            "stopping",
            json!({"signal": signal_name,
            "note": "finishing the check in progress (a sent transaction is followed to its end)"}),
        );
        stop.store(true, Ordering::SeqCst);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(sev: u32, flags: u32, hash: &str) -> Params {
        Params {
            asset: "A".into(),
            severity: sev,
            severity_name: String::new(),
            flags,
            mechanics: assay_core::Mechanics::empty(),
            checks: vec![],
            network: None,
            evidence_version: 3,
            evidence_hash: hash.into(),
            scanned_at: assay_core::Timestamp::from_unix(0).unwrap(),
            preimage: None,
        }
    }

    #[test]
    fn writes_when_absent_changed_or_nearly_stale() {
        let h = "11".repeat(32);
        let s = Safety {
            severity: 1,
            flags: 1,
            evidence_hash: [0x11; 32],
            attested_at: 1000,
        };
        assert_eq!(
            write_reason(None, &params(1, 1, &h), 1000, 86_400, 3600),
            Some("absent on chain")
        );
        assert_eq!(
            write_reason(Some(&s), &params(1, 1, &h), 1000 + 3600, 86_400, 3600),
            None
        );
        assert_eq!(
            write_reason(Some(&s), &params(2, 1, &h), 1000, 86_400, 3600),
            Some("verdict changed")
        );
        assert_eq!(
            write_reason(
                Some(&s),
                &params(1, 1, &"22".repeat(32)),
                1000,
                86_400,
                3600
            ),
            Some("verdict changed")
        );
        assert_eq!(
            write_reason(
                Some(&s),
                &params(1, 1, &h),
                1000 + 86_400 - 3599,
                86_400,
                3600
            ),
            Some("refresh before it goes stale")
        );
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let i = Duration::from_secs(300);
        assert_eq!(backoff(1, i), Duration::from_secs(15));
        assert_eq!(backoff(2, i), Duration::from_secs(30));
        assert_eq!(backoff(20, i), Duration::from_secs(900));
    }

    #[test]
    fn config_is_checked() {
        let ok = "registry = \"C\"\nnetwork = \"testnet\"\n[[asset]]\nasset = \"A-B\"\n";
        assert_eq!(WatchConfig::parse(ok).unwrap().interval_secs, 300);
        assert!(WatchConfig::parse("registry = \"C\"\n")
            .unwrap_err()
            .contains("[[asset]]"));
        assert!(
            WatchConfig::parse(&format!("metrics_addr = \"0.0.0.0:9\"\n{ok}"))
                .unwrap_err()
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
}
