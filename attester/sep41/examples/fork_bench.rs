//! Benchmark: wall time and upstream RPC round trips of a fork run (`assay sep41 C…` without
//! `--live`) against a local upstream, with a cold cache (every entry read from the upstream and
//! recorded to a `--fork-cache` file) and a warm one (the file replayed, no upstream call).
//!
//! The upstream is a local network holding the conformant token, with 5 units minted to a holder
//! so the discovery premise runs (a `getEvents` call and the candidates' balance reads). Power
//! discovery runs on the fork before the suite, as `assay sep41 C…` runs it; its share (wall time and
//! the upstream round trips made while it ran) is printed separately.
//! Targets: the 27 checks plus power discovery, cold, under 10 s and at most 80 upstream round trips.
//!
//! Then the sweep: every power fixture (one per class of power, the control included) and every
//! fixtures/third-party token (OpenZeppelin's RWA token with its compliance and verifier contracts) is
//! deployed on the same upstream with a funded holder and run the same way, cold. Per token it prints
//! the whole run's wall time and upstream round trips, discovery's share, its invocations and what it
//! found, against the targets of discovery with sequences, later clocks and module values: at most 60 s
//! and 80 upstream round trips per token (the 80 of the whole run is the conformant token's target above).
//!
//!     cargo run --release -p assay-sep41 --example fork_bench [-- LEDGER_CLOSE_MS]
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assay_chain::{InvokeOutcome, NetworkClient, Signer};
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_sep41::{
    checks::i128_val,
    fork::{run_fork, ForkOptions, ForkRun},
    offline::{deploy_token, Deployment, OfflineToken, Parties},
    BeforeSuite,
};
use stellar_xdr::{CreateAccountOp, OperationBody, ScAddress, ScString, ScVal};

mod support;

fn main() {
    let close_ms = support::ledger_close_ms();
    let wasm = support::conformant_token_wasm();

    let upstream = LocalNet::start(LocalNetConfig::default()).expect("the upstream starts");
    let mut network = NetworkClient::new(&upstream.rpc_url(), upstream.passphrase());
    network.poll_interval = Duration::from_millis(50);
    let root_key = Signer::from_bytes(upstream.root_secret());
    let (admin, holder) = (Signer::generate(), Signer::generate());
    let create = |who: &Signer| {
        OperationBody::CreateAccount(CreateAccountOp {
            destination: who.account_id(),
            starting_balance: 100_000_000_000,
        })
    };
    network
        .submit_classic(&root_key, vec![create(&admin), create(&holder)])
        .expect("accounts");
    let hash = network.upload_wasm(&admin, &wasm).expect("upload");
    let text = |s: &str| ScVal::String(ScString(s.try_into().expect("short")));
    let args = vec![
        ScVal::Address(admin.sc_address()),
        ScVal::U32(7),
        text("Bench"),
        text("BNCH"),
    ];
    let contract = network
        .create_contract(&admin, hash, [7; 32], args)
        .expect("deploy");
    let mint = vec![ScVal::Address(holder.sc_address()), i128_val(5)];
    assert!(matches!(
        network.invoke(&admin, &contract, "mint", mint),
        Ok(InvokeOutcome::Landed { .. })
    ));

    let cache = std::env::temp_dir().join(format!("assay-fork-bench-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&cache);
    let options = ForkOptions {
        rpc_url: Some(upstream.rpc_url()),
        passphrase: upstream.passphrase().to_string(),
        ledger: None,
        cache: Some(cache.clone()),
        holder: None,
        ledger_close_ms: close_ms,
        before_suite: None,
    };
    // Discovery as `assay sep41 C…` runs it, with its upstream round trips counted while it runs.
    let share: Share = Default::default();
    let options = ForkOptions {
        before_suite: Some(counted_discovery(&share)),
        ..options
    };
    println!(
        "fork sep41 run, conformant token on a local upstream, fork ledger close {close_ms} ms"
    );
    let cold = run_fork(&contract, &options).expect("cold fork run");
    show("cold cache", &cold, *share.lock().unwrap());
    let warm = run_fork(&contract, &options).expect("warm fork run");
    show("warm cache", &warm, *share.lock().unwrap());
    let _ = std::fs::remove_file(&cache);
    let powers = match &cold.powers {
        Some(Ok(survey)) => format!(
            "{} functions probed, {} invocations, {} powers",
            survey.probed.len(),
            survey.invocations,
            survey.powers.len()
        ),
        Some(Err(e)) => format!("discovery failed: {e}"),
        None => "discovery did not run".into(),
    };
    println!("  discovery (cold): {powers}");
    let met = cold.time.as_secs_f64() < 10.0 && cold.upstream_round_trips <= 80;
    println!(
        "  target: the checks plus discovery, cold, under 10 s and at most 80 upstream round trips -> {}",
        if met { "met" } else { "NOT met" }
    );

    let deployer = Deployer {
        network: &network,
        admin: &admin,
        holder: &holder,
    };
    sweep(&deployer, options);
}

/// Discovery's wall time and the upstream round trips made while it ran.
type Share = Arc<Mutex<(Duration, u64)>>;

/// Discovery as `assay sep41 C…` runs it before the suite, its share of the run written to `share`.
fn counted_discovery(share: &Share) -> BeforeSuite {
    let measured = share.clone();
    BeforeSuite(Arc::new(move |net, contract, holders| {
        let trips = || net.fork_stats().map_or(0, |s| s.upstream_round_trips);
        let (started, before) = (Instant::now(), trips());
        let found =
            assay_powers::discover_on(net, contract, holders, assay_powers::Bounds::default())
                .map_err(Into::into);
        *measured.lock().unwrap() = (started.elapsed(), trips() - before);
        found
    }))
}

/// Deploys on the upstream as its admin and funds its holder.
struct Deployer<'a> {
    network: &'a NetworkClient,
    admin: &'a Signer,
    holder: &'a Signer,
}

impl Deployer<'_> {
    fn deploy(&self, wasm: &[u8], salt: u8, args: Vec<ScVal>) -> ScAddress {
        let hash = self.network.upload_wasm(self.admin, wasm).expect("upload");
        (self.network)
            .create_contract(self.admin, hash, [salt; 32], args)
            .expect("deploy")
    }

    fn invoke(&self, contract: &ScAddress, function: &str, args: Vec<ScVal>) {
        let outcome = self.network.invoke(self.admin, contract, function, args);
        assert!(
            matches!(outcome, Ok(InvokeOutcome::Landed { .. })),
            "{function}: {outcome:?}"
        );
    }

    /// Deploys `wasm` with the deployment its set-up file (relative to the workspace root) describes, as
    /// `assay sep41 --wasm --setup` deploys it offline.
    fn deploy_with_setup(&self, wasm: &[u8], setup: &str) -> ScAddress {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let deployment = Deployment::load(&root.join(setup)).expect("the set-up file");
        let subject = OfflineToken::with_setup(wasm.to_vec(), setup, deployment);
        let spender = Signer::generate();
        let parties = Parties {
            admin: self.admin,
            holder: self.holder,
            spender: &spender,
        };
        (deploy_token(self.network, &parties, &subject, 1_000))
            .unwrap_or_else(|e| panic!("{setup}: {e}"))
            .contract
    }

    fn admin(&self) -> ScVal {
        ScVal::Address(self.admin.sc_address())
    }

    fn holder(&self) -> ScVal {
        ScVal::Address(self.holder.sc_address())
    }
}

/// The power fixtures' classes: the control, then each feature of fixtures/power-token.
fn power_classes() -> Vec<String> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = std::fs::read_to_string(root.join("fixtures/power-token/Cargo.toml"))
        .expect("fixtures/power-token/Cargo.toml");
    let mut in_features = false;
    let mut out = vec!["control".to_string()];
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_features = line.trim() == "[features]";
        } else if let Some(name) = line.strip_suffix(" = []").filter(|_| in_features) {
            out.push(name.trim().replace('-', "_"));
        }
    }
    out
}

/// Deploys each power fixture and third-party token with a funded holder and runs each cold.
fn sweep(d: &Deployer, options: ForkOptions) {
    let classes = power_classes();
    let power_names: Vec<String> = (classes.iter())
        .map(|c| format!("power_token_{c}"))
        .collect();
    let power_refs: Vec<&str> = power_names.iter().map(String::as_str).collect();
    // power-ledger is built for the swappable-ledger fixture's set-up file, which reads it from target/wasm.
    let power_wasm = support::built_wasm(&["power-token", "power-ledger"], &power_refs);
    // The RWA token's compliance and verifier are built with it, for its set-up file.
    const THIRD_PARTY: [&str; 7] = [
        "tp_oz_pausable",
        "tp_oz_blocklist",
        "tp_oz_allowlist",
        "tp_oz_capped",
        "tp_oz_votes",
        "tp_soroban_token",
        "tp_oz_rwa_token",
    ];
    let tp_wasm = support::built_wasm(&["third-party"], &THIRD_PARTY);
    let tp = |name: &str| &tp_wasm[THIRD_PARTY.iter().position(|n| *n == name).unwrap()];
    let text = |s: &str| ScVal::String(ScString(s.try_into().expect("short")));
    let amount = |n: u64| i128_val(i128::from(n));
    let (admin, holder) = (d.admin(), d.holder());
    let mint_to_holder = |token: &ScAddress| {
        d.invoke(token, "mint", vec![holder.clone(), amount(1_000)]);
    };

    let mut tokens: Vec<(String, ScAddress)> = Vec::new();
    for (n, (class, wasm)) in classes.iter().zip(&power_wasm).enumerate() {
        let name = format!("power_token_{class}");
        if class == "swappable_ledger" {
            // Its ledger contract first, named in its constructor.
            let setup = "fixtures/power-token/swappable-ledger.setup.json";
            tokens.push((name, d.deploy_with_setup(wasm, setup)));
            continue;
        }
        let args = vec![admin.clone(), holder.clone(), amount(1_000_000)];
        tokens.push((name, d.deploy(wasm, 100 + n as u8, args)));
    }
    let pausable = d.deploy(
        tp("tp_oz_pausable"),
        150,
        vec![text("Pause"), text("PAU"), admin.clone(), amount(1_000_000)],
    );
    mint_to_holder(&pausable);
    tokens.push(("tp_oz_pausable".into(), pausable));
    for (n, (name, symbol, wasm)) in [
        ("Block", "BLK", "tp_oz_blocklist"),
        ("Allow", "ALW", "tp_oz_allowlist"),
    ]
    .into_iter()
    .enumerate()
    {
        let args = vec![
            text(name),
            text(symbol),
            holder.clone(),
            admin.clone(),
            amount(1_000),
        ];
        tokens.push((wasm.into(), d.deploy(tp(wasm), 151 + n as u8, args)));
    }
    let capped = d.deploy(tp("tp_oz_capped"), 153, vec![amount(1_000_000)]);
    mint_to_holder(&capped);
    tokens.push(("tp_oz_capped".into(), capped));
    let votes = d.deploy(tp("tp_oz_votes"), 154, vec![admin.clone()]);
    mint_to_holder(&votes);
    tokens.push(("tp_oz_votes".into(), votes));
    let examples_token = d.deploy(
        tp("tp_soroban_token"),
        155,
        vec![admin.clone(), ScVal::U32(7), text("Token"), text("TOK")],
    );
    mint_to_holder(&examples_token);
    tokens.push(("tp_soroban_token".into(), examples_token));
    // SEP-57: only verified accounts hold it, and its mint names an operator: its set-up file deploys
    // its compliance and verifier, verifies the parties and mints to the holder.
    let rwa = d.deploy_with_setup(
        tp("tp_oz_rwa_token"),
        "fixtures/third-party/oz-rwa.setup.json",
    );
    tokens.push(("tp_oz_rwa_token".into(), rwa));

    println!(
        "\npower discovery (sequences, later clocks, module values) per token, cold cache, {} tokens",
        tokens.len()
    );
    let mut missed = Vec::new();
    for (name, contract) in &tokens {
        let cache = std::env::temp_dir().join(format!(
            "assay-fork-bench-{}-{name}.json",
            std::process::id()
        ));
        let share: Share = Default::default();
        let options = ForkOptions {
            cache: Some(cache.clone()),
            holder: Some(assay_chain::strkey_of(&d.holder.sc_address())),
            before_suite: Some(counted_discovery(&share)),
            ..options.clone()
        };
        let run = run_fork(contract, &options).expect("cold fork run");
        let _ = std::fs::remove_file(&cache);
        let (discovery_time, discovery_trips) = *share.lock().unwrap();
        let found = match &run.powers {
            Some(Ok(s)) => {
                let mut functions: Vec<&str> =
                    s.powers.iter().map(|p| p.function.as_str()).collect();
                functions.dedup();
                format!(
                    "{} invocations over {} functions, {} powers [{}]{}{}",
                    s.invocations,
                    s.probed.len(),
                    s.powers.len(),
                    functions.join(", "),
                    if s.cut.is_empty() {
                        String::new()
                    } else {
                        format!(", {} cut", s.cut.len())
                    },
                    s.unobservable
                        .as_ref()
                        .map_or(String::new(), |u| format!(", unobservable: {u}"))
                )
            }
            Some(Err(e)) => format!("discovery failed: {e}"),
            None => "discovery did not run".into(),
        };
        let met = discovery_time.as_secs_f64() <= 60.0 && discovery_trips <= 80;
        if !met {
            missed.push(name.clone());
        }
        println!(
            "  {name}: {:.2} s wall, {} upstream round trips; discovery {:.2} s, {} round trips, {found}{}",
            run.time.as_secs_f64(),
            run.upstream_round_trips,
            discovery_time.as_secs_f64(),
            discovery_trips,
            if met { "" } else { " -> NOT met" }
        );
    }
    println!(
        "  target: each token's discovery, cold, at most 60 s and 80 upstream round trips -> {}",
        if missed.is_empty() {
            "met by every token".to_string()
        } else {
            format!("NOT met by {}", missed.join(", "))
        }
    );
}

fn show(label: &str, run: &ForkRun, (discovery_time, discovery_trips): (Duration, u64)) {
    let s = run.report.summary();
    let fork = run
        .report
        .fork
        .as_ref()
        .expect("a fork run records its fork");
    println!(
        "  {label}: {:.3} s wall, {} upstream round trips{}; fork ledger {}, premise {}; {} pass, {} fail, {} other (exit {})",
        run.time.as_secs_f64(),
        run.upstream_round_trips,
        if run.offline { " (offline replay)" } else { "" },
        fork.ledger,
        fork.premise,
        s.pass,
        s.fail,
        s.total - s.pass - s.fail,
        run.report.exit_code()
    );
    println!(
        "    of which power discovery: {:.3} s ({:.0} % of the run), {} upstream round trips",
        discovery_time.as_secs_f64(),
        100.0 * discovery_time.as_secs_f64() / run.time.as_secs_f64().max(1e-9),
        discovery_trips
    );
}
