//! `assay localnet`: run the local Stellar network (stellar-rpc JSON-RPC over the real Soroban
//! host, a Horizon-compatible read API and friendbot) until SIGINT or SIGTERM.

use std::path::PathBuf;

use super::shared::OutputFormat;
use super::{failed, usage, CommandResult};
use assay_localnet::{ForkConfig, LocalNet, LocalNetConfig, LocalNetError, STANDALONE_PASSPHRASE};
use clap::Args;

#[derive(Args)]
#[command(
    about = "Run a local Stellar network: stellar-rpc JSON-RPC on the real Soroban host, Horizon reads, friendbot",
    long_about = "Run a local Stellar network on 127.0.0.1 until SIGINT or SIGTERM.\n\n\
        Transactions are applied with soroban-env-host (the code stellar-core runs) and simulated with \
        soroban-simulation. The node answers the stellar-rpc JSON-RPC API, GET /horizon/accounts/{id} and \
        /horizon/assets, and /friendbot?addr=G…. The root account's secret is SHA-256 of the passphrase \
        (as in stellar-core); fund accounts through friendbot instead of using it.\n\n\
        Fork mode (--fork-rpc-url URL): the network continues from another network's ledger (its latest, \
        or --fork-ledger N, which stellar-rpc can serve only at its latest ledger or from a --fork-cache \
        recorded at N). Entries it lacks are read from that network's stellar-rpc (getLedgerEntries, \
        batched) when first needed; every write stays local and nothing is sent upstream. The passphrase \
        is the upstream's. --fork-cache FILE records the entries read as a stellar snapshot JSON file, and \
        replays FILE offline (no upstream needed) when it exists.",
    after_help = "Examples:\n  assay localnet --port 8000 --ledger-close-ms 1000\n  \
        stellar network add local --rpc-url http://127.0.0.1:8000/rpc --network-passphrase 'Standalone Network ; February 2017'\n  \
        assay localnet --port 8001 --fork-rpc-url https://soroban-testnet.stellar.org --fork-cache testnet.json\n\n\
        Exit codes:\n  0   stopped by SIGINT or SIGTERM\n  1   the network could not start (e.g. the port is in use)\n  64  usage error (a --fork-ledger \
        the fork cannot serve included)"
)]
pub struct LocalnetArgs {
    /// TCP port on 127.0.0.1 (0 picks a free port)
    #[arg(long, default_value_t = 8000, env = "STELLAR_LOCALNET_PORT")]
    port: u16,
    /// Ledger close interval in milliseconds (the real network closes about every 5,000)
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    ledger_close_ms: u64,
    /// Network passphrase
    #[arg(long, default_value = STANDALONE_PASSPHRASE, env = "STELLAR_NETWORK_PASSPHRASE")]
    network_passphrase: String,
    /// Fork the network served at this stellar-rpc URL (state changes stay local); a URL with
    /// credentials or a key goes in the environment, never on the command line
    #[arg(long, value_name = "URL", env = "ASSAY_FORK_RPC_URL")]
    fork_rpc_url: Option<String>,
    /// Fork at this ledger (default: the upstream's latest)
    #[arg(long, value_name = "N", requires = "fork_rpc_url")]
    fork_ledger: Option<u32>,
    /// Record the fork's upstream entries to FILE (stellar snapshot JSON); replay FILE offline when it exists
    #[arg(long, value_name = "FILE")]
    fork_cache: Option<PathBuf>,
    /// Format of the startup summary on stdout
    #[arg(long, value_enum, default_value = "text")]
    output: OutputFormat,
}

pub fn run(args: LocalnetArgs) -> CommandResult {
    let stop = crate::signals::install(|_| {})?;
    let config = LocalNetConfig {
        port: args.port,
        ledger_close_ms: args.ledger_close_ms,
        passphrase: args.network_passphrase.clone(),
    };
    let started = if args.fork_rpc_url.is_some() || args.fork_cache.is_some() {
        LocalNet::start_fork(
            config,
            ForkConfig {
                rpc_url: args.fork_rpc_url.clone(),
                ledger: args.fork_ledger,
                cache: args.fork_cache.clone(),
            },
        )
    } else {
        LocalNet::start(config)
    };
    let net = match started {
        Ok(n) => n,
        Err(e @ LocalNetError::ForkLedger(_)) => return usage(e),
        Err(e) => return failed(e),
    };
    let assay_localnet::xdr::PublicKey::PublicKeyTypeEd25519(root_key) = &net.root_account().0;
    let root = assay_localnet::strkey_account(root_key.0);
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            serde_json::json!({
                "rpcUrl": net.rpc_url(),
                "horizonUrl": net.horizon_url(),
                "friendbotUrl": net.friendbot_url(),
                "adminUrl": net.admin_url(),
                "networkPassphrase": net.passphrase(),
                "rootAccount": root,
                "ledgerCloseMs": args.ledger_close_ms,
                "forkLedger": net.fork_stats().map(|f| f.ledger),
                "forkOffline": net.fork_stats().map(|f| f.offline),
            })
        ),
        OutputFormat::Text => {
            println!("rpc url:            {}", net.rpc_url());
            println!("horizon url:        {}", net.horizon_url());
            println!("friendbot url:      {}", net.friendbot_url());
            println!("admin url:          {}", net.admin_url());
            println!("network passphrase: {}", net.passphrase());
            println!("root account:       {root}");
            println!("ledger close:       every {} ms", args.ledger_close_ms);
            if let Some(fork) = net.fork_stats() {
                let from = match (&args.fork_cache, fork.offline) {
                    (Some(file), true) => format!("{} (offline replay)", file.display()),
                    _ => assay_core::redact::origin(args.fork_rpc_url.as_deref().unwrap_or("")),
                };
                println!("fork:               ledger {} of {from}", fork.ledger);
            }
        }
    }
    eprintln!("localnet: running; stop with Ctrl-C (SIGINT) or SIGTERM");
    let sig = stop.wait();
    eprintln!(
        "localnet: received signal {sig}; stopping at ledger {}",
        net.latest_ledger()
    );
    if let Some(fork) = net.fork_stats() {
        eprintln!(
            "localnet: fork read {} entries in {} upstream calls; {} changed upstream after ledger {}",
            fork.entries,
            fork.upstream_round_trips,
            fork.drifted.len(),
            fork.ledger
        );
    }
    drop(net);
    Ok(assay_core::exit::OK)
}
