//! The registry's contract interface, documented once here.
//!
//! The contract implements this trait without doc comments on purpose: the SDK copies every
//! function's docs into the `.wasm`'s interface section, which would double the contract's size.
//! `docs/contract-interface.md` carries the same text for callers that read no Rust.
use soroban_sdk::{Address, BytesN, Env, Vec};

use crate::{Attestation, Error, Revocation, Safety};

pub trait SafetyRegistryInterface {
    /// Interface version of this code (3: `cancel_admin_transfer` was added to version 2; the
    /// earlier registry had no such function).
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

    /// Lets `attester` write attestations.
    ///
    /// # Errors
    /// * [`Error::AttesterExists`] (11) - already in the set.
    /// * Host auth error unless the admin authorised the call.
    ///
    /// # Events
    /// `["attester_added", attester]`.
    fn add_attester(env: Env, attester: Address) -> Result<(), Error>;

    /// Withdraws `attester`'s right to write. Its existing attestations stay until revoked or
    /// overwritten; their events name who wrote them.
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

    /// Replaces the contract code with already-uploaded WASM; address and storage are kept.
    ///
    /// # Arguments
    /// * `new_wasm_hash` - hash of WASM already uploaded to the network.
    ///
    /// # Errors
    /// Host auth error unless the admin authorised the call; host storage error if no WASM with
    /// that hash is uploaded.
    ///
    /// # Events
    /// `["upgraded"]` with data `{wasm_hash}`.
    fn upgrade(env: Env, new_wasm_hash: BytesN<32>) -> Result<(), Error>;

    /// Records `asset`'s verdict, stamped with the ledger time, replacing any earlier one.
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
    /// `["attest", asset]` with data `{attester, severity, flags, attested_at}`.
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
    /// * `attestations` - at most 50 elements.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::BatchTooLarge`] (7) - more than 50 elements; nothing is truncated.
    /// * Any error of [`crate::validate`] for the first invalid element; nothing is written.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// One `["attest", asset]` per element, in order.
    fn attest_many(
        env: Env,
        attester: Address,
        attestations: Vec<Attestation>,
    ) -> Result<(), Error>;

    /// Withdraws `asset`'s attestation, so every read answers "no" until it is attested again.
    /// Leaves a trace readable with `get_revocation`.
    ///
    /// # Arguments
    /// * `attester` - the writer; must authorise the call and be in the attester set.
    /// * `asset` - the token contract address.
    ///
    /// # Errors
    /// * [`Error::NotAttester`] (10) - `attester` is not in the set.
    /// * [`Error::NotAttested`] (5) - `asset` has no attestation.
    /// * Host auth error unless `attester` authorised the call.
    ///
    /// # Events
    /// `["revoke", asset]` with data `{attester, revoked_at}`.
    fn revoke(env: Env, attester: Address, asset: Address) -> Result<(), Error>;

    /// The current attestation of `asset`, or `None` if it was never attested or was revoked.
    /// Never writes or extends anything. This is the raw entry, not a judgment: a caller that
    /// decides from it must itself refuse severity 4 (critical), apply its own age limit, and
    /// treat `None` as "no".
    fn get_safety(env: Env, asset: Address) -> Option<Safety>;

    /// True only if `asset` is attested, its severity is at most `max_severity` and below 4
    /// (critical is never safe, whatever the ceiling), it carries no clawback bit when
    /// `max_severity` is below 3, and (when `max_age_secs > 0`) it is at most `max_age_secs` old.
    /// `max_age_secs = 0` disables the age check. Every other case answers false: no entry, a
    /// revoked entry, a stale entry.
    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool;

    /// True only if `asset` is attested, its severity is below 4 (critical), none of
    /// `forbidden_mask`'s bits are set, and (when `max_age_secs > 0`) it is at most
    /// `max_age_secs` old. A mask of 0 still needs an entry. The mask sees powers, not
    /// reputation, so critical is refused here whatever the mask; pair the mask with
    /// `is_safe`'s ceiling to refuse high-severity reputation too.
    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool;

    /// The latest revocation of `asset`, if it was ever revoked (kept after re-attestation).
    fn get_revocation(env: Env, asset: Address) -> Option<Revocation>;
}
