//! `capability`: what the issuer can do to a holder's balance. Sets base severity from the issuer account
//! alone: its flags, and whether its signers can still change them (the latent freeze).

use super::Reconciled;
use crate::control::{who_can_act, WhoCanAct};
use crate::evidence::{
    claims, Evidence, SOURCE_HORIZON, SOURCE_HORIZON_ACCOUNT, SOURCE_ISSUER_SIGNERS,
};
use crate::finding::{Check, Finding};
use crate::model::{Mechanics, Rating, Severity};
use crate::subject::{ControlOutcome, FlagsOutcome, IssuerFlags, Observed, Subject};

/// The capability check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Capability;

/// The highest single power, not a sum: CAP-0035 makes revocable a precondition of clawback.
pub fn severity_of(f: &IssuerFlags) -> Severity {
    if f.auth_clawback_enabled {
        Severity::High
    } else if f.auth_revocable {
        Severity::Medium
    } else if f.auth_required {
        Severity::Low
    } else {
        Severity::Clear
    }
}

fn describe_powers(f: &IssuerFlags) -> String {
    let mut powers = Vec::new();
    if f.auth_clawback_enabled {
        powers.push("take and burn a holder's balance without the holder's signature (auth_clawback_enabled)");
    }
    if f.auth_revocable {
        powers.push("freeze a holder's balance in place (auth_revocable)");
    }
    if f.auth_required {
        powers.push(
            "decide who may open a trustline, without touching existing holders (auth_required)",
        );
    }
    if powers.is_empty() {
        "The issuer holds no power over holders' balances: none of auth_required, auth_revocable or \
         auth_clawback_enabled is set."
            .to_string()
    } else {
        format!("The issuer can {}.", powers.join("; it can also "))
    }
}

const PROSPECTIVE: &str = " A freeze reaches every trustline, held or opened later; clawback reaches only \
trustlines opened while auth_clawback_enabled is set. This says nothing about whether the issuer will use a power, \
or who the issuer is.";

/// Whether an issuer that does not hold `auth_revocable` can still freeze: its flags are not locked (on
/// both copies) and its signers can still sign a flag change. stellar-core checks `AUTH_REVOCABLE` when a
/// freeze runs, so such an issuer sets it, clears a holder's authorization and clears it again in one
/// transaction, its flags reading the same before and after.
pub fn latent_freeze(powers: &IssuerFlags, locked: bool, who: WhoCanAct) -> bool {
    !powers.auth_revocable && !locked && who.can_set_flags()
}

fn signers_line(s: &Subject, who: WhoCanAct) -> Option<Evidence> {
    match &s.issuer_control {
        ControlOutcome::Read(o) => Some(Evidence::answer(
            SOURCE_ISSUER_SIGNERS,
            &o.url,
            claims::issuer_signers(&o.value, who),
            o.retrieved_at,
        )),
        ControlOutcome::Missing { url, retrieved_at } => Some(Evidence::answer(
            SOURCE_ISSUER_SIGNERS,
            url,
            claims::issuer_signers_missing(),
            *retrieved_at,
        )),
        ControlOutcome::NotRead => None,
    }
}

fn describe_control(who: WhoCanAct) -> String {
    match who {
        WhoCanAct::Locked => format!(
            " Who can use the issuer's powers: {who}; the account can never sign again, so its powers are \
             dormant for good (the flags still count: nothing lowers severity)."
        ),
        _ => format!(" Who can use the issuer's powers: {who}."),
    }
}

/// Where the flags were read when the issuer account came from the ledger through stellar-rpc (reasoning
/// only: the evidence binds the facts, cited at their Horizon addresses, not the endpoint).
fn describe_ledger_read(s: &Subject) -> String {
    let Some(read) = &s.ledger_read else {
        return String::new();
    };
    let rpc = crate::redact::url(&read.rpc_url);
    match &read.horizon_copy_unread {
        None => format!(
            " The issuer account was read from the ledger through stellar-rpc ({rpc}) at ledger {}, and \
             Horizon's asset record beside it as the second copy of the flags.",
            read.ledger
        ),
        Some(why) => format!(
            " The issuer account was read from the ledger through stellar-rpc ({rpc}) at ledger {}; Horizon's \
             asset record was not read ({why}), and a copy not read is not an observation, so the ledger entry \
             stands for both copies of the flags.",
            read.ledger
        ),
    }
}

/// The issuer account record's copy of the flags: cited when it disagrees, and a floor when unread.
fn second_copy(
    f: &mut Finding,
    reasoning: &mut String,
    s: &Subject,
    r: &Reconciled,
    assets: &Observed<IssuerFlags>,
) {
    match (&s.account_flags, r.account) {
        (_, Some(account)) if r.disagree() => {
            f.evidence.push(Evidence::answer(
                SOURCE_HORIZON_ACCOUNT,
                &account.url,
                claims::issuer_account_flags(&account.value),
                account.retrieved_at,
            ));
            reasoning.push_str(&format!(
                " The two copies of the issuer flags disagree: the asset record ({}) and the issuer account \
                 record ({}) report different flags. A single scan cannot tell which copy is stale, so a power \
                 is counted if either copy holds it, and the flag set is called locked only if both agree; \
                 re-fetch both URLs to settle it.",
                assets.url, account.url
            ));
        }
        (_, Some(_)) => {}
        (FlagsOutcome::Failed(a), None) => {
            f.evidence
                .push(Evidence::failed_attempt(SOURCE_HORIZON_ACCOUNT, a));
            f.undetermined = true;
            f.undetermined_by_source
                .insert(SOURCE_HORIZON.to_string(), 1);
            f.undetermined_rate = Some("1/2".to_string());
            reasoning.push_str(&format!(
                " The second copy of the flags, on the issuer account record, could not be read ({}), so \
                 this level is a floor: that copy might hold a power the asset record does not show.",
                a.failure.describe()
            ));
        }
        (_, None) => {
            f.undetermined = true;
            f.undetermined_by_source
                .insert(SOURCE_HORIZON.to_string(), 1);
            f.undetermined_rate = Some("1/2".to_string());
            reasoning.push_str(
                " The second copy of the flags, on the issuer account record, was never read, so this level \
                 is a floor.",
            );
        }
    }
}

/// The finding when no copy of the flags was read: no severity, not even clear.
fn flags_unread(mut f: Finding, s: &Subject) -> Finding {
    f.severity = Rating::Unevaluated;
    f.undetermined = true;
    f.undetermined_by_source
        .insert(SOURCE_HORIZON.to_string(), 1);
    f.undetermined_rate = Some("1/1".to_string());
    f.evidence
        .extend(failure_line(SOURCE_HORIZON, &s.asset_flags));
    f.evidence
        .extend(failure_line(SOURCE_HORIZON_ACCOUNT, &s.account_flags));
    f.reasoning = match &s.asset_flags {
        FlagsOutcome::Failed(a) => format!(
            "The issuer flags were never read: the Horizon asset record could not be retrieved ({}). \
             There is no severity, not even clear, until the flags are read.",
            a.failure.describe()
        ),
        _ => "The issuer flags were never read, so there is no severity, not even clear.".to_string(),
    };
    f
}

fn failure_line(source: &str, outcome: &FlagsOutcome) -> Option<Evidence> {
    match outcome {
        FlagsOutcome::Failed(a) => Some(Evidence::failed_attempt(source, a)),
        _ => None,
    }
}

impl Check for Capability {
    fn id(&self) -> &'static str {
        "capability"
    }

    fn title(&self) -> &'static str {
        "Issuer capability"
    }

    fn run(&self, s: &Subject) -> Finding {
        let mut f = Finding::new(self);
        let r = Reconciled::of(s);
        let Some(assets) = r.assets else {
            return flags_unread(f, s);
        };
        let powers = r.powers().unwrap_or(assets.value);
        let who = who_can_act(s);
        let latent = latent_freeze(&powers, r.locked(), who);
        let level = if latent {
            severity_of(&powers).max(Severity::Medium)
        } else {
            severity_of(&powers)
        };
        f.severity = Rating::Level(level);
        if latent {
            f.mechanics.set(Mechanics::AUTH_REVOCABLE);
        }
        for (held, bit) in [
            (powers.auth_required, Mechanics::AUTH_REQUIRED),
            (powers.auth_revocable, Mechanics::AUTH_REVOCABLE),
            (
                powers.auth_clawback_enabled,
                Mechanics::AUTH_CLAWBACK_ENABLED,
            ),
        ] {
            if held {
                f.mechanics.set(bit);
            }
        }
        f.evidence.push(Evidence::answer(
            SOURCE_HORIZON,
            &assets.url,
            claims::issuer_flags(&assets.value),
            assets.retrieved_at,
        ));
        f.evidence.extend(signers_line(s, who));
        let mut reasoning = if latent && powers == IssuerFlags::default() {
            "None of auth_required, auth_revocable or auth_clawback_enabled is set.".to_string()
        } else {
            describe_powers(&powers)
        };
        if latent {
            let signs = if who == WhoCanAct::Unknown {
                "it is taken to be able to sign (its signers were not read)"
            } else {
                "it can still sign"
            };
            reasoning.push_str(&format!(
                " The issuer can freeze any holder at any time: its flags are not locked (auth_immutable is not \
                 set) and {signs}, so in one transaction it can set auth_revocable, clear a holder's \
                 authorization and clear auth_revocable again, its flags reading the same before and after \
                 (Stellar checks auth_revocable when a freeze runs, not when the trustline was made)."
            ));
        }
        reasoning.push_str(&describe_control(who));
        reasoning.push_str(&describe_ledger_read(s));
        reasoning.push_str(&format!(
            " Severity {level} is the strongest single power held."
        ));
        second_copy(&mut f, &mut reasoning, s, &r, assets);
        reasoning.push_str(PROSPECTIVE);
        f.reasoning = reasoning;
        f
    }
}
