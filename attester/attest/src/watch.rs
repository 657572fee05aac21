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

use crate::attest::{explain, holds, ChainSubmitter, Submitted, Submitter};
use crate::decide::{decide, Decision, Floor};
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
    /// The most one write may cost, in stroops (inclusion plus resource fee); a transaction priced
    /// above it is refused before it is signed and counts as a failure.
    #[serde(default = "default_max_fee")]
    pub max_fee_stroops: u32,
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

/// Refusals in a row after which an asset degrades `/health`: one refusal can be a passing outage,
/// repeated ones mean the on-chain value is ageing out (or was revoked) and nobody is renewing it.
pub const REPEATED_REFUSALS: u32 = 2;

impl WatchConfig {
    /// Parses and checks the file's values.
    pub fn parse(text: &str) -> Result<WatchConfig, String> {
        if let Some((line, column)) = secret_position(text) {
            return Err(format!(
                "line {line}, column {column}: this value looks like a secret key or seed phrase, \
                 and secrets never go in this file (it is not shown here): name a stellar-cli \
                 identity with `source`, point `source_file` at a key file, or set STELLAR_SECRET_KEY"
            ));
        }
        let c: WatchConfig = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
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
        c.check_interval_fits_margin()?;
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

impl WatchConfig {
    /// Refuses a config whose checks can come too far apart to refresh an entry before it goes stale.
    /// An asset is next checked at most its interval plus one pass over every asset later (each check
    /// bounded by [`CHECK_ALLOWANCE_SECS`]); that must fit inside `refresh_margin_secs`, the head start
    /// a refresh gets before `max_age_secs`.
    fn check_interval_fits_margin(&self) -> Result<(), String> {
        let pass = CHECK_ALLOWANCE_SECS.saturating_mul(self.assets.len() as u64);
        let widest = self
            .assets
            .iter()
            .map(|a| (a.interval_secs.unwrap_or(self.interval_secs), a))
            .max_by_key(|(interval, _)| *interval);
        let Some((interval, asset)) = widest else {
            return Ok(());
        };
        let gap = interval.saturating_add(pass);
        if gap <= self.refresh_margin_secs {
            return Ok(());
        }
        let key = match asset.interval_secs {
            Some(_) => format!("interval_secs of [[asset]] {:?}", asset.asset),
            None => "interval_secs".to_string(),
        };
        let most = self.refresh_margin_secs.saturating_sub(pass);
        Err(format!(
            "{key} ({interval}) plus a pass over {} asset(s) ({} s each, {pass} s) can reach {gap} s between \
             checks, more than refresh_margin_secs ({}): an entry could go stale before it is refreshed. \
             Lower {key} to at most {most}, or raise refresh_margin_secs to at least {gap} (it must stay below \
             max_age_secs, {})",
            self.assets.len(),
            CHECK_ALLOWANCE_SECS,
            self.refresh_margin_secs,
            self.max_age_secs
        ))
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
    if ledger_now
        .saturating_sub(s.attested_at)
        .saturating_add(margin)
        > max_age
    {
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
    /// Consecutive refused checks (revocations included); [`REPEATED_REFUSALS`] degrades `/health`.
    pub consecutive_refusals: u32,
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
    /// Alerts raised, by kind (`refused_stricter_floor`).
    pub alerts_total: BTreeMap<String, u64>,
    /// Weaker entries revoked after a refusal.
    pub revoked_total: u64,
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
        s.push_str("# HELP assay_watch_alerts_total Alerts raised, by kind (refused_stricter_floor: a refused report proved more than the registry held).\n# TYPE assay_watch_alerts_total counter\n");
        for (alert, n) in &self.alerts_total {
            s.push_str(&format!(
                "assay_watch_alerts_total{{alert=\"{alert}\"}} {n}\n"
            ));
        }
        s.push_str("# HELP assay_watch_revocations_total Weaker entries revoked after a refusal.\n# TYPE assay_watch_revocations_total counter\n");
        s.push_str(&format!(
            "assay_watch_revocations_total {}\n",
            self.revoked_total
        ));
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
        s.push_str("# HELP assay_watch_consecutive_refusals Consecutive refused checks per asset.\n# TYPE assay_watch_consecutive_refusals gauge\n");
        for (asset, h) in &self.assets {
            s.push_str(&format!(
                "assay_watch_consecutive_refusals{{asset=\"{asset}\"}} {}\n",
                h.consecutive_refusals
            ));
        }
        s
    }

    /// `ok`, or `degraded` when an asset's last check failed or it was refused repeatedly.
    pub fn status(&self) -> &'static str {
        let degraded = self
            .assets
            .values()
            .any(|a| a.consecutive_failures > 0 || a.consecutive_refusals >= REPEATED_REFUSALS);
        if degraded {
            "degraded"
        } else {
            "ok"
        }
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
                    let body = json!({"status": h.status(), "assets": h.assets}).to_string();
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

/// A structured log line on stderr. Every text in it goes through [`assay_core::redact::text`]:
/// a journal never holds a secret key or a URL's credentials.
pub fn log(event: &str, fields: serde_json::Value) {
    let mut v = json!({"ts": crate::verify::unix_now(), "event": event});
    if let (Some(obj), Some(extra)) = (v.as_object_mut(), fields.as_object()) {
        for (k, val) in extra {
            obj.insert(k.clone(), redacted(val.clone()));
        }
    }
    eprintln!("{v}");
}

fn redacted(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(assay_core::redact::text(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(redacted).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, redacted(v))).collect())
        }
        other => other,
    }
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
    /// Writes confirmed on chain whose read-back failed, by asset index: the next check re-reads them
    /// instead of scanning and writing again.
    pub unconfirmed: Mutex<BTreeMap<usize, (Attestation, String)>>,
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
    /// Not attestable, and the weaker on-chain entry was revoked (rule, transaction).
    Revoked(String, String),
    /// Written and confirmed, but the read-back failed (transaction, why); re-read next check.
    WrittenUnconfirmed(String, String),
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
        if let Some(checked) = self.re_read_unconfirmed(index) {
            return checked;
        }
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
                return self.revoke_if_weaker(index, r.rule(), Floor::of(&report));
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
        let mut submitter = self.submitter();
        log(
            "submitting",
            json!({"asset": name, "why": reason, "severity": params.severity, "flags": params.flags,
            "evidence_hash": params.evidence_hash}),
        );
        match submitter.submit(&batch) {
            Ok(Submitted {
                confirmed: c,
                read_back: Ok(()),
            }) => {
                log(
                    "written",
                    json!({"asset": name, "why": reason, "severity": params.severity, "flags": params.flags,
                    "evidence_hash": params.evidence_hash, "tx_hash": c.hash, "ledger": c.ledger}),
                );
                Checked::Written(c.hash)
            }
            Ok(Submitted {
                confirmed: c,
                read_back: Err(why),
            }) => {
                log(
                    "written_unconfirmed",
                    json!({"asset": name, "why": reason, "severity": params.severity, "flags": params.flags,
                    "evidence_hash": params.evidence_hash, "tx_hash": c.hash, "ledger": c.ledger, "error": why,
                    "note": "the transaction succeeded; the next check re-reads the entry instead of writing again"}),
                );
                self.unconfirmed
                    .lock()
                    .expect("unconfirmed lock")
                    .insert(index, (batch[0].clone(), c.hash.clone()));
                Checked::WrittenUnconfirmed(c.hash, why)
            }
            Err(e) => chain_failure(&name, "write_failed", &e),
        }
    }

    fn submitter(&self) -> ChainSubmitter<'_> {
        ChainSubmitter {
            invoker: Invoker {
                rpc: self.rpc,
                network: self.network,
                signer: self.signer,
                options: self.options.clone(),
            },
            registry: self.registry,
            confirm_read_back: true,
        }
    }

    /// After a write whose read-back failed: read the entry again rather than scan and write again.
    /// `None` when nothing is pending or the entry no longer holds the write (then the full check runs).
    fn re_read_unconfirmed(&self, index: usize) -> Option<Checked> {
        let pending = self
            .unconfirmed
            .lock()
            .expect("unconfirmed lock")
            .get(&index)
            .cloned();
        let (written, tx) = pending?;
        let (asset, contract, _) = &self.assets[index];
        let name = asset.to_string();
        let result = self.submitter().read(*contract);
        if let Ok(held) = &result {
            self.unconfirmed
                .lock()
                .expect("unconfirmed lock")
                .remove(&index);
            if held.as_ref().is_some_and(|h| holds(h, &written)) {
                log("read_back_confirmed", json!({"asset": name, "tx_hash": tx}));
                return Some(Checked::Unchanged);
            }
            log(
                "read_back_differs",
                json!({"asset": name, "tx_hash": tx, "on_chain": held.as_ref().map(|h| json!({"severity": h.severity, "flags": h.flags, "evidence_hash": hex::encode(h.evidence_hash)})),
                "note": "the entry no longer holds that write; checking afresh"}),
            );
            return None;
        }
        let error = result.err().map(|e| explain(&e)).unwrap_or_default();
        log(
            "read_back_failed",
            json!({"asset": name, "tx_hash": tx, "error": error, "note": "not writing again; re-reading later"}),
        );
        Some(Checked::Failed(error))
    }

    /// A refused report still proves the flags it read. When that floor is stricter than the
    /// registry's entry, the entry is revoked (gates then fail closed) and an alert is raised; a
    /// weaker entry left in place would keep admitting an issuer that can now freeze or claw back.
    fn revoke_if_weaker(&self, index: usize, rule: &str, floor: Option<Floor>) -> Checked {
        let refused = Checked::Refused(rule.to_string());
        let Some(floor) = floor else {
            return refused;
        };
        let (asset, contract, _) = &self.assets[index];
        let name = asset.to_string();
        let mut submitter = self.submitter();
        let held = match submitter.read(*contract) {
            Ok(Some(held)) if floor.exceeds(&held) => held,
            Ok(_) => return refused,
            Err(e) => {
                log(
                    "chain_read_failed",
                    json!({"asset": name, "error": explain(&e)}),
                );
                return Checked::Failed(explain(&e));
            }
        };
        {
            let mut h = self.health.lock().expect("health lock");
            *h.alerts_total
                .entry("refused_stricter_floor".into())
                .or_default() += 1;
        }
        log(
            "alert",
            json!({"alert": "refused_stricter_floor", "asset": name, "rule": rule,
            "floor": floor, "on_chain": {"severity": held.severity, "flags": held.flags},
            "note": "the refused report proves more than the registry holds; revoking the entry so gates fail closed"}),
        );
        match submitter.revoke(*contract) {
            Ok(c) => {
                log(
                    "revoked",
                    json!({"asset": name, "rule": rule, "tx_hash": c.hash, "ledger": c.ledger}),
                );
                Checked::Revoked(rule.to_string(), c.hash)
            }
            Err(e) => chain_failure(&name, "revoke_failed", &e),
        }
    }

    fn record(&self, index: usize, outcome: &Checked) {
        let name = self.assets[index].0.to_string();
        let mut h = self.health.lock().expect("health lock");
        h.checks_total += 1;
        match outcome {
            Checked::Written(_) | Checked::WrittenUnconfirmed(..) => h.written_total += 1,
            Checked::Refused(rule) => *h.refused_total.entry(rule.clone()).or_default() += 1,
            Checked::Revoked(rule, _) => {
                *h.refused_total.entry(rule.clone()).or_default() += 1;
                h.revoked_total += 1;
            }
            Checked::Failed(_) | Checked::Unknown(_) => h.failures_total += 1,
            Checked::Unchanged => {}
        }
        let a = h.assets.entry(name).or_default();
        match outcome {
            // A written-unconfirmed check backs off like a failure, so the re-read comes soon.
            Checked::Failed(m) | Checked::Unknown(m) | Checked::WrittenUnconfirmed(_, m) => {
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
        if let Checked::WrittenUnconfirmed(tx, _) = outcome {
            a.last_tx = Some(tx.clone());
        }
        match outcome {
            Checked::Refused(_) | Checked::Revoked(..) => a.consecutive_refusals += 1,
            Checked::Failed(_) | Checked::Unknown(_) => {}
            _ => a.consecutive_refusals = 0,
        }
        a.last_outcome = Some(match outcome {
            Checked::Written(_) => "written".into(),
            Checked::WrittenUnconfirmed(..) => "written_unconfirmed".into(),
            Checked::Unchanged => "unchanged".into(),
            Checked::Refused(rule) => format!("refused:{rule}"),
            Checked::Revoked(rule, _) => format!("revoked:{rule}"),
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
                let outcome = check_guarded(&self.assets[i].0.to_string(), || self.check(i));
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

/// A failed transaction as a check's outcome, logged: `outcome_unknown` when it may have applied (never
/// retried blindly), else `failed_event` with the registry's error named.
fn chain_failure(asset: &str, failed_event: &str, e: &ChainError) -> Checked {
    if e.may_have_written() {
        log(
            "outcome_unknown",
            json!({"asset": asset, "error": e.to_string()}),
        );
        return Checked::Unknown(e.to_string());
    }
    log(failed_event, json!({"asset": asset, "error": explain(e)}));
    Checked::Failed(explain(e))
}

/// Runs one asset's check; a panic inside it (a bug on some input) becomes that asset's failure,
/// counted and backed off like any other, never the end of the process.
fn check_guarded(asset: &str, check: impl FnOnce() -> Checked) -> Checked {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).unwrap_or_else(|payload| {
        let detail = assay_scan::scanner::panic_message(payload.as_ref());
        let message =
            format!("internal error while checking {asset} ({detail}); please report this");
        log("check_panicked", json!({"asset": asset, "error": message}));
        Checked::Failed(message)
    })
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
            let err = WatchConfig::parse(text).unwrap_err();
            assert!(!err.contains(SECRET) && !err.contains("abandon"), "{err}");
            assert!(err.contains(position), "{position}: {err}");
        }
        // A TOML error names the line and column and never quotes the value.
        let err =
            WatchConfig::parse("registry = \"C\"\ninterval_secs = \"hunter2\"\n").unwrap_err();
        assert!(err.contains("line 2, column"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        let err = WatchConfig::parse("registry = \"C\"\npassword hunter2\n").unwrap_err();
        assert!(err.contains("line 2") && !err.contains("hunter2"), "{err}");
    }

    #[test]
    fn item5_a_panicking_check_is_that_assets_failure() {
        let outcome = check_guarded("AAA-G", || panic!("planted {}", 7));
        let Checked::Failed(message) = outcome else {
            panic!("expected a failure, got {outcome:?}");
        };
        assert!(
            message.contains("AAA-G") && message.contains("planted 7"),
            "{message}"
        );
        assert_eq!(
            check_guarded("AAA-G", || Checked::Unchanged),
            Checked::Unchanged
        );
    }

    #[test]
    fn item5_hostile_ledger_time_does_not_overflow_the_refresh_rule() {
        let s = Safety {
            severity: 1,
            flags: 1,
            evidence_hash: [0x11; 32],
            attested_at: 0,
        };
        let p = params(1, 1, &"11".repeat(32));
        assert_eq!(
            write_reason(Some(&s), &p, u64::MAX, 86_400, 3_600),
            Some("refresh before it goes stale")
        );
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
        let err = config("interval_secs = 3500\n", asset).unwrap_err();
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
        let err = config("", "[[asset]]\nasset = \"A-B\"\ninterval_secs = 4000\n").unwrap_err();
        assert!(
            err.contains("interval_secs of [[asset]] \"A-B\" (4000)"),
            "{err}"
        );
        // Every asset adds a check to the pass: 30 at the defaults (300 + 30 x 120 = 3900) is too many.
        let many = asset.repeat(30);
        let err = config("", &many).unwrap_err();
        assert!(err.contains("a pass over 30 asset(s)"), "{err}");
        assert!(config("refresh_margin_secs = 3900\n", &many).is_ok());
        assert!(config("", &asset.repeat(27)).is_ok());
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
