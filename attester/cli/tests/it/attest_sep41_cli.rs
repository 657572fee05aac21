//! `assay attest --sep41` and `watch` with `sep41 = true`, as the real binary on the local network: the
//! suite runs against the asset's Stellar Asset Contract, its verdicts are bound by the evidence hash that
//! lands on chain, a missing premise leaves the report unattested with its rule, and no secret (attester,
//! holder, spender) appears in any output.

use crate::world;

use std::process::Command;

use assay_attest::registry::read_safety;
use assay_attest::scanning::scan_subjects;
use assay_attest::sep41::{evaluate_subject, Sep41Runner};
use assay_attest::{decide, Decision};
use assay_chain::Signer;
use assay_core::{attestation_params, EvidenceVersion, Freshness};
use sha2::{Digest, Sha256};
use world::*;

fn secret(seed: u8) -> String {
    format!("{}", stellar_strkey::ed25519::PrivateKey([seed; 32]))
}

struct Env<'a> {
    w: &'a World,
    ca: std::path::PathBuf,
    /// Every secret any run is given: none may appear in any output.
    secrets: Vec<String>,
}

impl Env<'_> {
    fn common(&self) -> Vec<String> {
        self.w.cli_args(&self.ca)
    }

    /// Runs `assay ARGS…` with the attester's secret in STELLAR_SECRET_KEY and `owner`/`spender` secrets
    /// (seeds) in ASSAY_OWNER_SECRET / ASSAY_SPENDER_SECRET.
    fn run(&self, args: &[&str], owner: Option<u8>, spender: Option<u8>) -> (i32, String, String) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_assay"));
        cmd.args(args)
            .args(self.common())
            .env("STELLAR_SECRET_KEY", secret(12))
            .env("HOME", self.w.dir.path())
            .env("XDG_DATA_HOME", self.w.dir.path().join("data"))
            .env_remove("STELLAR_NETWORK")
            .env_remove("ASSAY_OWNER_SECRET")
            .env_remove("ASSAY_SPENDER_SECRET");
        if let Some(seed) = owner {
            cmd.env("ASSAY_OWNER_SECRET", secret(seed));
        }
        if let Some(seed) = spender {
            cmd.env("ASSAY_SPENDER_SECRET", secret(seed));
        }
        let out = cmd.output().unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        );
        self.assert_no_secret(&o, &e);
        (out.status.code().unwrap_or(-1), o, e)
    }

    fn assert_no_secret(&self, out: &str, err: &str) {
        for s in &self.secrets {
            assert!(
                !out.contains(s.as_str()) && !err.contains(s.as_str()),
                "secret leaked:\n{out}\n{err}"
            );
        }
    }
}

fn json_line(out: &str) -> serde_json::Value {
    serde_json::from_str(out.lines().next().expect("a line")).expect("JSON")
}

#[test]
fn attest_with_sep41_binds_the_suite_and_refuses_missing_premises() {
    let w = World::start(&["aqua.network"]);
    let aqua = w.clear_aqua();
    // The asset's Stellar Asset Contract, deployed as anyone may.
    w.invoker(&w.admin)
        .deploy_sac(&aqua.xdr())
        .expect("deploy the SAC");
    let sac = assay_attest::sac::asset_contract_id(&aqua.core(), &w.spec.passphrase).unwrap();
    // Holder: the World's seed-13 account, trustline with 1 AQUA (10^7 units). Spender: seed 14, funded,
    // empty authorized trustline. Seed 15: funded, no trustline (a missing premise).
    let spender = Signer::from_bytes([14; 32]);
    let stranger = Signer::from_bytes([15; 32]);
    for s in [&spender, &stranger] {
        w.net.fund(&account_id(s.public_key())).unwrap();
    }
    w.net
        .admin_set_trustline(
            &account_id(spender.public_key()),
            &aqua.xdr(),
            0,
            i64::MAX,
            1,
        )
        .unwrap();
    let env = Env {
        w: &w,
        ca: w.ca(),
        secrets: (11..=15).map(secret).collect(),
    };
    let asset = format!("AQUA-{AQUA}");

    // Without the suite: the plain hash (dry run).
    let (code, out, err) = env.run(
        &["attest", &asset, "--dry-run", "--output", "json"],
        None,
        None,
    );
    assert_eq!(code, 0, "{out}{err}");
    let plain = json_line(&out);
    assert_eq!(plain["status"], "simulated");
    assert!(plain.get("sep41").is_none(), "{plain}");
    let plain_hash = plain["evidence_hash"].as_str().unwrap().to_string();

    // (a) With the suite: twenty-five PASS rows (the two power-event rows SKIPPED), written, and the
    // sep41 object in the JSON line.
    let (code, out, err) = env.run(
        &["attest", &asset, "--sep41", "--output", "json"],
        Some(13),
        Some(14),
    );
    assert_eq!(code, 0, "{out}{err}");
    let line = json_line(&out);
    assert_eq!(line["status"], "written", "{line}");
    assert_eq!(line["severity"], 0, "{line}");
    assert_eq!(line["flags"], 0, "{line}");
    let sep41 = &line["sep41"];
    assert_eq!(sep41["verdict"], "conformant", "{sep41}");
    assert_eq!(
        sep41["contract"],
        format!("{}", stellar_strkey::Contract(sac))
    );
    let rows = sep41["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 27, "{sep41}");
    // Every row held; the two power-event rows had no exercised power to judge, and stay out of
    // the evidence lines.
    let power_event = |r: &&serde_json::Value| {
        assay_sep41::model::POWER_EVENT_CHECKS.contains(&r["id"].as_str().unwrap())
    };
    assert!(
        (rows.iter().filter(|r| !power_event(r))).all(|r| r["status"] == "PASS"),
        "{sep41}"
    );
    assert!(
        (rows.iter().filter(power_event)).all(|r| r["status"] == "SKIPPED"),
        "{sep41}"
    );
    assert_eq!(sep41["evidence_lines"].as_array().unwrap().len(), 25);
    assert!(
        rows.iter()
            .any(|r| r["id"] == "sep41-transfer"
                && r["tx_hash"].as_str().is_some_and(|h| h.len() == 64)),
        "write checks carry their transaction: {sep41}"
    );
    let written_hash = line["evidence_hash"].as_str().unwrap().to_string();
    assert_ne!(
        written_hash, plain_hash,
        "the sep41 lines are bound: the hash differs from the same asset without --sep41"
    );
    let on_chain = read_safety(&w.rpc, w.registry, sac)
        .unwrap()
        .expect("attested");
    assert_eq!(hex::encode(on_chain.evidence_hash), written_hash);
    assert_eq!((on_chain.severity, on_chain.flags), (0, 0));

    // The hash read back is SHA-256 over a preimage holding the twenty-five sep41 lines: rebuild it through
    // the library (the suite runs again; same verdicts, same lines — the lines bind verdicts, not the
    // run's balances or transaction hashes).
    let parties = assay_sep41::live::Parties {
        holder: party(&Signer::from_bytes([13; 32])),
        holder_key: Some(Signer::from_bytes([13; 32])),
        spender: party(&spender),
        spender_key: Some(spender.clone()),
    };
    let runner = Sep41Runner {
        rpc_url: w.spec.rpc_url.clone(),
        passphrase: w.spec.passphrase.clone(),
        parties: Some(parties),
    };
    let run = runner.run(sac);
    let subject = scan_subjects(&w.settings(&["aqua.network"]), &[aqua.core()])
        .unwrap()
        .remove(0)
        .unwrap();
    let now = assay_core::Timestamp::now();
    let report = evaluate_subject(&subject, Some(&run), now).unwrap();
    let params = attestation_params(
        &report,
        now,
        Freshness::default(),
        EvidenceVersion::DEFAULT,
        true,
    )
    .unwrap();
    let preimage = params.preimage.expect("asked for the preimage");
    let sep41_lines: Vec<&str> = preimage.lines().filter(|l| l.contains("sep41-")).collect();
    assert_eq!(sep41_lines.len(), 25, "{preimage}");
    assert!(
        sep41_lines
            .iter()
            .any(|l| l.contains("sep41-transfer-self PASS: requires accepted or refused")),
        "{preimage}"
    );
    assert_eq!(
        hex::encode(Sha256::digest(preimage.as_bytes())),
        written_hash
    );
    assert!(
        matches!(decide(&report, now, Freshness::default()), Decision::Attest(p) if p.evidence_hash == written_hash)
    );

    // Text output: the suite's summary line per asset, then what was written.
    let (code, out, err) = env.run(
        &["attest", &asset, "--sep41", "--dry-run"],
        Some(13),
        Some(14),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "{asset}  sep41 conformant on {}: 27 checks: 25 pass, 0 fail, 0 unverifiable, 2 skipped, 0 not implemented",
            stellar_strkey::Contract(sac)
        )),
        "{out}"
    );
    assert!(out.contains(&format!("hash {written_hash}")), "{out}");

    // watch with sep41 = true: the suite runs on every check; same verdicts, same hash, so the fresh
    // on-chain value is left alone.
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(
        &cfg,
        w.watch_toml(&env.ca, &w.dir.path().join("h.sqlite3"), &["aqua.network"])
            + &format!("[[asset]]\nasset = \"{asset}\"\nsep41 = true\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--once", "--config"])
        .arg(&cfg)
        .env("STELLAR_SECRET_KEY", secret(12))
        .env("ASSAY_OWNER_SECRET", secret(13))
        .env("ASSAY_SPENDER_SECRET", secret(14))
        .env("HOME", w.dir.path())
        .output()
        .unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    env.assert_no_secret(&o, &e);
    let events: Vec<serde_json::Value> = e
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let event = |name: &str| {
        events
            .iter()
            .find(|v| v["event"] == name)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(event("sep41")["verdict"], "conformant", "{e}");
    assert_eq!(event("unchanged")["asset"], asset.as_str(), "{e}");
    assert_eq!(out.status.code(), Some(0), "{e}");

    // (c) A missing premise: the holder (seed 15) has no trustline, so the balance-dependent checks are
    // UNVERIFIABLE: not attested, rule `undetermined`, exit 3 (refused); the chain still holds (a).
    let (code, out, err) = env.run(
        &["attest", &asset, "--sep41", "--output", "json"],
        Some(15),
        Some(14),
    );
    assert_eq!(code, 3, "{out}{err}");
    let line = json_line(&out);
    assert_eq!(line["status"], "refused", "{line}");
    assert_eq!(line["rule"], "undetermined", "{line}");
    assert!(line["reason"].as_str().unwrap().contains("sep41"), "{line}");
    assert_eq!(line["sep41"]["verdict"], "incomplete", "{line}");
    let unverifiable = line["sep41"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "UNVERIFIABLE")
        .count();
    assert!(unverifiable > 0, "{line}");
    assert!(
        line["sep41"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] != "FAIL"),
        "a missing premise is never a FAIL: {line}"
    );
    let still = read_safety(&w.rpc, w.registry, sac).unwrap().unwrap();
    assert_eq!(hex::encode(still.evidence_hash), written_hash);
    // The text form names the rule and lists the rows that did not pass.
    let (code, out, _) = env.run(&["attest", &asset, "--sep41"], Some(15), Some(14));
    assert_eq!(code, 3);
    assert!(out.contains("sep41 incomplete on "), "{out}");
    assert!(out.contains(" UNVERIFIABLE: "), "{out}");
    assert!(out.contains("not attested (undetermined)"), "{out}");

    // No key for the suite: it runs keyless on a fork of the network (the holder's units taken
    // over there from a holder the asset's events name, nothing signed for the suite), reaches the
    // same twenty-five PASS
    // verdicts and so the same hash as the keyed run (a); only the attester signs, for the registry.
    let (code, out, err) = env.run(
        &["attest", &asset, "--sep41", "--output", "json"],
        None,
        None,
    );
    assert_eq!(code, 0, "{out}{err}");
    let keyless = json_line(&out);
    assert_eq!(keyless["sep41"]["verdict"], "conformant", "{keyless}");
    assert_eq!(
        keyless["sep41"]["fork"]["premise"], "discovered",
        "{keyless}"
    );
    assert!(keyless["sep41"]["fork"]["ledger"].as_u64().is_some());
    assert_eq!(keyless["evidence_hash"], written_hash.as_str(), "{keyless}");
    let on_chain = read_safety(&w.rpc, w.registry, sac).unwrap().unwrap();
    assert_eq!(hex::encode(on_chain.evidence_hash), written_hash);
    // verify, with no flag and no key: the plain scan does not reproduce a hash that binds sep41
    // lines, so it re-runs the suite keyless and agrees.
    let (code, out, err) = env.run(&["verify", &asset, "--output", "json"], None, None);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(json_line(&out)["verdict"], "agreement", "{out}");
    let store = &json_line(&out)["verdict_store"];
    assert_eq!(store["agrees"], true, "{out}");
    assert_eq!(
        store["contract"],
        stellar_strkey::Contract(w.store).to_string().as_str(),
        "{out}"
    );

    // (d) A secret in argv is refused before anything runs, and never echoed (checked in run()).
    let (code, _, err) = env.run(
        &["attest", &asset, "--sep41", "--owner-identity", &secret(13)],
        None,
        None,
    );
    assert_eq!(code, 64);
    assert!(
        err.contains("refusing a secret key on the command line"),
        "{err}"
    );
    let (code, _, err) = env.run(
        &[
            "attest",
            &asset,
            "--sep41",
            &format!("--spender-identity={}", secret(14)),
        ],
        None,
        None,
    );
    assert_eq!(code, 64);
    assert!(
        err.contains("refusing a secret key on the command line"),
        "{err}"
    );

    // The native asset has no issuer to read: refused with the forms that work; the party flags need
    // --sep41.
    let (code, _, err) = env.run(&["attest", "native", "--sep41"], None, None);
    assert_eq!(code, 64);
    assert!(
        err.contains("native asset has no issuer") && err.contains("C…"),
        "{err}"
    );
    let (code, _, err) = env.run(
        &["attest", &asset, "--owner-identity", "holder"],
        None,
        None,
    );
    assert_eq!(code, 64, "{err}");
    assert!(err.contains("--sep41"), "{err}");
}

fn party(key: &Signer) -> assay_sep41::Party {
    assay_sep41::Party {
        address: key.sc_address(),
        generated: false,
        can_sign: true,
        key_hint: String::new(),
        address_hint: String::new(),
    }
}

#[test]
fn sep41_writes_off_test_networks_need_consent() {
    // The passphrase is mainnet's: the consent gate refuses before any network is contacted.
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args([
            "attest",
            &format!("AQUA-{AQUA}"),
            "--sep41",
            "--registry",
            &format!("{}", stellar_strkey::Contract([1; 32])),
            "--rpc-url",
            "http://127.0.0.1:9/rpc",
            "--network-passphrase",
            "Public Global Stellar Network ; September 2015",
        ])
        .env("STELLAR_SECRET_KEY", secret(12))
        .env("ASSAY_OWNER_SECRET", secret(13))
        .env_remove("ASSAY_SPENDER_SECRET")
        .env_remove("STELLAR_NETWORK")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{err}");
    assert!(err.contains("--allow-non-testnet-write"), "{err}");
    assert!(!err.contains(&secret(13)) && !err.contains(&secret(12)));
}

/// `assay scan C… --sep41`: the token contract read by its code and admin, and the suite run keyless
/// on a fork of the network at --rpc-url, its verdicts in the report (one `sep41` evidence line per
/// check) and its summary in the text form. No key anywhere in the environment.
#[test]
fn scan_of_a_token_contract_with_sep41_runs_the_keyless_suite() {
    let w = World::start(&[]);
    let ca = w.ca();
    let token = w.deploy_token("conformant_token", 41);
    // Units for a holder the token's mint event names, so the fork finds a holder to take over.
    w.mint(token, 13);
    let id = format!("{}", stellar_strkey::Contract(token));
    let scan = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["scan", &id, "--network", "local", "--no-history"])
            .args(["--rpc-url", &w.net.rpc_url()])
            .args(["--network-passphrase", w.net.passphrase()])
            .args(w.source_args(&ca))
            .args(extra)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", w.dir.path())
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };

    let (code, out, err) = scan(&["--sep41", "--output", "json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let report = json_line(&out);
    let lines: Vec<&str> = (report["evidence"].as_array().unwrap().iter())
        .filter(|e| e["source"] == "sep41")
        .map(|e| e["claim"].as_str().unwrap())
        .collect();
    // The 25 rows plus the mint event: discovery exercised the admin's mint when the token was read.
    assert_eq!(lines.len(), 26, "{report}");
    assert!(lines.iter().all(|l| l.contains(" PASS:")), "{lines:?}");
    assert_eq!(report["severity"], "clear", "{report}");

    let (code, out, err) = scan(&["--sep41"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!("sep41 conformant on {id}: 27 checks: 26 pass")),
        "{out}"
    );

    // Without --sep41 the report holds no sep41 line; --sep41 with no token contract is a usage error.
    let (_, out, _) = scan(&["--output", "json"]);
    assert!(!out.contains("\"sep41\""), "{out}");
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["scan", &format!("AQUA-{AQUA}"), "--sep41", "--no-history"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--sep41 runs the conformance suite against token contracts"));
}
