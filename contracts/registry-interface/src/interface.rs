//! The registry's contract interface, documented once here.
//!
//! # How a read answers (interface 7)
//!
//! Every read (`get_safety`, `is_safe`, `is_safe_masked`, `assess`, `assess_many`) considers the
//! verdicts on the asset that **count**: each current attester's own verdict, written during its
//! current admission (a revocation withdraws only the named attester's verdict). Of those the
//! **most severe** leads, ties going to the most recent. **Older verdicts lose the power to
//! admit, never the power to refuse:** if the leading verdict was written before the asset's
//! latest revocation (or in the same ledger), the asset is refused as revoked (`get_safety`
//! `None`, `assess` `Revoked(revoked_at)`), so a revocation vetoes the admission of every older
//! verdict and removes no other attester's more severe one. Otherwise, if any verdict that counts
//! is bound to code that is no longer live (the token's WASM was replaced, or its Stellar Asset
//! Contract's admin changed), nothing judged the code that runs: no read admits the asset,
//! `get_safety` answers `None` and `assess` `CodeChanged`. Else the age limit and the policy apply
//! to the leading verdict. `max_age_secs = 0` admits nothing. Attester admissions and removals,
//! upgrades and the binding of the verdict store wait for the registry's notice
//! (`upgrade_delay_secs`); revocations take effect at once. While an attester's removal is
//! pending it may only write critical verdicts (error 23 otherwise).
//!
//! The contract implements this trait without doc comments on purpose: the SDK copies every
//! function's docs into the `.wasm`'s interface section, which would double the contract's size.
//! `docs/contract-interface.md` carries the same text for callers that read no Rust.
use soroban_sdk::{contractclient, Address, BytesN, Env, Vec};

use crate::{
    Assessment, Attestation, CodeBinding, Error, PendingAttesterChange, PendingUpgrade,
    PendingVerdictStore, Revocation, Safety,
};

/// `SafetyRegistryInterfaceClient` calls a deployed registry from another contract.
#[contractclient(name = "SafetyRegistryInterfaceClient")]
pub trait SafetyRegistryInterface {
    /// Interface version of this code (8: `attest` and `attest_many` accept mechanics bit 14
    /// `admin_transfer_fee`, at least medium, and the policy masks refuse it; 7: a revocation
    /// withdraws only its attester's verdict and vetoes the admission of older ones, a leaving
    /// attester writes only critical verdicts, the verdict store is bound after notice
    /// (`apply_verdict_store`, `cancel_verdict_store`, `pending_verdict_store`); 6: a verdict
    /// store for consumers' reads, `bind_verdict_store`, `verdict_store`, `republish`; 5:
    /// fail-closed reads across attesters, verdicts bound to the code they judged, attester
    /// changes with notice, `assess_many`; 4: per-attester verdicts, `get_safety_by`,
    /// `is_safe_quorum`, `assess`, `admin_revoke` and upgrades with notice; 3 added
    /// `cancel_admin_transfer` to version 2; the earlier registry had none of these).
    fn version(env: Env) -> u32;

    /// The current admin.
    fn admin(env: Env) -> Address;

    /// The admin proposed by `transfer_admin` and not yet accepted, if any.
    fn pending_admin(env: Env) -> Option<Address>;

    /// First step of an admin transfer: proposes `new_admin`, replacing any earlier proposal.
    /// The current admin keeps full power until `accept_admin`, and can withdraw the proposal
    /// with `cancel_admin_transfer`.
    ///
    /// # Arguments
    /// * `new_admin` - the proposed successor; must call `accept_admin` itself.
    ///
    /// # Errors
    /// Host auth error (`Error(Auth, InvalidAction)`) unless the current admin authorised it.
    ///
    /// # Events
    /// `["admin_proposed", admin]` with data `{pending_admin}`.
    fn transfer_admin(env: Env, new_admin: Address) -> Result<(), Error>;

    /// Withdraws the pending admin transfer, so the proposed admin can no longer accept. A new
    /// proposal can follow with `transfer_admin`.
    ///
    /// # Errors
    /// * [`Error::NoPendingAdmin`] (6) - no transfer is pending.
    /// * Host auth error unless the current admin authorised the call.
    ///
    /// # Events
    /// `["admin_transfer_cancelled", admin]` with data `{pending_admin}`.
    fn cancel_admin_transfer(env: Env) -> Result<(), Error>;

    /// Second step of an admin transfer: the proposed admin takes over.
    ///
    /// # Errors
    /// * [`Error::NoPendingAdmin`] (6) - no transfer is pending.
    /// * Host auth error unless the pending admin authorised the call.
    ///
    /// # Events
    /// `["admin_changed", new admin]` with data `{previous_admin}`.
    fn accept_admin(env: Env) -> Result<(), Error>;

    /// Proposes admitting `attester`, applicable after `upgrade_delay_secs` with
    /// `apply_attester_change` (at once on a registry constructed with a zero notice). Replaces
    /// any pending change of that attester. Once admitted, only verdicts it writes from then on
    /// count: if it was removed earlier, the verdicts it wrote before stay void.
    ///
    /// # Errors
    /// * [`Error::AttesterExists`] (11) - already in the set.
    /// * [`Error::TooManyAttesters`] (15) - the set already holds `MAX_ATTESTERS` (16).
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_change_proposed", attester]` with data `{adding: true, applicable_at}`; with a
    /// zero notice `["attester_added", attester]` instead.
    fn add_attester(env: Env, attester: Address) -> Result<(), Error>;

    /// Proposes removing `attester`, applicable after `upgrade_delay_secs` (at once with a zero
    /// notice). Until applied, its verdicts count, and it may only write critical verdicts (a
    /// verdict below critical or a revocation is refused with [`Error::AttesterLeaving`] (23)), so
    /// a leaving attester can tighten what the registry answers and never loosen it; from then on
    /// none of its verdicts counts for any read.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - not in the set.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_change_proposed", attester]` with data `{adding: false, applicable_at}`; with
    /// a zero notice `["attester_removed", attester]` instead.
    fn remove_attester(env: Env, attester: Address) -> Result<(), Error>;

    /// Applies the pending admission or removal of `attester` once its notice has run (the
    /// boundary itself is allowed).
    ///
    /// # Errors
    /// * [`Error::NoPendingAttesterChange`] (18) - nothing is pending for `attester`.
    /// * [`Error::AttesterChangeNotDue`] (19) - the ledger time is before `applicable_at`.
    /// * [`Error::TooManyAttesters`] (15) - an admission while the set holds 16.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_added", attester]` or `["attester_removed", attester]`.
    fn apply_attester_change(env: Env, attester: Address) -> Result<(), Error>;

    /// Withdraws the pending admission or removal of `attester`; it never applies.
    ///
    /// # Errors
    /// * [`Error::NoPendingAttesterChange`] (18) - nothing is pending for `attester`.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_change_cancelled", attester]` with data `{adding}`.
    fn cancel_attester_change(env: Env, attester: Address) -> Result<(), Error>;

    /// The pending admission or removal of `attester`, if any, and when it becomes applicable.
    fn pending_attester_change(env: Env, attester: Address) -> Option<PendingAttesterChange>;

    /// Whether `attester` may currently write.
    fn is_attester(env: Env, attester: Address) -> bool;

    /// The notice, in seconds, between `propose_upgrade` and the earliest `apply_upgrade`, and
    /// between an attester change's proposal and its application; fixed at construction.
    fn upgrade_delay_secs(env: Env) -> u64;

    /// The proposed code replacement, if any, and when it becomes applicable.
    fn pending_upgrade(env: Env) -> Option<PendingUpgrade>;

    /// First step of a code upgrade: announces `wasm_hash`, applicable after
    /// `upgrade_delay_secs`. Replaces any earlier proposal and restarts its clock.
    ///
    /// # Arguments
    /// * `wasm_hash` - hash of WASM already uploaded to the network.
    ///
    /// # Errors
    /// Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["upgrade_proposed"]` with data `{wasm_hash, applicable_at}`.
    fn propose_upgrade(env: Env, wasm_hash: BytesN<32>) -> Result<(), Error>;

    /// Withdraws the proposed upgrade.
    ///
    /// # Errors
    /// * [`Error::NoPendingUpgrade`] (13) - nothing is proposed.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["upgrade_cancelled"]` with data `{wasm_hash}`.
    fn cancel_upgrade(env: Env) -> Result<(), Error>;

    /// Second step of a code upgrade: replaces the contract code with the proposed WASM once its
    /// notice has run; address and storage are kept.
    ///
    /// # Errors
    /// * [`Error::NoPendingUpgrade`] (13) - nothing is proposed.
    /// * [`Error::UpgradeNotDue`] (14) - the ledger time is before `applicable_at`.
    /// * Host auth error unless the admin authorised the call; host storage error if no WASM with
    ///   that hash is uploaded.
    ///
    /// # Events
    /// `["upgraded"]` with data `{wasm_hash}`.
    fn apply_upgrade(env: Env) -> Result<(), Error>;

    /// Records `attester`'s own verdict on `asset`, stamped with the ledger time and bound to
    /// the code it judged, replacing its earlier one; other attesters' verdicts are untouched.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `asset` - the token contract address (a classic asset's SAC address).
    /// * `severity` - 0..=4.
    /// * `flags` - mechanics bits 0..=13 (see `MECH_*`).
    /// * `evidence_hash` - SHA-256 of the evidence.
    /// * `code` - the code judged: the WASM hash of a custom token, the admin of a SAC.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::InvalidSeverity`] (3), [`Error::ReservedFlags`] (8),
    ///   [`Error::InconsistentAttestation`] (4), [`Error::ViolationBelowCritical`] (9) -
    ///   see [`crate::validate`], checked in that order.
    /// * [`Error::AttesterLeaving`] (23) - `attester`'s removal is pending and `severity` is
    ///   below 4 (critical).
    /// * [`Error::CodeMismatch`] (16) - `code` is not the asset's live code.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// `["attest", asset, attester]` with data `{severity, flags, evidence_hash, attested_at}`.
    fn attest(
        env: Env,
        attester: Address,
        asset: Address,
        severity: u32,
        flags: u32,
        evidence_hash: BytesN<32>,
        code: CodeBinding,
    ) -> Result<(), Error>;

    /// Records up to `MAX_BATCH_SIZE` verdicts with one timestamp, all or nothing: every element
    /// is validated before anything is written. A repeated asset is applied in order (the last
    /// wins, each gets an event). An empty batch writes, extends and emits nothing.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `attestations` - at most `MAX_BATCH_SIZE` (35) elements.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::BatchTooLarge`] (7) - more than 35 elements; nothing is truncated.
    /// * Any error of [`crate::validate`], then [`Error::AttesterLeaving`] (23), then
    ///   [`Error::CodeMismatch`] (16), for the first invalid element; nothing is written.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// One `["attest", asset, attester]` per element, in order.
    fn attest_many(
        env: Env,
        attester: Address,
        attestations: Vec<Attestation>,
    ) -> Result<(), Error>;

    /// Withdraws `attester`'s own verdict on `asset`, and vetoes the admission of every other
    /// verdict on it written before now: a revocation says the asset changed for the worse, so no
    /// earlier verdict admits it until one is written again (in a later ledger). Other attesters'
    /// verdicts stay: one more severe than any newer verdict still leads, and the asset is refused
    /// as revoked (see the module docs). Leaves a trace readable with `get_revocation`.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `asset` - the token contract address.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::AttesterLeaving`] (23) - `attester`'s removal is pending.
    /// * [`Error::NotAttested`] (5) - `attester` holds no verdict on `asset`.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// `["revoke", asset]` with data `{attester, revoked_by, revoked_at}`, `revoked_by` being
    /// `attester`.
    fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error>;

    /// Emergency: the admin withdraws `attester`'s verdict on `asset`, whether or not `attester`
    /// is still in the set, and vetoes the admission of every older verdict on it as `revoke`
    /// does; other attesters' verdicts stay. Leaves the
    /// same trace as `revoke`.
    ///
    /// # Errors
    /// * [`Error::NotAttested`] (5) - `attester` holds no verdict on `asset`.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["revoke", asset]` with data `{attester, revoked_by, revoked_at}`, `revoked_by` being
    /// the admin.
    fn admin_revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error>;

    /// The most severe verdict on `asset` that counts (ties: the most recent), or `None`: never
    /// attested, every verdict revoked or void, the leading verdict older than the latest
    /// revocation, or a verdict that counts bound to code that is no longer live (see the module
    /// docs). Never writes or extends anything. This is the raw
    /// entry, not a judgment: a caller that decides from it must itself refuse severity 4
    /// (critical), apply its own age limit, and treat `None` as "no" — or call `assess`, which
    /// does all three.
    fn get_safety(env: Env, asset: Address) -> Option<Safety>;

    /// `attester`'s own verdict on `asset` if it counts now (a current admission, written in a
    /// ledger after the latest revocation's, bound to the live code), or `None`.
    fn get_safety_by(env: Env, asset: Address, attester: Address) -> Option<Safety>;

    /// Judges the verdict `get_safety` returns. True only if `asset` is attested, its severity is
    /// at most `max_severity` and below 4 (critical is never safe, whatever the ceiling), it
    /// carries no clawback bit when `max_severity` is below 3, and it is at most `max_age_secs`
    /// old. `max_age_secs = 0` answers false. Every other case answers false: no entry, a
    /// revoked entry, a stale entry, changed code.
    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool;

    /// Judges the verdict `get_safety` returns. True only if `asset` is attested, its severity is
    /// below 4 (critical), none of `forbidden_mask`'s bits are set, and it is at most
    /// `max_age_secs` old (`max_age_secs = 0` answers false). A mask of 0 still needs an entry.
    /// The mask sees powers, not reputation, so critical is refused here whatever the mask; pair
    /// the mask with `is_safe`'s ceiling to refuse high-severity reputation too.
    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool;

    /// True only if at least `threshold` distinct attesters of `attesters` are current attesters
    /// whose own verdict on `asset` counts (as `get_safety_by` reads it) and passes `is_safe`'s
    /// rule (`max_severity`, clawback, `max_age_secs`). A `threshold` of 0 or above the list's length, more than
    /// `MAX_QUORUM_ATTESTERS` (10) attesters, or any address listed twice answers false; an
    /// address that is not a current attester counts as a "no".
    fn is_safe_quorum(
        env: Env,
        asset: Address,
        attesters: Vec<Address>,
        threshold: u32,
        max_severity: u32,
        max_age_secs: u64,
    ) -> bool;

    /// Why `asset` would be admitted or refused under this policy, checked in this order:
    /// `NotAttested` (no verdict counts, never revoked) or `Revoked(revoked_at)` (no verdict
    /// counts, or the leading one is older than the latest revocation); `CodeChanged` (a verdict that counts judged code that is
    /// no longer live); then, for the verdict `get_safety` returns, `Stale(age_secs)` when it is
    /// older than `max_age_secs` (always, for `max_age_secs = 0`); `SeverityTooHigh(severity)`
    /// for critical or above `max_severity`; `ForbiddenMechanics(flags & forbidden_mask)`; else
    /// `Safe(verdict)`.
    fn assess(
        env: Env,
        asset: Address,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Assessment;

    /// `assess` for each of `assets` under one policy, in order, in one call (one instantiation
    /// of the registry for a pool that admits several assets).
    ///
    /// # Errors
    /// * [`Error::TooManyAssets`] (17) - more than `MAX_ASSESS_ASSETS` (10) assets.
    fn assess_many(
        env: Env,
        assets: Vec<Address>,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Result<Vec<Assessment>, Error>;

    /// The latest revocation of `asset` by any attester or the admin, if it was ever revoked
    /// (kept after re-attestation).
    fn get_revocation(env: Env, asset: Address) -> Option<Revocation>;

    /// Proposes to bind the registry to its verdict store, once, with the notice of an upgrade:
    /// `apply_verdict_store` binds it from `proposed_at + upgrade_delay_secs` (at once on a
    /// registry constructed with a zero notice, a local network's). From then on every change to
    /// an asset's verdicts (an attestation, a revocation) publishes the asset's standing to
    /// `store` in the same transaction, and every ended admission is passed on to it. Consumers
    /// read the store (`verdict_store`) for the same answers at a lower cost; since they trust
    /// its code as they trust the registry's, it changes only after notice. A new proposal
    /// replaces a pending one.
    ///
    /// # Arguments
    /// * `store` - a deployed verdict store whose `registry()` is this registry.
    ///
    /// # Errors
    /// * [`Error::VerdictStoreBound`] (20) - a store is already bound.
    /// * [`Error::VerdictStoreMismatch`] (21) - `store` answers for another registry.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["verdict_store_proposed", store]` with data `{applicable_at}`; on a zero-notice registry
    /// `["verdict_store_bound", store]` instead.
    fn bind_verdict_store(env: Env, store: Address) -> Result<(), Error>;

    /// Binds the proposed verdict store once its notice has passed.
    ///
    /// # Errors
    /// * [`Error::NoPendingVerdictStore`] (24) - nothing is proposed.
    /// * [`Error::VerdictStoreNotDue`] (25) - before the proposal's `applicable_at`.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["verdict_store_bound", store]`.
    fn apply_verdict_store(env: Env) -> Result<(), Error>;

    /// Withdraws the proposed verdict store.
    ///
    /// # Errors
    /// * [`Error::NoPendingVerdictStore`] (24) - nothing is proposed.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["verdict_store_cancelled", store]`.
    fn cancel_verdict_store(env: Env) -> Result<(), Error>;

    /// The verdict store proposed and not yet bound, if any.
    fn pending_verdict_store(env: Env) -> Option<PendingVerdictStore>;

    /// The verdict store consumers may read instead of the registry, once bound.
    fn verdict_store(env: Env) -> Option<Address>;

    /// Publishes the current standing of each of `assets` to the verdict store: for assets
    /// attested before the store was bound, and to bring a store answer back from stricter to
    /// exact after an attester's removal (see [`crate::VerdictStoreInterface`]). Anyone may call
    /// it; it publishes only what the registry holds.
    ///
    /// # Errors
    /// * [`Error::NoVerdictStore`] (22) - no store is bound.
    /// * [`Error::BatchTooLarge`] (7) - more than `MAX_BATCH_SIZE` (35) assets.
    fn republish(env: Env, assets: Vec<Address>) -> Result<(), Error>;
}
