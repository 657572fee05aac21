//! `assay attestation` run as the real binary, on reports produced by assay-core from eval subjects and on a
//! hand-written report file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn assay(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env_remove("ASSAY_MAX_AGE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("assay runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn eval_report(name: &str) -> String {
    let dir = testdata().join("eval").join(name);
    let read = |f: &str| std::fs::read(dir.join(f)).ok();
    let subject = assay_core::replay::load_subject(&read).unwrap();
    assay_core::evaluate(&subject).unwrap().to_json_pretty()
}

fn write_temp(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

const AS_OF: &str = "2026-08-10T18:00:00Z";

#[test]
fn raw_parameters_from_an_eval_report() {
    let report = write_temp(&eval_report("berkshire-clawback-malicious"));
    let path = report.path().to_str().unwrap();
    let o = assay(
        &[
            "attestation",
            "--from-report",
            path,
            "--raw",
            "--as-of",
            AS_OF,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = stdout(&o);
    let fields: Vec<&str> = line.trim_end_matches('\n').split('\t').collect();
    assert_eq!(fields[..2], ["4", "54"]);
    assert_eq!(fields[2].len(), 64);
    assert!(fields[2]
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert!(line.ends_with('\n') && line.matches('\n').count() == 1);

    // The same parameters through stdin, as JSON with the preimage, hash the preimage that is printed.
    let o = assay(
        &[
            "attestation",
            "--from-report",
            "-",
            "--output",
            "json",
            "--preimage",
            "--as-of",
            AS_OF,
        ],
        Some(&eval_report("berkshire-clawback-malicious")),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["evidence_hash"], fields[2]);
    assert_eq!(v["severity_name"], "critical");
    // Attested in v8 by default (v6's lines, who can use the issuer's powers included, with no operator
    // endpoint, as in v7).
    assert_eq!(v["evidence_version"], 8);
    assert!(!v["preimage"]
        .as_str()
        .unwrap()
        .contains("horizon.stellar.org"));
    let preimage = v["preimage"].as_str().unwrap();
    use sha2_check::digest_hex;
    assert_eq!(digest_hex(preimage.as_bytes()), fields[2]);
}

/// Minimal SHA-256 via the system `sha256sum`, so the test does not trust the crate under test.
mod sha2_check {
    use std::io::Write;
    use std::process::{Command, Stdio};

    pub fn digest_hex(bytes: &[u8]) -> String {
        let mut child = Command::new("sha256sum")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sha256sum");
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    }
}

#[test]
fn hand_written_report_matches_the_committed_v3_vector() {
    let path = testdata().join("reports/hand-written-usdz.json");
    let digest = std::fs::read_to_string(testdata().join("vectors/version-v3.digest")).unwrap();
    let o = assay(
        &[
            "attestation",
            "--from-report",
            path.to_str().unwrap(),
            "--raw",
            "--evidence-version",
            "3",
            "--as-of",
            AS_OF,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("3\t6\t{}\n", digest.trim()));
    let v1 = std::fs::read_to_string(testdata().join("vectors/version-v1.digest")).unwrap();
    let o = assay(
        &[
            "attestation",
            "--from-report",
            path.to_str().unwrap(),
            "--raw",
            "--evidence-version",
            "1",
            "--as-of",
            AS_OF,
        ],
        None,
    );
    assert_eq!(stdout(&o), format!("3\t6\t{}\n", v1.trim()));
    let o = assay(
        &[
            "attestation",
            "--from-report",
            path.to_str().unwrap(),
            "--as-of",
            AS_OF,
        ],
        None,
    );
    let text = stdout(&o);
    assert!(text.contains("severity        3 (high)"), "{text}");
    assert!(
        text.contains("flags           6 [auth_revocable, auth_clawback_enabled]"),
        "{text}"
    );
}

#[test]
fn refusals_exit_1_and_name_the_rule() {
    let outage = write_temp(&eval_report("doge-reputation-outage"));
    let o = assay(
        &[
            "attestation",
            "--from-report",
            outage.path().to_str().unwrap(),
            "--as-of",
            AS_OF,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("assay: attest: scan is undetermined, so there is nothing to attest: reputation could not complete"), "{}", stderr(&o));
    assert!(stderr(&o).contains("rule 3 (undetermined)"));

    let aqua = write_temp(&eval_report("aqua-clear-verified"));
    let o = assay(
        &[
            "attestation",
            "--from-report",
            aqua.path().to_str().unwrap(),
            "--as-of",
            "2026-08-11T12:00:01Z",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("attest: report is stale, so it cannot be attested as fresh: verdict age 24h0m1s exceeds policy window 24h0m0s"), "{}", stderr(&o));
    assert!(stderr(&o).contains("rule 2 (stale)"));
    // Exactly at the window is still fresh; --max-age widens it.
    let o = assay(
        &[
            "attestation",
            "--from-report",
            aqua.path().to_str().unwrap(),
            "--as-of",
            "2026-08-11T12:00:00Z",
            "--raw",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = assay(
        &[
            "attestation",
            "--from-report",
            aqua.path().to_str().unwrap(),
            "--as-of",
            "2026-08-12T12:00:00Z",
            "--max-age",
            "72h",
            "--raw",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let outage = write_temp(&eval_report("doge-reputation-outage"));
    let o = assay(
        &[
            "attestation",
            "--from-report",
            outage.path().to_str().unwrap(),
            "--as-of",
            AS_OF,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("reputation could not complete"));

    // A hand-edited report with the clawback bit below high.
    let hand = std::fs::read_to_string(testdata().join("reports/hand-written-usdz.json")).unwrap();
    let bad = hand.replace(
        "\"severity\": \"high\",\n  \"base_severity\": \"high\"",
        "\"severity\": \"medium\",\n  \"base_severity\": \"medium\"",
    );
    assert_ne!(bad, hand);
    let o = assay(
        &["attestation", "--from-report", "-", "--as-of", AS_OF],
        Some(&bad),
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains(
        "attest: attestation violates the confiscation invariant: clawback bit set at severity 2"
    ));
    assert!(stderr(&o).contains("rule 4 (inconsistent)"));
}

#[test]
fn usage_errors_exit_64() {
    let hand = testdata().join("reports/hand-written-usdz.json");
    let hand = hand.to_str().unwrap();
    for args in [
        vec!["attestation"],
        vec![
            "attestation",
            "--from-report",
            hand,
            "--evidence-version",
            "9",
        ],
        vec![
            "attestation",
            "--from-report",
            hand,
            "--raw",
            "--output",
            "json",
        ],
        vec!["attestation", "--from-report", hand, "--max-age", "1d"],
        vec!["attestation", "--from-report", hand, "--as-of", "yesterday"],
        vec!["attestation", "--from-report", "/nonexistent/report.json"],
    ] {
        let o = assay(&args, None);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty());
    }
    let o = assay(
        &["attestation", "--from-report", "-"],
        Some("{\"schema_version\": 1}"),
    );
    assert_eq!(o.status.code(), Some(64));
    assert!(
        stderr(&o).contains("standard input is not a valid report"),
        "{}",
        stderr(&o)
    );
    let o = assay(&["attestation", "--help"], None);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Exit codes:") && stdout(&o).contains("4 inconsistent"));
}
