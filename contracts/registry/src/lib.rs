#![no_std]
//! Assay safety registry.
//!
//! Holds, for each token contract address (a classic asset's Stellar Asset Contract address) and
//! each attester, the attested severity, mechanics bits, evidence hash, ledger time and the code
//! judged (WASM hash, or a SAC's admin) of that attester's verdict. Contracts read the most
//! severe verdict that counts with `get_safety`, `is_safe`, `is_safe_masked`, `assess` or
//! `assess_many`, or name their own attesters and threshold with `is_safe_quorum`, and fail
//! closed: no entry, a stale entry, changed code or an unacceptable entry all answer "no".
//!
//! The read ABI (`get_safety`, `is_safe`, `is_safe_masked`, `Safety`, `Attestation`) and error
//! codes 1..=7 are those of the earlier registry. Writes name their attester, admitted by the
//! admin; attester changes and code upgrades wait for a notice fixed at construction. See
//! `docs/contract-interface.md` for the full interface.
use soroban_sdk::{
    contract, contractimpl, symbol_short,
    unwrap::{UnwrapInfallible, UnwrapOptimized},
    Address, BytesN, Env, Executable, IntoVal, TryFromVal, Val, Vec,
};

mod events;
mod storage;
mod types;

pub use assay_registry_interface::*;
pub use events::{
    AdminChanged, AdminProposed, AdminTransferCancelled, Attested, AttesterAdded,
    AttesterChangeCancelled, AttesterChangeProposed, AttesterRemoved, Revoked, UpgradeCancelled,
    UpgradeProposed, Upgraded,
};
pub use storage::TTL_TOP_UP_MARGIN_LEDGERS;
pub use types::DataKey;
use types::Record;

#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

/// Interface version, bumped whenever a function is added or changes.
pub const INTERFACE_VERSION: u32 = 5;

#[contract]
pub struct SafetyRegistry;

#[contractimpl]
impl SafetyRegistry {
    /// Deploys the registry under `admin`, who manages attesters, admin transfer and upgrades.
    ///
    /// # Arguments
    /// * `admin` - manages the attester set, admin transfer and upgrades.
    /// * `upgrade_delay_secs` - the notice `apply_upgrade` and `apply_attester_change` wait
    ///   after their proposal; fixed for the registry's life.
    /// * `allow_instant_upgrade` - must be true for a delay below `MIN_NOTICE_SECS` (one hour),
    ///   0 included, which only a local network should use.
    ///
    /// # Errors
    /// * [`Error::UpgradeDelayRequired`] (12) - a delay below one hour without
    ///   `allow_instant_upgrade`.
    pub fn __constructor(
        env: Env,
        admin: Address,
        upgrade_delay_secs: u64,
        allow_instant_upgrade: bool,
    ) -> Result<(), Error> {
        // The constructor runs exactly once, atomically with deployment, so nobody can front-run
        // initialisation (errors 1 and 2 are unreachable). The admin cannot attest until it adds
        // itself as an attester.
        if upgrade_delay_secs < MIN_NOTICE_SECS && !allow_instant_upgrade {
            return Err(Error::UpgradeDelayRequired);
        }
        storage::set_admin(&env, &admin);
        storage::set_upgrade_delay_secs(&env, upgrade_delay_secs);
        storage::extend_instance(&env);
        Ok(())
    }
}

#[contractimpl]
impl SafetyRegistryInterface for SafetyRegistry {
    fn version(_env: Env) -> u32 {
        INTERFACE_VERSION
    }

    fn admin(env: Env) -> Address {
        storage::admin(&env)
    }

    fn pending_admin(env: Env) -> Option<Address> {
        storage::pending_admin(&env)
    }

    fn transfer_admin(env: Env, new_admin: Address) -> Result<(), Error> {
        let admin = storage::admin(&env);
        admin.require_auth();
        storage::set_pending_admin(&env, &new_admin);
        storage::extend_instance(&env);
        AdminProposed {
            admin,
            pending_admin: new_admin,
        }
        .publish(&env);
        Ok(())
    }

    fn cancel_admin_transfer(env: Env) -> Result<(), Error> {
        let admin = storage::admin(&env);
        admin.require_auth();
        let pending_admin = storage::pending_admin(&env).ok_or(Error::NoPendingAdmin)?;
        storage::clear_pending_admin(&env);
        storage::extend_instance(&env);
        AdminTransferCancelled {
            admin,
            pending_admin,
        }
        .publish(&env);
        Ok(())
    }

    fn accept_admin(env: Env) -> Result<(), Error> {
        let pending = storage::pending_admin(&env).ok_or(Error::NoPendingAdmin)?;
        pending.require_auth();
        let previous_admin = storage::admin(&env);
        storage::set_admin(&env, &pending);
        storage::clear_pending_admin(&env);
        storage::extend_instance(&env);
        AdminChanged {
            admin: pending,
            previous_admin,
        }
        .publish(&env);
        Ok(())
    }

    fn add_attester(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        if storage::is_attester(&env, &attester) {
            return Err(Error::AttesterExists);
        }
        if storage::attester_count(&env) >= MAX_ATTESTERS {
            return Err(Error::TooManyAttesters);
        }
        propose_attester_change(&env, attester, true)
    }

    fn remove_attester(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        if !storage::is_attester(&env, &attester) {
            return Err(Error::NotAttester);
        }
        propose_attester_change(&env, attester, false)
    }

    fn apply_attester_change(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_attester_change(&env, &attester)
            .ok_or(Error::NoPendingAttesterChange)?;
        if now(&env) < pending.applicable_at {
            return Err(Error::AttesterChangeNotDue);
        }
        storage::clear_pending_attester_change(&env, &attester);
        change_attester(&env, attester, pending.adding)
    }

    fn cancel_attester_change(env: Env, attester: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_attester_change(&env, &attester)
            .ok_or(Error::NoPendingAttesterChange)?;
        storage::clear_pending_attester_change(&env, &attester);
        storage::extend_instance(&env);
        AttesterChangeCancelled {
            attester,
            adding: pending.adding,
        }
        .publish(&env);
        Ok(())
    }

    fn pending_attester_change(env: Env, attester: Address) -> Option<PendingAttesterChange> {
        storage::pending_attester_change(&env, &attester)
    }

    fn is_attester(env: Env, attester: Address) -> bool {
        storage::is_attester(&env, &attester)
    }

    fn upgrade_delay_secs(env: Env) -> u64 {
        storage::upgrade_delay_secs(&env)
    }

    fn pending_upgrade(env: Env) -> Option<PendingUpgrade> {
        storage::pending_upgrade(&env)
    }

    fn propose_upgrade(env: Env, wasm_hash: BytesN<32>) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let proposed_at = now(&env);
        let applicable_at = proposed_at.saturating_add(storage::upgrade_delay_secs(&env));
        storage::set_pending_upgrade(
            &env,
            &PendingUpgrade {
                wasm_hash: wasm_hash.clone(),
                proposed_at,
                applicable_at,
            },
        );
        storage::extend_instance(&env);
        UpgradeProposed {
            wasm_hash,
            applicable_at,
        }
        .publish(&env);
        Ok(())
    }

    fn cancel_upgrade(env: Env) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_upgrade(&env).ok_or(Error::NoPendingUpgrade)?;
        storage::clear_pending_upgrade(&env);
        storage::extend_instance(&env);
        UpgradeCancelled {
            wasm_hash: pending.wasm_hash,
        }
        .publish(&env);
        Ok(())
    }

    fn apply_upgrade(env: Env) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_upgrade(&env).ok_or(Error::NoPendingUpgrade)?;
        if now(&env) < pending.applicable_at {
            return Err(Error::UpgradeNotDue);
        }
        storage::clear_pending_upgrade(&env);
        storage::extend_instance(&env);
        // The replacement, `update_current_contract(ContractExecutable::Wasm(..))`, copies the
        // SDK's `ContractExecutable` types into this contract's interface section (~1 KB).
        #[allow(deprecated)]
        env.deployer()
            .update_current_contract_wasm(pending.wasm_hash.clone());
        Upgraded {
            wasm_hash: pending.wasm_hash,
        }
        .publish(&env);
        Ok(())
    }

    fn attest(
        env: Env,
        attester: Address,
        asset: Address,
        severity: u32,
        flags: u32,
        evidence_hash: BytesN<32>,
        code: CodeBinding,
    ) -> Result<(), Error> {
        let admission = storage::require_attester(&env, &attester)?;
        validate(severity, flags)?;
        if !LiveCode::new(&asset).matches(&env, &code) {
            return Err(Error::CodeMismatch);
        }
        let attested_at = now(&env);
        write(
            &env,
            &asset,
            Record {
                attester: attester.clone(),
                admission,
                severity,
                flags,
                evidence_hash,
                attested_at,
                code: encoded(&env, &code),
            },
        );
        storage::extend_after_write(&env, &attester, admission);
        Ok(())
    }

    fn attest_many(
        env: Env,
        attester: Address,
        attestations: Vec<Attestation>,
    ) -> Result<(), Error> {
        let admission = storage::require_attester(&env, &attester)?;
        if attestations.len() > MAX_BATCH_SIZE {
            return Err(Error::BatchTooLarge);
        }
        if attestations.is_empty() {
            return Ok(());
        }
        // `try_iter` + `unwrap_optimized`: `iter()` unwraps with a formatted panic (see `now`).
        for a in attestations.try_iter() {
            let a = a.unwrap_optimized();
            validate(a.severity, a.flags)?;
            if !LiveCode::new(&a.asset).matches(&env, &a.code) {
                return Err(Error::CodeMismatch);
            }
        }
        let attested_at = now(&env);
        for a in attestations.try_iter() {
            let a = a.unwrap_optimized();
            write(
                &env,
                &a.asset,
                Record {
                    attester: attester.clone(),
                    admission,
                    severity: a.severity,
                    flags: a.flags,
                    evidence_hash: a.evidence_hash,
                    attested_at,
                    code: encoded(&env, &a.code),
                },
            );
        }
        storage::extend_after_write(&env, &attester, admission);
        Ok(())
    }

    fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error> {
        let admission = storage::require_attester(&env, &attester)?;
        withdraw(&env, &attester, &asset, &attester)?;
        storage::extend_after_write(&env, &attester, admission);
        Ok(())
    }

    fn admin_revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error> {
        let admin = storage::admin(&env);
        admin.require_auth();
        withdraw(&env, &attester, &asset, &admin)?;
        storage::extend_instance(&env);
        Ok(())
    }

    fn get_safety(env: Env, asset: Address) -> Option<Safety> {
        match standing(&env, &asset, &mut Admissions::new()) {
            Standing::Verdict(record) => Some(record.safety()),
            Standing::None | Standing::CodeChanged => None,
        }
    }

    fn get_safety_by(env: Env, asset: Address, attester: Address) -> Option<Safety> {
        counting_verdict_by(&env, &asset, &attester, &mut LiveCode::new(&asset)).map(Record::safety)
    }

    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool {
        match standing(&env, &asset, &mut Admissions::new()) {
            Standing::Verdict(record) => {
                admits(&record.safety(), max_severity, max_age_secs, now(&env))
            }
            Standing::None | Standing::CodeChanged => false,
        }
    }

    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool {
        let Standing::Verdict(record) = standing(&env, &asset, &mut Admissions::new()) else {
            return false;
        };
        // The mask sees powers, not reputation: a critical entry (a scam, a blocklisted domain)
        // may carry no capability bit, so severity is checked here whatever the mask.
        if record.severity >= SEVERITY_CRITICAL || record.flags & forbidden_mask != 0 {
            return false;
        }
        is_fresh(now(&env), record.attested_at, max_age_secs)
    }

    fn is_safe_quorum(
        env: Env,
        asset: Address,
        attesters: Vec<Address>,
        threshold: u32,
        max_severity: u32,
        max_age_secs: u64,
    ) -> bool {
        let len = attesters.len();
        if threshold == 0 || threshold > len || len > MAX_QUORUM_ATTESTERS {
            return false;
        }
        for i in 1..len {
            let a = attesters.get_unchecked(i);
            for j in 0..i {
                if a == attesters.get_unchecked(j) {
                    return false;
                }
            }
        }
        let mut live = LiveCode::new(&asset);
        let now = now(&env);
        let mut agreeing = 0;
        for attester in attesters.try_iter() {
            let attester = attester.unwrap_optimized();
            let admits = counting_verdict_by(&env, &asset, &attester, &mut live)
                .is_some_and(|record| admits(&record.safety(), max_severity, max_age_secs, now));
            if admits {
                agreeing += 1;
                if agreeing >= threshold {
                    return true;
                }
            }
        }
        false
    }

    fn assess(
        env: Env,
        asset: Address,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Assessment {
        let policy = (max_severity, forbidden_mask, max_age_secs);
        assess(&env, &asset, policy, &mut Admissions::new(), now(&env))
    }

    fn assess_many(
        env: Env,
        assets: Vec<Address>,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Result<Vec<Assessment>, Error> {
        if assets.len() > MAX_ASSESS_ASSETS {
            return Err(Error::TooManyAssets);
        }
        let mut answers = [Val::VOID.to_val(); MAX_ASSESS_ASSETS as usize];
        let mut len = 0;
        // The assets' verdicts mostly share their writers' admissions: each is checked once.
        let mut admissions = Admissions::new();
        let policy = (max_severity, forbidden_mask, max_age_secs);
        // One clock read for the batch: the ledger time is the same for every asset.
        let now = now(&env);
        for asset in assets.try_iter() {
            let asset = asset.unwrap_optimized();
            answers[len] = assess(&env, &asset, policy, &mut admissions, now).into_val(&env);
            len += 1;
        }
        Ok(assessments(&env, &answers[..len]))
    }

    fn get_revocation(env: Env, asset: Address) -> Option<Revocation> {
        storage::revocation(&env, &asset)
    }
}

/// What the verdicts that count say about an asset now.
// One value per read, on the stack; the contract has no allocator to box the record with.
#[allow(clippy::large_enum_variant)]
enum Standing {
    /// No verdict counts.
    None,
    /// The most severe verdict that counts (ties: the most recent), bound to the live code.
    Verdict(Record),
    /// A verdict that counts judged code that is no longer live.
    CodeChanged,
}

/// The asset's live code, read once per call and only if a verdict needs comparing with it.
struct LiveCode<'a> {
    asset: &'a Address,
    /// `get_address_executable`'s answer as the host encodes it: void, or an encoded `Executable`.
    executable: Option<Val>,
    stellar_asset_admin: Option<Address>,
}

impl<'a> LiveCode<'a> {
    fn new(asset: &'a Address) -> Self {
        LiveCode {
            asset,
            executable: None,
            stellar_asset_admin: None,
        }
    }

    fn executable(&mut self, env: &Env) -> Val {
        use soroban_env_common::Env as _;
        let asset = self.asset;
        *self.executable.get_or_insert_with(|| {
            env.get_address_executable(asset.to_object())
                .unwrap_infallible()
        })
    }

    /// [`Self::matches`] for a stored binding (an encoded [`CodeBinding`]). A `Wasm(hash)` binding
    /// and a live `Executable::Wasm(hash)` encode alike (`["Wasm", hash]`), so a custom token's
    /// binding that holds is one host comparison, with neither side decoded; anything else (a SAC's
    /// admin, changed code) is decoded and judged by [`Self::matches`].
    fn matches_stored(&mut self, env: &Env, code: Val) -> bool {
        use soroban_env_common::Env as _;
        let live = self.executable(env);
        if env.obj_cmp(code, live).unwrap_infallible() == 0 {
            return true;
        }
        let code = CodeBinding::try_from_val(env, &code).unwrap_optimized();
        self.matches(env, &code)
    }

    /// Whether `code` is what the asset runs now: its WASM hash (CAP-85 references resolved by
    /// the host), or its Stellar Asset Contract's admin. A classic asset's SAC need not be deployed
    /// yet: a `StellarAssetAdmin` binding holds for an address with no contract, since the only code
    /// that can appear at a SAC's address is that SAC, deployed with the issuer as its admin (and
    /// any other code there fails the comparison then). A `Wasm` binding needs the WASM live.
    fn matches(&mut self, env: &Env, code: &CodeBinding) -> bool {
        let raw = self.executable(env);
        let executable = Option::<Executable>::try_from_val(env, &raw).unwrap_optimized();
        match (code, executable) {
            (CodeBinding::Wasm(judged), Some(Executable::Wasm(live))) => *judged == live,
            (CodeBinding::StellarAssetAdmin(judged), Some(Executable::StellarAsset)) => {
                let asset = self.asset;
                let admin = self
                    .stellar_asset_admin
                    .get_or_insert_with(|| stellar_asset_admin(env, asset));
                judged == admin
            }
            (CodeBinding::StellarAssetAdmin(_), None) => true,
            _ => false,
        }
    }
}

/// `code` as a stored [`Record`] keeps it (see its `code` field).
fn encoded(env: &Env, code: &CodeBinding) -> Vec<Val> {
    let raw: Val = code.into_val(env);
    Vec::try_from_val(env, &raw).unwrap_optimized()
}

/// A Stellar Asset Contract's `admin()`. `token::StellarAssetClient::admin` builds its empty
/// argument list with `vec_new`, a host function nothing else here imports; every call of the
/// registry, reads included, paid 6,476 instructions to instantiate that import.
fn stellar_asset_admin(env: &Env, asset: &Address) -> Address {
    use soroban_env_common::Env as _;
    use soroban_sdk::EnvBase as _;
    let no_args = env.vec_new_from_slice(&[]).unwrap_infallible();
    let raw = env
        .call(
            asset.to_object(),
            symbol_short!("admin").to_symbol_val(),
            no_args,
        )
        .unwrap_infallible();
    Address::try_from_val(env, &raw).unwrap_optimized()
}

/// The rule every read but `is_safe_quorum` follows: of the verdicts on `asset` that count, the
/// most severe (ties: the most recent); `CodeChanged` if any of them judged code that is no longer
/// live.
fn standing(env: &Env, asset: &Address, admissions: &mut Admissions) -> Standing {
    let Some(records) = storage::verdicts(env, asset) else {
        return Standing::None;
    };
    let mut live = LiveCode::new(asset);
    let mut answer: Option<Record> = None;
    // Oldest first, so `>=` hands a tie to the most recent.
    for record in records.try_iter() {
        let record = record.unwrap_optimized();
        if !admissions.is_current(env, record.admission) {
            continue;
        }
        if !live.matches_stored(env, record.code.to_val()) {
            return Standing::CodeChanged;
        }
        if answer
            .as_ref()
            .is_none_or(|best| record.severity >= best.severity)
        {
            answer = Some(record);
        }
    }
    answer.map_or(Standing::None, Standing::Verdict)
}

/// `attester`'s verdict on `asset` if it counts and is bound to the live code.
fn counting_verdict_by(
    env: &Env,
    asset: &Address,
    attester: &Address,
    live: &mut LiveCode,
) -> Option<Record> {
    verdict_by(env, asset, attester)
        .filter(|record| counts(env, record) && live.matches_stored(env, record.code.to_val()))
}

/// `attester`'s verdict on `asset` as stored since the asset's latest revocation, counting or not.
fn verdict_by(env: &Env, asset: &Address, attester: &Address) -> Option<Record> {
    storage::verdicts(env, asset)?
        .try_iter()
        .map(UnwrapOptimized::unwrap_optimized)
        .find(|record| record.attester == *attester)
}

/// `assess` under `(max_severity, forbidden_mask, max_age_secs)` at ledger time `now`.
fn assess(
    env: &Env,
    asset: &Address,
    (max_severity, forbidden_mask, max_age_secs): (u32, u32, u64),
    admissions: &mut Admissions,
    now: u64,
) -> Assessment {
    let record = match standing(env, asset, admissions) {
        Standing::Verdict(record) => record,
        Standing::CodeChanged => return Assessment::CodeChanged,
        Standing::None => {
            return match storage::revocation(env, asset) {
                Some(revocation) => Assessment::Revoked(revocation.revoked_at),
                None => Assessment::NotAttested,
            }
        }
    };
    let age = now.saturating_sub(record.attested_at);
    if !is_fresh(now, record.attested_at, max_age_secs) {
        return Assessment::Stale(age);
    }
    // Clawback implies at least high at write time (`validate`), so a ceiling below high
    // refuses it here as `is_safe` does.
    if record.severity >= SEVERITY_CRITICAL || record.severity > max_severity {
        return Assessment::SeverityTooHigh(record.severity);
    }
    let forbidden = record.flags & forbidden_mask;
    if forbidden != 0 {
        return Assessment::ForbiddenMechanics(forbidden);
    }
    Assessment::Safe(record.safety())
}

/// `is_safe`'s rule for one verdict at ledger time `now`: below critical, at or below the ceiling,
/// no clawback under a ceiling below high, fresh.
fn admits(safety: &Safety, max_severity: u32, max_age_secs: u64, now: u64) -> bool {
    // Critical is never safe, whatever ceiling the caller passes (a ceiling of 4 or more would
    // otherwise admit it).
    if safety.severity >= SEVERITY_CRITICAL || safety.severity > max_severity {
        return false;
    }
    if safety.flags & MECH_AUTH_CLAWBACK_ENABLED != 0 && max_severity < SEVERITY_HIGH {
        return false;
    }
    is_fresh(now, safety.attested_at, max_age_secs)
}

/// Within the caller's window at ledger time `now` (read once per call: every clock read is a
/// host call). A window of 0 admits nothing: it used to turn the check off, which let a caller
/// that forgot to set it accept a verdict of any age.
fn is_fresh(now: u64, attested_at: u64, max_age_secs: u64) -> bool {
    max_age_secs != 0 && now.saturating_sub(attested_at) <= max_age_secs
}

/// Admission ids already checked during one call, so that reading several assets checks each
/// writer's admission once (as many as the set can hold; a removed attester's beyond that are
/// asked again).
struct Admissions {
    checked: [(u32, bool); MAX_ATTESTERS as usize],
    len: usize,
}

impl Admissions {
    fn new() -> Self {
        Admissions {
            checked: [(0, false); MAX_ATTESTERS as usize],
            len: 0,
        }
    }

    /// Whether admission `id` is current (see [`counts`]).
    fn is_current(&mut self, env: &Env, id: u32) -> bool {
        if let Some((_, current)) = self.checked[..self.len].iter().find(|(i, _)| *i == id) {
            return *current;
        }
        let current = storage::is_current_admission(env, id);
        if self.len < self.checked.len() {
            self.checked[self.len] = (id, current);
            self.len += 1;
        }
        current
    }
}

/// Whether a stored verdict counts now: its writer is an attester, and wrote it during its
/// current admission (a removed and re-admitted attester's earlier verdicts stay void). Verdicts
/// written before the asset's latest revocation are no longer stored.
fn counts(env: &Env, record: &Record) -> bool {
    storage::is_current_admission(env, record.admission)
}

/// Records a proposed admission or removal, or applies it at once on a registry constructed with
/// a zero notice.
fn propose_attester_change(env: &Env, attester: Address, adding: bool) -> Result<(), Error> {
    let delay = storage::upgrade_delay_secs(env);
    // The notice is fixed at construction, so a registry without one never holds a pending change.
    if delay == 0 {
        return change_attester(env, attester, adding);
    }
    let proposed_at = now(env);
    let applicable_at = proposed_at.saturating_add(delay);
    storage::set_pending_attester_change(
        env,
        &attester,
        &PendingAttesterChange {
            adding,
            proposed_at,
            applicable_at,
        },
    );
    storage::extend_instance(env);
    AttesterChangeProposed {
        attester,
        adding,
        applicable_at,
    }
    .publish(env);
    Ok(())
}

/// Admits or removes `attester` now.
fn change_attester(env: &Env, attester: Address, adding: bool) -> Result<(), Error> {
    if adding {
        if storage::is_attester(env, &attester) {
            return Err(Error::AttesterExists);
        }
        storage::add_attester(env, &attester)?;
        storage::extend_instance(env);
        AttesterAdded { attester }.publish(env);
    } else {
        let admission = storage::admission(env, &attester).ok_or(Error::NotAttester)?;
        storage::remove_attester(env, &attester, admission);
        storage::extend_instance(env);
        AttesterRemoved { attester }.publish(env);
    }
    Ok(())
}

/// The ledger timestamp. `env.ledger().timestamp()` unwraps with a formatted panic, which drags
/// ~5 KB of `core::fmt` into the `.wasm`; this traps instead on the (impossible) bad value.
fn now(env: &Env) -> u64 {
    use soroban_env_common::Env as _;
    let raw = env.get_ledger_timestamp().unwrap_infallible();
    u64::try_from_val(env, &raw).unwrap_optimized()
}

/// Encoded assessments as a vector, in one host call (`push_back` would import another function).
fn assessments(env: &Env, vals: &[Val]) -> Vec<Assessment> {
    use soroban_sdk::EnvBase as _;
    let raw = env.vec_new_from_slice(vals).unwrap_infallible();
    Vec::try_from_val(env, &raw).unwrap_optimized()
}

/// Stores the writer's verdict on `asset` as the most recent, replacing its earlier one and
/// dropping verdicts that no longer count (their writers were removed; admission ids are never
/// reused, so they never count again). At most one verdict per current attester remains.
fn write(env: &Env, asset: &Address, record: Record) {
    let mut kept = [Val::VOID.to_val(); MAX_ATTESTERS as usize];
    let mut len = 0;
    for raw in storage::verdicts(env, asset)
        .iter()
        .flat_map(|records| records.to_vals().try_iter())
    {
        let raw = raw.unwrap_optimized();
        let other = Record::try_from_val(env, &raw).unwrap_optimized();
        if other.attester != record.attester && counts(env, &other) && len + 1 < kept.len() {
            kept[len] = raw;
            len += 1;
        }
    }
    kept[len] = record.clone().into_val(env);
    storage::set_verdicts(env, asset, &kept[..=len]);
    Attested {
        asset: asset.clone(),
        attester: record.attester,
        severity: record.severity,
        flags: record.flags,
        evidence_hash: record.evidence_hash,
        attested_at: record.attested_at,
    }
    .publish(env);
}

/// Withdraws `attester`'s verdict on `asset` on behalf of `revoked_by`, voids every other verdict
/// on the asset written before now, and leaves the trace.
fn withdraw(
    env: &Env,
    attester: &Address,
    asset: &Address,
    revoked_by: &Address,
) -> Result<(), Error> {
    let revoked = verdict_by(env, asset, attester)
        .ok_or(Error::NotAttested)?
        .safety();
    let revoked_at = now(env);
    storage::remove_verdicts(env, asset);
    storage::set_revocation(
        env,
        asset,
        &Revocation {
            revoked_at,
            attester: attester.clone(),
            revoked,
        },
    );
    Revoked {
        asset: asset.clone(),
        attester: attester.clone(),
        revoked_by: revoked_by.clone(),
        revoked_at,
    }
    .publish(env);
    Ok(())
}

#[cfg(test)]
mod test;
