//! The checks and the premise rules they share: the sixteen that read and write here, the
//! authorization layer in [`authorization`], the events layer in [`events`].
//!
//! Rules applied everywhere:
//! - a missing premise (key, funded holder, readable value, distinct non-issuer real parties) is
//!   UNVERIFIABLE, never FAIL;
//! - a read that did not arrive (no answer, archived, a trustline the asset never granted) is
//!   UNVERIFIABLE; a read that arrived carrying something impossible (negative, not an i128, an
//!   unexplained trap) FAILs wherever it is read;
//! - once an account reads negative, later checks that read it report the unsound accounting
//!   as UNVERIFIABLE instead of testing their own rule;
//! - a balance of exactly i64::MAX (the SAC issuer's sentinel) and a trap mentioning a missing
//!   trustline withhold a verdict (UNVERIFIABLE), judged on the value alone.
use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

pub use assay_chain::scval::{i128_of, i128_val};
use assay_chain::{strkey_of, InvokeOutcome, ReadOutcome};
use serde_json::json;
use stellar_xdr::{ScAddress, ScVal, SorobanAuthorizationEntry};

use crate::{
    chain::{Authorization, Role, Simulation, TokenChain, WriteFault},
    model::{CheckDef, CheckResult, Evidence, Layer, Status, CHECKS},
};

mod authorization;
mod events;

pub use events::ExercisedPower;

/// The SAC issuer's balance sentinel.
pub const ISSUER_SENTINEL: i128 = i64::MAX as i128;
/// The SAC host's wording for a balance read or move on an account without a trustline.
pub const TRUSTLINE_TRAP: &str = "trustline entry is missing";

/// One side of the run.
#[derive(Debug, Clone)]
pub struct Party {
    pub address: ScAddress,
    /// A throwaway address the suite made up because none was given.
    pub generated: bool,
    /// The run holds this party's signing key.
    pub can_sign: bool,
    /// How to provide this party's key, for UNVERIFIABLE messages (names the env var or flag).
    pub key_hint: String,
    /// How to provide this party's address.
    pub address_hint: String,
}

/// What the suite runs against and how long it may wait.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    pub holder: Party,
    pub spender: Party,
    /// Functions the contract spec declares; `None` when there is no spec (the SAC: called blind).
    pub declared: Option<BTreeSet<String>>,
    /// Ledgers ahead for the approve check's grant.
    pub approve_ledgers: u32,
    /// Ledgers ahead for the expiry check's short grant.
    pub expiry_ledgers: u32,
    /// Longest wait for the ledger to pass the short grant.
    pub expiry_wait: Duration,
    /// How often to look at the ledger while waiting.
    pub expiry_poll: Duration,
    /// How to give the holder units, for the rows an empty holder leaves UNVERIFIABLE.
    pub funding_hint: String,
    /// The mint power discovery exercised, whose event `sep41-events-mint` judges.
    pub exercised_mint: Option<ExercisedPower>,
    /// The clawback power discovery exercised, whose event `sep41-events-clawback` judges.
    pub exercised_clawback: Option<ExercisedPower>,
}

impl SuiteConfig {
    /// Defaults for a live network (5 s ledgers): grant 17,280 ledgers for approve, a grant
    /// lapsing 2 ledgers ahead for the expiry check, waited for at most 45 s.
    pub fn live(holder: Party, spender: Party, declared: Option<BTreeSet<String>>) -> Self {
        SuiteConfig {
            holder,
            spender,
            declared,
            approve_ledgers: 17_280,
            expiry_ledgers: 2,
            expiry_wait: Duration::from_secs(45),
            expiry_poll: Duration::from_secs(1),
            funding_hint: "fund the holder with at least 5 units".into(),
            exercised_mint: None,
            exercised_clawback: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Holder,
    Spender,
}

/// An early verdict: `?` on a [`Step`] ends the check with it.
struct Outcome {
    status: Status,
    actual: String,
}

type Step<T> = Result<T, Outcome>;

fn pass(actual: impl Into<String>) -> Outcome {
    Outcome {
        status: Status::Pass,
        actual: actual.into(),
    }
}
fn fail(actual: impl Into<String>) -> Outcome {
    Outcome {
        status: Status::Fail,
        actual: actual.into(),
    }
}
fn unverifiable(actual: impl Into<String>) -> Outcome {
    Outcome {
        status: Status::Unverifiable,
        actual: actual.into(),
    }
}
fn skipped(actual: impl Into<String>) -> Outcome {
    Outcome {
        status: Status::Skipped,
        actual: actual.into(),
    }
}

/// A quantity as read, before any rule is applied.
enum Observed {
    Value(i128),
    Unreadable(String),
    Defective(String),
}

/// A write's answer about the contract.
enum Attempt {
    Refused(String),
    Landed { ledger: u32 },
}

/// A write the signing guard refused because the simulation asked its signer to authorize more
/// than exactly the call. The token is then hostile to whoever signs for it: nothing more is
/// signed in the run, and the function's authorization check FAILs with this tree.
struct RefusedSignature {
    function: String,
    signer: Role,
    reason: String,
    auth: Vec<SorobanAuthorizationEntry>,
}

/// The authorization check of a write the suite makes (`sep41-transfer-auth` for `transfer`).
fn authorization_check(function: &str) -> Option<&'static str> {
    CHECKS
        .iter()
        .find(|def| def.layer == Layer::Authorization && def.member == function)
        .map(|def| def.id)
}

/// A quantity a write check reads before and after its write.
#[derive(Debug, Clone, Copy)]
enum Quantity {
    /// The holder's balance; before the write it must hold at least one unit.
    FundedHolder,
    /// A party's balance.
    Balance(Who),
    /// The spender's allowance over the holder's balance.
    Allowance,
    /// The allowance a delegated write spends; before the write it must allow one unit (a standing
    /// allowance is consumed, a short one topped up by a grant recorded as evidence).
    SpendableAllowance,
}

/// The quantities a write check watches, each under its name in evidence and messages.
type Watched = [(&'static str, Quantity)];

const HOLDER: &Watched = &[("holder", Quantity::FundedHolder)];
const HOLDER_AND_RECIPIENT: &Watched = &[
    ("holder", Quantity::FundedHolder),
    ("recipient", Quantity::Balance(Who::Spender)),
];
const ALLOWANCE: &Watched = &[("allowance", Quantity::Allowance)];
const HOLDER_AND_SPENDABLE: &Watched = &[
    ("holder", Quantity::FundedHolder),
    ("allowance", Quantity::SpendableAllowance),
];

/// What the watched quantities read before a write and, once [`Run::after`] has run, after it.
struct Watch {
    watched: &'static Watched,
    before: Vec<i128>,
    after: Vec<i128>,
}

impl Watch {
    fn index(&self, name: &str) -> usize {
        let at = self.watched.iter().position(|(n, _)| *n == name);
        at.expect("a watched quantity")
    }

    fn before(&self, name: &str) -> i128 {
        self.before[self.index(name)]
    }

    fn after(&self, name: &str) -> i128 {
        self.after[self.index(name)]
    }

    /// Each quantity's change, `None` where the token's answers are so far apart that the
    /// difference does not fit an i128 (a hostile or broken token; never a panic).
    fn changes(&self) -> impl Iterator<Item = Option<i128>> + '_ {
        self.after
            .iter()
            .zip(&self.before)
            .map(|(a, b)| a.checked_sub(*b))
    }

    /// True when each quantity changed by exactly the expected amount, in watch order.
    fn moved_by(&self, expected: &[i128]) -> bool {
        self.changes().eq(expected.iter().map(|&e| Some(e)))
    }

    /// The changes as the checks report them: `holder -1, recipient +1`.
    fn describe(&self) -> String {
        let parts: Vec<String> = (self.watched.iter().zip(self.changes()))
            .map(|((name, _), d)| format!("{name} {}", delta_or_overflow(d)))
            .collect();
        parts.join(", ")
    }
}

/// Evidence for a set of readings: `{"holder": "5", …}`.
fn readings(watched: &Watched, values: &[i128]) -> serde_json::Value {
    serde_json::Value::Object(
        watched
            .iter()
            .zip(values)
            .map(|((name, _), v)| (name.to_string(), json!(v.to_string())))
            .collect(),
    )
}

fn pass_if(held: bool, actual: String) -> Outcome {
    if held {
        pass(actual)
    } else {
        fail(actual)
    }
}

/// Runs the checks in order.
pub fn run_suite(chain: &mut dyn TokenChain, config: &SuiteConfig) -> Vec<CheckResult> {
    let mut run = Run {
        chain,
        config,
        unsound: BTreeMap::new(),
        evidence: Evidence::default(),
        lent_allowance: None,
        refused_signature: None,
    };
    let mut results: Vec<CheckResult> = CHECKS.iter().map(|def| run.run_check(def)).collect();
    if let Some(id) = run.lent_allowance {
        let note = run.revoke_lent_allowance();
        if let Some(row) = results.iter_mut().find(|r| r.id == id) {
            let granted = row.evidence.granted.take().unwrap_or_default();
            row.evidence.granted = Some(format!("{granted}; {note}"));
        }
    }
    results
}

struct Run<'a> {
    chain: &'a mut dyn TokenChain,
    config: &'a SuiteConfig,
    /// Accounts that read negative, with the value: accounting is unsound from then on.
    unsound: BTreeMap<String, i128>,
    evidence: Evidence,
    /// The check that granted an allowance only so a simulation could spend it; the suite revokes
    /// it at the end, so the next run still finds no allowance between the parties.
    lent_allowance: Option<&'static str>,
    /// The write the signing guard refused, once one was: nothing is signed after it.
    refused_signature: Option<RefusedSignature>,
}

impl Run<'_> {
    fn run_check(&mut self, def: &CheckDef) -> CheckResult {
        let started = Instant::now();
        self.evidence = Evidence::default();
        let outcome = match &self.config.declared {
            Some(declared) if !def.member.is_empty() && !declared.contains(def.member) => Outcome {
                status: Status::NotImplemented,
                actual: format!(
                    "the contract spec declares no `{}` with SEP-41's parameters",
                    def.member
                ),
            },
            _ => {
                let granted_before = self.lent_allowance.is_some();
                let refused = (self.refused_signature.as_ref())
                    .is_some_and(|r| def.layer == Layer::Authorization && r.function == def.member);
                let step = match def.id {
                    "sep41-decimals" => self.decimals(),
                    "sep41-balance" => self.balance(),
                    "sep41-allowance" => self.allowance(),
                    "sep41-name" => self.string_getter("name"),
                    "sep41-symbol" => self.string_getter("symbol"),
                    "sep41-transfer_from-unauthorized" => self.transfer_from_unauthorized(),
                    "sep41-transfer-zero-amount" => self.transfer_zero(),
                    "sep41-transfer-self" => self.transfer_self(),
                    "sep41-transfer-negative-amount" => self.transfer_negative(),
                    "sep41-transfer-over-balance" => self.transfer_over_balance(),
                    "sep41-transfer" => self.transfer(),
                    "sep41-approve" => self.approve(),
                    "sep41-transfer_from" => self.transfer_from(),
                    "sep41-burn" => self.burn(),
                    "sep41-burn_from" => self.burn_from(),
                    "sep41-transfer_from-expired" => self.transfer_from_expired(),
                    "sep41-transfer-auth" => self.transfer_auth(),
                    "sep41-transfer_from-auth" => self.transfer_from_auth(),
                    "sep41-approve-auth" => self.approve_auth(),
                    "sep41-burn-auth" => self.burn_auth(),
                    "sep41-burn_from-auth" => self.burn_from_auth(),
                    "sep41-events-transfer" => self.transfer_event(),
                    "sep41-events-approve" => self.approve_event(),
                    "sep41-events-burn" => self.burn_event(),
                    "sep41-approve-past-expiry" => self.approve_past_expiry(),
                    "sep41-events-mint" => self.power_event("mint"),
                    "sep41-events-clawback" => self.power_event("clawback"),
                    other => Err(skipped(format!("no implementation for {other}"))),
                };
                if !granted_before
                    && def.layer == Layer::Authorization
                    && self.evidence.granted.is_some()
                {
                    self.lent_allowance = Some(def.id);
                }
                let outcome = step.unwrap_or_else(|o| o);
                if refused {
                    self.refused_authorization(outcome)
                } else {
                    outcome
                }
            }
        };
        CheckResult {
            id: def.id,
            clause: def.clause,
            layer: def.layer,
            requirement: "required",
            status: outcome.status,
            expected: def.expected,
            actual: outcome.actual,
            evidence: std::mem::take(&mut self.evidence),
            duration_ms: started.elapsed().as_millis() as u64,
        }
    }

    // ---- parties and premises -------------------------------------------------------------

    fn party(&self, who: Who) -> &Party {
        match who {
            Who::Holder => &self.config.holder,
            Who::Spender => &self.config.spender,
        }
    }

    fn label(who: Who) -> &'static str {
        match who {
            Who::Holder => "holder",
            Who::Spender => "spender",
        }
    }

    fn addr(&self, who: Who) -> ScVal {
        ScVal::Address(self.party(who).address.clone())
    }

    fn need_key(&self, who: Who) -> Step<()> {
        let party = self.party(who);
        if party.can_sign {
            Ok(())
        } else {
            Err(unverifiable(format!(
                "needs the {}'s signing key: {}",
                Self::label(who),
                party.key_hint
            )))
        }
    }

    fn need_distinct(&self) -> Step<()> {
        if self.config.holder.address == self.config.spender.address {
            Err(unverifiable(format!(
                "holder and spender are the same address; {}",
                self.config.spender.address_hint
            )))
        } else {
            Ok(())
        }
    }

    fn need_real(&self, who: Who) -> Step<()> {
        let party = self.party(who);
        if party.generated {
            Err(unverifiable(format!(
                "the {} is a generated probe address, and a contract that wrongly accepts this \
                 would move units somewhere unrecoverable; {}",
                Self::label(who),
                party.address_hint
            )))
        } else {
            Ok(())
        }
    }

    // ---- reads ------------------------------------------------------------------------------

    fn observe_balance(&mut self, who: Who) -> Observed {
        let address = self.addr(who);
        let label = Self::label(who);
        let observed = match self.chain.read("balance", vec![address]) {
            Ok(ReadOutcome::Value(ScVal::I128(parts))) => Observed::Value(i128_of(&parts)),
            Ok(ReadOutcome::Value(other)) => Observed::Defective(format!(
                "balance({label}) returned {}, not an i128",
                kind(&other)
            )),
            Ok(ReadOutcome::Trapped(text)) if text.contains(TRUSTLINE_TRAP) => {
                Observed::Unreadable(format!(
                    "balance({label}) trapped with the SAC's missing-trustline error: the {label} \
                     holds no trustline to this asset"
                ))
            }
            Ok(ReadOutcome::Trapped(text)) => {
                Observed::Defective(format!("balance({label}) trapped: {}", first_line(&text)))
            }
            Ok(ReadOutcome::Archived) => {
                Observed::Unreadable(format!("balance({label}) needs archived state restored"))
            }
            Err(fault) => Observed::Unreadable(format!("balance({label}) got no answer: {fault}")),
        };
        if let Observed::Value(v) = observed {
            if v < 0 {
                self.unsound.entry(self.strkey(who)).or_insert(v);
            }
        }
        observed
    }

    fn strkey(&self, who: Who) -> String {
        strkey_of(&self.party(who).address)
    }

    /// A balance some rule depends on: unsound → UNVERIFIABLE, negative → FAIL, sentinel →
    /// UNVERIFIABLE, unreadable → UNVERIFIABLE, defective → FAIL.
    fn require_balance(&mut self, who: Who) -> Step<i128> {
        let label = Self::label(who);
        if let Some(v) = self.unsound.get(&self.strkey(who)) {
            return Err(unverifiable(format!(
                "accounting unsound: the {label}'s balance read {v} earlier in this run"
            )));
        }
        match self.observe_balance(who) {
            Observed::Value(v) if v < 0 => Err(fail(format!(
                "{label} balance read {v}: a balance counts units that exist and cannot be negative"
            ))),
            Observed::Value(ISSUER_SENTINEL) => Err(unverifiable(format!(
                "{label} balance is i64::MAX, the SAC issuer's sentinel: an issuer's balance \
                 cannot show a change; {}",
                self.party(who).address_hint
            ))),
            Observed::Value(v) => Ok(v),
            Observed::Unreadable(why) => Err(unverifiable(why)),
            Observed::Defective(why) => Err(fail(why)),
        }
    }

    /// The holder's balance when a check needs at least one unit to attempt anything.
    fn require_funded_holder(&mut self) -> Step<i128> {
        let balance = self.require_balance(Who::Holder)?;
        if balance < 1 {
            return Err(unverifiable(format!(
                "the holder holds {balance}: a refusal would mean an empty account; {}",
                self.config.funding_hint
            )));
        }
        Ok(balance)
    }

    fn require_allowance(&mut self) -> Step<i128> {
        let args = vec![self.addr(Who::Holder), self.addr(Who::Spender)];
        match self.chain.read("allowance", args) {
            Ok(ReadOutcome::Value(ScVal::I128(parts))) => {
                let v = i128_of(&parts);
                if v < 0 {
                    Err(fail(format!(
                        "allowance read {v}: an allowance cannot be negative"
                    )))
                } else {
                    Ok(v)
                }
            }
            Ok(ReadOutcome::Value(other)) => Err(fail(format!(
                "allowance returned {}, not an i128",
                kind(&other)
            ))),
            Ok(ReadOutcome::Trapped(text)) if text.contains(TRUSTLINE_TRAP) => Err(unverifiable(
                "allowance trapped with the SAC's missing-trustline error",
            )),
            Ok(ReadOutcome::Trapped(text)) => {
                Err(fail(format!("allowance trapped: {}", first_line(&text))))
            }
            Ok(ReadOutcome::Archived) => Err(unverifiable(
                "the allowance entry needs archived state restored",
            )),
            Err(fault) => Err(unverifiable(format!("allowance got no answer: {fault}"))),
        }
    }

    fn latest_ledger(&mut self) -> Step<u32> {
        self.chain
            .latest_ledger()
            .map_err(|fault| skipped(format!("cannot read the latest ledger: {fault}")))
    }

    // ---- writes -----------------------------------------------------------------------------

    fn attempt(&mut self, signer: Role, function: &str, args: Vec<ScVal>) -> Step<Attempt> {
        if let Some(refused) = &self.refused_signature {
            return Err(unverifiable(format!(
                "not attempted: nothing more is signed in this run since the signing guard \
                 refused {}, which asked the {} to authorize more than the call (see {})",
                refused.function,
                signer_label(refused.signer),
                authorization_check(&refused.function).unwrap_or("the authorization checks")
            )));
        }
        match self.chain.write(signer, function, args) {
            Ok(InvokeOutcome::Refused(error)) => {
                self.evidence.error = Some(first_line(&error).to_string());
                Ok(Attempt::Refused(error))
            }
            Ok(InvokeOutcome::Landed { hash, ledger }) => {
                self.evidence.tx_hash = Some(hash);
                self.evidence.ledger = Some(ledger);
                Ok(Attempt::Landed { ledger })
            }
            Ok(InvokeOutcome::Archived(detail)) => {
                self.evidence.error = Some(detail.clone());
                Err(unverifiable(format!(
                    "{function} met archived state: {detail}"
                )))
            }
            Ok(InvokeOutcome::FailedOnChain { hash, code, ledger }) => {
                self.evidence.tx_hash = Some(hash.clone());
                self.evidence.ledger = ledger;
                self.evidence.error = Some(code.clone());
                Err(skipped(format!(
                    "{function} transaction {hash} was included but failed: {code}"
                )))
            }
            Err(WriteFault::Unsigned { reason, auth }) => {
                self.evidence.error = Some(reason.clone());
                let see = authorization_check(function).unwrap_or("the authorization checks");
                self.refused_signature = Some(RefusedSignature {
                    function: function.to_string(),
                    signer,
                    reason,
                    auth,
                });
                Err(unverifiable(format!(
                    "the signing guard refused to sign {function}: it asks the {} to authorize \
                     more than the call; nothing was signed or submitted, and nothing more is \
                     signed in this run (see {see})",
                    signer_label(signer)
                )))
            }
            Err(WriteFault::NoAnswer(fault)) => {
                self.evidence.error = Some(fault.clone());
                Err(skipped(format!(
                    "{function} never produced an answer: {fault}"
                )))
            }
        }
    }

    /// The authorization check of a function whose write the signing guard refused: FAIL either
    /// way. Its own simulation's FAIL stands, with the refusal added; otherwise the FAIL shows the
    /// authorization tree the signer was asked to sign.
    fn refused_authorization(&mut self, simulated: Outcome) -> Outcome {
        let refused = self.refused_signature.as_ref().expect("a refused write");
        let label = signer_label(refused.signer);
        if simulated.status == Status::Fail {
            return fail(format!(
                "{}; and the signing guard refused to sign {} for the {label} earlier in this run, \
                 so nothing was signed or submitted",
                simulated.actual, refused.function
            ));
        }
        let names = self.names().with_source(label);
        let observed = names.authorizations(&refused.auth);
        let actual = format!(
            "the signing guard refused to sign {} for the {label}, so nothing was signed or \
             submitted: {}; asked for: {}",
            refused.function,
            refused.reason,
            authorization::shown(&observed)
        );
        self.evidence.error = Some(refused.reason.clone());
        self.evidence.observed = observed;
        fail(actual)
    }

    /// A refusal the asset explains (no trustline) withholds a verdict.
    fn trustline_refusal(error: &str) -> Step<()> {
        if error.contains(TRUSTLINE_TRAP) {
            Err(unverifiable(
                "refused with the SAC's missing-trustline error: a party holds no trustline",
            ))
        } else {
            Ok(())
        }
    }

    /// Premise of a SEP-41 write the token refused: parties the token accepts. A permissioned token
    /// (allowlist, blocklist, identity verification) refuses parties it has not admitted, whatever
    /// the call, and the suite's parties are fresh accounts. The refusal withholds a verdict when
    /// `control` (the same call with the spender swapped for the holder, whom the token has
    /// credited) runs, or when the holder itself was never credited; otherwise the caller judges
    /// it. A missing trustline is the SAC's form of the same premise.
    fn party_refusal(&mut self, error: &str, control: Option<(&str, Vec<ScVal>)>) -> Step<()> {
        Self::trustline_refusal(error)?;
        if let Some((function, args)) = control {
            let simulated = self.chain.simulate(function, args, Authorization::Record);
            if let Ok(Simulation::Ran { .. }) = simulated {
                return Err(unverifiable(format!(
                    "refused with the suite's spender as a party ({}), yet the same {function} \
                     runs with the holder in its place: the token does not accept the spender (a \
                     permissioned token's allowlist, blocklist or identity check), a premise the \
                     run lacks; {}",
                    first_line(error),
                    self.config.spender.address_hint
                )));
            }
        }
        if matches!(self.observe_balance(Who::Holder), Observed::Value(0)) {
            return Err(unverifiable(format!(
                "refused ({}) for a holder the token never credited: a permissioned token refuses \
                 accounts it has not allowed or verified, so the refusal shows nothing; {}",
                first_line(error),
                self.config.funding_hint
            )));
        }
        Ok(())
    }

    /// Premise of a check that expects a refusal: the token accepts the valid counterpart, a
    /// 1-unit transfer from the holder to the spender. A token that refuses that too refuses these
    /// parties, so its refusal of `refused_call` shows nothing about `refused_call`.
    fn counterpart_runs(&mut self, refused_call: &str) -> Step<()> {
        let args = self.transfer_args(1);
        match self.chain.simulate("transfer", args, Authorization::Record) {
            Ok(Simulation::Refused(error)) if !error.contains(TRUSTLINE_TRAP) => {
                Err(unverifiable(format!(
                    "the token also refuses a valid 1-unit transfer from the holder to the spender \
                     ({}), so refusing {refused_call} shows nothing: it does not accept these \
                     parties (a permissioned token's allowlist, blocklist or identity check); {}",
                    first_line(&error),
                    self.config.spender.address_hint
                )))
            }
            _ => Ok(()),
        }
    }

    /// Premises of the delegated writes: both keys, and a real spender distinct from the holder.
    fn need_delegation(&self) -> Step<()> {
        self.need_key(Who::Holder)?;
        self.need_key(Who::Spender)?;
        self.need_distinct()?;
        self.need_real(Who::Spender)
    }

    /// `transfer(holder, spender, amount)`.
    fn transfer_args(&self, amount: i128) -> Vec<ScVal> {
        vec![
            self.addr(Who::Holder),
            self.addr(Who::Spender),
            i128_val(amount),
        ]
    }

    /// `transfer_from(spender, holder, spender, amount)`: the spender takes units for itself.
    fn spend_to_spender_args(&self, amount: i128) -> Vec<ScVal> {
        vec![
            self.addr(Who::Spender),
            self.addr(Who::Holder),
            self.addr(Who::Spender),
            i128_val(amount),
        ]
    }

    fn approve_args(&self, amount: i128, live_until: u32) -> Vec<ScVal> {
        vec![
            self.addr(Who::Holder),
            self.addr(Who::Spender),
            i128_val(amount),
            ScVal::U32(live_until),
        ]
    }

    /// `approve(holder, holder, amount, live_until)`: the control of a refused approval.
    fn approve_to_holder_args(&self, amount: i128, live_until: u32) -> Vec<ScVal> {
        vec![
            self.addr(Who::Holder),
            self.addr(Who::Holder),
            i128_val(amount),
            ScVal::U32(live_until),
        ]
    }

    /// Makes sure the spender may take one unit: consumes a standing allowance, never
    /// overwrites it; grants one (recorded as evidence) when it is short.
    fn ensure_allowance(&mut self) -> Step<i128> {
        let standing = self.require_allowance()?;
        if standing >= 1 {
            return Ok(standing);
        }
        self.need_key(Who::Holder)?;
        let live_until = self
            .latest_ledger()?
            .saturating_add(self.config.approve_ledgers);
        match self.attempt(Role::Holder, "approve", self.approve_args(1, live_until))? {
            Attempt::Refused(error) => {
                return Err(unverifiable(format!(
                    "could not grant the allowance this check spends: approve refused: {}",
                    first_line(&error)
                )))
            }
            Attempt::Landed { .. } => {
                self.evidence.granted = Some(format!(
                    "approved 1 until ledger {live_until} in tx {}",
                    self.evidence.tx_hash.take().unwrap_or_default()
                ));
                self.evidence.ledger = None;
            }
        }
        let granted = self.require_allowance()?;
        if granted < 1 {
            return Err(unverifiable(format!(
                "approve(1) landed but the allowance reads {granted}; see sep41-approve"
            )));
        }
        Ok(granted)
    }

    /// Reads the watched quantities before a write, under each one's premise, and records them.
    fn before(&mut self, watched: &'static Watched) -> Step<Watch> {
        let mut before = Vec::with_capacity(watched.len());
        for (_, quantity) in watched {
            before.push(match *quantity {
                Quantity::FundedHolder => self.require_funded_holder()?,
                Quantity::Balance(who) => self.require_balance(who)?,
                Quantity::Allowance => self.require_allowance()?,
                Quantity::SpendableAllowance => self.ensure_allowance()?,
            });
        }
        self.evidence.before = Some(readings(watched, &before));
        Ok(Watch {
            watched,
            before,
            after: Vec::new(),
        })
    }

    /// Reads the same quantities after the write and records them.
    fn after(&mut self, watch: &mut Watch) -> Step<()> {
        let mut after = Vec::with_capacity(watch.watched.len());
        for (_, quantity) in watch.watched {
            after.push(match *quantity {
                Quantity::FundedHolder => self.require_balance(Who::Holder)?,
                Quantity::Balance(who) => self.require_balance(who)?,
                Quantity::Allowance | Quantity::SpendableAllowance => self.require_allowance()?,
            });
        }
        self.evidence.after = Some(readings(watch.watched, &after));
        watch.after = after;
        Ok(())
    }

    // ---- the checks -------------------------------------------------------------------------

    fn decimals(&mut self) -> Step<Outcome> {
        match self.chain.read("decimals", vec![]) {
            Ok(ReadOutcome::Value(ScVal::U32(n))) if n > 38 => Ok(pass(format!(
                "returned {n} (unusual: an i128 holds at most 38 decimal digits)"
            ))),
            Ok(ReadOutcome::Value(ScVal::U32(n))) => Ok(pass(format!("returned {n}"))),
            Ok(ReadOutcome::Value(other)) => {
                Ok(fail(format!("returned {}, not a u32", kind(&other))))
            }
            Ok(ReadOutcome::Trapped(text)) => Ok(fail(format!("trapped: {}", first_line(&text)))),
            Ok(ReadOutcome::Archived) => Ok(unverifiable("needs archived state restored")),
            Err(fault) => Ok(skipped(format!("no answer: {fault}"))),
        }
    }

    fn balance(&mut self) -> Step<Outcome> {
        let value = self.require_balance(Who::Holder)?;
        self.evidence.after = Some(json!({ "holder": value.to_string() }));
        if value == 0 && self.config.holder.generated {
            return Ok(unverifiable(format!(
                "returned 0 for a generated probe address, which distinguishes nothing; {}",
                self.config.holder.address_hint
            )));
        }
        Ok(pass(format!("returned {value}")))
    }

    fn allowance(&mut self) -> Step<Outcome> {
        let value = self.require_allowance()?;
        self.evidence.after = Some(json!({ "allowance": value.to_string() }));
        if value == 0 && (self.config.holder.generated || self.config.spender.generated) {
            return Ok(unverifiable(format!(
                "returned 0 for a generated probe pair, which distinguishes nothing; {}",
                self.config.spender.address_hint
            )));
        }
        Ok(pass(format!("returned {value}")))
    }

    fn string_getter(&mut self, function: &str) -> Step<Outcome> {
        match self.chain.read(function, vec![]) {
            Ok(ReadOutcome::Value(ScVal::String(s))) => {
                let text = String::from_utf8_lossy(s.as_slice()).into_owned();
                if text.is_empty() {
                    Ok(pass("returned \"\" (empty: spec-legal, but unusual)"))
                } else {
                    Ok(pass(format!("returned {text:?}")))
                }
            }
            Ok(ReadOutcome::Value(other)) => {
                Ok(fail(format!("returned {}, not a string", kind(&other))))
            }
            Ok(ReadOutcome::Trapped(text)) => Ok(fail(format!("trapped: {}", first_line(&text)))),
            Ok(ReadOutcome::Archived) => Ok(unverifiable("needs archived state restored")),
            Err(fault) => Ok(skipped(format!("no answer: {fault}"))),
        }
    }

    fn transfer_from_unauthorized(&mut self) -> Step<Outcome> {
        self.need_key(Who::Spender)?;
        self.need_distinct()?;
        self.need_real(Who::Spender)?;
        let standing = self.require_allowance()?;
        if standing != 0 {
            return Err(unverifiable(format!(
                "the spender already holds an allowance of {standing}, so a refusal cannot be \
                 tested; revoke it (approve 0) or choose another spender"
            )));
        }
        self.before(&[
            ("holder", Quantity::FundedHolder),
            ("spender", Quantity::Balance(Who::Spender)),
        ])?;
        // The premise above read the allowance as 0: recorded beside the balances, not read again.
        if let Some(serde_json::Value::Object(before)) = &mut self.evidence.before {
            before.insert("allowance".into(), json!("0"));
        }
        let args = self.spend_to_spender_args(1);
        match self.attempt(Role::Spender, "transfer_from", args)? {
            Attempt::Refused(error) => {
                Self::trustline_refusal(&error)?;
                self.counterpart_runs("a spend with no allowance")?;
                Ok(pass("refused a 1-unit spend with no allowance"))
            }
            Attempt::Landed { .. } => {
                let after = self.after_pair();
                Ok(fail(format!(
                    "accepted a 1-unit spend with no allowance{after}"
                )))
            }
        }
    }

    fn transfer_zero(&mut self) -> Step<Outcome> {
        self.need_key(Who::Holder)?;
        self.need_distinct()?;
        // Any holder balance will do: a zero transfer needs no funds.
        let mut watch = self.before(&[
            ("holder", Quantity::Balance(Who::Holder)),
            ("recipient", Quantity::Balance(Who::Spender)),
        ])?;
        let args = self.transfer_args(0);
        let verb = match self.attempt(Role::Holder, "transfer", args)? {
            Attempt::Refused(_) => "refused",
            Attempt::Landed { .. } => "accepted",
        };
        self.after(&mut watch)?;
        if watch.moved_by(&[0, 0]) {
            let (h0, r0) = (watch.before("holder"), watch.before("recipient"));
            Ok(pass(format!("{verb}; balances held at {h0} and {r0}")))
        } else {
            Ok(fail(format!(
                "{verb} a zero transfer that moved balances: {}",
                watch.describe()
            )))
        }
    }

    fn transfer_self(&mut self) -> Step<Outcome> {
        self.need_key(Who::Holder)?;
        let mut watch = self.before(HOLDER)?;
        let args = vec![self.addr(Who::Holder), self.addr(Who::Holder), i128_val(1)];
        let verb = match self.attempt(Role::Holder, "transfer", args)? {
            Attempt::Refused(_) => "refused",
            Attempt::Landed { .. } => "accepted",
        };
        self.after(&mut watch)?;
        let (h0, h1) = (watch.before("holder"), watch.after("holder"));
        if watch.moved_by(&[0]) {
            Ok(pass(format!("{verb}; balance held at {h0}")))
        } else {
            Ok(fail(format!(
                "{verb} a 1-unit self-transfer that moved the balance {h0} → {h1} ({})",
                change(h0, h1)
            )))
        }
    }

    /// Premises shared by the negative-amount and over-balance checks.
    fn refusal_premises(&mut self) -> Step<(i128, i128)> {
        self.need_key(Who::Holder)?;
        self.need_distinct()?;
        self.need_real(Who::Spender)?;
        let watch = self.before(HOLDER_AND_RECIPIENT)?;
        Ok((watch.before("holder"), watch.before("recipient")))
    }

    /// After an attempt that should have been refused: the balances as observed, negative
    /// values included (this check already FAILs; later ones will find the account unsound).
    fn observe_after(&mut self) -> (Option<i128>, Option<i128>) {
        let h = match self.observe_balance(Who::Holder) {
            Observed::Value(v) => Some(v),
            _ => None,
        };
        let r = match self.observe_balance(Who::Spender) {
            Observed::Value(v) => Some(v),
            _ => None,
        };
        let show = |v: Option<i128>| v.map_or("unreadable".to_string(), |v| v.to_string());
        self.evidence.after = Some(json!({"holder": show(h), "recipient": show(r)}));
        (h, r)
    }

    fn after_pair(&mut self) -> String {
        let (h, r) = self.observe_after();
        match (h, r) {
            (Some(h), Some(r)) => format!(" (balances now holder {h}, recipient {r})"),
            _ => String::new(),
        }
    }

    fn transfer_negative(&mut self) -> Step<Outcome> {
        let (h0, r0) = self.refusal_premises()?;
        let args = self.transfer_args(-1);
        match self.attempt(Role::Holder, "transfer", args)? {
            Attempt::Refused(error) => {
                Self::trustline_refusal(&error)?;
                self.counterpart_runs("a transfer of -1")?;
                Ok(pass("refused a transfer of -1"))
            }
            Attempt::Landed { .. } => {
                let (h1, r1) = self.observe_after();
                let why = match (h1, r1) {
                    (Some(h1), Some(r1)) if h1 > h0 => format!(
                        ": holder {}, recipient {} — the sign was honoured and the transfer ran backwards",
                        change(h0, h1),
                        change(r0, r1)
                    ),
                    (Some(h1), _) if h1 < h0 => format!(
                        ": holder {} — the sign was discarded",
                        change(h0, h1)
                    ),
                    (Some(_), Some(r1)) if r1 < r0 => format!(
                        ": holder unchanged, recipient {} — a third party was debited",
                        change(r0, r1)
                    ),
                    (Some(_), Some(_)) => "; balances unchanged".into(),
                    _ => "; balances after it unreadable".into(),
                };
                Ok(fail(format!("accepted a transfer of -1{why}")))
            }
        }
    }

    fn transfer_over_balance(&mut self) -> Step<Outcome> {
        let (h0, _) = self.refusal_premises()?;
        let amount = h0.saturating_add(1);
        let args = self.transfer_args(amount);
        match self.attempt(Role::Holder, "transfer", args)? {
            Attempt::Refused(error) => {
                Self::trustline_refusal(&error)?;
                self.counterpart_runs("a transfer over the balance")?;
                Ok(pass(format!("refused {amount} against balance {h0}")))
            }
            Attempt::Landed { .. } => {
                let after = self.after_pair();
                Ok(fail(format!(
                    "accepted {amount} against balance {h0}{after}"
                )))
            }
        }
    }

    fn transfer(&mut self) -> Step<Outcome> {
        self.need_key(Who::Holder)?;
        self.need_distinct()?;
        self.need_real(Who::Spender)?;
        let mut watch = self.before(HOLDER_AND_RECIPIENT)?;
        let args = self.transfer_args(1);
        if let Attempt::Refused(error) = self.attempt(Role::Holder, "transfer", args)? {
            let to_holder = vec![self.addr(Who::Holder), self.addr(Who::Holder), i128_val(1)];
            self.party_refusal(&error, Some(("transfer", to_holder)))?;
            return Ok(fail(format!(
                "refused a 1-unit transfer from a balance of {}",
                watch.before("holder")
            )));
        }
        self.after(&mut watch)?;
        Ok(pass_if(watch.moved_by(&[-1, 1]), watch.describe()))
    }

    fn approve(&mut self) -> Step<Outcome> {
        self.need_key(Who::Holder)?;
        self.need_distinct()?;
        let mut watch = self.before(ALLOWANCE)?;
        let a0 = watch.before("allowance");
        let live_until = self
            .latest_ledger()?
            .saturating_add(self.config.approve_ledgers);
        if let Attempt::Refused(error) =
            self.attempt(Role::Holder, "approve", self.approve_args(1, live_until))?
        {
            let to_holder = self.approve_to_holder_args(1, live_until);
            self.party_refusal(&error, Some(("approve", to_holder)))?;
            return Ok(fail("refused approve(1)"));
        }
        self.after(&mut watch)?;
        let a1 = watch.after("allowance");
        if a1 != 1 {
            return Ok(fail(format!("allowance {a1} after approving 1 over {a0}")));
        }
        if a0 != 0 {
            return Ok(pass(format!("allowance 1 after approving 1 over {a0}")));
        }
        // From zero, overwrite and accumulate agree on the first approval; the second tells them apart.
        if let Attempt::Refused(error) =
            self.attempt(Role::Holder, "approve", self.approve_args(2, live_until))?
        {
            let to_holder = self.approve_to_holder_args(2, live_until);
            self.party_refusal(&error, Some(("approve", to_holder)))?;
            return Ok(fail("refused approve(2) over an allowance of 1"));
        }
        self.after(&mut watch)?;
        let a2 = watch.after("allowance");
        if a2 == 2 {
            Ok(pass("allowance 2 after approving 2 over 1"))
        } else {
            Ok(fail(format!(
                "allowance {a2} after approving 2 over 1 (approve must overwrite)"
            )))
        }
    }

    fn transfer_from(&mut self) -> Step<Outcome> {
        self.need_delegation()?;
        let mut watch = self.before(&[
            ("holder", Quantity::FundedHolder),
            ("recipient", Quantity::Balance(Who::Spender)),
            ("allowance", Quantity::SpendableAllowance),
        ])?;
        let args = self.spend_to_spender_args(1);
        if let Attempt::Refused(error) = self.attempt(Role::Spender, "transfer_from", args)? {
            let to_holder = vec![
                self.addr(Who::Spender),
                self.addr(Who::Holder),
                self.addr(Who::Holder),
                i128_val(1),
            ];
            self.party_refusal(&error, Some(("transfer_from", to_holder)))?;
            return Ok(fail(format!(
                "refused a 1-unit spend within an allowance of {}",
                watch.before("allowance")
            )));
        }
        self.after(&mut watch)?;
        Ok(pass_if(watch.moved_by(&[-1, 1, -1]), watch.describe()))
    }

    fn burn(&mut self) -> Step<Outcome> {
        self.need_key(Who::Holder)?;
        let mut watch = self.before(HOLDER)?;
        let args = vec![self.addr(Who::Holder), i128_val(1)];
        if let Attempt::Refused(error) = self.attempt(Role::Holder, "burn", args)? {
            self.party_refusal(&error, None)?;
            return Ok(fail(format!(
                "refused to burn 1 of a balance of {}",
                watch.before("holder")
            )));
        }
        self.after(&mut watch)?;
        Ok(pass_if(watch.moved_by(&[-1]), watch.describe()))
    }

    fn burn_from(&mut self) -> Step<Outcome> {
        self.need_delegation()?;
        let mut watch = self.before(&[
            ("holder", Quantity::FundedHolder),
            ("spender", Quantity::Balance(Who::Spender)),
            ("allowance", Quantity::SpendableAllowance),
        ])?;
        let args = vec![self.addr(Who::Spender), self.addr(Who::Holder), i128_val(1)];
        if let Attempt::Refused(error) = self.attempt(Role::Spender, "burn_from", args)? {
            self.party_refusal(&error, None)?;
            return Ok(fail(format!(
                "refused to burn 1 within an allowance of {}",
                watch.before("allowance")
            )));
        }
        self.after(&mut watch)?;
        Ok(pass_if(watch.moved_by(&[-1, 0, -1]), watch.describe()))
    }

    fn transfer_from_expired(&mut self) -> Step<Outcome> {
        self.need_delegation()?;
        self.before(HOLDER_AND_RECIPIENT)?;
        // The short grant is deliberately not treated as a standing allowance: it is built to lapse.
        let expires_at = self
            .latest_ledger()?
            .saturating_add(self.config.expiry_ledgers);
        match self.attempt(Role::Holder, "approve", self.approve_args(1, expires_at))? {
            Attempt::Refused(error) => {
                Self::trustline_refusal(&error)?;
                return Err(unverifiable(format!(
                    "could not set up the short-lived grant: approve refused: {}",
                    first_line(&error)
                )));
            }
            Attempt::Landed { .. } => {
                self.evidence.granted = Some(format!(
                    "approved 1 until ledger {expires_at} in tx {}",
                    self.evidence.tx_hash.take().unwrap_or_default()
                ));
                self.evidence.ledger = None;
            }
        }
        let mut waited = Duration::ZERO;
        let now = loop {
            let now = self.latest_ledger()?;
            if now > expires_at {
                break now;
            }
            if waited >= self.config.expiry_wait {
                return Err(unverifiable(format!(
                    "the network did not pass ledger {expires_at} within {} s (latest {now}), so \
                     the grant never expired",
                    self.config.expiry_wait.as_secs()
                )));
            }
            self.chain.pause(self.config.expiry_poll);
            waited += self.config.expiry_poll;
        };
        let args = self.spend_to_spender_args(1);
        match self.attempt(Role::Spender, "transfer_from", args)? {
            Attempt::Refused(error) => {
                Self::trustline_refusal(&error)?;
                self.counterpart_runs("a spend on an expired grant")?;
                Ok(pass(format!(
                    "expired at ledger {expires_at}, refused at ledger {now}"
                )))
            }
            Attempt::Landed { ledger } => {
                let after = self.after_pair();
                Ok(fail(format!(
                    "accepted a spend at ledger {ledger} on a grant that expired at ledger {expires_at}{after}"
                )))
            }
        }
    }
}

impl Run<'_> {
    /// Sets the allowance an authorization check granted back to zero; says how it went.
    fn revoke_lent_allowance(&mut self) -> String {
        self.evidence = Evidence::default();
        let revoked = self
            .latest_ledger()
            .and_then(|latest| self.attempt(Role::Holder, "approve", self.approve_args(0, latest)));
        match revoked {
            Ok(Attempt::Landed { .. }) => format!(
                "revoked (approve 0) after the run in tx {}",
                self.evidence.tx_hash.take().unwrap_or_default()
            ),
            Ok(Attempt::Refused(error)) => format!(
                "revoking it after the run was refused ({}): the spender keeps an allowance of 1; \
                 revoke it with approve 0",
                first_line(&error)
            ),
            Err(outcome) => format!(
                "revoking it after the run failed ({}): the spender keeps an allowance of 1; revoke \
                 it with approve 0",
                outcome.actual
            ),
        }
    }

    fn approve_past_expiry(&mut self) -> Step<Outcome> {
        self.need_distinct()?;
        let latest = self.latest_ledger()?;
        let Some(past) = latest.checked_sub(1) else {
            return Err(unverifiable(
                "the network is at ledger 0: no ledger lies in the past",
            ));
        };
        match self
            .chain
            .simulate("approve", self.approve_args(1, past), Authorization::Record)
        {
            Ok(Simulation::Refused(error)) => {
                self.evidence.error = Some(first_line(&error).to_string());
                Self::trustline_refusal(&error)?;
                Ok(pass(format!(
                    "refused approve(1) until ledger {past} after ledger {latest} had closed"
                )))
            }
            Ok(Simulation::Ran { .. }) => Ok(fail(format!(
                "accepted approve(1) until ledger {past} after ledger {latest} had closed: a \
                 grant already expired when given"
            ))),
            Ok(Simulation::Archived) => Err(unverifiable("approve met archived state")),
            Err(fault) => Err(skipped(format!(
                "simulating approve got no answer: {fault}"
            ))),
        }
    }
}

fn signer_label(signer: Role) -> &'static str {
    match signer {
        Role::Holder => "holder",
        Role::Spender => "spender",
    }
}

fn kind(v: &ScVal) -> String {
    format!("a {:?}", v.discriminant()).to_lowercase()
}

/// The change from `before` to `after` as [`delta`] shows it; checked, since both are a contract's
/// answers and their difference may not fit an i128.
fn change(before: i128, after: i128) -> String {
    delta_or_overflow(after.checked_sub(before))
}

fn delta_or_overflow(d: Option<i128>) -> String {
    d.map_or_else(|| "by more than an i128 holds".into(), delta)
}

fn delta(d: i128) -> String {
    if d == 0 {
        "0".into()
    } else {
        format!("{d:+}")
    }
}

/// The first meaningful line of a host error (the `HostError: Error(…)` line when present).
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("HostError"))
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or(text)
}
