use soroban_sdk::contracterror;

/// Every way a registry call can be refused.
///
/// Codes are ABI: a published code never changes meaning and is never reused. Codes 1..=7 keep
/// the meaning they had in the earlier registry; new causes are appended after them.
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Error {
    /// Reserved: the earlier registry's second `init`. The constructor runs exactly once, so this
    /// registry never returns it.
    AlreadyInitialized = 1,
    /// Reserved: the earlier registry's write before `init`. Deployment runs the constructor, so
    /// this registry never returns it.
    NotInitialized = 2,
    /// `severity` is above 4 (critical).
    InvalidSeverity = 3,
    /// A power bit is set below the severity that power implies: clawback (bit 2), code_mutable
    /// (bit 9) or admin_clawback (bit 10) below 3; revocable (bit 1) or admin_freeze (bit 11)
    /// below 2; auth required (bit 0) below 1.
    InconsistentAttestation = 4,
    /// `revoke` or `admin_revoke` where the attester holds no verdict for the asset.
    NotAttested = 5,
    /// `accept_admin` or `cancel_admin_transfer` while no transfer is pending.
    NoPendingAdmin = 6,
    /// `attest_many` with more than `MAX_BATCH_SIZE` (35) elements, or `republish` with more
    /// than `MAX_BATCH_SIZE` assets.
    BatchTooLarge = 7,
    /// `flags` sets a reserved bit (14 or above; 13 and below until interface 5).
    ReservedFlags = 8,
    /// `flags` sets `sep41_violation` (bit 8) but `severity` is not 4 (critical).
    ViolationBelowCritical = 9,
    /// The named attester is not in the attester set.
    NotAttester = 10,
    /// `add_attester` of an address already in the set.
    AttesterExists = 11,
    /// The constructor got a notice below `MIN_NOTICE_SECS` (one hour; 0 until interface 5)
    /// without `allow_instant_upgrade` (only a local network may change code or attesters with
    /// little or no notice).
    UpgradeDelayRequired = 12,
    /// `apply_upgrade` or `cancel_upgrade` while no upgrade is proposed.
    NoPendingUpgrade = 13,
    /// `apply_upgrade` before the proposal's `applicable_at`.
    UpgradeNotDue = 14,
    /// `add_attester` when the set already holds `MAX_ATTESTERS` (16) attesters.
    TooManyAttesters = 15,
    /// An attestation's code binding is not the asset's live code: another WASM hash than the
    /// one the asset runs, another admin than its Stellar Asset Contract's, the wrong kind, or a
    /// `Wasm` binding for an address with no contract.
    CodeMismatch = 16,
    /// `assess_many` with more than `MAX_ASSESS_ASSETS` (10) assets.
    TooManyAssets = 17,
    /// `apply_attester_change` or `cancel_attester_change` while no change of that attester is
    /// pending.
    NoPendingAttesterChange = 18,
    /// `apply_attester_change` before the change's `applicable_at`.
    AttesterChangeNotDue = 19,
    /// `bind_verdict_store` or `apply_verdict_store` when the registry already has a verdict
    /// store (it is bound once).
    VerdictStoreBound = 20,
    /// `bind_verdict_store` of a store that answers for another registry.
    VerdictStoreMismatch = 21,
    /// `republish` on a registry with no verdict store.
    NoVerdictStore = 22,
    /// A write by an attester whose removal is pending (proposed, not yet applied) that could
    /// loosen what the registry answers: a verdict below critical, or a revocation. While it
    /// leaves, an attester may only write critical verdicts, which never admit.
    AttesterLeaving = 23,
    /// `apply_verdict_store` or `cancel_verdict_store` while no binding is proposed.
    NoPendingVerdictStore = 24,
    /// `apply_verdict_store` before the proposal's `applicable_at`.
    VerdictStoreNotDue = 25,
}
