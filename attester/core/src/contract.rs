//! Custom Soroban tokens: the facts read about a token contract (its WASM's host imports and spec functions,
//! its `admin()`, the admin account's home domain and stellar.toml), the two pure checks that judge them
//! (`contract-mechanics`, `contract-domain`), and the evaluation into a report.
//!
//! Severity of a custom token is the floor its mechanics bits imply (bits 9-12, see
//! [`Mechanics::floor`]); a SEP-41 FAIL escalates to critical. Accountability is never undetermined: no admin
//! account or no home domain is `unverified`.

use serde::{Deserialize, Serialize};

use crate::checks::sep41::Sep41Check;
use crate::engine::{assemble_token, EngineError, ReportHeader};
use crate::evidence::{claims, go_quote, Evidence, SOURCE_HORIZON, SOURCE_STELLAR_TOML};
use crate::finding::Finding;
use crate::model::{Accountability, Mechanics, Rating};
use crate::report::Report;
use crate::subject::{Attempt, HomeDomain, Observed, TomlOutcome};
use crate::time::Timestamp;
use crate::token::Token;

/// Evidence source of facts read from the contract's code (its WASM and spec).
pub const SOURCE_CONTRACT_CODE: &str = "contract/wasm";
/// Evidence source of the contract's `admin()` answer.
pub const SOURCE_CONTRACT_ADMIN: &str = "contract/admin";

/// The host imports that replace a contract's code, by module and export name in the Soroban environment
/// interface: `l.6` (`update_current_contract_wasm`) and `l.j` (`update_current_contract_executable_ref`).
pub const UPDATE_IMPORTS: [(&str, &str, &str); 2] = [
    ("l", "6", "update_current_contract_wasm"),
    ("l", "j", "update_current_contract_executable_ref"),
];
/// Spec functions that take a holder's balance.
pub const CLAWBACK_FUNCTIONS: [&str; 1] = ["clawback"];
/// Spec functions that freeze a holder's balance where it is.
pub const FREEZE_FUNCTIONS: [&str; 5] = [
    "set_authorized",
    "freeze",
    "freeze_account",
    "blacklist",
    "blocklist",
];
/// Spec functions that create supply.
pub const MINT_FUNCTIONS: [&str; 1] = ["mint"];

/// A host function the module imports, by its interface module and export name (e.g. `l`, `6`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HostImport {
    /// Interface module (`l`, `x`, …).
    pub module: String,
    /// Export name within the module.
    pub name: String,
}

/// What a token contract's code says: read from the network (the instance's executable and the code entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractCode {
    /// SHA-256 of the WASM (the code entry's key), lowercase hex.
    pub wasm_hash: String,
    /// Host functions the module imports.
    pub imports: Vec<HostImport>,
    /// Function names the contract spec declares.
    pub functions: Vec<String>,
}

/// The contract's code outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum CodeOutcome {
    /// Read and parsed.
    Read(Observed<ContractCode>),
    /// The instance or code entry could not be read or parsed.
    Failed(Attempt),
}

/// The contract's `admin()` outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum AdminOutcome {
    /// `admin()` returned this address (`G…` account or `C…` contract).
    Address(Observed<String>),
    /// The spec declares no `admin()`.
    NoAdminFunction,
    /// `admin()` exists but could not be read.
    Failed(Attempt),
}

impl AdminOutcome {
    /// The admin account (`G…`), when `admin()` named one.
    pub fn account(&self) -> Option<&str> {
        match self {
            AdminOutcome::Address(o) if o.value.starts_with('G') => Some(&o.value),
            _ => None,
        }
    }
}

/// Everything read about a custom token contract, ready for the checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractSubject {
    /// The token contract (`C…`).
    pub contract: String,
    /// Its code.
    pub code: CodeOutcome,
    /// Its `admin()`.
    pub admin: AdminOutcome,
    /// The admin account's `home_domain` (`Absent` when there is no admin account).
    pub home_domain: HomeDomain,
    /// The admin account's URL the home domain was read from (Horizon `/accounts/G…`), when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_url: Option<String>,
    /// The stellar.toml outcome for that home domain.
    pub stellar_toml: TomlOutcome,
    /// Network passphrase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Scanner version bound into the hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scanner_version: Option<String>,
    /// When the scan ran.
    pub scanned_at: Timestamp,
}

/// `contract-mechanics`: the powers the token's code grants, read from its WASM. Sets bits 9-12 and the
/// severity floor they imply.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContractMechanics;

impl ContractMechanics {
    /// Check id.
    pub const ID: &'static str = "contract-mechanics";

    /// Judges the subject's code.
    pub fn judge(&self, s: &ContractSubject) -> Finding {
        let mut f = Finding::named(Self::ID, "Token contract mechanics");
        let code = match &s.code {
            CodeOutcome::Read(o) => o,
            CodeOutcome::Failed(a) => {
                f.severity = Rating::Unevaluated;
                f.undetermined = true;
                f.undetermined_by_source
                    .insert(SOURCE_CONTRACT_CODE.into(), 1);
                f.undetermined_rate = Some("1/1".into());
                f.evidence
                    .push(Evidence::failed_attempt(SOURCE_CONTRACT_CODE, a));
                f.reasoning = format!(
                    "The contract's code could not be read ({}), so what it can do to a balance is not known.",
                    a.failure.category
                );
                return f;
            }
        };
        let line = |claim: String| {
            Evidence::answer(SOURCE_CONTRACT_CODE, &s.contract, claim, code.retrieved_at)
        };
        f.evidence
            .push(line(format!("wasm {}", code.value.wasm_hash)));
        let mut bits = 0u32;
        let mut powers = Vec::new();
        for (module, name, label) in UPDATE_IMPORTS {
            if code
                .value
                .imports
                .iter()
                .any(|i| i.module == module && i.name == name)
            {
                bits |= Mechanics::CODE_MUTABLE;
                f.evidence.push(line(format!(
                    "imports {module}.{name} ({label}): the code can be replaced"
                )));
                powers.push(format!(
                    "imports {label}, so whoever its logic admits can replace every rule"
                ));
            }
        }
        for (names, bit, what) in [
            (
                &CLAWBACK_FUNCTIONS[..],
                Mechanics::ADMIN_CLAWBACK,
                "take a holder's balance",
            ),
            (
                &FREEZE_FUNCTIONS[..],
                Mechanics::ADMIN_FREEZE,
                "freeze a holder's balance",
            ),
            (&MINT_FUNCTIONS[..], Mechanics::ADMIN_MINT, "create supply"),
        ] {
            for function in names
                .iter()
                .filter(|n| code.value.functions.iter().any(|f| f == *n))
            {
                bits |= bit;
                f.evidence.push(line(format!("spec exposes {function}")));
                powers.push(format!("exposes `{function}` ({what})"));
            }
        }
        f.mechanics = Mechanics::from_bits(bits).unwrap_or_default();
        f.severity = Rating::Level(f.mechanics.floor());
        f.reasoning = if powers.is_empty() {
            "The code neither imports the contract-update function nor exposes clawback, a freeze or mint."
                .into()
        } else {
            format!(
                "The code {}. Severity is the floor the strongest of these implies: {}.",
                powers.join("; "),
                f.mechanics.floor()
            )
        };
        f
    }
}

/// `contract-domain`: whether the token's admin account publicly claims the token. Sets accountability
/// only; never undetermined.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContractDomain;

impl ContractDomain {
    /// Check id.
    pub const ID: &'static str = "contract-domain";

    /// Judges the admin account's claim.
    pub fn judge(&self, s: &ContractSubject) -> Finding {
        let mut f = Finding::named(Self::ID, "Token admin domain verification");
        f.accountability = Some(Accountability::Unverified);
        let admin_line =
            |claim: String, at| Evidence::answer(SOURCE_CONTRACT_ADMIN, &s.contract, claim, at);
        let admin = match &s.admin {
            AdminOutcome::NoAdminFunction => {
                f.reasoning = "The contract spec declares no admin(), so no account stands behind the token: unverified.".into();
                return f;
            }
            AdminOutcome::Failed(a) => {
                f.evidence.push(Evidence::failure(
                    SOURCE_CONTRACT_ADMIN,
                    &s.contract,
                    &a.failure,
                    a.retrieved_at,
                ));
                f.reasoning = format!(
                    "admin() could not be read ({}), so no account can be named behind the token: unverified.",
                    a.failure.category
                );
                return f;
            }
            AdminOutcome::Address(o) => {
                f.evidence.push(admin_line(
                    format!("admin() is {}", o.value),
                    o.retrieved_at,
                ));
                o
            }
        };
        if !admin.value.starts_with('G') {
            f.reasoning = format!(
                "admin() is the contract {}, not an account with a home domain: unverified.",
                admin.value
            );
            return f;
        }
        let account_url = s.account_url.clone().unwrap_or_default();
        let domain = match &s.home_domain {
            HomeDomain::Present(d) => d,
            HomeDomain::Absent | HomeDomain::Unknown => {
                f.reasoning = format!(
                    "The admin account {} advertises no home_domain (or it was not read), so nobody has publicly \
                     claimed the token: unverified.",
                    admin.value
                );
                return f;
            }
        };
        f.evidence.push(Evidence::answer(
            SOURCE_HORIZON,
            &account_url,
            claims::home_domain(domain),
            admin.retrieved_at,
        ));
        match &s.stellar_toml {
            TomlOutcome::Document(doc) => {
                let mut e = if doc
                    .currencies
                    .iter()
                    .any(|c| c.declares_contract(&s.contract))
                {
                    f.accountability = Some(Accountability::Verified);
                    f.reasoning = format!(
                        "The admin account's home_domain {} publishes a [[CURRENCIES]] entry naming this contract.",
                        go_quote(domain)
                    );
                    Evidence::answer(
                        SOURCE_STELLAR_TOML,
                        &doc.url,
                        format!("CURRENCIES claims contract {}", s.contract),
                        doc.retrieved_at,
                    )
                } else {
                    f.reasoning = format!(
                        "The stellar.toml of {} lists no [[CURRENCIES]] entry whose contract is this token: unverified.",
                        go_quote(domain)
                    );
                    Evidence::answer(
                        SOURCE_STELLAR_TOML,
                        &doc.url,
                        format!(
                            "CURRENCIES lists {} entries, none with contract {}",
                            doc.currencies.len(),
                            s.contract
                        ),
                        doc.retrieved_at,
                    )
                };
                e.requested_url = Some(doc.requested_url.clone());
                f.evidence.push(e);
            }
            TomlOutcome::Failed {
                requested_url,
                retrieved_at,
                failure,
            } => {
                f.evidence.push(Evidence::failure(
                    SOURCE_STELLAR_TOML,
                    requested_url,
                    failure,
                    *retrieved_at,
                ));
                f.reasoning = format!(
                    "The stellar.toml of {} could not be read ({}): unverified.",
                    go_quote(domain),
                    failure.category
                );
            }
            TomlOutcome::Refused {
                requested_url,
                retrieved_at,
                reason,
            } => {
                f.evidence.push(Evidence::refusal(
                    SOURCE_STELLAR_TOML,
                    requested_url,
                    reason,
                    *retrieved_at,
                ));
                f.reasoning = format!("The stellar.toml fetch was refused ({reason}): unverified.");
            }
            TomlOutcome::NotFetched => {
                f.reasoning = "The stellar.toml was not fetched: unverified.".into();
            }
        }
        f
    }
}

/// Evaluates a custom token: `contract-mechanics`, `contract-domain`, and `sep41` when the suite ran.
pub fn evaluate_contract(
    subject: &ContractSubject,
    sep41: Option<&Sep41Check>,
) -> Result<Report, EngineError> {
    let mut findings = vec![
        ContractMechanics.judge(subject),
        ContractDomain.judge(subject),
    ];
    if let Some(check) = sep41 {
        findings.push(check.finding());
    }
    assemble_token(
        ReportHeader {
            asset: Token::Contract(subject.contract.clone()),
            network: subject.network.clone(),
            scanner_version: subject.scanner_version.clone(),
            scanned_at: subject.scanned_at,
        },
        findings,
    )
}
