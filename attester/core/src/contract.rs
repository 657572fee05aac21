//! Custom Soroban tokens: the facts read about a token contract (its WASM's host imports, the powers power
//! discovery observed on a fork, its `admin()`, the admin account's home domain and stellar.toml), the two
//! pure checks that judge them (`contract-mechanics`, `contract-domain`), and the evaluation into a report.
//!
//! Severity of a custom token is the floor its mechanics bits imply (bits 9-14, see
//! [`Mechanics::floor`]), high for a transfer fee seen to deliver nothing; a SEP-41 FAIL escalates to
//! critical. The bits come from behaviour observed on a
//! fork ([`crate::powers`]) and from the code's host imports — never from a function's name. Accountability
//! is never undetermined: no admin account or no home domain is `unverified`.

use serde::{Deserialize, Serialize};

use crate::checks::sep41::Sep41Check;
use crate::engine::{assemble_token, EngineError, ReportHeader};
use crate::evidence::{claims, go_quote, Evidence, SOURCE_HORIZON, SOURCE_STELLAR_TOML};
use crate::finding::Finding;
use crate::model::{Accountability, Mechanics, Rating};
use crate::powers::{PowerEffect, PowerSurvey};
use crate::report::Report;
use crate::subject::{Attempt, HomeDomain, Observed, TomlOutcome};
use crate::time::Timestamp;
use crate::token::Token;

/// Evidence source of facts read from the contract's code (its WASM and spec).
pub const SOURCE_CONTRACT_CODE: &str = "contract/wasm";
/// Evidence source of the contract's `admin()` answer.
pub const SOURCE_CONTRACT_ADMIN: &str = "contract/admin";
/// Evidence source of the powers observed on a fork (power discovery).
pub const SOURCE_CONTRACT_BEHAVIOUR: &str = "contract/behaviour";

/// The host imports that replace a contract's code, by module and export name in the Soroban environment
/// interface: `l.6` (`update_current_contract_wasm`) and `l.j` (`update_current_contract_executable_ref`).
pub const UPDATE_IMPORTS: [(&str, &str, &str); 2] = [
    ("l", "6", "update_current_contract_wasm"),
    ("l", "j", "update_current_contract_executable_ref"),
];
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
    /// Function names the contract spec declares (metadata: what can be called is the export section).
    pub functions: Vec<String>,
    /// The executable is a CAP-85 external reference to this contract, which owns the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_owner: Option<String>,
}

/// What power discovery observed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum PowersOutcome {
    /// Discovery ran on a fork (or the embedded network) and observed this.
    Observed(Observed<PowerSurvey>),
    /// Discovery could not run (no fork, the token trapped on set-up, …).
    Failed(Attempt),
    /// Discovery was not run for this subject (one recorded before it existed): what the code can do to a
    /// balance was not observed.
    #[default]
    NotRun,
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
    /// The powers its code was seen to grant.
    #[serde(default)]
    pub powers: PowersOutcome,
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

/// `contract-mechanics`: the powers the token's code grants, observed on a fork by power discovery and read
/// from its WASM's host imports. Sets bits 9-13 and the severity floor they imply; undetermined when
/// discovery did not cover the token (the bits are then a floor).
#[derive(Debug, Clone, Copy, Default)]
pub struct ContractMechanics;

impl ContractMechanics {
    /// Check id.
    pub const ID: &'static str = "contract-mechanics";

    /// Judges the subject's code: what its imports let replace, and what discovery saw its calls do.
    pub fn judge(&self, s: &ContractSubject) -> Finding {
        let mut f = Finding::named(Self::ID, "Token contract mechanics");
        let code = match &s.code {
            CodeOutcome::Read(o) => o,
            CodeOutcome::Failed(a) => return code_unread(f, a),
        };
        let mut seen = Seen::default();
        seen.code(&mut f, s, code);
        match &s.powers {
            PowersOutcome::Observed(observed) => seen.behaviour(&mut f, s, observed),
            PowersOutcome::Failed(a) => {
                f.evidence
                    .push(Evidence::failed_attempt(SOURCE_CONTRACT_BEHAVIOUR, a));
                mark_undetermined(
                    &mut f,
                    format!(
                        "power discovery could not run ({}: {})",
                        a.failure.category, a.failure.detail
                    ),
                );
            }
            PowersOutcome::NotRun => {
                mark_undetermined(&mut f, "power discovery was not run".into())
            }
        }
        seen.conclude(f)
    }
}

/// The finding when the contract's code could not be read: undetermined, nothing known of its powers.
fn code_unread(mut f: Finding, a: &Attempt) -> Finding {
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
    f
}

/// What the judgment has seen so far: the mechanics bits, the least severity an observation implies beyond
/// their floor, and, for the reasoning, one phrase per power.
#[derive(Default)]
struct Seen {
    bits: u32,
    least: Option<crate::model::Severity>,
    powers: Vec<String>,
}

impl Seen {
    /// The code's own powers: update imports, and code run from a contract someone else owns.
    fn code(&mut self, f: &mut Finding, s: &ContractSubject, code: &Observed<ContractCode>) {
        let line = |claim: String| {
            Evidence::answer(SOURCE_CONTRACT_CODE, &s.contract, claim, code.retrieved_at)
        };
        f.evidence
            .push(line(format!("wasm {}", code.value.wasm_hash)));
        for (module, name, label) in UPDATE_IMPORTS {
            if code
                .value
                .imports
                .iter()
                .any(|i| i.module == module && i.name == name)
            {
                self.bits |= Mechanics::CODE_MUTABLE;
                f.evidence.push(line(format!(
                    "imports {module}.{name} ({label}): the code can be replaced"
                )));
                self.powers.push(format!(
                    "imports {label}, so whoever its logic admits can replace every rule"
                ));
            }
        }
        if let Some(owner) = &code.value.external_owner {
            self.bits |= Mechanics::CODE_MUTABLE;
            let effect = PowerEffect::ExternalCode {
                owner: owner.clone(),
            };
            f.evidence.push(line(effect.stable_claim()));
            self.powers.push(format!(
                "runs code the contract {owner} owns (a CAP-85 external reference), which its owner can replace"
            ));
        }
    }

    /// What discovery saw privileged calls do, classified or not.
    fn behaviour(
        &mut self,
        f: &mut Finding,
        s: &ContractSubject,
        observed: &Observed<PowerSurvey>,
    ) {
        let behaviour = |claim: String| {
            Evidence::answer(
                SOURCE_CONTRACT_BEHAVIOUR,
                &s.contract,
                claim,
                observed.retrieved_at,
            )
        };
        let survey = &observed.value;
        self.bits |= survey.bits();
        for p in &survey.powers {
            f.evidence.push(behaviour(power_claim(p)));
            let label = p
                .label
                .as_ref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let dormant = if p.dormant() {
                "; dormant: no authority can sign again"
            } else {
                ""
            };
            let from = p
                .usable_from
                .map(|t| format!(" from {t}"))
                .unwrap_or_default();
            let share = match &p.effect {
                PowerEffect::TransferFee { share_bps, .. } => {
                    format!(
                        " ({} of it not delivered)",
                        crate::powers::share_text(*share_bps)
                    )
                }
                _ => String::new(),
            };
            if p.effect.takes_every_transfer() {
                // Bit 14's floor is medium; a fee that leaves the recipient nothing confiscates every
                // transfer.
                self.least = Some(crate::model::Severity::High);
            }
            self.powers.push(format!(
                "{}{share} through `{}`{label}, usable by {}{from}{dormant}",
                p.effect.kind(),
                p.function,
                p.authorization()
            ));
        }
        for u in &survey.unclassified {
            let by = unclassified_authority(u);
            f.evidence.push(behaviour(unclassified_claim(u)));
            self.powers.push(format!(
                "lets {by} call `{}`, which writes state whose effect on holders was not classified",
                u.function
            ));
        }
        if let Some(why) = survey.incomplete() {
            mark_undetermined(f, why);
        }
    }

    /// The severity the strongest power implies, and the reasoning that names every power seen.
    fn conclude(self, mut f: Finding) -> Finding {
        f.mechanics = Mechanics::from_bits(self.bits).unwrap_or_default();
        let floor = f.mechanics.floor();
        let level = self.least.map_or(floor, |least| floor.max(least));
        f.severity = Rating::Level(level);
        let observed = if self.powers.is_empty() {
            "No call was seen to take, freeze or create a balance or to replace the code, and the code imports no \
             update function."
                .to_string()
        } else {
            format!(
                "The code {}. Severity is the floor the strongest of these implies: {level}.",
                self.powers.join("; "),
            )
        };
        f.reasoning = if f.undetermined {
            format!(
                "{observed} That is a floor, not a clean answer: {}.",
                f.reasoning
            )
        } else {
            observed
        };
        f
    }
}

/// The `contract/behaviour` claims a survey gives, in the order the report carries them: one per observed
/// power, then one per unclassified write. What a replay of power discovery must reproduce.
pub fn behaviour_claims(survey: &PowerSurvey) -> Vec<String> {
    survey
        .powers
        .iter()
        .map(power_claim)
        .chain(survey.unclassified.iter().map(unclassified_claim))
        .collect()
}

/// `FUNCTION authorized by WHO: EFFECT` (the effect's stable wording: no run numbers).
///
/// A power a sequence of calls showed reads `FIRST then SECOND, authorized by WHO then WHO: EFFECT`.
///
/// A power refused at the ledger's time and shown with the clock moved forward says so before the effect,
/// in words free of the run's dates (`…, usable only later (refused at the ledger's time, shown with the
/// clock moved forward): EFFECT`), so the effect's wording still ends the line.
fn power_claim(p: &crate::powers::ObservedPower) -> String {
    let later = if p.usable_from.is_some() {
        ", usable only later (refused at the ledger's time, shown with the clock moved forward)"
    } else {
        ""
    };
    if p.steps.is_empty() {
        format!(
            "{} authorized by {}{later}: {}",
            p.function,
            p.holders(),
            p.effect.stable_claim()
        )
    } else {
        format!(
            "{}, authorized by {}{later}: {}",
            p.function,
            p.authorization(),
            p.effect.stable_claim()
        )
    }
}

fn unclassified_authority(u: &crate::powers::UnclassifiedWrite) -> String {
    if u.authorized_by.is_empty() {
        "nobody".to_string()
    } else {
        u.authorized_by
            .iter()
            .map(|a| a.describe())
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

fn unclassified_claim(u: &crate::powers::UnclassifiedWrite) -> String {
    format!(
        "{} authorized by {}: writes state; its effect on holders was not classified within the bound",
        u.function,
        unclassified_authority(u)
    )
}

/// Marks `f` undetermined because power discovery did not cover the token; `why` lands in the reasoning
/// (completed by [`ContractMechanics::judge`]).
fn mark_undetermined(f: &mut Finding, why: String) {
    f.undetermined = true;
    f.undetermined_by_source
        .insert(SOURCE_CONTRACT_BEHAVIOUR.into(), 1);
    f.undetermined_rate = Some("1/1".into());
    f.reasoning = why;
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
        toml_claim(&mut f, s, domain);
        f
    }
}

/// Whether the admin's home domain's stellar.toml names the contract: sets accountability and reasoning.
fn toml_claim(f: &mut Finding, s: &ContractSubject, domain: &str) {
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
    let mut report = assemble_token(
        ReportHeader {
            asset: Token::Contract(subject.contract.clone()),
            network: subject.network.clone(),
            scanner_version: subject.scanner_version.clone(),
            scanned_at: subject.scanned_at,
        },
        findings,
    )?;
    if let PowersOutcome::Observed(o) = &subject.powers {
        report.powers = Some(o.value.clone());
    }
    Ok(report)
}
