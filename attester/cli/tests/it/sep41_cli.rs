//! `assay sep41` end to end through the binary: exit codes, output formats, the consent gate.
use std::{
    path::PathBuf,
    process::{Command, Output},
    sync::OnceLock,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn wasm(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .args(["conformant-token", "vulnerable-token", "defect-token"])
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    });
    root().join("target/wasm").join(format!("{name}.wasm"))
}

fn assay(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assay"));
    cmd.arg("sep41").args(args);
    for var in [
        "ASSAY_OWNER_SECRET",
        "ASSAY_SPENDER_SECRET",
        "STELLAR_NETWORK",
        "STELLAR_RPC_URL",
        "STELLAR_NETWORK_PASSPHRASE",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("assay runs")
}

fn secret(seed: u8) -> String {
    stellar_strkey::ed25519::PrivateKey([seed; 32])
        .to_string()
        .as_str()
        .to_string()
}

#[test]
fn offline_conformant_token_passes_every_check_with_something_to_judge_and_exits_zero() {
    let path = wasm("conformant_token");
    let out = assay(&["--wasm", path.to_str().unwrap()], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("  ✓ sep41-"))
            .count(),
        26,
        "{stdout}"
    );
    // The 25 rows and the mint event of the admin's mint power discovery exercised; no clawback power.
    assert!(stdout
        .contains("26 pass, 0 fail, 1 skipped, 0 unverifiable, 0 not implemented (27 checks)"));
    assert!(stdout.contains(
        "by layer: interface 3/3 pass · behavior 14/14 pass · authorization 5/5 pass · events 4/5 pass"
    ));
    assert!(
        stdout.contains("    mint creates supply [mint]: usable by G"),
        "{stdout}"
    );
}

#[test]
fn offline_vulnerable_token_json_report_exits_negative() {
    let path = wasm("vulnerable_token");
    let args = [
        "--wasm",
        path.to_str().unwrap(),
        "--constructor-args",
        r#"["@admin", 7, "Vulnerable Test Token", "VULN"]"#,
        "--output",
        "json",
    ];
    let out = assay(&args, &[]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(report["schema"], "assay/sep41-report@1");
    assert_eq!(report["exitCode"], 3);
    // The sixteen read as before: 9 pass, 2 fail, 5 unverifiable.
    let results = report["results"].as_array().unwrap();
    let count = |rows: &[serde_json::Value], status: &str| {
        rows.iter().filter(|r| r["status"] == status).count()
    };
    assert_eq!(
        (
            count(&results[..16], "PASS"),
            count(&results[..16], "FAIL"),
            count(&results[..16], "UNVERIFIABLE")
        ),
        (9, 2, 5)
    );
    // The nine: authorization held; no events at all; an already-expired approval accepted. The
    // admin's mint (and a self-transfer, which creates a unit) publish no mint event: a seventh FAIL.
    assert_eq!(report["summary"]["pass"], 14);
    assert_eq!(report["summary"]["fail"], 7);
    assert_eq!(report["summary"]["unverifiable"], 5);
    assert_eq!(
        report["results"][3]["actual"],
        "returned \"Vulnerable Test Token\""
    );
}

#[test]
fn usage_errors_exit_64_and_name_the_input() {
    let out = assay(&["CNOTACONTRACT"], &[]);
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid contract ID"));

    let path = wasm("conformant_token");
    let out = assay(
        &[
            "--wasm",
            path.to_str().unwrap(),
            "--constructor-args",
            "[1,",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--constructor-args"));

    let out = assay(
        &[
            "--wasm",
            path.to_str().unwrap(),
            "--constructor-args",
            "[1, 2]",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("takes 4 arguments"));

    let out = assay(
        &["--wasm", path.to_str().unwrap(), "--mint-fn", "faucet"],
        &[],
    );
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mint-fn"));
}

/// A set-up file that cannot run is a usage error naming the step and the fix, and nothing is printed on
/// stdout: a call the token refuses (by its number, contract, function and signer), a placeholder no party
/// or contract has, a call argument of the wrong type (by the call), a contract of the set-up given the wrong
/// arguments (by its name), a function the contract does not declare, and constructor arguments given twice.
#[test]
fn a_set_up_file_that_cannot_run_exits_64_naming_the_step() {
    let path = wasm("conformant_token");
    let dir = tempfile::tempdir().unwrap();
    // A contract of the set-up given the wrong number of constructor arguments (the WASM path absolute).
    let helper_with_one_argument = serde_json::json!({
        "contracts": [{"name": "other", "wasm": path, "constructor_args": [1]}]
    })
    .to_string();
    let cases = [
        (
            r#"{"calls": [{"contract": "@token", "function": "transfer", "args": ["@spender", "@holder", 5], "as": "@spender"}]}"#,
            vec![],
            "set-up call 1 (@token.transfer), signed by @spender: simulation refused it",
        ),
        (
            r#"{"constructor_args": ["@admn", 7, "N", "S"]}"#,
            vec![],
            "the set-up file's \"constructor_args\": constructor argument `admin`: no party or contract is named \"@admn\" here; known: @admin, @holder, @spender",
        ),
        (
            r#"{"calls": [{"contract": "@token", "function": "mint", "args": ["@holder", "x"]}]}"#,
            vec![],
            "set-up call 1 (@token.mint): mint argument `amount`: \"x\" is not an integer",
        ),
        (
            &helper_with_one_argument,
            vec![],
            "contract \"other\" of the set-up: the constructor takes 4 arguments",
        ),
        (
            r#"{"calls": [{"contract": "@token", "function": "pause"}]}"#,
            vec![],
            "set-up call 1 (@token.pause): the contract declares no `pause`; it declares allowance, approve",
        ),
        (
            r#"{"constructor_args": ["@admin", 7, "N", "S"]}"#,
            vec!["--constructor-args", r#"["@admin", 7, "N", "S"]"#],
            "given twice, by --constructor-args and by the set-up file; keep one",
        ),
    ];
    for (n, (text, extra, said)) in cases.iter().enumerate() {
        let setup = dir.path().join(format!("{n}.json"));
        std::fs::write(&setup, text).unwrap();
        let mut args = vec![
            "--wasm",
            path.to_str().unwrap(),
            "--setup",
            setup.to_str().unwrap(),
        ];
        args.extend(extra.iter().copied());
        let out = assay(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{text}: {stderr}");
        assert!(stderr.contains(said), "{text}: {stderr}");
        assert!(out.stdout.is_empty(), "{text}");
    }
}

#[test]
fn consent_gate_refuses_writes_on_pubnet_and_never_prints_the_secret() {
    let key = secret(5);
    let args = [
        "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC",
        "--live",
        "--rpc-url",
        "http://127.0.0.1:9/",
        "--network-passphrase",
        "Public Global Stellar Network ; September 2015",
    ];
    let out = assay(&args, &[("ASSAY_OWNER_SECRET", &key)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--allow-non-testnet-write"), "{stderr}");
    assert!(!stderr.contains(&key) && !String::from_utf8_lossy(&out.stdout).contains(&key));

    // An owner address that does not match the owner's secret is a usage error.
    let other = stellar_strkey::ed25519::PublicKey([1; 32]).to_string();
    let args = [
        "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC",
        "--live",
        "--owner",
        other.as_str(),
    ];
    let out = assay(&args, &[("ASSAY_OWNER_SECRET", &key)]);
    assert_eq!(out.status.code(), Some(64));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&key));
}

#[test]
fn live_mode_against_an_unreachable_rpc_exits_one() {
    let args = [
        "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC",
        "--live",
        "--rpc-url",
        "http://127.0.0.1:9/",
        "--network-passphrase",
        "Test SDF Network ; September 2015",
    ];
    let out = assay(&args, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot prepare run"));
}

/// A token deployed through a local network's JSON-RPC API, with funded admin, holder (the
/// admin minted `minted` units to it) and spender accounts: the setting of a keyed live run.
struct LiveToken {
    net: assay_localnet::LocalNet,
    network: assay_chain::NetworkClient,
    admin: assay_chain::Signer,
    holder: assay_chain::Signer,
    spender: assay_chain::Signer,
    contract: stellar_xdr::ScAddress,
}

impl LiveToken {
    /// Deploys `target/wasm/{wasm_name}.wasm`. The holder's and spender's keys are
    /// `secret(22)` and `secret(23)`.
    fn deploy(wasm_name: &str, minted: i128) -> LiveToken {
        use assay_chain::{NetworkClient, Signer};
        use stellar_xdr::{CreateAccountOp, OperationBody, ScVal};

        let code = std::fs::read(wasm(wasm_name)).unwrap();
        // Real-network-like pacing (1 s ledgers), so the expiry check's 2-ledger grant lands in time.
        let net = assay_localnet::LocalNet::start(assay_localnet::LocalNetConfig {
            port: 0,
            ledger_close_ms: 1000,
            passphrase: assay_localnet::STANDALONE_PASSPHRASE.into(),
        })
        .unwrap();
        let mut network = NetworkClient::new(&net.rpc_url(), net.passphrase());
        network.poll_interval = std::time::Duration::from_millis(200);
        let root_key = Signer::from_bytes(net.root_secret());
        let (admin, holder, spender) = (
            Signer::from_bytes([21; 32]),
            Signer::from_bytes([22; 32]),
            Signer::from_bytes([23; 32]),
        );
        let create = |who: &Signer| {
            OperationBody::CreateAccount(CreateAccountOp {
                destination: who.account_id(),
                starting_balance: 100_000_000_000,
            })
        };
        network
            .submit_classic(
                &root_key,
                vec![create(&admin), create(&holder), create(&spender)],
            )
            .unwrap();
        // Every real network has the native asset's contract; a token may call it.
        network
            .deploy_sac(&admin, &stellar_xdr::Asset::Native)
            .unwrap();
        let hash = network.upload_wasm(&admin, &code).unwrap();
        let args = vec![
            ScVal::Address(admin.sc_address()),
            ScVal::U32(7),
            ScVal::String(stellar_xdr::ScString("Live".try_into().unwrap())),
            ScVal::String(stellar_xdr::ScString("LIVE".try_into().unwrap())),
        ];
        let contract = network
            .create_contract(&admin, hash, [9; 32], args)
            .unwrap();
        let mint = vec![
            ScVal::Address(holder.sc_address()),
            assay_sep41::checks::i128_val(minted),
        ];
        assert!(matches!(
            network.invoke(&admin, &contract, "mint", mint).unwrap(),
            assay_chain::InvokeOutcome::Landed { .. }
        ));
        LiveToken {
            net,
            network,
            admin,
            holder,
            spender,
            contract,
        }
    }

    /// `assay sep41 C… --live` against this network with the holder's and spender's keys in
    /// ASSAY_OWNER_SECRET / ASSAY_SPENDER_SECRET.
    fn run_live(&self, output: &str) -> Output {
        let contract_id = assay_chain::strkey_of(&self.contract);
        let rpc_url = self.net.rpc_url();
        let args = [
            contract_id.as_str(),
            "--live",
            "--rpc-url",
            rpc_url.as_str(),
            "--network-passphrase",
            self.net.passphrase(),
            "--output",
            output,
        ];
        assay(
            &args,
            &[
                ("ASSAY_OWNER_SECRET", &secret(22)),
                ("ASSAY_SPENDER_SECRET", &secret(23)),
            ],
        )
    }

    /// What a submission would change: transactions applied in every ledger closed, and each
    /// party's sequence number.
    fn footprint(&self) -> (usize, Vec<Option<i64>>) {
        let txs = self.net.close_stats().iter().map(|s| s.transactions).sum();
        let seqs = [&self.admin, &self.holder, &self.spender]
            .iter()
            .map(|who| self.network.account_sequence(&who.account_id()).unwrap())
            .collect();
        (txs, seqs)
    }

    /// The holder's XLM, read from the native asset's contract.
    fn holder_xlm(&self) -> assay_chain::ReadOutcome {
        let native = stellar_xdr::ScAddress::Contract(stellar_xdr::ContractId(stellar_xdr::Hash(
            assay_chain::contract_id_from_asset(&stellar_xdr::Asset::Native, self.net.passphrase()),
        )));
        let who = stellar_xdr::ScVal::Address(self.holder.sc_address());
        self.network
            .read(&self.holder.account_id(), &native, "balance", vec![who])
            .unwrap()
    }
}

/// Keyed live mode is the same suite over stellar-rpc: deploy on a local network, then run
/// `assay sep41 C… --live --rpc-url … --network-passphrase …` with the parties' keys in env vars.
#[test]
fn live_mode_over_rpc_with_keys_from_env_passes_a_conformant_token() {
    let token = LiveToken::deploy("conformant_token", 5);
    let (network, holder, contract) = (&token.network, &token.holder, &token.contract);
    let out = token.run_live("md");
    let (owner_key, spender_key) = (secret(22), secret(23));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("# SEP-41 Conformance Report"));
    assert!(
        stdout.contains(
            "**Conformant: every check with something to judge was exercised and held.**"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("| `sep41-transfer_from-expired` | transfer_from: expired allowance | required | PASS |"), "{stdout}");
    assert!(!stdout.contains(&owner_key) && !stdout.contains(&spender_key));
    // The holder started with 5 and four were spent.
    let left = network
        .read(
            &holder.account_id(),
            contract,
            "balance",
            vec![stellar_xdr::ScVal::Address(holder.sc_address())],
        )
        .unwrap();
    assert_eq!(
        left,
        assay_chain::ReadOutcome::Value(assay_sep41::checks::i128_val(1))
    );
}

/// A token whose `transfer` asks the holder to authorize a native XLM transfer nested under it,
/// run in keyed live mode: the signing guard refuses to sign, `sep41-transfer-auth` FAILs with
/// the refused tree, and nothing is signed or submitted by the whole run — no transaction in any
/// ledger, no party's sequence number moved, the holder's XLM untouched.
#[test]
fn live_mode_signs_nothing_for_a_token_whose_transfer_pulls_xlm() {
    let token = LiveToken::deploy("defect_token_transfer_pulls_xlm", 5);
    let (footprint, xlm) = (token.footprint(), token.holder_xlm());

    let out = token.run_live("json");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let negative = i32::from(assay_core::exit::NEGATIVE);
    assert_eq!(out.status.code(), Some(negative), "{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |id: &str| crate::sep41_fork::row(&report, id);
    let auth = row("sep41-transfer-auth");
    assert_eq!(auth["status"], "FAIL", "{auth}");
    let actual = auth["actual"].as_str().unwrap();
    assert!(
        actual.contains("the signing guard refused to sign transfer for the holder"),
        "{actual}"
    );
    let observed: Vec<&str> = (auth["evidence"]["observed"].as_array().unwrap().iter())
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        observed[0].starts_with("holder authorizes token.transfer(holder, spender, ")
            && observed[1].starts_with("  ⤷ C")
            && observed[1].contains(".transfer(holder, G"),
        "{observed:?}"
    );
    assert_eq!(row("sep41-transfer-zero-amount")["status"], "UNVERIFIABLE");
    assert_eq!(row("sep41-approve")["status"], "UNVERIFIABLE");

    assert_eq!(token.footprint(), footprint, "nothing was submitted");
    assert_eq!(token.holder_xlm(), xlm, "the holder's XLM is unchanged");
    for key in [secret(22), secret(23)] {
        assert!(!stdout.contains(&key) && !stderr.contains(&key));
    }
}
