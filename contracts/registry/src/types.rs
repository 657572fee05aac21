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
}

/// The trace a revocation leaves: what was withdrawn, when, and by whom. Only the latest
/// revocation of an asset is kept; a later attestation does not erase it.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Revocation {
    /// Ledger timestamp of the revocation.
    pub revoked_at: u64,
    /// The attester that revoked.
    pub attester: Address,
    /// The attestation that was withdrawn, exactly as it was stored.
    pub revoked: Safety,
}

#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum DataKey {
    /// Instance: the current admin.
    Admin,
    /// Instance: the admin proposed by `transfer_admin`, until accepted.
    PendingAdmin,
    /// Persistent: present while the address may attest.
    Attester(Address),
    /// Persistent: the current attestation of an asset (its token contract address).
    Safety(Address),
    /// Persistent: the latest revocation of an asset.
    Revoked(Address),
}
