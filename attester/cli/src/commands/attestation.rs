//! `assay attestation`: the on-chain parameters (severity, flags, evidence_hash) for a report, or a refusal.

use std::io::Read;
use std::path::PathBuf;

use super::shared::OutputFormat;
use assay_core::attestation::{attestation_params, Params, Refusal};
use assay_core::hash::EvidenceVersion;
use assay_core::report::{Freshness, Report};
use assay_core::time::{format_duration, Timestamp};
use clap::Args;

use super::{CommandError, CommandResult};
use assay_core::exit;

/// Exit code when the report is well-formed but must not be attested.
pub const EXIT_REFUSED: u8 = assay_core::exit::NEGATIVE;

const AFTER_HELP: &str = "\
Refusal rules, checked in this order (the first that matches is reported):
  1 unevaluated   severity or base_severity is \"unknown\": the flags were never read
  2 stale         the report says stale, or its age at --as-of is strictly past --max-age
  3 undetermined  a check could not complete (a source did not answer, or no home_domain to key the blocklist)
  4 inconsistent  the clawback bit is set below severity high (the registry would reject it)
  5 version       --evidence-version does not fit the subject (8 or 7 either; 1-3 or 6 classic, 4 or 5 token
                  contract), or does not bind a bit the report carries (admin_transfer_fee: v8 only)
  6 holder        the report carries one holder's trustline (scan --holder, assay exposure): off-chain only

Exit codes:
  0   parameters printed on stdout
  3   refused: the report is well-formed but not attestable; stderr names the rule
  64  usage error: bad argument, unreadable file, or a report that is not valid schema_version 1 JSON

Examples:
  assay scan USDC-GA5Z…KZVN --output json > usdc.json && assay attestation --from-report usdc.json
  assay attestation --from-report usdc.json --raw            # SEVERITY<TAB>FLAGS<TAB>HASH
  assay scan … --output json | assay attestation --from-report - --preimage";

#[derive(Args, Debug)]
#[command(
    about = "Print the attestation parameters (severity, flags, evidence_hash) for a scan report",
    long_about = "Derives what an attester writes on chain from a schema_version 1 report produced by \
`assay scan --output json` or written by hand: severity, the mechanics bitset (flags) and the evidence_hash \
(SHA-256 over the evidence preimage, version 8 by default for either subject). Refuses any report that must not go on chain.",
    after_help = AFTER_HELP
)]
pub struct AttestationArgs {
    /// The report JSON file, or `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    from_report: PathBuf,

    /// Evidence preimage version: 8 (the default, either subject: no operator endpoint hashed, bit 14
    /// bound); 7 either subject; 1, 2, 3 or 6 for a classic asset, 4 or 5 for a token contract (to
    /// reproduce an attestation written in one).
    #[arg(long, value_name = "1-8", value_parser = parse_version)]
    evidence_version: Option<EvidenceVersion>,

    /// Print only `SEVERITY<TAB>FLAGS<TAB>HASH`.
    #[arg(long, conflicts_with_all = ["preimage", "output"])]
    raw: bool,

    /// Include the exact preimage bytes that were hashed (text: printed after the parameters; json: a field).
    #[arg(long)]
    preimage: bool,

    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output: OutputFormat,

    /// Freshness window: a report older than this is stale (e.g. 24h, 90m, 3600s, 3600; 0 disables).
    #[arg(long, value_name = "DURATION", default_value = "24h", env = "ASSAY_MAX_AGE", value_parser = parse_age)]
    max_age: i64,

    /// Judge freshness as of this instant instead of now (UTC, e.g. 2026-08-10T12:00:00Z).
    #[arg(long, value_name = "TIMESTAMP", value_parser = parse_timestamp)]
    as_of: Option<Timestamp>,
}

fn parse_version(s: &str) -> Result<EvidenceVersion, assay_core::UnknownEvidenceVersion> {
    s.parse()
}

fn parse_timestamp(s: &str) -> Result<Timestamp, assay_core::time::TimestampError> {
    s.parse()
}

/// A `--max-age` that is not a duration.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {0:?}: expected e.g. 24h, 90m, 3600s, 1h30m or 3600 (0 disables)")]
struct InvalidDuration(String);

/// `24h`, `90m`, `45s`, `1h30m`, or bare seconds.
fn parse_age(s: &str) -> Result<i64, InvalidDuration> {
    let bad = || InvalidDuration(s.to_string());
    if let Ok(n) = s.parse::<i64>() {
        return if n >= 0 { Ok(n) } else { Err(bad()) };
    }
    let (mut total, mut num) = (0i64, String::new());
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        let n: i64 = num.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
        num.clear();
    }
    if !num.is_empty() || s.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

fn read_report(path: &PathBuf) -> Result<Report, CommandError> {
    let (name, text) = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| {
            CommandError::usage(format!("cannot read the report from standard input: {e}"))
        })?;
        ("standard input".to_string(), text)
    } else {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CommandError::usage(format!("cannot read report file {}: {e}; pass a file written by `assay scan --output json`, or - for stdin", path.display()))
        })?;
        (path.display().to_string(), text)
    };
    Report::from_json(&text).map_err(|e| {
        CommandError::usage(format!("{name} is not a valid report: {e}; expected the JSON of `assay scan --output json` (schema_version 1)"))
    })
}

fn rule_hint(refusal: &Refusal) -> &'static str {
    match refusal {
        Refusal::Unevaluated => "rule 1 (unevaluated): re-scan so the issuer flags are read",
        Refusal::Stale { .. } => "rule 2 (stale): re-scan for a fresh report, or widen --max-age if your policy allows",
        Refusal::Undetermined { .. } => {
            "rule 3 (undetermined): re-scan when the sources answer; a partial scan is never attested"
        }
        Refusal::Inconsistent { .. } | Refusal::BelowFloor { .. } => {
            "rule 4 (inconsistent): the report contradicts itself; re-scan rather than editing it"
        }
        Refusal::WrongVersion { .. } => {
            "rule 5 (version): drop --evidence-version, or pick 8 or 7 (either subject; 8 for admin_transfer_fee), 1-3 or 6 for a classic asset, 4 or 5 for a token contract"
        }
        Refusal::HolderSpecific { .. } => {
            "rule 6 (holder): a report made with --holder (or by assay exposure) describes one holder; scan without it"
        }
    }
}

fn text(params: &Params) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: &str| out.push_str(&format!("{k:<16}{v}\n"));
    line("asset", &params.asset);
    line(
        "severity",
        &format!("{} ({})", params.severity, params.severity_name),
    );
    line(
        "flags",
        &format!("{} [{}]", params.flags, params.mechanics.names().join(", ")),
    );
    line("evidence_hash", &params.evidence_hash);
    line("evidence", &format!("v{}", params.evidence_version));
    if !params.checks.is_empty() {
        line("checks", &params.checks.join(","));
    }
    if let Some(network) = &params.network {
        line("network", network);
    }
    line("scanned_at", &params.scanned_at.to_string());
    out
}

/// Runs the subcommand.
pub fn run(args: AttestationArgs) -> CommandResult {
    let report = read_report(&args.from_report)?;
    let as_of = args.as_of.unwrap_or_else(Timestamp::now);
    let freshness = Freshness {
        window_secs: args.max_age,
    };
    match attestation_params(
        &report,
        as_of,
        freshness,
        args.evidence_version
            .unwrap_or_else(|| EvidenceVersion::default_for(&report.asset)),
        args.preimage,
    ) {
        Ok(params) => {
            if args.raw {
                print!("{}", params.raw_line());
            } else if args.output == OutputFormat::Json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&params).expect("params serialise")
                );
            } else {
                print!("{}", text(&params));
                if let Some(p) = &params.preimage {
                    print!("\npreimage ({} bytes):\n{p}", p.len());
                }
            }
            Ok(exit::OK)
        }
        Err(refusal) => {
            eprintln!("assay: {refusal}");
            eprintln!("refused by {}", rule_hint(&refusal));
            if let Refusal::Stale { .. } = refusal {
                eprintln!(
                    "(judged as of {as_of} with a window of {})",
                    if args.max_age > 0 {
                        format_duration(args.max_age)
                    } else {
                        "none".to_string()
                    }
                );
            }
            Ok(EXIT_REFUSED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_age;

    #[test]
    fn ages() {
        assert_eq!(parse_age("24h"), Ok(86_400));
        assert_eq!(parse_age("1h30m"), Ok(5_400));
        assert_eq!(parse_age("3600"), Ok(3_600));
        assert_eq!(parse_age("0"), Ok(0));
        for bad in ["", "h", "1d", "-5", "5x", "1h5"] {
            assert!(parse_age(bad).is_err(), "{bad}");
        }
    }
}
