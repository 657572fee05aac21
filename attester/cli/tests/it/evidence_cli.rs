//! Evidence bundles end to end on the local network: `assay attest` records a bundle for a classic asset
//! and for a custom token (its SEP-41 rows run keyless on a fork); a source changes, so a fresh scan no
//! longer reproduces the attestation; `assay evidence HASH` prints each bundle and, with the network
//! stopped, `assay verify --bundle` re-derives the attested verdicts exactly (the token's SEP-41 rows
//! replayed from the suite's fork snapshot, its powers from power discovery's). The hashed lines (evidence
//! v7) name no operator endpoint. A bundle with one line changed is refused with the line named. `assay serve`
//! answers the evidence route and pages its listings over real HTTP.

use crate::serve_cli::{get_json, serve};
use crate::world;

use std::path::Path;
use std::process::Command;

use assay_attest::registry::read_safety;
use assay_scan::testsupport::Reply;
use serde_json::Value;
use world::*;

fn attester_secret() -> String {
    format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]))
}

/// `assay ARGS…` with the attester's key in the environment: (exit code, stdout, stderr).
fn assay(args: &[&str], extra: &[String], home: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .args(extra)
        .env("STELLAR_SECRET_KEY", attester_secret())
        .env("HOME", home)
        .env_remove("ASSAY_HISTORY")
        .env_remove("ASSAY_OWNER_SECRET")
        .env_remove("ASSAY_SPENDER_SECRET")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert!(!o.contains(&attester_secret()) && !e.contains(&attester_secret()));
    (out.status.code().unwrap_or(-1), o, e)
}

/// `assay verify --bundle FILE --output json`, offline: exit code, stdout, stderr.
fn verify_bundle_json(file: &Path, home: &Path) -> (i32, String, String) {
    assay(
        &[
            "verify",
            "--bundle",
            &file.display().to_string(),
            "--output",
            "json",
        ],
        &[],
        home,
    )
}

/// `assay scan ASSET --history HISTORY --output json` against the world's replayed sources: the report,
/// with stdout and stderr.
fn scan_into_history(w: &World, ca: &Path, asset: &str, history: &str) -> (Value, String, String) {
    let mut args = vec![
        "scan".to_string(),
        asset.to_string(),
        "--network".into(),
        "local".into(),
        "--network-passphrase".into(),
        w.net.passphrase().to_string(),
        "--history".into(),
        history.to_string(),
        "--output".into(),
        "json".into(),
    ];
    args.extend(w.source_args(ca));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, out, err) = assay(&args, &[], w.dir.path());
    (json_line(&out), out, err)
}

fn json_line(out: &str) -> Value {
    serde_json::from_str(out.lines().next().expect("a line")).expect("JSON")
}

#[test]
fn bundles_reverify_offline_after_a_source_changed_and_a_tampered_line_is_named() {
    let w = World::start(&["aqua.network"]);
    let ca = w.ca();
    let store = tempfile::tempdir().unwrap();
    let history = store.path().join("history.sqlite3");
    let history_arg = history.display().to_string();
    let aqua = format!("AQUA-{AQUA}");
    w.clear_aqua();
    let token = w.deploy_token("conformant_token", 61);
    w.mint(token, 13);
    let token_id = format!("{}", stellar_strkey::Contract(token));
    let cli = w.cli_args(&ca);

    // Attest the classic asset, then the custom token with its SEP-41 suite (keyless, on a fork).
    let mut written = Vec::new();
    for args in [
        vec!["attest", aqua.as_str()],
        vec!["attest", token_id.as_str(), "--sep41"],
    ] {
        let mut args = args.clone();
        args.extend(["--output", "json", "--history", &history_arg]);
        let (code, out, err) = assay(&args, &cli, w.dir.path());
        assert_eq!(code, 0, "{out}{err}");
        let line = json_line(&out);
        assert_eq!(line["status"], "written", "{line}");
        written.push(line);
    }
    let (aqua_line, token_line) = (&written[0], &written[1]);
    assert_eq!(
        (aqua_line["severity"].as_u64(), aqua_line["flags"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(
        (
            token_line["severity"].as_u64(),
            token_line["flags"].as_u64()
        ),
        (Some(0), Some(4096)),
        "{token_line}"
    );
    let on_chain = read_safety(
        &w.rpc,
        w.registry,
        assay_attest::sac::parse_contract(&token_id).unwrap(),
    )
    .unwrap()
    .expect("attested");
    assert_eq!(
        hex::encode(on_chain.evidence_hash),
        token_line["evidence_hash"].as_str().unwrap()
    );

    // A source changes: the issuer's stellar.toml is gone, so a fresh scan no longer reproduces AQUA's
    // attestation (verify names the mismatch).
    w.route(
        "aqua.network",
        "/.well-known/stellar.toml",
        Reply::status(404),
    );
    let (code, out, err) = assay(&["verify", &aqua, "--output", "json"], &cli, w.dir.path());
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("\"verdict\":\"mismatch\""), "{out}");
    // A scan records the changed report, so the attested bundle is no longer AQUA's latest; a prune of
    // everything older than now keeps it all the same: `attest`'s typed chain reading says the attestation
    // on chain cites it.
    let (rescanned, out, err) = scan_into_history(&w, &ca, &aqua, &history_arg);
    assert_eq!(rescanned["asset"]["code"], "AQUA", "{out}{err}");
    assert_ne!(
        rescanned["accountability"], "verified",
        "the report changed: {out}"
    );
    let (code, out, err) = assay(
        &[
            "history",
            "prune",
            "--keep-days",
            "0",
            "--history",
            &history_arg,
        ],
        &[],
        w.dir.path(),
    );
    assert_eq!(code, 0, "{out}{err}");

    // The bundles, as `assay evidence` prints them.
    let mut bundles = Vec::new();
    for line in &written {
        let hash = line["evidence_hash"].as_str().unwrap();
        let (code, out, err) = assay(
            &["evidence", hash, "--history", &history_arg],
            &[],
            w.dir.path(),
        );
        assert_eq!(code, 0, "{err}");
        let bundle: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(bundle["evidence_hash"], hash);
        let file = store.path().join(format!("{hash}.json"));
        std::fs::write(&file, &out).unwrap();
        bundles.push((file, bundle));
    }
    assert!(
        bundles[0].1.get("snapshot").is_none(),
        "no fork for a classic asset without the suite"
    );
    let entries = bundles[1].1["snapshot"]["ledger_entries"]
        .as_array()
        .map(Vec::len);
    assert!(
        entries.is_some_and(|n| n > 0),
        "the token's fork snapshot holds what it read: {entries:?}"
    );
    // Power discovery's own snapshot: the entries it read and the holders it watched.
    let powers_snapshot = &bundles[1].1["powers_snapshot"];
    assert!(
        powers_snapshot["ledger_entries"]
            .as_array()
            .is_some_and(|e| !e.is_empty()),
        "the token's power discovery snapshot holds what it read"
    );
    assert!(
        powers_snapshot["assay_fork"]["notes"]["powers.holder_candidates"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "{}",
        powers_snapshot["assay_fork"]
    );
    assert!(bundles[0].1.get("powers_snapshot").is_none());
    // Evidence v7 on (v8 by default): the hashed lines name no operator endpoint (the local network's Horizon and RPC).
    let endpoint = w.net.rpc_url();
    let host = endpoint["http://".len()..]
        .split('/')
        .next()
        .unwrap()
        .to_string();
    for (_, bundle) in &bundles {
        assert_eq!(bundle["evidence_version"], 8, "{bundle}");
        let lines = bundle["lines"].as_array().unwrap();
        assert!(
            lines.iter().all(|l| !l.as_str().unwrap().contains(&host)),
            "{host} in {lines:?}"
        );
    }
    assert!(
        bundles[0].1["lines"].as_array().unwrap().iter().any(|l| l
            .as_str()
            .unwrap()
            .starts_with("evidence\thorizon\thorizon:/assets?")),
        "the flag read stays attributed to Horizon by kind"
    );
    let behaviour_lines = bundles[1].1["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l.as_str().unwrap().contains("\tcontract/behaviour\t"))
        .count();
    assert!(behaviour_lines > 0, "the token's mint was observed");
    let (code, _, err) = assay(
        &["evidence", &"ab".repeat(32), "--history", &history_arg],
        &[],
        w.dir.path(),
    );
    assert_eq!(code, 4, "{err}");

    // serve answers the evidence route and pages its listings, over real HTTP on 127.0.0.1.
    {
        let served = serve(&history);
        let hash = aqua_line["evidence_hash"].as_str().unwrap();
        let (status, _, bundle) = get_json(&served.addr, &format!("/v1/evidence/{hash}"));
        assert_eq!(status, 200, "{bundle}");
        assert_eq!(bundle, bundles[0].1);
        let (status, _, missing) =
            get_json(&served.addr, &format!("/v1/evidence/{}", "cd".repeat(32)));
        assert_eq!(status, 404, "{missing}");
        let (status, _, bad) = get_json(&served.addr, "/v1/evidence/xyz");
        assert_eq!(status, 400, "{bad}");
        let (_, _, page) = get_json(&served.addr, "/v1/assets?per_page=1");
        assert_eq!(page["assets"].as_array().unwrap().len(), 1, "{page}");
        let next = page["next"].as_str().expect("a second page").to_string();
        let (_, _, rest) = get_json(&served.addr, &next);
        assert_eq!(rest["assets"].as_array().unwrap().len(), 1, "{rest}");
        assert_eq!(rest["next"], Value::Null);
        let listed: Vec<&Value> = [&page, &rest]
            .iter()
            .map(|p| &p["assets"][0]["asset"])
            .collect();
        assert!(
            listed.contains(&&Value::from(aqua.as_str()))
                && listed.contains(&&Value::from(token_id.as_str())),
            "{listed:?}"
        );
        let (status, _, asset) = get_json(&served.addr, &format!("/v1/assets/{aqua}?per_page=1"));
        assert_eq!(status, 200, "{asset}");
        assert_eq!(
            asset["observations"].as_array().unwrap().len(),
            1,
            "{asset}"
        );
    }

    // The network stops: nothing below can reach it.
    drop(w);

    for ((file, _), line) in bundles.iter().zip(&written) {
        let (code, out, err) = verify_bundle_json(file, store.path());
        assert_eq!(code, 0, "{out}{err}");
        let v: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["verdict"], "agreement", "{v}");
        let derived = &v["bundle"]["rederived"];
        assert_eq!(derived["severity"], line["severity_name"], "{v}");
        assert_eq!(derived["mechanics"], line["flags"], "{v}");
        assert_eq!(v["bundle"]["not_replayed"], serde_json::json!([]), "{v}");
    }
    // The token's powers: discovery replayed from its snapshot observes the attested powers exactly.
    let (code, out, err) = verify_bundle_json(&bundles[1].0, store.path());
    assert_eq!(code, 0, "{out}{err}");
    let powers = &serde_json::from_str::<Value>(out.trim()).unwrap()["bundle"]["powers_replay"];
    assert_eq!(
        powers["claims"].as_array().map(Vec::len),
        Some(behaviour_lines),
        "{powers}"
    );
    assert_eq!(
        (powers["missing"].clone(), powers["unexpected"].clone()),
        (serde_json::json!([]), serde_json::json!([])),
        "{powers}"
    );
    assert_eq!(powers["recorded_bits"], powers["replayed_bits"], "{powers}");
    assert_eq!(
        powers["replayed_bits"].as_u64().unwrap() & 0x1000,
        0x1000,
        "the mint (bit 12) replayed: {powers}"
    );
    assert_eq!(
        powers["replayed_bits"], token_line["flags"],
        "the attested flags are the replayed powers: {powers}"
    );
    let (code, out, _) = assay(
        &["verify", "--bundle", &bundles[1].0.display().to_string()],
        &[],
        store.path(),
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("powers: discovery replayed offline from the snapshot: the same"),
        "{out}"
    );
    // A powers snapshot stripped of the holders discovery watched cannot be replayed: said, never "agreement".
    let mut stripped = bundles[1].1.clone();
    stripped["powers_snapshot"]["assay_fork"]["notes"] = serde_json::json!({});
    let stripped_file = store.path().join("stripped.json");
    std::fs::write(&stripped_file, stripped.to_string()).unwrap();
    let (code, out, _) = verify_bundle_json(&stripped_file, store.path());
    assert_eq!(code, 2, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "not_replayed", "{v}");
    assert!(
        v["bundle"]["not_replayed"][0]
            .as_str()
            .unwrap()
            .starts_with("powers: "),
        "{v}"
    );
    // The token's SEP-41 rows replayed from the snapshot: the same 26 verdicts.
    let (_, out, _) = verify_bundle_json(&bundles[1].0, store.path());
    let replay = &serde_json::from_str::<Value>(out.trim()).unwrap()["bundle"]["sep41_replay"];
    assert_eq!(replay["claims"].as_array().unwrap().len(), 26, "{replay}");
    assert_eq!(
        (replay["missing"].clone(), replay["unexpected"].clone()),
        (serde_json::json!([]), serde_json::json!([]))
    );

    // One line changed: refused, the line named.
    let (file, bundle) = &bundles[1];
    let mut tampered = bundle.clone();
    let lines = tampered["lines"].as_array_mut().unwrap();
    let index = lines
        .iter()
        .position(|l| l.as_str().unwrap().contains("\tcontract/wasm\t"))
        .expect("a code line");
    let original = lines[index].as_str().unwrap().to_string();
    lines[index] = Value::from(original.replace("wasm ", "wasm 00"));
    let tampered_file = file.with_extension("tampered.json");
    std::fs::write(&tampered_file, tampered.to_string()).unwrap();
    let (code, out, _) = verify_bundle_json(&tampered_file, store.path());
    assert_eq!(code, 3, "{out}");
    let refused: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(refused["verdict"], "refused");
    assert_eq!(refused["line"], index + 1, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains(&format!("bundle line {} was changed", index + 1)),
        "{refused}"
    );
    let (code, out, _) = assay(
        &["verify", "--bundle", &tampered_file.display().to_string()],
        &[],
        store.path(),
    );
    assert_eq!(code, 3);
    assert!(
        out.starts_with(&format!("refused: bundle line {} was changed", index + 1)),
        "{out}"
    );
}

/// Replaces every occurrence of the string `from` in `value` by `to`.
fn replace_strings(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s == from => *s = to.to_string(),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, from, to)),
        _ => {}
    }
}

#[test]
fn a_forged_bundle_that_swaps_the_code_its_snapshot_runs_is_refused() {
    use assay_core::bundle::{check_bundle, Bundle};
    use assay_core::hash::EvidenceVersion;

    let w = World::start(&[]);
    let store = tempfile::tempdir().unwrap();
    let history = store.path().join("history.sqlite3");
    // A token whose admin can take balances (admin clawback, severity high).
    let token = crate::powers_cli::deploy(&w, "take_burn", 150, [0x44; 32]);
    let token_id = format!("{}", stellar_strkey::Contract(token));
    let (code, out, err) = assay(
        &[
            "attest",
            &token_id,
            "--output",
            "json",
            "--history",
            &history.display().to_string(),
        ],
        &w.cli_args(&w.ca()),
        w.dir.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    let line = json_line(&out);
    assert_eq!(
        (line["severity"].as_u64(), line["flags"].as_u64()),
        (Some(3), Some(1024)),
        "{line}"
    );
    let hash = line["evidence_hash"].as_str().unwrap().to_string();
    let (code, out, err) = assay(
        &[
            "evidence",
            &hash,
            "--history",
            &history.display().to_string(),
        ],
        &[],
        w.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let genuine: Bundle = serde_json::from_str(&out).unwrap();
    drop(w);
    let write = |name: &str, bundle: &Value| {
        let file = store.path().join(name);
        std::fs::write(&file, bundle.to_string()).unwrap();
        file
    };
    let genuine_json = serde_json::to_value(&genuine).unwrap();
    let (code, out, err) = verify_bundle_json(&write("genuine.json", &genuine_json), store.path());
    assert_eq!(code, 0, "the genuine bundle verifies: {out}{err}");

    // The forgery: the power's line dropped and the verdict restated as clear, the hash recomputed (the
    // lines are now the report's own, so every line check passes) ...
    let mut report = genuine.report.clone();
    report
        .evidence
        .retain(|e| e.source != assay_core::contract::SOURCE_CONTRACT_BEHAVIOUR);
    report.mechanics = assay_core::Mechanics::default();
    report.severity = assay_core::Severity::Clear.into();
    report.base_severity = assay_core::Severity::Clear.into();
    let mut forged = Bundle::of(&report, EvidenceVersion::V7).unwrap();
    forged.snapshot = genuine.snapshot.clone();
    forged.power_survey = genuine.power_survey.clone();
    forged.powers_snapshot = genuine.powers_snapshot.clone();
    assert_eq!(check_bundle(&forged).unwrap().severity.level(), 0);
    // ... and another token's code (no power) put under the hashed WASM's key.
    let wasm_line = report
        .evidence
        .iter()
        .find_map(|e| e.claim.strip_prefix("wasm "))
        .expect("the hashed code line")
        .to_string();
    let control = world::wasm("power_token_control");
    let control_hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&control));
    let mut swapped = serde_json::to_value(&forged).unwrap();
    let mut found = 0;
    for entry in swapped["powers_snapshot"]["ledger_entries"]
        .as_array_mut()
        .unwrap()
    {
        // (`pointer_mut`: indexing would add a null `contract_code` to every other entry.)
        let Some(code) = entry.pointer_mut("/entry/data/contract_code") else {
            continue;
        };
        if code["hash"] == wasm_line.as_str() {
            code["code"] = Value::from(hex::encode(&control));
            found += 1;
        }
    }
    assert_eq!(found, 1, "the snapshot holds the hashed code once");
    let (code, out, err) = verify_bundle_json(&write("forged.json", &swapped), store.path());
    assert_eq!(code, 3, "{out}{err}");
    let refused = json_line(&out);
    assert_eq!(refused["verdict"], "refused", "{refused}");
    let message = refused["error"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "the bundle's powers_snapshot does not hold what its hashed lines name: the code stored \
             under key {wasm_line} hashes to {control_hash}"
        )),
        "{message}"
    );

    // The same forgery made consistent inside the snapshot (the other code under its own hash, the
    // instance pointed at it): the instance no longer runs the hashed WASM.
    let mut repointed = serde_json::to_value(&forged).unwrap();
    replace_strings(&mut repointed["powers_snapshot"], &wasm_line, &control_hash);
    for entry in repointed["powers_snapshot"]["ledger_entries"]
        .as_array_mut()
        .unwrap()
    {
        let Some(code) = entry.pointer_mut("/entry/data/contract_code") else {
            continue;
        };
        if code["hash"] == control_hash.as_str() {
            code["code"] = Value::from(hex::encode(&control));
        }
    }
    let (code, out, err) = verify_bundle_json(&write("repointed.json", &repointed), store.path());
    assert_eq!(code, 3, "{out}{err}");
    let message = json_line(&out)["error"].as_str().unwrap().to_string();
    assert!(
        message.contains(&format!(
            "the instance of {token_id} runs wasm {control_hash}, the hashed lines name wasm {wasm_line}"
        )),
        "{message}"
    );
    let (code, text, _) = assay(
        &[
            "verify",
            "--bundle",
            &store.path().join("repointed.json").display().to_string(),
        ],
        &[],
        store.path(),
    );
    assert_eq!(code, 3);
    assert!(
        text.starts_with("refused: the bundle's powers_snapshot"),
        "{text}"
    );

    // A hostile ledger number in the genuine bundle's snapshot: a clear "not replayed", never a panic.
    let mut overflowing = genuine_json.clone();
    overflowing["powers_snapshot"]["sequence_number"] = Value::from(u32::MAX);
    let (code, out, err) = verify_bundle_json(&write("overflow.json", &overflowing), store.path());
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("its ledger 4294967295 is not between 1 and 2147483647"),
        "{out}"
    );
}

#[test]
fn hostile_bundle_files_end_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // Over the cap (sparse: no space taken): refused unread.
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(assay_core::bundle::MAX_BUNDLE_BYTES + 1)
        .unwrap();
    let (code, out, err) = verify_bundle_json(&huge, dir.path());
    assert_eq!(code, 64, "{out}{err}");
    assert!(err.contains("is larger than 150994944 bytes"), "{err}");
    // Nested far deeper than any snapshot: the parser's depth limit, reported.
    let nested = dir.path().join("nested.json");
    let depth = 200_000;
    std::fs::write(
        &nested,
        format!(
            "{{\"bundle_format\":1,\"snapshot\":{}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        ),
    )
    .unwrap();
    let (code, out, err) = verify_bundle_json(&nested, dir.path());
    assert_eq!(code, 64, "{out}{err}");
    assert!(
        err.contains("not an evidence bundle") && err.contains("recursion limit"),
        "{err}"
    );
}

/// `history prune` keeps a bundle that `watch` wrote and a verdict standing on-chain still cites, after a
/// later scan made another report the asset's latest: watch's typed chain reading says which bundle the
/// registry cites (the same rule `attest`'s reading is held to in the test above).
#[test]
fn a_bundle_watch_wrote_survives_a_prune_while_its_verdict_stands() {
    let w = World::start(&["aqua.network"]);
    // AQUA as its eval subject has it: its stellar.toml claims it (accountability verified).
    let asset = w.clear_aqua();
    let ca = w.ca();
    let history = w.dir.path().join("watched.sqlite3");
    let history_arg = history.display().to_string();
    let cfg = w.dir.path().join("watch.toml");
    std::fs::write(
        &cfg,
        w.watch_toml(&ca, &history, &["aqua.network"])
            + &format!("[[asset]]\nasset = \"{}\"\n", asset.core()),
    )
    .unwrap();
    let out = crate::common::watch_once(&cfg, &attester_secret(), w.dir.path());
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{log}");
    let sac = assay_attest::sac::asset_contract_id(&asset.core(), &w.spec.passphrase).unwrap();
    let on_chain = read_safety(&w.rpc, w.registry, sac)
        .unwrap()
        .expect("watch attested the asset");
    let cited = hex::encode(on_chain.evidence_hash);

    // The issuer's stellar.toml is gone: a scan records a changed report, so the cited bundle is no longer
    // the asset's latest; a prune of everything older than now must keep it all the same.
    w.route(
        "aqua.network",
        "/.well-known/stellar.toml",
        Reply::status(404),
    );
    let (rescanned, out, err) = scan_into_history(&w, &ca, &asset.core().to_string(), &history_arg);
    assert_ne!(
        rescanned["accountability"], "verified",
        "the report changed: {out}{err}"
    );
    let prune = [
        "history",
        "prune",
        "--keep-days",
        "0",
        "--history",
        &history_arg,
    ];
    let (code, out, err) = assay(&prune, &[], w.dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = assay(
        &["evidence", &cited, "--history", &history_arg],
        &[],
        w.dir.path(),
    );
    assert_eq!(code, 0, "the cited bundle was pruned: {out}{err}");
    let bundle: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(bundle["evidence_hash"], cited.as_str());
}
