//! Power discovery by behaviour: what can this token's code do to a holder's balance, learned by running
//! every function it exports on a private copy of the ledger (an [`assay_localnet::Sandbox`] over a fork,
//! or over the embedded network a `--wasm` run deploys to) and comparing state before and after.
//!
//! For each exported function that is not a SEP-41 read, [`discover`] builds arguments from the contract
//! spec's types where it has an entry (and from the function's WASM arity where it has none), runs the call
//! with exactly the authorization it asks for granted, and classifies the observed effect:
//!
//! - a holder's balance falls without the holder's authorization → takes a balance (`admin_clawback`);
//! - a holder's transfer that succeeded before the call is refused after it → freeze (`admin_freeze`);
//! - a balance rises with no matching debit → creates supply (`admin_mint`);
//! - the first holder's transfer of its balance delivers a smaller share to its recipient than before the
//!   call (the rest burned or credited elsewhere) → `admin_transfer_fee`, with the share not delivered;
//! - the token's executable changes, or a contract its transfer calls into is replaced → `code_mutable`;
//! - a privileged call writes state whose effect on holders none of these explains → `admin_unclassified`;
//!   but not a party acting on its own state as any holder may for itself (an owner delegating its own
//!   votes: [`own_act`]).
//!
//! A function's name never decides anything: the vocabulary in [`assay_core::powers::label_for`] only labels
//! what was observed. The work is bounded (invocations per function, a time budget per token) and the
//! survey says where a bound cut it.

mod args;
mod authority;
mod beyond;
mod classify;
mod constants;
pub mod fork;
mod observe;
mod own_act;
mod spec;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use assay_chain::strkey_of;
use assay_core::powers::{
    label_for, ObservedPower, PowerSurvey, Reach, Step, UnclassifiedWrite, BUDGET_CUT,
};
use assay_localnet::Sandbox;
use sha2::{Digest, Sha256};
use stellar_xdr::{Limits, ScAddress, ScVal, WriteXdr};

use crate::args::{Candidates, Combinations};
use crate::classify::{classify, Effect};
use crate::observe::{Observer, World};

/// Functions never probed: the SEP-41 reads, and what the host itself calls.
const NOT_PROBED: [&str; 7] = [
    "balance",
    "allowance",
    "decimals",
    "name",
    "symbol",
    "__constructor",
    "__check_auth",
];

/// The SEP-41 interface's writes: their effects are classified like any other's, but a write of theirs
/// that explains nothing is the interface at work (the SEP-41 suite judges it), not an unclassified power.
const SEP41_WRITES: [&str; 5] = ["transfer", "transfer_from", "approve", "burn", "burn_from"];

/// Runs discovery for `contract` on `net` as it stands (in a sandbox copy: `net` is left as it was): the
/// code is read from the network, `holders` are watched first.
///
/// # Errors
/// As [`discover`]; also when there is no WASM token at `contract` or the sandbox cannot be made.
pub fn discover_on(
    net: &assay_localnet::LocalNet,
    contract: &ScAddress,
    holders: &[ScAddress],
    bounds: Bounds,
) -> Result<PowerSurvey, DiscoveryError> {
    let wasm = fork::code_of(net, contract)?;
    let mut sandbox = net
        .sandbox()
        .map_err(|e| DiscoveryError::Upstream(e.to_string()))?;
    discover(
        &mut sandbox,
        &Target {
            contract: contract.clone(),
            wasm,
        },
        holders,
        bounds,
    )
}

/// How much work one token may take.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Invocations per function (argument combinations tried).
    pub per_function: usize,
    /// Wall time for the whole token.
    pub budget: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            per_function: 64,
            budget: Duration::from_secs(60),
        }
    }
}

/// The token to judge.
#[derive(Debug, Clone)]
pub struct Target {
    /// The token contract (`C…`).
    pub contract: ScAddress,
    /// The code it runs (for a CAP-85 external reference, the referenced code).
    pub wasm: Vec<u8>,
}

/// Why discovery could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The code's export section does not parse.
    #[error("the token's code does not parse: {0}")]
    Malformed(String),
    /// The fork's upstream failed: nothing observed can be trusted.
    #[error("the fork's upstream failed during discovery: {0}")]
    Upstream(String),
}

/// Why no holder could be funded when nobody held units, so no power over a balance could be observed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Unfunded {
    /// No call discovery observed creates supply.
    #[error(
        "no address held units (pass --holder ADDRESS naming an account that holds this token), and no call \
         observed here creates supply to fund one, so no power over a balance could be observed"
    )]
    NoSupplyCall,
    /// The supply-creating call left the holder without units.
    #[error(
        "no address held units, and the supply-creating call `{function}` did not fund a holder"
    )]
    CallFundedNobody {
        /// The call.
        function: String,
    },
}

/// Runs discovery against `target` in `sandbox`. `candidates` are addresses that may hold units (an
/// existing holder given by the user, or named by the token's recent events), best first; the two richest
/// become the watched holders. With none holding units, a supply-creating call discovery observes funds a
/// fresh holder, and the search runs again.
///
/// # Errors
/// [`DiscoveryError`] when the code does not parse or the upstream failed; everything else the token does
/// (trapping, refusing) is an observation.
pub fn discover(
    sandbox: &mut Sandbox,
    target: &Target,
    candidates: &[ScAddress],
    bounds: Bounds,
) -> Result<PowerSurvey, DiscoveryError> {
    let started = Instant::now();
    let exports = assay_core::parse::parse_wasm_exports(&target.wasm)
        .map_err(|e| DiscoveryError::Malformed(e.to_string()))?;
    let spec = spec::Spec::read(&target.wasm);
    let mut observer = Observer::new(&target.contract);
    let deadline = started + bounds.budget;
    let (mut world, set_up_cut) = set_up_world(
        sandbox,
        &mut observer,
        target,
        candidates,
        &exports,
        &spec,
        deadline,
    );
    let functions: Vec<&assay_core::parse::ExportedFunction> = exports
        .iter()
        .filter(|e| !NOT_PROBED.contains(&e.name.as_str()))
        .collect();
    let constants = constants::read(&target.wasm);
    let search = Search {
        target,
        functions: &functions,
        spec: &spec,
        constants: &constants,
        bounds,
        started,
    };
    let mut survey = search.run(sandbox, &mut observer, &mut world)?;
    survey.cut.splice(0..0, set_up_cut);
    Ok(PowerSurvey {
        wasm_hash: hex::encode(world.own_hash),
        ledger: world.ledger,
        probed: functions.iter().map(|f| f.name.clone()).collect(),
        invocations: survey.invocations,
        holders: world.holders.iter().map(strkey_of).collect(),
        powers: survey.powers,
        unclassified: survey
            .unclassified
            .into_iter()
            .filter(|(f, _)| !survey.classified.contains(f))
            .map(|(function, by)| UnclassifiedWrite {
                function,
                authorized_by: by.iter().map(|a| authority::resolve(sandbox, a)).collect(),
            })
            .collect(),
        cut: survey.cut,
        unobservable: survey.unobservable,
        reach: Some(survey.reach),
    })
}

/// The parties discovery works with, and where the time budget cut reading them. Holders: the richest of
/// the candidates and of the parties the contract names (an admin often holds the supply), else a fresh
/// address a mint may fund later.
#[allow(clippy::too_many_arguments)]
fn set_up_world(
    sandbox: &mut Sandbox,
    observer: &mut Observer,
    target: &Target,
    candidates: &[ScAddress],
    exports: &[assay_core::parse::ExportedFunction],
    spec: &spec::Spec,
    deadline: Instant,
) -> (World, Option<String>) {
    let placeholder = sandbox.install_code(&assay_localnet::placeholder_wasm());
    let own_hash: [u8; 32] = Sha256::digest(&target.wasm).into();
    let fresh: Vec<ScAddress> = (0..3).map(fresh_account).collect();
    // Nobody else holds these: their balances and allowances are absent upstream without asking.
    sandbox.made_up(fresh.iter().cloned());
    let (authorities, roles, cut) = observer.authorities(sandbox, exports, spec, deadline);
    let mut pool: Vec<ScAddress> = candidates.to_vec();
    for a in &authorities {
        if !pool.contains(a) {
            pool.push(a.clone());
        }
    }
    let mut rich: Vec<(ScAddress, i128)> = pool
        .iter()
        .filter_map(|a| Some((a.clone(), observer.balance(sandbox, a)?)))
        .filter(|(_, b)| *b > 0)
        .collect();
    rich.sort_by_key(|r| std::cmp::Reverse(r.1));
    let mut holders: Vec<ScAddress> = rich.iter().take(2).map(|(a, _)| a.clone()).collect();
    if holders.is_empty() {
        holders.push(fresh[0].clone());
    }
    let mut world = World {
        token: target.contract.clone(),
        holders,
        recipient: fresh[1].clone(),
        second_recipient: None,
        fresh,
        authorities,
        roles,
        placeholder,
        own_hash,
        ledger: sandbox.ledger(),
    };
    world.prefer_plain_holder(sandbox, observer);
    world.give_second_holder(sandbox, observer);
    world.choose_recipient(sandbox);
    (world, cut)
}

/// One discovery's search: passes over the functions until a funded holder was watched (at most two).
struct Search<'a> {
    target: &'a Target,
    functions: &'a [&'a assay_core::parse::ExportedFunction],
    spec: &'a spec::Spec,
    constants: &'a constants::ModuleConstants,
    bounds: Bounds,
    started: Instant,
}

impl Search<'_> {
    fn run(
        &self,
        sandbox: &mut Sandbox,
        observer: &mut Observer,
        world: &mut World,
    ) -> Result<Survey, DiscoveryError> {
        let mut pass = 0;
        loop {
            pass += 1;
            let funded = world
                .holders
                .first()
                .and_then(|h| observer.balance(sandbox, h))
                .is_some_and(|b| b > 0);
            let mut survey = Survey::default();
            survey.run(
                sandbox,
                observer,
                world,
                self.functions,
                self.spec,
                self.constants,
                self.bounds,
                self.started,
            )?;
            if funded || pass > 1 {
                if !funded {
                    survey.unobservable = Some(
                        "no address held units: neither the given or discovered holders nor a supply-creating \
                         call observed here could fund one, so no power over a balance could be observed"
                            .into(),
                    );
                }
                return Ok(survey);
            }
            // Nobody held units: fund the fresh holder through a supply-creating call discovery observed, then
            // search again with a holder whose balance can be watched.
            if let Err(why) = self.fund_holder(sandbox, observer, world, &survey) {
                survey.unobservable = Some(why.to_string());
                return Ok(survey);
            }
        }
    }

    /// Funds the first holder through the supply-creating call `survey` observed; the reason when it cannot.
    fn fund_holder(
        &self,
        sandbox: &mut Sandbox,
        observer: &mut Observer,
        world: &mut World,
        survey: &Survey,
    ) -> Result<(), Unfunded> {
        let Some((function, args)) = survey.funding.clone() else {
            return Err(Unfunded::NoSupplyCall);
        };
        let base = sandbox.checkpoint();
        let call = sandbox.invoke(&self.target.contract, &function, args);
        let holder = world.holders[0].clone();
        let funded = call.succeeded() && observer.balance(sandbox, &holder).is_some_and(|b| b > 0);
        if !funded {
            sandbox.restore(&base);
            return Err(Unfunded::CallFundedNobody { function });
        }
        world.give_second_holder(sandbox, observer);
        world.choose_recipient(sandbox);
        Ok(())
    }
}

/// What one pass over the functions found.
#[derive(Default)]
struct Survey {
    invocations: u32,
    powers: Vec<ObservedPower>,
    /// Functions with at least one classified effect.
    classified: BTreeSet<String>,
    /// Privileged writers with no classified effect so far, and who authorized them.
    unclassified: BTreeMap<String, Vec<ScAddress>>,
    /// Functions a call of which was shown to be its authorizers' own act ([`own_act`]).
    own_acts: BTreeSet<String>,
    /// Privileged writes of no effect no plain party was at hand to compare with, and who authorized them.
    unchecked: BTreeMap<String, Vec<ScAddress>>,
    cut: Vec<String>,
    unobservable: Option<String>,
    /// A call that created supply for the first holder, to fund it when nobody held units.
    funding: Option<(String, Vec<ScVal>)>,
    /// Privileged writes of no observed effect, to probe again from the state they left.
    preparers: Vec<Preparer>,
    /// Privileged writers left out by [`MAX_PREPARERS`].
    preparers_left_out: Vec<String>,
    /// Every call of the pass from its base state, by function and arguments: a sequence's second call that
    /// reads nothing its preparing write changed runs the same from that write's state.
    first_calls: BTreeMap<(String, Vec<u8>), assay_localnet::Call>,
    /// Argument sets refused at the ledger's time, to try again with the clock moved forward.
    refused: Vec<beyond::Refused>,
    /// How far the search went past today's clock and values.
    reach: Reach,
}

impl Survey {
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        sandbox: &mut Sandbox,
        observer: &mut Observer,
        world: &World,
        functions: &[&assay_core::parse::ExportedFunction],
        spec: &spec::Spec,
        constants: &constants::ModuleConstants,
        bounds: Bounds,
        started: Instant,
    ) -> Result<(), DiscoveryError> {
        let base = sandbox.checkpoint();
        let before = observer.observe(sandbox, world);
        let candidates = Candidates::new(world, spec, before.holder_balance(world));
        for (n, function) in functions.iter().enumerate() {
            if started.elapsed() > bounds.budget {
                for f in &functions[n..] {
                    self.cut.push(format!("{}: {BUDGET_CUT}", f.name));
                }
                break;
            }
            let built = candidates.for_function(&function.name, function.arity);
            if built.cut {
                self.cut
                    .push(format!("{}: {}", function.name, ARGUMENTS_CUT));
            }
            let mut seen_writes = BTreeSet::new();
            let mut refused = Vec::new();
            let (mut tried, mut answered) = (0usize, 0usize);
            let mut out_of_time = false;
            let mut combinations = Combinations::new(&built.positions);
            for args in combinations.by_ref().take(bounds.per_function) {
                tried += 1;
                if started.elapsed() > bounds.budget {
                    self.cut.push(format!(
                        "{}: {BUDGET_CUT} after {tried} invocations",
                        function.name
                    ));
                    out_of_time = true;
                    break;
                }
                sandbox.restore(&base);
                self.invocations += 1;
                let call = sandbox.invoke(&world.token, &function.name, args.clone());
                if let Some(e) = &call.upstream_error {
                    return Err(DiscoveryError::Upstream(e.clone()));
                }
                self.first_calls
                    .insert(call_key(&function.name, &args), call.clone());
                if call.succeeded() {
                    answered += 1;
                } else if refused.len() < beyond::LATER_SETS_PER_FUNCTION {
                    refused.push(args.clone());
                }
                if !call.succeeded() || call.writes.is_empty() {
                    continue;
                }
                if !seen_writes.insert(fingerprint(&call)) {
                    continue; // the same state as an earlier argument set: the same effect
                }
                let authorizers = observe::authorizers(&call.auth);
                let after = if before.unchanged_by(&call) {
                    before.clone()
                } else {
                    observer.observe_after(sandbox, world, &before, &call)
                };
                let effects = classify(world, &before, &after, &call, &authorizers);
                if effects.is_empty() {
                    if privileged(&function.name, &authorizers, &args, world) {
                        // Probed again from its state even when it is the party's own act: a second
                        // call may act on what it wrote.
                        self.prepare(sandbox, &function.name, &authorizers, &call);
                        self.privileged_write(
                            sandbox,
                            (&base, &before),
                            world,
                            &function.name,
                            &args,
                            &call,
                        );
                    }
                    continue;
                }
                self.classified.insert(function.name.clone());
                self.record(
                    sandbox,
                    &function.name,
                    &args,
                    &call,
                    &authorizers,
                    effects,
                    world,
                );
            }
            if !out_of_time && answered == 0 && !SEP41_WRITES.contains(&function.name.as_str()) {
                self.cut.push(refused_every_set(&function.name, tried));
            }
            if !SEP41_WRITES.contains(&function.name.as_str()) {
                self.refused
                    .extend(refused.into_iter().map(|args| beyond::Refused {
                        function: function.name.clone(),
                        args,
                        every_set: answered == 0,
                    }));
            }
            if tried >= bounds.per_function && combinations.next().is_some() {
                self.cut.push(format!(
                    "{}: stopped after {} argument sets (the per-function bound)",
                    function.name, bounds.per_function
                ));
            }
        }
        self.later(sandbox, observer, world, &base, bounds, started)?;
        self.settle_own_acts();
        self.module_values(
            sandbox,
            observer,
            world,
            functions,
            &candidates,
            constants,
            &base,
            &before,
            bounds,
            started,
        )?;
        self.sequences(
            sandbox,
            observer,
            world,
            functions,
            &candidates,
            bounds,
            started,
        )?;
        sandbox.restore(&base);
        Ok(())
    }

    /// Argument sets refused at the ledger's time, tried again with the clock moved forward; a power shown
    /// there is recorded with the earliest time it works from (see [`beyond`]).
    fn later(
        &mut self,
        sandbox: &mut Sandbox,
        observer: &mut Observer,
        world: &World,
        base: &assay_localnet::Checkpoint,
        bounds: Bounds,
        started: Instant,
    ) -> Result<(), DiscoveryError> {
        let today = sandbox.clock();
        let (mut sets, cut) = beyond::later_sets(std::mem::take(&mut self.refused));
        self.reach.later_sets = sets.len() as u32;
        self.reach.later_cut = cut;
        if cut {
            self.cut.push(format!(
                "later clock: only the first {} refused argument sets re-probed (the bound)",
                beyond::MAX_LATER_SETS
            ));
        }
        let mut previous = 0u64;
        for offset in beyond::LATER_OFFSETS {
            if sets.is_empty() {
                break;
            }
            if started.elapsed() > bounds.budget {
                self.reach.later_cut = true;
                self.cut.push(format!("later clock: {BUDGET_CUT}"));
                break;
            }
            self.reach.later_offsets.push(offset);
            let at = today.later(offset);
            sandbox.restore(base);
            sandbox.set_clock(at);
            let before = observer.observe(sandbox, world);
            let mut still_refused = Vec::new();
            for set in sets {
                if started.elapsed() > bounds.budget {
                    self.reach.later_cut = true;
                    self.cut.push(format!("later clock: {BUDGET_CUT}"));
                    sandbox.set_clock(today);
                    sandbox.restore(base);
                    return Ok(());
                }
                sandbox.restore(base);
                sandbox.set_clock(at);
                self.invocations += 1;
                let call = sandbox.invoke(&world.token, &set.function, set.args.clone());
                if let Some(e) = call.upstream_error {
                    sandbox.set_clock(today);
                    return Err(DiscoveryError::Upstream(e));
                }
                if !call.succeeded() {
                    still_refused.push(set);
                    continue;
                }
                if call.writes.is_empty() {
                    continue;
                }
                let authorizers = observe::authorizers(&call.auth);
                let after = observer.observe(sandbox, world);
                let effects = classify(world, &before, &after, &call, &authorizers);
                if effects.is_empty() {
                    if privileged(&set.function, &authorizers, &set.args, world) {
                        self.privileged_write(
                            sandbox,
                            (base, &before),
                            world,
                            &set.function,
                            &set.args,
                            &call,
                        );
                    }
                    continue;
                }
                let mut probes = 0u32;
                let found = beyond::earliest(previous, offset, |t| {
                    probes += 1;
                    beyond::works_at(
                        sandbox,
                        base,
                        today.later(t),
                        &world.token,
                        &set.function,
                        &set.args,
                    )
                });
                self.invocations += probes;
                let from = beyond::usable_from(today, found);
                self.classified.insert(set.function.clone());
                let prefix = format!("{}: refused every argument set tried", set.function);
                self.cut.retain(|c| !c.starts_with(&prefix));
                let known = self.powers.len();
                self.record(
                    sandbox,
                    &set.function,
                    &set.args,
                    &call,
                    &authorizers,
                    effects,
                    world,
                );
                for p in &mut self.powers[known..] {
                    p.usable_from = from;
                }
            }
            sets = still_refused;
            previous = offset;
        }
        sandbox.set_clock(today);
        sandbox.restore(base);
        Ok(())
    }

    /// Functions no call showed a power of, tried with the module's own values (see [`beyond`]): its
    /// integer constants in integer positions, its instance storage's addresses in address positions.
    #[allow(clippy::too_many_arguments)]
    fn module_values(
        &mut self,
        sandbox: &mut Sandbox,
        observer: &mut Observer,
        world: &World,
        functions: &[&assay_core::parse::ExportedFunction],
        candidates: &Candidates,
        constants: &constants::ModuleConstants,
        base: &assay_localnet::Checkpoint,
        before: &observe::Observation,
        bounds: Bounds,
        started: Instant,
    ) -> Result<(), DiscoveryError> {
        sandbox.restore(base);
        let addresses = beyond::instance_addresses(sandbox, &world.token);
        self.reach.module_values = (constants.values.len().min(beyond::MODULE_VALUES)
            + addresses.len().min(beyond::INSTANCE_ADDRESSES))
            as u32;
        self.reach.module_cut = constants.values.len() > beyond::MODULE_VALUES
            || addresses.len() > beyond::INSTANCE_ADDRESSES;
        // The interface's writes last: a key is likelier in a function of the token's own.
        let mut order: Vec<&&assay_core::parse::ExportedFunction> = functions
            .iter()
            .filter(|f| !self.classified.contains(&f.name))
            .collect();
        order.sort_by_key(|f| SEP41_WRITES.contains(&f.name.as_str()));
        let mut calls = 0usize;
        for function in order {
            let built = candidates.for_function(&function.name, function.arity);
            let per_position = if SEP41_WRITES.contains(&function.name.as_str()) {
                beyond::INTERFACE_MODULE_VALUES
            } else {
                beyond::MODULE_VALUES
            };
            let sets = beyond::module_sets(
                &built.positions,
                &constants.values,
                per_position,
                &addresses,
            );
            let mut seen_writes = BTreeSet::new();
            for args in sets {
                if calls >= beyond::MAX_MODULE_CALLS || started.elapsed() > bounds.budget {
                    self.reach.module_cut = true;
                    self.cut.push(format!(
                        "module values: stopped at {}: the bound of {} invocations or the time budget",
                        function.name,
                        beyond::MAX_MODULE_CALLS
                    ));
                    self.reach.module_calls = calls as u32;
                    sandbox.restore(base);
                    return Ok(());
                }
                calls += 1;
                sandbox.restore(base);
                self.invocations += 1;
                let call = sandbox.invoke(&world.token, &function.name, args.clone());
                if let Some(e) = call.upstream_error {
                    return Err(DiscoveryError::Upstream(e));
                }
                if !call.succeeded() || call.writes.is_empty() {
                    continue;
                }
                if !seen_writes.insert(fingerprint(&call)) {
                    continue;
                }
                let authorizers = observe::authorizers(&call.auth);
                let after = observer.observe(sandbox, world);
                let effects = classify(world, before, &after, &call, &authorizers);
                if effects.is_empty() {
                    continue;
                }
                self.classified.insert(function.name.clone());
                // A module value made it work: the refusal of every other set is no longer the whole story.
                let prefix = format!("{}: refused every argument set tried", function.name);
                self.cut.retain(|c| !c.starts_with(&prefix));
                self.record(
                    sandbox,
                    &function.name,
                    &args,
                    &call,
                    &authorizers,
                    effects,
                    world,
                );
            }
        }
        self.reach.module_calls = calls as u32;
        sandbox.restore(base);
        Ok(())
    }

    /// A privileged write of no observed effect, made from `from` (the state and its observation): an
    /// unclassified write, unless it was its authorizers acting on their own state (see [`own_act`]), which
    /// is no power over others. A call no plain party was at hand to compare with is held back: it counts
    /// only if no other call of the function showed the party's own act ([`Survey::settle_own_acts`]).
    fn privileged_write(
        &mut self,
        sandbox: &mut Sandbox,
        from: (&assay_localnet::Checkpoint, &observe::Observation),
        world: &World,
        function: &str,
        args: &[ScVal],
        call: &assay_localnet::Call,
    ) {
        let authorizers = observe::authorizers(&call.auth);
        if self.unclassified.contains_key(function) {
            return; // already a power of its own: nothing to ask
        }
        let (base, before) = from;
        let own = own_act::acts_for_itself(
            sandbox,
            base,
            world,
            before,
            function,
            args,
            call,
            &authorizers,
        );
        match own {
            own_act::Own::Yes => {
                self.invocations += 1;
                self.own_acts.insert(function.to_string());
            }
            own_act::Own::Unchecked => {
                self.unchecked
                    .entry(function.to_string())
                    .or_insert(authorizers);
            }
            own_act::Own::No | own_act::Own::NotAsked => {
                self.invocations += u32::from(own == own_act::Own::No);
                self.unclassified
                    .entry(function.to_string())
                    .or_insert(authorizers);
            }
        }
    }

    /// Privileged writes no plain party could be compared with are unclassified, but for functions whose
    /// other calls showed the party's own act.
    fn settle_own_acts(&mut self) {
        for (function, by) in std::mem::take(&mut self.unchecked) {
            if !self.own_acts.contains(&function) {
                self.unclassified.entry(function).or_insert(by);
            }
        }
    }

    /// Keeps the state a privileged write of no observed effect left, to probe again from it.
    fn prepare(
        &mut self,
        sandbox: &Sandbox,
        function: &str,
        authorizers: &[ScAddress],
        call: &assay_localnet::Call,
    ) {
        if self.preparers.iter().any(|p| p.function == function) {
            return; // one state per function: its most likely argument set's
        }
        if self.preparers.len() >= 4 * MAX_PREPARERS {
            if !self.preparers_left_out.iter().any(|f| f == function) {
                self.preparers_left_out.push(function.to_string());
            }
            return;
        }
        self.preparers.push(Preparer {
            function: function.to_string(),
            authorizers: authorizers.to_vec(),
            state: sandbox.checkpoint(),
            written: call.writes.iter().map(|w| w.key.clone()).collect(),
        });
    }

    /// Depth two: from the state each privileged write left, every function is probed again, so a power
    /// that needs a preparing call (a record the second call acts on, an allowance the admin wrote for
    /// itself) is observed. An effect the second function showed alone is not reported again.
    #[allow(clippy::too_many_arguments)]
    fn sequences(
        &mut self,
        sandbox: &mut Sandbox,
        observer: &mut Observer,
        world: &World,
        functions: &[&assay_core::parse::ExportedFunction],
        candidates: &Candidates,
        bounds: Bounds,
        started: Instant,
    ) -> Result<(), DiscoveryError> {
        // A function one call already showed a power of prepares nothing new to look for.
        self.preparers
            .retain(|p| !self.classified.contains(&p.function));
        let beyond: Vec<String> = self
            .preparers
            .iter()
            .skip(MAX_PREPARERS)
            .map(|p| p.function.clone())
            .collect();
        self.preparers.truncate(MAX_PREPARERS);
        self.preparers_left_out.splice(0..0, beyond);
        self.preparers_left_out
            .retain(|f| !self.classified.contains(f));
        if !self.preparers_left_out.is_empty() {
            self.cut.push(format!(
                "sequences: not probed from the state {} left: the bound of {MAX_PREPARERS} preparing calls",
                self.preparers_left_out.join(", ")
            ));
        }
        let one_call: Vec<(String, &'static str)> = self
            .powers
            .iter()
            .map(|p| (p.function.clone(), p.effect.kind()))
            .collect();
        let preparers = std::mem::take(&mut self.preparers);
        let first_calls = std::mem::take(&mut self.first_calls);
        let per_function = bounds.per_function.min(SEQUENCE_SETS);
        let mut calls = 0usize;
        for (n, prep) in preparers.iter().enumerate() {
            sandbox.restore(&prep.state);
            let mid = observer.observe(sandbox, world);
            let stop = |calls: usize| -> Option<String> {
                let why = if calls >= MAX_SEQUENCE_CALLS {
                    format!("the bound of {MAX_SEQUENCE_CALLS} invocations")
                } else if started.elapsed() > bounds.budget {
                    "the time budget ran out".to_string()
                } else {
                    return None;
                };
                let left: Vec<&str> = preparers[n..].iter().map(|p| p.function.as_str()).collect();
                Some(format!(
                    "sequences: not all second calls probed from the state {} left: {why}",
                    left.join(", ")
                ))
            };
            for function in functions {
                let built = candidates.for_function(&function.name, function.arity);
                let mut seen_writes = BTreeSet::new();
                for args in Combinations::new(&built.positions).take(per_function) {
                    if let Some(cut) = stop(calls) {
                        self.cut.push(cut);
                        return Ok(());
                    }
                    calls += 1;
                    self.invocations += 1;
                    // The same call from the base state read no entry the preparing write changed, so from
                    // its state the host runs it the same (it is deterministic): its result, writes,
                    // authorizations and events are known. It runs again only when its writes change
                    // what the observation reads, to observe the state they leave.
                    let known = (first_calls.get(&call_key(&function.name, &args)))
                        .filter(|c| prep.untouched(&c.footprint))
                        .filter(|c| !c.succeeded() || c.writes.is_empty() || mid.unchanged_by(c));
                    let ran;
                    let call = match known {
                        Some(call) => call,
                        None => {
                            sandbox.restore(&prep.state);
                            ran = sandbox.invoke(&world.token, &function.name, args);
                            &ran
                        }
                    };
                    if let Some(e) = &call.upstream_error {
                        return Err(DiscoveryError::Upstream(e.clone()));
                    }
                    if !call.succeeded() || call.writes.is_empty() {
                        continue;
                    }
                    if !seen_writes.insert(fingerprint(call)) {
                        continue;
                    }
                    let second = observe::authorizers(&call.auth);
                    let after = if mid.unchanged_by(call) {
                        mid.clone()
                    } else {
                        observer.observe_after(sandbox, world, &mid, call)
                    };
                    for effect in classify(world, &mid, &after, call, &second) {
                        if effect
                            .holder()
                            .is_some_and(|h| prep.authorizers.contains(h))
                        {
                            continue; // the holder prepared it: its own doing, not a power over it
                        }
                        let effect = effect.into_core();
                        let kind = effect.kind();
                        let shown = one_call
                            .iter()
                            .any(|(f, k)| *f == function.name && *k == kind)
                            || self.powers.iter().any(|p| {
                                p.steps.last().is_some_and(|s| s.function == function.name)
                                    && p.effect.kind() == kind
                            });
                        if shown {
                            continue;
                        }
                        self.classified.insert(prep.function.clone());
                        let resolve = |by: &[ScAddress]| -> Vec<assay_core::powers::Authority> {
                            by.iter().map(|a| authority::resolve(sandbox, a)).collect()
                        };
                        let mut union = prep.authorizers.clone();
                        for a in &second {
                            if !union.contains(a) {
                                union.push(a.clone());
                            }
                        }
                        self.powers.push(ObservedPower {
                            function: format!("{} then {}", prep.function, function.name),
                            authorized_by: resolve(&union),
                            effect,
                            label: label_for(&function.name),
                            events: events_of(call),
                            steps: vec![
                                Step {
                                    function: prep.function.clone(),
                                    authorized_by: resolve(&prep.authorizers),
                                },
                                Step {
                                    function: function.name.clone(),
                                    authorized_by: resolve(&second),
                                },
                            ],
                            usable_from: None,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        sandbox: &mut Sandbox,
        function: &str,
        args: &[ScVal],
        call: &assay_localnet::Call,
        authorizers: &[ScAddress],
        effects: Vec<Effect>,
        world: &World,
    ) {
        for effect in effects {
            self.record_one(sandbox, function, args, call, authorizers, effect, world);
        }
    }

    /// Records one observed effect of `call` as a power (or, for a new holder, as the funding).
    #[allow(clippy::too_many_arguments)]
    fn record_one(
        &mut self,
        sandbox: &mut Sandbox,
        function: &str,
        args: &[ScVal],
        call: &assay_localnet::Call,
        authorizers: &[ScAddress],
        effect: Effect,
        world: &World,
    ) {
        let effect = effect.into_core();
        if let assay_core::powers::PowerEffect::CreatesSupply { credited, .. } = &effect {
            if self.funding.is_none()
                && world.holders.first().map(strkey_of).as_ref() == Some(credited)
            {
                self.funding = Some((function.to_string(), args.to_vec()));
            }
        }
        let kind = effect.kind();
        if let Some(known) = self
            .powers
            .iter_mut()
            .find(|p| p.function == function && p.effect.kind() == kind)
        {
            // One power per function and kind; a transfer fee keeps the largest share an argument set showed.
            use assay_core::powers::PowerEffect::TransferFee;
            let larger = matches!(
                (&known.effect, &effect),
                (TransferFee { share_bps: was, .. }, TransferFee { share_bps: now, .. }) if now > was
            );
            if larger {
                known.effect = effect;
                known.events = events_of(call);
            }
            return;
        }
        self.powers.push(ObservedPower {
            function: function.to_string(),
            authorized_by: authorizers
                .iter()
                .map(|a| authority::resolve(sandbox, a))
                .collect(),
            effect,
            label: label_for(function),
            events: events_of(call),
            steps: vec![],
            usable_from: None,
        });
    }
}

/// The state a call left, as bytes: two calls that wrote the same had the same effect.
fn fingerprint(call: &assay_localnet::Call) -> Vec<u8> {
    call.writes
        .iter()
        .flat_map(|w| {
            w.after
                .as_ref()
                .and_then(|e| e.to_xdr(Limits::none()).ok())
                .unwrap_or_default()
        })
        .collect()
}

/// The contract events a call emitted (base64 XDR), kept for the SEP-41 event checks.
fn events_of(call: &assay_localnet::Call) -> Vec<String> {
    call.events
        .iter()
        .filter_map(|e| e.to_xdr_base64(Limits::none()).ok())
        .collect()
}

/// A privileged write of no observed effect, and the state it left (the first step of a sequence).
struct Preparer {
    function: String,
    authorizers: Vec<ScAddress>,
    state: assay_localnet::Checkpoint,
    /// The entries it changed: its state is the base state but for these.
    written: BTreeSet<stellar_xdr::LedgerKey>,
}

impl Preparer {
    /// Whether a call that touched `footprint` from the base state read none of the entries this one changed.
    fn untouched(&self, footprint: &stellar_xdr::LedgerFootprint) -> bool {
        (footprint.read_only.iter())
            .chain(footprint.read_write.iter())
            .all(|k| !self.written.contains(k))
    }
}

/// A call's key among the pass's calls: the function and its arguments as XDR.
fn call_key(function: &str, args: &[ScVal]) -> (String, Vec<u8>) {
    let args: Vec<u8> = (args.iter())
        .flat_map(|a| a.to_xdr(Limits::none()).unwrap_or_default())
        .collect();
    (function.to_string(), args)
}

/// Privileged writes whose state discovery probes again from (one per function, the first seen, of
/// functions no single call showed a power of; up to four times as many are kept during the pass).
const MAX_PREPARERS: usize = 8;
/// Argument sets per function for a sequence's second call.
const SEQUENCE_SETS: usize = 32;
/// Invocations all sequences of one pass may take.
const MAX_SEQUENCE_CALLS: usize = 4_000;

/// Why a function's arguments are fewer than its types ask: the spec's types multiply past the size bound.
const ARGUMENTS_CUT: &str =
    "arguments built up to the size bound (its spec's types nest or multiply \
     past what a probe builds); probed with what was built";

/// The bound line of a function that refused every argument set discovery built: what it can do was not
/// observed (listed, never read as clear).
fn refused_every_set(function: &str, tried: usize) -> String {
    if tried == 0 {
        format!("{function}: no argument set could be built for its types; not probed")
    } else {
        format!(
            "{function}: refused every argument set tried ({tried}); what it can do was not observed"
        )
    }
}

/// Whether a call that wrote state was a privileged one: it asked the authorization of a party the
/// contract itself names (an authority), or of an address that was not one of its arguments (a stored
/// one). A SEP-41 write authorized by the party it spends for is the interface at work.
fn privileged(function: &str, authorizers: &[ScAddress], args: &[ScVal], world: &World) -> bool {
    if SEP41_WRITES.contains(&function) {
        return false;
    }
    let named: BTreeSet<&ScAddress> = args
        .iter()
        .filter_map(|a| match a {
            ScVal::Address(a) => Some(a),
            _ => None,
        })
        .collect();
    authorizers
        .iter()
        .any(|a| world.authorities.contains(a) || !named.contains(a))
}

/// A fresh account address, the same in every run: nobody's key, never a party of the token.
fn fresh_account(n: u8) -> ScAddress {
    let seed: [u8; 32] =
        Sha256::digest([b"assay power discovery fresh party ".as_slice(), &[n]].concat()).into();
    ScAddress::Account(assay_chain::account_id(seed))
}
