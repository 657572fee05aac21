//! The events layer: what one successful call publishes, observed in the host's simulation of it
//! (nothing is submitted). Indexers and wallets decode SEP-41 events by shape, so the shape is the
//! rule: exactly one event of the kind from the token, its topics exactly as SEP-41 lists them (a
//! Stellar Asset Contract appends the asset's name, a string, as one more topic), and its data in
//! either of SEP-41 v0.5.1's forms: the single value or vec, or a map with `Symbol` keys (keys the
//! SEP does not define are ignored; `to_muxed_id` is void or absent when there is no muxed id).
//!
//! The events of a mint and a clawback are judged on the call power discovery exercised
//! ([`ExercisedPower`]): the suite has no such call of its own.
use assay_chain::scval::symbol;
use stellar_xdr::{ContractEvent, ContractEventBody, ScAddress, ScMap, ScVal};

use super::{authorization::shown, fail, i128_val, pass, skipped, Outcome, Run, Step, Who, HOLDER};

/// A mint or a clawback power discovery exercised in the fork, with what the call published.
#[derive(Debug, Clone, PartialEq)]
pub struct ExercisedPower {
    /// The function called.
    pub function: String,
    /// The address the call credited (a mint) or debited (a clawback).
    pub account: ScAddress,
    /// The units credited or debited.
    pub amount: i128,
    /// The contract events the call emitted.
    pub events: Vec<ContractEvent>,
}

/// What an event's data must be.
struct Data {
    /// Shown in a FAIL.
    expected: String,
    accepts: fn(&ScVal, i128, u32) -> bool,
}

impl Run<'_> {
    pub(super) fn transfer_event(&mut self) -> Step<Outcome> {
        self.need_distinct()?;
        self.before(HOLDER)?;
        let (_, events) = self.simulated("transfer", self.transfer_args(1))?;
        let topics = vec![
            symbol("transfer"),
            self.addr(Who::Holder),
            self.addr(Who::Spender),
        ];
        let data = Data {
            expected: "the amount 1 as an i128, or {amount: 1, to_muxed_id: void or absent}".into(),
            accepts: |data, amount, _| amount_to_address(data, amount),
        };
        Ok(self.one_event(&events, topics, &data, 0))
    }

    pub(super) fn approve_event(&mut self) -> Step<Outcome> {
        self.need_distinct()?;
        let live_until = self
            .latest_ledger()?
            .saturating_add(self.config.approve_ledgers);
        let (_, events) = self.simulated("approve", self.approve_args(1, live_until))?;
        let topics = vec![
            symbol("approve"),
            self.addr(Who::Holder),
            self.addr(Who::Spender),
        ];
        let data = Data {
            expected: format!(
                "[1, {live_until}] (amount, live_until_ledger), or {{amount: 1, \
                 live_until_ledger: {live_until}}}"
            ),
            accepts: approval,
        };
        Ok(self.one_event(&events, topics, &data, live_until))
    }

    pub(super) fn burn_event(&mut self) -> Step<Outcome> {
        self.before(HOLDER)?;
        let args = vec![self.addr(Who::Holder), i128_val(1)];
        let (_, events) = self.simulated("burn", args)?;
        let topics = vec![symbol("burn"), self.addr(Who::Holder)];
        let data = Data {
            expected: "the amount 1 as an i128, or {amount: 1}".into(),
            accepts: |data, amount, _| amount_only(data, amount),
        };
        Ok(self.one_event(&events, topics, &data, 0))
    }

    /// `sep41-events-mint` / `sep41-events-clawback`: the exercised call published a `kind`
    /// event from the token naming the account and the amount: topics `[kind, account]` (a
    /// SEP-11 asset string may follow), data the amount or the map form. A clawback that burned
    /// units may be announced by a `burn` event of that form instead (SEP-57's operator burn): an
    /// indexer that follows SEP-41's events debits the holder either way; the row says which.
    pub(super) fn power_event(&mut self, kind: &str) -> Step<Outcome> {
        let config = self.config;
        let (exercised, accepts): (_, fn(&ScVal, i128) -> bool) = match kind {
            "mint" => (config.exercised_mint.as_ref(), amount_to_address),
            _ => (config.exercised_clawback.as_ref(), amount_only),
        };
        let Some(power) = exercised else {
            return Err(skipped(format!("no {kind} power observed")));
        };
        let names = self.names().with(power.account.clone(), "account");
        self.evidence.observed = power.events.iter().map(|e| names.event(e)).collect();
        let token = self.chain.token();
        let account = ScVal::Address(power.account.clone());
        let kinds: &[&str] = if kind == "mint" {
            &["mint"]
        } else {
            &["clawback", "burn"]
        };
        let of_kind: Vec<&ContractEvent> = (power.events.iter())
            .filter(|e| {
                emitted_by(e, &token)
                    && kinds
                        .iter()
                        .any(|k| body(e).topics.first() == Some(&symbol(k)))
            })
            .collect();
        let call = format!(
            "{}() {} {} by {}",
            power.function,
            if kind == "mint" {
                "credited"
            } else {
                "debited"
            },
            names.value(&account),
            power.amount
        );
        let named = of_kind.iter().find(|e| {
            let topics = body(e).topics.as_slice();
            let topics_held = match topics {
                [_, to] => *to == account,
                [_, to, ScVal::String(_)] => *to == account,
                _ => false,
            };
            topics_held && accepts(&body(e).data, power.amount)
        });
        if let Some(event) = named {
            return Ok(pass(format!("{call}; {}", names.event(event))));
        }
        let data = if kind == "mint" {
            format!(
                "{0} as an i128, or {{amount: {0}, to_muxed_id: void or absent}}",
                power.amount
            )
        } else {
            format!("{0} as an i128, or {{amount: {0}}}", power.amount)
        };
        let named_kinds = kinds
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(" or ");
        Ok(fail(format!(
            "{call}, but no {named_kinds} event from the token names it with that amount ({} \
             {named_kinds} events from the token); expected topics [{}, account] (+ an asset \
             string) and data {data}; events: {}",
            of_kind.len(),
            kinds.join(" or "),
            shown(&self.evidence.observed)
        )))
    }

    /// Judges the events of a call that moved 1 unit: exactly one from the token named by
    /// `topics[0]`, with exactly `topics` (plus the asset name on a SAC) and data `data` accepts.
    fn one_event(
        &mut self,
        events: &[ContractEvent],
        topics: Vec<ScVal>,
        data: &Data,
        live_until: u32,
    ) -> Outcome {
        let names = self.names();
        self.evidence.observed = events.iter().map(|e| names.event(e)).collect();
        let token = self.chain.token();
        let kind = names.value(&topics[0]);
        let of_kind: Vec<&ContractEvent> = events
            .iter()
            .filter(|e| emitted_by(e, &token) && body(e).topics.first() == topics.first())
            .collect();
        let [event] = of_kind.as_slice() else {
            return fail(format!(
                "published {} `{kind}` events from the token, not one; events: {}",
                of_kind.len(),
                shown(&self.evidence.observed)
            ));
        };
        let published = body(event);
        // A Stellar Asset Contract has no spec (it is called blind) and appends its asset's name.
        let stellar_asset = self.config.declared.is_none();
        let topics_held = published.topics.as_slice() == topics.as_slice()
            || (stellar_asset
                && published.topics.len() == topics.len() + 1
                && published.topics.starts_with(&topics)
                && matches!(published.topics.last(), Some(ScVal::String(_))));
        let data_held = (data.accepts)(&published.data, 1, live_until);
        let seen = names.event(event);
        if topics_held && data_held {
            return pass(seen);
        }
        let expected_topics: Vec<String> = topics.iter().map(|t| names.value(t)).collect();
        fail(format!(
            "{seen}; expected topics [{}]{} and data {}",
            expected_topics.join(", "),
            if stellar_asset {
                " (+ the asset name)"
            } else {
                ""
            },
            data.expected
        ))
    }
}

fn body(event: &ContractEvent) -> &stellar_xdr::ContractEventV0 {
    let ContractEventBody::V0(body) = &event.body;
    body
}

fn emitted_by(event: &ContractEvent, token: &ScAddress) -> bool {
    matches!(token, ScAddress::Contract(id) if event.contract_id.as_ref() == Some(id))
}

/// A transfer's or mint's data to an address with no muxed id: the amount as an i128, or the map
/// `{amount, to_muxed_id}` with `to_muxed_id` void or absent.
fn amount_to_address(data: &ScVal, amount: i128) -> bool {
    *data == i128_val(amount)
        || map_of(data).is_some_and(|map| {
            one(map, "amount") == Some(&i128_val(amount))
                && matches!(under(map, "to_muxed_id").as_slice(), [] | [ScVal::Void])
        })
}

/// A burn's or clawback's data: the amount as an i128, or the map `{amount}`.
fn amount_only(data: &ScVal, amount: i128) -> bool {
    *data == i128_val(amount)
        || map_of(data).is_some_and(|map| one(map, "amount") == Some(&i128_val(amount)))
}

/// An approval's data: `[amount, live_until_ledger]`, or the map `{amount, live_until_ledger}`.
fn approval(data: &ScVal, amount: i128, live_until: u32) -> bool {
    let (amount, live_until) = (i128_val(amount), ScVal::U32(live_until));
    match data {
        ScVal::Vec(Some(items)) => items.as_slice() == [amount, live_until],
        _ => map_of(data).is_some_and(|map| {
            one(map, "amount") == Some(&amount)
                && one(map, "live_until_ledger") == Some(&live_until)
        }),
    }
}

fn map_of(data: &ScVal) -> Option<&ScMap> {
    match data {
        ScVal::Map(Some(map)) => Some(map),
        _ => None,
    }
}

/// The values under the `Symbol` key `key` (a `String` key of the same text is another key).
fn under<'a>(map: &'a ScMap, key: &str) -> Vec<&'a ScVal> {
    let key = symbol(key);
    map.iter()
        .filter(|e| e.key == key)
        .map(|e| &e.val)
        .collect()
}

/// The value under `key` when the map holds it exactly once: a repeated key has no one meaning.
fn one<'a>(map: &'a ScMap, key: &str) -> Option<&'a ScVal> {
    match under(map, key).as_slice() {
        [value] => Some(value),
        _ => None,
    }
}
