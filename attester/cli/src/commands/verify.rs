//! `assay verify ASSET --registry C…`.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::shared::{rpc_client, OutputFormat, RegistryScanArgs, SuiteBindingArgs};
use super::{failed, CommandError, CommandResult};
use assay_attest::registry::{
    contract_wasm_sha256, describe_assessment, is_safe_assessment, read_assessment,
    read_code_changed, read_quorum, read_safety, read_safety_by, read_verdict_store, sha256_hex,
    Safety,
};
use assay_attest::sac;
use assay_attest::scanning::ScanSettings;
use assay_attest::sep41::Sep41Runner;
use assay_attest::targets::{resolve, Target};
use assay_attest::verify::{ledger_time, verify_target, Verdict};
use assay_attest::AttestError;
use assay_chain::{NetworkSpec, RpcClient};

/// The registry's `MAX_QUORUM_ATTESTERS`: a longer list always answers false.
const MAX_QUORUM_ATTESTERS: usize = 10;

const AFTER_HELP: &str = "\
Reads get_safety (the most severe verdict that counts among the current attesters'), or with --attester G…
that attester's own verdict (get_safety_by), by simulation only (nothing is signed or sent), scans the asset
fresh (cache bypassed), recomputes the evidence hash in the preimage version that matches the on-chain value
(v8, v7, v6, v3, v2 or v1 for a classic asset; v8, v7, v5 or v4 for a token contract), and compares
severity, then flags, then hash. The age is
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

When the registry has bound a verdict store (what consumers read), verify asks it too: its get_safety
and assess (ceiling 3, no mask, any age) against the registry's. A store that answers looser than the
registry (admits, or answers a verdict, where the registry refuses or answers another) exits 3 with both
answers printed, whatever the registry's verdict; a stricter store is reported (republish fixes it). It
also compares the store's executable hash with the store this release builds
(--wasm-dir/assay_verdict_store.wasm): another code exits 3; no file to compare with is said, not hidden.

With --quorum G…,G… --threshold N, verify reports each listed attester's own verdict against the
fresh scan, then asks the registry's is_safe_quorum whether at least N of them are current attesters
holding a fresh verdict (--max-age) at or below --max-severity. It exits 0 when the quorum holds and
3 when it does not (1 on an error, 64 on a bad list: more than 10 attesters, one listed twice, a
threshold of 0 or above the list's length).

Example:
  assay verify USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN --registry CBK4… --network testnet --asset-network mainnet
  assay verify USDC-GA5Z… --registry CBK4… --network testnet --quorum GAAA…,GBBB…,GCCC… --threshold 2";

/// Arguments of `assay verify`.
#[derive(Args, Debug)]
#[command(
    about = "Check what the registry holds for an asset against a fresh scan, or an evidence bundle offline",
    after_help = AFTER_HELP,
    mut_arg("registry", |a| a
        .required(false)
        .required_unless_present("bundle")
        .default_value_if("bundle", clap::builder::ArgPredicate::IsPresent, ""))
)]
pub struct VerifyArgs {
    /// The asset, as CODE-ISSUER or CODE:ISSUER, or a token contract as C….
    #[arg(value_name = "ASSET", required_unless_present = "bundle")]
    pub asset: Option<String>,
    /// Check an evidence bundle (`assay evidence HASH`'s JSON) offline instead: its lines hash to its
    /// hash, severity and mechanics follow from them, and its SEP-41 rows replay from its fork snapshot
    /// to the same verdicts. Reaches no network. Exit 0 agreement, 3 refused or differs (the line or
    /// verdict named), 2 a part could not be replayed.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["quorum", "attester"])]
    pub bundle: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub registry: RegistryScanArgs,
    /// Oldest acceptable attestation in seconds (0 disables the age check).
    #[arg(long, value_name = "SECONDS", default_value_t = 86_400)]
    pub max_age: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub suite: SuiteBindingArgs,
    /// Verify this attester's own verdict (get_safety_by) instead of the most recent one.
    #[arg(long, value_name = "G…", conflicts_with = "quorum")]
    pub attester: Option<String>,
    /// Attesters whose verdicts form a quorum, comma-separated (at most 10).
    #[arg(
        long,
        value_name = "G…,G…",
        value_delimiter = ',',
        requires = "threshold"
    )]
    pub quorum: Vec<String>,
    /// How many of --quorum must agree (1 up to the list's length).
    #[arg(long, value_name = "N", requires = "quorum")]
    pub threshold: Option<u32>,
    /// The quorum's severity ceiling (is_safe_quorum's max_severity).
    #[arg(long, value_name = "0-3", default_value_t = 2)]
    pub max_severity: u32,
    /// Where this release's built contracts are: the verdict store's executable hash is compared with
    /// `assay_verdict_store.wasm`'s there.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "target/wasm",
        env = "ASSAY_WASM_DIR"
    )]
    pub wasm_dir: std::path::PathBuf,
}

/// The policy the store's `assess` is compared under: the loosest ceiling that can admit (3), no
/// mask, any age, so that any verdict the store would admit shows.
const STORE_POLICY: (u32, u32, u64) = (3, 0, u64::MAX);

/// An attester's account key from its G… address.
fn attester_key(text: &str) -> Result<[u8; 32], CommandError> {
    stellar_strkey::ed25519::PublicKey::from_string(text.trim())
        .map(|k| k.0)
        .map_err(|_| {
            CommandError::usage(format!(
                "invalid attester {text:?}: expected an account address G… (56 characters)"
            ))
        })
}

/// The --quorum list as keys, refused before any read if the registry would answer false for the
/// list itself.
fn quorum_keys(list: &[String], threshold: u32) -> Result<Vec<[u8; 32]>, CommandError> {
    let keys = list
        .iter()
        .map(|a| attester_key(a))
        .collect::<Result<Vec<_>, _>>()?;
    if keys.len() > MAX_QUORUM_ATTESTERS {
        return Err(CommandError::usage(format!(
            "--quorum lists {} attesters; the registry accepts at most {MAX_QUORUM_ATTESTERS}",
            keys.len()
        )));
    }
    if let Some(i) = (1..keys.len()).find(|&i| keys[..i].contains(&keys[i])) {
        return Err(CommandError::usage(format!(
            "--quorum lists {} twice; name each attester once",
            list[i].trim()
        )));
    }
    if threshold == 0 || threshold as usize > keys.len() {
        return Err(CommandError::usage(format!(
            "invalid --threshold {threshold}: expected 1 to {} (the number of --quorum attesters)",
            keys.len()
        )));
    }
    Ok(keys)
}

/// One attester's line of a quorum report.
#[derive(Serialize)]
struct AttesterLine<'a> {
    attester: String,
    #[serde(flatten)]
    verdict: &'a Verdict,
}

/// The quorum's answer.
#[derive(Serialize)]
struct QuorumLine<'a> {
    asset: String,
    contract: String,
    threshold: u32,
    max_severity: u32,
    max_age_secs: u64,
    holds: bool,
    attesters: Vec<AttesterLine<'a>>,
}

#[derive(Serialize)]
struct Line<'a> {
    asset: String,
    contract: String,
    #[serde(flatten)]
    verdict: &'a Verdict,
    /// The registry's verdict store, when one is bound: consumers read it, so it must answer alike.
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict_store: Option<StoreCheck>,
}

/// What the registry's verdict store answers for the asset, against the registry's own answers,
/// and whether it runs the code this release builds.
#[derive(Serialize)]
struct StoreCheck {
    contract: String,
    /// Its `get_safety` and `assess` equal the registry's.
    agrees: bool,
    /// It answers looser than the registry: a verdict where the registry answers none or another,
    /// or `Safe` where the registry's `assess` answers otherwise. The store may only be stricter
    /// (after the leading verdict's attester was removed, until `republish`): exit 3.
    looser: bool,
    registry: Answers,
    store: Answers,
    /// The store's code against the store this release builds.
    code: StoreCode,
}

/// One contract's answers for the asset.
#[derive(Serialize)]
struct Answers {
    get_safety: String,
    assess: String,
}

/// The verdict store's executable against `assay_verdict_store.wasm` of this release.
#[derive(Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum StoreCode {
    /// The same SHA-256.
    Release { sha256: String },
    /// Another code than this release's store: exit 3.
    Differs {
        sha256: String,
        release_sha256: String,
    },
    /// Could not be compared (the reason says why): not a pass, and not a failure either.
    Unchecked { reason: String },
}

impl StoreCheck {
    /// Whether the store fails the check (exit 3).
    fn fails(&self) -> bool {
        self.looser || matches!(self.code, StoreCode::Differs { .. })
    }

    fn render(&self) -> String {
        let code = match &self.code {
            StoreCode::Release { .. } => "runs the store this release builds".to_string(),
            StoreCode::Differs {
                sha256,
                release_sha256,
            } => format!(
                "runs code {sha256}, NOT the store this release builds ({release_sha256}) (exit 3)"
            ),
            StoreCode::Unchecked { reason } => format!("its code could not be checked: {reason}"),
        };
        if self.looser {
            format!(
                "verdict store {}: answers LOOSER than the registry (exit 3): get_safety: registry \
                 {}, store {}; assess: registry {}, store {}; {code}",
                self.contract,
                self.registry.get_safety,
                self.store.get_safety,
                self.registry.assess,
                self.store.assess
            )
        } else if self.agrees {
            format!("verdict store {}: answers alike; {code}", self.contract)
        } else {
            format!(
                "verdict store {}: answers stricter (it refuses until the asset is republished: \
                 `republish` on the registry, anyone may call it): get_safety: registry {}, store {}; \
                 assess: registry {}, store {}; {code}",
                self.contract,
                self.registry.get_safety,
                self.store.get_safety,
                self.registry.assess,
                self.store.assess
            )
        }
    }
}

fn describe_safety(s: Option<&Safety>) -> String {
    match s {
        None => "none".into(),
        Some(s) => format!(
            "severity {}, flags {}, attested at {}",
            s.severity, s.flags, s.attested_at
        ),
    }
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
        Verdict::CodeChanged => "code changed: the registry's verdict judged code that is no \
            longer live (the token's WASM was replaced or its SAC admin changed); no read admits \
            it until it is attested again"
            .into(),
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
    if let Some(path) = &args.bundle {
        return super::evidence::verify_file(path, args.output);
    }
    let input = args.asset.as_deref().unwrap_or_default();
    let (spec, registry, settings) = args.registry.resolve()?;
    let target = resolve(input, &spec.passphrase, &settings.asset_passphrase)?;
    // The suite re-runs whenever the attestation's hash needs it (keyless on a fork of the
    // registry's network, where the token lives), or always with --sep41.
    let runner = match args.suite.runner(&spec, &settings.asset_passphrase)? {
        Some(r) => Some(r),
        None if settings.asset_passphrase == spec.passphrase => {
            Some(Sep41Runner::keyless(&spec.rpc_url, &spec.passphrase))
        }
        None => None,
    };
    let rpc = rpc_client(&spec)?;
    let verifying = Verifying {
        args: &args,
        spec: &spec,
        registry,
        settings: &settings,
        target: &target,
        runner: runner.as_ref(),
        rpc: &rpc,
    };
    match args.threshold {
        Some(threshold) => verifying.quorum(threshold),
        None => verifying.one(),
    }
}

/// One verification: the registry read, the asset's fresh scan and the comparison.
struct Verifying<'a> {
    args: &'a VerifyArgs,
    spec: &'a NetworkSpec,
    registry: [u8; 32],
    settings: &'a ScanSettings,
    target: &'a Target,
    runner: Option<&'a Sep41Runner>,
    rpc: &'a RpcClient,
}

impl Verifying<'_> {
    fn fail(&self, m: &dyn std::fmt::Display) -> CommandResult {
        failed(format!("{}: {m}", self.target.asset))
    }

    /// The verdict on one attestation read back (the suite re-runs when its hash needs it); an absent
    /// verdict needs no scan.
    fn verdict(&self, held: Option<&Safety>) -> Result<Verdict, AttestError> {
        verify_target(
            self.settings,
            &self.spec.rpc_url,
            &self.spec.passphrase,
            self.target,
            held,
            self.runner,
            self.args.suite.sep41,
            &|| ledger_time(self.rpc),
            self.args.max_age,
        )
    }

    /// `--threshold`: each named attester's verdict re-derived, and the registry's quorum read.
    fn quorum(&self, threshold: u32) -> CommandResult {
        let (args, rpc, contract) = (self.args, self.rpc, self.target.contract);
        let keys = quorum_keys(&args.quorum, threshold)?;
        let mut verdicts = Vec::with_capacity(keys.len());
        for key in &keys {
            let held = match read_safety_by(rpc, self.registry, contract, *key) {
                Ok(s) => s,
                Err(m) => return self.fail(&m),
            };
            match self.verdict(held.as_ref()) {
                Ok(v) => verdicts.push(v),
                Err(m) => return self.fail(&m),
            }
        }
        let holds = match read_quorum(
            rpc,
            self.registry,
            contract,
            &keys,
            threshold,
            args.max_severity,
            args.max_age,
        ) {
            Ok(h) => h,
            Err(m) => return self.fail(&m),
        };
        let line = QuorumLine {
            asset: self.target.asset.to_string(),
            contract: sac::contract_strkey(contract),
            threshold,
            max_severity: args.max_severity,
            max_age_secs: args.max_age,
            holds,
            attesters: keys
                .iter()
                .zip(&verdicts)
                .map(|(k, verdict)| AttesterLine {
                    attester: stellar_strkey::ed25519::PublicKey(*k)
                        .to_string()
                        .as_str()
                        .to_owned(),
                    verdict,
                })
                .collect(),
        };
        let text = match args.output {
            OutputFormat::Json => serde_json::to_string(&line).expect("serialises"),
            OutputFormat::Text => render_quorum(&line),
        };
        let _ = writeln!(std::io::stdout(), "{text}");
        Ok(if holds {
            assay_attest::verify::exit::AGREEMENT
        } else {
            assay_attest::verify::exit::MISMATCH
        })
    }

    /// Whether the registry's verdict store, if one is bound, answers `registry_answer` for the
    /// asset as the registry's `get_safety` does.
    fn store_check(
        &self,
        registry_answer: Option<&Safety>,
    ) -> Result<Option<StoreCheck>, AttestError> {
        let Some(store) = read_verdict_store(self.rpc, self.registry)? else {
            return Ok(None);
        };
        let asset = self.target.contract;
        let answer = read_safety(self.rpc, store, asset)?;
        let registry_assess = read_assessment(self.rpc, self.registry, asset, STORE_POLICY)?;
        let store_assess = read_assessment(self.rpc, store, asset, STORE_POLICY)?;
        let looser = (answer.is_some() && answer.as_ref() != registry_answer)
            || (is_safe_assessment(&store_assess) && store_assess != registry_assess);
        Ok(Some(StoreCheck {
            contract: sac::contract_strkey(store),
            agrees: answer.as_ref() == registry_answer && store_assess == registry_assess,
            looser,
            registry: Answers {
                get_safety: describe_safety(registry_answer),
                assess: describe_assessment(&registry_assess),
            },
            store: Answers {
                get_safety: describe_safety(answer.as_ref()),
                assess: describe_assessment(&store_assess),
            },
            code: self.store_code(store),
        }))
    }

    /// The store's executable against `assay_verdict_store.wasm` in `--wasm-dir`.
    fn store_code(&self, store: [u8; 32]) -> StoreCode {
        let release_path = self.args.wasm_dir.join("assay_verdict_store.wasm");
        let release = match std::fs::read(&release_path) {
            Ok(bytes) => sha256_hex(&bytes),
            Err(e) => {
                return StoreCode::Unchecked {
                    reason: format!(
                        "{}: {e} (build it with scripts/build-wasm.sh, or pass --wasm-dir)",
                        release_path.display()
                    ),
                }
            }
        };
        match contract_wasm_sha256(&self.spec.rpc_url, &self.spec.passphrase, store) {
            Ok(sha256) if sha256 == release => StoreCode::Release { sha256 },
            Ok(sha256) => StoreCode::Differs {
                sha256,
                release_sha256: release,
            },
            Err(why) => StoreCode::Unchecked {
                reason: why.to_string(),
            },
        }
    }

    /// The registry's answer (or one attester's), re-derived from a fresh scan.
    fn one(&self) -> CommandResult {
        let (args, rpc, contract) = (self.args, self.rpc, self.target.contract);
        let read = match &args.attester {
            Some(a) => read_safety_by(rpc, self.registry, contract, attester_key(a)?),
            None => read_safety(rpc, self.registry, contract),
        };
        let on_chain = match read {
            Ok(s) => s,
            Err(m) => return self.fail(&m),
        };
        // No verdict read back: nobody attested it, or the verdict's code binding no longer holds.
        let code_changed = match on_chain {
            Some(_) => false,
            None => match read_code_changed(rpc, self.registry, contract) {
                Ok(changed) => changed,
                Err(m) => return self.fail(&m),
            },
        };
        let verified = if code_changed {
            Ok(Verdict::CodeChanged)
        } else {
            self.verdict(on_chain.as_ref())
        };
        let verdict = match verified {
            Ok(v) => v,
            Err(m) => return self.fail(&m),
        };
        // Consumers read the store; one attester's own verdict has no counterpart there.
        let store = match &args.attester {
            Some(_) => None,
            None => match self.store_check(on_chain.as_ref()) {
                Ok(check) => check,
                Err(m) => return self.fail(&m),
            },
        };
        let asset = &self.target.asset;
        let store_fails = store.as_ref().is_some_and(StoreCheck::fails);
        let text = match args.output {
            OutputFormat::Json => serde_json::to_string(&Line {
                asset: asset.to_string(),
                contract: sac::contract_strkey(contract),
                verdict: &verdict,
                verdict_store: store,
            })
            .expect("serialises"),
            OutputFormat::Text => match store {
                Some(store) => format!("{asset}  {}\n  {}", render(&verdict), store.render()),
                None => format!("{asset}  {}", render(&verdict)),
            },
        };
        let _ = writeln!(std::io::stdout(), "{text}");
        Ok(if store_fails {
            assay_attest::verify::exit::MISMATCH
        } else {
            verdict.exit_code()
        })
    }
}

/// The quorum's answer first, then one line per attester.
fn render_quorum(q: &QuorumLine) -> String {
    let mut out = format!(
        "{}  quorum {} of {} (ceiling {}, max age {}): {}",
        q.asset,
        q.threshold,
        q.attesters.len(),
        q.max_severity,
        assay_core::time::format_duration(q.max_age_secs as i64),
        if q.holds {
            "holds (is_safe_quorum true)"
        } else {
            "does not hold (is_safe_quorum false)"
        }
    );
    for a in &q.attesters {
        out.push_str(&format!("\n  {}  {}", a.attester, render(a.verdict)));
    }
    out
}
