//! The events layer: what one successful call publishes, observed in the host's simulation of it
//! (nothing is submitted). Indexers and wallets decode SEP-41 events by shape, so the shape is the
//! rule: exactly one event of the kind from the token, its topics exactly as SEP-41 lists them (a
//! Stellar Asset Contract appends the asset's name, a string, as one more topic), and its data.
use stellar_xdr::{ContractEvent, ContractEventBody, ScAddress, ScSymbol, ScVal};

use super::{authorization::shown, fail, i128_val, pass, Outcome, Run, Step, Who, HOLDER};

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
            expected: "the amount 1 as an i128, or {amount: 1, to_muxed_id}".into(),
            accepts: |data, amount, _| amount_or_muxed_map(data, amount),
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
            expected: format!("[1, {live_until}] (amount, live_until_ledger)"),
            accepts: |data, amount, live_until| {
                *data
                    == ScVal::Vec(Some(
                        vec![i128_val(amount), ScVal::U32(live_until)]
                            .try_into()
                            .expect("two values"),
                    ))
            },
        };
        Ok(self.one_event(&events, topics, &data, live_until))
    }

    pub(super) fn burn_event(&mut self) -> Step<Outcome> {
        self.before(HOLDER)?;
        let args = vec![self.addr(Who::Holder), i128_val(1)];
        let (_, events) = self.simulated("burn", args)?;
        let topics = vec![symbol("burn"), self.addr(Who::Holder)];
        let data = Data {
            expected: "the amount 1 as an i128".into(),
            accepts: |data, amount, _| *data == i128_val(amount),
        };
        Ok(self.one_event(&events, topics, &data, 0))
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

fn symbol(name: &str) -> ScVal {
    ScVal::Symbol(ScSymbol(name.try_into().expect("a short symbol")))
}

fn body(event: &ContractEvent) -> &stellar_xdr::ContractEventV0 {
    let ContractEventBody::V0(body) = &event.body;
    body
}

fn emitted_by(event: &ContractEvent, token: &ScAddress) -> bool {
    matches!(token, ScAddress::Contract(id) if event.contract_id.as_ref() == Some(id))
}

/// `amount` as an i128, or CAP-67's map `{amount, to_muxed_id}` for a muxed recipient.
fn amount_or_muxed_map(data: &ScVal, amount: i128) -> bool {
    if *data == i128_val(amount) {
        return true;
    }
    let ScVal::Map(Some(entries)) = data else {
        return false;
    };
    let value = |key: &str| {
        entries
            .iter()
            .find(|e| e.key == symbol(key))
            .map(|e| &e.val)
    };
    entries.len() == 2
        && value("amount") == Some(&i128_val(amount))
        && matches!(
            value("to_muxed_id"),
            Some(ScVal::U64(_) | ScVal::Bytes(_) | ScVal::String(_))
        )
}
