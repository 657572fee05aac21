//! CI formats of a SEP-41 run (`--output junit`, `--output sarif`): what a CI system's test-report and
//! code-scanning views read.
//!
//! JUnit XML: one test case per check; FAIL and NOT_IMPLEMENTED as a failure with the check's expected and
//! actual, UNVERIFIABLE and SKIPPED as skipped with the reason, PASS as a plain case.
//!
//! SARIF 2.1.0: one result per FAIL (and NOT_IMPLEMENTED) and one per power discovery observed, each with
//! its rule: the check's id from docs/check-reference.md, or the power's mechanics name (`admin_mint`, …).
//! The location is the subject: the WASM file the run deployed (an artifact) and the contract (a logical
//! location).
use assay_core::powers::PowerSurvey;
use assay_core::{Mechanics, Severity};
use assay_sep41::{hook::Discovered, Report, Status, CHECKS};
use serde_json::{json, Value};

const CHECK_REFERENCE: &str =
    "https://github.com/assay-dev/assay/blob/main/docs/check-reference.md#the-checks";
const POWERS_REFERENCE: &str = "https://github.com/assay-dev/assay/blob/main/docs/scan.md";

/// What the run was about: the WASM deployed (offline), or the contract id (fork, live).
pub struct Subject<'a> {
    /// The WASM file, as given on the command line.
    pub wasm: Option<&'a str>,
    /// The name shown for the run (the WASM path, the contract id or the SAC's code).
    pub name: &'a str,
}

/// The report as JUnit XML.
pub fn junit(report: &Report, subject: &Subject) -> String {
    let s = report.summary();
    let failures = s.fail + s.not_implemented;
    let skipped = s.unverifiable + s.skipped;
    let time: u64 = report.results.iter().map(|r| r.duration_ms).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"assay sep41\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{}\">\n",
        s.total,
        seconds(time)
    ));
    out.push_str(&format!(
        "  <testsuite name=\"sep41 {}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{}\" timestamp=\"{}\">\n",
        xml(subject.name),
        s.total,
        seconds(time),
        xml(&report.ran_at)
    ));
    out.push_str("    <properties>\n");
    for (name, value) in [
        ("contract", report.contract_id.as_str()),
        ("network", report.network.as_str()),
    ] {
        out.push_str(&format!(
            "      <property name=\"{name}\" value=\"{}\"/>\n",
            xml(value)
        ));
    }
    out.push_str("    </properties>\n");
    for r in &report.results {
        out.push_str(&format!(
            "    <testcase classname=\"sep41.{}\" name=\"{}\" time=\"{}\"",
            r.layer.as_str(),
            xml(r.id),
            seconds(r.duration_ms)
        ));
        let detail = format!("expected: {}\nactual: {}", r.expected, r.actual);
        match r.status {
            Status::Pass => out.push_str("/>\n"),
            Status::Fail | Status::NotImplemented => out.push_str(&format!(
                ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                r.status.as_str(),
                xml(&format!("{} {}: {}", r.id, r.status.as_str(), r.actual)),
                xml(&detail)
            )),
            Status::Unverifiable | Status::Skipped => out.push_str(&format!(
                ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                xml(&format!("{}: {}", r.status.as_str(), r.actual))
            )),
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// The report and the powers discovery found as one SARIF 2.1.0 log.
pub fn sarif(report: &Report, found: Option<&Discovered>, subject: &Subject) -> String {
    let mut rules: Vec<Value> = CHECKS
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
        .collect();
    let power_rules: Vec<(u32, &str)> = Mechanics::NAMES
        .iter()
        .copied()
        .filter(|(bit, _)| bit & Mechanics::CONTRACT_MASK != 0)
        .collect();
    for (bit, name) in &power_rules {
        rules.push(json!({
            "id": name,
            "name": name,
            "shortDescription": { "text": format!("power discovery observed `{name}`") },
            "fullDescription": { "text": format!(
                "A call was seen to exercise the `{name}` power (mechanics bit {}); severity floor: {}.",
                bit.trailing_zeros(),
                Mechanics::from_bits(*bit).map_or("unknown", |m| m.floor().name())
            ) },
            "helpUri": POWERS_REFERENCE,
            "defaultConfiguration": { "level": power_level(*bit) },
        }));
    }
    let rule_index = |id: &str| rules.iter().position(|r| r["id"] == id);
    let locations = locations(report, subject);
    let mut results = Vec::new();
    for r in &report.results {
        if !matches!(r.status, Status::Fail | Status::NotImplemented) {
            continue;
        }
        results.push(json!({
            "ruleId": r.id,
            "ruleIndex": rule_index(r.id),
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
            results.extend(power_results(survey, &locations, &rule_index));
            if let Some(why) = survey.incomplete() {
                notifications.push(json!({
                    "level": "error",
                    "message": { "text": format!("power discovery is incomplete: {why}") },
                }));
            }
        }
        Some(Err(why)) => notifications.push(json!({
            "level": "error",
            "message": { "text": format!("power discovery could not run: {why}") },
        })),
        None => {}
    }
    for r in &report.results {
        if matches!(r.status, Status::Unverifiable | Status::Skipped) && !r.no_power_observed() {
            notifications.push(json!({
                "level": "warning",
                "message": { "text": format!("{} {}: {}", r.id, r.status.as_str(), r.actual) },
            }));
        }
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
            "properties": {
                "contract": report.contract_id,
                "network": report.network,
                "ranAt": report.ran_at,
            },
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).expect("a SARIF log serialises");
    text.push('\n');
    text
}

fn power_results(
    survey: &PowerSurvey,
    locations: &Value,
    rule_index: &dyn Fn(&str) -> Option<usize>,
) -> Vec<Value> {
    let mut out = Vec::new();
    for p in &survey.powers {
        let bit = p.effect.bit();
        let name = Mechanics::from_bits(bit)
            .and_then(|m| m.names().first().copied())
            .unwrap_or("unknown");
        out.push(json!({
            "ruleId": name,
            "ruleIndex": rule_index(name),
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
            "ruleIndex": rule_index("admin_unclassified"),
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
