//! Health and metrics of the loop: per-asset state, the Prometheus text, and the answers of `/health` and
//! `/metrics`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::json;

/// Refusals in a row after which an asset degrades `/health`: one refusal can be a passing outage,
/// repeated ones mean the on-chain value is ageing out (or was revoked) and nobody is renewing it.
pub const REPEATED_REFUSALS: u32 = 2;

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
    /// `attest_many` transactions sent (a split batch counts each part).
    pub transactions_total: u64,
    /// Batches the registry refused and that were split to isolate the entry at fault.
    pub batch_splits_total: u64,
    /// Wall time of the last pass over the due assets, seconds.
    pub last_pass_seconds: Option<f64>,
    /// Of the last pass, from its first scan starting to its last finishing (with any SEP-41 suite),
    /// seconds.
    pub last_scan_seconds: Option<f64>,
    /// Of the last pass, sending its writes (`attest_many` transactions, their confirmations and
    /// read-backs), summed over its batches, seconds. The batches go out while the scanning goes on, so
    /// scanning and writing together can exceed the pass.
    pub last_write_seconds: Option<f64>,
    /// What the spend budget has counted, and whether it was reached.
    pub spend: super::budget::Spend,
    /// This instance's shard of the asset list (`--shard I/N`), and how many assets it owns.
    #[serde(skip)]
    pub shard: Option<(assay_core::Shard, usize)>,
}

impl super::budget::SpendBook for Health {
    fn spend(&mut self) -> &mut super::budget::Spend {
        &mut self.spend
    }

    fn alert(&mut self, kind: &str) {
        *self.alerts_total.entry(kind.to_string()).or_default() += 1;
    }
}

/// One Prometheus counter with its help line.
fn counter(s: &mut String, name: &str, help: &str, value: u64) {
    s.push_str(&format!(
        "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"
    ));
}

impl Health {
    /// Prometheus text exposition.
    pub fn metrics(&self) -> String {
        let mut s = String::new();
        counter(
            &mut s,
            "assay_watch_checks_total",
            "Asset checks completed or failed.",
            self.checks_total,
        );
        counter(
            &mut s,
            "assay_watch_attestations_written_total",
            "Attestations written and confirmed.",
            self.written_total,
        );
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
        counter(
            &mut s,
            "assay_watch_revocations_total",
            "Weaker entries revoked after a refusal.",
            self.revoked_total,
        );
        counter(
            &mut s,
            "assay_watch_failures_total",
            "Failed checks (source, network or chain).",
            self.failures_total,
        );
        counter(
            &mut s,
            "assay_watch_transactions_total",
            "attest_many transactions sent (each part of a split batch counts).",
            self.transactions_total,
        );
        counter(
            &mut s,
            "assay_watch_batch_splits_total",
            "Batches refused by the registry and split to isolate the entry at fault.",
            self.batch_splits_total,
        );
        for (name, help, value) in [
            (
                "assay_watch_last_pass_seconds",
                "Wall time of the last pass over the due assets.",
                self.last_pass_seconds,
            ),
            (
                "assay_watch_last_scan_seconds",
                "Of the last pass, from its first scan starting to its last finishing.",
                self.last_scan_seconds,
            ),
            (
                "assay_watch_last_write_seconds",
                "Of the last pass, sending its writes (transactions, confirmations, read-backs), summed over its batches; they overlap the scanning.",
                self.last_write_seconds,
            ),
        ] {
            if let Some(seconds) = value {
                s.push_str(&format!(
                    "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {seconds:.3}\n"
                ));
            }
        }
        for (name, help, stroops) in [
            (
                "assay_watch_spend_pass_xlm",
                "Counted against max_spend_per_pass_xlm in the current pass (each transaction at the most it may cost).",
                self.spend.pass_stroops,
            ),
            (
                "assay_watch_spend_day_xlm",
                "Counted against max_spend_per_day_xlm on the current UTC day.",
                self.spend.day_stroops,
            ),
        ] {
            s.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {:.7}\n",
                stroops as f64 / super::budget::STROOPS_PER_XLM as f64
            ));
        }
        self.per_asset_metrics(&mut s);
        s
    }

    /// The shard this instance owns, and each asset's last success and runs of failures and refusals.
    fn per_asset_metrics(&self, s: &mut String) {
        if let Some((shard, owned)) = self.shard {
            s.push_str("# HELP assay_watch_shard This instance's shard (--shard I/N) and the assets it owns.\n# TYPE assay_watch_shard gauge\n");
            s.push_str(&format!(
                "assay_watch_shard{{index=\"{}\",count=\"{}\"}} {owned}\n",
                shard.index(),
                shard.count()
            ));
        }
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
    }

    /// `ok`, or `degraded` when an asset's last check failed or it was refused repeatedly, or when the
    /// spend budget stopped a write.
    pub fn status(&self) -> &'static str {
        let degraded = self.spend.reached.is_some()
            || self
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

/// The answer to `GET path` on `metrics_addr`: status, content type and body of `/health` (JSON) or
/// `/metrics` (Prometheus). The CLI serves it on the same server loop as `assay serve`.
pub fn answer(health: &Mutex<Health>, path: &str) -> (u16, &'static str, String) {
    // A panic elsewhere must not take the health page down with it: the counters are still worth reading.
    let h = health
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match path {
        "/health" => (
            200,
            "application/json",
            json!({"status": h.status(), "assets": h.assets, "spend": h.spend}).to_string(),
        ),
        "/metrics" => (200, "text/plain; version=0.0.4", h.metrics()),
        _ => (
            404,
            "text/plain",
            "not found: this address serves /health and /metrics\n".to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_report_the_shard_batches_and_pass_time() {
        let mut h = Health {
            transactions_total: 3,
            batch_splits_total: 1,
            last_pass_seconds: Some(1.25),
            last_write_seconds: Some(0.5),
            ..Health::default()
        };
        let text = h.metrics();
        assert!(
            text.contains("assay_watch_transactions_total 3\n")
                && text.contains("assay_watch_batch_splits_total 1\n")
                && text.contains("assay_watch_last_pass_seconds 1.250\n")
                && text.contains("assay_watch_last_write_seconds 0.500\n")
                && !text.contains("assay_watch_last_scan_seconds")
                && !text.contains("assay_watch_shard"),
            "{text}"
        );
        h.shard = Some(("1/3".parse().unwrap(), 340));
        assert!(h
            .metrics()
            .contains("assay_watch_shard{index=\"1\",count=\"3\"} 340\n"));
    }
}
