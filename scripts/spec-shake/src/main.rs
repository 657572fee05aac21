//! `spec-shake [--drop-fn NAME]... IN.wasm OUT.wasm`: writes IN with its unused contract-spec
//! entries and its linker-only exports removed (see the library docs). `--drop-fn NAME` also
//! removes function NAME's spec entry (its export stays): only for fixtures that hide a function
//! from the spec. Run by `scripts/build-wasm.sh`; exit 0 on success, 1 on a module it cannot
//! shake (or a `--drop-fn` name it does not declare), 64 on a usage error. OUT is written through
//! a temporary file, so it is never partial.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut drop_fns = Vec::new();
    while args.first().map(String::as_str) == Some("--drop-fn") && args.len() > 1 {
        drop_fns.push(args.remove(1));
        args.remove(0);
    }
    let [input, output] = args.as_slice() else {
        eprintln!("usage: spec-shake [--drop-fn NAME]... IN.wasm OUT.wasm");
        return ExitCode::from(64);
    };
    match run(Path::new(input), Path::new(output), &drop_fns) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("spec-shake: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(input: &Path, output: &Path, drop_fns: &[String]) -> Result<(), String> {
    let wasm = std::fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let (mut shaken, report) =
        assay_spec_shake::shake(&wasm).map_err(|e| format!("{}: {e}", input.display()))?;
    if !drop_fns.is_empty() {
        let names: Vec<&str> = drop_fns.iter().map(String::as_str).collect();
        shaken = assay_spec_shake::drop_functions(&shaken, &names)
            .map_err(|e| format!("{}: {e}", input.display()))?;
        eprintln!(
            "spec-shake: {}: dropped the spec entries of {}",
            input.display(),
            names.join(", ")
        );
    }
    let (shaken, dropped) = assay_spec_shake::drop_linker_exports(&shaken)
        .map_err(|e| format!("{}: {e}", input.display()))?;
    if !dropped.is_empty() {
        eprintln!(
            "spec-shake: {}: dropped linker exports {}",
            input.display(),
            dropped.join(", ")
        );
    }
    let tmp = output.with_extension("shake.tmp");
    std::fs::write(&tmp, &shaken).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, output).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot move {} to {}: {e}", tmp.display(), output.display())
    })?;
    if report.shaking_version != 2 {
        eprintln!(
            "spec-shake: {}: spec shaking version {}: spec left as built",
            input.display(),
            report.shaking_version
        );
        return Ok(());
    }
    eprintln!(
        "spec-shake: {}: {} -> {} spec entries, {} -> {} bytes",
        input.display(),
        report.entries_before,
        report.entries_after,
        report.spec_bytes_before,
        report.spec_bytes_after
    );
    Ok(())
}
