use soroban_sdk::{contracttype, Address, BytesN};

/// What the registry holds for one asset. Consumer ABI: field names, order and types never change.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Safety {
    /// 0 clear, 1 low, 2 medium, 3 high, 4 critical.
    pub severity: u32,
    /// Mechanics bitset (see the `MECH_*` constants).
    pub flags: u32,
    /// SHA-256 of the evidence the verdict rests on.
    pub evidence_hash: BytesN<32>,
    /// Ledger timestamp (seconds) of the write; never supplied by the caller.
    pub attested_at: u64,
}

/// One element of an `attest_many` batch; the registry stamps the time.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Attestation {
    pub asset: Address,
    pub severity: u32,
    pub flags: u32,
    pub evidence_hash: BytesN<32>,
    /// The code the verdict judged; the registry refuses it unless it is the asset's live code.
    pub code: CodeBinding,
}

/// What a verdict is bound to: the asset's code as the attester judged it. The registry accepts
/// a write only if the binding is live, and every read compares it with what is live then: once
/// it differs, the verdict judged code that no longer runs and no read admits the asset.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum CodeBinding {
    /// A WASM token: the hash of the executable judged (CAP-85 references resolved, as
    /// `Address::executable()` answers).
    Wasm(BytesN<32>),
    /// A Stellar Asset Contract: its admin, whose powers over balances the verdict judged. Also
    /// holds while nothing is deployed at the address (a classic asset whose SAC nobody deployed
    /// yet); any code that appears there must then be that SAC under this admin.
    StellarAssetAdmin(Address),
}

/// The trace a revocation leaves: what was withdrawn, when, and whose verdict it was. Only the
/// latest revocation of an asset is kept; a later attestation does not erase it.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Revocation {
    /// Ledger timestamp of the revocation.
    pub revoked_at: u64,
    /// The attester whose verdict was withdrawn (by itself, or by the admin in an emergency).
    pub attester: Address,
    /// The attestation that was withdrawn, exactly as it was stored.
    pub revoked: Safety,
}

/// Why `assess` admits or refuses an asset, in the order the rules are checked.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Assessment {
    /// Fresh, at or below the ceiling, none of the forbidden bits: the verdict `get_safety` holds.
    Safe(Safety),
    /// No current attester holds a verdict, and none was ever revoked.
    NotAttested,
    /// No current attester holds a verdict; the latest revocation happened at this ledger time.
    Revoked(u64),
    /// The verdict is this many seconds old, more than the caller's window.
    Stale(u64),
    /// The verdict's severity (critical, or above the caller's ceiling).
    SeverityTooHigh(u32),
    /// The verdict's mechanics bits that the caller forbids.
    ForbiddenMechanics(u32),
    /// A verdict that counts was bound to code that is no longer live (the token's WASM was
    /// replaced, or its Stellar Asset Contract's admin changed): nothing judged this code.
    CodeChanged,
}

/// An attester admission or removal the admin proposed, applicable from `applicable_at`.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct PendingAttesterChange {
    /// True for an admission (`add_attester`), false for a removal (`remove_attester`).
    pub adding: bool,
    /// Ledger time of the proposal.
    pub proposed_at: u64,
    /// Earliest ledger time `apply_attester_change` accepts: `proposed_at + upgrade_delay_secs`.
    pub applicable_at: u64,
}

/// A code replacement the admin proposed, applicable from `applicable_at`.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct PendingUpgrade {
    /// Hash of the uploaded WASM that would replace the registry's code.
    pub wasm_hash: BytesN<32>,
    /// Ledger time of the proposal.
    pub proposed_at: u64,
    /// Earliest ledger time `apply_upgrade` accepts: `proposed_at + upgrade_delay_secs`.
    pub applicable_at: u64,
}

/// A verdict store the admin proposed to bind, bindable from `applicable_at`.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct PendingVerdictStore {
    /// The proposed verdict store (its `registry()` is this registry).
    pub store: Address,
    /// Ledger time of the proposal.
    pub proposed_at: u64,
    /// Earliest ledger time `apply_verdict_store` accepts: `proposed_at + upgrade_delay_secs`.
    pub applicable_at: u64,
}
