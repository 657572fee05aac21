//! `assay history` against a database another process is writing, and one with corrupt rows.
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use assay_scan::history::History;
use serde_json::Value;

const USDZ: &str = "USDZ-GAKTLPC4ZV37SSCITQ5IS5AQ4WPF4CF4VZJQPPAROSGXMYOATF5U6XPR";

fn report() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/reports/hand-written-usdz.json"
    ))
    .unwrap()
}

fn history(path: &std::path::Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["history", "--output", "json", "--history"])
        .arg(path)
        .arg(USDZ)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue #16 item 9: `assay history` reads while `watch` holds a write lock (WAL mode and a busy
/// timeout), and a corrupt row is reported and skipped, counted in `corrupt`, never aborting the
/// listing nor silently dropped.
#[test]
fn item9_history_reads_during_a_write_and_skips_corrupt_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let report = report();
    let row = |at: &str| (USDZ.to_string(), at.to_string(), report.clone());
    History::open(&path)
        .unwrap()
        .append(&[row("2026-08-10T12:00:00Z"), row("2026-08-11T12:00:00Z")])
        .unwrap();

    // A writer (as `watch` appending) holds the database's write lock while `assay history` runs.
    let (locked, held) = mpsc::channel();
    let (release, done) = mpsc::channel::<()>();
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        let store = History::open(&writer_path).unwrap();
        let conn = store.connection().unwrap();
        conn.execute_batch(&format!(
            "BEGIN EXCLUSIVE; INSERT INTO observations (asset, scanned_at, report_json) \
             VALUES ('{USDZ}', '2026-08-12T12:00:00Z', 'not json');"
        ))
        .unwrap();
        locked.send(()).unwrap();
        let _ = done.recv_timeout(Duration::from_secs(30));
        conn.execute_batch("COMMIT").unwrap();
    });
    held.recv().unwrap();
    let (code, out, err) = history(&path);
    release.send(()).unwrap();
    writer.join().unwrap();
    assert!(!err.contains("locked"), "{err}");
    assert_eq!(code, 0, "{err}");
    let listing: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listing["observations"].as_array().unwrap().len(), 2);
    assert_eq!(listing["corrupt"], serde_json::json!([]));

    // Now committed: a row that is not JSON, and one whose report is not text at all.
    let store = History::open(&path).unwrap();
    store
        .connection()
        .unwrap()
        .execute_batch(&format!(
            "INSERT INTO observations (asset, scanned_at, report_json) \
             VALUES ('{USDZ}', '2026-08-13T12:00:00Z', X'00ff');"
        ))
        .unwrap();
    drop(store);
    History::open(&path)
        .unwrap()
        .append(&[row("2026-08-14T12:00:00Z")])
        .unwrap();
    let (code, out, err) = history(&path);
    assert_eq!(code, 1, "a corrupt row is an integrity failure: {err}");
    let listing: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        listing["observations"].as_array().unwrap().len(),
        3,
        "every readable row is still listed: {listing}"
    );
    assert_eq!(listing["transitions"].as_array().unwrap().len(), 2);
    let corrupt: Vec<i64> = listing["corrupt"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(corrupt, [3, 4], "{listing}");
    for id in corrupt {
        assert!(
            err.contains(&format!(
                "observation {id} of {USDZ} is corrupt and was skipped"
            )),
            "{err}"
        );
    }
}
