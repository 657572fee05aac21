//! Cost benchmark of the registry, its verdict store and the gate, from their built `.wasm`, in one
//! Env run. The gate reads the store, as consumers do.
//!
//!     cargo run -p assay-gate-example --example read_cost
//!
//! Prints CPU instructions and memory bytes per call as the Soroban host meters them
//! (`env.cost_estimate()`), the Stellar Asset Contract's `balance` and `transfer` as baselines
//! measured in the same run, the `.wasm` sizes, and a full `attest_many` batch against the
//! per-transaction limits. Figures come from the host's cost model, not wall-clock time.
//!
//! Issue #35, item 5: every cost target (the store's reads against the seeds' registry and the read
//! floor, `attest` against the seeds', a full batch against every limit) with its ratio and MET / NOT
//! MET; the breakdown of the calls they are measured on (instantiation: fixed, per import, per
//! export; execution); and, for each target NOT MET, the lower bound that explains it and the
//! design that would reach it, computed from the same run.
//!
//! A second baseline, `fixtures/read-floor`, is the least a WASM contract can do to answer a read
//! (one persistent entry): the part of `get_safety` that any WASM contract pays is measured, not
//! assumed.
use assay_gate_example::GateClient;
use assay_registry::{
    testutils::{
        build_wasm, gate_wasm, live_code, new_env_mocking_all_auths, new_token, read_wasm,
        register_registry, registry_wasm, verdict_store_wasm, Build,
    },
    Attestation, SafetyRegistryClient, VerdictStoreInterfaceClient, MAX_ASSESS_ASSETS,
    MAX_BATCH_SIZE,
};
use read_floor::ReadFloorClient;
use soroban_sdk::{
    testutils::{Address as _, Ledger as _},
    token::{StellarAssetClient, TokenClient},
    xdr::ContractCostType,
    Address, BytesN, Env, Vec,
};

// Per-transaction limits (live network settings, protocol 23+; docs/contract-interface.md).
const TX_INSTRUCTIONS: i64 = 400_000_000;
const TX_MEMORY_BYTES: i64 = 41_943_040;
const TX_EVENTS_BYTES: u32 = 16_384;
const TX_WRITE_ENTRIES: u32 = 200;
const TX_WRITE_BYTES: u32 = 132_096;
const TX_FOOTPRINT_ENTRIES: u32 = 400;

struct Row {
    name: String,
    instructions: i64,
    mem_bytes: i64,
}

fn measure(env: &Env, rows: &mut std::vec::Vec<Row>, name: &str, call: impl FnOnce()) {
    call();
    let r = env.cost_estimate().resources();
    rows.push(Row {
        name: name.to_string(),
        instructions: r.instructions,
        mem_bytes: r.mem_bytes,
    });
}

/// The five cost types that used the most CPU in the last invocation.
fn top_costs(env: &Env) -> std::vec::Vec<(String, u64)> {
    let budget = env.cost_estimate().budget();
    let mut costs: std::vec::Vec<_> = ContractCostType::VARIANTS
        .iter()
        .map(|t| (format!("{t:?}"), budget.tracker(*t).cpu))
        .filter(|(_, cpu)| *cpu > 0)
        .collect();
    costs.sort_by_key(|c| std::cmp::Reverse(c.1));
    costs.truncate(5);
    costs
}

/// What instantiating a WASM module costs in the last invocation: the fixed part, and the cost of
/// one import and of one export (the host meters both per item).
struct InstantiationCosts {
    fixed: u64,
    per_import: u64,
    per_export: u64,
}

fn instantiation_costs(env: &Env) -> InstantiationCosts {
    let budget = env.cost_estimate().budget();
    let per_item = |t: ContractCostType| {
        let tracker = budget.tracker(t);
        tracker.cpu / tracker.inputs.unwrap_or(1).max(1)
    };
    InstantiationCosts {
        fixed: budget
            .tracker(ContractCostType::InstantiateWasmInstructions)
            .cpu,
        per_import: per_item(ContractCostType::InstantiateWasmImports),
        per_export: per_item(ContractCostType::InstantiateWasmExports),
    }
}

/// `target/wasm/read_floor.wasm`, built through scripts/build-wasm.sh like the contracts.
fn read_floor_wasm() -> std::vec::Vec<u8> {
    if let Err(e) = build_wasm(&["read-floor"]) {
        panic!("{e}");
    }
    read_wasm("read_floor")
}

/// `target/wasm/upgradable_token.wasm`: a custom token, whose verdict binds its WASM hash.
fn custom_token_wasm() -> std::vec::Vec<u8> {
    if let Err(e) = build_wasm(&["upgradable-token"]) {
        panic!("{e}");
    }
    read_wasm("upgradable_token")
}

/// The seeds' four-function registry's `get_safety` (issue #27, item 4's baseline).
const SEED_GET_SAFETY: i64 = 328_798;

/// Where one invocation's CPU went, from the host's per-cost-type trackers. Only the parts the
/// host charges while the contract runs are taken from the trackers: after the call the host
/// serialises every footprint entry (the registry's code included) to account for storage, and
/// those `ValSer`/`MemCpy`/`MemAlloc` charges land in the same trackers but not in the call's
/// total, so "the rest" is the total minus the exact parts.
struct Breakdown {
    total: i64,
    /// Every `InstantiateWasm*` cost type: building the module's instance (per import, export,
    /// function, data byte, plus the fixed part).
    instantiation: i64,
    /// Modules instantiated (the fixed part is charged once per module).
    modules: u64,
    /// `InstantiateWasmInstructions`: the fixed part, whatever the module's size.
    fixed: i64,
    imports: u64,
    /// `InstantiateWasmImports`: what the imports cost.
    imports_cpu: i64,
    exports: u64,
    /// `InstantiateWasmExports`: what the exports cost.
    exports_cpu: i64,
    /// `WasmInsnExec`: the contract's own instructions, run in the VM.
    wasm_logic: i64,
    /// `DispatchHostFunction` calls: every host function the contract called.
    host_calls: u64,
}

impl Breakdown {
    fn of_last_call(env: &Env) -> Self {
        let budget = env.cost_estimate().budget();
        let cpu = |t: ContractCostType| budget.tracker(t).cpu as i64;
        let instantiation = ContractCostType::VARIANTS
            .iter()
            .filter(|t| format!("{t:?}").starts_with("InstantiateWasm"))
            .map(|t| cpu(*t))
            .sum();
        let count = |t: ContractCostType| budget.tracker(t).inputs.unwrap_or(0);
        Breakdown {
            total: env.cost_estimate().resources().instructions,
            instantiation,
            modules: budget
                .tracker(ContractCostType::InstantiateWasmInstructions)
                .iterations,
            fixed: cpu(ContractCostType::InstantiateWasmInstructions),
            imports: count(ContractCostType::InstantiateWasmImports),
            imports_cpu: cpu(ContractCostType::InstantiateWasmImports),
            exports: count(ContractCostType::InstantiateWasmExports),
            exports_cpu: cpu(ContractCostType::InstantiateWasmExports),
            wasm_logic: cpu(ContractCostType::WasmInsnExec),
            // The host charges this cost type once per dispatched host function.
            host_calls: budget
                .tracker(ContractCostType::DispatchHostFunction)
                .iterations,
        }
    }

    /// What the call did besides instantiating and running its own instructions: host
    /// functions (storage, `executable()`, conversions), memory, the invocation itself.
    fn rest(&self) -> i64 {
        self.total - self.instantiation - self.wasm_logic
    }

    /// Everything but instantiation: the call's own code, its host calls, memory, the invocation.
    fn execution(&self) -> i64 {
        self.total - self.instantiation
    }

    /// The instantiation parts on one line: fixed, per import, per export, and the rest
    /// (functions, globals, data segments).
    fn instantiation_line(&self) -> String {
        let per = |cpu: i64, n: u64| cpu / n.max(1) as i64;
        format!(
            "instantiation {} = fixed {} ({} module{}) + {} imports x {} + {} exports x {} + \
             functions, globals and data {}",
            self.instantiation,
            self.fixed,
            self.modules,
            if self.modules == 1 { "" } else { "s" },
            self.imports,
            per(self.imports_cpu, self.imports),
            self.exports,
            per(self.exports_cpu, self.exports),
            self.instantiation - self.fixed - self.imports_cpu - self.exports_cpu
        )
    }

    /// The execution parts on one line.
    fn execution_line(&self) -> String {
        format!(
            "execution {} = own code {} + host calls, memory and the invocation {} ({} host \
             functions called)",
            self.execution(),
            self.wasm_logic,
            self.rest(),
            self.host_calls
        )
    }
}

/// The seeds' `attest` (issue #35, item 5's baseline for `attest`). No measured figure is recorded
/// in this repository: issue #35 gives `attest` (1,030,945 then) as 2.4x the seeds', so this is
/// 1,030,945 / 2.4, to the instruction.
const SEED_ATTEST: i64 = 429_560;

/// One of issue #35's item 5 cost targets: `measured` at most `bound` times `baseline`.
struct Target<'a> {
    what: &'a str,
    measured: i64,
    baseline_name: &'a str,
    baseline: i64,
    bound: f64,
}

impl Target<'_> {
    fn ratio(&self) -> f64 {
        self.measured as f64 / self.baseline as f64
    }

    fn met(&self) -> bool {
        self.ratio() <= self.bound
    }

    /// The most `measured` may be.
    fn limit(&self) -> i64 {
        (self.baseline as f64 * self.bound) as i64
    }

    fn print(&self) {
        println!(
            "  {:<36} {:>9} = {:.2}x {} ({}); target <= {:.1}x ({}): {}",
            self.what,
            self.measured,
            self.ratio(),
            self.baseline_name,
            self.baseline,
            self.bound,
            self.limit(),
            if self.met() { "MET" } else { "NOT MET" }
        );
    }
}

/// What issue #35's item 5 is measured on, from one Env: the rows, and where the CPU of the store's
/// reads, the read floor's read and `attest` goes.
struct Item5<'a> {
    rows: &'a [Row],
    store_custom: &'a Breakdown,
    store_sac: &'a Breakdown,
    floor: &'a Breakdown,
    attest: &'a Breakdown,
    /// A full batch's use of each per-transaction limit: (name, used, limit).
    limits: &'a [(&'a str, f64, f64)],
}

/// Issue #35, item 5: every target with its measured ratio, MET or NOT MET; the breakdown of the
/// calls it is measured on; and, for each target NOT MET, the lower bound that explains it and the
/// design that would reach it, computed from the same figures.
fn print_issue_35_targets(m: &Item5) {
    let find = |name: &str| m.rows.iter().find(|r| r.name == name).unwrap().instructions;
    let floor = find("WASM read floor (baseline)");
    let seeds = "the seeds' registry";
    let reads = [
        ("store custom get_safety", 0.5),
        ("store custom is_safe", 0.5),
        ("store get_safety (SAC)", 0.6),
        ("store is_safe (SAC)", 0.6),
    ];
    let mut targets: std::vec::Vec<Target> = reads
        .iter()
        .map(|(name, bound)| Target {
            what: name,
            measured: find(name),
            baseline_name: seeds,
            baseline: SEED_GET_SAFETY,
            bound: *bound,
        })
        .collect();
    // The floor's bound is the custom token's (0.5x the seeds' is 1.46x the floor); a SAC's read
    // also calls the SAC's `admin()`, which its 0.6x allows for.
    for name in ["store custom get_safety", "store custom is_safe"] {
        targets.push(Target {
            what: name,
            measured: find(name),
            baseline_name: "the read floor",
            baseline: floor,
            bound: 1.5,
        });
    }
    targets.push(Target {
        what: "registry attest (publishes to the store)",
        measured: find("registry attest"),
        baseline_name: "the seeds' attest",
        baseline: SEED_ATTEST,
        bound: 1.5,
    });
    println!("\nissue #35 item 5 targets (CPU instructions, one Env, from WASM):");
    for t in &targets {
        t.print();
    }
    let (worst, share) = m
        .limits
        .iter()
        .map(|(name, used, limit)| (*name, used / limit))
        .fold(("", 0.0), |a, b| if b.1 > a.1 { b } else { a });
    println!(
        "  {:<36} highest per-transaction limit {worst} at {:.0}%; target <= 70%: {}",
        format!("attest_many of {MAX_BATCH_SIZE} (the cap)"),
        share * 100.0,
        if share <= 0.7 { "MET" } else { "NOT MET" }
    );
    println!(
        "  (the seeds' attest, {SEED_ATTEST}, is derived: issue #35 gives attest's 1,030,945 as 2.4x \
         it; no measured figure is recorded)"
    );

    println!("\nbreakdown (CPU instructions):");
    for (label, b) in [
        ("read floor get", m.floor),
        ("store custom get_safety", m.store_custom),
        ("store get_safety (SAC)", m.store_sac),
        ("registry attest", m.attest),
    ] {
        println!("  {label}: total {}", b.total);
        println!("    {}", b.instantiation_line());
        println!("    {}", b.execution_line());
    }

    // Lower bounds, from the measured parts. A read of the store pays the store's instantiation
    // (all of it: it grows with the module, not with the call) and at least what the floor's read
    // executes (one persistent entry found by address); a read that checks the code binding also
    // asks for the asset's executable.
    let per_import = m.store_custom.imports_cpu / m.store_custom.imports.max(1) as i64;
    let per_export = m.store_custom.exports_cpu / m.store_custom.exports.max(1) as i64;
    let unmet: std::vec::Vec<&Target> = targets.iter().filter(|t| !t.met()).collect();
    if unmet.is_empty() {
        return;
    }
    println!("\nwhy the targets NOT MET are not met, and what would meet them:");
    // Any read of the store pays its instantiation and at least what the floor's read executes; a
    // SAC's read also calls the SAC's `admin()` (what its execution costs beyond a custom token's).
    let read_bound = m.store_custom.instantiation + m.floor.execution();
    let admin_call = m.store_sac.execution() - m.store_custom.execution();
    for t in unmet.iter().filter(|t| t.what.starts_with("store")) {
        let sac = t.what.contains("SAC");
        let (b, lower, bound_name) = if sac {
            (
                m.store_sac,
                read_bound + admin_call,
                "instantiation + the floor's execution + the SAC's admin() call",
            )
        } else {
            (
                m.store_custom,
                read_bound,
                "instantiation + the floor's execution",
            )
        };
        // With this read's own execution, how many imports the module may keep at its exports.
        let room = t.limit() - b.execution() - (b.instantiation - b.imports_cpu);
        let max_imports = room.div_euclid(per_import);
        println!(
            "  {} vs {}: lower bound {bound_name} = {lower} = {:.2}x (target {}); with this read's \
             execution ({}) and {} exports the module may import at most {} host functions (it \
             imports {}){}",
            t.what,
            t.baseline_name,
            lower as f64 / t.baseline as f64,
            t.limit(),
            b.execution(),
            b.exports,
            max_imports.max(0),
            b.imports,
            if max_imports < 0 {
                ": none can, the fixed part, the exports and the execution already exceed it"
            } else {
                ""
            }
        );
    }
    if let Some(t) = unmet.iter().find(|t| t.what == "store custom get_safety") {
        // The least module that still answers get_safety and is_safe and takes the registry's
        // publish: 4 exports (those three and the memory) and 9 imports (the entry's presence and
        // value, unpacking it, the executable and the comparison, the clock, the write, the
        // registry's authorisation, the standing's TTL). Its functions, globals and data are taken
        // as the store's.
        let (exports, imports) = (4, 9);
        let other = m.store_custom.instantiation
            - m.store_custom.fixed
            - m.store_custom.imports_cpu
            - m.store_custom.exports_cpu;
        let instantiation =
            m.store_custom.fixed + exports * per_export + imports * per_import + other;
        let design = instantiation + m.store_custom.execution();
        println!(
            "  design: a store exporting only get_safety, is_safe and publish ({exports} exports with \
             the memory; {imports} imports: has/get/put data, unpack, executable, compare, clock, \
             require_auth, extend TTL) instantiates for {instantiation}; with this read's execution \
             a custom get_safety would cost {design} = {:.2}x the seeds' registry ({}), and it meets \
             {:.1}x once the read executes in at most {} (the floor's read executes in {}): a \
             standing entry holding only the answer and its binding. It drops is_safe_masked, assess, \
             assess_many, version and registry, which the documented interface (and the gate's \
             assess) needs",
            design as f64 / SEED_GET_SAFETY as f64,
            if design <= t.limit() { "MET" } else { "NOT MET" },
            t.bound,
            t.limit() - instantiation,
            m.floor.execution()
        );
    }
    if let Some(t) = unmet.iter().find(|t| t.what.starts_with("registry attest")) {
        let lower = m.attest.instantiation;
        println!(
            "  {}: the two modules' instantiation alone (the registry's and the store's) is {lower} = \
             {:.2}x the seeds' attest; the {} left under the target ({}) must pay the code-binding \
             check, the verdict's write and event, the fold and the store's publish, which execute \
             in {} here. Reaching it needs one module on the write path (the standing written where \
             the verdict is), and that module is then what every read instantiates: the read target \
             wants that module small and the write target wants it to hold the write, so one of the \
             two gives",
            t.what,
            lower as f64 / SEED_ATTEST as f64,
            t.limit() - lower,
            t.limit(),
            m.attest.execution()
        );
    }
}

fn batch(env: &Env, n: u32) -> Vec<Attestation> {
    let mut v = Vec::new(env);
    for i in 0..n {
        // A token each: every element reads its asset's live code.
        let asset = new_token(env);
        v.push_back(Attestation {
            code: live_code(&asset),
            asset,
            severity: 4,
            flags: 0x1ff, // bits 0-8: the largest flags value an element of the old ABI carried
            evidence_hash: BytesN::from_array(env, &[i as u8; 32]),
        });
    }
    // Deploying the tokens spent the test Env's budget; the measured call gets a fresh one.
    env.cost_estimate().budget().reset_unlimited();
    v
}

/// Issue #27, item 4: where a custom token's `get_safety` spends its CPU, against `version` (the
/// same module, no storage, no logic) and the read floor, and what that bounds.
fn print_read_breakdown(version: &Breakdown, get: &Breakdown, floor: &Breakdown) {
    let target = SEED_GET_SAFETY * 3 / 4;
    println!("\nwhere custom get_safety's CPU goes (CPU instructions):");
    println!(
        "  {:<34} {:>11} {:>11} {:>11}",
        "", "read floor", "version", "get_safety"
    );
    let row = |name: &str, f: &dyn Fn(&Breakdown) -> String| {
        println!(
            "  {name:<34} {:>11} {:>11} {:>11}",
            f(floor),
            f(version),
            f(get)
        );
    };
    row("instantiation (InstantiateWasm*)", &|b| {
        b.instantiation.to_string()
    });
    row("  imports / exports instantiated", &|b| {
        format!("{}/{}", b.imports, b.exports)
    });
    row("contract's own code (WasmInsnExec)", &|b| {
        b.wasm_logic.to_string()
    });
    row("host calls, memory, invocation", &|b| b.rest().to_string());
    row("  host functions called", &|b| b.host_calls.to_string());
    row("total", &|b| b.total.to_string());
    let read_work = get.total - version.total;
    println!(
        "  the read's own work (get_safety - version): {read_work} ({} in the contract's code, {} in \
         host calls: the verdicts entry, each verdict's admission, the token's executable, \
         conversions)",
        get.wasm_logic - version.wasm_logic,
        get.rest() - version.rest()
    );
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "  this module's instantiation alone: {} = {:.2}x the seeds' registry; version (instantiation \
         and an empty call) {} = {:.2}x; the 0.75x target is {target}: {} for any read of this \
         module, whatever its read path does",
        version.instantiation,
        version.instantiation as f64 / SEED_GET_SAFETY as f64,
        version.total,
        version.total as f64 / SEED_GET_SAFETY as f64,
        met(version.total <= target)
    );
}

fn main() {
    // Build first so the build's output does not interleave with the figures.
    let floor_wasm = read_floor_wasm();
    let token_wasm = custom_token_wasm();
    let sizes = [
        ("assay_registry.wasm", registry_wasm().len()),
        ("assay_verdict_store.wasm", verdict_store_wasm().len()),
        ("assay_gate_example.wasm", gate_wasm().len()),
        ("read_floor.wasm (baseline)", floor_wasm.len()),
    ];

    let env = new_env_mocking_all_auths();
    env.ledger().set_timestamp(1_786_771_651);
    let admin = Address::generate(&env);
    let registry_id = register_registry(&env, Build::Wasm, &admin);
    let registry = SafetyRegistryClient::new(&env, &registry_id);
    // Consumers read the registry's verdict store, which the registry publishes every change to.
    let store_id = env.register(verdict_store_wasm(), (registry_id.clone(),));
    registry.bind_verdict_store(&store_id);
    let store = VerdictStoreInterfaceClient::new(&env, &store_id);
    let attester = Address::generate(&env);
    registry.add_attester(&attester);
    // Two more attesters for the quorum read: 2 of 3 agree, the third holds no verdict.
    let (second, third) = (Address::generate(&env), Address::generate(&env));
    registry.add_attester(&second);
    registry.add_attester(&third);
    let gate_id = env.register(
        gate_wasm(),
        (store_id.clone(), None::<assay_gate_example::Policy>),
    );
    let gate = GateClient::new(&env, &gate_id);
    let sac = env
        .register_stellar_asset_contract_v2(Address::generate(&env))
        .address();
    let token = TokenClient::new(&env, &sac);
    let holder = Address::generate(&env);
    let other = Address::generate(&env);
    StellarAssetClient::new(&env, &sac).mint(&holder, &1_000_000);
    StellarAssetClient::new(&env, &sac).mint(&other, &1);
    let hash = BytesN::from_array(&env, &[7; 32]);
    let floor = ReadFloorClient::new(&env, &env.register(floor_wasm.as_slice(), ()));
    floor.set(&sac, &1_786_771_651);
    // Custom tokens (WASM), each attested high for its replaceable code, bound to its WASM hash.
    let custom: std::vec::Vec<Address> = (0..MAX_ASSESS_ASSETS)
        .map(|_| {
            let args = (
                admin.clone(),
                7u32,
                soroban_sdk::String::from_str(&env, "Custom"),
                soroban_sdk::String::from_str(&env, "CUS"),
            );
            let token = env.register(token_wasm.as_slice(), args);
            registry.attest(&attester, &token, &3, &512, &hash, &live_code(&token));
            token
        })
        .collect();
    let custom_token = custom[0].clone();
    floor.set(&custom_token, &1_786_771_651);
    let mut ten = Vec::new(&env);
    for token in &custom {
        ten.push_back(token.clone());
    }

    let mut rows = std::vec::Vec::new();
    measure(&env, &mut rows, "SAC balance (baseline)", || {
        token.balance(&holder);
    });
    measure(&env, &mut rows, "WASM read floor (baseline)", || {
        floor.get(&sac);
    });
    let floor_budget = top_costs(&env);
    let vm = instantiation_costs(&env);
    measure(&env, &mut rows, "SAC transfer (baseline)", || {
        token.transfer(&holder, &other, &10);
    });
    measure(&env, &mut rows, "registry attest", || {
        registry.attest(&attester, &sac, &0, &16, &hash, &live_code(&sac));
    });
    let attest_breakdown = Breakdown::of_last_call(&env);
    registry.attest(&second, &sac, &0, &16, &hash, &live_code(&sac));
    registry.attest(&attester, &sac, &0, &16, &hash, &live_code(&sac));
    measure(&env, &mut rows, "registry version (no storage)", || {
        registry.version();
    });
    let version_breakdown = Breakdown::of_last_call(&env);
    measure(&env, &mut rows, "registry get_safety", || {
        registry.get_safety(&sac);
    });
    let get_safety_budget = top_costs(&env);
    measure(&env, &mut rows, "registry get_safety_by", || {
        registry.get_safety_by(&sac, &second);
    });
    let quorum = soroban_sdk::vec![&env, third.clone(), second.clone(), attester.clone()];
    measure(&env, &mut rows, "registry is_safe_quorum (2/3)", || {
        assert!(registry.is_safe_quorum(&sac, &quorum, &2, &2, &86_400));
    });
    measure(&env, &mut rows, "registry assess", || {
        registry.assess(&sac, &2, &3_590, &86_400);
    });
    token.balance(&holder);
    let balance_budget = top_costs(&env);
    measure(&env, &mut rows, "registry is_safe", || {
        registry.is_safe(&sac, &2, &86_400);
    });
    measure(&env, &mut rows, "registry is_safe_masked", || {
        registry.is_safe_masked(&sac, &6, &86_400);
    });
    measure(&env, &mut rows, "custom get_safety", || {
        registry.get_safety(&custom_token);
    });
    let custom_breakdown = Breakdown::of_last_call(&env);
    floor.get(&custom_token);
    let floor_breakdown = Breakdown::of_last_call(&env);
    measure(&env, &mut rows, "custom is_safe", || {
        registry.is_safe(&custom_token, &3, &86_400);
    });
    measure(&env, &mut rows, "store version (no storage)", || {
        store.version();
    });
    measure(&env, &mut rows, "store custom get_safety", || {
        assert!(store.get_safety(&custom_token).is_some());
    });
    let store_breakdown = Breakdown::of_last_call(&env);
    measure(&env, &mut rows, "store custom is_safe", || {
        assert!(store.is_safe(&custom_token, &3, &86_400));
    });
    measure(&env, &mut rows, "store custom assess", || {
        store.assess(&custom_token, &3, &6, &86_400);
    });
    measure(&env, &mut rows, "store custom assess_many (10)", || {
        store.assess_many(&ten, &3, &6, &86_400);
    });
    measure(&env, &mut rows, "store get_safety (SAC)", || {
        assert!(store.get_safety(&sac).is_some());
    });
    let store_sac_breakdown = Breakdown::of_last_call(&env);
    measure(&env, &mut rows, "store is_safe (SAC)", || {
        assert!(store.is_safe(&sac, &2, &86_400));
    });
    measure(&env, &mut rows, "store assess (SAC)", || {
        store.assess(&sac, &2, &3_590, &86_400);
    });
    measure(&env, &mut rows, "custom assess", || {
        registry.assess(&custom_token, &3, &6, &86_400);
    });
    measure(&env, &mut rows, "custom assess_many (10)", || {
        registry.assess_many(&ten, &3, &6, &86_400);
    });
    for n in [1, 10, MAX_BATCH_SIZE] {
        let items = batch(&env, n);
        measure(
            &env,
            &mut rows,
            &format!("registry attest_many ({n})"),
            || {
                registry.attest_many(&attester, &items);
            },
        );
    }
    let full = env.cost_estimate().resources();
    measure(&env, &mut rows, "gate deposit (admitted)", || {
        gate.deposit(&sac, &holder, &100);
    });
    measure(&env, &mut rows, "gate withdraw", || {
        gate.withdraw(&sac, &holder, &100);
    });

    println!("Assay contract costs (WASM builds, one Env, soroban-sdk 29.0.1 cost model)\n");
    println!("{:<28} {:>14} {:>14}", "call", "CPU instr", "memory bytes");
    for r in &rows {
        println!("{:<28} {:>14} {:>14}", r.name, r.instructions, r.mem_bytes);
    }
    let find = |name: &str| rows.iter().find(|r| r.name == name).unwrap();
    let balance = find("SAC balance (baseline)");
    let get = find("registry get_safety");
    let floor_row = find("WASM read floor (baseline)");
    println!(
        "\nget_safety / SAC balance: CPU {:.2}x, memory {:.2}x (target: <= 1.00x CPU)",
        get.instructions as f64 / balance.instructions as f64,
        get.mem_bytes as f64 / balance.mem_bytes as f64
    );
    let quorum_row = find("registry is_safe_quorum (2/3)");
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    let single_slot_target = 305_621 * 105 / 100;
    println!(
        "get_safety: {} CPU instructions; targets <= {} (1.05x the single-slot registry's 305,621): \
         {}, and < 328,798 (the earlier four-function registry's): {}",
        get.instructions,
        single_slot_target,
        met(get.instructions <= single_slot_target),
        met(get.instructions < 328_798)
    );
    // Issue #27, item 4: consumers' reads of a custom token, code binding included, from the
    // verdict store, against the seeds' registry; the registry's own reads beside them.
    for (label, get, is_safe, assess, many) in [
        (
            "store",
            "store custom get_safety",
            "store custom is_safe",
            "store custom assess",
            "store custom assess_many (10)",
        ),
        (
            "registry",
            "custom get_safety",
            "custom is_safe",
            "custom assess",
            "custom assess_many (10)",
        ),
    ] {
        let (get, is_safe, assess, many) = (find(get), find(is_safe), find(assess), find(many));
        for row in [get, is_safe] {
            let ratio = row.instructions as f64 / SEED_GET_SAFETY as f64;
            println!(
                "{label}: {} / the seeds' registry's get_safety ({SEED_GET_SAFETY}): {ratio:.2}x \
                 (target <= 0.75x: {}; stretch <= 0.50x: {})",
                row.name,
                met(ratio <= 0.75),
                met(ratio <= 0.5)
            );
        }
        let assess_ratio = assess.instructions as f64 / get.instructions as f64;
        println!(
            "{label}: custom assess / custom get_safety: {assess_ratio:.2}x (target <= 1.10x): {}",
            met(assess_ratio <= 1.1)
        );
        let many_ratio = many.instructions as f64 / assess.instructions as f64;
        println!(
            "{label}: custom assess_many (10 assets) / one custom assess: {many_ratio:.2}x (target \
             <= 3.00x): {}",
            met(many_ratio <= 3.0)
        );
    }
    let quorum_ratio = quorum_row.instructions as f64 / get.instructions as f64;
    println!(
        "is_safe_quorum (2 of 3) / get_safety: CPU {quorum_ratio:.2}x (target: <= 1.50x): {}",
        met(quorum_ratio <= 1.5)
    );
    println!(
        "WASM read floor / SAC balance: CPU {:.2}x (the least any WASM contract pays for a read)",
        floor_row.instructions as f64 / balance.instructions as f64
    );
    // The least any WASM contract that reads storage pays before it runs an instruction: the
    // fixed instantiation, two exports (its function and the memory) and one import (the read).
    let vm_floor = vm.fixed + 2 * vm.per_export + vm.per_import;
    println!(
        "WASM instantiation alone: {} fixed + 2 exports x {} + 1 import x {} = {vm_floor} = {:.2}x \
         SAC balance, before any read",
        vm.fixed,
        vm.per_export,
        vm.per_import,
        vm_floor as f64 / balance.instructions as f64
    );
    println!(
        "get_safety / WASM read floor: CPU {:.2}x, memory {:.2}x",
        get.instructions as f64 / floor_row.instructions as f64,
        get.mem_bytes as f64 / floor_row.mem_bytes as f64
    );

    print_read_breakdown(&version_breakdown, &custom_breakdown, &floor_breakdown);
    // A full batch's use of each per-transaction limit: (name, used, limit).
    let limits = [
        (
            "events",
            full.contract_events_size_bytes as f64,
            TX_EVENTS_BYTES as f64,
        ),
        (
            "entries written",
            full.write_entries as f64,
            TX_WRITE_ENTRIES as f64,
        ),
        (
            "bytes written",
            full.write_bytes as f64,
            TX_WRITE_BYTES as f64,
        ),
        (
            "footprint",
            (full.memory_read_entries + full.disk_read_entries) as f64,
            TX_FOOTPRINT_ENTRIES as f64,
        ),
        (
            "CPU instructions",
            full.instructions as f64,
            TX_INSTRUCTIONS as f64,
        ),
        (
            "memory bytes",
            full.mem_bytes as f64,
            TX_MEMORY_BYTES as f64,
        ),
    ];
    print_issue_35_targets(&Item5 {
        rows: &rows,
        store_custom: &store_breakdown,
        store_sac: &store_sac_breakdown,
        floor: &floor_breakdown,
        attest: &attest_breakdown,
        limits: &limits,
    });
    println!("where the CPU goes (top cost types):");
    for (label, costs) in [
        ("get_safety", &get_safety_budget),
        ("read floor", &floor_budget),
        ("SAC balance", &balance_budget),
    ] {
        let parts: std::vec::Vec<_> = costs.iter().map(|(t, c)| format!("{t} {c}")).collect();
        println!("  {label:<12} {}", parts.join(", "));
    }

    println!("\n.wasm sizes (target/wasm/, built by scripts/build-wasm.sh):");
    for (name, len) in sizes {
        println!(
            "  {name:<26} {len:>7} bytes ({:.1} KiB)",
            len as f64 / 1024.0
        );
    }
    // Where the registry's bytes are, against the 10 KB target of its issue.
    match (
        assay_spec_shake::section_sizes(registry_wasm()),
        assay_spec_shake::spec_doc_bytes(registry_wasm()),
    ) {
        (Ok(sections), Ok(doc_bytes)) => {
            let size = |name: &str| -> usize {
                sections
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, len)| len)
                    .sum()
            };
            let (code, spec, data) = (size("code"), size("contractspecv0"), size("data"));
            let other = registry_wasm().len() - code - spec - data;
            println!(
                "  registry sections: code {code}, interface (contractspecv0) {spec} of which docs \
                 {doc_bytes}, data {data}, header and other sections {other}"
            );
            println!(
                "  registry / 10 KB target: {:.2}x; without the interface docs {:.2}x",
                registry_wasm().len() as f64 / 10_240.0,
                (registry_wasm().len() - doc_bytes) as f64 / 10_240.0
            );
        }
        (Err(e), _) | (_, Err(e)) => println!("  registry sections: unreadable ({e})"),
    }

    let pct = |used: f64, limit: f64| 100.0 * used / limit;
    println!("\nfull batch (attest_many of {MAX_BATCH_SIZE}) against per-transaction limits:");
    println!(
        "  events           {:>10} / {:>11} bytes ({:.0}%), {} bytes per attest event",
        full.contract_events_size_bytes,
        TX_EVENTS_BYTES,
        pct(
            full.contract_events_size_bytes as f64,
            TX_EVENTS_BYTES as f64
        ),
        full.contract_events_size_bytes / MAX_BATCH_SIZE
    );
    println!(
        "  entries written  {:>10} / {:>11} ({:.0}%)",
        full.write_entries,
        TX_WRITE_ENTRIES,
        pct(full.write_entries as f64, TX_WRITE_ENTRIES as f64)
    );
    println!(
        "  bytes written    {:>10} / {:>11} ({:.0}%)",
        full.write_bytes,
        TX_WRITE_BYTES,
        pct(full.write_bytes as f64, TX_WRITE_BYTES as f64)
    );
    let footprint = full.memory_read_entries + full.disk_read_entries;
    println!(
        "  footprint        {:>10} / {:>11} entries ({:.0}%)",
        footprint,
        TX_FOOTPRINT_ENTRIES,
        pct(footprint as f64, TX_FOOTPRINT_ENTRIES as f64)
    );
    println!(
        "  CPU instructions {:>10} / {:>11} ({:.1}%)",
        full.instructions,
        TX_INSTRUCTIONS,
        pct(full.instructions as f64, TX_INSTRUCTIONS as f64)
    );
    println!(
        "  memory bytes     {:>10} / {:>11} ({:.1}%)",
        full.mem_bytes,
        TX_MEMORY_BYTES,
        pct(full.mem_bytes as f64, TX_MEMORY_BYTES as f64)
    );
    let per_event = full.contract_events_size_bytes / MAX_BATCH_SIZE;
    println!(
        "  events keep a batch at or below 70% of their limit up to {} elements; MAX_BATCH_SIZE is \
         {MAX_BATCH_SIZE}",
        TX_EVENTS_BYTES * 7 / 10 / per_event.max(1)
    );
    println!(
        "\nnote: auth is mocked (recording mode), so each write also pays a nonce entry that a \
         transaction whose source account is the attester does not; signature checks are not metered."
    );
}
