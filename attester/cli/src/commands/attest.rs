//! `assay attest ASSET... --registry C… --source NAME --network N`.

use std::io::Write;

use assay_core::Freshness;
use clap::Args;

use super::shared::{rpc_client, OutputFormat, RegistryScanArgs, SignerArgs, SuiteBindingArgs};
use super::{usage, CommandResult};
use assay_attest::attest::{
    execute, exit_code, plan, render_text, revoke_weaker_entries, AssetResult, ChainSubmitter,
};
use assay_attest::decide::Floor;
use assay_attest::registry::MAX_BATCH_SIZE;
use assay_attest::sac;
use assay_attest::targets::{evaluate_targets, resolve};
use assay_chain::submit::{InvokeOptions, Invoker, DEFAULT_MAX_FEE_STROOPS};
use assay_scan::history::ChainReading;

const AFTER_HELP: &str = "\
Every asset is scanned fresh (the answer cache is bypassed). A report that is unevaluated, stale,
undetermined or inconsistent is never written: the line names the rule. Attestable reports are written
in attest_many batches (at most 50, the registry's cap) from the --source account, which must be in the
registry's attester set; each transaction is followed to a final status, and a lost response is
re-polled by hash (the same envelope is re-sent, so nothing is written twice).

SEP-41 (--sep41): before deciding, each asset's Stellar Asset Contract (or the token contract itself) on
the registry's network is run through the 27-check conformance suite, keyless on a fork of that network:
nothing is signed for the suite and nothing is sent to the network (--output json names the fork's ledger
and holder premise under `sep41.fork`). With the holder's and spender's keys (ASSAY_OWNER_SECRET /
ASSAY_SPENDER_SECRET, or --owner-identity / --spender-identity) it is a key-based live run instead: the
holder needs 5 units of the asset, both need XLM for fees and the spender a trustline, and writes on a
network other than testnet/futurenet/standalone need --allow-non-testnet-write. Each check becomes one
`sep41` evidence line (bound by the evidence hash). Any FAIL escalates the report to critical with flag
sep41_violation (bit 8; capability bits untouched), even beside open rows; with no FAIL, any UNVERIFIABLE or
SKIPPED check, or a suite that could not start, leaves it undetermined: not attested (rule
`undetermined`). The suite's summary is printed per asset; --output json adds a `sep41` object with every
row.

Token contracts (C…): a custom token is judged by what its code does, observed on a fork of the network
(nothing signed or sent): every exported function runs with exactly the authorization it asks for, and
the effect before vs after decides the bits, never a function's name. A holder's balance falling without
its authorization sets admin_clawback (bit 10, at least high); a holder's transfer refused after a call
admin_freeze (bit 11, at least medium); supply created admin_mint (bit 12, no floor); replaced code or a
replaced contract its transfer calls into, or an import of the contract-update function, code_mutable
(bit 9, at least high); a privileged write nobody could classify admin_unclassified (bit 13, no floor);
a holder's transfer delivering less than it sends after a privileged call admin_transfer_fee (bit 14, at
least medium; high when it delivers nothing).
A discovery that could not run, or had no holder to watch, leaves the report undetermined (not attested).
Accountability is verified when the admin() account's home domain lists the contract in [[CURRENCIES]].
Its evidence hash is v8. A Stellar Asset Contract named by C… is judged by its issuer's flags, plus its
current admin().

A refused report still proves the issuer flags it read (its capability floor). When that floor is
stricter than the registry's entry for the asset (a higher severity, or a capability bit the entry
lacks), the entry is revoked so gates fail closed, and an ALERT line goes to stderr (status `revoked`;
with --dry-run the alert says it would be revoked and nothing is sent).

Exit codes:
  0   every asset was written (with --dry-run: simulated successfully)
  1   error: an asset had no report (a Horizon that serves another network included), or its transaction
      failed or was refused; nothing was written for it
  3   at least one asset was refused as not attestable (the rule is printed; a revoked weaker entry is a
      refusal too); all others were written
  6   a transaction was sent but its outcome is unknown: check the printed hash before retrying
  7   a write was confirmed on chain but reading it back failed: it IS written (the hash is printed);
      check it with `assay verify`, do not resend
  64  usage error (bad asset, network, registry, identity; a secret on the command line; --sep41 without
      consent off test networks)
Priority when several apply: 64, 6, 1, 7, 3.

Secrets: --source names a stellar-cli identity; otherwise STELLAR_SECRET_KEY or --source-file. A secret
typed on the command line is refused. Secrets are never printed.

Examples:
  assay attest USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN --registry CBK4… --source assay-attester --network testnet --asset-network mainnet
  STELLAR_SECRET_KEY=… assay attest AQUA-GBNZ… --registry C… --network local --horizon-url http://localhost:8000 --dry-run
  assay attest USDC-GBBD… --registry C… --source assay-attester --network testnet --sep41
  assay attest CDLZ… --registry C… --source assay-attester --network testnet";

/// Arguments of `assay attest`.
#[derive(Args, Debug)]
#[command(about = "Scan assets fresh and write the attestable verdicts to the registry", after_help = AFTER_HELP)]
pub struct AttestArgs {
    /// Assets as CODE-ISSUER or CODE:ISSUER, or token contracts as C… (a custom token, or a Stellar Asset
    /// Contract).
    #[arg(value_name = "ASSET", required = true)]
    pub assets: Vec<String>,
    #[command(flatten)]
    pub registry: RegistryScanArgs,
    #[command(flatten)]
    pub signer: SignerArgs,
    /// Simulate the batches only; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Attestations per transaction (1-50).
    #[arg(long, value_name = "N", default_value_t = MAX_BATCH_SIZE)]
    pub batch_size: usize,
    /// Percent added to the simulated resource fee.
    #[arg(long, value_name = "PCT", default_value_t = 15)]
    pub fee_margin: u32,
    /// The most one transaction may cost, in stroops (inclusion plus resource fee); a transaction
    /// priced above it is refused before it is signed. Default 10 XLM.
    #[arg(long, value_name = "STROOPS", default_value_t = DEFAULT_MAX_FEE_STROOPS)]
    pub max_fee: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub suite: SuiteBindingArgs,
    /// History database the fresh reports, their evidence bundles and the written entries are recorded
    /// in (default: the user's data directory; `assay evidence HASH` reads the bundles back).
    #[arg(long, value_name = "PATH", env = "ASSAY_HISTORY")]
    pub history: Option<std::path::PathBuf>,
    /// A PostgreSQL database (postgres://USER@HOST:PORT/DB) to record in instead of a file, as `watch`
    /// workers do; no password here (give the URL in ASSAY_DATABASE_URL, or PGPASSWORD).
    #[arg(long, value_name = "URL", conflicts_with = "history")]
    pub database: Option<String>,
    /// Record nothing in the history.
    #[arg(long, conflicts_with_all = ["history", "database"])]
    pub no_history: bool,
}

/// Records each fresh report (and its evidence bundle) and each confirmed write in the history, so
/// `assay evidence HASH` can print what an attestation was based on. A failure is a warning: the
/// attestations are written either way.
fn record(
    path: &assay_scan::history::Database,
    reports: &[(usize, assay_core::report::Report)],
    suites: &[Option<assay_attest::sep41::Sep41Outcome>],
    powers_snapshots: &[Option<serde_json::Value>],
    targets: &[assay_attest::targets::Target],
    outcomes: &[assay_attest::attest::Outcome],
) {
    use assay_attest::attest::Outcome;
    let recorded = assay_scan::history::History::connect(path).and_then(|mut history| {
        for (index, report) in reports {
            assay_attest::evidence::record_check(
                &mut history,
                report,
                suites[*index].as_ref(),
                powers_snapshots[*index].as_ref(),
            )?;
        }
        let at = assay_core::Timestamp::now().to_string();
        let readings: Vec<(String, String, ChainReading)> = targets
            .iter()
            .zip(outcomes)
            .filter_map(|(target, outcome)| match outcome {
                Outcome::Written(w) | Outcome::WrittenUnconfirmed { write: w, .. } => Some((
                    target.asset.to_string(),
                    at.clone(),
                    ChainReading::Attested {
                        severity: w.severity,
                        flags: w.flags,
                        evidence_hash: w.evidence_hash.clone(),
                        attested_at: None,
                        tx_hash: Some(w.tx_hash.clone()),
                        ledger: Some(w.ledger),
                    },
                )),
                _ => None,
            })
            .collect();
        history.append_chain_readings(&readings)
    });
    if let Err(err) = recorded {
        eprintln!("assay attest: warning: the evidence was not recorded: {err}");
    }
}

/// Runs `assay attest`.
pub fn run(args: AttestArgs) -> CommandResult {
    if args.batch_size == 0 || args.batch_size > MAX_BATCH_SIZE {
        return usage(format!(
            "invalid --batch-size {}: expected 1 to {MAX_BATCH_SIZE} (the registry's cap)",
            args.batch_size
        ));
    }
    let (spec, registry, settings) = args.registry.resolve()?;
    let signer = args.signer.load()?;
    let runner = args.suite.runner(&spec, &settings.asset_passphrase)?;
    let mut targets = Vec::new();
    for input in &args.assets {
        targets.push(resolve(
            input,
            &spec.passphrase,
            &settings.asset_passphrase,
        )?);
    }
    let rpc = rpc_client(&spec)?;
    let evaluated = evaluate_targets(
        &settings,
        &spec.rpc_url,
        &spec.passphrase,
        &targets,
        runner.as_ref(),
    )?;
    let mut reports = Vec::with_capacity(evaluated.len());
    let mut suites = Vec::with_capacity(evaluated.len());
    let mut powers_snapshots = Vec::with_capacity(evaluated.len());
    for e in evaluated {
        reports.push(e.report);
        suites.push(e.suite);
        powers_snapshots.push(e.powers_snapshot);
    }
    let history = if args.no_history {
        None
    } else {
        // Nothing given and no data directory: nothing is recorded, as before.
        assay_scan::history::Database::resolve(
            args.database.as_deref(),
            None,
            args.history.as_deref(),
        )
        .map_err(super::CommandError::usage)?
    };
    // Kept for the evidence bundles: `plan` consumes the reports.
    let judged: Vec<(usize, assay_core::report::Report)> = reports
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.as_ref().ok().map(|r| (i, r.clone())))
        .collect();
    // What each refused report still proves (the flags it did read), to revoke a weaker entry on chain.
    let floors: Vec<Option<Floor>> = reports
        .iter()
        .map(|r| r.as_ref().ok().and_then(Floor::of))
        .collect();
    let as_of = assay_core::Timestamp::now();
    let (planned, outcomes) = plan(&targets, reports, as_of, Freshness::default());
    let options = InvokeOptions {
        resource_fee_margin_pct: args.fee_margin,
        max_fee: args.max_fee,
        ..InvokeOptions::default()
    };
    let mut submitter = ChainSubmitter {
        invoker: Invoker {
            rpc: &rpc,
            network: &spec,
            signer: &signer,
            options,
        },
        registry,
        confirm_read_back: true,
    };
    let outcomes = execute(
        &planned,
        outcomes,
        &mut submitter,
        args.batch_size,
        args.dry_run,
    );
    let outcomes = revoke_weaker_entries(&targets, &floors, outcomes, &mut submitter, args.dry_run);
    if let Some(path) = history.as_ref().filter(|_| !args.dry_run) {
        record(
            path,
            &judged,
            &suites,
            &powers_snapshots,
            &targets,
            &outcomes,
        );
    }
    let mut out = std::io::stdout().lock();
    for ((target, outcome), suite) in targets.iter().zip(&outcomes).zip(&suites) {
        let line = AssetResult {
            asset: target.asset.to_string(),
            contract: sac::contract_strkey(target.contract),
            outcome: outcome.clone(),
        };
        let text = match args.output {
            OutputFormat::Json => {
                let mut value = serde_json::to_value(&line).expect("serialises");
                if let (Some(obj), Some(suite)) = (value.as_object_mut(), suite) {
                    obj.insert("sep41".into(), suite.to_json());
                }
                format!("{value}\n")
            }
            OutputFormat::Text => {
                let mut text = suite
                    .as_ref()
                    .map(|s| s.render_text(&line.asset))
                    .unwrap_or_default();
                text.push_str(&render_text(&line));
                text
            }
        };
        let _ = out.write_all(text.as_bytes());
    }
    let _ = out.flush();
    Ok(exit_code(&outcomes))
}
