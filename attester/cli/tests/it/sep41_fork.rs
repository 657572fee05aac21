//! `assay sep41 C… --rpc-url URL` runs on a fork of the network by default: no secret anywhere in
//! the environment, nothing submitted upstream, the holder's units from events, `--holder`, or
//! nowhere (value-moving rows UNVERIFIABLE, naming `--holder`); `--fork-cache` replays offline.
use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::OnceLock,
};

use assay_chain::{InvokeOutcome, NetworkClient, ReadOutcome, Signer};
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_sep41::checks::i128_val;
use serde_json::Value;
use stellar_xdr::{CreateAccountOp, OperationBody, ScAddress, ScVal};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/wasm/{name}.wasm`, the token fixtures built once per test binary.
fn token_wasm(name: &str) -> Vec<u8> {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .args(["conformant-token", "defect-token"])
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    });
    std::fs::read(root().join(format!("target/wasm/{name}.wasm"))).unwrap()
}

/// The real network in these tests: a local network with a token deployed through its JSON-RPC
/// API (the conformant one unless named), and `minted` units minted to `holder` (an event
/// discovery can find).
struct Upstream {
    net: LocalNet,
    network: NetworkClient,
    admin: Signer,
    holder: Signer,
    contract: ScAddress,
}

impl Upstream {
    fn start(minted: i128, seed: u8) -> Upstream {
        Upstream::start_with("conformant_token", minted, seed)
    }

    fn start_with(wasm_name: &str, minted: i128, seed: u8) -> Upstream {
        // Built before the network starts: a build longer than the server's 30 s idle timeout would
        // leave the client a closed connection to reuse.
        let wasm = token_wasm(wasm_name);
        let net = LocalNet::start(LocalNetConfig::default()).unwrap();
        let mut network = NetworkClient::new(&net.rpc_url(), net.passphrase());
        network.poll_interval = std::time::Duration::from_millis(50);
        let root_key = Signer::from_bytes(net.root_secret());
        let (admin, holder) = (
            Signer::from_bytes([seed; 32]),
            Signer::from_bytes([seed + 1; 32]),
        );
        let create = |who: &Signer| {
            OperationBody::CreateAccount(CreateAccountOp {
                destination: who.account_id(),
                starting_balance: 100_000_000_000,
            })
        };
        network
            .submit_classic(&root_key, vec![create(&admin), create(&holder)])
            .unwrap();
        // Every real network has the native asset's contract; a token may call it.
        network
            .deploy_sac(&admin, &stellar_xdr::Asset::Native)
            .unwrap();
        let hash = network.upload_wasm(&admin, &wasm).unwrap();
        let text = |s: &str| ScVal::String(stellar_xdr::ScString(s.try_into().unwrap()));
        let args = vec![
            ScVal::Address(admin.sc_address()),
            ScVal::U32(7),
            text("Forked"),
            text("FORK"),
        ];
        let contract = network
            .create_contract(&admin, hash, [seed; 32], args)
            .unwrap();
        if minted > 0 {
            let mint = vec![ScVal::Address(holder.sc_address()), i128_val(minted)];
            assert!(matches!(
                network.invoke(&admin, &contract, "mint", mint).unwrap(),
                InvokeOutcome::Landed { .. }
            ));
        }
        Upstream {
            net,
            network,
            admin,
            holder,
            contract,
        }
    }

    fn contract_id(&self) -> String {
        assay_chain::strkey_of(&self.contract)
    }

    /// What a submission would change: transactions applied, and the parties' sequence numbers.
    /// A ledger closed here first: its statistics, and every earlier ledger's, are published when
    /// `close_ledger` returns, so the count never depends on when the interval's last close
    /// published its own.
    fn footprint(&self) -> (usize, Option<i64>, Option<i64>) {
        self.net.close_ledger();
        let txs = self.net.close_stats().iter().map(|s| s.transactions).sum();
        let seq = |who: &Signer| self.network.account_sequence(&who.account_id()).unwrap();
        (txs, seq(&self.admin), seq(&self.holder))
    }

    fn holder_balance(&self) -> ReadOutcome {
        let who = ScVal::Address(self.holder.sc_address());
        self.network
            .read(
                &self.holder.account_id(),
                &self.contract,
                "balance",
                vec![who],
            )
            .unwrap()
    }
}

/// `assay sep41 ARGS` with no secret and no stellar-cli configuration in the environment.
fn assay(args: &[&str], home: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assay"));
    cmd.arg("sep41").args(args).env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("STELLAR_CONFIG_HOME", home);
    cmd.output().expect("assay runs")
}

fn fork_run(upstream_rpc: &str, contract: &str, extra: &[&str], home: &Path) -> (Output, Value) {
    let mut args = vec![
        contract,
        "--rpc-url",
        upstream_rpc,
        "--network-passphrase",
        assay_localnet::STANDALONE_PASSPHRASE,
        "--ledger-close-ms",
        "100",
        "--output",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = assay(&args, home);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON on stdout ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, report)
}

/// The row of check `id` in a JSON report.
pub(crate) fn row<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

#[test]
fn fork_run_discovers_the_holder_submits_nothing_upstream_and_replays_its_cache() {
    let upstream = Upstream::start(5, 31);
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("fork.json");
    let before = upstream.footprint();
    let ledger_before = upstream.net.latest_ledger();

    let (out, report) = fork_run(
        &upstream.net.rpc_url(),
        &upstream.contract_id(),
        &["--fork-cache", cache.to_str().unwrap()],
        home.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{report:#}\n{stderr}");
    assert_eq!(
        report["summary"]["total"], 27,
        "all 27 checks run: {report:#}"
    );
    // Discovery, run in the fork before the suite, exercised the admin's mint: its event row PASSes;
    // the token has no clawback power, so that row has nothing to judge.
    assert_eq!(
        (&report["summary"]["pass"], &report["summary"]["skipped"]),
        (&serde_json::json!(26), &serde_json::json!(1)),
        "{report:#}"
    );
    assert_eq!(
        report["powers"]["powers"][0]["function"], "mint",
        "{report:#}"
    );
    let fork_ledger = report["fork_ledger"]
        .as_u64()
        .expect("fork_ledger recorded");
    assert!(fork_ledger >= u64::from(ledger_before), "{report:#}");
    assert!(
        stderr.contains(&format!("fork: ledger {fork_ledger}")),
        "{stderr}"
    );
    assert_eq!(report["fork_premise"]["kind"], "discovered", "{report:#}");
    let holder = upstream.holder.address();
    assert!(report["fork_premise"]["detail"]
        .as_str()
        .unwrap()
        .contains(&holder));

    // Nothing reached the upstream: no transaction applied, no sequence number moved, and the
    // holder whose units the fork took over still holds them.
    assert_eq!(upstream.footprint(), before);
    assert_eq!(
        upstream.net.close_stats().last().map(|s| s.transactions),
        Some(0)
    );
    assert_eq!(upstream.holder_balance(), ReadOutcome::Value(i128_val(5)));

    // The cache replays the same run with the upstream stopped.
    let (rpc_url, contract) = (upstream.net.rpc_url(), upstream.contract_id());
    drop(upstream);
    let (out, replay) = fork_run(
        &rpc_url,
        &contract,
        &["--fork-cache", cache.to_str().unwrap()],
        home.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{replay:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(replay["fork_ledger"].as_u64(), Some(fork_ledger));
    assert_eq!(replay["fork_premise"]["kind"], "discovered");
    assert!(String::from_utf8_lossy(&out.stderr).contains("of the fork cache"));
}

#[test]
fn fork_run_takes_over_the_holder_given_with_holder() {
    let upstream = Upstream::start(5, 41);
    let home = tempfile::tempdir().unwrap();
    let before = upstream.footprint();
    let holder = upstream.holder.address();
    let (out, report) = fork_run(
        &upstream.net.rpc_url(),
        &upstream.contract_id(),
        &["--holder", &holder],
        home.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{report:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["fork_premise"]["kind"], "holder", "{report:#}");
    let detail = report["fork_premise"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("5 units moved from --holder") && detail.contains(&holder),
        "{detail}"
    );
    assert_eq!(upstream.footprint(), before);
    assert_eq!(upstream.holder_balance(), ReadOutcome::Value(i128_val(5)));
}

#[test]
fn fork_run_without_a_premise_leaves_value_moving_rows_unverifiable_and_names_holder() {
    // Nothing minted: no events name a holder, and the token has no admin() to mint as.
    let upstream = Upstream::start(0, 51);
    let home = tempfile::tempdir().unwrap();
    let (out, report) = fork_run(
        &upstream.net.rpc_url(),
        &upstream.contract_id(),
        &[],
        home.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{report:#}");
    assert_eq!(report["exitCode"], 2);
    assert_eq!(report["fork_premise"]["kind"], "none", "{report:#}");
    assert_eq!(report["summary"]["fail"], 0, "{report:#}");
    for id in [
        "sep41-transfer",
        "sep41-transfer_from",
        "sep41-burn",
        "sep41-burn_from",
    ] {
        let r = row(&report, id);
        assert_eq!(r["status"], "UNVERIFIABLE", "{r:#}");
        assert!(r["actual"].as_str().unwrap().contains("--holder"), "{r:#}");
    }
    // The reads that need no units still ran and held.
    assert_eq!(row(&report, "sep41-decimals")["status"], "PASS");
}

#[test]
fn fork_flags_and_keyed_flags_do_not_mix() {
    let home = tempfile::tempdir().unwrap();
    let id = "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC";
    let owner = stellar_strkey::ed25519::PublicKey([1; 32]).to_string();
    let out = assay(&[id, "--owner", owner.as_str()], home.path());
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--live"));
    let out = assay(&[id, "--live", "--holder", owner.as_str()], home.path());
    assert_eq!(out.status.code(), Some(64));

    // An unreachable upstream: the fork cannot start, exit 2, and the message says so.
    let out = assay(
        &[
            id,
            "--rpc-url",
            "http://127.0.0.1:9/",
            "--network-passphrase",
            "Test SDF Network ; September 2015",
        ],
        home.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot start the fork"));
}

#[test]
fn fork_run_on_a_stellar_asset_contract_mints_as_the_issuer_inside_the_fork() {
    use stellar_xdr::{AlphaNum4, Asset, AssetCode4};
    let net = LocalNet::start(LocalNetConfig::default()).unwrap();
    let mut network = NetworkClient::new(&net.rpc_url(), net.passphrase());
    network.poll_interval = std::time::Duration::from_millis(50);
    let root_key = Signer::from_bytes(net.root_secret());
    let issuer = Signer::from_bytes([71; 32]);
    let create = OperationBody::CreateAccount(CreateAccountOp {
        destination: issuer.account_id(),
        starting_balance: 100_000_000_000,
    });
    network.submit_classic(&root_key, vec![create]).unwrap();
    let asset = Asset::CreditAlphanum4(AlphaNum4 {
        asset_code: AssetCode4(*b"FORK"),
        issuer: issuer.account_id(),
    });
    let contract = network.deploy_sac(&issuer, &asset).unwrap();
    let issuer_seq = network.account_sequence(&issuer.account_id()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let id = assay_chain::strkey_of(&contract);
    let (out, report) = fork_run(&net.rpc_url(), &id, &[], home.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{report:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["fork_premise"]["kind"], "mint", "{report:#}");
    assert!(report["fork_premise"]["detail"]
        .as_str()
        .unwrap()
        .contains(&issuer.address()));
    assert_eq!(
        network.account_sequence(&issuer.account_id()).unwrap(),
        issuer_seq
    );
}

/// A token whose `transfer` asks the holder to authorize a native XLM transfer nested under it
/// FAILs `sep41-transfer-auth` on the fork, with the nested call in the tree, and nothing reaches
/// the upstream.
#[test]
fn fork_run_fails_transfer_auth_of_a_token_whose_transfer_pulls_xlm() {
    let upstream = Upstream::start_with("defect_token_transfer_pulls_xlm", 5, 71);
    let home = tempfile::tempdir().unwrap();
    let before = upstream.footprint();
    let (out, report) = fork_run(
        &upstream.net.rpc_url(),
        &upstream.contract_id(),
        &[],
        home.path(),
    );
    let negative = i32::from(assay_core::exit::NEGATIVE);
    assert_eq!(out.status.code(), Some(negative), "{report}");
    let auth = row(&report, "sep41-transfer-auth");
    assert_eq!(auth["status"], "FAIL", "{auth}");
    let observed: Vec<&str> = (auth["evidence"]["observed"].as_array().unwrap().iter())
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        observed.len() == 2
            && observed[0].starts_with("holder authorizes token.transfer(holder, spender, ")
            && observed[1].starts_with("  ⤷ C")
            && observed[1].contains(".transfer(holder, G"),
        "{observed:?}"
    );
    assert_eq!(upstream.footprint(), before, "nothing reached the upstream");
}

/// The base64 of an ScVal vec nested `depth` levels around a void, built without recursion: each
/// level is 12 bytes (a multiple of 3), so its base64 repeats unchanged.
fn nested_vec_base64(depth: usize) -> String {
    use stellar_xdr::{Limits, WriteXdr};
    let one = ScVal::Vec(Some(vec![ScVal::Void].try_into().unwrap()))
        .to_xdr_base64(Limits::none())
        .unwrap();
    let (level, void) = one.split_at(16);
    format!("{}{void}", level.repeat(depth))
}

/// An upstream whose getEvents answer carries an event topic nested 200,000 levels deep: the run
/// ends with a message naming it (exit 1), never a stack overflow, and nothing reaches the
/// upstream.
#[test]
fn fork_run_against_an_upstream_sending_a_deeply_nested_topic_exits_with_a_message() {
    use crate::world::proxy::{Fault, Proxy};
    let upstream = Upstream::start(5, 81);
    let proxy = Proxy::start(upstream.net.rpc_url());
    let ledger = upstream.net.latest_ledger();
    let event = serde_json::json!({
        "type": "contract",
        "ledger": ledger,
        "ledgerClosedAt": "2026-12-01T00:00:00Z",
        "contractId": upstream.contract_id(),
        "id": format!("{:019}-0000000000", u64::from(ledger) << 32),
        "txHash": "00".repeat(32),
        "topic": [nested_vec_base64(200_000)],
        "value": "AAAAAQ==",
    });
    proxy.always(
        "getEvents",
        Fault::Answer(serde_json::json!({
            "events": [event],
            "cursor": "",
            "latestLedger": ledger,
            "oldestLedger": 1,
            "latestLedgerCloseTime": "0",
            "oldestLedgerCloseTime": "0",
        })),
    );
    let before = upstream.footprint();
    let home = tempfile::tempdir().unwrap();
    let out = assay(
        &[
            &upstream.contract_id(),
            "--rpc-url",
            &proxy.url,
            "--network-passphrase",
            assay_localnet::STANDALONE_PASSPHRASE,
            "--ledger-close-ms",
            "100",
        ],
        home.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "exit {:?} (None: killed by a signal)\n{stderr}",
        out.status.code()
    );
    assert!(
        stderr.contains("the upstream sent an event that does not decode")
            && stderr.contains("getEvents topic"),
        "{stderr}"
    );
    assert!(proxy.count("getEvents") >= 1);
    assert_eq!(upstream.footprint(), before, "nothing reached the upstream");
}

/// An upstream that says its latest ledger is 2 while serving entries written later: every entry
/// the fork reads is newer than the fork ledger (drift).
fn stale_latest_ledger() -> crate::world::proxy::Fault {
    crate::world::proxy::Fault::Rewrite(std::sync::Arc::new(|mut result| {
        result["sequence"] = serde_json::json!(2);
        result
    }))
}

#[test]
fn fork_run_on_entries_newer_than_its_ledger_repins_then_reports_the_run_undetermined() {
    let upstream = Upstream::start(5, 91);
    let proxy = crate::world::proxy::Proxy::start(upstream.net.rpc_url());
    proxy.always("getLatestLedger", stale_latest_ledger());
    let home = tempfile::tempdir().unwrap();
    let (out, report) = fork_run(&proxy.url, &upstream.contract_id(), &[], home.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Never a silent PASS: the rows may hold, the run is undetermined and says why.
    assert_eq!(out.status.code(), Some(2), "{report:#}\n{stderr}");
    assert_eq!(report["exitCode"], 2);
    assert_eq!(report["fork_ledger"], 2, "{report:#}");
    assert_eq!(
        report["fork_drift"]["repinned_from"],
        serde_json::json!([2])
    );
    let drifted = report["fork_drift"]["drifted"].as_array().unwrap();
    assert!(!drifted.is_empty(), "{report:#}");
    assert!(
        stderr.contains("changed upstream after ledger 2; starting again"),
        "{stderr}"
    );
    assert_eq!(
        proxy.count("getLatestLedger"),
        2,
        "one re-pin, then the verdict"
    );

    // The text report says so too.
    let out = assay(
        &[
            &upstream.contract_id(),
            "--rpc-url",
            &proxy.url,
            "--network-passphrase",
            assay_localnet::STANDALONE_PASSPHRASE,
            "--ledger-close-ms",
            "100",
        ],
        home.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("changed upstream after ledger 2: the fork mixed two ledgers' state"),
        "{stdout}"
    );
}

#[test]
fn fork_run_repins_at_the_latest_ledger_when_its_first_ledger_was_older_than_an_entry() {
    let upstream = Upstream::start(5, 101);
    let proxy = crate::world::proxy::Proxy::start(upstream.net.rpc_url());
    proxy.queue("getLatestLedger", vec![stale_latest_ledger()]);
    let latest_before = upstream.net.latest_ledger();
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("fork.json");
    let (out, report) = fork_run(
        &proxy.url,
        &upstream.contract_id(),
        &["--fork-cache", cache.to_str().unwrap()],
        home.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{report:#}\n{stderr}");
    assert_eq!(
        report["fork_drift"]["repinned_from"],
        serde_json::json!([2])
    );
    assert_eq!(report["fork_drift"]["drifted"], serde_json::json!([]));
    let fork_ledger = report["fork_ledger"].as_u64().unwrap();
    assert!(fork_ledger >= u64::from(latest_before), "{report:#}");
    // The cache holds the re-pinned ledger, not the abandoned one.
    let recorded: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
    assert_eq!(recorded["sequence_number"].as_u64(), Some(fork_ledger));
}

#[test]
fn a_fork_ledger_behind_the_upstream_without_its_cache_is_a_usage_error() {
    let upstream = Upstream::start(0, 111);
    let behind = upstream.net.latest_ledger() - 1;
    let home = tempfile::tempdir().unwrap();
    let out = assay(
        &[
            &upstream.contract_id(),
            "--rpc-url",
            &upstream.net.rpc_url(),
            "--network-passphrase",
            assay_localnet::STANDALONE_PASSPHRASE,
            "--fork-ledger",
            &behind.to_string(),
        ],
        home.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "--fork-ledger {behind} is behind the upstream's latest ledger"
        )) && stderr.contains("omit --fork-ledger")
            && stderr.contains("--fork-cache FILE"),
        "{stderr}"
    );
}
