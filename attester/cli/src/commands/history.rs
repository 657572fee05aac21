//! `assay history ASSET`: the recorded observations of an asset and the transitions between
//! consecutive ones (computed by the core, never stored).
use std::path::PathBuf;

use assay_core::report::Report;
use assay_core::transitions::{transition, Observation, Transition};
use assay_scan::history::{CorruptRow, Database, History, Listed};
use clap::Args;
use serde::Serialize;

use super::shared::OutputFormat;
use super::{failed, usage, CommandResult};
use assay_core::exit;

const EXIT_CODES: &str = "\
Exit codes:
  0   at least one observation is listed
  1   the history could not be read, or a stored row is corrupt (not a valid schema_version 1 report):
      each corrupt row is named on stderr and in `corrupt`, skipped, and the rest is still listed
  4   absent: no observation of this asset is recorded (and none is corrupt)
  64  usage error: a malformed asset or option

`assay history prune --keep-days N` drops what is older than N days and that nothing needs: each asset's
latest observation, and every evidence bundle an attestation on chain holds (the latest registry entry
`watch` recorded for the asset), are kept whatever their age. One transaction: all or nothing. It exits 0
and prints what it removed (--output json: {observations, rechecks, bundles, chain_readings,
kept_on_chain}); 1 when the store cannot be written.";

/// Arguments of `assay history`.
#[derive(Args, Debug)]
#[command(
    about = "List an asset's recorded observations and the transitions between them",
    long_about = "Lists every observation `assay scan` appended for ASSET (oldest first) and, between each \
consecutive pair, the capability transition: bits added or removed and whether capability, reputation or \
both moved severity. A pair with an undetermined observation has an unknown transition, never an unchanged one.",
    after_help = EXIT_CODES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct HistoryArgs {
    /// The asset, as CODE-ISSUER or CODE:ISSUER.
    #[arg(value_name = "ASSET", required = true)]
    pub asset: Option<String>,

    #[command(subcommand)]
    pub action: Option<HistoryAction>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// History database (default: the user's data directory).
    #[arg(long, value_name = "PATH", env = "ASSAY_HISTORY")]
    pub history: Option<PathBuf>,

    /// A PostgreSQL database (postgres://USER@HOST:PORT/DB) instead of a file; no password here (give
    /// the URL in ASSAY_DATABASE_URL, or PGPASSWORD).
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
}

/// What `assay history` does besides listing.
#[derive(clap::Subcommand, Debug)]
pub enum HistoryAction {
    /// Drop what is older than --keep-days and that no attestation's bundle needs.
    Prune(PruneArgs),
    /// Copy a SQLite history, whole, into an empty PostgreSQL database (one transaction: all or nothing).
    Copy(CopyArgs),
}

/// Arguments of `assay history copy`.
#[derive(Args, Debug)]
pub struct CopyArgs {
    /// The SQLite history to copy (default: the user's data directory).
    #[arg(long, value_name = "PATH", env = "ASSAY_HISTORY")]
    pub history: Option<PathBuf>,

    /// The PostgreSQL database to copy into (postgres://USER@HOST:PORT/DB), else ASSAY_DATABASE_URL. No
    /// password here: give the URL in ASSAY_DATABASE_URL, or the password in PGPASSWORD.
    #[arg(long, value_name = "URL")]
    pub to: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// Arguments of `assay history prune`.
#[derive(Args, Debug)]
pub struct PruneArgs {
    /// Keep everything checked within this many days (each asset's latest observation and every bundle
    /// an on-chain attestation holds are kept whatever their age).
    #[arg(long, value_name = "N")]
    pub keep_days: u32,

    /// History database (default: the user's data directory).
    #[arg(long, value_name = "PATH", env = "ASSAY_HISTORY")]
    pub history: Option<PathBuf>,

    /// A PostgreSQL database instead of a file (as `assay history --database`).
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// The time `keep_days` days before now, as the store writes times.
pub fn cutoff(keep_days: u32) -> String {
    let now = std::time::SystemTime::now();
    let age = std::time::Duration::from_secs(u64::from(keep_days) * 86_400);
    assay_core::Timestamp::from_system_time(now.checked_sub(age).unwrap_or(std::time::UNIX_EPOCH))
        .to_string()
}

fn copy(args: CopyArgs) -> CommandResult {
    let Some(source) = args.history.clone().or_else(History::default_path) else {
        return usage("no data directory for the history: pass --history PATH");
    };
    if !source.exists() {
        return usage(format!(
            "no history at {}: nothing to copy",
            source.display()
        ));
    }
    let target = match Database::resolve(args.to.as_deref(), None, None) {
        Ok(Some(target @ Database::Postgres(_))) => target,
        Ok(_) => {
            return usage(format!(
            "name the PostgreSQL database to copy into: --to postgres://USER@HOST:PORT/DB, or {}",
            assay_scan::history::DATABASE_URL_ENV
        ))
        }
        Err(refused) => return usage(refused.replace("--database", "--to")),
    };
    let from = match History::open(&source) {
        Ok(h) => h,
        Err(err) => return failed(err),
    };
    let into = match History::connect(&target) {
        Ok(h) => h,
        Err(err) => return failed(err),
    };
    let copied = from.copy_to(&into, |table, done, total| {
        eprintln!("copy: {table} {done}/{total}");
    });
    let copied = match copied {
        Ok(copied) => copied,
        Err(err) => return failed(err),
    };
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            serde_json::json!({"from": source.display().to_string(), "to": target.to_string(), "copied": copied})
        ),
        OutputFormat::Text => {
            let tables: Vec<String> = copied.iter().map(|(t, n)| format!("{n} {t}")).collect();
            println!(
                "copied {} into {target}: {}",
                source.display(),
                tables.join(", ")
            );
        }
    }
    Ok(exit::OK)
}

fn prune(args: PruneArgs) -> CommandResult {
    let database =
        super::shared::history_database(args.database.as_deref(), args.history.as_deref())?;
    if let Database::Sqlite(path) = &database {
        if !path.exists() {
            return usage(format!(
                "no history at {}: nothing to prune",
                path.display()
            ));
        }
    }
    let cutoff = cutoff(args.keep_days);
    let pruned = match History::connect(&database).and_then(|mut h| h.prune(&cutoff)) {
        Ok(pruned) => pruned,
        Err(err) => return failed(err),
    };
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            serde_json::json!({"cutoff": cutoff, "removed": pruned})
        ),
        OutputFormat::Text => println!(
            "pruned {} before {cutoff}: {} observations, {} re-check records, {} bundles, {} registry readings \
             removed; {} bundles kept because an attestation on chain holds them",
            database,
            pruned.observations,
            pruned.rechecks,
            pruned.bundles,
            pruned.chain_readings,
            pruned.kept_on_chain
        ),
    }
    Ok(exit::OK)
}

#[derive(Serialize)]
pub(crate) struct Entry {
    #[serde(flatten)]
    pub(crate) observation: Observation,
    pub(crate) accountability: String,
    pub(crate) state: String,
    /// How often this report was found unchanged after it was recorded, and when last (`watch`, `attest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rechecks: Option<assay_scan::history::Recheck>,
}

#[derive(Serialize)]
pub(crate) struct Step {
    pub(crate) from: String,
    pub(crate) to: String,
    #[serde(flatten)]
    pub(crate) transition: Transition,
}

/// A stored row that is not a readable report.
#[derive(Serialize)]
pub(crate) struct Skipped {
    pub(crate) id: i64,
    pub(crate) reason: String,
}

/// An asset's observations, oldest first, and the transition between each consecutive pair.
#[derive(Serialize)]
pub(crate) struct Listing {
    pub(crate) asset: String,
    pub(crate) observations: Vec<Entry>,
    pub(crate) transitions: Vec<Step>,
    /// Rows that could not be read as reports (`assay history`): skipped, but counted here.
    pub(crate) corrupt: Vec<Skipped>,
}

impl Listing {
    /// The listing of `reports` (oldest first), as `assay history` prints it and `assay serve` serves it.
    pub(crate) fn of(asset: String, reports: &[Report]) -> Listing {
        let observations: Vec<Observation> = reports.iter().map(Observation::of).collect();
        let transitions: Vec<Step> = observations
            .windows(2)
            .map(|pair| Step {
                from: pair[0].at.to_string(),
                to: pair[1].at.to_string(),
                transition: transition(pair),
            })
            .collect();
        Listing {
            asset,
            observations: reports
                .iter()
                .zip(observations)
                .map(|(r, observation)| Entry {
                    observation,
                    accountability: r.accountability.name().to_string(),
                    state: if r.undetermined {
                        "unknown".into()
                    } else {
                        "complete".into()
                    },
                    rechecks: None,
                })
                .collect(),
            transitions,
            corrupt: Vec::new(),
        }
    }
}

/// Runs `assay history`.
pub fn run(args: HistoryArgs) -> CommandResult {
    match args.action {
        Some(HistoryAction::Prune(prune_args)) => return prune(prune_args),
        Some(HistoryAction::Copy(copy_args)) => return copy(copy_args),
        None => {}
    }
    let asset = match assay_core::Token::parse_classic(args.asset.as_deref().unwrap_or_default()) {
        Ok(asset) => asset,
        Err(err) => return usage(err),
    };
    let database =
        super::shared::history_database(args.database.as_deref(), args.history.as_deref())?;
    let Listed { rows, mut corrupt } = match History::connect_existing(&database) {
        Ok(Some(history)) => match history.list(&asset.to_string()) {
            Ok(listed) => listed,
            Err(err) => return failed(err),
        },
        Ok(None) => Listed::default(),
        Err(err) => return failed(err),
    };
    let mut reports = Vec::with_capacity(rows.len());
    for row in &rows {
        match Report::from_json(&row.report_json) {
            Ok(report) => reports.push(report),
            Err(err) => corrupt.push(CorruptRow {
                id: row.id,
                reason: err.to_string(),
            }),
        }
    }
    corrupt.sort_by_key(|c| c.id);
    for c in &corrupt {
        eprintln!(
            "assay: history {}: observation {} of {asset} is corrupt and was skipped: {}",
            database, c.id, c.reason
        );
    }
    let mut listing = Listing::of(asset.to_string(), &reports);
    listing.corrupt = corrupt
        .into_iter()
        .map(|c| Skipped {
            id: c.id,
            reason: c.reason,
        })
        .collect();
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string(&listing).expect("listing serialises")
        ),
        OutputFormat::Text => print!("{}", render(&listing)),
    }
    if !listing.corrupt.is_empty() {
        return Ok(exit::ERROR);
    }
    if listing.observations.is_empty() {
        eprintln!(
            "assay: no observations of {} in {}",
            listing.asset, database
        );
        return Ok(exit::ABSENT);
    }
    Ok(exit::OK)
}

fn render(listing: &Listing) -> String {
    let mut out = format!("{}\n", listing.asset);
    if !listing.corrupt.is_empty() {
        let ids: Vec<String> = listing.corrupt.iter().map(|c| c.id.to_string()).collect();
        out.push_str(&format!(
            "  {} corrupt observation(s) skipped: id {}\n",
            ids.len(),
            ids.join(", ")
        ));
    }
    for (i, entry) in listing.observations.iter().enumerate() {
        let o = &entry.observation;
        let mechanics = o.mechanics.names().join(", ");
        out.push_str(&format!(
            "  {}  severity {} (base {})  accountability {}  {}{}\n",
            o.at,
            o.severity.name(),
            o.base_severity.name(),
            entry.accountability,
            if o.undetermined {
                format!("undetermined: {}", o.undetermined_checks.join(", "))
            } else {
                "complete".to_string()
            },
            if mechanics.is_empty() {
                String::new()
            } else {
                format!("  [{mechanics}]")
            },
        ));
        if let Some(step) = listing.transitions.get(i) {
            let what = describe(&step.transition);
            out.push_str(&format!("    -> {what}\n"));
        }
    }
    out
}

/// One transition in words: the bits added and removed and which axis moved severity, or why it is unknown.
pub(crate) fn describe(t: &Transition) -> String {
    match t.state {
        assay_core::transitions::TransitionState::Valid => {
            let mut parts = Vec::new();
            if !t.added.names().is_empty() {
                parts.push(format!("added {}", t.added.names().join(", ")));
            }
            if !t.removed.names().is_empty() {
                parts.push(format!("removed {}", t.removed.names().join(", ")));
            }
            if parts.is_empty() {
                parts.push("no capability change".to_string());
            }
            let attribution = t
                .attribution
                .map(|a| {
                    serde_json::to_value(a)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default()
                })
                .unwrap_or_default();
            format!("{}; severity moved by: {attribution}", parts.join("; "))
        }
        _ => format!("unknown: {}", t.reason.clone().unwrap_or_default()),
    }
}
