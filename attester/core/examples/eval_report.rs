//! Prints the report JSON for one eval subject directory: `cargo run -p assay-core --example eval_report -- DIR`.
//! Reads files here, in the example, so the library itself stays free of I/O.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: eval_report DIR   (a testdata/eval/<name> directory)");
        return ExitCode::from(64);
    };
    let read = |name: &str| std::fs::read(dir.join(name)).ok();
    let subject = match assay_core::replay::load_subject(&read) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("eval_report: {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    match assay_core::evaluate(&subject) {
        Ok(report) => {
            print!("{}", report.to_json_pretty());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("eval_report: {e}");
            ExitCode::FAILURE
        }
    }
}
