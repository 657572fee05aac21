//! `assay watch` entries named by `C…`: a custom token judged by its code (with `sep41 = true`, the
//! suite keyless on a fork of the network) and a classic asset's Stellar Asset Contract given by its
//! address (the issuer's flags, plus its admin()). The first pass writes both; the second finds them
//! fresh and leaves them alone; `assay verify C…` agrees with each.

use crate::world;

use std::process::Command;

use assay_attest::registry::read_safety;
use world::*;

const AQUA: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";

fn attester_secret() -> String {
    format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]))
}

/// One `assay watch --once` pass; its JSON log events.
fn watch_once(w: &World, config: &std::path::Path) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--once", "--config"])
        .arg(config)
        .env("STELLAR_SECRET_KEY", attester_secret())
        .env("HOME", w.dir.path())
        .env_remove("ASSAY_OWNER_SECRET")
        .env_remove("ASSAY_SPENDER_SECRET")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains(&attester_secret()));
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn event<'a>(events: &'a [serde_json::Value], asset: &str, kind: &str) -> &'a serde_json::Value {
    events
        .iter()
        .find(|e| e["asset"] == asset && e["event"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event for {asset}: {events:?}"))
}

#[test]
fn watch_attests_token_contracts_and_stellar_asset_contracts_by_address() {
    let w = World::start(&["aqua.network"]);
    let ca = w.ca();

    // A custom token whose code can be replaced (bit 9: high), and a conformant token with units
    // for a holder its mint event names, watched with sep41 = true.
    let upgradable = w.deploy_token("upgradable_token", 51);
    let conformant = w.deploy_token("conformant_token", 52);
    w.mint(conformant, 13);
    // A classic asset's Stellar Asset Contract, named by its address.
    let aqua = w.issue("AQUA", AQUA, 0, Some("aqua.network"));
    // Locked (master weight 0): no flag and no key, so no power over holders (clear).
    w.lock(AQUA);
    w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    w.invoker(&w.admin)
        .deploy_sac(&aqua.xdr())
        .expect("deploy the SAC");
    let sac = assay_attest::sac::asset_contract_id(&aqua.core(), &w.spec.passphrase).unwrap();

    let id = |c: [u8; 32]| format!("{}", stellar_strkey::Contract(c));
    let (upg, conf, sac_id) = (id(upgradable), id(conformant), id(sac));
    let config = w.dir.path().join("watch.toml");
    std::fs::write(
        &config,
        w.watch_toml(&ca, &w.dir.path().join("h.sqlite3"), &["aqua.network"])
            + &format!(
                "[[asset]]\nasset = \"{upg}\"\n[[asset]]\nasset = \"{conf}\"\nsep41 = true\n\
                 [[asset]]\nasset = \"{sac_id}\"\n"
            ),
    )
    .unwrap();

    let first = watch_once(&w, &config);
    let written = event(&first, &upg, "written");
    assert_eq!(
        (written["severity"].as_u64(), written["flags"].as_u64()),
        (Some(3), Some(512))
    );
    let suite = event(&first, &conf, "sep41");
    assert_eq!(suite["verdict"], "conformant", "{suite}");
    let written = event(&first, &conf, "written");
    assert_eq!(
        (written["severity"].as_u64(), written["flags"].as_u64()),
        (Some(0), Some(4096))
    );
    let written = event(&first, &sac_id, "written");
    assert_eq!(
        (written["severity"].as_u64(), written["flags"].as_u64()),
        (Some(0), Some(0))
    );
    for (c, e) in [(upgradable, &upg), (conformant, &conf), (sac, &sac_id)] {
        let on_chain = read_safety(&w.rpc, w.registry, c)
            .unwrap()
            .expect("attested");
        let hash = event(&first, e, "written")["evidence_hash"].clone();
        assert_eq!(hex::encode(on_chain.evidence_hash), hash.as_str().unwrap());
    }

    // The SAC's report carries its admin(): the issuer, who deployed nothing but holds the asset.
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args([
            "scan",
            &sac_id,
            "--network",
            "local",
            "--no-history",
            "--output",
            "json",
        ])
        .args(["--rpc-url", &w.net.rpc_url()])
        .args(["--network-passphrase", w.net.passphrase()])
        .args(w.source_args(&ca))
        .env("HOME", w.dir.path())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        (report["evidence"].as_array().unwrap().iter())
            .any(|e| e["claim"] == format!("admin() is the issuer {AQUA}")),
        "{report}"
    );

    // The second pass re-derives the same values (the suite again, keyless) and writes nothing.
    let second = watch_once(&w, &config);
    for e in [&upg, &conf, &sac_id] {
        event(&second, e, "unchanged");
    }

    // verify C… agrees with each, the conformant token's by re-running the suite unasked.
    for e in [&upg, &conf, &sac_id] {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["verify", e.as_str(), "--output", "json"])
            .args(w.cli_args(&ca))
            .env("HOME", w.dir.path())
            .env_remove("ASSAY_OWNER_SECRET")
            .env_remove("ASSAY_SPENDER_SECRET")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{e}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("\"verdict\":\"agreement\""), "{stdout}");
    }
}
