//! `assay watch --config FILE`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assay_attest::watch::shared::worker_name;
use assay_attest::watch::{log, Checked, Health, WatchConfig, Watcher};
use assay_core::exit;
use assay_scan::history::Database;
use clap::Args;

use super::{CommandError, CommandResult};

const AFTER_HELP: &str = "\
Config (TOML):
  registry = \"C…\"               # the registry
  network = \"testnet\"           # or rpc_url + network_passphrase
  source = \"assay-attester\"     # stellar-cli identity (or source_file, or STELLAR_SECRET_KEY)
  asset_network = \"mainnet\"     # where the assets live (default: the registry's network)
  interval_secs = 300            # per-asset check interval
  max_age_secs = 86400           # the window gates use
  refresh_margin_secs = 3600     # re-attest this long before an attestation goes stale
  max_fee_stroops = 100000000    # refuse to sign a write costing more (default 10 XLM)
  max_spend_per_pass_xlm = 500   # what one pass may spend (each transaction counts 2 x max_fee_stroops)
  max_spend_per_day_xlm = 2000   # what one UTC day may spend; reached: writes wait, /health degraded, alert
  metrics_addr = \"127.0.0.1:9464\" # optional /health and /metrics (loopback only)
  sep41_owner_identity = \"holder\"   # optional: a key-based SEP-41 run's holder (else ASSAY_OWNER_SECRET)
  sep41_spender_identity = \"spender\" # optional: its spender (else ASSAY_SPENDER_SECRET)
  sep41_allow_non_testnet_write = false # consent to suite writes off testnet/futurenet/standalone
  concurrency = 64               # assets scanned at once in a pass
  per_host_concurrency = 8       # requests in flight to one source host
  per_host_requests_per_sec = 1  # optional: a source's published rate limit (per host)
  batch_size = 35                # writes per attest_many transaction (at most the registry cap, 35)
  shard = \"0/3\"                 # optional: this instance's shard (--shard overrides; SQLite only)
  database = \"postgres://assay@db.internal/assay\" # optional: PostgreSQL shared by many workers
  lease_secs = 120               # with a database: how long a worker holds the assets it claimed
  discover_interval_secs = 3600  # how often [[discover]] sources are read
  react_every_ledgers = 1        # re-check assets whose issuer account or contract changed (0: off)
  [[asset]]
  asset = \"USDC-GA5Z…\"
  interval_secs = 600            # optional per-asset override
  sep41 = true                   # optional: run the SEP-41 suite on the asset's contract each check
  [[discover]]
  asset_list = \"https://…/list.json\" # a SEP-42 list; or issuer = \"G…\" (every asset it issued)

An asset may be a token contract (C…): a custom token, or a classic asset's Stellar Asset Contract by its
address. With sep41 = true, each check also runs the conformance suite (as `assay attest --sep41`: keyless
on a fork of the registry's network unless the parties' keys are given) and logs a
\"sep41\" event with its summary; a FAIL is attested as critical with sep41_violation (bit 8); an
UNVERIFIABLE or SKIPPED check makes the report undetermined, so it is refused and not written.

Assets are checked in passes: the due assets are scanned at once (each source host under its own
bound, a 429/503 Retry-After pausing that host only), each asset is decided as its scan finishes, and
the writes the pass decides go out in attest_many transactions of batch_size while the rest are still
being scanned; a batch the registry refuses is split until the entry at fault
stands alone, so the others land. With --shard I/N (SHA-256 of the registry key), N instances split one
list and never write the same asset. [[discover]] sources are read every discover_interval_secs: assets
they newly name are checked at the next pass; assets none names any more are retired (not refreshed,
so their entries age out); a source that cannot be read retires nothing. Between passes, every
react_every_ledgers ledgers one batched getLedgerEntries reads each watched asset's issuer account
(flags, home domain; when the assets live on the registry's network) and contract instance (code, a
SAC's admin); an asset whose entry changed is checked at once (\"ledger_change\" line).

With a PostgreSQL database (--database, ASSAY_DATABASE_URL or the config's `database`; the password only
in ASSAY_DATABASE_URL or PGPASSWORD), any number of workers run the same config on one database: each
leases the due assets no other worker holds (a pass of them at a time, for lease_secs), checks them and
hands them back with their next due time; the assets of a worker that dies are taken by another when its
lease ends. One worker, the leader, follows the ledger and makes changed assets due; when it dies another
takes over within seconds, from the baseline it left in the database. Transactions go out one worker at
a time per signing key, and the spend budget is one count for all. --shard is refused there: not needed.

Each check scans fresh, records the observation in the history, and writes only an attestable verdict,
only when the chain is absent, different, or within refresh_margin_secs of max_age_secs. A refused
verdict is logged with its rule and not written, so the old value ages out and gates fail closed. When
the refused report's issuer flags prove more than the registry holds (a higher severity or a capability
bit the entry lacks), the entry is revoked at once and an \"alert\" line (alert refused_stricter_floor)
is logged and counted in assay_watch_alerts_total; two refusals in a row for an asset mark /health
degraded. A write confirmed on chain whose read-back failed logs \"written_unconfirmed\" with the hash;
the next check re-reads the entry instead of writing again. Failures back off (15 s doubling, capped).
Logs are JSON lines on stderr; a write logs \"submitting\" then \"written\" (or \"write_failed\" /
\"outcome_unknown\"). SIGINT/SIGTERM log \"stopping\" and stop the loop after the check in progress: a
transaction being submitted is followed to its final status (and its observation recorded) before
\"stopped\" and exit 0.

The config is refused when an asset's interval_secs plus one pass over every asset (120 s allowed per
check) exceeds refresh_margin_secs: entries could go stale between checks.

Exit codes:
  0   stopped cleanly (or --once: every asset checked without failure)
  1   --once: at least one check failed, or a write was deferred by the spend budget
  6   --once: a transaction was sent and its outcome is unknown (check the logged hash)
  7   --once: a write was confirmed but not read back (it is written; the next check re-reads it)
Priority when several apply: 64, 6, 1, 7.
  64  usage error (bad config, network, identity)";

/// Arguments of `assay watch`.
#[derive(Args, Debug)]
#[command(about = "Keep registry attestations fresh and correct for a list of assets", after_help = AFTER_HELP)]
pub struct WatchArgs {
    /// The TOML configuration file.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Check every asset once, then exit (for cron and tests).
    #[arg(long)]
    pub once: bool,
    /// Watch only shard I of N of the asset list (e.g. 0/3, 1/3, 2/3 on three instances): an asset
    /// belongs to one shard by SHA-256 of its registry key, so N instances never write the same asset.
    /// Overrides the config's `shard`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// A PostgreSQL database shared by many workers (postgres://USER@HOST:PORT/DB), instead of the
    /// config's `history` file. No password here (argv is visible to every user): give the URL in
    /// ASSAY_DATABASE_URL, or the password in PGPASSWORD.
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
}

/// Runs `assay watch`: parses the config, hands it to the library to resolve, serves the health
/// endpoints, and runs the watcher until a signal (or one pass with `--once`).
pub fn run(args: WatchArgs) -> CommandResult {
    let text = std::fs::read_to_string(&args.config).map_err(|e| {
        CommandError::usage(format!(
            "cannot read --config {}: {e}",
            args.config.display()
        ))
    })?;
    let config = WatchConfig::parse(&text)
        .map_err(|m| CommandError::usage(format!("--config {}: {m}", args.config.display())))?;
    let metrics_addr = config.metrics_addr.clone();
    let (chain, setup) = config.resolve(args.shard.as_deref(), args.database.as_deref())?;
    let shared = matches!(setup.history, Some(Database::Postgres(_)));
    let stop = crate::signals::install(|signal| {
        log(
            "stopping",
            serde_json::json!({"signal": signal,
            "note": "finishing the check in progress (a sent transaction is followed to its end)"}),
        )
    })?
    .flag();
    if let Some(addr) = &metrics_addr {
        serve_health(addr, setup.health.clone(), stop.clone())?;
    }
    let mut watcher = Watcher::new(&chain, setup);
    let outcomes = if shared {
        watcher.run_shared(&stop, args.once, &worker_name())
    } else {
        watcher.run(&stop, args.once)
    };
    Ok(if args.once {
        once_exit_code(&outcomes)
    } else {
        exit::OK
    })
}

/// Serves `/health` and `/metrics` on `addr` (loopback only) on the server loop `assay serve` runs, on a
/// thread of its own, until `stop` is raised. Returns the address it listens on.
fn serve_health(
    addr: &str,
    health: Arc<Mutex<Health>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> Result<std::net::SocketAddr, CommandError> {
    let parsed: std::net::SocketAddr = addr.parse().map_err(|_| {
        CommandError::usage(format!("metrics_addr {addr:?}: expected 127.0.0.1:PORT"))
    })?;
    crate::server::check_listen("metrics_addr", parsed, None).map_err(CommandError::usage)?;
    let listener = std::net::TcpListener::bind(parsed)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| CommandError::usage(format!("metrics_addr {addr}: {e}")))?;
    let bound = listener.local_addr().unwrap_or(parsed);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::failed(format!("cannot start the metrics server: {e}")))?;
    let handler: crate::server::Handler = Arc::new(move |_method, path, _query| {
        let (status, content_type, body) = assay_attest::watch::health::answer(&health, path);
        hyper::Response::builder()
            .status(status)
            .header("Content-Type", content_type)
            .body(body)
            .unwrap_or_else(|_| hyper::Response::new(String::new()))
    });
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            let stopped = async move {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            };
            crate::server::run(
                "assay watch metrics",
                listener,
                crate::server::DEFAULT_MAX_CONNECTIONS,
                handler,
                stopped,
            )
            .await;
        })
    });
    Ok(bound)
}

/// The exit code of `watch --once`: an unknown outcome beats a failure (or a write the spend budget
/// deferred) beats an unconfirmed write; a refusal is the loop doing its job (the value ages out), not an
/// error of the run.
fn once_exit_code(outcomes: &[Checked]) -> u8 {
    let has = |f: fn(&Checked) -> bool| outcomes.iter().any(f);
    if has(|o| matches!(o, Checked::Unknown(_))) {
        exit::OUTCOME_UNKNOWN
    } else if has(|o| matches!(o, Checked::Failed(_) | Checked::Deferred(_))) {
        exit::ERROR
    } else if has(|o| matches!(o, Checked::WrittenUnconfirmed(..))) {
        exit::WRITTEN_UNCONFIRMED
    } else {
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicBool, Ordering};

    fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        raw
    }

    #[test]
    fn health_and_metrics_run_on_the_server_loop_and_only_on_loopback() {
        let health = Arc::new(Mutex::new(Health {
            checks_total: 7,
            ..Health::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let refused = serve_health("0.0.0.0:0", health.clone(), stop.clone()).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("metrics_addr 0.0.0.0:0 is not a loopback address"),
            "{refused}"
        );
        let addr = serve_health("127.0.0.1:0", health, stop.clone()).unwrap();
        let answer = get(addr, "/health");
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.contains("\"status\":\"ok\""),
            "{answer}"
        );
        // The server loop's common headers, as `assay serve` sends them.
        assert!(
            answer
                .to_ascii_lowercase()
                .contains("cache-control: no-store"),
            "{answer}"
        );
        let metrics = get(addr, "/metrics");
        assert!(
            metrics.contains("assay_watch_checks_total 7\n"),
            "{metrics}"
        );
        assert!(get(addr, "/other").starts_with("HTTP/1.1 404"));
        stop.store(true, Ordering::Relaxed);
    }
}
