//! CI formats (`--output junit`, `--output sarif`) of `assay sep41` and `assay scan`: what a CI system's
//! test-report and code-scanning views read. One JUnit writer and one SARIF writer serve both commands; each
//! command only says what its cases and results are.
//!
//! `assay sep41`. JUnit XML: one test case per check; FAIL and NOT_IMPLEMENTED as a failure with the check's
//! expected and actual, UNVERIFIABLE and SKIPPED as skipped with the reason, PASS as a plain case. SARIF 2.1.0:
//! one result per FAIL (and NOT_IMPLEMENTED) and one per power discovery observed, each with its rule: the
//! check's id from docs/check-reference.md, or the power's mechanics name (`admin_mint`, …). The location is
//! the subject: the WASM file the run deployed (an artifact) and the contract (a logical location).
//!
//! `assay scan`. One test suite per asset, one test case per finding (check) of its report. A scan's checks
//! have no PASS/FAIL of their own; the report's FAIL is the one thing it counts against the asset beyond its
//! powers: an escalation to critical (`reputation`: a curated source lists it as malicious, bit 5; `sep41`: a
//! conformance check failed, bit 8). So a failure is an escalation finding at critical; a skip is a finding
//! that could not conclude (undetermined) or whose accountability is not verified (nobody's claim, a claim
//! refuted, or one that could not be read: never "this is fine", and never a FAIL, since accountability never
//! moves severity); every other finding passes, its severity, bits and reasoning in the case's output. Powers
//! (bits 0-2 and 9-13) are not failures: they are SARIF results, one per power found, beside one per FAIL
//! (a failed `sep41` finding gives one per failed conformance row, under that check's id).
use assay_core::powers::PowerSurvey;
use assay_core::{Accountability, Finding, Mechanics, Report as ScanReport, Severity};
use assay_sep41::{hook::Discovered, Report, Status, CHECKS};
use serde_json::{json, Value};

const CHECK_REFERENCE: &str =
    "https://github.com/assay-dev/assay/blob/main/docs/check-reference.md#the-checks";
const POWERS_REFERENCE: &str = "https://github.com/assay-dev/assay/blob/main/docs/scan.md";
const REPORT_REFERENCE: &str = "https://github.com/assay-dev/assay/blob/main/docs/report-format.md";

/// The bits SARIF reports as powers: the issuer's flags (0-2) and what a contract's code was seen to do
/// (9-13).
const POWER_MASK: u32 = Mechanics::CAPABILITY_MASK | Mechanics::CONTRACT_MASK;

/// What the run was about: the WASM deployed (offline), or the contract id (fork, live).
pub struct Subject<'a> {
    /// The WASM file, as given on the command line.
    pub wasm: Option<&'a str>,
    /// The name shown for the run (the WASM path, the contract id or the SAC's code).
    pub name: &'a str,
}

/// One asset's outcome in a scan: its report, or why it has none.
pub struct Scanned<'a> {
    /// The asset as named on the command line.
    pub name: &'a str,
    /// Its report, or the (redacted) error that left it without one.
    pub report: Result<&'a ScanReport, String>,
}

// ---- JUnit: one writer ----

/// One JUnit test case.
struct Case {
    classname: String,
    name: String,
    time_ms: u64,
    outcome: Outcome,
    /// What the case observed, as `<system-out>`.
    output: Option<String>,
}

enum Outcome {
    Pass,
    Failure {
        kind: String,
        message: String,
        text: String,
    },
    Skipped {
        message: String,
    },
    /// No verdict at all: the subject could not be read.
    Error {
        message: String,
    },
}

/// One JUnit test suite: a subject's cases.
struct Suite {
    name: String,
    timestamp: String,
    properties: Vec<(&'static str, String)>,
    cases: Vec<Case>,
}

#[derive(Default)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time_ms: u64,
}

impl Counts {
    fn of(cases: &[Case]) -> Counts {
        let mut c = Counts {
            tests: cases.len(),
            ..Counts::default()
        };
        for case in cases {
            c.time_ms += case.time_ms;
            match case.outcome {
                Outcome::Pass => {}
                Outcome::Failure { .. } => c.failures += 1,
                Outcome::Skipped { .. } => c.skipped += 1,
                Outcome::Error { .. } => c.errors += 1,
            }
        }
        c
    }

    fn add(&mut self, other: &Counts) {
        self.tests += other.tests;
        self.failures += other.failures;
        self.errors += other.errors;
        self.skipped += other.skipped;
        self.time_ms += other.time_ms;
    }

    fn attributes(&self) -> String {
        format!(
            "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\"",
            self.tests,
            self.failures,
            self.errors,
            self.skipped,
            seconds(self.time_ms)
        )
    }
}

/// `suites` as one JUnit XML document named `name`.
fn junit_document(name: &str, suites: &[Suite]) -> String {
    let counts: Vec<Counts> = suites.iter().map(|s| Counts::of(&s.cases)).collect();
    let mut total = Counts::default();
    for c in &counts {
        total.add(c);
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"{}\" {}>\n",
        xml(name),
        total.attributes()
    ));
    for (suite, counts) in suites.iter().zip(&counts) {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" {} timestamp=\"{}\">\n",
            xml(&suite.name),
            counts.attributes(),
            xml(&suite.timestamp)
        ));
        out.push_str("    <properties>\n");
        for (name, value) in &suite.properties {
            out.push_str(&format!(
                "      <property name=\"{name}\" value=\"{}\"/>\n",
                xml(value)
            ));
        }
        out.push_str("    </properties>\n");
        for case in &suite.cases {
            out.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
                xml(&case.classname),
                xml(&case.name),
                seconds(case.time_ms)
            ));
            let body = match &case.outcome {
                Outcome::Pass => String::new(),
                Outcome::Failure {
                    kind,
                    message,
                    text,
                } => format!(
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                    xml(kind),
                    xml(message),
                    xml(text)
                ),
                Outcome::Skipped { message } => {
                    format!("      <skipped message=\"{}\"/>\n", xml(message))
                }
                Outcome::Error { message } => format!(
                    "      <error type=\"error\" message=\"{}\">{}</error>\n",
                    xml(message),
                    xml(message)
                ),
            };
            let output = (case.output.as_ref())
                .map(|o| format!("      <system-out>{}</system-out>\n", xml(o)))
                .unwrap_or_default();
            if body.is_empty() && output.is_empty() {
                out.push_str("/>\n");
            } else {
                out.push_str(&format!(">\n{body}{output}    </testcase>\n"));
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// The SEP-41 report as JUnit XML.
pub fn junit(report: &Report, subject: &Subject) -> String {
    let cases = report
        .results
        .iter()
        .map(|r| {
            let outcome = match r.status {
                Status::Pass => Outcome::Pass,
                Status::Fail | Status::NotImplemented => Outcome::Failure {
                    kind: r.status.as_str().to_string(),
                    message: format!("{} {}: {}", r.id, r.status.as_str(), r.actual),
                    text: format!("expected: {}\nactual: {}", r.expected, r.actual),
                },
                Status::Unverifiable | Status::Skipped => Outcome::Skipped {
                    message: format!("{}: {}", r.status.as_str(), r.actual),
                },
            };
            Case {
                classname: format!("sep41.{}", r.layer.as_str()),
                name: r.id.to_string(),
                time_ms: r.duration_ms,
                outcome,
                output: None,
            }
        })
        .collect();
    let suite = Suite {
        name: format!("sep41 {}", subject.name),
        timestamp: report.ran_at.clone(),
        properties: vec![
            ("contract", report.contract_id.clone()),
            ("network", report.network.clone()),
        ],
        cases,
    };
    junit_document("assay sep41", &[suite])
}

/// A scan's reports as JUnit XML: one suite per asset, one case per finding (see the module's doc).
pub fn scan_junit(scanned: &[Scanned]) -> String {
    let suites: Vec<Suite> = scanned
        .iter()
        .map(|s| {
            let class = format!("scan.{}", s.name);
            let report = match &s.report {
                Ok(report) => report,
                Err(why) => {
                    return Suite {
                        name: format!("scan {}", s.name),
                        timestamp: String::new(),
                        properties: vec![("asset", s.name.to_string())],
                        cases: vec![Case {
                            classname: class,
                            name: "report".to_string(),
                            time_ms: 0,
                            outcome: Outcome::Error {
                                message: format!("{}: no report: {why}", s.name),
                            },
                            output: None,
                        }],
                    }
                }
            };
            let mut properties = vec![
                ("asset", report.asset.to_string()),
                ("severity", report.severity.name().to_string()),
                ("base_severity", report.base_severity.name().to_string()),
                ("accountability", report.accountability.name().to_string()),
                ("mechanics", report.mechanics.names().join(",")),
                (
                    "state",
                    json!(report.state).as_str().unwrap_or_default().to_string(),
                ),
            ];
            if let Some(network) = &report.network {
                properties.push(("network", network.clone()));
            }
            Suite {
                name: format!("scan {}", s.name),
                timestamp: report.scanned_at.to_string(),
                properties,
                cases: report
                    .findings
                    .iter()
                    .map(|f| Case {
                        classname: class.clone(),
                        name: f.check.clone(),
                        time_ms: 0,
                        outcome: finding_outcome(f),
                        output: Some(finding_output(f)),
                    })
                    .collect(),
            }
        })
        .collect();
    junit_document("assay scan", &suites)
}

/// Whether a finding is the report's FAIL: an escalation to critical (a curated source's malicious listing,
/// a failed conformance check).
fn is_fail(f: &Finding) -> bool {
    f.escalation && f.severity.level() == Some(Severity::Critical)
}

/// A finding's verdict as a JUnit outcome. A FAIL wins over undetermined: critical is the ceiling, so what
/// is still missing could not change it.
fn finding_outcome(f: &Finding) -> Outcome {
    if is_fail(f) {
        return Outcome::Failure {
            kind: "FAIL".to_string(),
            message: format!("{} FAIL: {}", f.check, f.reasoning),
            text: evidence_text(f),
        };
    }
    if f.undetermined {
        let sources = if f.undetermined_by_source.is_empty() {
            String::new()
        } else {
            let named: Vec<String> = (f.undetermined_by_source.iter())
                .map(|(source, n)| format!("{source} ({n} failed)"))
                .collect();
            format!(" (did not answer: {})", named.join(", "))
        };
        return Outcome::Skipped {
            message: format!("UNDETERMINED{sources}: {}", f.reasoning),
        };
    }
    match f.accountability {
        Some(a) if a != Accountability::Verified => Outcome::Skipped {
            message: format!("accountability {}: {}", a.name(), f.reasoning),
        },
        _ => Outcome::Pass,
    }
}

fn finding_output(f: &Finding) -> String {
    format!(
        "{} ({}): severity {}; mechanics [{}]\n{}\n{}",
        f.check,
        f.title,
        f.severity.name(),
        f.mechanics.names().join(", "),
        f.reasoning,
        evidence_text(f)
    )
}

fn evidence_text(f: &Finding) -> String {
    (f.evidence.iter())
        .map(|e| format!("[{}] {} {}", e.source, e.url, e.claim))
        .collect::<Vec<_>>()
        .join("\n")
}

// ---- SARIF: one writer ----

/// The rules of the 27 conformance checks (ids from docs/check-reference.md).
fn check_rules() -> Vec<Value> {
    CHECKS
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "name": c.id,
                "shortDescription": { "text": c.clause },
                "fullDescription": { "text": format!("PASS when: {}", c.expected) },
                "helpUri": CHECK_REFERENCE,
                "defaultConfiguration": { "level": "error" },
                "properties": { "layer": c.layer.as_str() },
            })
        })
        .collect()
}

/// The rules of the powers whose bits are in `mask`, by mechanics name.
fn power_rules(mask: u32) -> Vec<Value> {
    (Mechanics::NAMES.iter())
        .filter(|(bit, _)| bit & mask != 0)
        .map(|(bit, name)| {
            json!({
                "id": name,
                "name": name,
                "shortDescription": { "text": format!("power found: `{name}`") },
                "fullDescription": { "text": format!(
                    "The `{name}` power (mechanics bit {}) was found; severity floor: {}.",
                    bit.trailing_zeros(),
                    Mechanics::from_bits(*bit).map_or("unknown", |m| m.floor().name())
                ) },
                "helpUri": POWERS_REFERENCE,
                "defaultConfiguration": { "level": power_level(*bit) },
            })
        })
        .collect()
}

/// One SARIF 2.1.0 log of a single run: the rules, the results (their `ruleIndex` filled in from `rules`),
/// the tool's notifications and the run's properties.
fn sarif_log(
    rules: Vec<Value>,
    mut results: Vec<Value>,
    notifications: Vec<Value>,
    properties: Value,
) -> String {
    for r in &mut results {
        let index = rules.iter().position(|rule| rule["id"] == r["ruleId"]);
        r["ruleIndex"] = json!(index);
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "assay",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/assay-dev/assay",
                "rules": rules,
            } },
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
            "properties": properties,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).expect("a SARIF log serialises");
    text.push('\n');
    text
}

fn notification(level: &str, text: String) -> Value {
    json!({ "level": level, "message": { "text": text } })
}

/// The SEP-41 report and the powers discovery found as one SARIF 2.1.0 log.
pub fn sarif(report: &Report, found: Option<&Discovered>, subject: &Subject) -> String {
    let mut rules = check_rules();
    rules.extend(power_rules(Mechanics::CONTRACT_MASK));
    let locations = locations(report, subject);
    let mut results = Vec::new();
    for r in &report.results {
        if !matches!(r.status, Status::Fail | Status::NotImplemented) {
            continue;
        }
        results.push(json!({
            "ruleId": r.id,
            "level": "error",
            "kind": "fail",
            "message": { "text": format!(
                "{} {} ({}): expected {}; actual {}",
                r.id, r.status.as_str(), r.clause, r.expected, r.actual
            ) },
            "locations": locations,
        }));
    }
    let mut notifications = Vec::new();
    match found {
        Some(Ok(survey)) => {
            results.extend(power_results(survey, &locations));
            if let Some(why) = survey.incomplete() {
                notifications.push(notification(
                    "error",
                    format!("power discovery is incomplete: {why}"),
                ));
            }
        }
        Some(Err(why)) => notifications.push(notification(
            "error",
            format!("power discovery could not run: {why}"),
        )),
        None => {}
    }
    for r in &report.results {
        if matches!(r.status, Status::Unverifiable | Status::Skipped) && !r.no_power_observed() {
            notifications.push(notification(
                "warning",
                format!("{} {}: {}", r.id, r.status.as_str(), r.actual),
            ));
        }
    }
    sarif_log(
        rules,
        results,
        notifications,
        json!({
            "contract": report.contract_id,
            "network": report.network,
            "ranAt": report.ran_at,
        }),
    )
}

/// A scan's reports as one SARIF 2.1.0 log: per asset, one result per FAIL and one per power found, located
/// at the asset (see the module's doc). Findings that could not conclude and assets with no report are
/// tool notifications.
pub fn scan_sarif(scanned: &[Scanned]) -> String {
    let mut rules = check_rules();
    for (id, title) in [
        ("reputation", "Curated reputation signals"),
        ("sep41", "SEP-41 conformance"),
    ] {
        rules.push(json!({
            "id": id,
            "name": id,
            "shortDescription": { "text": format!("{title}: escalated to critical") },
            "helpUri": REPORT_REFERENCE,
            "defaultConfiguration": { "level": "error" },
        }));
    }
    rules.extend(power_rules(POWER_MASK));
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for s in scanned {
        let report = match &s.report {
            Ok(report) => report,
            Err(why) => {
                notifications.push(notification(
                    "error",
                    format!("{}: no report: {why}", s.name),
                ));
                continue;
            }
        };
        let locations = scan_locations(report);
        for f in &report.findings {
            if is_fail(f) {
                results.extend(fail_results(f, &locations));
            } else if f.undetermined {
                notifications.push(notification(
                    "warning",
                    format!(
                        "{}: {} could not conclude: {}",
                        s.name, f.check, f.reasoning
                    ),
                ));
            }
        }
        let mut covered = 0;
        if let Some(survey) = &report.powers {
            results.extend(power_results(survey, &locations));
            covered = survey.bits();
        }
        for (bit, name) in Mechanics::NAMES {
            if bit & POWER_MASK == 0 || bit & covered != 0 || report.mechanics.bits() & bit == 0 {
                continue;
            }
            let why = (report.findings.iter())
                .find(|f| f.mechanics.bits() & bit != 0)
                .map_or(String::new(), |f| format!(": {}", f.reasoning));
            results.push(json!({
                "ruleId": name,
                "level": power_level(bit),
                "message": { "text": format!("{} holds `{name}`{why}", s.name) },
                "locations": locations,
            }));
        }
    }
    sarif_log(rules, results, notifications, json!({}))
}

/// A FAIL finding's results: one per failed conformance row for `sep41` (the row's check id as the rule),
/// else one under the finding's own check.
fn fail_results(f: &Finding, locations: &Value) -> Vec<Value> {
    let result = |rule: &str, text: String| {
        json!({
            "ruleId": rule,
            "level": "error",
            "kind": "fail",
            "message": { "text": text },
            "locations": locations,
        })
    };
    if f.check == "sep41" {
        let rows: Vec<Value> = (f.evidence.iter())
            .filter_map(|e| {
                let (id, rest) = e.claim.split_once(' ')?;
                rest.starts_with("FAIL:").then(|| {
                    let rule = if CHECKS.iter().any(|c| c.id == id) {
                        id
                    } else {
                        "sep41"
                    };
                    result(rule, e.claim.clone())
                })
            })
            .collect();
        if !rows.is_empty() {
            return rows;
        }
    }
    vec![result(
        if f.check == "sep41" {
            "sep41"
        } else {
            "reputation"
        },
        format!("{} FAIL: {}", f.check, f.reasoning),
    )]
}

fn power_results(survey: &PowerSurvey, locations: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for p in &survey.powers {
        let bit = p.effect.bit();
        let name = Mechanics::from_bits(bit)
            .and_then(|m| m.names().first().copied())
            .unwrap_or("unknown");
        out.push(json!({
            "ruleId": name,
            "level": power_level(bit),
            "message": { "text": format!(
                "`{}` {} ({}), authorized by {}",
                p.function,
                p.effect.kind(),
                p.effect.detail(),
                if p.authorized_by.is_empty() {
                    "no one".to_string()
                } else {
                    p.authorized_by.iter().map(|a| a.describe()).collect::<Vec<_>>().join(", ")
                }
            ) },
            "locations": locations,
        }));
    }
    for w in &survey.unclassified {
        out.push(json!({
            "ruleId": "admin_unclassified",
            "level": power_level(Mechanics::ADMIN_UNCLASSIFIED),
            "message": { "text": format!(
                "`{}` writes state under a privileged authorization; its effect on holders was not classified",
                w.function
            ) },
            "locations": locations,
        }));
    }
    out
}

/// A power's SARIF level from the severity floor it implies: high → error, medium → warning, else note.
fn power_level(bit: u32) -> &'static str {
    match Mechanics::from_bits(bit).map(Mechanics::floor) {
        Some(Severity::High | Severity::Critical) | None => "error",
        Some(Severity::Medium) => "warning",
        Some(_) => "note",
    }
}

fn locations(report: &Report, subject: &Subject) -> Value {
    let logical = json!([{
        "name": report.contract_id,
        "fullyQualifiedName": format!("{} ({})", report.contract_id, report.network),
        "kind": "module",
    }]);
    match subject.wasm {
        Some(path) => json!([{
            "physicalLocation": { "artifactLocation": { "uri": uri_of(path) } },
            "logicalLocations": logical,
        }]),
        None => json!([{ "logicalLocations": logical }]),
    }
}

/// A scanned asset as a logical location: a token contract as a module, a classic asset as a resource.
fn scan_locations(report: &ScanReport) -> Value {
    let name = report.asset.to_string();
    let qualified = match &report.network {
        Some(network) => format!("{name} ({network})"),
        None => name.clone(),
    };
    let kind = if name.starts_with('C') && !name.contains('-') {
        "module"
    } else {
        "resource"
    };
    json!([{ "logicalLocations": [{
        "name": name,
        "fullyQualifiedName": qualified,
        "kind": kind,
    }] }])
}

/// A relative or absolute file path as a URI reference: `.` and `..` segments resolved (SARIF forbids them
/// in file URIs; a relative path that climbs out of the working directory becomes absolute), what a URI
/// cannot hold percent-encoded.
fn uri_of(path: &str) -> String {
    let mut normal = lexical(path);
    if normal.starts_with("..") {
        if let Ok(absolute) = std::fs::canonicalize(path) {
            normal = lexical(&absolute.to_string_lossy());
        }
    }
    let mut out = String::new();
    if normal.starts_with('/') {
        out.push_str("file://");
    }
    for b in normal.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `path` with `.` segments dropped and each `..` taking the segment before it off, where there is one.
fn lexical(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if path.starts_with('/') => {}
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Text for an XML attribute or element: the five entities escaped, characters XML 1.0 cannot hold
/// replaced.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{uri_of, xml};

    #[test]
    fn xml_text_escapes_markup_and_drops_what_xml_cannot_hold() {
        assert_eq!(
            xml("a<b & \"c\" 'd'>\u{1}\n"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\u{FFFD}&#10;"
        );
    }

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(uri_of("target/wasm/a b.wasm"), "target/wasm/a%20b.wasm");
        assert_eq!(uri_of("/tmp/x#.wasm"), "file:///tmp/x%23.wasm");
        assert_eq!(uri_of("/a/b/../c/./d.wasm"), "file:///a/c/d.wasm");
        assert_eq!(uri_of("./target/../t.wasm"), "t.wasm");
    }
}
