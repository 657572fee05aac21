//! `assay sep41`: the SEP-41 conformance suite, on a live network or offline on an embedded one.
use std::path::PathBuf;

use assay_chain::{network::NetworkSpec, parse_address};
use assay_sep41::{
    fork::{run_fork, ForkOptions},
    live::{self, LiveError, PartiesInput, PartyInput},
    offline::{run_offline, Deployment, OfflineError, OfflineOptions, OfflineToken},
    render, BeforeSuite, Report,
};
use clap::{Args, ValueEnum};

use super::shared::NetworkArgs;
use super::{CommandError, CommandResult};

#[derive(Clone, Copy, ValueEnum)]
pub enum Output {
    Text,
    /// A CHECKS.md report
    Md,
    Json,
    /// JUnit XML: one test case per check (FAIL a failure, UNVERIFIABLE/SKIPPED skipped)
    Junit,
    /// SARIF 2.1.0: one result per FAIL and per power discovery observed
    Sarif,
}

#[derive(Args)]
#[command(
    about = "Run the 27-check SEP-41 conformance suite against a token (on a fork of its network, live with keys, or offline on a WASM or SAC)",
    long_about = "Run the twenty-seven SEP-41 checks in order: five reads, five negative checks, five \
        value-moving writes, the expired-allowance check, then nine simulated (never submitted): the \
        authorization each write asks for, the events transfer, approve and burn publish, and an approval \
        already expired when given; last, the events of a mint and a clawback power discovery exercised \
        (SKIPPED, leaving the exit code alone, when no such power was observed). Verdicts: PASS/FAIL about the contract; UNVERIFIABLE \
        when a premise is missing (a key, a funded holder, a readable value, a real non-issuer party); \
        SKIPPED on harness or network faults; NOT_IMPLEMENTED when the contract spec lacks the member.\n\n\
        Fork (the default for a contract id): assay sep41 C… --network mainnet|testnet|local or --rpc-url URL \
        runs the suite on an embedded network forked from that network's ledger: entries are read from its \
        stellar-rpc as needed, every write stays in the fork, no secret is read, nothing is signed for the \
        network and nothing is sent to it. The fork ledger is printed and recorded (fork_ledger). The holder \
        and spender are accounts created inside the fork; the holder's units come from the first premise \
        that works: --holder ADDRESS (an existing holder whose balance is moved inside the fork, authorized \
        as that address there only), a holder discovered from the token's recent transfer/mint events, or \
        mint(holder, 1000) as the admin admin() names. With none, the value-moving rows are UNVERIFIABLE and name --holder (exit 2). \
        --fork-cache FILE records the entries read (stellar snapshot JSON) and replays them offline when \
        FILE exists.\n\n\
        Live (--live): the holder and spender are --owner/--spender addresses; \
        their secret keys come from ASSAY_OWNER_SECRET / ASSAY_SPENDER_SECRET or stellar-cli identities \
        (--owner-identity/--spender-identity), never from the command line. Writes move real units \
        (about 4 of the holder's 5 needed) and spend XLM fees; on a network other than testnet, futurenet \
        or a standalone network, writes need --allow-non-testnet-write. A write whose simulation asks a \
        party to authorize anything but exactly the call is never signed: its *-auth check FAILs with \
        the tree asked for, and nothing more is signed in the run.\n\n\
        Offline: --wasm FILE deploys the token on an embedded local network (constructor arguments from \
        --constructor-args, converted with the WASM's own spec; \"@admin\", \"@holder\", \"@spender\" stand \
        for the generated parties), funds the holder through --mint-fn, and runs the same suite. --setup \
        FILE first deploys the contracts the token needs (a SEP-57 token's compliance and identity \
        verifier; \"@NAME\" in arguments) and, after it, makes the calls the file lists (verifying the \
        parties, an operator's mint); docs/token-tests.md. --sac CODE \
        does the same with a Stellar Asset Contract (issuer with authorization required, authorized \
        trustlines).",
    after_help = "Examples:\n  assay sep41 --wasm target/wasm/conformant_token.wasm\n  \
        assay sep41 --wasm token.wasm --constructor-args '[\"@admin\", 7, \"Token\", \"TOK\"]' --output md > CHECKS.md\n  \
        assay sep41 --wasm target/wasm/tp_oz_rwa_token.wasm --setup fixtures/third-party/oz-rwa.setup.json\n  \
        assay sep41 --sac USDC --output json\n  \
        assay sep41 CDYO… --network testnet\n  \
        assay sep41 CDYO… --network mainnet --rpc-url https://rpc.example --holder GABC… --fork-cache usdc.json\n  \
        ASSAY_OWNER_SECRET=S… ASSAY_SPENDER_SECRET=S… assay sep41 CDYO… --network testnet --live\n\n\
        Exit codes (the table in the README; numbers mean the same in every command):\n  \
        0   every check was exercised and held (a mint or clawback event row with no such power \
        observed is SKIPPED and leaves it at 0)\n  \
        1   the run could not start (no contract at the id, network unreachable, consent refused)\n  \
        2   something was not assessed (UNVERIFIABLE or SKIPPED), or nothing ran\n  \
        3   a check FAILED, or a required SEP-41 member is not implemented\n  64  usage error"
)]
pub struct Sep41Args {
    /// The token contract (C…) on a live network
    #[arg(value_name = "CONTRACT_ID", conflicts_with_all = ["wasm", "sac"])]
    contract_id: Option<String>,
    /// The token's network (default: testnet).
    #[command(flatten)]
    network: NetworkArgs,
    /// Keyed live mode: sign and submit real transactions with the parties' keys
    #[arg(long, conflicts_with_all = ["wasm", "sac", "holder", "fork_ledger", "fork_cache"])]
    live: bool,
    /// Fork: an existing holder (G… or C…) whose balance the suite's holder takes over inside the fork
    #[arg(long, value_name = "ADDRESS")]
    holder: Option<String>,
    /// Fork: the ledger to fork at (default: the network's latest)
    #[arg(long, value_name = "N")]
    fork_ledger: Option<u32>,
    /// Fork: record the entries read to FILE (stellar snapshot JSON), or replay FILE offline when it exists
    #[arg(long, value_name = "FILE")]
    fork_cache: Option<PathBuf>,
    /// Live: holder address (G…); implied by the holder's secret when one is given
    #[arg(long, value_name = "G…")]
    owner: Option<String>,
    /// Live: spender address (G…); implied by the spender's secret when one is given
    #[arg(long, value_name = "G…")]
    spender: Option<String>,
    /// Live: stellar-cli identity holding the holder's secret key (instead of ASSAY_OWNER_SECRET)
    #[arg(long, value_name = "NAME")]
    owner_identity: Option<String>,
    /// Live: stellar-cli identity holding the spender's secret key (instead of ASSAY_SPENDER_SECRET)
    #[arg(long, value_name = "NAME")]
    spender_identity: Option<String>,
    /// Live: allow writes on a network that is not testnet, futurenet or standalone
    #[arg(long)]
    allow_non_testnet_write: bool,
    /// Offline: the token WASM to deploy on an embedded network
    #[arg(long, value_name = "FILE", conflicts_with = "sac")]
    wasm: Option<PathBuf>,
    /// Offline: constructor arguments as JSON (array in order, or object by parameter name)
    #[arg(long, value_name = "JSON", requires = "wasm")]
    constructor_args: Option<String>,
    /// Offline: contracts to deploy before the token, its constructor arguments and calls to make
    /// after it, as a JSON set-up file (docs/token-tests.md); "@NAME" stands for each contract
    #[arg(long, value_name = "FILE", requires = "wasm")]
    setup: Option<PathBuf>,
    /// Offline: the admin-only function that mints (to: Address, amount: i128); unused when the
    /// constructor or a set-up call credits "@holder"
    #[arg(long, value_name = "NAME", default_value = "mint", requires = "wasm")]
    mint_fn: String,
    /// Offline: run against a Stellar Asset Contract for a fresh asset with this code
    #[arg(long, value_name = "CODE")]
    sac: Option<String>,
    /// Offline and fork: ledger close interval of the embedded network, in milliseconds
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    ledger_close_ms: u64,
    /// Output format on stdout
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
}

pub fn run(args: Sep41Args) -> CommandResult {
    // Power discovery runs on the suite's own network (fork or embedded), once its holder is funded; a
    // keyed live run has none.
    // The same discovery a token author's `cargo test` runs (assay-testkit).
    let discovery = assay_testkit::power_discovery();
    let (report, found) = if args.wasm.is_some() || args.sac.is_some() {
        run_offline_mode(&args, discovery)?
    } else if args.live {
        (run_live_mode(&args)?, None)
    } else {
        run_fork_mode(&args, discovery)?
    };
    let text = match args.output {
        Output::Text => {
            let mut text = render::text(&report);
            if found.is_some() {
                text.push('\n');
            }
            match &found {
                Some(Ok(survey)) => crate::commands::scan_text::render_powers(&mut text, survey),
                Some(Err(why)) => {
                    text.push_str(&format!("  powers: discovery could not run: {why}\n"))
                }
                None => {}
            }
            text
        }
        Output::Md => render::markdown(&report),
        Output::Json => {
            let mut json = render::json(&report);
            if let (Some(found), Some(object)) = (&found, json.as_object_mut()) {
                object.insert(
                    "powers".into(),
                    match found {
                        Ok(survey) => serde_json::to_value(survey).unwrap_or_default(),
                        Err(why) => serde_json::json!({ "error": why.to_string() }),
                    },
                );
            }
            let mut s = serde_json::to_string_pretty(&json).expect("the report serializes");
            s.push('\n');
            s
        }
        Output::Junit | Output::Sarif => {
            let wasm = args.wasm.as_ref().map(|p| p.display().to_string());
            let name = (wasm.clone())
                .or_else(|| args.contract_id.clone())
                .or_else(|| args.sac.clone())
                .unwrap_or_default();
            let subject = super::ci_formats::Subject {
                wasm: wasm.as_deref(),
                name: &name,
            };
            match args.output {
                Output::Junit => super::ci_formats::junit(&report, &subject),
                _ => super::ci_formats::sarif(&report, found.as_ref(), &subject),
            }
        }
    };
    print!("{text}");
    Ok(report.exit_code())
}

/// A finished run: the suite's report and what the discovery before it found, when one ran.
type Ran = (Report, Option<assay_sep41::hook::Discovered>);

fn run_offline_mode(args: &Sep41Args, discovery: BeforeSuite) -> Result<Ran, CommandError> {
    if args.owner.is_some() || args.spender.is_some() || args.owner_identity.is_some() {
        return Err(CommandError::usage(
            "--owner/--spender/--owner-identity apply to live runs; offline runs generate their own parties",
        ));
    }
    if args.holder.is_some() || args.fork_ledger.is_some() || args.fork_cache.is_some() {
        return Err(CommandError::usage(
            "--holder/--fork-ledger/--fork-cache apply to fork runs of a deployed contract (CONTRACT_ID); \
             an offline run funds its own holder",
        ));
    }
    let subject = match (&args.wasm, &args.sac) {
        (Some(path), _) => {
            let wasm = std::fs::read(path).map_err(|e| {
                CommandError::usage(format!(
                    "--wasm {}: {e}; pass a built token WASM",
                    path.display()
                ))
            })?;
            let constructor_args = match &args.constructor_args {
                Some(text) => Some(serde_json::from_str(text).map_err(|e| {
                    CommandError::usage(format!("--constructor-args is not valid JSON ({e}); e.g. '[\"@admin\", 7, \"Name\", \"SYM\"]'"))
                })?),
                None => None,
            };
            let deployment = Deployment::load_if_given(args.setup.as_deref())
                .map_err(|e| CommandError::usage(e.to_string()))?;
            let constructor_args = deployment
                .token_constructor_args(constructor_args, "--constructor-args")
                .map_err(CommandError::usage)?;
            OfflineToken::Wasm {
                wasm,
                origin: path.display().to_string(),
                constructor_args,
                mint_fn: args.mint_fn.clone(),
                deployment,
            }
        }
        (None, Some(code)) => OfflineToken::Sac { code: code.clone() },
        (None, None) => unreachable!("offline mode needs --wasm or --sac"),
    };
    let options = OfflineOptions {
        ledger_close_ms: args.ledger_close_ms,
        // A Stellar Asset Contract's powers are its issuer's flags, not its code's.
        before_suite: args.wasm.is_some().then_some(discovery),
        ..OfflineOptions::default()
    };
    match run_offline(&subject, &options) {
        Ok(run) => Ok((run.report, run.powers)),
        Err(e @ (OfflineError::Spec(_) | OfflineError::Usage(_))) => {
            Err(CommandError::usage(e.to_string()))
        }
        Err(e) => Err(CommandError::failed(e)),
    }
}

/// The token's network: the flags as every command reads them, testnet when none is given.
fn resolve_network(args: &Sep41Args) -> Result<NetworkSpec, CommandError> {
    let mut network = args.network.clone();
    if network.network.is_none() && network.rpc_url.is_none() {
        network.network = Some("testnet".into());
    }
    network.spec().map_err(CommandError::usage)
}

fn contract_arg(args: &Sep41Args) -> Result<stellar_xdr::ScAddress, CommandError> {
    let Some(contract_text) = &args.contract_id else {
        return Err(CommandError::usage(
            "pass a CONTRACT_ID (C…), or --wasm FILE / --sac CODE for an offline run",
        ));
    };
    match parse_address(contract_text) {
        Ok(a @ stellar_xdr::ScAddress::Contract(_)) => Ok(a),
        _ => Err(CommandError::usage(format!(
            "invalid contract ID {contract_text:?}: expected C… (56 characters)"
        ))),
    }
}

/// The default for a contract id: the suite on a fork, with no key and nothing sent upstream.
fn run_fork_mode(args: &Sep41Args, discovery: BeforeSuite) -> Result<Ran, CommandError> {
    let contract = contract_arg(args)?;
    if args.owner.is_some()
        || args.spender.is_some()
        || args.owner_identity.is_some()
        || args.spender_identity.is_some()
        || args.allow_non_testnet_write
    {
        return Err(CommandError::usage(
            "--owner/--spender/--owner-identity/--spender-identity/--allow-non-testnet-write apply to \
             keyed live runs (--live); a fork run creates its own parties (name an existing holder with --holder)",
        ));
    }
    let network = resolve_network(args)?;
    let options = ForkOptions {
        rpc_url: Some(network.rpc_url),
        passphrase: network.passphrase,
        ledger: args.fork_ledger,
        cache: args.fork_cache.clone(),
        holder: args.holder.clone(),
        ledger_close_ms: args.ledger_close_ms,
        before_suite: Some(discovery),
    };
    run_fork(&contract, &options)
        .map(|run| (run.report, run.powers))
        .map_err(stop)
}

fn run_live_mode(args: &Sep41Args) -> Result<Report, CommandError> {
    let contract = contract_arg(args)?;
    let network = resolve_network(args)?;
    let parties = live::resolve_parties(&PartiesInput {
        owner: PartyInput {
            address: args.owner.clone(),
            identity: args.owner_identity.clone(),
        },
        spender: PartyInput {
            address: args.spender.clone(),
            identity: args.spender_identity.clone(),
        },
    })
    .map_err(stop)?;
    live::consent(&network.passphrase, &parties, args.allow_non_testnet_write).map_err(stop)?;
    live::run_live(&network.rpc_url, &network.passphrase, &contract, &parties).map_err(stop)
}

fn stop(e: LiveError) -> CommandError {
    match e {
        LiveError::Usage(m) => CommandError::usage(m),
        LiveError::Incomplete(m) => CommandError::failed(m),
    }
}
