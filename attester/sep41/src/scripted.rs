//! A scripted chain for unit tests: an in-memory token with switchable flaws, plus per-call
//! overrides that script any answer (a trap, an archived entry, a fault).
#![cfg(test)]

use std::{collections::HashMap, time::Duration};

use assay_chain::scval::symbol;
use assay_chain::{strkey_of, InvokeOutcome, ReadOutcome};
use stellar_xdr::{
    ContractEvent, ContractEventBody, ContractEventType, ContractEventV0, ContractId,
    ExtensionPoint, Hash, InvokeContractArgs, ScAddress, ScSymbol, ScVal,
    SorobanAddressCredentials, SorobanAuthorizationEntry, SorobanAuthorizedFunction,
    SorobanAuthorizedInvocation, SorobanCredentials,
};

use crate::{
    chain::{Authorization, NoAnswer, Role, Simulation, TokenChain, WriteFault},
    checks::{i128_val, Party},
};

#[derive(Default, Clone, Copy)]
pub struct Flaws {
    /// transfer: no floor, no sign check, both balances read before either is written.
    pub vulnerable_transfer: bool,
    /// approve ignores live_until_ledger.
    pub ignore_expiry: bool,
    /// transfer_from never consults the allowance.
    pub ignore_allowance: bool,
    /// approve adds instead of overwriting.
    pub accumulate: bool,
    /// transfer of a negative amount lands and leaves the sender's balance at i128::MIN.
    pub negative_transfer_to_min: bool,
    /// approve accepts a live_until_ledger already in the past.
    pub accept_past_expiry: bool,
    /// Calls succeed with no authorization at all.
    pub accept_unauthorized: bool,
    /// A permissioned token that never admitted the spender: every write naming it is refused.
    pub refuse_spender: bool,
    /// A permissioned token that never admitted the holder: every write naming it is refused.
    pub refuse_holder: bool,
}

pub struct ScriptedChain {
    pub ledger: u32,
    /// Whether pausing lets ledgers close.
    pub advances: bool,
    pub balances: HashMap<String, i128>,
    /// (amount, live_until) from holder to spender.
    pub allowance: (i128, u32),
    pub flaws: Flaws,
    /// Scripted answers to reads: (function, first-arg strkey or "") → answer.
    pub read_script: HashMap<(String, String), Result<ReadOutcome, NoAnswer>>,
    /// Scripted answers to writes by function name.
    pub write_script: HashMap<String, Result<InvokeOutcome, WriteFault>>,
    /// Scripted simulations by function name (a refusal, archived state, a fault).
    pub simulate_script: HashMap<String, Result<Simulation, NoAnswer>>,
    /// Authorizations a simulated call records, by function name, instead of its party's exact one.
    pub auth_script: HashMap<String, Vec<SorobanAuthorizationEntry>>,
    /// Events a simulated call publishes, by function name, instead of the SEP-41 ones.
    pub event_script: HashMap<String, Vec<ContractEvent>>,
    /// Rewrites the data of the SEP-41 event a simulated call publishes: (function, data) → data.
    pub reshape_data: Option<fn(&str, &ScVal) -> ScVal>,
    pub holder: String,
    pub spender: String,
    pub writes: Vec<String>,
    next_hash: u32,
}

/// The scripted token's address.
pub fn token() -> ScAddress {
    ScAddress::Contract(ContractId(Hash([0xc0; 32])))
}

/// `party`'s authorization of exactly `function(args)` on `contract`, with `nested` under it.
pub fn authorization(
    party: &ScAddress,
    contract: &ScAddress,
    function: &str,
    args: Vec<ScVal>,
    nested: Vec<SorobanAuthorizedInvocation>,
) -> SorobanAuthorizationEntry {
    SorobanAuthorizationEntry {
        credentials: SorobanCredentials::Address(SorobanAddressCredentials {
            address: party.clone(),
            nonce: 1,
            signature_expiration_ledger: 0,
            signature: ScVal::Void,
        }),
        root_invocation: invocation(contract, function, args, nested),
    }
}

pub fn invocation(
    contract: &ScAddress,
    function: &str,
    args: Vec<ScVal>,
    nested: Vec<SorobanAuthorizedInvocation>,
) -> SorobanAuthorizedInvocation {
    SorobanAuthorizedInvocation {
        function: SorobanAuthorizedFunction::ContractFn(InvokeContractArgs {
            contract_address: contract.clone(),
            function_name: ScSymbol(function.try_into().unwrap()),
            args: args.try_into().unwrap(),
        }),
        sub_invocations: nested.try_into().unwrap(),
    }
}

/// A contract event from `contract`.
pub fn event(contract: &ScAddress, topics: Vec<ScVal>, data: ScVal) -> ContractEvent {
    let ScAddress::Contract(id) = contract else {
        panic!("events come from contracts")
    };
    ContractEvent {
        ext: ExtensionPoint::V0,
        contract_id: Some(id.clone()),
        type_: ContractEventType::Contract,
        body: ContractEventBody::V0(ContractEventV0 {
            topics: topics.try_into().unwrap(),
            data,
        }),
    }
}

/// The SEP-41 event a successful call publishes.
fn sep41_event(function: &str, args: &[ScVal]) -> ContractEvent {
    let a = |i: usize| args[i].clone();
    let (topics, data) = match function {
        "transfer" => (vec![symbol("transfer"), a(0), a(1)], a(2)),
        "transfer_from" => (vec![symbol("transfer"), a(1), a(2)], a(3)),
        "approve" => (
            vec![symbol("approve"), a(0), a(1)],
            ScVal::Vec(Some(vec![a(2), a(3)].try_into().unwrap())),
        ),
        "burn" => (vec![symbol("burn"), a(0)], a(1)),
        "burn_from" => (vec![symbol("burn"), a(1)], a(2)),
        other => panic!("no event for {other}"),
    };
    event(&token(), topics, data)
}

pub fn account(seed: u8) -> ScAddress {
    assay_chain::parse_address(
        stellar_strkey::ed25519::PublicKey([seed; 32])
            .to_string()
            .as_str(),
    )
    .unwrap()
}

pub fn party(seed: u8) -> Party {
    Party {
        address: account(seed),
        generated: false,
        can_sign: true,
        key_hint: "set ASSAY_OWNER_SECRET".into(),
        address_hint: "set --owner".into(),
    }
}

impl ScriptedChain {
    pub fn new(holder: &Party, spender: &Party, holder_balance: i128) -> Self {
        let h = strkey_of(&holder.address);
        let s = strkey_of(&spender.address);
        let mut balances = HashMap::new();
        balances.insert(h.clone(), holder_balance);
        ScriptedChain {
            ledger: 100,
            advances: true,
            balances,
            allowance: (0, 0),
            flaws: Flaws::default(),
            read_script: HashMap::new(),
            write_script: HashMap::new(),
            simulate_script: HashMap::new(),
            auth_script: HashMap::new(),
            event_script: HashMap::new(),
            reshape_data: None,
            holder: h,
            spender: s,
            writes: vec![],
            next_hash: 0,
        }
    }

    fn bal(&self, who: &str) -> i128 {
        *self.balances.get(who).unwrap_or(&0)
    }

    fn live_allowance(&self) -> i128 {
        if self.flaws.ignore_expiry || self.allowance.1 >= self.ledger {
            self.allowance.0
        } else {
            0
        }
    }

    fn land(&mut self) -> InvokeOutcome {
        self.next_hash += 1;
        self.ledger += 1;
        InvokeOutcome::Landed {
            hash: format!("{:064x}", self.next_hash),
            ledger: self.ledger,
        }
    }

    pub fn refuse_for_test(text: &str) -> InvokeOutcome {
        Self::refuse(text)
    }

    fn refuse(text: &str) -> InvokeOutcome {
        InvokeOutcome::Refused(format!(
            "host invocation failed\n\nCaused by:\n    HostError: Error(Contract, #1)\n    {text}"
        ))
    }
}

fn addr_of(v: &ScVal) -> String {
    match v {
        ScVal::Address(a) => strkey_of(a),
        _ => String::new(),
    }
}

fn amount_of(v: &ScVal) -> i128 {
    match v {
        ScVal::I128(p) => (i128::from(p.hi) << 64) | i128::from(p.lo),
        _ => panic!("not an amount: {v:?}"),
    }
}

impl TokenChain for ScriptedChain {
    fn token(&self) -> ScAddress {
        token()
    }

    fn read(&mut self, function: &str, args: Vec<ScVal>) -> Result<ReadOutcome, NoAnswer> {
        let first = args.first().map(addr_of).unwrap_or_default();
        if let Some(answer) = self.read_script.get(&(function.to_string(), first.clone())) {
            return answer.clone();
        }
        Ok(ReadOutcome::Value(match function {
            "decimals" => ScVal::U32(7),
            "name" => ScVal::String(stellar_xdr::ScString("Scripted".try_into().unwrap())),
            "symbol" => ScVal::String(stellar_xdr::ScString("SCR".try_into().unwrap())),
            "balance" => i128_val(self.bal(&first)),
            "allowance" => i128_val(self.live_allowance()),
            other => panic!("unexpected read {other}"),
        }))
    }

    fn write(
        &mut self,
        signer: Role,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<InvokeOutcome, WriteFault> {
        self.writes.push(function.to_string());
        if let Some(answer) = self.write_script.get(function) {
            return answer.clone();
        }
        let expected = match function {
            "transfer_from" | "burn_from" => Role::Spender,
            _ => Role::Holder,
        };
        assert_eq!(signer, expected, "{function} signed by the wrong party");
        Ok(self.apply(function, &args))
    }

    fn simulate(
        &mut self,
        function: &str,
        args: Vec<ScVal>,
        mode: Authorization,
    ) -> Result<Simulation, NoAnswer> {
        if let Some(answer) = self.simulate_script.get(function) {
            return answer.clone();
        }
        let auth = self.auth_script.get(function).cloned().unwrap_or_else(|| {
            // Each SEP-41 write is authorized by its first argument.
            let party = match &args[0] {
                ScVal::Address(a) => a.clone(),
                other => panic!("not an address: {other:?}"),
            };
            vec![authorization(
                &party,
                &token(),
                function,
                args.clone(),
                vec![],
            )]
        });
        if mode == Authorization::None && !auth.is_empty() && !self.flaws.accept_unauthorized {
            return Ok(Simulation::Refused(
                "HostError: Error(Auth, InvalidAction)".into(),
            ));
        }
        let saved = (
            self.balances.clone(),
            self.allowance,
            self.ledger,
            self.next_hash,
        );
        let outcome = self.apply(function, &args);
        (self.balances, self.allowance, self.ledger, self.next_hash) = saved;
        match outcome {
            InvokeOutcome::Refused(error) => Ok(Simulation::Refused(error)),
            InvokeOutcome::Landed { .. } => {
                let events = (self.event_script.get(function).cloned()).unwrap_or_else(|| {
                    let mut published = sep41_event(function, &args);
                    if let Some(reshape) = self.reshape_data {
                        let ContractEventBody::V0(body) = &mut published.body;
                        body.data = reshape(function, &body.data);
                    }
                    vec![published]
                });
                Ok(Simulation::Ran { auth, events })
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }

    fn latest_ledger(&mut self) -> Result<u32, NoAnswer> {
        Ok(self.ledger)
    }

    fn pause(&mut self, _duration: Duration) {
        if self.advances {
            self.ledger += 1;
        }
    }
}

impl ScriptedChain {
    /// A call's effect on the in-memory token (writes land; simulations roll back).
    fn apply(&mut self, function: &str, args: &[ScVal]) -> InvokeOutcome {
        let (h, s) = (self.holder.clone(), self.spender.clone());
        let names = |who: &str| {
            args.iter()
                .any(|a| matches!(a, ScVal::Address(_)) && addr_of(a) == who)
        };
        if (self.flaws.refuse_spender && names(&s)) || (self.flaws.refuse_holder && names(&h)) {
            // OpenZeppelin's FungibleTokenError::UserNotAllowed.
            return Self::refuse("HostError: Error(Contract, #113)");
        }
        match function {
            "transfer" => {
                let (from, to, amount) =
                    (addr_of(&args[0]), addr_of(&args[1]), amount_of(&args[2]));
                if self.flaws.negative_transfer_to_min && amount < 0 {
                    self.balances.insert(from, i128::MIN);
                    return self.land();
                }
                if self.flaws.vulnerable_transfer {
                    let (fb, tb) = (self.bal(&from), self.bal(&to));
                    self.balances.insert(from, fb - amount);
                    self.balances.insert(to, tb + amount);
                    return self.land();
                }
                if amount < 0 {
                    return Self::refuse("negative amount");
                }
                if self.bal(&from) < amount {
                    return Self::refuse("insufficient balance");
                }
                *self.balances.entry(from).or_default() -= amount;
                *self.balances.entry(to).or_default() += amount;
                self.land()
            }
            "approve" => {
                let (amount, until) = (
                    amount_of(&args[2]),
                    match args[3] {
                        ScVal::U32(u) => u,
                        _ => 0,
                    },
                );
                if amount > 0 && until <= self.ledger && !self.flaws.accept_past_expiry {
                    return Self::refuse("live_until_ledger is in the past");
                }
                let base = if self.flaws.accumulate {
                    self.live_allowance()
                } else {
                    0
                };
                self.allowance = (base + amount, until);
                self.land()
            }
            "transfer_from" | "burn_from" => {
                let amount = amount_of(args.last().unwrap());
                if !self.flaws.ignore_allowance {
                    if self.live_allowance() < amount {
                        return Self::refuse("insufficient allowance");
                    }
                    self.allowance.0 -= amount;
                }
                if self.bal(&h) < amount {
                    return Self::refuse("insufficient balance");
                }
                *self.balances.entry(h).or_default() -= amount;
                if function == "transfer_from" {
                    *self.balances.entry(s).or_default() += amount;
                }
                self.land()
            }
            "burn" => {
                let amount = amount_of(&args[1]);
                if self.bal(&h) < amount {
                    return Self::refuse("insufficient balance");
                }
                *self.balances.entry(h).or_default() -= amount;
                self.land()
            }
            other => panic!("unexpected write {other}"),
        }
    }
}
