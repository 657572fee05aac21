//! The TypeScript path of docs/integrating.md: bindings that `stellar contract bindings typescript`
//! generates from the built registry `.wasm` (scripts/ts-bindings.sh) read `get_safety` and `is_safe`
//! with @stellar/stellar-sdk against the local network, and see exactly the `Safety` that `assay verify`
//! reports for the same assets, attested and unattested.

use crate::world;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::quorum_cli::json_line;
use serde_json::Value;
use world::*;

const USDC: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
const AQUA: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";

/// Runs `assay` against the world as its attester; returns the exit code and stdout.
fn assay(w: &World, ca: &Path, args: &[&str]) -> (i32, String) {
    crate::quorum_cli::assay_as(w, ca, crate::quorum_cli::FIRST_SEED, args)
}

#[test]
fn typescript_bindings_read_the_safety_assay_verify_reports() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let w = World::start(&["circle.com", "aqua.network"]);
    w.issue("USDC", USDC, 2, Some("circle.com"));
    w.issue("AQUA", AQUA, 0, Some("aqua.network"));
    // Locked (master weight 0): no flag and no key, so no power over holders (clear).
    w.lock(AQUA);
    w.serve_eval("usdc-revocable-regulated", USDC, "circle.com");
    w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    let ca = w.ca();
    let (usdc, aqua) = (format!("USDC-{USDC}"), format!("AQUA-{AQUA}"));

    let (code, out) = assay(&w, &ca, &["attest", &usdc, "--output", "json"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = assay(&w, &ca, &["verify", &usdc, "--output", "json"]);
    assert_eq!(code, 0, "{out}");
    let verified = json_line(&out);
    assert_eq!(verified["verdict"], "agreement", "{verified}");
    assert_eq!(verified["severity"], 2, "USDC's issuer can freeze: medium");
    let (code, out) = assay(&w, &ca, &["verify", &aqua, "--output", "json"]);
    assert_eq!(code, 4, "{out}");
    let absent = json_line(&out);
    assert_eq!(absent["verdict"], "absent", "{absent}");

    let status = Command::new(root.join("scripts/ts-bindings.sh"))
        .arg(root.join("target/wasm/assay_registry.wasm"))
        .status()
        .expect("run scripts/ts-bindings.sh");
    assert!(status.success(), "scripts/ts-bindings.sh failed");
    let out = Command::new("node")
        .arg(root.join("examples/typescript/dist/read.js"))
        .arg(w.net.rpc_url())
        .arg(w.net.passphrase())
        .arg(format!("{}", stellar_strkey::Contract(w.registry)))
        .args([&usdc, &aqua])
        .output()
        .expect("node is needed for the TypeScript test (scripts/setup.sh)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node read.js failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reads: Vec<Value> = stdout.lines().map(json_line).collect();
    assert_eq!(reads.len(), 2, "{stdout}");

    // The attested asset: the same contract and the same Safety fields as `assay verify`.
    let usdc_read = &reads[0];
    assert_eq!(usdc_read["contract"], verified["contract"], "{usdc_read}");
    for field in ["severity", "flags", "evidence_hash"] {
        assert_eq!(
            usdc_read["safety"][field], verified[field],
            "{field}: TypeScript read {usdc_read}, assay verify {verified}"
        );
    }
    let attested_at: u64 = usdc_read["safety"]["attested_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(attested_at > 0, "{usdc_read}");
    assert_eq!(
        usdc_read["is_safe_medium"], true,
        "medium within a ceiling of 2"
    );
    assert_eq!(
        usdc_read["is_safe_low"], false,
        "medium above a ceiling of 1"
    );

    // The unattested asset: nothing, and never safe.
    let aqua_read = &reads[1];
    assert_eq!(aqua_read["contract"], absent["contract"], "{aqua_read}");
    assert_eq!(aqua_read["safety"], Value::Null, "{aqua_read}");
    assert_eq!(aqua_read["is_safe_low"], false);
    assert_eq!(aqua_read["is_safe_medium"], false);
}
