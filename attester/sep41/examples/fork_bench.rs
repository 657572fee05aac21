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
//!     cargo run --release -p assay-sep41 --example fork_bench [-- LEDGER_CLOSE_MS]
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assay_chain::{InvokeOutcome, NetworkClient, Signer};
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_sep41::{
    checks::i128_val,
    fork::{run_fork, ForkOptions, ForkRun},
    BeforeSuite,
};
use stellar_xdr::{CreateAccountOp, OperationBody, ScString, ScVal};

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
    let share: Arc<Mutex<(Duration, u64)>> = Default::default();
    let measured = share.clone();
    let options = ForkOptions {
        before_suite: Some(BeforeSuite(Arc::new(move |net, contract, holders| {
            let trips = || net.fork_stats().map_or(0, |s| s.upstream_round_trips);
            let (started, before) = (Instant::now(), trips());
            let found =
                assay_powers::discover_on(net, contract, holders, assay_powers::Bounds::default())
                    .map_err(Into::into);
            *measured.lock().unwrap() = (started.elapsed(), trips() - before);
            found
        }))),
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
