//! The authorization layer: whose authorization each write asks for, as the host records it in a
//! simulation from a source account that is neither party. Nothing is signed or submitted.
//!
//! The rule: exactly one authorization, the party's the clause names, for exactly the call made
//! (this token, this function, these arguments), with nothing nested under it. A nested call is
//! something the party's signature would also approve without having asked for it — a native XLM
//! transfer to a third party inside `transfer`, for example.
use stellar_xdr::{
    ContractEvent, ScAddress, ScVal, SorobanAuthorizationEntry, SorobanAuthorizedFunction,
    SorobanCredentials,
};

use super::{
    fail, first_line, pass, skipped, unverifiable, Outcome, Run, Step, Who, HOLDER,
    HOLDER_AND_SPENDABLE,
};
use crate::{
    chain::{Authorization, Simulation},
    describe::Names,
};

impl Run<'_> {
    /// `function` run by the host with its authorizations recorded, never submitted. A refusal or
    /// archived state means the call to observe never happened: a missing premise.
    pub(super) fn simulated(
        &mut self,
        function: &str,
        args: Vec<ScVal>,
    ) -> Step<(Vec<SorobanAuthorizationEntry>, Vec<ContractEvent>)> {
        match self.chain.simulate(function, args, Authorization::Record) {
            Ok(Simulation::Ran { auth, events }) => Ok((auth, events)),
            Ok(Simulation::Refused(error)) => {
                self.evidence.error = Some(first_line(&error).to_string());
                Self::trustline_refusal(&error)?;
                Err(unverifiable(format!(
                    "{function} was refused, so there is no call to observe: {}; see sep41-{function}",
                    first_line(&error)
                )))
            }
            Ok(Simulation::Archived) => Err(unverifiable(format!(
                "{function} needs archived state restored first"
            ))),
            Err(fault) => Err(skipped(format!(
                "simulating {function} got no answer: {fault}"
            ))),
        }
    }

    /// The run's parties and the token, for readable trees and events.
    pub(super) fn names(&self) -> Names {
        Names::new(vec![
            (self.config.holder.address.clone(), "holder"),
            (self.config.spender.address.clone(), "spender"),
            (self.chain.token(), "token"),
        ])
    }

    /// Applies the rule to `function(args)` for the party `who`; the tree observed is evidence.
    fn asks_exactly(&mut self, who: Who, function: &str, args: Vec<ScVal>) -> Step<Outcome> {
        let (auth, _) = self.simulated(function, args.clone())?;
        let names = self.names();
        self.evidence.observed = names.authorizations(&auth);
        let call = Call {
            token: self.chain.token(),
            function,
            args: &args,
        };
        let label = Self::label(who);
        match problem(&auth, &call, &self.party(who).address, label, &names) {
            None => Ok(pass(format!(
                "asks the {label}'s authorization for exactly {function}, nothing nested"
            ))),
            Some(problem) => Ok(fail(format!(
                "{problem}; asked for: {}",
                shown(&self.evidence.observed)
            ))),
        }
    }

    pub(super) fn transfer_auth(&mut self) -> Step<Outcome> {
        self.need_distinct()?;
        self.before(HOLDER)?;
        let args = self.transfer_args(1);
        let recorded = self.asks_exactly(Who::Holder, "transfer", args.clone())?;
        match self.chain.simulate("transfer", args, Authorization::None) {
            Ok(Simulation::Refused(_)) if recorded.status == crate::Status::Pass => Ok(pass(
                format!("refused with no authorization; {}", recorded.actual),
            )),
            Ok(Simulation::Refused(_)) => Ok(recorded),
            Ok(Simulation::Ran { .. }) => Ok(fail(format!(
                "accepted a 1-unit transfer out of the holder that nobody authorized; {}",
                recorded.actual
            ))),
            Ok(Simulation::Archived) => Err(unverifiable(
                "transfer without authorization met archived state",
            )),
            Err(fault) => Err(skipped(format!(
                "simulating transfer without authorization got no answer: {fault}"
            ))),
        }
    }

    pub(super) fn transfer_from_auth(&mut self) -> Step<Outcome> {
        self.need_distinct()?;
        self.before(HOLDER_AND_SPENDABLE)?;
        let args = self.spend_to_spender_args(1);
        self.asks_exactly(Who::Spender, "transfer_from", args)
    }

    pub(super) fn approve_auth(&mut self) -> Step<Outcome> {
        self.need_distinct()?;
        let live_until = self
            .latest_ledger()?
            .saturating_add(self.config.approve_ledgers);
        let args = self.approve_args(1, live_until);
        self.asks_exactly(Who::Holder, "approve", args)
    }

    pub(super) fn burn_auth(&mut self) -> Step<Outcome> {
        self.before(HOLDER)?;
        let args = vec![self.addr(Who::Holder), super::i128_val(1)];
        self.asks_exactly(Who::Holder, "burn", args)
    }

    pub(super) fn burn_from_auth(&mut self) -> Step<Outcome> {
        self.need_distinct()?;
        self.before(HOLDER_AND_SPENDABLE)?;
        let args = vec![
            self.addr(Who::Spender),
            self.addr(Who::Holder),
            super::i128_val(1),
        ];
        self.asks_exactly(Who::Spender, "burn_from", args)
    }
}

/// The invocation a check made.
struct Call<'a> {
    token: ScAddress,
    function: &'a str,
    args: &'a [ScVal],
}

/// The address an entry's credentials name; `None` for the transaction's source account.
fn credited(entry: &SorobanAuthorizationEntry) -> Option<&ScAddress> {
    match &entry.credentials {
        SorobanCredentials::SourceAccount => None,
        SorobanCredentials::Address(c) | SorobanCredentials::AddressV2(c) => Some(&c.address),
        SorobanCredentials::AddressWithDelegates(c) => Some(&c.address_credentials.address),
    }
}

/// What is wrong with the recorded authorizations, or `None` when they are exactly `party`'s for
/// exactly `call` with nothing nested.
fn problem(
    auth: &[SorobanAuthorizationEntry],
    call: &Call,
    party: &ScAddress,
    label: &str,
    names: &Names,
) -> Option<String> {
    let function = call.function;
    if auth.is_empty() {
        return Some(format!(
            "asks for no authorization at all: anyone can call {function} in the {label}'s name"
        ));
    }
    let (mine, others): (Vec<_>, Vec<_>) = auth.iter().partition(|e| credited(e) == Some(party));
    if !others.is_empty() {
        let whose: Vec<String> = others.iter().map(|e| names.signer(e)).collect();
        let how = if mine.is_empty() {
            "instead of"
        } else {
            "as well as"
        };
        return Some(format!(
            "asks for the authorization of {} {how} the {label}'s",
            whose.join(", ")
        ));
    }
    if mine.len() > 1 {
        return Some(format!(
            "asks for the {label}'s authorization {} times",
            mine.len()
        ));
    }
    let root = &mine[0].root_invocation;
    let exact = matches!(&root.function, SorobanAuthorizedFunction::ContractFn(invoked)
        if invoked.contract_address == call.token
            && invoked.function_name.0.as_slice() == function.as_bytes()
            && invoked.args.as_slice() == call.args);
    if !exact {
        let args: Vec<String> = call.args.iter().map(|a| names.value(a)).collect();
        return Some(format!(
            "the {label}'s authorization is not for the call made, token.{function}({})",
            args.join(", ")
        ));
    }
    if !root.sub_invocations.is_empty() {
        return Some(format!(
            "the {label}'s authorization also covers {} nested call(s) the {label} never made",
            root.sub_invocations.len()
        ));
    }
    None
}

/// Lines joined for a one-line message.
pub(super) fn shown(lines: &[String]) -> String {
    if lines.is_empty() {
        "nothing".into()
    } else {
        let trimmed: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
        trimmed.join("; ")
    }
}
