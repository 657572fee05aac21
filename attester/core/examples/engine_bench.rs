//! Throughput of the judgment core over the eval set, with a baseline measured in the same run.
//!
//! `cargo run --release -p assay-core --example engine_bench [ITERATIONS]`
//!
//! Baseline: a serde_json round trip of each Subject (work any consumer of the subject must do anyway). The
//! figures are ratios against it, so they mean the same on a slow or a fast machine. Nothing is asserted.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use assay_core::hash::{evidence_hash, EvidenceVersion, PreimageInput};
use assay_core::{evaluate, Report, Subject};

fn subjects() -> Vec<(String, Subject)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/eval");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("testdata/eval")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("subject.json").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| {
            let read = |n: &str| std::fs::read(d.join(n)).ok();
            let s = assay_core::replay::load_subject(&read).expect("eval subject loads");
            (d.file_name().unwrap().to_string_lossy().into_owned(), s)
        })
        .collect()
}

fn time<F: FnMut()>(iterations: u32, mut f: F) -> f64 {
    f(); // warm up
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(iterations)
}

fn main() {
    let iterations: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000);
    let set = subjects();
    let reports: Vec<Report> = set.iter().map(|(_, s)| evaluate(s).unwrap()).collect();
    let inputs: Vec<PreimageInput> = reports
        .iter()
        .filter_map(|r| PreimageInput::from_report(r).ok())
        .collect();
    let jsons: Vec<String> = reports.iter().map(Report::to_json_pretty).collect();

    let baseline = time(iterations, || {
        for (_, s) in &set {
            let text = serde_json::to_string(s).unwrap();
            black_box(serde_json::from_str::<Subject>(&text).unwrap());
        }
    });
    let engine = time(iterations, || {
        for (_, s) in &set {
            black_box(evaluate(black_box(s)).unwrap());
        }
    });
    let hashing = time(iterations, || {
        for p in &inputs {
            black_box(evidence_hash(black_box(p), EvidenceVersion::V3));
        }
    });
    let report_json = time(iterations, || {
        for r in &reports {
            black_box(r.to_json_pretty());
        }
    });
    let report_parse = time(iterations, || {
        for j in &jsons {
            black_box(Report::from_json(black_box(j)).unwrap());
        }
    });
    let n = set.len() as f64;
    println!(
        "assay-core engine_bench: {} eval subjects, {iterations} iterations each",
        set.len()
    );
    println!(
        "{:<34}{:>12}{:>14}",
        "operation", "µs/subject", "× baseline"
    );
    for (name, us) in [
        ("baseline: subject JSON round trip", baseline),
        ("evaluate (4 checks + report)", engine),
        ("evidence_hash v3", hashing * n / inputs.len() as f64),
        ("report to JSON", report_json),
        ("report strict parse", report_parse),
    ] {
        println!("{name:<34}{:>12.2}{:>14.2}", us / n, us / baseline);
    }
}
