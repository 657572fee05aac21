//! What discovery watches, and reading it: the holders' and other parties' balances, whether each holder
//! can still send, what the first holder's transfer delivers, the token's executable, and the contracts its
//! transfer calls into.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use assay_core::parse::ExportedFunction;
use assay_localnet::Sandbox;
use stellar_xdr::{
    ContractDataDurability, ContractExecutable, LedgerEntryData, LedgerKey, LedgerKeyContractData,
    ScAddress, ScSpecTypeDef, ScVal, SorobanAuthorizationEntry, SorobanCredentials,
};

use crate::spec::Spec;
use assay_chain::scval::i128_val;

/// The parties and facts one discovery run works with.
pub struct World {
    pub token: ScAddress,
    /// The watched holders: the first is probed as the target of every power; a second, when there is
    /// one, tells a freeze of one account from a freeze of everyone.
    pub holders: Vec<ScAddress>,
    /// Where test transfers go.
    pub recipient: ScAddress,
    /// Another address the first holder could send to: a send the recipient refuses is retried here, so
    /// a call that blocks the recipient alone is not read as a freeze of every sender.
    pub second_recipient: Option<ScAddress>,
    /// Addresses nobody holds a key to, never parties of the token.
    pub fresh: Vec<ScAddress>,
    /// The parties the contract itself names: addresses its zero-argument getters return, role members.
    pub authorities: Vec<ScAddress>,
    /// Role names the contract lists (a getter returning symbols), for role-typed arguments.
    pub roles: Vec<String>,
    /// A code hash installed in the sandbox that is not the token's.
    pub placeholder: [u8; 32],
    /// The token's own code hash.
    pub own_hash: [u8; 32],
    pub ledger: u32,
}

impl World {
    /// When the first holder is a party the contract names (an admin holding the supply), a power it
    /// authorizes over its own units proves nothing: half its units go to a fresh address (a transfer it
    /// authorizes), which becomes the first holder watched. The sandbox keeps the transfer.
    pub fn prefer_plain_holder(&mut self, sandbox: &mut Sandbox, observer: &mut Observer) {
        let Some(first) = self.holders.first().cloned() else {
            return;
        };
        if !self.authorities.contains(&first) {
            return;
        }
        let Some(units) = observer.balance(sandbox, &first).filter(|b| *b >= 2) else {
            return;
        };
        let plain = self.fresh[0].clone();
        let call = sandbox.invoke(
            &self.token,
            "transfer",
            transfer_args(&first, &plain, units / 2),
        );
        if call.succeeded() && observer.balance(sandbox, &plain).is_some_and(|b| b > 0) {
            self.holders.insert(0, plain);
            self.holders.truncate(2);
        }
    }

    /// Gives the second watched holder two units from the first (a holder-authorized transfer), when
    /// there is only one holder and it can send; the sandbox keeps the transfer. The receiver is a fresh
    /// address, else the first party the contract names that may receive (a token that only credits
    /// accounts it verified refuses every fresh address): with one holder, a pause of everyone would read
    /// as a freeze of that one account.
    pub fn give_second_holder(&mut self, sandbox: &mut Sandbox, observer: &mut Observer) {
        if self.holders.len() != 1 {
            return;
        }
        let holder = self.holders[0].clone();
        if observer.balance(sandbox, &holder).is_none_or(|b| b < 3) {
            return;
        }
        let receivers: Vec<ScAddress> = std::iter::once(self.fresh[2].clone())
            .chain(self.authorities.iter().filter(|a| **a != holder).cloned())
            .collect();
        for second in receivers {
            let had = observer.balance(sandbox, &second).unwrap_or(0);
            let base = sandbox.checkpoint();
            let call = sandbox.invoke(&self.token, "transfer", transfer_args(&holder, &second, 2));
            if call.succeeded() && observer.balance(sandbox, &second) == had.checked_add(2) {
                self.holders.push(second);
                return;
            }
            sandbox.restore(&base);
        }
    }

    /// Picks where test transfers go: the first of a fresh address, the second holder, the parties the
    /// contract names and, last, the holder itself that the first holder can send one unit to now (an
    /// allowlist token refuses addresses it never allowed, but a holder it allowed can still send to
    /// itself). Keeps the fresh address when none can receive. The next one that can receive is the second
    /// recipient.
    pub fn choose_recipient(&mut self, sandbox: &mut Sandbox) {
        let Some(holder) = self.holders.first().cloned() else {
            return;
        };
        let candidates: Vec<ScAddress> = std::iter::once(self.fresh[1].clone())
            .chain(self.holders.iter().skip(1).cloned())
            .chain(self.authorities.iter().cloned())
            .filter(|a| *a != holder)
            .chain(std::iter::once(holder.clone()))
            .fold(Vec::new(), |mut seen, a| {
                // A party named twice (a second holder that is also an authority) is one candidate, so
                // the second recipient is another address.
                if !seen.contains(&a) {
                    seen.push(a);
                }
                seen
            });
        let token = self.token.clone();
        let mut receiving = candidates.into_iter().filter(|c| {
            sandbox
                .simulate(&token, "transfer", transfer_args(&holder, c, 1))
                .succeeded()
        });
        if let Some(first) = receiving.next() {
            self.recipient = first;
            self.second_recipient = receiving.next();
        }
    }

    /// Every address whose balance is watched.
    fn watched(&self) -> Vec<ScAddress> {
        let mut out: Vec<ScAddress> = Vec::new();
        for a in self
            .holders
            .iter()
            .chain(std::iter::once(&self.recipient))
            .chain(&self.authorities)
            .chain(&self.fresh)
        {
            if !out.contains(a) {
                out.push(a.clone());
            }
        }
        out
    }
}

/// The state discovery compares before and after a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Balances of the watched addresses (`None`: the read failed).
    pub balances: BTreeMap<ScAddress, Option<i128>>,
    /// Per watched holder: whether a transfer of one unit to the recipient (or, when it refuses, to the
    /// second recipient) succeeds.
    pub can_send: Vec<bool>,
    /// The token's executable.
    pub executable: Option<ContractExecutable>,
    /// Contracts (other than the token) the first holder's transfer reads the instance of: the contracts
    /// it calls into.
    pub transfer_calls_into: BTreeSet<ScAddress>,
    /// Every ledger entry the reads above touched (their footprints, present or absent, and the token's
    /// instance): the host is deterministic, so the same entries give the same observation.
    pub read: BTreeSet<LedgerKey>,
    /// Per watched address, the entries its balance read touched.
    pub balance_reads: BTreeMap<ScAddress, BTreeSet<LedgerKey>>,
    /// Per watched holder, the entries its transfer touched.
    pub send_reads: Vec<BTreeSet<LedgerKey>>,
    /// What the first holder's transfer of its whole balance to the recipient delivers (run, then undone);
    /// `None` when it has no units, sends to itself, or the transfer is refused.
    pub delivery: Option<Delivery>,
    /// The entries that measurement touched: the transfer's footprint and the balances read after it.
    pub delivery_reads: BTreeSet<LedgerKey>,
}

/// What one holder's transfer did to the watched balances: the judge of a transfer fee is what arrived, not
/// what the token's events or functions say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Units the holder's balance fell by.
    pub sent: i128,
    /// Units the recipient's balance rose by.
    pub delivered: i128,
    /// The watched address (neither the holder nor the recipient) whose balance rose most, and by how much.
    pub credited: Option<(ScAddress, i128)>,
}

impl Delivery {
    /// Whether this delivers a smaller share of what it sends than `earlier` did. The same amount sent: any
    /// unit less. Another amount (a call moved the holder's balance): less than `earlier`'s share of it by
    /// more than a token's own rounding can explain (a fee rounded to a unit moves the share of a different
    /// amount by up to a unit per multiple of the earlier amount).
    pub fn delivers_less_than(&self, earlier: &Delivery) -> bool {
        if self.sent <= 0 || earlier.sent <= 0 {
            return false;
        }
        if self.sent == earlier.sent {
            return self.delivered < earlier.delivered;
        }
        let slack = 1 + self.sent / earlier.sent;
        let expected = match earlier.delivered.checked_mul(self.sent) {
            Some(scaled) => scaled / earlier.sent,
            None => ((earlier.delivered as f64 / earlier.sent as f64) * self.sent as f64) as i128,
        };
        self.delivered.saturating_add(slack) < expected
    }
}

impl Observation {
    /// Whether `call` left this observation as it was: it wrote no entry the observation read, so reading
    /// again would run the same calls on the same entries. Observing again is then work with a known answer.
    pub fn unchanged_by(&self, call: &assay_localnet::Call) -> bool {
        call.writes.iter().all(|w| !self.read.contains(&w.key))
    }

    /// The first watched holder's balance.
    pub fn holder_balance(&self, world: &World) -> Option<i128> {
        world
            .holders
            .first()
            .and_then(|h| self.balances.get(h).copied().flatten())
    }
}

/// Reads observations through the sandbox.
pub struct Observer {
    token: ScAddress,
}

impl Observer {
    pub fn new(token: &ScAddress) -> Observer {
        Observer {
            token: token.clone(),
        }
    }

    /// `balance(address)`, when it answers an i128.
    pub fn balance(&mut self, sandbox: &mut Sandbox, address: &ScAddress) -> Option<i128> {
        self.balance_reading(sandbox, address, &mut BTreeSet::new())
    }

    /// [`Observer::balance`], adding the entries the read touched to `read`.
    fn balance_reading(
        &mut self,
        sandbox: &mut Sandbox,
        address: &ScAddress,
        read: &mut BTreeSet<LedgerKey>,
    ) -> Option<i128> {
        let call = sandbox.simulate(
            &self.token,
            "balance",
            vec![ScVal::Address(address.clone())],
        );
        footprint_into(&call.footprint, read);
        match call.result {
            Ok(ScVal::I128(p)) => Some((i128::from(p.hi) << 64) | i128::from(p.lo)),
            _ => None,
        }
    }

    /// The parties the contract names: what its zero-argument functions return when that is an address,
    /// the members of the roles a symbol-list getter names (through any function the spec types
    /// `(Symbol, u32) -> Address`), and the addresses its instance storage holds (at most
    /// [`crate::beyond::INSTANCE_ADDRESSES`]). Found by type and value, not by name.
    ///
    /// Stops at `deadline` (a token may export a thousand functions that each run until the host's budget
    /// traps): the third value then says how many of the getters were left unread.
    pub fn authorities(
        &mut self,
        sandbox: &mut Sandbox,
        exports: &[ExportedFunction],
        spec: &Spec,
        deadline: Instant,
    ) -> (Vec<ScAddress>, Vec<String>, Option<String>) {
        let mut addresses = Vec::new();
        let mut roles = Vec::new();
        let getters: Vec<&ExportedFunction> = exports
            .iter()
            .filter(|f| f.arity == 0 && !f.name.starts_with("__"))
            .collect();
        for (n, f) in getters.iter().enumerate() {
            if Instant::now() > deadline {
                let cut = format!(
                    "set-up: {} of {} zero-argument functions were not read for the parties the contract \
                     names: the time budget ran out",
                    getters.len() - n,
                    getters.len()
                );
                return (addresses, roles, Some(cut));
            }
            match sandbox.simulate(&self.token, &f.name, vec![]).result {
                Ok(ScVal::Address(a)) if a != self.token && !addresses.contains(&a) => {
                    addresses.push(a)
                }
                Ok(ScVal::Vec(Some(items))) => {
                    for item in items.iter() {
                        if let ScVal::Symbol(s) = item {
                            let role = s.to_utf8_string_lossy();
                            if !roles.contains(&role) {
                                roles.push(role);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let member_getters: Vec<&String> = spec
            .functions
            .iter()
            .filter(|(_, f)| {
                f.inputs == [ScSpecTypeDef::Symbol, ScSpecTypeDef::U32]
                    && f.outputs.first() == Some(&ScSpecTypeDef::Address)
            })
            .map(|(name, _)| name)
            .collect();
        for getter in member_getters {
            for role in &roles {
                if Instant::now() > deadline {
                    let cut = "set-up: role members were not all read: the time budget ran out";
                    return (addresses, roles.clone(), Some(cut.into()));
                }
                for index in 0..4u32 {
                    let args = vec![
                        ScVal::Symbol(role.as_bytes().to_vec().try_into().unwrap_or_default()),
                        ScVal::U32(index),
                    ];
                    match sandbox.simulate(&self.token, getter, args).result {
                        Ok(ScVal::Address(a)) => {
                            if !addresses.contains(&a) {
                                addresses.push(a);
                            }
                        }
                        _ => break,
                    }
                }
            }
        }
        // The parties the contract keeps in its instance storage: an owner stored with no getter
        // (OpenZeppelin's pausable example) is as much its party as one a getter returns, and its balance is
        // watched like theirs (else its own transfer would read as units created from nothing).
        let stored = crate::beyond::instance_addresses(sandbox, &self.token);
        let unnamed: Vec<ScAddress> = (stored.into_iter())
            .filter(|a| !addresses.contains(a))
            .take(crate::beyond::INSTANCE_ADDRESSES)
            .collect();
        addresses.extend(unnamed);
        (addresses, roles, None)
    }

    /// Everything compared before and after a call.
    pub fn observe(&mut self, sandbox: &mut Sandbox, world: &World) -> Observation {
        self.observe_reusing(sandbox, world, None)
    }

    /// The observation after `call`, which ran from the state `prev` was read in: a read whose entries the
    /// call did not write is kept (the host is deterministic: the same entries give the same answer), the
    /// others are read again.
    pub fn observe_after(
        &mut self,
        sandbox: &mut Sandbox,
        world: &World,
        prev: &Observation,
        call: &assay_localnet::Call,
    ) -> Observation {
        let written: BTreeSet<LedgerKey> = call.writes.iter().map(|w| w.key.clone()).collect();
        self.observe_reusing(sandbox, world, Some((prev, &written)))
    }

    fn observe_reusing(
        &mut self,
        sandbox: &mut Sandbox,
        world: &World,
        prev: Option<(&Observation, &BTreeSet<LedgerKey>)>,
    ) -> Observation {
        let mut read = BTreeSet::from([instance_key(&self.token)]);
        let mut balances = BTreeMap::new();
        let mut balance_reads = BTreeMap::new();
        for a in world.watched() {
            let kept = prev.and_then(|(p, written)| {
                let footprint = p.balance_reads.get(&a)?;
                let balance = *p.balances.get(&a)?;
                footprint
                    .is_disjoint(written)
                    .then(|| (balance, footprint.clone()))
            });
            let (balance, footprint) = kept.unwrap_or_else(|| {
                let mut footprint = BTreeSet::new();
                let balance = self.balance_reading(sandbox, &a, &mut footprint);
                (balance, footprint)
            });
            read.extend(footprint.iter().cloned());
            balances.insert(a.clone(), balance);
            balance_reads.insert(a, footprint);
        }
        let kept_delivery = prev.and_then(|(p, written)| {
            p.delivery_reads
                .is_disjoint(written)
                .then(|| (p.delivery.clone(), p.delivery_reads.clone()))
        });
        let (delivery, delivery_reads) = kept_delivery
            .unwrap_or_else(|| self.delivery(sandbox, world, &balances, &balance_reads));
        read.extend(delivery_reads.iter().cloned());
        let mut transfer_calls_into = BTreeSet::new();
        let mut can_send = Vec::new();
        let mut send_reads = Vec::new();
        for (i, h) in world.holders.iter().enumerate() {
            let kept = prev.and_then(|(p, written)| {
                let footprint = p.send_reads.get(i)?;
                let sends = *p.can_send.get(i)?;
                footprint
                    .is_disjoint(written)
                    .then(|| (sends, footprint.clone(), p.transfer_calls_into.clone()))
            });
            let (sends, footprint, calls_into) = kept.unwrap_or_else(|| {
                let send_to = |sandbox: &mut Sandbox, to: &ScAddress| {
                    sandbox.simulate(&world.token, "transfer", transfer_args(h, to, 1))
                };
                let call = send_to(sandbox, &world.recipient);
                let mut footprint = BTreeSet::new();
                footprint_into(&call.footprint, &mut footprint);
                let calls_into = instances_read(&call.footprint, &world.token);
                let mut sends = call.succeeded();
                // A holder still sends when only the recipient refuses to receive.
                if let Some(second) = world.second_recipient.as_ref().filter(|_| !sends) {
                    let retry = send_to(sandbox, second);
                    footprint_into(&retry.footprint, &mut footprint);
                    sends = retry.succeeded();
                }
                (sends, footprint, calls_into)
            });
            if i == 0 {
                transfer_calls_into = calls_into;
            }
            read.extend(footprint.iter().cloned());
            can_send.push(sends);
            send_reads.push(footprint);
        }
        Observation {
            balances,
            can_send,
            executable: self.executable(sandbox),
            transfer_calls_into,
            read,
            balance_reads,
            send_reads,
            delivery,
            delivery_reads,
        }
    }

    /// Runs the first holder's transfer of its whole balance to the recipient, reads what each watched
    /// balance did, and undoes it. Only the balances whose reads the transfer wrote are read again (the
    /// host is deterministic: the others did not move). The whole balance, so the smallest share a token
    /// keeps back still shows as a unit.
    fn delivery(
        &mut self,
        sandbox: &mut Sandbox,
        world: &World,
        balances: &BTreeMap<ScAddress, Option<i128>>,
        balance_reads: &BTreeMap<ScAddress, BTreeSet<LedgerKey>>,
    ) -> (Option<Delivery>, BTreeSet<LedgerKey>) {
        let mut reads = BTreeSet::new();
        let Some(holder) = world.holders.first() else {
            return (None, reads);
        };
        if let Some(footprint) = balance_reads.get(holder) {
            reads.extend(footprint.iter().cloned());
        }
        let units = balances.get(holder).copied().flatten().filter(|b| *b > 0);
        let Some(units) = units.filter(|_| *holder != world.recipient) else {
            return (None, reads);
        };
        let base = sandbox.checkpoint();
        let call = sandbox.invoke(
            &world.token,
            "transfer",
            transfer_args(holder, &world.recipient, units),
        );
        footprint_into(&call.footprint, &mut reads);
        let mut delivery = None;
        if call.succeeded() && call.upstream_error.is_none() {
            let written: BTreeSet<LedgerKey> = call.writes.iter().map(|w| w.key.clone()).collect();
            let mut deltas: BTreeMap<&ScAddress, i128> = BTreeMap::new();
            for (a, before) in balances {
                let Some(before) = *before else {
                    continue;
                };
                let moved = balance_reads
                    .get(a)
                    .is_none_or(|footprint| !footprint.is_disjoint(&written));
                if !moved {
                    continue;
                }
                let mut footprint = BTreeSet::new();
                let now = self.balance_reading(sandbox, a, &mut footprint);
                reads.extend(footprint);
                if let Some(d) = now.and_then(|now| now.checked_sub(before)) {
                    deltas.insert(a, d);
                }
            }
            let delta = |a: &ScAddress| deltas.get(a).copied().unwrap_or(0);
            let sent = delta(holder).checked_neg().unwrap_or(0);
            let credited = deltas
                .iter()
                .filter(|(a, d)| ***a != *holder && ***a != world.recipient && **d > 0)
                .max_by_key(|(_, d)| **d)
                .map(|(a, d)| ((*a).clone(), *d));
            if sent > 0 {
                delivery = Some(Delivery {
                    sent,
                    delivered: delta(&world.recipient),
                    credited,
                });
            }
        }
        sandbox.restore(&base);
        (delivery, reads)
    }

    fn executable(&self, sandbox: &Sandbox) -> Option<ContractExecutable> {
        let key = instance_key(&self.token);
        match sandbox.entry(&key).ok().flatten()?.data {
            LedgerEntryData::ContractData(d) => match d.val {
                ScVal::ContractInstance(i) => Some(i.executable),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The instance key of `contract`.
pub fn instance_key(contract: &ScAddress) -> LedgerKey {
    LedgerKey::ContractData(LedgerKeyContractData {
        contract: contract.clone(),
        key: ScVal::LedgerKeyContractInstance,
        durability: ContractDataDurability::Persistent,
    })
}

/// Adds every key of `footprint` to `read`.
fn footprint_into(footprint: &stellar_xdr::LedgerFootprint, read: &mut BTreeSet<LedgerKey>) {
    read.extend(footprint.read_only.iter().cloned());
    read.extend(footprint.read_write.iter().cloned());
}

/// Contracts other than `token` whose instance a call's footprint reads.
fn instances_read(
    footprint: &stellar_xdr::LedgerFootprint,
    token: &ScAddress,
) -> BTreeSet<ScAddress> {
    footprint
        .read_only
        .iter()
        .chain(footprint.read_write.iter())
        .filter_map(|k| match k {
            LedgerKey::ContractData(d)
                if d.key == ScVal::LedgerKeyContractInstance && d.contract != *token =>
            {
                Some(d.contract.clone())
            }
            _ => None,
        })
        .collect()
}

/// The addresses whose authorization a call asked for.
pub fn authorizers(auth: &[SorobanAuthorizationEntry]) -> Vec<ScAddress> {
    let mut out = Vec::new();
    for entry in auth {
        if let SorobanCredentials::Address(c) = &entry.credentials {
            if !out.contains(&c.address) {
                out.push(c.address.clone());
            }
        }
    }
    out
}

/// SEP-41 `transfer(from, to, amount)`'s arguments.
fn transfer_args(from: &ScAddress, to: &ScAddress, amount: i128) -> Vec<ScVal> {
    vec![
        ScVal::Address(from.clone()),
        ScVal::Address(to.clone()),
        i128_val(amount),
    ]
}
