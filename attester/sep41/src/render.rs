//! The report as text rows, a CHECKS.md page, or versioned JSON.
use std::fmt::Write as _;

use serde_json::json;

use crate::model::{Layer, Report, Status};

/// The JSON report's schema id; bump on any breaking change.
pub const JSON_SCHEMA: &str = "assay/sep41-report@1";

/// One row per check: mark, id, observed; expected and error lines for non-PASS rows; totals.
pub fn text(report: &Report) -> String {
    let mut out = format!("SEP-41 Conformance — {}\n\n", report.contract_id);
    if let Some(f) = &report.fork {
        let _ = writeln!(
            out,
            "  fork of {} at ledger {}; holder's units: {}\n",
            report.network, f.ledger, f.detail
        );
        let _ = write!(out, "{}", drift_lines(f));
    }
    let width = report.results.iter().map(|r| r.id.len()).max().unwrap_or(0);
    for r in &report.results {
        let _ = writeln!(out, "  {} {:width$}  {}", r.status.mark(), r.id, r.actual);
        if r.status != Status::Pass {
            let _ = writeln!(out, "      expected: {}", r.expected);
            if let Some(error) = &r.evidence.error {
                let _ = writeln!(out, "      error: {error}");
            }
        }
    }
    let s = report.summary();
    let _ = writeln!(
        out,
        "\n{} pass, {} fail, {} skipped, {} unverifiable, {} not implemented ({} checks)",
        s.pass, s.fail, s.skipped, s.unverifiable, s.not_implemented, s.total
    );
    let _ = writeln!(out, "by layer: {}", by_layer(report, " · "));
    out
}

fn layer_counts(report: &Report, layer: Layer) -> (usize, usize) {
    let rows = report.results.iter().filter(|r| r.layer == layer);
    let total = rows.clone().count();
    (rows.filter(|r| r.status == Status::Pass).count(), total)
}

fn by_layer(report: &Report, sep: &str) -> String {
    Layer::ALL
        .iter()
        .map(|l| {
            let (p, n) = layer_counts(report, *l);
            format!("{} {p}/{n} pass", l.as_str())
        })
        .collect::<Vec<_>>()
        .join(sep)
}

fn headline(report: &Report) -> &'static str {
    match report.exit_code() {
        0 if report.results.iter().any(|r| r.no_power_observed()) => {
            "Conformant: every check with something to judge was exercised and held."
        }
        0 => "Conformant: every check was exercised and held.",
        3 => "Violations found: at least one check FAILED or a required member is missing.",
        _ if report.results.is_empty() => "Nothing ran.",
        _ => "Incomplete: some checks could not be assessed. This is not a conformance claim.",
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A CHECKS.md page.
pub fn markdown(report: &Report) -> String {
    let s = report.summary();
    let mut out = String::from("# SEP-41 Conformance Report\n\n| | |\n| --- | --- |\n");
    let _ = writeln!(out, "| Contract | `{}` |", report.contract_id);
    let _ = writeln!(out, "| NetworkClient | {} |", cell(&report.network));
    let _ = writeln!(out, "| Run at | {} |", report.ran_at);
    if let Some(f) = &report.fork {
        let _ = writeln!(out, "| Fork ledger | {} |", f.ledger);
        let _ = writeln!(
            out,
            "| Holder's units | {} ({}) |",
            f.premise,
            cell(&f.detail)
        );
        let drift = drift_lines(f);
        if !drift.is_empty() {
            let _ = writeln!(out, "| Drift | {} |", cell(drift.trim()));
        }
    }
    let _ = writeln!(
        out,
        "| Checks | {} pass, {} fail, {} unverifiable, {} skipped, {} not implemented |",
        s.pass, s.fail, s.unverifiable, s.skipped, s.not_implemented
    );
    let _ = writeln!(out, "\n**{}**", headline(report));
    for layer in Layer::ALL {
        let (p, n) = layer_counts(report, layer);
        let _ = writeln!(out, "\n## Layer: {} ({p}/{n} pass)\n", layer.as_str());
        out.push_str("| Check | Clause | Requirement | Status | Observed |\n| --- | --- | --- | --- | --- |\n");
        for r in report.results.iter().filter(|r| r.layer == layer) {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                r.id,
                cell(r.clause),
                r.requirement,
                r.status.as_str(),
                cell(&r.actual)
            );
        }
    }
    let details: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.status != Status::Pass || !r.evidence.is_empty())
        .collect();
    if !details.is_empty() {
        out.push_str("\n## Details\n");
    }
    for r in details {
        let _ = writeln!(out, "\n### `{}`\n", r.id);
        let _ = writeln!(out, "- status: {}", r.status.as_str());
        let _ = writeln!(out, "- expected: {}", r.expected);
        let _ = writeln!(out, "- observed: {}", r.actual);
        let e = &r.evidence;
        if let Some(v) = &e.before {
            let _ = writeln!(out, "- before: `{v}`");
        }
        if let Some(v) = &e.after {
            let _ = writeln!(out, "- after: `{v}`");
        }
        if let Some(v) = &e.granted {
            let _ = writeln!(out, "- granted: {v}");
        }
        if let Some(v) = &e.tx_hash {
            let _ = writeln!(out, "- transaction: `{v}`");
        }
        if let Some(v) = &e.ledger {
            let _ = writeln!(out, "- ledger: {v}");
        }
        if let Some(v) = &e.error {
            let _ = writeln!(out, "- error: `{}`", cell(v));
        }
        if !e.observed.is_empty() {
            out.push_str("- observed in simulation:\n");
            for line in &e.observed {
                let _ = writeln!(out, "  - `{line}`");
            }
        }
    }
    let _ = writeln!(
        out,
        "\n---\nGenerated by `assay sep41` {}.",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// The versioned JSON report.
pub fn json(report: &Report) -> serde_json::Value {
    let mut v = json!({
        "schema": JSON_SCHEMA,
        "standard": "SEP-41",
        "contractId": report.contract_id,
        "network": report.network,
        "ranAt": report.ran_at,
        "exitCode": report.exit_code(),
        "summary": report.summary(),
        "results": report.results,
    });
    if let Some(f) = &report.fork {
        v["fork_ledger"] = json!(f.ledger);
        v["fork_premise"] = json!({"kind": f.premise, "detail": f.detail});
        v["fork_drift"] = json!({"repinned_from": f.repinned_from, "drifted": f.drifted});
    }
    v
}

/// What drift did to a fork run, one indented line each (nothing when there was none).
fn drift_lines(f: &crate::model::ForkFacts) -> String {
    let mut out = String::new();
    if !f.repinned_from.is_empty() {
        let ledgers: Vec<String> = f.repinned_from.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "  drift: re-pinned from ledger {} (an entry read had changed upstream after it)\n",
            ledgers.join(", then ")
        );
    }
    if !f.drifted.is_empty() {
        let _ = writeln!(
            out,
            "  drift: {} entries read changed upstream after ledger {}: the fork mixed two \
             ledgers' state, so the run is undetermined\n",
            f.drifted.len(),
            f.ledger
        );
    }
    out
}
