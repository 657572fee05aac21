//! Evidence bundles: what an attestation's evidence hash was computed from, kept so anyone can re-check it
//! offline. A bundle holds the exact preimage lines, the report they came from and, for a token judged on a
//! fork (SEP-41 rows, contract powers), the fork's snapshot of the ledger entries the run read.
//!
//! [`check_bundle`] proves three things without any I/O: the lines hash to the hash; the report produces
//! exactly these lines (a changed line is named); and the severity, base severity, escalation and mechanics
//! the lines state follow from the lines' own claims under the documented rules ([`rederive`]). Replaying
//! the snapshots is the caller's (it needs the local network); the claims it must reproduce are
//! [`Rederived::sep41`] (from [`Bundle::snapshot`]) and [`Rederived::behaviour`] (from
//! [`Bundle::powers_snapshot`], worded by [`crate::contract::behaviour_claims`]).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::evidence::SOURCE_ISSUER_SIGNERS;
use crate::evidence::{SOURCE_BLOCKLIST, SOURCE_DIRECTORY, SOURCE_HORIZON, SOURCE_HORIZON_ACCOUNT};
use crate::hash::{preimage, EvidenceVersion, PreimageInput};
use crate::model::{Accountability, Mechanics, Severity};
use crate::report::Report;

/// The bundle JSON's format number; bumped only on removal, rename, type or meaning change.
pub const BUNDLE_FORMAT: u32 = 1;

/// The largest bundle file `assay verify --bundle` reads (144 MiB): two fork snapshots at the fork cache's
/// cap (64 MiB each) and the lines and report.
pub const MAX_BUNDLE_BYTES: u64 = 144 << 20;

/// Source of the SEP-41 conformance lines.
const SOURCE_SEP41: &str = "sep41";
/// Source of a token contract's code lines.
const SOURCE_CONTRACT_CODE: &str = crate::contract::SOURCE_CONTRACT_CODE;
/// Source of a token contract's observed powers.
const SOURCE_CONTRACT_BEHAVIOUR: &str = crate::contract::SOURCE_CONTRACT_BEHAVIOUR;

/// One attestation's (or one recorded report's) evidence, addressed by its evidence hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bundle {
    /// [`BUNDLE_FORMAT`].
    pub bundle_format: u32,
    /// SHA-256 of the preimage, lowercase hex: the value an attestation holds on chain.
    pub evidence_hash: String,
    /// The preimage version (1 to 8).
    pub evidence_version: u8,
    /// The preimage, one line per element, without the line feeds (unescaped text is never stored here:
    /// these are the hashed bytes).
    pub lines: Vec<String>,
    /// The report the lines were built from (schema_version 1). Not hashed: checked against the lines.
    pub report: Report,
    /// The fork's `--fork-cache` snapshot (a `stellar snapshot` JSON with `assay_fork` notes) of the entries
    /// the run read, for a token whose SEP-41 rows or powers were judged on a fork; replayed offline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<serde_json::Value>,
    /// The power discovery's survey the SEP-41 suite was handed (its exercised mint and clawback are what
    /// the event rows judge), for the replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_survey: Option<crate::powers::PowerSurvey>,
    /// The `--fork-cache` snapshot power discovery read (its fork's entries, and the holder candidates it
    /// watched under `assay_fork.notes`), for a custom token: power discovery replays from it offline and
    /// must observe the `contract/behaviour` claims the lines hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub powers_snapshot: Option<serde_json::Value>,
}

/// Why a bundle was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// A line differs from what the report produces, and the lines no longer hash to the hash.
    #[error("bundle line {line} was changed: it reads {found:?}, the report and the hash say {expected:?}")]
    LineChanged {
        /// 1-based line number in the preimage.
        line: usize,
        /// The line as the bundle has it.
        found: String,
        /// The line the report produces.
        expected: String,
    },
    /// The lines do not hash to the hash, and no single line explains it.
    #[error("the bundle's lines hash to {computed}, not to its evidence_hash {stated}: {detail}")]
    HashMismatch {
        /// The hash the bundle states.
        stated: String,
        /// SHA-256 of its lines.
        computed: String,
        /// What else differs.
        detail: String,
    },
    /// The lines hash correctly but the report does not produce them.
    #[error("the bundle's report does not produce its lines: line {line} reads {found:?}, the report gives {expected:?}")]
    ReportDisagrees {
        /// 1-based line number.
        line: usize,
        /// The hashed line.
        found: String,
        /// The report's line.
        expected: String,
    },
    /// The bundle is not well formed (format, version, a line that is not `key<TAB>value`).
    #[error("the bundle is malformed: {0}")]
    Malformed(String),
    /// The verdict the lines state does not follow from their claims.
    #[error("the lines' verdict does not follow from their claims: {}", .0.join("; "))]
    Rederived(Vec<String>),
    /// A snapshot the replay would run does not hold what the hashed lines name: code under a key it
    /// does not hash to, or a token instance whose executable (or, for a Stellar Asset Contract, whose
    /// asset or admin) is not the one the lines state. Replaying it would judge other code.
    #[error("the bundle's {snapshot} does not hold what its hashed lines name: {detail}")]
    SnapshotMismatch {
        /// `snapshot` or `powers_snapshot`.
        snapshot: String,
        /// The mismatch, naming both values.
        detail: String,
    },
}

/// What [`check_bundle`] re-derived from a bundle's lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rederived {
    /// The subject (`CODE-ISSUER` or `C…`).
    pub asset: String,
    pub severity: Severity,
    pub base_severity: Severity,
    pub escalated: bool,
    /// The mechanics bitset.
    pub mechanics: u32,
    pub accountability: Accountability,
    /// `(check id, verdict)` of every SEP-41 line, in line order.
    pub sep41: Vec<(String, String)>,
    /// The `contract/behaviour` claims (observed powers), in line order.
    pub behaviour: Vec<String>,
    /// Rules the lines of this version cannot bind (e.g. the latent freeze before v6), accepted as stated.
    pub notes: Vec<String>,
}

impl Bundle {
    /// The bundle of `report` hashed in `version` (no snapshot: set [`Bundle::snapshot`] for a fork run).
    pub fn of(
        report: &Report,
        version: EvidenceVersion,
    ) -> Result<Bundle, crate::hash::UnevaluatedError> {
        let text = preimage(&PreimageInput::from_report(report)?, version);
        Ok(Bundle {
            bundle_format: BUNDLE_FORMAT,
            evidence_hash: hex::encode(Sha256::digest(text.as_bytes())),
            evidence_version: version.number(),
            lines: text.lines().map(str::to_string).collect(),
            report: report.clone(),
            snapshot: None,
            power_survey: None,
            powers_snapshot: None,
        })
    }

    /// The preimage bytes: every line followed by a line feed.
    pub fn preimage(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// Checks `bundle` offline: hash, report, and the verdict re-derived from its lines.
///
/// # Errors
/// [`BundleError::LineChanged`] names the first line that differs from the report's when the hash fails;
/// the other variants as documented on them.
pub fn check_bundle(bundle: &Bundle) -> Result<Rederived, BundleError> {
    if bundle.bundle_format != BUNDLE_FORMAT {
        return Err(BundleError::Malformed(format!(
            "bundle_format {} is not supported (expected {BUNDLE_FORMAT})",
            bundle.bundle_format
        )));
    }
    let version: EvidenceVersion =
        bundle.evidence_version.to_string().parse().map_err(
            |e: crate::hash::UnknownEvidenceVersion| BundleError::Malformed(e.to_string()),
        )?;
    let computed = hex::encode(Sha256::digest(bundle.preimage().as_bytes()));
    let from_report = PreimageInput::from_report(&bundle.report)
        .map(|input| preimage(&input, version))
        .map_err(|e| BundleError::Malformed(format!("report: {e}")))?;
    let expected: Vec<&str> = from_report.lines().collect();
    let first_difference = || {
        (0..bundle.lines.len().max(expected.len())).find_map(|i| {
            let found = bundle.lines.get(i).map(String::as_str).unwrap_or("");
            let wanted = expected.get(i).copied().unwrap_or("");
            (found != wanted).then(|| (i + 1, found.to_string(), wanted.to_string()))
        })
    };
    if computed != bundle.evidence_hash.to_ascii_lowercase() {
        let report_hash = hex::encode(Sha256::digest(from_report.as_bytes()));
        return Err(match first_difference() {
            Some((line, found, expected)) if report_hash == bundle.evidence_hash => {
                BundleError::LineChanged {
                    line,
                    found,
                    expected,
                }
            }
            Some((line, found, _)) => BundleError::HashMismatch {
                stated: bundle.evidence_hash.clone(),
                computed,
                detail: format!(
                    "the report was changed too (it hashes to {report_hash}); line {line} reads {found:?}"
                ),
            },
            None => BundleError::HashMismatch {
                stated: bundle.evidence_hash.clone(),
                computed,
                detail: "the lines are the report's, so the stated hash is not this report's".into(),
            },
        });
    }
    if let Some((line, found, expected)) = first_difference() {
        return Err(BundleError::ReportDisagrees {
            line,
            found,
            expected,
        });
    }
    rederive(&bundle.lines, version)
}

/// The preimage lines parsed: header values and evidence `(source, url, claim)`, unescaped.
struct Parsed {
    values: Vec<(String, String)>,
    evidence: Vec<(String, String, String)>,
}

impl Parsed {
    fn claims<'a>(&'a self, source: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.evidence
            .iter()
            .filter(move |(s, _, _)| s == source)
            .map(|(_, _, c)| c.as_str())
    }

    /// Whether the lines hash a token contract: always in v4 and v5; in v7 when the subject line is
    /// `token` (a classic asset's is `asset`).
    fn names_contract(&self, version: EvidenceVersion) -> bool {
        version.is_contract() || (version.admits_contract() && self.value("token").is_some())
    }

    fn value(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn parse(lines: &[String], version: EvidenceVersion) -> Result<Parsed, BundleError> {
    let malformed = |m: String| Err(BundleError::Malformed(m));
    let head = format!("assay-evidence-v{}", version.number());
    if lines.first().map(String::as_str) != Some(head.as_str()) {
        return malformed(format!("line 1 is not {head:?}"));
    }
    let mut parsed = Parsed {
        values: Vec::new(),
        evidence: Vec::new(),
    };
    for (i, line) in lines.iter().enumerate().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields.as_slice() {
            ["evidence", source, url, claim] => {
                parsed
                    .evidence
                    .push((unescape(source), unescape(url), unescape(claim)))
            }
            [key, value] if *key != "evidence" => {
                parsed.values.push((key.to_string(), unescape(value)))
            }
            _ => return malformed(format!("line {} is not key<TAB>value: {line:?}", i + 1)),
        }
    }
    Ok(parsed)
}

/// Issuer flags as a flag claim states them.
#[derive(Default, Clone, Copy)]
struct Flags {
    required: bool,
    revocable: bool,
    immutable: bool,
    clawback: bool,
}

fn parse_flags(claim: &str, prefix: &str) -> Option<Flags> {
    let rest = claim.strip_prefix(prefix)?;
    let mut flags = Flags::default();
    for part in rest.split(' ') {
        let (name, value) = part.split_once('=')?;
        let on = match value {
            "true" => true,
            "false" => false,
            _ => return None,
        };
        match name {
            "auth_required" => flags.required = on,
            "auth_revocable" => flags.revocable = on,
            "auth_immutable" => flags.immutable = on,
            "auth_clawback_enabled" => flags.clawback = on,
            _ => return None,
        }
    }
    Some(flags)
}

/// The bit an observed power's stable claim (the text after `authorized by …: `) stands for; `None` for a
/// claim no bit follows from.
pub fn behaviour_bit(claim: &str) -> Option<u32> {
    const TAKES: [&str; 2] = [
        "without the holder's authorization; nobody was credited",
        "without the holder's authorization; another address rose by as much",
    ];
    const FREEZES: [&str; 2] = [
        "that succeeded before the call is refused after it; another holder's still succeeds",
        "every tested holder's transfer that succeeded before the call is refused after it",
    ];
    if TAKES.iter().any(|t| claim.ends_with(t)) {
        Some(Mechanics::ADMIN_CLAWBACK)
    } else if FREEZES.iter().any(|t| claim.ends_with(t)) {
        Some(Mechanics::ADMIN_FREEZE)
    } else if claim.ends_with("a balance rose by the units asked with no matching debit") {
        Some(Mechanics::ADMIN_MINT)
    } else if claim
        .ends_with("writes state; its effect on holders was not classified within the bound")
    {
        Some(Mechanics::ADMIN_UNCLASSIFIED)
    } else if crate::powers::TRANSFER_FEE_CLAIMS
        .iter()
        .any(|t| claim.ends_with(t))
    {
        Some(Mechanics::ADMIN_TRANSFER_FEE)
    } else if claim.ends_with("the token's executable changed")
        || claim.contains("that transfer calls into was replaced in the token's storage")
        || claim.contains("the executable is an external reference to ")
        || claim.contains(": the code imports ")
    {
        Some(Mechanics::CODE_MUTABLE)
    } else {
        None
    }
}

/// The severity an observed power's claim implies beyond its bit's floor: high for a transfer fee seen to
/// deliver nothing of what a holder sends (bit 14's floor is medium).
pub fn behaviour_severity(claim: &str) -> Severity {
    if crate::powers::TRANSFER_FEE_CLAIMS[..2]
        .iter()
        .any(|t| claim.ends_with(t))
    {
        Severity::High
    } else {
        Severity::Clear
    }
}

/// The bit v4 (token contracts judged by their spec, before behaviour) set for a `spec exposes FUNCTION`
/// line: the names that version read as clawback, freeze and mint.
fn v4_spec_bit(function: &str) -> u32 {
    match function {
        "clawback" => Mechanics::ADMIN_CLAWBACK,
        "set_authorized" | "freeze" | "freeze_account" | "blacklist" | "blocklist" => {
            Mechanics::ADMIN_FREEZE
        }
        "mint" => Mechanics::ADMIN_MINT,
        _ => 0,
    }
}

/// Whether a `who can use the issuer's powers` text leaves the issuer able to change its flags
/// ([`crate::WhoCanAct::can_set_flags`]): some keys reach the threshold, or nobody knows.
fn who_can_set_flags(who: &str) -> bool {
    !(who.starts_with("locked") || who.contains("for trustline authorization only"))
}

/// Re-derives the verdict from preimage lines and compares it with the values they state.
///
/// # Errors
/// [`BundleError::Malformed`] for lines that cannot be read, [`BundleError::Rederived`] listing every
/// value that does not follow from the claims.
pub fn rederive(lines: &[String], version: EvidenceVersion) -> Result<Rederived, BundleError> {
    let parsed = parse(lines, version)?;
    let contract = parsed.names_contract(version);
    let stated = Stated::read(&parsed, contract)?;
    let (mut bits, mut base, latent_alternative) = if contract {
        let (bits, least) = contract_bits(&parsed, version);
        (
            bits,
            Mechanics::from_bits(bits)
                .unwrap_or_default()
                .floor()
                .max(least),
            None,
        )
    } else {
        classic_bits(&parsed, version, stated.accountability)?
    };
    let sep41 = sep41_rows(&parsed, &mut bits)?;
    let escalated = bits & (Mechanics::BLOCKLISTED | Mechanics::SEP41_VIOLATION) != 0;
    let mut severity = if escalated { Severity::Critical } else { base };
    let behaviour = parsed
        .claims(SOURCE_CONTRACT_BEHAVIOUR)
        .map(str::to_string)
        .collect();
    let mut notes = Vec::new();
    if let Some((latent_base, bit)) = latent_alternative {
        if stated.base == latent_base && stated.mechanics == bits | bit {
            notes.push(format!(
                "v{}: the issuer's signers are not hashed before v6, so the latent freeze (bit 1, base \
                 {latent_base}) is taken as stated",
                version.number()
            ));
            bits |= bit;
            base = latent_base;
            if !escalated {
                severity = latent_base;
            }
        }
    }
    stated.compare(severity, base, escalated, bits)?;
    Ok(Rederived {
        asset: stated.asset,
        severity,
        base_severity: base,
        escalated,
        mechanics: bits,
        accountability: stated.accountability,
        sep41,
        behaviour,
        notes,
    })
}

/// What the lines state: the values a re-derivation must reproduce.
struct Stated {
    asset: String,
    severity: Severity,
    base: Severity,
    escalated: bool,
    mechanics: u32,
    accountability: Accountability,
}

impl Stated {
    fn read(parsed: &Parsed, contract: bool) -> Result<Stated, BundleError> {
        let malformed = |m: String| BundleError::Malformed(m);
        let subject_key = if contract { "token" } else { "asset" };
        let asset = parsed
            .value(subject_key)
            .ok_or_else(|| malformed(format!("no {subject_key} line")))?
            .to_string();
        let stated_level = |key: &str| -> Result<Severity, BundleError> {
            let n: u32 = parsed
                .value(key)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| malformed(format!("no numeric {key} line")))?;
            Severity::ALL
                .into_iter()
                .find(|s| s.level() == n)
                .ok_or_else(|| malformed(format!("{key} {n} is not a level")))
        };
        let severity = stated_level("severity")?;
        let base = stated_level("base_severity")?;
        let escalated = parsed.value("escalated") == Some("true");
        let mechanics: u32 = parsed
            .value("mechanics")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| malformed("no numeric mechanics line".into()))?;
        let accountability = match parsed.value("accountability") {
            Some("verified") => Accountability::Verified,
            Some("unverified") => Accountability::Unverified,
            Some("unknown") => Accountability::Unknown,
            other => return Err(malformed(format!("accountability {other:?} is not a name"))),
        };
        Ok(Stated {
            asset,
            severity,
            base,
            escalated,
            mechanics,
            accountability,
        })
    }

    /// Every stated value the claims do not give, or none.
    fn compare(
        &self,
        severity: Severity,
        base: Severity,
        escalated: bool,
        bits: u32,
    ) -> Result<(), BundleError> {
        let mut differences = Vec::new();
        let mut differ = |what: &str, stated: String, derived: String| {
            if stated != derived {
                differences.push(format!(
                    "{what}: the lines state {stated}, their claims give {derived}"
                ));
            }
        };
        differ(
            "severity",
            self.severity.level().to_string(),
            severity.level().to_string(),
        );
        differ(
            "base_severity",
            self.base.level().to_string(),
            base.level().to_string(),
        );
        differ(
            "escalated",
            self.escalated.to_string(),
            escalated.to_string(),
        );
        differ(
            "mechanics",
            format!("{} ({})", self.mechanics, names(self.mechanics)),
            format!("{bits} ({})", names(bits)),
        );
        if differences.is_empty() {
            Ok(())
        } else {
            Err(BundleError::Rederived(differences))
        }
    }
}

/// A token contract's bits (update imports and external code: bit 9; v4's spec names; observed powers) and
/// the least severity its claims imply beyond the bits' floor. A transfer-fee claim gives bit 14 from v8 on
/// only: before, no version bound it.
fn contract_bits(parsed: &Parsed, version: EvidenceVersion) -> (u32, Severity) {
    let claims = |source: &'static str| parsed.claims(source);
    let mut bits = 0u32;
    for claim in claims(SOURCE_CONTRACT_CODE) {
        if claim.starts_with("imports l.")
            || claim.starts_with("the executable is an external reference to ")
        {
            bits |= Mechanics::CODE_MUTABLE;
        }
        if let Some(function) = claim.strip_prefix("spec exposes ") {
            bits |= v4_spec_bit(function);
        }
    }
    let mut least = Severity::Clear;
    for claim in claims(SOURCE_CONTRACT_BEHAVIOUR) {
        let bit = behaviour_bit(claim).unwrap_or(0);
        if bit == Mechanics::ADMIN_TRANSFER_FEE && !version.binds_transfer_fee() {
            continue;
        }
        bits |= bit;
        least = least.max(behaviour_severity(claim));
    }
    (bits, least)
}

/// A classic asset's bits and base severity from the flag copies, the signers, domain and reputation
/// claims; with, before v6, the latent freeze's reading the lines can neither prove nor refute.
#[allow(clippy::type_complexity)]
fn classic_bits(
    parsed: &Parsed,
    version: EvidenceVersion,
    accountability: Accountability,
) -> Result<(u32, Severity, Option<(Severity, u32)>), BundleError> {
    let claims = |source: &'static str| parsed.claims(source);
    let mut bits = 0u32;
    // Accepted alternatives for a rule the lines of this version do not bind.
    let mut latent_alternative = None;
    let first = claims(SOURCE_HORIZON)
        .find_map(|c| parse_flags(c, "issuer flags: "))
        .ok_or_else(|| {
            BundleError::Rederived(vec![
                "no `horizon` issuer-flags line: capability cannot be re-derived".into(),
            ])
        })?;
    let second =
        claims(SOURCE_HORIZON_ACCOUNT).find_map(|c| parse_flags(c, "issuer account flags: "));
    let copy = second.unwrap_or(first);
    let powers = Flags {
        required: first.required || copy.required,
        revocable: first.revocable || copy.revocable,
        clawback: first.clawback || copy.clawback,
        immutable: first.immutable && copy.immutable,
    };
    let signers = claims(SOURCE_ISSUER_SIGNERS).next();
    let can_sign = signers.is_none_or(|c| {
        c.rsplit_once("who can use the issuer's powers: ")
            .is_none_or(|(_, who)| who_can_set_flags(who))
    });
    let latent = !powers.revocable && !powers.immutable && can_sign;
    let flag_bits = [
        (powers.required, Mechanics::AUTH_REQUIRED),
        (powers.revocable, Mechanics::AUTH_REVOCABLE),
        (powers.clawback, Mechanics::AUTH_CLAWBACK_ENABLED),
        (powers.immutable, Mechanics::AUTH_IMMUTABLE),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |bits, (_, bit)| bits | bit);
    let flags_level = crate::checks::severity_of(&crate::subject::IssuerFlags {
        auth_required: powers.required,
        auth_revocable: powers.revocable,
        auth_immutable: powers.immutable,
        auth_clawback_enabled: powers.clawback,
    });
    bits |= flag_bits;
    let mut base = flags_level;
    if latent {
        if version >= EvidenceVersion::V6 {
            bits |= Mechanics::AUTH_REVOCABLE;
            base = base.max(Severity::Medium);
        } else {
            // Before v6 the signers are not in the preimage: the latent freeze is neither provable nor
            // refutable from the lines, so both readings are accepted.
            latent_alternative =
                Some((flags_level.max(Severity::Medium), Mechanics::AUTH_REVOCABLE));
        }
    }
    let checks = parsed.value("checks");
    if checks.is_none_or(|c| c.split(',').any(|id| id == "sep1-domain"))
        && accountability != Accountability::Verified
    {
        bits |= Mechanics::DOMAIN_UNVERIFIED;
    }
    let blocked = claims(SOURCE_BLOCKLIST).any(|c| c.ends_with(" blocked=true"));
    let adverse = claims(SOURCE_DIRECTORY).any(|c| {
        c.rsplit_once(", tags: ").is_some_and(|(_, tags)| {
            tags.trim_end_matches(')')
                .split(", ")
                .any(|t| crate::checks::ADVERSE_TAGS.contains(&t))
        })
    });
    if blocked || adverse {
        bits |= Mechanics::BLOCKLISTED;
    }

    Ok((bits, base, latent_alternative))
}

/// The SEP-41 rows the lines carry; a FAIL sets bit 8.
fn sep41_rows(parsed: &Parsed, bits: &mut u32) -> Result<Vec<(String, String)>, BundleError> {
    let malformed = |m: String| BundleError::Malformed(m);
    let mut sep41 = Vec::new();
    for claim in parsed.claims(SOURCE_SEP41) {
        let mut words = claim.splitn(3, ' ');
        let (Some(id), Some(verdict)) = (words.next(), words.next()) else {
            return Err(malformed(format!("sep41 line {claim:?} has no verdict")));
        };
        let verdict = verdict.trim_end_matches(':').to_string();
        if verdict == "FAIL" {
            *bits |= Mechanics::SEP41_VIOLATION;
        }
        sep41.push((id.to_string(), verdict));
    }
    Ok(sep41)
}

fn names(bits: u32) -> String {
    let names = Mechanics::from_bits(bits & Mechanics::KNOWN_MASK)
        .unwrap_or_default()
        .names();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescape_inverts_the_preimage_escape() {
        let raw = "a\\b\tc\nd\re";
        assert_eq!(unescape(&crate::hash::escape(raw)), raw);
    }

    #[test]
    fn every_power_effect_claim_maps_to_its_bit() {
        use crate::powers::{FreezeScope, PowerEffect};
        let effects = [
            PowerEffect::TakesBalance {
                holder: "G".into(),
                amount: "1".into(),
                moved_to: None,
            },
            PowerEffect::TakesBalance {
                holder: "G".into(),
                amount: "1".into(),
                moved_to: Some("G2".into()),
            },
            PowerEffect::Freezes {
                holder: "G".into(),
                scope: FreezeScope::OneAccount,
            },
            PowerEffect::Freezes {
                holder: "G".into(),
                scope: FreezeScope::Everyone,
            },
            PowerEffect::CreatesSupply {
                credited: "G".into(),
                amount: "1".into(),
            },
            PowerEffect::ReplacesCode {
                before: "a".into(),
                after: "b".into(),
            },
            PowerEffect::ReplacesDependency {
                dependency: "C".into(),
            },
            PowerEffect::TransferFee {
                holder: "G".into(),
                sent: "10".into(),
                delivered: "7".into(),
                share_bps: 3_000,
                credited: Some("G2".into()),
            },
            PowerEffect::TransferFee {
                holder: "G".into(),
                sent: "10".into(),
                delivered: "7".into(),
                share_bps: 3_000,
                credited: None,
            },
            PowerEffect::TransferFee {
                holder: "G".into(),
                sent: "10".into(),
                delivered: "0".into(),
                share_bps: crate::powers::FULL_SHARE_BPS,
                credited: Some("G2".into()),
            },
            PowerEffect::TransferFee {
                holder: "G".into(),
                sent: "10".into(),
                delivered: "0".into(),
                share_bps: crate::powers::FULL_SHARE_BPS,
                credited: None,
            },
        ];
        for effect in effects {
            let claim = format!(
                "f authorized by anyone (no authorization asked): {}",
                effect.stable_claim()
            );
            assert_eq!(behaviour_bit(&claim), Some(effect.bit()), "{claim}");
            let severity = if effect.takes_every_transfer() {
                Severity::High
            } else {
                Severity::Clear
            };
            assert_eq!(behaviour_severity(&claim), severity, "{claim}");
        }
    }
}
