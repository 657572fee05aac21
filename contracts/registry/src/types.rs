//! Storage-only types: what the registry keeps, never what it answers.
use soroban_sdk::{contracttype, Address, BytesN, Val, Vec};

use crate::{rules::Judged, Safety};

/// Storage only: a verdict as stored, with its writer and the admission it was written under, so
/// that a read learns whether it still counts from one small-key lookup (see [`DataKey`]).
#[contracttype]
#[derive(Clone, Debug)]
pub struct Record {
    pub attester: Address,
    /// The writer's admission id when it wrote this verdict.
    pub admission: u32,
    pub severity: u32,
    pub flags: u32,
    pub evidence_hash: BytesN<32>,
    pub attested_at: u64,
    /// The code the verdict judged, live when it was written: an encoded
    /// [`CodeBinding`](crate::CodeBinding) (a vector: variant name, then its field), kept encoded
    /// so that a read compares it with the live executable's encoding without decoding either; the
    /// same bytes in storage as a `CodeBinding` field.
    pub code: Vec<Val>,
}

impl Record {
    /// The fields a policy judges.
    pub fn judged(&self) -> Judged {
        Judged {
            severity: self.severity,
            flags: self.flags,
            attested_at: self.attested_at,
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

/// Storage keys.
///
/// Two entries on the read path are keyed outside this enum, because the shape of a key is what
/// every access pays for: a variant wraps its fields in a vector, and converting that key costs a
/// read about 8,000 instructions more than a bare value (measured with
/// `cargo run -p assay-gate-example --example read_cost`). `get_safety` reads:
/// - persistent, keyed by the bare asset `Address`: the current verdicts, one [`Record`] per
///   attester, oldest first;
/// - persistent, [`DataKey::Revoked`], when a verdict leads: whether the asset's latest revocation
///   vetoes it;
/// - persistent, keyed by a bare `u32` admission id, once per verdict: present while that
///   admission is current (it holds the attester's address);
/// - the asset's live code (`Address::executable()`, and a SAC's `admin()`), once.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum DataKey {
    /// Instance: the current admin.
    Admin,
    /// Instance: the admin proposed by `transfer_admin`, until accepted.
    PendingAdmin,
    /// Persistent: present while the address may attest; holds its current admission id (a
    /// verdict counts only while the admission it was written under is current).
    Attester(Address),
    /// Persistent, interface 3 and earlier: the one shared verdict of an asset. No longer
    /// written or read; kept so the key's meaning is never reused.
    Safety(Address),
    /// Persistent: the latest revocation of an asset.
    Revoked(Address),
    /// Persistent, interface 4: the verdict of one attester (second) for one asset (first). No
    /// longer written or read (interface 5 keeps an asset's verdicts in one entry); kept so the
    /// key's meaning is never reused.
    Verdict(Address, Address),
    /// Instance: the current attesters, in the order they were added (at most `MAX_ATTESTERS`).
    Attesters,
    /// Instance: the notice `apply_upgrade` waits for, fixed at construction.
    UpgradeDelay,
    /// Instance: the proposed code replacement, until applied or cancelled.
    PendingUpgrade,
    /// Instance: how many admissions were ever made, which is the next admission's id. Ids are
    /// never reused, so a removed and re-admitted attester's earlier verdicts stay void.
    Admissions,
    /// Persistent: the admission or removal of an attester proposed and not yet applied.
    AttesterChange(Address),
    /// Instance: the verdict store the registry publishes every asset's standing to, once bound.
    VerdictStore,
    /// Instance: the verdict store proposed by `bind_verdict_store`, until bound or cancelled.
    PendingVerdictStore,
}
