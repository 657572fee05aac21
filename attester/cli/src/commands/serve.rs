//! `assay serve`: a read-only HTTP view of the history store that `assay scan` and `assay watch` append to.
//!
//! Every answer is computed from the store when it is asked for; nothing is written, and the store is
//! opened read-only per request, so `watch` keeps appending while the server runs. An undetermined report
//! is marked in the `Assay-Undetermined` header and in the body, so "could not check" never reads as
//! "fine" to a client that looks at only one of them.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use assay_core::report::Report;
use assay_core::Timestamp;
use assay_scan::history::Database;
use assay_scan::history::{History, LatestRow, Recheck};
use clap::Args;
use serde_json::{json, Value};

use super::history::Listing;
use super::serve_page;
use super::{failed, usage, CommandResult};

const EXIT_CODES: &str = "\
Exit codes:
  0   stopped by SIGINT or SIGTERM
  1   the listen address could not be bound
  64  usage error: a malformed option, or a non-loopback address without --allow-remote";

/// Severity names a `?severity=` filter accepts (`unknown` is an unevaluated report).
const SEVERITY_NAMES: [&str; 6] = ["clear", "low", "medium", "high", "critical", "unknown"];
/// Page size of `/v1/assets` when none is asked for, and the largest one served.
const DEFAULT_PER_PAGE: usize = 50;
const MAX_PER_PAGE: usize = 500;

/// Arguments of `assay serve`.
#[derive(Args, Debug)]
#[command(
    about = "Serve the recorded reports read-only over HTTP (JSON API, one HTML page per asset, metrics)",
    long_about = "Serves the history store that `assay scan` and `assay watch` append to, read-only:\n\
  GET /v1/assets            latest report of every asset (paged: ?after=ASSET&per_page=N, filter: ?severity=NAME)\n\
  GET /v1/assets/{asset}    latest report JSON, the registry's entry as watch last saw it, and a page of\n\
                            observations with their transitions (?before=ID&per_page=N)\n\
  GET /assets/{asset}       the same as an HTML page, readable without JavaScript\n\
  GET /v1/evidence/{hash}   the evidence bundle recorded under an evidence hash (`assay verify --bundle`)\n\
  GET /health, /metrics     liveness (503 while the store cannot be read) and Prometheus metrics\n\
An undetermined report carries `Assay-Undetermined: true` and `\"undetermined\": true`. Binds to loopback \
unless --allow-remote is given; put a reverse proxy with TLS in front of a public instance.",
    after_help = EXIT_CODES
)]
pub struct ServeArgs {
    /// History database (default: the user's data directory; what `watch`'s `history` key names).
    #[arg(long, value_name = "PATH", env = "ASSAY_HISTORY")]
    pub history: Option<PathBuf>,

    /// A PostgreSQL database (postgres://USER@HOST:PORT/DB) that `watch` workers write: any number of
    /// replicas serve it alike. No password here: give the URL in ASSAY_DATABASE_URL, or PGPASSWORD.
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,

    /// Address to listen on (port 0 picks a free port; the address is printed on stderr).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,

    /// Allow a listen address that is not loopback.
    #[arg(long)]
    pub allow_remote: bool,

    /// Connections open at once; at the cap, the oldest one not being answered is closed for a new one.
    #[arg(long, value_name = "N", default_value_t = crate::server::DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65_535))]
    pub max_connections: usize,
}

/// An answer: status, content type, extra headers, body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Reply {
    fn json(status: u16, body: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            headers: Vec::new(),
            body: format!("{body:#}\n"),
        }
    }

    /// A problem answer. A server-side failure's detail (the store's path, its error) goes to the
    /// server's log; the remote client gets a fixed sentence that names no file.
    fn problem(status: u16, detail: String) -> Reply {
        let detail = if status >= 500 {
            eprintln!(
                "assay serve: {status}: {}",
                assay_core::redact::text(&detail)
            );
            "the history store cannot be read (or does not exist yet: `assay watch` with `history`, or \
             `assay scan`, creates it); the server's log says why"
                .to_string()
        } else {
            detail
        };
        Reply {
            content_type: "application/problem+json",
            ..Reply::json(status, &json!({ "status": status, "detail": detail }))
        }
    }

    fn html(status: u16, body: String) -> Reply {
        Reply {
            status,
            content_type: "text/html; charset=utf-8",
            headers: Vec::new(),
            body,
        }
    }

    fn undetermined(mut self, undetermined: bool) -> Reply {
        self.headers
            .push(("Assay-Undetermined", undetermined.to_string()));
        self
    }
}

/// What the server knows between requests: where the store is and how many requests it answered.
pub(crate) struct Server {
    pub store: Database,
    pub requests: AtomicU64,
}

/// One page of the per-asset index for a request, with the rows whose report could not be read counted,
/// never dropped silently.
struct Latest {
    reports: Vec<(LatestRow, Report)>,
    corrupt: Vec<i64>,
    /// Another page follows.
    more: bool,
}

impl Server {
    /// Answers one request. Only GET and HEAD are served.
    pub(crate) fn respond(&self, method: &str, path: &str, query: &str) -> Reply {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if method != "GET" && method != "HEAD" {
            return Reply::problem(
                405,
                format!("{method} is not served: this server is read-only"),
            );
        }
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        match segments.as_slice() {
            [""] => self.index(query),
            ["health"] => self.health(),
            ["metrics"] => self.metrics(),
            ["v1", "assets"] => self.assets(query),
            ["v1", "assets", asset] => self.asset_json(asset, query),
            ["v1", "evidence", hash] => self.evidence(hash),
            ["assets", asset] => self.asset_page(asset, query),
            _ => Reply::problem(
                404,
                format!("no route {path}: see /v1/assets, /v1/assets/{{asset}}, /v1/evidence/{{hash}}, /assets/{{asset}}, /health, /metrics"),
            ),
        }
    }

    fn open(&self) -> Result<History, Reply> {
        match History::connect_existing(&self.store) {
            Ok(Some(history)) => Ok(history),
            Ok(None) => Err(Reply::problem(
                503,
                format!(
                    "no history at {} yet: `assay watch` (with `history`) or `assay scan` creates it",
                    self.store
                ),
            )),
            Err(err) => Err(Reply::problem(503, err.to_string())),
        }
    }

    /// Assets by the severity of their latest report, from the per-asset index (no report is read).
    fn counts(&self) -> Result<Vec<(String, bool, i64)>, Reply> {
        self.open()?
            .severity_counts()
            .map_err(|e| Reply::problem(503, e.to_string()))
    }

    /// One page of the per-asset index, each row's latest report read.
    fn latest(&self, page: &Page) -> Result<Latest, Reply> {
        let (rows, corrupt) = self
            .open()?
            .latest_page(page.severity, page.after.as_deref(), page.per_page + 1)
            .map_err(|e| Reply::problem(503, e.to_string()))?;
        let more = rows.len() > page.per_page;
        let mut reports = Vec::with_capacity(rows.len());
        let mut corrupt: Vec<i64> = corrupt.iter().map(|c| c.id).collect();
        for row in rows.into_iter().take(page.per_page) {
            match Report::from_json(&row.observation.report_json) {
                Ok(report) => reports.push((row, report)),
                Err(_) => corrupt.push(row.observation.id),
            }
        }
        Ok(Latest {
            reports,
            corrupt,
            more,
        })
    }

    fn health(&self) -> Reply {
        match self.counts() {
            Ok(counts) => Reply::json(
                200,
                &json!({
                    "status": "ok",
                    "assets": counts.iter().map(|(_, _, n)| n).sum::<i64>(),
                }),
            ),
            Err(reply) => reply,
        }
    }

    /// The `watch` workers' queue and leaders, when they share this database.
    fn queue_metrics(&self, out: &mut String) {
        let read =
            History::connect(&self.store).and_then(|h| Ok((h.queue_stats(None)?, h.leaders()?)));
        let Ok((stats, leaders)) = read else {
            out.push_str("# HELP assay_queue_up 1 when the watch work queue could be read.\n# TYPE assay_queue_up gauge\nassay_queue_up 0\n");
            return;
        };
        out.push_str("# HELP assay_queue_up 1 when the watch work queue could be read.\n# TYPE assay_queue_up gauge\nassay_queue_up 1\n");
        out.push_str(
            "# HELP assay_queue_assets Assets in the watch work queue: due (waiting for a worker), leased (being \
             checked), failing (last check failed), total.\n# TYPE assay_queue_assets gauge\n",
        );
        for (state, n) in [
            ("due", stats.due),
            ("leased", stats.leased),
            ("failing", stats.failing),
            ("total", stats.total),
        ] {
            out.push_str(&format!("assay_queue_assets{{state=\"{state}\"}} {n}\n"));
        }
        out.push_str(&format!(
            "# HELP assay_queue_workers Watch workers seen in the last 30 s.\n# TYPE assay_queue_workers gauge\n\
             assay_queue_workers {}\n",
            stats.workers
        ));
        out.push_str(
            "# HELP assay_queue_leader_heartbeat_age_seconds Seconds since each queue's leader (the worker that \
             follows the ledger) last said it leads.\n# TYPE assay_queue_leader_heartbeat_age_seconds gauge\n",
        );
        let label = |v: &str| {
            v.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n")
        };
        for (scope, worker, age) in leaders {
            out.push_str(&format!(
                "assay_queue_leader_heartbeat_age_seconds{{scope=\"{}\",worker=\"{}\"}} {age:.3}\n",
                label(&scope),
                label(&worker)
            ));
        }
    }

    fn metrics(&self) -> Reply {
        let mut out = String::from(
            "# HELP assay_serve_requests_total Requests answered since start.\n\
             # TYPE assay_serve_requests_total counter\n",
        );
        out.push_str(&format!(
            "assay_serve_requests_total {}\n",
            self.requests.load(Ordering::Relaxed)
        ));
        out.push_str("# HELP assay_serve_store_up 1 when the history store could be read.\n# TYPE assay_serve_store_up gauge\n");
        match self.counts() {
            Ok(counts) => {
                out.push_str("assay_serve_store_up 1\n");
                // A floor from an undetermined report is never counted as the same answer as a verdict.
                out.push_str("# HELP assay_serve_assets Assets by the severity of their latest report; undetermined=\"true\" marks a floor, not a verdict.\n# TYPE assay_serve_assets gauge\n");
                let count = |name: &str, undetermined: bool| {
                    counts
                        .iter()
                        .filter(|(s, u, _)| s == name && *u == undetermined)
                        .map(|(_, _, n)| n)
                        .sum::<i64>()
                };
                for name in SEVERITY_NAMES {
                    for undetermined in [false, true] {
                        out.push_str(&format!(
                            "assay_serve_assets{{severity=\"{name}\",undetermined=\"{undetermined}\"}} {}\n",
                            count(name, undetermined)
                        ));
                    }
                }
                let undetermined: i64 = counts
                    .iter()
                    .filter(|(_, u, _)| *u)
                    .map(|(_, _, n)| n)
                    .sum();
                out.push_str(&format!(
                    "# HELP assay_serve_assets_undetermined Assets whose latest report is undetermined.\n\
                     # TYPE assay_serve_assets_undetermined gauge\nassay_serve_assets_undetermined {undetermined}\n"
                ));
            }
            Err(_) => out.push_str("assay_serve_store_up 0\n"),
        }
        if matches!(self.store, Database::Postgres(_)) {
            self.queue_metrics(&mut out);
        }
        Reply {
            status: 200,
            content_type: "text/plain; version=0.0.4",
            headers: Vec::new(),
            body: out,
        }
    }

    fn assets(&self, query: &str) -> Reply {
        let params = match Page::parse(query, Route::Assets) {
            Ok(p) => p,
            Err(detail) => return Reply::problem(400, detail.to_string()),
        };
        let latest = match self.latest(&params) {
            Ok(latest) => latest,
            Err(reply) => return reply,
        };
        let page: Vec<Value> = latest
            .reports
            .iter()
            .map(|(row, r)| summary(&row.asset, &row.checked_at, r))
            .collect();
        let next = latest
            .more
            .then(|| latest.reports.last())
            .flatten()
            .map(|(row, _)| params.assets_link(&row.asset));
        Reply::json(
            200,
            &json!({
                "assets": page,
                "per_page": params.per_page,
                "next": next,
                "corrupt_observations": latest.corrupt,
            }),
        )
    }

    /// `GET /v1/evidence/{hash}`: the bundle JSON as recorded.
    fn evidence(&self, segment: &str) -> Reply {
        let hash = match super::evidence::evidence_hash(&percent_decode(segment)) {
            Ok(hash) => hash,
            Err(e) => return Reply::problem(400, e.to_string()),
        };
        match self.open().and_then(|h| {
            h.bundle(&hash)
                .map_err(|e| Reply::problem(503, e.to_string()))
        }) {
            Ok(Some((_, _, bundle))) => match serde_json::from_str::<Value>(&bundle) {
                Ok(value) => Reply::json(200, &value),
                Err(e) => Reply::problem(500, format!("the bundle of {hash} is not JSON: {e}")),
            },
            Ok(None) => Reply::problem(
                404,
                format!("no evidence bundle of {hash} is recorded here"),
            ),
            Err(reply) => reply,
        }
    }

    /// One page of the asset's observations (oldest first, as listings are), the latest report and the
    /// link to the older page; or the reply that says why there are none.
    fn observations(&self, segment: &str, query: &str) -> Result<AssetView, Reply> {
        let key = store_key(segment).map_err(|detail| Reply::problem(400, detail.to_string()))?;
        let params = Page::parse(query, Route::Asset)
            .map_err(|detail| Reply::problem(400, detail.to_string()))?;
        let history = self.open()?;
        let page = history
            .page(&key, params.before, params.per_page)
            .map_err(|e| Reply::problem(503, e.to_string()))?;
        let newest = match params.before {
            None => None,
            Some(_) => history
                .page(&key, None, 1)
                .map_err(|e| Reply::problem(503, e.to_string()))?
                .rows
                .into_iter()
                .next()
                .and_then(|(row, _)| Report::from_json(&row.report_json).ok()),
        };
        let mut corrupt: Vec<i64> = page.corrupt.iter().map(|c| c.id).collect();
        let mut reports = Vec::with_capacity(page.rows.len());
        for (row, recheck) in page.rows.into_iter().rev() {
            match Report::from_json(&row.report_json) {
                Ok(report) => reports.push((report, recheck)),
                Err(_) => corrupt.push(row.id),
            }
        }
        let older = page
            .older
            .and_then(|row| Report::from_json(&row.report_json).ok());
        let Some(latest) = newest.or_else(|| reports.last().map(|(r, _)| r.clone())) else {
            return Err(Reply::problem(
                404,
                format!("no readable observation of {key} is recorded"),
            ));
        };
        let next = page
            .next_before
            .map(|id| format!("?before={id}&per_page={}", params.per_page));
        Ok(AssetView {
            listing: listing(&key, older, &reports),
            key,
            latest,
            corrupt,
            next,
        })
    }

    /// The registry's entry for `key` as `watch` last read, wrote or revoked it (`read_at` added), or null
    /// when `watch` has recorded none (it records an entry it left unchanged, wrote or revoked).
    fn on_chain(&self, key: &str) -> Result<Value, Reply> {
        let reading = self
            .open()?
            .latest_chain_reading(key)
            .map_err(|e| Reply::problem(503, e.to_string()))?;
        Ok(match reading {
            Some((read_at, entry)) => match serde_json::from_str::<Value>(&entry) {
                Ok(Value::Object(mut fields)) => {
                    fields.insert("read_at".into(), Value::String(read_at));
                    Value::Object(fields)
                }
                _ => json!({"state": "unreadable", "read_at": read_at}),
            },
            None => Value::Null,
        })
    }

    fn asset_json(&self, segment: &str, query: &str) -> Reply {
        let view = match self.observations(segment, query) {
            Ok(view) => view,
            Err(reply) => return reply,
        };
        let on_chain = match self.on_chain(&view.key) {
            Ok(on_chain) => on_chain,
            Err(reply) => return reply,
        };
        let latest = &view.latest;
        Reply::json(
            200,
            &json!({
                "asset": view.key,
                "undetermined": latest.undetermined,
                "undetermined_checks": latest.undetermined_checks,
                "report": latest,
                "on_chain": on_chain,
                "observations": view.listing.observations,
                "transitions": view.listing.transitions,
                "next": view.next.as_ref().map(|q| format!("/v1/assets/{}{q}", view.key)),
                "corrupt_observations": view.corrupt,
            }),
        )
        .undetermined(latest.undetermined)
    }

    /// When the history first recorded each of `latest`'s powers (rows of [`serve_page::power_keys`]):
    /// the report records what discovery saw, not since when a power is held. Read only for a report with
    /// powers; rows that are not readable reports are passed over (the page counts its own).
    fn powers_first_seen(
        &self,
        key: &str,
        latest: &Report,
    ) -> Result<Vec<Option<Timestamp>>, Reply> {
        let Some(survey) = &latest.powers else {
            return Ok(Vec::new());
        };
        let rows = self
            .open()?
            .list(key)
            .map_err(|e| Reply::problem(503, e.to_string()))?
            .rows;
        Ok(first_seen(
            &serve_page::power_keys(survey),
            rows.iter()
                .filter_map(|row| Report::from_json(&row.report_json).ok()),
        ))
    }

    fn asset_page(&self, segment: &str, query: &str) -> Reply {
        match self.observations(segment, query).and_then(|view| {
            let first_seen = self.powers_first_seen(&view.key, &view.latest)?;
            Ok((view, first_seen))
        }) {
            Ok((view, first_seen)) => {
                let older = view
                    .next
                    .as_ref()
                    .map(|q| format!("/assets/{}{q}", view.key));
                Reply::html(
                    200,
                    serve_page::asset(
                        &view.latest,
                        &view.listing,
                        &view.corrupt,
                        older.as_deref(),
                        &first_seen,
                    ),
                )
                .undetermined(view.latest.undetermined)
            }
            Err(reply) => Reply::html(
                reply.status,
                serve_page::problem(
                    reply.status,
                    &serde_json::from_str::<Value>(&reply.body)
                        .ok()
                        .and_then(|v| v["detail"].as_str().map(String::from))
                        .unwrap_or_default(),
                ),
            ),
        }
    }

    fn index(&self, query: &str) -> Reply {
        let params = match Page::parse(query, Route::Assets) {
            Ok(p) => p,
            Err(detail) => return Reply::html(400, serve_page::problem(400, &detail.to_string())),
        };
        match self.latest(&params) {
            Ok(latest) => Reply::html(
                200,
                serve_page::index(
                    &latest
                        .reports
                        .iter()
                        .map(|(row, r)| (row.asset.as_str(), r))
                        .collect::<Vec<_>>(),
                    latest
                        .more
                        .then(|| latest.reports.last())
                        .flatten()
                        .map(|(row, _)| {
                            params
                                .assets_link(&row.asset)
                                .replacen("/v1/assets", "/", 1)
                        })
                        .as_deref(),
                ),
            ),
            Err(reply) => reply,
        }
    }
}

/// Per power of `keys`, the earliest `scanned_at` among `reports` whose survey shows it (the same
/// function, effect and parties); `None` when none does.
fn first_seen(
    keys: &[serve_page::PowerKey],
    reports: impl Iterator<Item = Report>,
) -> Vec<Option<Timestamp>> {
    let mut seen: Vec<Option<Timestamp>> = vec![None; keys.len()];
    for report in reports {
        let Some(survey) = &report.powers else {
            continue;
        };
        let shown = serve_page::power_keys(survey);
        for (key, first) in keys.iter().zip(seen.iter_mut()) {
            if shown.contains(key) && first.is_none_or(|t| report.scanned_at < t) {
                *first = Some(report.scanned_at);
            }
        }
    }
    seen
}

/// The listing of a page's observations (oldest first), with the transition from the observation just
/// older than the page into its first, and each observation's re-checks.
fn listing(key: &str, older: Option<Report>, page: &[(Report, Option<Recheck>)]) -> Listing {
    let mut reports: Vec<Report> = older.iter().cloned().collect();
    reports.extend(page.iter().map(|(r, _)| r.clone()));
    let mut listing = Listing::of(key.to_string(), &reports);
    if older.is_some() {
        listing.observations.remove(0);
    }
    for (entry, (_, recheck)) in listing.observations.iter_mut().zip(page) {
        entry.rechecks = recheck.clone();
    }
    listing
}

struct AssetView {
    key: String,
    latest: Report,
    listing: Listing,
    corrupt: Vec<i64>,
    /// The query of the next (older) page.
    next: Option<String>,
}

/// One asset in a listing: what a dashboard needs to sort and link, nothing it would have to re-derive.
fn summary(asset: &str, checked_at: &str, r: &Report) -> Value {
    json!({
        "asset": asset,
        "checked_at": checked_at,
        "severity": r.severity,
        "base_severity": r.base_severity,
        "accountability": r.accountability,
        "state": r.state,
        "undetermined": r.undetermined,
        "undetermined_checks": r.undetermined_checks,
        "mechanics": r.mechanics.names(),
        "scanned_at": r.scanned_at,
        "href": format!("/v1/assets/{asset}"),
        "page": format!("/assets/{asset}"),
    })
}

/// A request answered with 400: the message says what to ask for instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadRequest(String);

impl From<String> for BadRequest {
    fn from(detail: String) -> Self {
        BadRequest(detail)
    }
}

/// The history key of a path segment: an asset as `assay scan` records it (CODE-ISSUER), or a
/// contract id as recorded for a contract token.
fn store_key(segment: &str) -> Result<String, BadRequest> {
    let decoded = percent_decode(segment);
    if decoded.starts_with('C') && assay_attest::sac::parse_contract(&decoded).is_some() {
        return Ok(decoded);
    }
    assay_core::Token::parse_classic(&decoded)
        .map(|asset| asset.to_string())
        .map_err(|e| {
            BadRequest(format!(
                "{e}: ask for CODE-ISSUER (or CODE:ISSUER, or a contract id C…)"
            ))
        })
}

/// Which listing a query belongs to: the parameters each takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// `/v1/assets` and `/`: `after`, `per_page`, `severity`.
    Assets,
    /// `/v1/assets/{asset}` and `/assets/{asset}`: `before`, `per_page`.
    Asset,
}

/// A listing's page: keyset cursors (`after` an asset, `before` an observation id), so a page costs
/// the same wherever it is.
struct Page {
    after: Option<String>,
    before: Option<i64>,
    per_page: usize,
    severity: Option<&'static str>,
}

impl Page {
    fn parse(query: &str, route: Route) -> Result<Page, BadRequest> {
        let mut page = Page {
            after: None,
            before: None,
            per_page: DEFAULT_PER_PAGE,
            severity: None,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode(value);
            match (key, route) {
                ("after", Route::Assets) => page.after = Some(value),
                ("before", Route::Asset) => {
                    page.before = Some(value.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                        format!("before={value:?} is not an observation id: use the `next` link")
                    })?)
                }
                ("per_page", _) => {
                    page.per_page = value
                        .parse()
                        .ok()
                        .filter(|n| (1..=MAX_PER_PAGE).contains(n))
                        .ok_or_else(|| {
                            format!("per_page={value:?} is out of range: use 1 to {MAX_PER_PAGE}")
                        })?
                }
                ("severity", Route::Assets) => {
                    page.severity =
                        Some(SEVERITY_NAMES.into_iter().find(|n| *n == value).ok_or_else(
                            || {
                                format!(
                                    "severity={value:?} is not a severity: use one of {}",
                                    SEVERITY_NAMES.join(", ")
                                )
                            },
                        )?)
                }
                (other, Route::Assets) => {
                    return Err(BadRequest(format!(
                        "unknown query parameter {other:?}: /v1/assets takes after, per_page and severity"
                    )))
                }
                (other, Route::Asset) => {
                    return Err(BadRequest(format!(
                        "unknown query parameter {other:?}: an asset's listing takes before and per_page"
                    )))
                }
            }
        }
        Ok(page)
    }

    /// The `/v1/assets` link to the page after `asset`.
    fn assets_link(&self, asset: &str) -> String {
        let mut link = format!("/v1/assets?after={asset}&per_page={}", self.per_page);
        if let Some(s) = self.severity {
            link.push_str(&format!("&severity={s}"));
        }
        link
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `assay serve` until SIGINT or SIGTERM.
pub fn run(args: ServeArgs) -> CommandResult {
    if let Err(refused) = crate::server::check_listen(
        "--listen",
        args.listen,
        (!args.allow_remote).then_some("--allow-remote"),
    ) {
        return usage(refused);
    }
    let store = super::shared::history_database(args.database.as_deref(), args.history.as_deref())?;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => return failed(format!("cannot start the server runtime: {err}")),
    };
    let server = Arc::new(Server {
        store,
        requests: AtomicU64::new(0),
    });
    runtime.block_on(serve(args.listen, args.max_connections, server))
}

async fn serve(listen: SocketAddr, max_connections: usize, server: Arc<Server>) -> CommandResult {
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(err) => return failed(format!("cannot listen on {listen}: {err}")),
    };
    let addr = listener.local_addr().unwrap_or(listen);
    eprintln!(
        "assay serve: listening on http://{addr} (history {})",
        server.store
    );
    let stop = crate::signals::install(|_| {})?;
    let handler: crate::server::Handler =
        Arc::new(move |method, path, query| server.respond(method, path, query).into());
    crate::server::run(
        "assay serve",
        listener,
        max_connections,
        handler,
        stop.stopped(),
    )
    .await;
    eprintln!("assay serve: stopped");
    Ok(assay_core::exit::OK)
}

impl From<Reply> for crate::server::Answer {
    fn from(reply: Reply) -> Self {
        let mut response = hyper::Response::builder()
            .status(reply.status)
            .header("Content-Type", reply.content_type);
        for (name, value) in reply.headers {
            response = response.header(name, value);
        }
        response
            .body(reply.body)
            .unwrap_or_else(|_| hyper::Response::new(String::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_parsed_and_bad_values_named() {
        let p = Page::parse("after=A-G&per_page=10&severity=high", Route::Assets).unwrap();
        assert_eq!(
            (p.after.as_deref(), p.per_page, p.severity),
            (Some("A-G"), 10, Some("high"))
        );
        assert_eq!(
            p.assets_link("B-G"),
            "/v1/assets?after=B-G&per_page=10&severity=high"
        );
        assert_eq!(
            Page::parse("before=7", Route::Asset).unwrap().before,
            Some(7)
        );
        for (query, route, named) in [
            ("before=0", Route::Asset, "before=\"0\""),
            ("per_page=501", Route::Assets, "per_page=\"501\""),
            ("severity=bad", Route::Assets, "severity=\"bad\""),
            ("sort=x", Route::Assets, "\"sort\""),
            ("severity=high", Route::Asset, "\"severity\""),
        ] {
            let err = Page::parse(query, route).err().unwrap().to_string();
            assert!(err.contains(named), "{query}: {err}");
        }
    }

    #[test]
    fn path_segments_are_decoded_and_keyed_as_the_store_records_them() {
        let issuer = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
        assert_eq!(
            store_key(&format!("AQUA%3A{issuer}")).unwrap(),
            format!("AQUA-{issuer}")
        );
        assert!(store_key("nonsense")
            .unwrap_err()
            .to_string()
            .contains("CODE-ISSUER"));
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%41%zz"), "A%zz");
    }

    #[test]
    fn a_power_is_first_seen_where_the_history_first_shows_it_with_the_same_holder() {
        use assay_core::powers::{Authority, ObservedPower, PowerEffect, PowerSurvey};
        let report: Report = serde_json::from_str(include_str!(
            "../../../../testdata/reports/hand-written-usdz.json"
        ))
        .unwrap();
        let power = |function: &str, holder: &str| ObservedPower {
            function: function.into(),
            authorized_by: vec![Authority {
                address: holder.into(),
                control: "1 key".into(),
                locked: false,
            }],
            effect: PowerEffect::CreatesSupply {
                credited: "GB".into(),
                amount: "1".into(),
            },
            label: None,
            events: vec![],
            steps: vec![],
            usable_from: None,
        };
        let at = |when: &str, powers: Vec<ObservedPower>| Report {
            scanned_at: when.parse().unwrap(),
            powers: Some(PowerSurvey {
                wasm_hash: "00".into(),
                ledger: 1,
                probed: vec![],
                invocations: 0,
                holders: vec![],
                powers,
                unclassified: vec![],
                cut: vec![],
                unobservable: None,
                reach: None,
            }),
            ..report.clone()
        };
        let latest = at(
            "2026-03-01T00:00:00Z",
            vec![power("mint", "GNEW"), power("reward", "GA")],
        );
        let history = vec![
            at("2026-01-01T00:00:00Z", vec![power("mint", "GOLD")]),
            report.clone(),
            at("2026-02-01T00:00:00Z", vec![power("mint", "GNEW")]),
            latest.clone(),
        ];
        let keys = serve_page::power_keys(latest.powers.as_ref().unwrap());
        assert_eq!(
            first_seen(&keys, history.into_iter()),
            [
                // The same function under another holder is another power: seen since February.
                Some("2026-02-01T00:00:00Z".parse().unwrap()),
                Some("2026-03-01T00:00:00Z".parse().unwrap()),
            ]
        );
        assert_eq!(first_seen(&keys, std::iter::empty()), [None, None]);
    }

    #[test]
    fn writes_and_unknown_routes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let server = Server {
            store: Database::Sqlite(dir.path().join("none.sqlite3")),
            requests: AtomicU64::new(0),
        };
        assert_eq!(server.respond("POST", "/v1/assets", "").status, 405);
        assert_eq!(server.respond("GET", "/v2", "").status, 404);
        // No store yet: unhealthy, and the message says what creates it.
        let health = server.respond("GET", "/health", "");
        assert_eq!(health.status, 503);
        assert!(health.body.contains("assay watch"), "{}", health.body);
        assert!(server
            .respond("GET", "/metrics", "")
            .body
            .contains("assay_serve_store_up 0"));
        assert_eq!(server.requests.load(Ordering::Relaxed), 4);
    }
}
