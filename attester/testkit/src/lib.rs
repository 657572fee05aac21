//! Assay's SEP-41 suite and power discovery in a token author's own `cargo test`.
//!
//! Add the crate to `[dev-dependencies]`, build the token to WASM, and in a test file:
//!
//! ```no_run
//! assay_testkit::sep41_tests!(
//!     assay_testkit::Token::wasm_file("target/wasm32v1-none/release/my_token.wasm")
//!         .constructor_args(r#"["@admin", 7, "My Token", "MTK"]"#)
//!         .mint_fn("mint")
//! );
//!
//! #[test]
//! fn holds_with_only_the_mint_power() {
//!     sep41_suite().assert_only_powers(&["admin_mint"]);
//! }
//! ```
//!
//! The macro expands to one `#[test]` per check (`sep41_transfer_auth`, …), each failing with the
//! check's expected and actual, and a `sep41_suite()` function returning the run (done once per test
//! binary). The run is [`assay_sep41::offline::run_offline`] with the power discovery
//! [`power_discovery`] gives it: exactly what `assay sep41 --wasm` runs, on the real Soroban host of
//! an embedded network.
//!
//! The token is its WASM, not a natively registered contract (`env.register(MyToken, ..)`): the suite
//! and discovery run on their own network (a fresh `soroban-env-host` ledger with funded accounts,
//! the native asset's contract, and stellar-rpc's simulation), which a test's `soroban_sdk::Env` is
//! not, and the WASM is what gets deployed.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use assay_core::powers::PowerSurvey;
use assay_core::Mechanics;
use assay_sep41::offline::{run_offline, Deployment, OfflineOptions, OfflineToken};
use assay_sep41::{BeforeSuite, CheckResult, Report, Status, CHECKS};

/// Power discovery as every `assay sep41` run does it before the suite: on the suite's own network,
/// once the holder is funded, with the default bounds.
pub fn power_discovery() -> BeforeSuite {
    BeforeSuite(Arc::new(|net, contract, holders| {
        assay_powers::discover_on(net, contract, holders, assay_powers::Bounds::default())
            .map_err(Into::into)
    }))
}

/// Where the WASM comes from.
#[derive(Debug, Clone)]
enum Source {
    File(PathBuf),
    Bytes(Vec<u8>, String),
}

/// The token under test: its WASM, its constructor's arguments and the function that mints to the
/// suite's holder.
#[derive(Debug, Clone)]
pub struct Token {
    source: Source,
    constructor_args: Option<String>,
    mint_fn: String,
    setup: Option<PathBuf>,
}

impl Token {
    /// The WASM at `path` (read when the suite runs; a relative path is the test's working directory,
    /// which `cargo test` sets to the package's root).
    pub fn wasm_file(path: impl AsRef<Path>) -> Token {
        Token {
            source: Source::File(path.as_ref().to_path_buf()),
            constructor_args: None,
            mint_fn: "mint".into(),
            setup: None,
        }
    }

    /// The WASM's bytes (e.g. `include_bytes!`), named `origin` in messages.
    pub fn wasm_bytes(bytes: impl Into<Vec<u8>>, origin: impl Into<String>) -> Token {
        Token {
            source: Source::Bytes(bytes.into(), origin.into()),
            constructor_args: None,
            mint_fn: "mint".into(),
            setup: None,
        }
    }

    /// The constructor's arguments as JSON, as `assay sep41 --constructor-args` takes them: an array
    /// in order or an object by parameter name, converted with the WASM's own spec; `"@admin"`,
    /// `"@holder"` and `"@spender"` stand for the suite's parties.
    pub fn constructor_args(mut self, json: impl Into<String>) -> Token {
        self.constructor_args = Some(json.into());
        self
    }

    /// The admin-only function that mints `(to: Address, amount: i128)` to the suite's holder
    /// (default `mint`; unused when the constructor credits `"@holder"`).
    pub fn mint_fn(mut self, name: impl Into<String>) -> Token {
        self.mint_fn = name.into();
        self
    }

    /// A set-up file, as `assay sep41 --setup` takes it: contracts deployed before the token (a
    /// SEP-57 token's compliance and identity verifier), its constructor's arguments, and calls made
    /// after it (verifying the parties, minting through an operator). A relative path is the test's
    /// working directory; the WASM paths inside are relative to the file.
    pub fn setup_file(mut self, path: impl AsRef<Path>) -> Token {
        self.setup = Some(path.as_ref().to_path_buf());
        self
    }

    fn offline(&self) -> Result<OfflineToken, SetupError> {
        let (wasm, origin) = match &self.source {
            Source::File(path) => {
                let wasm = std::fs::read(path).map_err(|e| SetupError::UnreadableWasm {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
                (wasm, path.display().to_string())
            }
            Source::Bytes(bytes, origin) => (bytes.clone(), origin.clone()),
        };
        let constructor_args = match &self.constructor_args {
            Some(text) => {
                Some(
                    serde_json::from_str(text).map_err(|e| SetupError::ConstructorArgs {
                        text: text.clone(),
                        reason: e.to_string(),
                    })?,
                )
            }
            None => None,
        };
        let deployment = Deployment::load_if_given(self.setup.as_deref())
            .map_err(|e| SetupError::SetupFile(e.to_string()))?;
        let constructor_args = deployment
            .token_constructor_args(constructor_args, "Token::constructor_args")
            .map_err(SetupError::SetupFile)?;
        Ok(OfflineToken::Wasm {
            wasm,
            origin,
            constructor_args,
            mint_fn: self.mint_fn.clone(),
            deployment,
        })
    }

    /// Runs power discovery and the suite on a fresh embedded network, as `assay sep41 --wasm` does.
    /// An error is a run that could not start (unreadable WASM, bad arguments, no way to fund the
    /// holder), with the fix named.
    pub fn run(&self) -> Result<Suite, SetupError> {
        let subject = self.offline()?;
        let options = OfflineOptions {
            before_suite: Some(power_discovery()),
            ..OfflineOptions::default()
        };
        let run =
            run_offline(&subject, &options).map_err(|e| SetupError::Offline(e.to_string()))?;
        Ok(Suite {
            powers: match run.powers {
                Some(found) => found.map_err(|e| DiscoveryFailed(e.to_string())),
                None => Err(DiscoveryFailed("discovery did not run".into())),
            },
            report: run.report,
            discovery_time: run.discovery_time,
            suite_time: run.suite_time,
            setup_time: run.setup_time,
        })
    }
}

/// Why a run could not start, with the fix named.
#[derive(Debug, Clone)]
pub enum SetupError {
    /// The token's WASM file could not be read.
    UnreadableWasm { path: PathBuf, reason: String },
    /// The constructor arguments are not JSON.
    ConstructorArgs { text: String, reason: String },
    /// The set-up file cannot be read or used (the message names the file and the fix).
    SetupFile(String),
    /// The embedded network refused the token, as `assay sep41 --wasm` does (the same message).
    Offline(String),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::UnreadableWasm { path, reason } => write!(
                f,
                "cannot read the token WASM {}: {reason}; build it first (e.g. `stellar contract \
                 build`) or point Token::wasm_file at the built .wasm",
                path.display()
            ),
            SetupError::ConstructorArgs { text, reason } => write!(
                f,
                "the constructor arguments {text:?} are not JSON ({reason}); e.g. \
                 r#\"[\"@admin\", 7, \"Name\", \"SYM\"]\"#"
            ),
            SetupError::Offline(message) | SetupError::SetupFile(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for SetupError {}

/// Why power discovery did not give a survey.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryFailed(pub String);

/// A check, or the power assertion, that does not hold: the message a failing test prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotHeld(pub String);

macro_rules! message_error {
    ($($ty:ident),*) => {$(
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl std::error::Error for $ty {}
    )*};
}
message_error!(DiscoveryFailed, NotHeld);

/// A finished run: the suite's report and what power discovery found.
#[derive(Debug, Clone)]
pub struct Suite {
    pub report: Report,
    /// The survey, or why discovery could not run.
    pub powers: Result<PowerSurvey, DiscoveryFailed>,
    pub setup_time: Duration,
    pub discovery_time: Duration,
    pub suite_time: Duration,
}

impl Suite {
    /// The row of check `id` (e.g. `sep41-transfer-auth`).
    pub fn check(&self, id: &str) -> Option<&CheckResult> {
        self.report.results.iter().find(|r| r.id == id)
    }

    /// Panics unless check `id` holds, with its status, expected and actual. A check holds when it
    /// PASSes, or when it is a mint/clawback event row with no such power observed (nothing to judge;
    /// `assay sep41` exits 0 on it too). FAIL, NOT_IMPLEMENTED, UNVERIFIABLE and any other SKIPPED
    /// panic: "could not check" is never "fine".
    pub fn assert_check(&self, id: &str) {
        if let Err(message) = self.check_verdict(id) {
            panic!("{message}");
        }
    }

    /// [`Suite::assert_check`]'s verdict as a value: `Err` carries the message.
    pub fn check_verdict(&self, id: &str) -> Result<(), NotHeld> {
        let Some(row) = self.check(id) else {
            return Err(NotHeld(format!(
                "{id}: the suite has no such check (known: {})",
                CHECKS.map(|c| c.id).join(", ")
            )));
        };
        if row.status == Status::Pass || row.no_power_observed() {
            return Ok(());
        }
        Err(NotHeld(row_message(row)))
    }

    /// Panics unless every check holds ([`Suite::assert_check`]) and discovery ran to completion and
    /// observed no power but the named ones (mechanics names: `admin_mint`, `admin_freeze`,
    /// `admin_clawback`, `code_mutable`, `admin_unclassified`, `admin_transfer_fee`). The message lists every broken check
    /// and every unexpected power with the function that showed it.
    pub fn assert_only_powers(&self, allowed: &[&str]) {
        if let Err(message) = self.only_powers(allowed) {
            panic!("{message}");
        }
    }

    /// [`Suite::assert_only_powers`]'s verdict as a value.
    pub fn only_powers(&self, allowed: &[&str]) -> Result<(), NotHeld> {
        let mut problems = Vec::new();
        for name in allowed {
            if Mechanics::bit_named(name).is_none_or(|b| b & Mechanics::CONTRACT_MASK == 0) {
                problems.push(format!(
                    "{name:?} is not a power discovery reports (admin_mint, admin_freeze, \
                     admin_clawback, code_mutable, admin_unclassified, admin_transfer_fee)"
                ));
            }
        }
        for row in &self.report.results {
            if let Err(NotHeld(message)) = self.check_verdict(row.id) {
                problems.push(message);
            }
        }
        match &self.powers {
            Err(why) => problems.push(format!("power discovery could not run: {why}")),
            Ok(survey) => {
                if let Some(why) = survey.incomplete() {
                    problems.push(format!("power discovery is incomplete: {why}"));
                }
                for p in &survey.powers {
                    let name = power_name(p.effect.bit());
                    if !allowed.contains(&name) {
                        problems.push(format!(
                            "unexpected power {name}: `{}` {} ({})",
                            p.function,
                            p.effect.kind(),
                            p.effect.detail()
                        ));
                    }
                }
                for w in &survey.unclassified {
                    if !allowed.contains(&"admin_unclassified") {
                        problems.push(format!(
                            "unexpected power admin_unclassified: `{}` writes state under a \
                             privileged authorization with no effect classified",
                            w.function
                        ));
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(NotHeld(format!(
                "{} ({}):\n  {}",
                self.report.contract_id,
                problems.len(),
                problems.join("\n  ")
            )))
        }
    }

    /// The mechanics names of the powers discovery observed, in bit order (empty when it could not run).
    pub fn power_names(&self) -> Vec<&'static str> {
        match &self.powers {
            Ok(survey) => Mechanics::from_bits(survey.bits())
                .map(Mechanics::names)
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}

fn power_name(bit: u32) -> &'static str {
    Mechanics::NAMES
        .iter()
        .find(|(b, _)| *b == bit)
        .map_or("unknown", |(_, n)| n)
}

/// A broken row as a test failure reads it.
fn row_message(row: &CheckResult) -> String {
    let mut message = format!(
        "{} {}: {}\n  expected: {}\n  actual:   {}",
        row.id,
        row.status.as_str(),
        row.clause,
        row.expected,
        row.actual
    );
    if let Some(error) = &row.evidence.error {
        message.push_str(&format!("\n  error:    {error}"));
    }
    for line in &row.evidence.observed {
        message.push_str(&format!("\n  observed: {line}"));
    }
    message
}

/// The test function's name for check `id`: `sep41-transfer_from-auth` → `sep41_transfer_from_auth`.
pub fn test_name(id: &str) -> String {
    id.replace('-', "_")
}

/// One `#[test]` per SEP-41 check, and `fn sep41_suite() -> &'static Suite`, from a [`Token`]
/// expression. The suite runs once per test binary (the first test to ask), every check's test reads
/// its row: `cargo test` then lists `sep41_transfer_auth ... FAILED` with the check's expected and
/// actual. Invoke it once per module.
#[macro_export]
macro_rules! sep41_tests {
    ($token:expr $(,)?) => {
        /// The suite's run over this test binary's token, done once.
        #[allow(dead_code)]
        fn sep41_suite() -> &'static $crate::Suite {
            static RUN: ::std::sync::OnceLock<
                ::std::result::Result<$crate::Suite, $crate::SetupError>,
            > = ::std::sync::OnceLock::new();
            match RUN.get_or_init(|| {
                let token: $crate::Token = $token;
                token.run()
            }) {
                Ok(suite) => suite,
                Err(why) => panic!("the SEP-41 suite could not run: {why}"),
            }
        }
        $crate::__sep41_check_tests! {
            sep41_decimals "sep41-decimals",
            sep41_balance "sep41-balance",
            sep41_allowance "sep41-allowance",
            sep41_name "sep41-name",
            sep41_symbol "sep41-symbol",
            sep41_transfer_from_unauthorized "sep41-transfer_from-unauthorized",
            sep41_transfer_zero_amount "sep41-transfer-zero-amount",
            sep41_transfer_self "sep41-transfer-self",
            sep41_transfer_negative_amount "sep41-transfer-negative-amount",
            sep41_transfer_over_balance "sep41-transfer-over-balance",
            sep41_transfer "sep41-transfer",
            sep41_approve "sep41-approve",
            sep41_transfer_from "sep41-transfer_from",
            sep41_burn "sep41-burn",
            sep41_burn_from "sep41-burn_from",
            sep41_transfer_from_expired "sep41-transfer_from-expired",
            sep41_transfer_auth "sep41-transfer-auth",
            sep41_transfer_from_auth "sep41-transfer_from-auth",
            sep41_approve_auth "sep41-approve-auth",
            sep41_burn_auth "sep41-burn-auth",
            sep41_burn_from_auth "sep41-burn_from-auth",
            sep41_events_transfer "sep41-events-transfer",
            sep41_events_approve "sep41-events-approve",
            sep41_events_burn "sep41-events-burn",
            sep41_approve_past_expiry "sep41-approve-past-expiry",
            sep41_events_mint "sep41-events-mint",
            sep41_events_clawback "sep41-events-clawback",
        }
    };
}

/// The per-check tests of [`sep41_tests!`]; its list is pinned to [`CHECKS`] by this crate's tests.
#[doc(hidden)]
#[macro_export]
macro_rules! __sep41_check_tests {
    ($($name:ident $id:literal,)*) => {
        /// The check ids the macro made tests for, in order.
        #[allow(dead_code)]
        const SEP41_TESTED: &[&str] = &[$($id),*];
        $(
            #[test]
            fn $name() {
                sep41_suite().assert_check($id);
            }
        )*
    };
}
