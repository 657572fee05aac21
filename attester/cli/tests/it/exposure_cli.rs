//! Issue #26, item 4: a holder's own exposure. `assay exposure G…` lists every trustline of an account with
//! each asset's powers and the trustline's own state; `assay scan ASSET --holder G…` adds that one
//! trustline. Off-chain only: such a report is refused by `assay attestation` (rule holder).

use crate::world;

use std::process::Command;

use serde_json::Value;
use world::*;

use super::latent_freeze_cli::{g, mechanics, seed, serve_clean};

const AUTHORIZED: u32 = 1;
const TL_CLAWBACK_ENABLED: u32 = 4;

/// Runs `assay ARGS` against the world with `--network local`; (exit code, stdout, stderr).
fn assay(w: &World, ca: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .args(w.source_args(ca))
        .env("STELLAR_NETWORK", "local")
        .env_remove("STELLAR_NETWORK_PASSPHRASE")
        .env("HOME", w.dir.path())
        .env("XDG_DATA_HOME", w.dir.path().join("data"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn holder_finding(report: &Value) -> &Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "holder-trustline")
        .unwrap_or_else(|| panic!("no holder-trustline finding: {report:#}"))
}

#[test]
fn exposure_lists_each_trustline_with_its_own_state() {
    let domains = ["claw.example", "frozen.example", "plain.example"];
    let w = World::start(&domains);
    let ca = w.ca();
    // Issuers: clawback (revocable + clawback), revocable, and a locked-flags issuer with no power.
    let claw = w.issue("CLW", &g(&seed(81)), 2 | 8, Some("claw.example"));
    let frozen = w.issue("FRZ", &g(&seed(82)), 2, Some("frozen.example"));
    let plain = w.issue("PLN", &g(&seed(83)), 4, Some("plain.example"));
    serve_clean(&w, "CLW", &claw.issuer, "claw.example");
    serve_clean(&w, "FRZ", &frozen.issuer, "frozen.example");
    serve_clean(&w, "PLN", &plain.issuer, "plain.example");
    // The holder: clawback enabled on its CLW trustline, its FRZ trustline deauthorized, PLN plain.
    let holder_key = seed(84);
    let holder = assay_localnet::txbuild::public_account(&holder_key);
    w.net.fund(&holder).unwrap();
    for (asset, flags) in [
        (&claw, AUTHORIZED | TL_CLAWBACK_ENABLED),
        (&frozen, 0),
        (&plain, AUTHORIZED),
    ] {
        w.net
            .admin_set_trustline(&holder, &asset.xdr(), 5_000_000, i64::MAX, flags)
            .unwrap();
    }
    let holder_g = g(&holder_key);

    let (code, out, err) = assay(&w, &ca, &["exposure", &holder_g, "--output", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let reports: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON report per line"))
        .collect();
    assert_eq!(reports.len(), 3, "{out}");
    let by_code = |code: &str| {
        reports
            .iter()
            .find(|r| r["asset"]["code"] == code)
            .unwrap_or_else(|| panic!("no report for {code}: {out}"))
    };
    // Clawback on the trustline: bit 6, beside the asset's own powers.
    let r = by_code("CLW");
    assert_eq!(r["severity"], "high");
    assert_eq!(
        mechanics(r),
        [
            "auth_revocable",
            "auth_clawback_enabled",
            "trustline_clawback_enabled"
        ]
    );
    assert!(holder_finding(r)["reasoning"]
        .as_str()
        .unwrap()
        .contains("clawback is enabled on it"));
    // Deauthorized: bit 7, and the state in words.
    let r = by_code("FRZ");
    assert_eq!(mechanics(r), ["auth_revocable", "trustline_deauthorized"]);
    assert!(holder_finding(r)["reasoning"]
        .as_str()
        .unwrap()
        .contains("deauthorized (frozen)"));
    // Plain: no holder bit, and the asset itself is clear.
    let r = by_code("PLN");
    assert_eq!(r["severity"], "clear");
    assert_eq!(mechanics(r), ["auth_immutable"]);
    assert!(holder_finding(r)["evidence"][0]["claim"]
        .as_str()
        .unwrap()
        .contains(
            "authorized=true authorized_to_maintain_liabilities=false clawback_enabled=false"
        ));

    // Text: the trustline's state is shown beside the asset's powers.
    let (code, out, err) = assay(&w, &ca, &["exposure", &holder_g]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("deauthorized (frozen)"), "{out}");
    assert!(out.contains("who can use the issuer's powers"), "{out}");

    // scan --holder: the one trustline; and such a report is never attested.
    let frz = format!("FRZ-{}", frozen.issuer);
    let (code, out, err) = assay(
        &w,
        &ca,
        &[
            "scan",
            &frz,
            "--holder",
            &holder_g,
            "--no-history",
            "--output",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(mechanics(&report).contains(&"trustline_deauthorized".to_string()));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("holder.json");
    std::fs::write(&file, out.lines().next().unwrap()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["attestation", "--from-report", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "refused");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("rule 6 (holder)"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // A malformed holder is a usage error naming it.
    let (code, _, err) = assay(&w, &ca, &["exposure", "GNOTANACCOUNT"]);
    assert_eq!(code, 64, "{err}");
    assert!(err.contains("--holder"), "{err}");
}
