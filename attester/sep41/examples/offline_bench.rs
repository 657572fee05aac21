//! Benchmark: wall time and RPC round trips of a full offline run on the conformant token.
//!
//! Baseline, measured in the same run: the mean latency of one `getLatestLedger` round trip to
//! an embedded network with the same ledger close time. The ratio shows how much of the suite's
//! time is RPC round trips versus waiting for ledgers to close.
//!
//!     cargo run --release -p assay-sep41 --example offline_bench [-- LEDGER_CLOSE_MS]
use std::time::Instant;

use assay_chain::NetworkClient;
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_sep41::offline::{run_offline, OfflineOptions, OfflineToken};

mod support;

fn main() {
    let close_ms = support::ledger_close_ms();
    let wasm = support::conformant_token_wasm();

    // Baseline: one RPC round trip on an idle embedded network.
    let net = LocalNet::start(LocalNetConfig {
        port: 0,
        ledger_close_ms: close_ms,
        passphrase: assay_localnet::STANDALONE_PASSPHRASE.into(),
    })
    .expect("embedded network starts");
    let network = NetworkClient::new(&net.rpc_url(), net.passphrase());
    let calls = 50;
    let started = Instant::now();
    for _ in 0..calls {
        network.latest_ledger().expect("getLatestLedger");
    }
    let rtt = started.elapsed() / calls;
    drop(net);

    let subject = OfflineToken::Wasm {
        wasm,
        origin: "conformant_token.wasm".into(),
        constructor_args: None,
        mint_fn: "mint".into(),
        deployment: Default::default(),
    };
    let options = OfflineOptions {
        ledger_close_ms: close_ms,
        ..OfflineOptions::default()
    };
    let started = Instant::now();
    let run = run_offline(&subject, &options).expect("offline run");
    let total = started.elapsed();
    let s = run.report.summary();
    println!("offline sep41 run, conformant token, ledger close {close_ms} ms");
    println!(
        "  verdicts:          {} pass, {} fail, {} other (exit {})",
        s.pass,
        s.fail,
        s.total - s.pass - s.fail,
        run.report.exit_code()
    );
    println!(
        "  total wall time:   {:.3} s (network start + setup + suite)",
        total.as_secs_f64()
    );
    println!(
        "  setup:             {:.3} s, {} RPC round trips",
        run.setup_time.as_secs_f64(),
        run.setup_round_trips
    );
    println!(
        "  suite:             {:.3} s, {} RPC round trips",
        run.suite_time.as_secs_f64(),
        run.suite_round_trips
    );
    println!(
        "  baseline RTT:      {:.3} ms (getLatestLedger, mean of {calls})",
        rtt.as_secs_f64() * 1e3
    );
    let rpc_share = run.suite_round_trips as f64 * rtt.as_secs_f64() / run.suite_time.as_secs_f64();
    println!(
        "  suite time / (round trips x baseline RTT): {:.1}x",
        1.0 / rpc_share.max(1e-9)
    );
    println!(
        "  target: suite under 5 s -> {}",
        if run.suite_time.as_secs_f64() < 5.0 {
            "met"
        } else {
            "NOT met"
        }
    );
}
