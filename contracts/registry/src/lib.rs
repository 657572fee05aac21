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
use assay_registry_interface::rules::{admits, admits_masked, judge, vetoed, Judgment};
use soroban_sdk::{
    contract, contractimpl,
    unwrap::{UnwrapInfallible, UnwrapOptimized},
    Address, BytesN, Env, Executable, IntoVal, Symbol, TryFromVal, Val, Vec,
};

mod events;
mod live_code;
mod storage;
mod types;

pub use assay_registry_interface::*;
pub use events::{
    AdminChanged, AdminProposed, AdminTransferCancelled, Attested, AttesterAdded,
    AttesterChangeCancelled, AttesterChangeProposed, AttesterRemoved, Revoked, UpgradeCancelled,
    UpgradeProposed, Upgraded, VerdictStoreBound, VerdictStoreCancelled, VerdictStoreProposed,
};
use live_code::LiveCode;
pub use storage::TTL_TOP_UP_MARGIN_LEDGERS;
pub use types::DataKey;
use types::Record;

#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

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
        if severity < SEVERITY_CRITICAL && storage::is_leaving(&env, &attester) {
            return Err(Error::AttesterLeaving);
        }
        if !LiveCode::new(&asset).matches(&env, &code) {
            return Err(Error::CodeMismatch);
        }
        let attested_at = now(&env);
        let written = write(
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
        publish(&env, &[asset.to_val()], Some(&[written]), None);
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
        let leaving = storage::is_leaving(&env, &attester);
        // `try_iter` + `unwrap_optimized`: `iter()` unwraps with a formatted panic (see `now`).
        for a in attestations.try_iter() {
            let a = a.unwrap_optimized();
            validate(a.severity, a.flags)?;
            if leaving && a.severity < SEVERITY_CRITICAL {
                return Err(Error::AttesterLeaving);
            }
            if !LiveCode::new(&a.asset).matches(&env, &a.code) {
                return Err(Error::CodeMismatch);
            }
        }
        let attested_at = now(&env);
        let mut assets = [Val::VOID.to_val(); MAX_BATCH_SIZE as usize];
        let mut written = [Val::VOID.to_val(); MAX_BATCH_SIZE as usize];
        for (i, a) in attestations.try_iter().enumerate() {
            let a = a.unwrap_optimized();
            assets[i] = a.asset.to_val();
            written[i] = write(
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
        let len = attestations.len() as usize;
        publish(&env, &assets[..len], Some(&written[..len]), None);
        storage::extend_after_write(&env, &attester, admission);
        Ok(())
    }

    fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error> {
        let admission = storage::require_attester(&env, &attester)?;
        if storage::is_leaving(&env, &attester) {
            return Err(Error::AttesterLeaving);
        }
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
            Standing::None | Standing::Revoked(_) | Standing::CodeChanged => None,
        }
    }

    fn get_safety_by(env: Env, asset: Address, attester: Address) -> Option<Safety> {
        let revoked_at = revoked_at(&env, &asset);
        counting_verdict_by(
            &env,
            &asset,
            &attester,
            revoked_at,
            &mut LiveCode::new(&asset),
        )
        .map(Record::safety)
    }

    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool {
        match standing(&env, &asset, &mut Admissions::new()) {
            Standing::Verdict(record) => {
                admits(record.judged(), max_severity, max_age_secs, now(&env))
            }
            Standing::None | Standing::Revoked(_) | Standing::CodeChanged => false,
        }
    }

    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool {
        match standing(&env, &asset, &mut Admissions::new()) {
            Standing::Verdict(record) => {
                admits_masked(record.judged(), forbidden_mask, max_age_secs, now(&env))
            }
            Standing::None | Standing::Revoked(_) | Standing::CodeChanged => false,
        }
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
        let revoked_at = revoked_at(&env, &asset);
        let mut agreeing = 0;
        for attester in attesters.try_iter() {
            let attester = attester.unwrap_optimized();
            let admits = counting_verdict_by(&env, &asset, &attester, revoked_at, &mut live)
                .is_some_and(|record| admits(record.judged(), max_severity, max_age_secs, now));
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
        Ok(vec_of(&env, &answers[..len]))
    }

    fn get_revocation(env: Env, asset: Address) -> Option<Revocation> {
        storage::revocation(&env, &asset)
    }

    fn bind_verdict_store(env: Env, store: Address) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        if storage::verdict_store(&env).is_some() {
            return Err(Error::VerdictStoreBound);
        }
        if VerdictStoreInterfaceClient::new(&env, &store).registry()
            != env.current_contract_address()
        {
            return Err(Error::VerdictStoreMismatch);
        }
        let delay = storage::upgrade_delay_secs(&env);
        // The notice is fixed at construction, so a registry without one never holds a proposal.
        if delay == 0 {
            return bind_store(&env, store);
        }
        let proposed_at = now(&env);
        let applicable_at = proposed_at.saturating_add(delay);
        storage::set_pending_verdict_store(
            &env,
            &PendingVerdictStore {
                store: store.clone(),
                proposed_at,
                applicable_at,
            },
        );
        storage::extend_instance(&env);
        VerdictStoreProposed {
            store,
            applicable_at,
        }
        .publish(&env);
        Ok(())
    }

    fn apply_verdict_store(env: Env) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_verdict_store(&env).ok_or(Error::NoPendingVerdictStore)?;
        if now(&env) < pending.applicable_at {
            return Err(Error::VerdictStoreNotDue);
        }
        storage::clear_pending_verdict_store(&env);
        bind_store(&env, pending.store)
    }

    fn cancel_verdict_store(env: Env) -> Result<(), Error> {
        storage::admin(&env).require_auth();
        let pending = storage::pending_verdict_store(&env).ok_or(Error::NoPendingVerdictStore)?;
        storage::clear_pending_verdict_store(&env);
        storage::extend_instance(&env);
        VerdictStoreCancelled {
            store: pending.store,
        }
        .publish(&env);
        Ok(())
    }

    fn pending_verdict_store(env: Env) -> Option<PendingVerdictStore> {
        storage::pending_verdict_store(&env)
    }

    fn verdict_store(env: Env) -> Option<Address> {
        storage::verdict_store(&env)
    }

    fn republish(env: Env, assets: Vec<Address>) -> Result<(), Error> {
        if storage::verdict_store(&env).is_none() {
            return Err(Error::NoVerdictStore);
        }
        if assets.len() > MAX_BATCH_SIZE {
            return Err(Error::BatchTooLarge);
        }
        let mut raw = [Val::VOID.to_val(); MAX_BATCH_SIZE as usize];
        for (i, asset) in assets.to_vals().try_iter().enumerate() {
            raw[i] = asset.unwrap_optimized();
        }
        publish(&env, &raw[..assets.len() as usize], None, None);
        Ok(())
    }
}

/// Binds `store` as the verdict store now (its notice, if any, has passed).
fn bind_store(env: &Env, store: Address) -> Result<(), Error> {
    if storage::verdict_store(env).is_some() {
        return Err(Error::VerdictStoreBound);
    }
    storage::set_verdict_store(env, &store);
    storage::extend_instance(env);
    // The store creates no symbol of its own (see `standing::NAMES`): it keeps these.
    let mut names = [Val::VOID.to_val(); standing::NAMES_LEN as usize];
    for (slot, name) in names.iter_mut().zip(standing::NAMES) {
        *slot = Symbol::new(env, name).to_val();
    }
    VerdictStoreInterfaceClient::new(env, &store).publish(
        &Vec::new(env),
        &None,
        &Some(vec_of(env, &names)),
    );
    storage::extend_verdict_store(env, &store);
    VerdictStoreBound { store }.publish(env);
    Ok(())
}

/// What the verdicts that count say about an asset now.
// One value per read, on the stack; the contract has no allocator to box the record with.
#[allow(clippy::large_enum_variant)]
enum Standing {
    /// No verdict counts.
    None,
    /// The leading verdict is older than the asset's latest revocation, at this ledger time.
    Revoked(u64),
    /// The most severe verdict that counts (ties: the most recent), bound to the live code.
    Verdict(Record),
    /// A verdict that counts judged code that is no longer live.
    CodeChanged,
}

/// `code` as a stored [`Record`] keeps it (see its `code` field).
fn encoded(env: &Env, code: &CodeBinding) -> Vec<Val> {
    let raw: Val = code.into_val(env);
    Vec::try_from_val(env, &raw).unwrap_optimized()
}

/// The rule every read but `is_safe_quorum` follows: of the verdicts on `asset` that count, the
/// most severe (ties: the most recent) leads; `Revoked` if it is older than the latest revocation,
/// else `CodeChanged` if any of them judged code that is no longer live.
fn standing(env: &Env, asset: &Address, admissions: &mut Admissions) -> Standing {
    let mut live = LiveCode::new(asset);
    let records = storage::verdicts(env, asset);
    fold_counting(
        env,
        asset,
        records,
        admissions,
        &mut RevokedAt::default(),
        |record| live.matches_stored(env, record.code.to_val()),
    )
}

/// Of the verdicts on `asset` that count, the most severe (ties: the most recent) leads, each
/// shown to `holds`: `Revoked` if the lead is older than the latest revocation (a revocation
/// vetoes the admission of every older verdict, and takes no other attester's more severe verdict
/// away), else `CodeChanged` if `holds` answered false for any. The one fold behind the reads
/// ([`standing`]) and what the store is sent ([`standing_to_publish`]).
fn fold_counting(
    env: &Env,
    asset: &Address,
    records: Option<Vec<Record>>,
    admissions: &mut Admissions,
    revoked: &mut RevokedAt,
    mut holds: impl FnMut(&Record) -> bool,
) -> Standing {
    let Some(records) = records else {
        return Standing::None;
    };
    let mut lead: Option<Record> = None;
    let mut all_hold = true;
    // Oldest first, so `>=` hands a tie to the most recent.
    for record in records.try_iter() {
        let record = record.unwrap_optimized();
        if !admissions.is_current(env, record.admission) {
            continue;
        }
        all_hold &= holds(&record);
        if lead
            .as_ref()
            .is_none_or(|best| record.severity >= best.severity)
        {
            lead = Some(record);
        }
    }
    let Some(lead) = lead else {
        return Standing::None;
    };
    let revoked_at = revoked.get(env, asset);
    if vetoed(lead.attested_at, revoked_at) {
        // `vetoed` is only true with a revocation.
        return Standing::Revoked(revoked_at.unwrap_or_default());
    }
    if !all_hold {
        return Standing::CodeChanged;
    }
    Standing::Verdict(lead)
}

/// The time of `asset`'s latest revocation, if any.
fn revoked_at(env: &Env, asset: &Address) -> Option<u64> {
    storage::revocation(env, asset).map(|revocation| revocation.revoked_at)
}

/// An asset's [`revoked_at`], read from storage at most once: the fold and the standing it
/// publishes both need it.
#[derive(Default)]
struct RevokedAt(Option<Option<u64>>);

impl RevokedAt {
    fn get(&mut self, env: &Env, asset: &Address) -> Option<u64> {
        *self.0.get_or_insert_with(|| revoked_at(env, asset))
    }
}

/// `attester`'s verdict on `asset` if it counts, is not vetoed by the revocation at `revoked_at`
/// and is bound to the live code.
fn counting_verdict_by(
    env: &Env,
    asset: &Address,
    attester: &Address,
    revoked_at: Option<u64>,
    live: &mut LiveCode,
) -> Option<Record> {
    verdict_by(env, asset, attester).filter(|record| {
        counts(env, record)
            && !vetoed(record.attested_at, revoked_at)
            && live.matches_stored(env, record.code.to_val())
    })
}

/// `attester`'s verdict on `asset` as stored, counting or not.
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
    policy: (u32, u32, u64),
    admissions: &mut Admissions,
    now: u64,
) -> Assessment {
    let record = match standing(env, asset, admissions) {
        Standing::Verdict(record) => record,
        Standing::CodeChanged => return Assessment::CodeChanged,
        Standing::Revoked(revoked_at) => return Assessment::Revoked(revoked_at),
        Standing::None => {
            return match storage::revocation(env, asset) {
                Some(revocation) => Assessment::Revoked(revocation.revoked_at),
                None => Assessment::NotAttested,
            }
        }
    };
    match judge(record.judged(), policy, now) {
        Judgment::Safe => Assessment::Safe(record.safety()),
        Judgment::Stale(age) => Assessment::Stale(age),
        Judgment::SeverityTooHigh(severity) => Assessment::SeverityTooHigh(severity),
        Judgment::ForbiddenMechanics(bits) => Assessment::ForbiddenMechanics(bits),
    }
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
/// current admission (a removed and re-admitted attester's earlier verdicts stay void). Whether the
/// latest revocation vetoes it is the fold's question ([`fold_counting`]).
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
        publish(env, &[], None, Some(admission));
        storage::extend_instance(env);
        AttesterRemoved { attester }.publish(env);
    }
    Ok(())
}

/// Publishes the standing of each of `assets` (encoded addresses) and the end of
/// `ended_admission` to the verdict store, if one is bound, in one call. `written`, when given,
/// holds each asset's verdicts as this call just wrote them (void: none left), folded instead of
/// read back from storage.
fn publish(env: &Env, assets: &[Val], written: Option<&[Val]>, ended_admission: Option<u32>) {
    let Some(store) = storage::verdict_store(env) else {
        return;
    };
    let mut standings = [Val::VOID.to_val(); MAX_BATCH_SIZE as usize];
    let mut admissions = Admissions::new();
    for (i, raw) in assets.iter().enumerate() {
        let asset = Address::try_from_val(env, raw).unwrap_optimized();
        let records = match written {
            // For an asset named twice in a batch the earlier list is stale, and the store keeps
            // the last standing published for an asset, which is folded from the latest list.
            Some(lists) => Option::<Vec<Record>>::try_from_val(env, &lists[i]).unwrap_optimized(),
            None => storage::verdicts(env, &asset),
        };
        standings[i] = standing_to_publish(env, asset, records, &mut admissions).to_val();
    }
    let standings = vec_of(env, &standings[..assets.len()]);
    VerdictStoreInterfaceClient::new(env, &store).publish(&standings, &ended_admission, &None);
    storage::extend_verdict_store(env, &store);
}

/// `asset`'s verdicts folded as the store keeps them (a [`standing`] vector): the verdict
/// [`standing`](fn@standing) would answer with, its code not compared yet (the store compares it at
/// read time), whether every verdict that counts was bound to the same code, and the latest
/// revocation's time.
fn standing_to_publish(
    env: &Env,
    asset: Address,
    records: Option<Vec<Record>>,
    admissions: &mut Admissions,
) -> Vec<Val> {
    // The store compares the code with the live one at read time; here only whether the verdicts
    // that count agree on it.
    let mut first_code: Option<Vec<Val>> = None;
    let mut codes_agree = true;
    let mut revoked = RevokedAt::default();
    let lead = match fold_counting(env, &asset, records, admissions, &mut revoked, |record| {
        match &first_code {
            Some(code) => codes_agree &= *code == record.code,
            None => first_code = Some(record.code.clone()),
        }
        true
    }) {
        Standing::Verdict(record) => Some(record),
        // Vetoed: the store answers `Revoked(revoked_at)`, as for no verdict.
        Standing::None | Standing::Revoked(_) | Standing::CodeChanged => None,
    };
    let revoked_at = revoked.get(env, &asset);
    let mut fields = [Val::VOID.to_val(); standing::LEN as usize];
    fields[standing::ASSET as usize] = asset.to_val();
    fields[standing::REVOKED_AT as usize] = revoked_at.into_val(env);
    fields[standing::CODE as usize] = standing::CODE_NONE.into();
    if let Some(record) = lead {
        let (code, executable, admin) =
            match CodeBinding::try_from_val(env, &record.code.to_val()).unwrap_optimized() {
                _ if !codes_agree => (standing::CODE_DISAGREES, Val::VOID.to_val(), None),
                // A `Wasm` binding encodes as the live `Executable::Wasm` does.
                CodeBinding::Wasm(_) => (standing::CODE_WASM, record.code.to_val(), None),
                CodeBinding::StellarAssetAdmin(admin) => (
                    standing::CODE_STELLAR_ASSET,
                    Executable::StellarAsset.into_val(env),
                    Some(admin),
                ),
            };
        fields[standing::SEVERITY as usize] = record.severity.into();
        fields[standing::FLAGS as usize] = record.flags.into();
        fields[standing::ATTESTED_AT as usize] = record.attested_at.into_val(env);
        fields[standing::ADMISSION as usize] = record.admission.into();
        fields[standing::CODE as usize] = code.into();
        fields[standing::EXECUTABLE as usize] = executable;
        fields[standing::ADMIN as usize] = admin.into_val(env);
        fields[standing::SAFETY as usize] = record.safety().into_val(env);
    }
    vec_of(env, &fields)
}

/// `vals` as a vector, in one host call (`push_back` would import another function).
fn vec_of<T: IntoVal<Env, Val> + TryFromVal<Env, Val>>(env: &Env, vals: &[Val]) -> Vec<T> {
    use soroban_sdk::EnvBase as _;
    let raw = env.vec_new_from_slice(vals).unwrap_infallible();
    Vec::try_from_val(env, &raw).unwrap_optimized()
}

/// The ledger timestamp. `env.ledger().timestamp()` unwraps with a formatted panic, which drags
/// ~5 KB of `core::fmt` into the `.wasm`; this traps instead on the (impossible) bad value.
fn now(env: &Env) -> u64 {
    use soroban_env_common::Env as _;
    let raw = env.get_ledger_timestamp().unwrap_infallible();
    u64::try_from_val(env, &raw).unwrap_optimized()
}

/// The verdicts on `asset` other than `attester`'s that still count (encoded, oldest first, the
/// first `.1` of the buffer), with room after them for one more.
fn others(
    env: &Env,
    asset: &Address,
    attester: &Address,
) -> ([Val; MAX_ATTESTERS as usize], usize) {
    let mut kept = [Val::VOID.to_val(); MAX_ATTESTERS as usize];
    let mut len = 0;
    for raw in storage::verdicts(env, asset)
        .iter()
        .flat_map(|records| records.to_vals().try_iter())
    {
        let raw = raw.unwrap_optimized();
        let other = Record::try_from_val(env, &raw).unwrap_optimized();
        if other.attester != *attester && counts(env, &other) && len + 1 < kept.len() {
            kept[len] = raw;
            len += 1;
        }
    }
    (kept, len)
}

/// Stores the writer's verdict on `asset` as the most recent, replacing its earlier one and
/// dropping verdicts that no longer count (their writers were removed; admission ids are never
/// reused, so they never count again). At most one verdict per current attester remains. Returns
/// the list stored.
fn write(env: &Env, asset: &Address, record: Record) -> Val {
    let (mut kept, len) = others(env, asset, &record.attester);
    kept[len] = record.clone().into_val(env);
    let written = storage::set_verdicts(env, asset, &kept[..=len]);
    Attested {
        asset: asset.clone(),
        attester: record.attester,
        severity: record.severity,
        flags: record.flags,
        evidence_hash: record.evidence_hash,
        attested_at: record.attested_at,
    }
    .publish(env);
    written
}

/// Withdraws `attester`'s verdict on `asset` on behalf of `revoked_by` and leaves the trace, whose
/// time vetoes the admission of every other verdict on the asset written before now (they stay,
/// with their power to refuse).
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
    let (kept, len) = others(env, asset, attester);
    let written = if len == 0 {
        storage::remove_verdicts(env, asset);
        Val::VOID.to_val()
    } else {
        storage::set_verdicts(env, asset, &kept[..len])
    };
    storage::set_revocation(
        env,
        asset,
        &Revocation {
            revoked_at,
            attester: attester.clone(),
            revoked,
        },
    );
    publish(env, &[asset.to_val()], Some(&[written]), None);
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
