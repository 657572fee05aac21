//! `assay demo`: the whole pipeline offline, each step checked against what it claims to prove.
//!
//! A local network runs the registry and the gate from the built WASM; the eval subjects become classic
//! assets with their recorded issuer flags; their recorded off-chain answers are replayed over local
//! HTTPS. The real `assay` binary then scans, attests and verifies them, runs the SEP-41 suite on two
//! tokens, and the gate takes deposits. Any outcome that differs from the stated one fails the demo.

mod world;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{failed, CommandResult};
use assay_attest::AttestError;
use clap::{Args, ValueEnum};
use world::{EvalRecording, LocalWorld};

/// Set for `--output json`: the transcript goes to stderr and stdout carries only the JSON summary.
static TRANSCRIPT_TO_STDERR: AtomicBool = AtomicBool::new(false);

/// One transcript line.
macro_rules! say {
    ($($arg:tt)*) => {
        if TRANSCRIPT_TO_STDERR.load(Ordering::Relaxed) {
            eprintln!($($arg)*)
        } else {
            println!($($arg)*)
        }
    };
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// The transcript on stdout
    Text,
    /// One JSON summary on stdout (every step, what it proves, each check and whether it held); the
    /// transcript on stderr
    Json,
}

/// Exit code when at least one step's outcome differed from what the demo states.
const EXIT_DIFFERED: u8 = assay_core::exit::NEGATIVE;

#[derive(Args)]
#[command(
    about = "Run the whole pipeline offline on a local network and check every step's outcome",
    long_about = "Start a local Stellar network, deploy the registry and the gate example from the built WASM, \
        create the eval subjects as classic assets with their recorded issuer flags, replay their recorded \
        StellarExpert and stellar.toml answers over local HTTPS, then scan, attest and verify them with this \
        binary, run the SEP-41 suite on the conformant and the vulnerable token, read is_safe from the \
        registry, and make deposits through the gate. Each step prints what it proves and is checked against an expected outcome. Nothing leaves \
        127.0.0.1.",
    after_help = "Examples:\n  assay demo\n  scripts/demo.sh\n  \
        assay demo --output json > demo.json\n\n\
        Exit codes:\n  0   every step's outcome was the stated one\n  \
        1   the demo could not set up (missing WASM: scripts/demo.sh builds it, or build the packages that \
        `assay demo --list-wasm` prints with scripts/build-wasm.sh; missing testdata/eval)\n  \
        3   at least one step's outcome differed (the step says how)\n  \
        64  usage error"
)]
pub struct DemoArgs {
    /// Directory holding assay_registry.wasm, assay_verdict_store.wasm, assay_gate_example.wasm and the token WASMs
    #[arg(
        long,
        value_name = "DIR",
        default_value = "target/wasm",
        env = "ASSAY_WASM_DIR"
    )]
    wasm_dir: PathBuf,
    /// Directory of the recorded eval subjects
    #[arg(
        long,
        value_name = "DIR",
        default_value = "testdata/eval",
        env = "ASSAY_EVAL_DIR"
    )]
    eval_dir: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    output: Output,
    /// Print the packages whose WASM the demo loads (one per line, as `scripts/build-wasm.sh` takes them)
    /// and exit without running anything
    #[arg(long)]
    list_wasm: bool,
}

/// Every contract the demo loads from `--wasm-dir`: the module's file stem and the package that
/// `scripts/build-wasm.sh` builds it from. The one list: `assay demo --list-wasm` prints the packages, and
/// `scripts/demo.sh` builds exactly those before it runs the demo.
const DEMO_WASM: [(&str, &str); 6] = [
    ("assay_registry", "assay-registry"),
    ("assay_verdict_store", "assay-verdict-store"),
    ("assay_gate_example", "assay-gate-example"),
    ("conformant_token", "conformant-token"),
    ("vulnerable_token", "vulnerable-token"),
    ("upgradable_token", "upgradable-token"),
];

/// A second issuer for the recorded reputation outage, so it does not collide with the recorded scam.
const OUTAGE_ISSUER: &str = "GARDNV3Q7YGT4AKSDF25LT32YSCCW4EV22Y2TV3I2PU2MMXJTEDL5T55";
const OUTAGE_DOMAIN: &str = "outage.example";

/// Subjects in display order with the gate's expected answer: `None` admits, `Some(code)` refuses. The first
/// is the clean asset (flags locked, no power); AQUA's flags are not locked and its key can sign, so it holds
/// the freeze (bit 1) and the gate refuses it like USDC.
const SUBJECTS: [(&str, Option<u32>); 6] = [
    ("shx-clear-flagslocked", None),
    ("aqua-clear-verified", Some(3)),
    ("usdc-revocable-regulated", Some(3)),
    ("doge-noflags-malicious", Some(4)),
    ("berkshire-clawback-malicious", Some(4)),
    ("doge-reputation-outage", Some(1)),
];

fn gate_error(code: u32) -> &'static str {
    match code {
        1 => "NotAttested",
        2 => "AttestationStale",
        3 => "IssuerCanTakeIt",
        4 => "SeverityTooHigh",
        5 => "InvalidPolicy",
        6 => "InvalidAmount",
        7 => "InsufficientBalance",
        8 => "CodeChanged",
        _ => "unknown",
    }
}

struct Demo {
    exe: PathBuf,
    /// The contracts the demo deploys: `assay verify` compares the bound verdict store's code with
    /// the store there.
    wasm_dir: PathBuf,
    step: usize,
    differed: Vec<String>,
    /// Every step with its checks, for `--output json`.
    record: Vec<serde_json::Value>,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Demo {
    fn step(&mut self, title: &str, proves: &str) {
        self.step += 1;
        say!("\n== Step {}: {title}", self.step);
        say!("   proves: {proves}");
        self.record.push(serde_json::json!({
            "step": self.step, "title": title, "proves": proves, "checks": []
        }));
    }

    /// Records `ok` for the current step with the stated outcome.
    fn check(&mut self, ok: bool, stated: &str) {
        if let Some(checks) = self
            .record
            .last_mut()
            .and_then(|r| r["checks"].as_array_mut())
        {
            checks.push(serde_json::json!({"stated": stated, "held": ok}));
        }
        if ok {
            say!("   ok: {stated}");
        } else {
            say!("   DIFFERS: expected {stated}");
            self.differed.push(format!("step {}: {stated}", self.step));
        }
    }

    /// Runs this binary with `args` and prints the command in its short form.
    fn assay(&self, shown: &str, args: &[String], env: &[(&str, &str)], home: &Path) -> Run {
        say!("   $ assay {shown}");
        let mut cmd = Command::new(&self.exe);
        cmd.args(args)
            .env("HOME", home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env_remove("STELLAR_NETWORK")
            .env_remove("ASSAY_HORIZON_URL")
            .env_remove("ASSAY_REGISTRY")
            .env("ASSAY_WASM_DIR", &self.wasm_dir);
        for (k, v) in env {
            cmd.env(k, v);
        }
        match cmd.output() {
            Ok(out) => Run {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
            Err(e) => Run {
                code: -1,
                stdout: String::new(),
                stderr: format!("cannot run {}: {e}", self.exe.display()),
            },
        }
    }
}

fn indent(text: &str) {
    for line in text.lines() {
        say!("   | {line}");
    }
}

pub fn run(args: DemoArgs) -> CommandResult {
    if args.list_wasm {
        for (_, package) in DEMO_WASM {
            println!("{package}");
        }
        return Ok(assay_core::exit::OK);
    }
    let started = Instant::now();
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return failed(format!("cannot locate the assay binary: {e}")),
    };
    let mut demo = Demo {
        exe,
        wasm_dir: args.wasm_dir.clone(),
        step: 0,
        differed: Vec::new(),
        record: Vec::new(),
    };
    TRANSCRIPT_TO_STDERR.store(args.output == Output::Json, Ordering::Relaxed);
    match run_steps(&mut demo, &args) {
        Err(e) => failed(format!("the demo could not set up: {e}")),
        Ok(()) => {
            let secs = started.elapsed().as_secs_f64();
            if args.output == Output::Json {
                println!(
                    "{}",
                    serde_json::json!({
                        "passed": demo.differed.is_empty(),
                        "seconds": (secs * 10.0).round() / 10.0,
                        "steps": demo.record,
                        "differed": demo.differed,
                    })
                );
            }
            if demo.differed.is_empty() {
                say!(
                    "\nDemo passed: all {} steps had their stated outcome ({secs:.1} s).",
                    demo.step
                );
                Ok(assay_core::exit::OK)
            } else {
                say!(
                    "\nDemo FAILED: {} step outcome(s) differed ({secs:.1} s):",
                    demo.differed.len()
                );
                for d in &demo.differed {
                    say!("  - {d}");
                }
                Ok(EXIT_DIFFERED)
            }
        }
    }
}

fn run_steps(demo: &mut Demo, args: &DemoArgs) -> Result<(), AttestError> {
    let subjects = load_subjects(args)?;
    let domains: Vec<String> = subjects
        .iter()
        .filter_map(|(s, _)| s.domain.clone())
        .collect();
    let domain_refs: Vec<&str> = domains.iter().map(String::as_str).collect();
    let (mut w, registry) = network_and_contracts(demo, args, &domain_refs)?;
    let sacs = issue_subjects(demo, &mut w, &subjects)?;
    let ca = w.ca();
    let run = Subjects {
        all: &subjects,
        sources: w.source_args(&ca),
        ids: subjects.iter().map(|(s, _)| s.id()).collect(),
        short: subjects.iter().map(|(s, _)| s.short()).collect(),
        home: w.dir.path().to_path_buf(),
    };
    scan_subjects(demo, &run)?;
    let mut chain = vec![
        "--registry".to_string(),
        registry.clone(),
        "--rpc-url".into(),
        w.net.rpc_url(),
        "--network-passphrase".into(),
        w.net.passphrase().to_string(),
    ];
    chain.extend(run.sources.iter().cloned());
    attest_subjects(demo, &run, &chain)?;
    verify_subjects(demo, &run, &chain);
    sep41_tokens(demo, args, &run.home);
    registry_reads(demo, &w, &subjects, &sacs);
    gate_deposits(demo, &w, &subjects, &sacs);
    token_contracts(demo, args, &w, &chain, &run.home)
}

/// The demo's classic subjects: recorded evals with the gate error each is expected to meet.
type Subject = (EvalRecording, Option<u32>);

/// The subjects and what every command about them shares.
struct Subjects<'a> {
    all: &'a [Subject],
    /// `--horizon-url` and the other source flags pointing at the local replays.
    sources: Vec<String>,
    ids: Vec<String>,
    short: Vec<String>,
    home: PathBuf,
}

/// Loads the recorded subjects and checks the contracts are built: a missing checkout fails before anything
/// starts.
fn load_subjects(args: &DemoArgs) -> Result<Vec<Subject>, AttestError> {
    let mut subjects = Vec::new();
    for (name, gate) in SUBJECTS {
        let mut s = if name == "doge-reputation-outage" {
            let mut s = EvalRecording::load(&args.eval_dir, name, Some(OUTAGE_ISSUER))?;
            s.domain = Some(OUTAGE_DOMAIN.into());
            s
        } else {
            EvalRecording::load(&args.eval_dir, name, None)?
        };
        s.name = name.into();
        subjects.push((s, gate));
    }
    let missing: Vec<&str> = DEMO_WASM
        .iter()
        .filter(|(module, _)| !args.wasm_dir.join(format!("{module}.wasm")).is_file())
        .map(|(_, package)| *package)
        .collect();
    if !missing.is_empty() {
        return Err(AttestError::Local(format!(
            "{} lacks {}; build them with `scripts/build-wasm.sh {}` (scripts/demo.sh does this for you), \
             or pass --wasm-dir",
            args.wasm_dir.display(),
            missing.len(),
            missing.join(" ")
        )));
    }
    Ok(subjects)
}

/// Step 1: a local network with the registry and the gate deployed from WASM.
fn network_and_contracts(
    demo: &mut Demo,
    args: &DemoArgs,
    domains: &[&str],
) -> Result<(LocalWorld, String), AttestError> {
    demo.step(
        "start a local network and deploy the registry and the gate from WASM",
        "the contracts that ship are the ones that run: built .wasm uploaded and executed by the Soroban host",
    );
    let mut w = LocalWorld::start(domains)?;
    let deployed = w.deploy_registry_and_gate(&args.wasm_dir);
    if let Err(e) = &deployed {
        say!("   {e}");
    }
    demo.check(
        deployed.is_ok(),
        "registry, verdict store and gate deployed, store bound, attester added",
    );
    deployed?;
    let registry = assay_attest::sac::contract_strkey(w.registry);
    say!("   rpc:      {}", w.net.rpc_url());
    say!("   registry: {registry}");
    say!(
        "   store:    {} (the gate reads it)",
        assay_attest::sac::contract_strkey(w.store)
    );
    say!(
        "   gate:     {}",
        assay_attest::sac::contract_strkey(w.gate)
    );

    Ok((w, registry))
}

/// Step 2: the subjects issued as classic assets, their off-chain sources served over HTTPS.
fn issue_subjects(
    demo: &mut Demo,
    w: &mut LocalWorld,
    subjects: &[Subject],
) -> Result<Vec<[u8; 32]>, AttestError> {
    demo.step(
        "create the eval subjects as classic assets and replay their off-chain sources over HTTPS",
        "issuer flags and home domains come from recorded mainnet answers; sources are served with real TLS",
    );
    let mut sacs = Vec::new();
    for (s, _) in subjects {
        let sac = s.issue_on(w, 10_000_000)?;
        s.serve_on(w);
        say!(
            "   {:<16} flags {:>2}  home domain {:<18} ({})",
            s.short(),
            s.flags,
            s.domain.as_deref().unwrap_or("-"),
            s.name
        );
        sacs.push(sac);
    }
    say!(
        "   (flags: auth_required 1, auth_revocable 2, auth_immutable 4, auth_clawback_enabled 8; the recorded \
         reputation outage is replayed for a second issuer and domain so it does not collide with the \
         recorded scam)"
    );
    demo.check(sacs.len() == subjects.len(), "every subject issued");
    Ok(sacs)
}

/// Step 3: every subject scanned, in text and in JSON checked against its expected.json.
fn scan_subjects(demo: &mut Demo, run: &Subjects) -> Result<(), AttestError> {
    demo.step(
        "scan every subject (human output)",
        "severity (what the ledger lets the issuer do) and accountability (who claims it) are separate; \
         a source that did not answer makes the report undetermined, never clean",
    );
    // The subjects live on the local network, whose Horizon names it: `--network local`.
    let mut scan_args = vec![
        "scan".to_string(),
        "--network".into(),
        "local".into(),
        "--no-history".into(),
        "--no-cache".into(),
    ];
    scan_args.extend(run.sources.iter().cloned());
    scan_args.extend(run.ids.iter().cloned());
    let r = demo.assay(
        &format!("scan {} (sources replayed locally)", run.short.join(" ")),
        &scan_args,
        &[],
        &run.home,
    );
    indent(&r.stdout);
    indent(&r.stderr);
    demo.check(
        r.code == 2,
        "exit 2: one report is undetermined (the reputation outage)",
    );
    let mut json_args = scan_args.clone();
    json_args.insert(1, "--output".into());
    json_args.insert(2, "json".into());
    let r = demo.assay(
        "scan --output json … (the same, checked against expected.json)",
        &json_args,
        &[],
        &run.home,
    );
    let reports: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for ((s, _), report) in run.all.iter().zip(
        reports
            .iter()
            .chain(std::iter::repeat(&serde_json::Value::Null)),
    ) {
        let expected = s.expected()?;
        let got = (report["severity"].clone(), report["state"].clone());
        let want = (expected["severity"].clone(), expected["state"].clone());
        say!("   {:<16} severity {} state {}", s.short(), got.0, got.1);
        demo.check(
            got == want,
            &format!(
                "{} severity {} state {} (expected.json)",
                s.short(),
                want.0,
                want.1
            ),
        );
    }

    Ok(())
}

/// Step 4: the attestable subjects attested; the undetermined one refused.
fn attest_subjects(demo: &mut Demo, run: &Subjects, chain: &[String]) -> Result<(), AttestError> {
    demo.step(
        "attest the attestable subjects to the registry",
        "only a complete report is published; an undetermined one is refused with its rule, never written",
    );
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]));
    let mut attest_args = vec!["attest".to_string()];
    attest_args.extend(run.ids.iter().cloned());
    attest_args.extend(chain.iter().cloned());
    let r = demo.assay(
        &format!(
            "attest {} --registry C… (STELLAR_SECRET_KEY in the environment)",
            run.short.join(" ")
        ),
        &attest_args,
        &[("STELLAR_SECRET_KEY", &secret)],
        &run.home,
    );
    indent(&r.stdout);
    indent(&r.stderr);
    let leaked = r.stdout.contains(&secret) || r.stderr.contains(&secret);
    demo.check(!leaked, "the secret key appears in no output");
    demo.check(r.code == 3, "exit 3: written for five, refused for one");
    let written = r.stdout.matches("written: ").count();
    demo.check(written == 5, "five attestations written");
    for (s, _) in run.all.iter().take(5) {
        let want = s.expected()?["severity"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        let line = r.stdout.lines().find(|l| l.starts_with(&s.id()));
        demo.check(
            line.is_some_and(|l| l.contains(&format!("written: severity {want},"))),
            &format!("{} written with the scanned severity {want}", s.short()),
        );
    }
    demo.check(
        r.stdout.contains("undetermined"),
        "the outage subject refused under the undetermined rule",
    );

    Ok(())
}

/// Step 5: on-chain attestations verified against a fresh scan.
fn verify_subjects(demo: &mut Demo, run: &Subjects, chain: &[String]) {
    demo.step(
        "verify on-chain attestations against a fresh scan",
        "what the registry says can be re-derived by anyone from public sources",
    );
    let mut v = vec!["verify".to_string(), run.ids[0].clone()];
    v.extend(chain.iter().cloned());
    let r = demo.assay(
        &format!("verify {} --registry C…", run.short[0]),
        &v,
        &[],
        &run.home,
    );
    indent(&r.stdout);
    demo.check(r.code == 0, "exit 0: agreement for SHX");
    let mut v = vec!["verify".to_string(), run.ids[5].clone()];
    v.extend(chain.iter().cloned());
    let r = demo.assay(
        &format!("verify {} --registry C…", run.short[5]),
        &v,
        &[],
        &run.home,
    );
    indent(&r.stdout);
    demo.check(
        r.code == 4,
        "exit 4: nothing attested for the refused subject",
    );
}

/// Step 6: the SEP-41 suite on the conformant and the vulnerable token.
fn sep41_tokens(demo: &mut Demo, args: &DemoArgs, home: &Path) {
    demo.step(
        "run the SEP-41 suite on the conformant and the vulnerable token",
        "a token contract's behaviour is exercised, not assumed: a defect is reported as FAIL with its check",
    );
    for (token, want, stated) in [
        ("conformant_token", 0, "exit 0: every check held"),
        ("vulnerable_token", 3, "exit 3: a check FAILED"),
    ] {
        let wasm = args.wasm_dir.join(format!("{token}.wasm"));
        let a = vec![
            "sep41".to_string(),
            "--wasm".into(),
            wasm.display().to_string(),
        ];
        let r = demo.assay(&format!("sep41 --wasm {}", wasm.display()), &a, &[], home);
        indent(&r.stdout);
        indent(&r.stderr);
        demo.check(r.code == want, &format!("{token}: {stated}"));
        if token == "conformant_token" {
            demo.check(
                r.stdout.contains("26 pass, 0 fail"),
                "conformant_token: 26 pass, 0 fail (its mint's event judged)",
            );
        } else {
            for check in ["sep41-transfer-self", "sep41-transfer-negative-amount"] {
                demo.check(
                    r.stdout
                        .lines()
                        .any(|l| l.trim_start().starts_with(&format!("✗ {check} "))),
                    &format!("vulnerable_token: {check} FAILS"),
                );
            }
        }
    }
}

/// Step 7: the registry read as an integrating contract reads it.
fn registry_reads(demo: &mut Demo, w: &LocalWorld, subjects: &[Subject], sacs: &[[u8; 32]]) {
    demo.step(
        "read the registry the way an integrating contract does",
        "is_safe answers from the attestation alone and fails closed: an unattested asset is never safe",
    );
    for (i, want) in [(0, true), (1, false), (2, false), (3, false), (5, false)] {
        let s = &subjects[i].0;
        let got = w.is_safe(sacs[i], 1, 86_400);
        say!(
            "   is_safe({}, max_severity 1, max_age_secs 86400) -> {}",
            s.short(),
            match &got {
                Ok(b) => b.to_string(),
                Err(e) => format!("error: {e}"),
            }
        );
        demo.check(got == Ok(want), &format!("{} is_safe {want}", s.short()));
    }
}

/// Step 8: a deposit of each asset through the gate.
fn gate_deposits(demo: &mut Demo, w: &LocalWorld, subjects: &[Subject], sacs: &[[u8; 32]]) {
    demo.step(
        "deposit each asset through the gate contract",
        "a contract reading the registry fails closed: it admits only a fresh, low-severity attestation \
         whose issuer cannot freeze or claw back, and refuses the unattested",
    );
    for (i, (s, gate)) in subjects.iter().enumerate() {
        let got = w.deposit(sacs[i], 100);
        let shown = match &got {
            Ok(()) => "admitted".to_string(),
            Err(Ok(c)) => format!("refused: Error(Contract, #{c}) {}", gate_error(*c)),
            Err(Err(e)) => format!("error: {e}"),
        };
        say!("   deposit 100 {:<16} -> {shown}", s.short());
        let ok = match gate {
            None => got.is_ok(),
            Some(c) => got == Err(Ok(*c)),
        };
        let stated = match gate {
            None => format!("{} admitted", s.short()),
            Some(c) => format!("{} refused with #{c} {}", s.short(), gate_error(*c)),
        };
        demo.check(ok, &stated);
    }
    let bal = w.gate_balance(sacs[0]);
    match &bal {
        Ok(b) => say!("   gate balance of SHX for the holder: {b}"),
        Err(e) => say!("   gate balance of SHX for the holder: error: {e}"),
    }
    demo.check(
        bal == Ok(100),
        "the admitted deposit moved 100 into the gate",
    );
}

/// Step 9: custom Soroban tokens attested by their code, refused or admitted by the gate, and verified.
fn token_contracts(
    demo: &mut Demo,
    args: &DemoArgs,
    w: &LocalWorld,
    chain: &[String],
    home: &Path,
) -> Result<(), AttestError> {
    demo.step(
        "attest custom token contracts by their code, and verify them",
        "a token's code decides what can happen to a balance: what its code does is observed on a fork (bits 9-13), \
         a SEP-41 FAIL is critical even beside checks that could not conclude, and the gate follows",
    );
    let [conformant, upgradable, vulnerable] = deploy_tokens(args, w)?;
    let id = |c: [u8; 32]| assay_attest::sac::contract_strkey(c);
    let secret = |seed: u8| format!("{}", stellar_strkey::ed25519::PrivateKey([seed; 32]));
    let attester = secret(12);
    let parties = |owner: u8, spender: u8| {
        vec![
            ("STELLAR_SECRET_KEY", attester.clone()),
            ("ASSAY_OWNER_SECRET", secret(owner)),
            ("ASSAY_SPENDER_SECRET", secret(spender)),
        ]
    };
    let run = |demo: &mut Demo, shown: &str, mut a: Vec<String>, env: &[(&str, String)]| {
        a.extend(chain.iter().cloned());
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = demo.assay(shown, &a, &env, home);
        indent(&r.stdout);
        indent(&r.stderr);
        r
    };

    let r = run(
        demo,
        "attest C…(upgradable) --registry C…",
        vec!["attest".into(), id(upgradable)],
        &parties(13, 14),
    );
    demo.check(
        r.code == 0 && r.stdout.contains("written: severity high, flags 512,"),
        "upgradable token written high (code_mutable, bit 9)",
    );
    let r = run(
        demo,
        "attest C…(conformant) C…(vulnerable) --sep41 --registry C…",
        vec![
            "attest".into(),
            id(conformant),
            id(vulnerable),
            "--sep41".into(),
        ],
        &parties(13, 14),
    );
    let line = |c: [u8; 32]| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(&id(c)) && l.contains("written"))
            .unwrap_or("")
            .to_string()
    };
    demo.check(r.code == 0, "exit 0: both written");
    demo.check(
        line(conformant).contains("written: severity clear, flags 4096,"),
        "conformant token written clear (admin_mint only, every check passed)",
    );
    demo.check(
        line(vulnerable).contains("written: severity critical, flags 4352,"),
        "vulnerable token written critical (sep41_violation) although some checks could not conclude",
    );
    gate_tokens(demo, w, [conformant, upgradable, vulnerable]);
    // verify re-reads each token (and, for a --sep41 attestation, re-runs the suite with a fresh pair: the
    // vulnerable token's defect wrecked the first pair's accounting).
    for (token, sep41, stated) in [
        (upgradable, false, "verify upgradable: exit 0"),
        (conformant, true, "verify --sep41 conformant: exit 0"),
        (vulnerable, true, "verify --sep41 vulnerable: exit 0"),
    ] {
        let mut a = vec!["verify".to_string(), id(token)];
        if sep41 {
            a.push("--sep41".into());
        }
        let r = run(
            demo,
            &format!("verify {} --registry C…", id(token)),
            a,
            &parties(15, 16),
        );
        demo.check(r.code == 0 && r.stdout.contains("agreement"), stated);
    }
    Ok(())
}

/// The three demo tokens deployed from WASM (conformant, upgradable, vulnerable), with the suite's parties
/// funded and units minted to the holders of the two the suite runs on.
fn deploy_tokens(args: &DemoArgs, w: &LocalWorld) -> Result<[[u8; 32]; 3], AttestError> {
    use assay_attest::registry::{account_id, account_val, call};
    use stellar_xdr::{Int128Parts, ScString, ScVal};
    let text = |s: &str| ScVal::String(ScString(s.try_into().expect("short string")));
    let mut deployed = Vec::new();
    for (i, name) in ["conformant_token", "upgradable_token", "vulnerable_token"]
        .iter()
        .enumerate()
    {
        let wasm = std::fs::read(args.wasm_dir.join(format!("{name}.wasm")))
            .map_err(|e| AttestError::Local(format!("{name}.wasm: {e}")))?;
        let args = vec![
            account_val(w.admin.public_key()),
            ScVal::U32(7),
            text("Demo Token"),
            text("DEMO"),
        ];
        deployed.push(w.deploy(&wasm, 30 + i as u8, args)?);
    }
    let [conformant, upgradable, vulnerable] = [deployed[0], deployed[1], deployed[2]];
    // The suite's parties: the world's holder, a spender, and a fresh pair for re-runs.
    let seeds = [13u8, 14, 15, 16];
    for seed in &seeds[1..] {
        w.net
            .fund(&account_id(
                assay_chain::Signer::from_seed([*seed; 32]).public_key(),
            ))
            .map_err(|e| AttestError::Local(format!("fund: {e}")))?;
    }
    let mint = |token: [u8; 32], seed: u8| {
        let to = assay_chain::Signer::from_seed([seed; 32]).public_key();
        let f = call(
            token,
            "mint",
            vec![
                account_val(to),
                ScVal::I128(Int128Parts { hi: 0, lo: 1000 }),
            ],
        );
        w.invoker(&w.admin)
            .invoke(&f)
            .map(|_| ())
            .map_err(|e| AttestError::Chain(format!("mint: {e}")))
    };
    for token in [conformant, vulnerable] {
        mint(token, 13)?;
        mint(token, 15)?;
    }
    Ok([conformant, upgradable, vulnerable])
}

/// The gate admits the clear token and refuses the two rated high or worse.
fn gate_tokens(
    demo: &mut Demo,
    w: &LocalWorld,
    [conformant, upgradable, vulnerable]: [[u8; 32]; 3],
) {
    let id = |c: [u8; 32]| assay_attest::sac::contract_strkey(c);
    for (token, want, stated) in [
        (conformant, None, "conformant token admitted"),
        (
            upgradable,
            Some(4),
            "upgradable token refused with #4 SeverityTooHigh",
        ),
        (
            vulnerable,
            Some(4),
            "vulnerable token refused with #4 SeverityTooHigh",
        ),
    ] {
        let got = w.deposit(token, 100);
        say!(
            "   deposit 100 {} -> {}",
            id(token),
            match &got {
                Ok(()) => "admitted".to_string(),
                Err(Ok(c)) => format!("refused: Error(Contract, #{c}) {}", gate_error(*c)),
                Err(Err(e)) => format!("error: {e}"),
            }
        );
        let ok = match want {
            None => got.is_ok(),
            Some(c) => got == Err(Ok(c)),
        };
        demo.check(ok, stated);
    }
}
