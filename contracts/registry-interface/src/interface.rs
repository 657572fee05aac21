//! The registry's contract interface, documented once here.
//!
//! The contract implements this trait without doc comments on purpose: the SDK copies every
//! function's docs into the `.wasm`'s interface section, which would double the contract's size.
//! `docs/contract-interface.md` carries the same text for callers that read no Rust.
use soroban_sdk::{contractclient, Address, BytesN, Env, Vec};

use crate::{Assessment, Attestation, Error, PendingUpgrade, Revocation, Safety};

/// `SafetyRegistryInterfaceClient` calls a deployed registry from another contract.
#[contractclient(name = "SafetyRegistryInterfaceClient")]
pub trait SafetyRegistryInterface {
    /// Interface version of this code (4: per-attester verdicts, `get_safety_by`,
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

    /// Lets `attester` write attestations. Only verdicts it writes from now on count: if it was
    /// removed earlier, the verdicts it wrote before stay void until it writes them again.
    ///
    /// # Errors
    /// * [`Error::AttesterExists`] (11) - already in the set.
    /// * [`Error::TooManyAttesters`] (15) - the set already holds `MAX_ATTESTERS` (16).
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_added", attester]`.
    fn add_attester(env: Env, attester: Address) -> Result<(), Error>;

    /// Withdraws `attester`'s right to write. From this call on, none of its verdicts counts for
    /// `get_safety`, `is_safe`, `is_safe_masked`, `assess` or `is_safe_quorum`; they stay
    /// readable with `get_safety_by`, and the admin can withdraw them with `admin_revoke`.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - not in the set.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_removed", attester]`.
    fn remove_attester(env: Env, attester: Address) -> Result<(), Error>;

    /// Whether `attester` may currently write.
    fn is_attester(env: Env, attester: Address) -> bool;

    /// The notice, in seconds, between `propose_upgrade` and the earliest `apply_upgrade`; fixed
    /// at construction.
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

    /// Records `attester`'s own verdict on `asset`, stamped with the ledger time, replacing its
    /// earlier one; other attesters' verdicts are untouched. It becomes the asset's most recent
    /// verdict (`get_safety`).
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `asset` - the token contract address (a classic asset's SAC address).
    /// * `severity` - 0..=4.
    /// * `flags` - mechanics bits 0..=8 (see `MECH_*`).
    /// * `evidence_hash` - SHA-256 of the evidence.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::InvalidSeverity`] (3), [`Error::ReservedFlags`] (8),
    ///   [`Error::InconsistentAttestation`] (4), [`Error::ViolationBelowCritical`] (9) -
    ///   see [`crate::validate`], checked in that order.
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
    /// * Any error of [`crate::validate`] for the first invalid element; nothing is written.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// One `["attest", asset, attester]` per element, in order.
    fn attest_many(
        env: Env,
        attester: Address,
        attestations: Vec<Attestation>,
    ) -> Result<(), Error>;

    /// Withdraws `attester`'s own verdict on `asset`; other attesters' verdicts stay. Leaves a
    /// trace readable with `get_revocation`.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `asset` - the token contract address.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::NotAttested`] (5) - `attester` holds no verdict on `asset`.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// `["revoke", asset]` with data `{attester, revoked_by, revoked_at}`, `revoked_by` being
    /// `attester`.
    fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error>;

    /// Emergency: the admin withdraws `attester`'s verdict on `asset`, whether or not `attester`
    /// is still in the set. Leaves the same trace as `revoke`.
    ///
    /// # Errors
    /// * [`Error::NotAttested`] (5) - `attester` holds no verdict on `asset`.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["revoke", asset]` with data `{attester, revoked_by, revoked_at}`, `revoked_by` being
    /// the admin.
    fn admin_revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error>;

    /// The most recent verdict on `asset` written by a current attester during its current
    /// admission, or `None` (never attested, every such verdict revoked, or its writers removed).
    /// Never writes or extends anything. This is the raw entry, not a judgment: a caller that
    /// decides from it must itself refuse severity 4 (critical), apply its own age limit, and
    /// treat `None` as "no" — or call `assess`, which does all three.
    fn get_safety(env: Env, asset: Address) -> Option<Safety>;

    /// `attester`'s own verdict on `asset` as stored, or `None`. Raw: it is returned even if
    /// `attester` was removed since (check `is_attester`); `is_safe_quorum` counts only current
    /// attesters.
    fn get_safety_by(env: Env, asset: Address, attester: Address) -> Option<Safety>;

    /// Judges the verdict `get_safety` returns. True only if `asset` is attested, its severity is
    /// at most `max_severity` and below 4
    /// (critical is never safe, whatever the ceiling), it carries no clawback bit when
    /// `max_severity` is below 3, and (when `max_age_secs > 0`) it is at most `max_age_secs` old.
    /// `max_age_secs = 0` disables the age check. Every other case answers false: no entry, a
    /// revoked entry, a stale entry.
    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool;

    /// Judges the verdict `get_safety` returns. True only if `asset` is attested, its severity is
    /// below 4 (critical), none of
    /// `forbidden_mask`'s bits are set, and (when `max_age_secs > 0`) it is at most
    /// `max_age_secs` old. A mask of 0 still needs an entry. The mask sees powers, not
    /// reputation, so critical is refused here whatever the mask; pair the mask with
    /// `is_safe`'s ceiling to refuse high-severity reputation too.
    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool;

    /// True only if at least `threshold` distinct attesters of `attesters` are current attesters
    /// whose own verdict on `asset` passes `is_safe`'s rule (`max_severity`, clawback,
    /// `max_age_secs`). A `threshold` of 0 or above the list's length, more than
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

    /// Why `asset` would be admitted or refused under this policy, from the verdict `get_safety`
    /// returns, checked in this order: `NotAttested` (no verdict, never revoked) or
    /// `Revoked(revoked_at)` (no verdict, the latest revocation); `Stale(age_secs)` when
    /// `max_age_secs > 0` and the verdict is older; `SeverityTooHigh(severity)` for critical or
    /// above `max_severity`; `ForbiddenMechanics(flags & forbidden_mask)`; else `Safe(verdict)`.
    fn assess(
        env: Env,
        asset: Address,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Assessment;

    /// The latest revocation of `asset` by any attester or the admin, if it was ever revoked
    /// (kept after re-attestation).
    fn get_revocation(env: Env, asset: Address) -> Option<Revocation>;
}
