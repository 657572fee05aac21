//! One answer in every mode: `assay sep41 --wasm` offline, `assay sep41 C…` on a fork of a local network,
//! and `assay scan C…` on that network find the same powers on the same token: the third-party tokens that
//! stand alone, our power fixtures (one per class and the control), and the tokens that need contracts and
//! calls around them (OpenZeppelin's RWA token, the swappable-ledger fixture), deployed offline and on the
//! network from one set-up file. OpenZeppelin's pausable token offline names its pause (a freeze of
//! everyone, by the owner its constructor named), whether or not the owner holds units.
use std::process::{Command, Output};

use serde_json::{json, Value};
use stellar_xdr::ScVal;

use crate::fixture_tokens::{ensure_built, wasm, FixtureToken};
use crate::world::*;

/// `assay ARGS --output json`: the JSON report on stdout (whatever the exit code: a FAIL or an
/// UNVERIFIABLE row says nothing here), with what was printed when it is not one.
fn json_of(out: &Output, what: &str) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: not one JSON report ({e}): {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `assay sep41 --wasm target/wasm/NAME.wasm --constructor-args ARGS --mint-fn MINT --output json`.
fn offline(token: &FixtureToken) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_assay"));
    c.args(["sep41", "--wasm", wasm(&token.name).to_str().unwrap()])
        .args(["--constructor-args", &token.args.to_string()])
        .args(["--mint-fn", token.mint_fn, "--output", "json"]);
    c
}

/// A power as the modes are compared: function, effect, and the freeze's reach or whether a balance taken
/// was moved (addresses differ between runs; what was done does not).
fn powers_of(survey: &Value, what: &str) -> Vec<String> {
    let list = |k: &str| {
        survey[k]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: no `{k}` in {survey}"))
            .clone()
    };
    let mut out: Vec<String> = (list("powers").iter())
        .map(|p| {
            let reach = match (&p["scope"], &p["moved_to"]) {
                (Value::String(scope), _) => format!(" ({scope})"),
                (_, Value::String(_)) => " (moved)".into(),
                _ => String::new(),
            };
            format!(
                "{}: {}{reach}",
                p["function"].as_str().unwrap(),
                p["effect"].as_str().unwrap()
            )
        })
        .chain(
            (list("unclassified").iter())
                .map(|u| format!("{}: unclassified", u["function"].as_str().unwrap())),
        )
        .collect();
    out.sort();
    out.dedup();
    out
}

fn pausable(initial_supply: i64) -> FixtureToken {
    FixtureToken {
        name: "tp_oz_pausable".into(),
        args: json!(["Pause", "PAU", "@admin", initial_supply]),
        mint_fn: "mint",
    }
}

#[test]
fn sep41_wasm_names_the_pausable_tokens_pause_of_everyone_and_its_owner() {
    // The owner holds the initial supply (the case reported: only `mint` was named), or nothing at all.
    for supply in [1_000_000, 0] {
        let token = pausable(supply);
        ensure_built(std::slice::from_ref(&token));
        let out = offline(&token).output().expect("assay runs");
        let report = json_of(&out, "sep41 --wasm");
        let survey = &report["powers"];
        let what = format!("initial supply {supply}: {survey}");
        let find = |f: &str| {
            (survey["powers"].as_array().unwrap().iter())
                .find(|p| p["function"] == f)
                .unwrap_or_else(|| panic!("no power through {f}; {what}"))
                .clone()
        };
        let pause = find("pause");
        assert_eq!(pause["effect"], "freezes", "{what}");
        assert_eq!(pause["scope"], "everyone", "{what}");
        assert_eq!(pause["label"], "pause", "{what}");
        // Who holds it: the owner the constructor named ("@admin"), who also mints, one key.
        let mint = find("mint");
        assert_eq!(mint["effect"], "creates_supply", "{what}");
        assert_eq!(pause["authorized_by"], mint["authorized_by"], "{what}");
        assert_eq!(
            pause["authorized_by"].as_array().unwrap().len(),
            1,
            "{what}"
        );
        assert_eq!(pause["authorized_by"][0]["control"], "1 key", "{what}");
        let holders: Vec<&Value> = survey["holders"].as_array().unwrap().iter().collect();
        assert!(
            !holders.contains(&&pause["authorized_by"][0]["address"]) || supply > 0,
            "the owner holds nothing here, so it is no watched holder: {what}"
        );
        // Found, so no bound line says it refused everything.
        let cut = survey["cut"].as_array().unwrap();
        assert!(
            cut.iter()
                .all(|c| !c.as_str().unwrap().starts_with("pause:")),
            "{what}"
        );
        assert_eq!(survey.get("unobservable"), None, "{what}");
    }
}

/// The tokens compared: each fixtures/third-party token that stands alone (the RWA token, which needs its
/// compliance and verifier contracts, is compared with its set-up file).
fn compared() -> Vec<FixtureToken> {
    let t = |name: &str, args: Value| FixtureToken {
        name: name.into(),
        args,
        mint_fn: "mint",
    };
    vec![
        pausable(1_000_000),
        t(
            "tp_oz_blocklist",
            json!(["Block", "BLK", "@holder", "@admin", 1000]),
        ),
        t(
            "tp_oz_allowlist",
            json!(["Allow", "ALW", "@holder", "@admin", 1000]),
        ),
        t("tp_oz_capped", json!([1_000_000])),
        t("tp_oz_votes", json!(["@admin"])),
        t("tp_soroban_token", json!(["@admin", 7, "Token", "TOK"])),
    ]
}

/// `args` for a deployment on the world: `@admin` the world's admin, `@holder` its holder, numbers as the
/// spec types them (the constructors here take `i128` amounts and a `u32` decimals).
fn on_world(w: &World, token: &FixtureToken) -> Vec<ScVal> {
    let account = |s: &assay_chain::Signer| assay_attest::registry::account_val(s.public_key());
    let items = token.args.as_array().unwrap();
    items
        .iter()
        .map(|v| match v {
            Value::String(s) if s == "@admin" => account(&w.admin),
            Value::String(s) if s == "@holder" => account(&w.holder),
            Value::String(s) => string(s),
            // soroban-examples' `decimal: u32` follows the admin; every other number is an amount.
            Value::Number(n) if token.name == "tp_soroban_token" => {
                ScVal::U32(n.as_u64().unwrap() as u32)
            }
            Value::Number(n) => assay_sep41::checks::i128_val(i128::from(n.as_i64().unwrap())),
            other => panic!("{other}"),
        })
        .collect()
}

#[test]
fn every_mode_finds_the_same_powers_on_the_third_party_tokens() {
    compare_modes(&compared(), 90);
}

/// Our own power fixtures, one per class of power (two steps, an allowance the admin writes, a clock, a
/// constant, transfer fees at 30 % and 100 %, ...) and the control, which has none. `swappable-ledger`,
/// whose ledger contract is deployed first, is compared with its set-up file.
#[test]
fn every_mode_finds_the_same_powers_on_the_power_fixtures() {
    let tokens: Vec<FixtureToken> = (crate::fixture_tokens::tokens().into_iter())
        .filter(|t| t.name.starts_with("power_token_"))
        .map(|t| FixtureToken {
            args: json!(["@admin", "@holder", 1_000_000]),
            ..t
        })
        .collect();
    let names: Vec<&str> = tokens.iter().map(|t| t.name.as_str()).collect();
    for class in [
        "control",
        "two_step",
        "admin_allowance",
        "clock_burn",
        "constant_keyed",
        "transfer_fee",
        "transfer_fee_full",
    ] {
        assert!(
            names.contains(&format!("power_token_{class}").as_str()),
            "{names:?}"
        );
    }
    compare_modes(&tokens, 120);
}

/// Tokens that need a deployment around them, each with its set-up file (the one `assay sep41 --setup`
/// reads): OpenZeppelin's SEP-57 (RWA) token, which holds and moves units only for accounts its identity
/// verifier has verified and needs its compliance contract bound to it, and the power fixture whose
/// balances live in a ledger contract its admin can replace. Offline, the set-up file deploys them; on
/// the network, the same file is deployed by the same code (`deploy_token`); the three modes agree.
#[test]
fn every_mode_finds_the_same_powers_on_tokens_deployed_with_a_set_up_file() {
    let w = World::start(&[]);
    let ca = w.ca();
    for set_up in crate::fixture_tokens::set_up_tokens() {
        let token = set_up.name;
        set_up.ensure_built();
        let setup = set_up.setup_path();
        let offline_run = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["sep41", "--wasm", wasm(token).to_str().unwrap()])
            .args(["--setup", setup.to_str().unwrap(), "--output", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("assay runs");
        let network = assay_chain::NetworkClient::new(&w.net.rpc_url(), w.net.passphrase());
        let spender = assay_chain::Signer::generate();
        let parties = assay_sep41::offline::Parties {
            admin: &w.admin,
            holder: &w.holder,
            spender: &spender,
        };
        let deployment = assay_sep41::offline::Deployment::load(&setup).expect("the set-up file");
        let subject = assay_sep41::offline::OfflineToken::with_setup(
            std::fs::read(wasm(token)).unwrap(),
            token,
            deployment,
        );
        let deployed = assay_sep41::offline::deploy_token(&network, &parties, &subject, 1000)
            .unwrap_or_else(|e| panic!("{token} on the network: {e}"));
        let id = match deployed.contract {
            stellar_xdr::ScAddress::Contract(c) => c.0 .0,
            other => panic!("{other:?}"),
        };
        let [forked, scanned] = network_runs(&w, &ca, id);
        let offline_out = offline_run.wait_with_output().expect("assay runs");
        let offline = json_of(&offline_out, token)["powers"].clone();
        // Progress on stderr: each contract of the file and the token deployed, in order.
        let progress = String::from_utf8_lossy(&offline_out.stderr);
        let deployed: Vec<&str> = (progress.lines())
            .filter_map(|l| l.strip_prefix("setup: @")?.split(" deployed at C").next())
            .collect();
        let mut expected_order: Vec<&str> = match token {
            "tp_oz_rwa_token" => vec!["compliance", "verifier"],
            _ => vec!["ledger"],
        };
        expected_order.push("token");
        assert_eq!(deployed, expected_order, "{progress}");
        let sets = agree(
            token,
            &[
                ("sep41 --wasm", offline),
                ("sep41 forked", forked),
                ("scan", scanned),
            ],
        );
        // Functions through which each grants a power.
        let expected: &[&str] = match token {
            "tp_oz_rwa_token" => &["forced_transfer", "burn", "mint", "pause", "set_compliance"],
            _ => &["set_ledger"],
        };
        for function in expected {
            assert!(
                sets.iter().any(|p| p.starts_with(&format!("{function}: "))),
                "{token}: {function}: {sets:?}"
            );
        }
    }
}

/// Without its set-up file, the RWA token is refused offline, naming its `mint` (an operator's
/// `mint(to, amount, operator)`, which cannot fund the holder alone) and the set-up file that can.
#[test]
fn sep41_wasm_without_a_set_up_file_refuses_the_rwa_token_naming_the_fix() {
    let token = FixtureToken {
        name: "tp_oz_rwa_token".into(),
        args: json!(["Real", "RWA", "@admin", "@admin", "@admin", "@admin"]),
        mint_fn: "mint",
    };
    ensure_built(std::slice::from_ref(&token));
    let out = offline(&token).output().expect("assay runs");
    assert_eq!(out.status.code(), Some(64), "a usage error");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("`mint` takes (to, amount, operator), not (to: Address, amount: i128)"),
        "{said}"
    );
    assert!(said.contains("--setup FILE"), "{said}");
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The three modes' power sets, required to be the same and to leave nothing unobservable; the set.
fn agree(name: &str, modes: &[(&str, Value)]) -> Vec<String> {
    let sets: Vec<(&str, Vec<String>)> = (modes.iter())
        .map(|(mode, survey)| (*mode, powers_of(survey, &format!("{name} {mode}"))))
        .collect();
    eprintln!("modes: {name}: {:?}", sets[0].1);
    for (mode, set) in &sets[1..] {
        assert_eq!(
            set,
            &sets[0].1,
            "{name}: {mode} against {}\n{mode}: {}\n{}: {}",
            sets[0].0,
            modes.iter().find(|m| m.0 == *mode).unwrap().1,
            sets[0].0,
            modes[0].1
        );
    }
    for (mode, survey) in modes {
        assert_eq!(survey.get("unobservable"), None, "{name} {mode}: {survey}");
    }
    sets[0].1.clone()
}

/// Deploys each token on one local network (salts from `salt`) and requires `assay sep41 --wasm`,
/// `assay sep41 C…` forked and `assay scan C…` to report the same powers; every token but the control
/// grants one.
fn compare_modes(tokens: &[FixtureToken], salt: u8) {
    ensure_built(tokens);
    let w = World::start(&[]);
    let ca = w.ca();
    for (n, token) in tokens.iter().enumerate() {
        // Offline in its own process while the network modes run.
        let offline_run = offline(token)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("assay runs");
        // The same deployment on the network: the holder funded as an offline run funds it (the
        // constructor credits it, or the admin mints it 1,000), so events name it.
        let id = w.deploy(&token.name, salt + n as u8, on_world(&w, token));
        let names_holder = token.args.to_string().contains("@holder");
        if !names_holder {
            let holder = assay_attest::registry::account_val(w.holder.public_key());
            let f = assay_attest::registry::call(
                id,
                token.mint_fn,
                vec![holder, assay_sep41::checks::i128_val(1000)],
            );
            w.invoker(&w.admin).invoke(&f).expect("mint to the holder");
        }
        let [forked, scanned] = network_runs(&w, &ca, id);
        let offline_out = offline_run.wait_with_output().expect("assay runs");
        let name = &token.name;
        let set = agree(
            name,
            &[
                (
                    "sep41 --wasm",
                    json_of(&offline_out, name)["powers"].clone(),
                ),
                ("sep41 forked", forked),
                ("scan", scanned),
            ],
        );
        assert_eq!(
            set.is_empty(),
            name.ends_with("_control"),
            "{name}: every token here but the control grants a power: {set:?}"
        );
    }
}

/// `assay sep41 C…` forked from the world's network and `assay scan C…` on it: each one's power survey.
fn network_runs(w: &World, ca: &std::path::Path, id: [u8; 32]) -> [Value; 2] {
    let contract = format!("{}", stellar_strkey::Contract(id));
    let network = [
        "--rpc-url".to_string(),
        w.net.rpc_url(),
        "--network-passphrase".into(),
        w.net.passphrase().to_string(),
    ];
    let forked = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["sep41", &contract, "--output", "json"])
        .args(&network)
        .env_remove("STELLAR_NETWORK")
        .output()
        .expect("assay runs");
    let scanned = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["scan", &contract, "--network", "local", "--no-history"])
        .args(["--output", "json"])
        .args(&network)
        .args(w.source_args(ca))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", w.dir.path())
        .output()
        .expect("assay runs");
    let scanned_first = String::from_utf8_lossy(&scanned.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let scan_report: Value = serde_json::from_str(&scanned_first).unwrap_or_else(|e| {
        panic!(
            "{contract}: scan ({e}): {scanned_first}{}",
            String::from_utf8_lossy(&scanned.stderr)
        )
    });
    [
        json_of(&forked, &contract)["powers"].clone(),
        scan_report["powers"].clone(),
    ]
}
