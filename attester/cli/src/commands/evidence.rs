//! `assay evidence HASH`: the evidence bundle recorded under an evidence hash; and `assay verify --bundle
//! FILE`'s front end (the offline check of a bundle).
use std::io::Write;
use std::path::{Path, PathBuf};

use assay_attest::evidence::{verify_bundle, BundleVerdict};
use assay_core::bundle::{Bundle, BundleError, MAX_BUNDLE_BYTES};
use assay_core::exit;
use assay_scan::history::History;
use clap::Args;
use serde_json::json;

use super::shared::OutputFormat;
use super::{failed, usage, CommandResult};

const AFTER_HELP: &str = "\
Prints the bundle JSON (docs/report-format.md, \"Evidence bundles\"): the preimage lines, the report and,
for a token judged on a fork, the fork's snapshot. `assay verify --bundle FILE` checks one offline.

Exit codes:
  0   the bundle is printed
  1   the history could not be read, or the stored bundle is not valid JSON
  4   absent: no bundle is recorded under HASH
  64  usage error: HASH is not 64 hex digits";

/// Arguments of `assay evidence`.
#[derive(Args, Debug)]
#[command(
    about = "Print the evidence bundle recorded under an evidence hash (JSON)",
    after_help = AFTER_HELP
)]
pub struct EvidenceArgs {
    /// The evidence hash (64 hex digits), as an attestation holds it.
    #[arg(value_name = "HASH")]
    pub hash: String,
    /// History database (default: the user's data directory; what `watch`'s `history` key names).
    #[arg(long, value_name = "PATH", env = "ASSAY_HISTORY")]
    pub history: Option<PathBuf>,
    /// A PostgreSQL database (postgres://USER@HOST:PORT/DB) instead of a file; no password here (give
    /// the URL in ASSAY_DATABASE_URL, or PGPASSWORD).
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
}

/// A string that is not an evidence hash, as typed.
#[derive(Debug, thiserror::Error)]
#[error("invalid evidence hash {0:?}: expected 64 hex digits (an attestation's evidence_hash)")]
pub(crate) struct NotAnEvidenceHash(String);

/// An evidence hash as typed: 64 hex digits, lowercased.
pub(crate) fn evidence_hash(text: &str) -> Result<String, NotAnEvidenceHash> {
    let hash = text.trim().to_ascii_lowercase();
    if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hash)
    } else {
        Err(NotAnEvidenceHash(text.to_string()))
    }
}

/// Runs `assay evidence`.
pub fn run(args: EvidenceArgs) -> CommandResult {
    let hash = match evidence_hash(&args.hash) {
        Ok(hash) => hash,
        Err(e) => return usage(e),
    };
    let path = super::shared::history_database(args.database.as_deref(), args.history.as_deref())?;
    let found = match History::connect_existing(&path) {
        Ok(Some(history)) => history.bundle(&hash),
        Ok(None) => Ok(None),
        Err(err) => return failed(err),
    };
    let (_, _, bundle_json) = match found {
        Ok(Some(found)) => found,
        Ok(None) => {
            eprintln!(
                "assay evidence: no bundle of {hash} in {}: `assay attest` and `assay watch` record one for \
                 every report they judge (pass --history PATH for another store)",
                path
            );
            return Ok(exit::ABSENT);
        }
        Err(err) => return failed(err),
    };
    let value: serde_json::Value = match serde_json::from_str(&bundle_json) {
        Ok(value) => value,
        Err(err) => return failed(format!("the bundle of {hash} is not JSON: {err}")),
    };
    let _ = writeln!(std::io::stdout(), "{value:#}");
    Ok(exit::OK)
}

/// `assay verify --bundle FILE`: the bundle checked offline. Exit 0 when everything agrees (replay
/// included), 3 when the bundle is refused or a replay differs, 2 when a part could not be replayed.
pub fn verify_file(path: &Path, output: OutputFormat) -> CommandResult {
    let text = match assay_chain::files::read_capped(path, MAX_BUNDLE_BYTES, "evidence bundles") {
        Ok(text) => text,
        Err(err) => return usage(format!("--bundle {err}")),
    };
    let bundle: Bundle = match serde_json::from_str(&text) {
        Ok(bundle) => bundle,
        Err(err) => {
            return usage(format!(
                "--bundle {}: not an evidence bundle ({err}); `assay evidence HASH` prints one",
                path.display()
            ))
        }
    };
    let checked = verify_bundle(&bundle);
    let code = match &checked {
        Err(_) => exit::NEGATIVE,
        Ok(v) if !v.replays_agree() => exit::NEGATIVE,
        Ok(v) if !v.not_replayed.is_empty() => exit::UNDETERMINED,
        Ok(_) => exit::OK,
    };
    let text = match (&checked, output) {
        (Ok(v), OutputFormat::Json) => {
            json!({"verdict": verdict_name(code), "bundle": v}).to_string()
        }
        (Err(e), OutputFormat::Json) => json!({
            "verdict": "refused",
            "evidence_hash": bundle.evidence_hash,
            "error": e.to_string(),
            "line": refused_line(e),
        })
        .to_string(),
        (Ok(v), OutputFormat::Text) => render(v, code),
        (Err(e), OutputFormat::Text) => format!("refused: {e}"),
    };
    let _ = writeln!(std::io::stdout(), "{text}");
    Ok(code)
}

fn verdict_name(code: u8) -> &'static str {
    match code {
        exit::OK => "agreement",
        exit::NEGATIVE => "differs",
        _ => "not_replayed",
    }
}

/// The 1-based line a refusal names, when one does.
fn refused_line(e: &BundleError) -> Option<usize> {
    match e {
        BundleError::LineChanged { line, .. } | BundleError::ReportDisagrees { line, .. } => {
            Some(*line)
        }
        _ => None,
    }
}

fn render(v: &BundleVerdict, code: u8) -> String {
    let d = &v.rederived;
    let mut out = format!(
        "{}  {}: hash {} (v{}) matches its preimage; severity {} (base {}), mechanics {} re-derived from the lines",
        d.asset,
        verdict_name(code),
        v.evidence_hash,
        v.evidence_version,
        d.severity.level(),
        d.base_severity.level(),
        d.mechanics,
    );
    for note in &d.notes {
        out.push_str(&format!("\n  note: {note}"));
    }
    if let Some(replay) = &v.sep41_replay {
        if replay.same() {
            out.push_str(&format!(
                "\n  sep41: replayed offline from the snapshot: the same {} verdicts",
                replay.claims.len()
            ));
        } else {
            for claim in &replay.missing {
                out.push_str(&format!(
                    "\n  sep41: the bundle has `{claim}`; the replay did not give it"
                ));
            }
            for claim in &replay.unexpected {
                out.push_str(&format!(
                    "\n  sep41: the replay gave `{claim}`; the bundle does not have it"
                ));
            }
        }
    }
    if let Some(replay) = &v.powers_replay {
        render_powers(&mut out, replay);
    }
    for why in &v.not_replayed {
        out.push_str(&format!("\n  not replayed: {why}"));
    }
    out
}

/// The powers replay: agreement, or each power the bundle and the replay disagree on, by name.
fn render_powers(out: &mut String, replay: &assay_attest::evidence::PowersReplayed) {
    if replay.same() {
        out.push_str(&format!(
            "\n  powers: discovery replayed offline from the snapshot: the same {} observed power(s), mechanics {}",
            replay.claims.claims.len(),
            replay.replayed_bits
        ));
    }
    for claim in &replay.claims.missing {
        out.push_str(&format!(
            "\n  powers: the bundle has `{claim}`; the replay did not observe it"
        ));
    }
    for claim in &replay.claims.unexpected {
        out.push_str(&format!(
            "\n  powers: the replay observed `{claim}`; the bundle does not have it"
        ));
    }
    if replay.recorded_bits != replay.replayed_bits {
        out.push_str(&format!(
            "\n  powers: mechanics {} recorded, {} replayed",
            replay.recorded_bits, replay.replayed_bits
        ));
    }
    if let Some(why) = &replay.incomplete {
        out.push_str(&format!(
            "\n  powers: the replay did not cover the token: {why}"
        ));
    }
}
