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

/// Storage only: the most recent verdict written for an asset, with its writer, so that
/// `get_safety` answers from one entry while the writer is still an attester.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Latest {
    pub attester: Address,
    pub severity: u32,
    pub flags: u32,
    pub evidence_hash: BytesN<32>,
    pub attested_at: u64,
}

impl Latest {
    pub fn new(attester: Address, safety: Safety) -> Self {
        Latest {
            attester,
            severity: safety.severity,
            flags: safety.flags,
            evidence_hash: safety.evidence_hash,
            attested_at: safety.attested_at,
        }
    }

    pub fn safety(self) -> Safety {
        Safety {
            severity: self.severity,
            flags: self.flags,
            evidence_hash: self.evidence_hash,
            attested_at: self.attested_at,
        }
    }
}

#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum DataKey {
    /// Instance: the current admin.
    Admin,
    /// Instance: the admin proposed by `transfer_admin`, until accepted.
    PendingAdmin,
    /// Persistent: present while the address may attest; holds the ledger time it was admitted
    /// (a verdict counts only if written at or after it).
    Attester(Address),
    /// Persistent, interface 3 and earlier: the one shared verdict of an asset. No longer
    /// written or read; kept so the key's meaning is never reused.
    Safety(Address),
    /// Persistent: the latest revocation of an asset.
    Revoked(Address),
    /// Persistent: the verdict of one attester (second) for one asset (first).
    Verdict(Address, Address),
    /// Persistent: the most recent verdict of an asset, with its writer ([`Latest`]).
    Latest(Address),
    /// Instance: the current attesters, in the order they were added (at most `MAX_ATTESTERS`).
    Attesters,
    /// Instance: the notice `apply_upgrade` waits for, fixed at construction.
    UpgradeDelay,
    /// Instance: the proposed code replacement, until applied or cancelled.
    PendingUpgrade,
}
