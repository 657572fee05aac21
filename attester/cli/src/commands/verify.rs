//! `assay verify ASSET --registry C…`.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::shared::{
    resolve_all, rpc_client, AssetNetworkArgs, NetworkArgs, OutputFormat, RegistryArgs, Sep41Args,
    SourceArgs,
};
use super::{failed, usage, CommandResult};
use assay_attest::sac;
use assay_attest::sep41::Sep41Runner;
use assay_attest::targets::resolve;
use assay_attest::verify::{ledger_time, read_safety, verify_target, Verdict};

const AFTER_HELP: &str = "\
Reads get_safety by simulation only (nothing is signed or sent), scans the asset fresh (cache bypassed),
recomputes the evidence hash in the preimage version (v3, v2, v1 for a classic asset; v4 for a token
contract) that matches the on-chain value, and compares severity, then flags, then hash. The age is
measured on the ledger clock. A token contract (C…) is read again from the network exactly as `assay
attest` reads it. An attestation written with --sep41 binds the suite's verdicts: when the fresh scan
alone does not reproduce the on-chain hash, verify re-runs the suite keyless on a fork of the registry's
network (nothing signed or sent) and compares the hash it then derives. --sep41 always runs it (with the
holder's and spender's keys, when given, as a key-based live run).

Exit codes:
  0   agreement: severity, flags and hash match and the attestation is within --max-age
  1   error: RPC, Horizon or a malformed on-chain value (the message says which)
  2   could not verify: the fresh scan is undetermined or unevaluated (a source did not answer)
  3   mismatch: the first differing field is named (severity, flags, hash)
  4   absent: the registry holds nothing for this asset
  5   stale: the values agree but the attestation is older than --max-age
  64  usage error

Example:
  assay verify USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN --registry CBK4… --network testnet --asset-network mainnet";

/// Arguments of `assay verify`.
#[derive(Args, Debug)]
#[command(about = "Check what the registry holds for an asset against a fresh scan", after_help = AFTER_HELP)]
pub struct VerifyArgs {
    /// The asset, as CODE-ISSUER or CODE:ISSUER, or a token contract as C….
    #[arg(value_name = "ASSET")]
    pub asset: String,
    #[command(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub asset_network: AssetNetworkArgs,
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Oldest acceptable attestation in seconds (0 disables the age check).
    #[arg(long, value_name = "SECONDS", default_value_t = 86_400)]
    pub max_age: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub suite: Sep41Args,
}

#[derive(Serialize)]
struct Line<'a> {
    asset: String,
    contract: String,
    #[serde(flatten)]
    verdict: &'a Verdict,
}

fn render(v: &Verdict) -> String {
    match v {
        Verdict::Agreement {
            severity,
            flags,
            evidence_hash,
            evidence_version,
            age_secs,
        } => format!(
            "agreement: severity {severity}, flags {flags}, hash {} (v{evidence_version}), age {}",
            &evidence_hash[..8],
            assay_core::time::format_duration(*age_secs as i64)
        ),
        Verdict::Absent => "absent: the registry holds no attestation for this asset".into(),
        Verdict::Mismatch {
            field,
            on_chain,
            scanned,
        } => format!("mismatch: {field} on chain {on_chain}, fresh scan {scanned}"),
        Verdict::Stale {
            age_secs,
            max_age_secs,
        } => format!(
            "stale: attestation age {} exceeds --max-age {}",
            assay_core::time::format_duration(*age_secs as i64),
            assay_core::time::format_duration(*max_age_secs as i64)
        ),
        Verdict::Unverifiable { reason } => format!("could not verify: {reason}"),
    }
}

/// Runs `assay verify`.
pub fn run(args: VerifyArgs) -> CommandResult {
    let (spec, registry, settings) = match resolve_all(
        &args.network,
        &args.registry,
        &args.asset_network,
        &args.sources,
    ) {
        Ok(x) => x,
        Err(m) => return usage(m),
    };
    let target = resolve(&args.asset, &spec.passphrase, &settings.asset_passphrase)?;
    let (asset, contract) = (target.asset.clone(), target.contract);
    // The suite re-runs whenever the attestation's hash needs it (keyless on a fork of the
    // registry's network, where the token lives), or always with --sep41.
    let runner = match args.suite.runner(&spec, &settings.asset_passphrase) {
        Ok(Some(r)) => Some(r),
        Ok(None) if settings.asset_passphrase == spec.passphrase => {
            Some(Sep41Runner::keyless(&spec.rpc_url, &spec.passphrase))
        }
        Ok(None) => None,
        Err(m) => return usage(m),
    };
    let rpc = match rpc_client(&spec) {
        Ok(r) => r,
        Err(m) => return usage(m),
    };
    let fail = |m: &dyn std::fmt::Display| failed(format!("{asset}: {m}"));
    let on_chain = match read_safety(&rpc, registry, contract) {
        Ok(s) => s,
        Err(m) => return fail(&m),
    };
    let verdict = match verify_target(
        &settings,
        &spec.rpc_url,
        &spec.passphrase,
        &target,
        on_chain.as_ref(),
        runner.as_ref(),
        args.suite.sep41,
        &|| ledger_time(&rpc),
        args.max_age,
    ) {
        Ok(v) => v,
        Err(m) => return fail(&m),
    };
    let text = match args.output {
        OutputFormat::Json => serde_json::to_string(&Line {
            asset: asset.to_string(),
            contract: sac::contract_strkey(contract),
            verdict: &verdict,
        })
        .expect("serialises"),
        OutputFormat::Text => format!("{asset}  {}", render(&verdict)),
    };
    let _ = writeln!(std::io::stdout(), "{text}");
    Ok(verdict.exit_code())
}
