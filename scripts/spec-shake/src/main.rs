//! `spec-shake IN.wasm OUT.wasm`: writes IN with its unused contract-spec entries and its
//! linker-only exports removed (see the library docs). Run by `scripts/build-wasm.sh`; exit 0 on
//! success, 1 on a module it cannot shake, 64 on a usage error. OUT is written through a temporary
//! file, so it is never partial.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: spec-shake IN.wasm OUT.wasm");
        return ExitCode::from(64);
    };
    match run(Path::new(input), Path::new(output)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("spec-shake: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(input: &Path, output: &Path) -> Result<(), String> {
    let wasm = std::fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let (shaken, report) =
        assay_spec_shake::shake(&wasm).map_err(|e| format!("{}: {e}", input.display()))?;
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
