//! Events, one struct each. Topics keep the earlier registry's prefix (`"attest"`, asset) and
//! (`"revoke"`, asset) so existing filters still match; `attest` adds the attester as a third
//! topic, so `getEvents` can filter one attester's verdicts.
use soroban_sdk::{contractevent, Address, BytesN};

/// An attestation was written by `attest` or `attest_many`.
#[contractevent(topics = ["attest"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Attested {
    #[topic]
    pub asset: Address,
    #[topic]
    pub attester: Address,
    pub severity: u32,
    pub flags: u32,
    pub evidence_hash: BytesN<32>,
    pub attested_at: u64,
}

/// An attester's verdict was withdrawn, by the attester itself or by the admin (`revoked_by`).
#[contractevent(topics = ["revoke"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Revoked {
    #[topic]
    pub asset: Address,
    /// Whose verdict was withdrawn.
    pub attester: Address,
    /// Who signed the revocation: `attester` itself, or the admin in an emergency.
    pub revoked_by: Address,
    pub revoked_at: u64,
}

/// The admin let a new address attest.
#[contractevent(topics = ["attester_added"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct AttesterAdded {
    #[topic]
    pub attester: Address,
}

/// The admin withdrew an address's right to attest.
#[contractevent(topics = ["attester_removed"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct AttesterRemoved {
    #[topic]
    pub attester: Address,
}

/// The admin proposed a successor, who must accept.
#[contractevent(topics = ["admin_proposed"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct AdminProposed {
    #[topic]
    pub admin: Address,
    pub pending_admin: Address,
}

/// The admin withdrew its proposal; `pending_admin` can no longer accept.
#[contractevent(topics = ["admin_transfer_cancelled"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct AdminTransferCancelled {
    #[topic]
    pub admin: Address,
    pub pending_admin: Address,
}

/// The proposed admin accepted; `previous_admin` has no power left.
#[contractevent(topics = ["admin_changed"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct AdminChanged {
    #[topic]
    pub admin: Address,
    pub previous_admin: Address,
}

/// The admin proposed a code replacement, applicable from `applicable_at`.
#[contractevent(topics = ["upgrade_proposed"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct UpgradeProposed {
    pub wasm_hash: BytesN<32>,
    pub applicable_at: u64,
}

/// The admin withdrew a proposed code replacement.
#[contractevent(topics = ["upgrade_cancelled"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct UpgradeCancelled {
    pub wasm_hash: BytesN<32>,
}

/// The admin applied a proposed code replacement after its notice; storage is untouched.
#[contractevent(topics = ["upgraded"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Upgraded {
    pub wasm_hash: BytesN<32>,
}

/// The admin proposed admitting (`adding`) or removing an attester, applicable from
/// `applicable_at` with `apply_attester_change`.
#[contractevent(topics = ["attester_change_proposed"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct AttesterChangeProposed {
    #[topic]
    pub attester: Address,
    pub adding: bool,
    pub applicable_at: u64,
}

/// The admin withdrew a proposed admission (`adding`) or removal; it never applies.
#[contractevent(topics = ["attester_change_cancelled"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct AttesterChangeCancelled {
    #[topic]
    pub attester: Address,
    pub adding: bool,
}

/// The admin bound the registry to its verdict store (`bind_verdict_store`), once.
#[contractevent(topics = ["verdict_store_bound"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct VerdictStoreBound {
    #[topic]
    pub store: Address,
}

/// The admin proposed a verdict store (`bind_verdict_store`), bindable from `applicable_at`.
#[contractevent(topics = ["verdict_store_proposed"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct VerdictStoreProposed {
    #[topic]
    pub store: Address,
    pub applicable_at: u64,
}

/// The admin withdrew the proposed verdict store (`cancel_verdict_store`).
#[contractevent(topics = ["verdict_store_cancelled"], sparse = false)]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct VerdictStoreCancelled {
    #[topic]
    pub store: Address,
}
