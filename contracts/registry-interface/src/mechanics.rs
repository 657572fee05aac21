//! Severity levels, mechanics bits and the write-time rules that tie them together.
use crate::Error;

pub const SEVERITY_CLEAR: u32 = 0;
pub const SEVERITY_LOW: u32 = 1;
pub const SEVERITY_MEDIUM: u32 = 2;
pub const SEVERITY_HIGH: u32 = 3;
pub const SEVERITY_CRITICAL: u32 = 4;

/// Bit 0: the issuer decides who may open a trustline.
pub const MECH_AUTH_REQUIRED: u32 = 1 << 0;
/// Bit 1: the issuer can freeze a held balance.
pub const MECH_AUTH_REVOCABLE: u32 = 1 << 1;
/// Bit 2: the issuer can take and burn a balance without the holder's signature.
pub const MECH_AUTH_CLAWBACK_ENABLED: u32 = 1 << 2;
/// Bit 3: both copies of the issuer flags say they can never change.
pub const MECH_AUTH_IMMUTABLE: u32 = 1 << 3;
/// Bit 4: nobody verifiably stands behind the asset's home domain.
pub const MECH_DOMAIN_UNVERIFIED: u32 = 1 << 4;
/// Bit 5: a curated adverse listing escalated the asset.
pub const MECH_BLOCKLISTED: u32 = 1 << 5;
/// Bit 6: the checked holder's trustline carries clawback.
pub const MECH_TRUSTLINE_CLAWBACK_ENABLED: u32 = 1 << 6;
/// Bit 7: the checked holder's trustline is deauthorized.
pub const MECH_TRUSTLINE_DEAUTHORIZED: u32 = 1 << 7;
/// Bit 8: the SEP-41 conformance suite observed a FAIL; only accompanies severity 4.
pub const MECH_SEP41_VIOLATION: u32 = 1 << 8;
/// Bit 9: a custom token's code imports the contract-update function; implies at least high.
pub const MECH_CODE_MUTABLE: u32 = 1 << 9;
/// Bit 10: a custom token's spec exposes `clawback`; implies at least high.
pub const MECH_ADMIN_CLAWBACK: u32 = 1 << 10;
/// Bit 11: a custom token's spec exposes a freeze of a holder's balance; implies at least medium.
pub const MECH_ADMIN_FREEZE: u32 = 1 << 11;
/// Bit 12: a custom token's spec exposes `mint`; recorded, no floor.
pub const MECH_ADMIN_MINT: u32 = 1 << 12;
/// Bit 13: a privileged entry point writes state but its effect on holders could not be
/// classified within the bound; recorded, no floor.
pub const MECH_ADMIN_UNCLASSIFIED: u32 = 1 << 13;
/// Bit 14: the admin can change what a holder's transfer delivers (after a privileged call, a
/// transfer of N credits its recipient less than N); implies at least medium (high when the
/// attester saw it deliver nothing, which the severity carries).
pub const MECH_ADMIN_TRANSFER_FEE: u32 = 1 << 14;

/// Bits 0-2: powers the issuer holds over every balance.
pub const CAPABILITY_MASK: u32 =
    MECH_AUTH_REQUIRED | MECH_AUTH_REVOCABLE | MECH_AUTH_CLAWBACK_ENABLED;
/// The power to take a balance, whether the issuer's flags (bit 2) or a token's code (bit 10)
/// grant it.
pub const CONFISCATION_MASK: u32 = MECH_AUTH_CLAWBACK_ENABLED | MECH_ADMIN_CLAWBACK;
/// Policy mask for `is_safe_masked`: refuse confiscation (bits 2, 10), code that can be replaced
/// with code that confiscates (bit 9) and a transfer fee the admin sets (bit 14: up to all a
/// holder's transfer sends).
pub const POLICY_MASK_CONFISCATION_ONLY: u32 =
    CONFISCATION_MASK | MECH_CODE_MUTABLE | MECH_ADMIN_TRANSFER_FEE;
/// Policy mask for `is_safe_masked`: refuse confiscation and freezing (bits 1, 2, 10, 11),
/// replaceable code (bit 9) and an admin's transfer fee (bit 14).
pub const POLICY_MASK_FREEZE_INCLUSIVE: u32 =
    POLICY_MASK_CONFISCATION_ONLY | MECH_AUTH_REVOCABLE | MECH_ADMIN_FREEZE;
/// Bits 9-14: powers a custom token's code grants, and the entry points it could not classify.
pub const CONTRACT_MASK: u32 = MECH_CODE_MUTABLE
    | MECH_ADMIN_CLAWBACK
    | MECH_ADMIN_FREEZE
    | MECH_ADMIN_MINT
    | MECH_ADMIN_UNCLASSIFIED
    | MECH_ADMIN_TRANSFER_FEE;
/// Every bit with a meaning; anything above is reserved and refused.
pub const KNOWN_FLAGS_MASK: u32 = (MECH_ADMIN_TRANSFER_FEE << 1) - 1;

/// Largest `attest_many` batch. One `attest` event is about 320 bytes with its evidence hash and
/// its attester as a topic, and a transaction may emit 16,384 bytes of events: 35 events stay at
/// or below 70 % of that limit, the binding one (docs/contract-interface.md has the figures).
pub const MAX_BATCH_SIZE: u32 = 35;

/// Largest attester set: bounds what `get_safety` reads when the latest writer was removed.
pub const MAX_ATTESTERS: u32 = 16;

/// Largest list `is_safe_quorum` accepts; a longer one answers false.
pub const MAX_QUORUM_ATTESTERS: u32 = 10;

/// Largest list `assess_many` accepts; a longer one is refused (`TooManyAssets`).
pub const MAX_ASSESS_ASSETS: u32 = 10;

/// The shortest notice (one hour) a registry takes for upgrades and attester changes without
/// the explicit consent given at construction (`allow_instant_upgrade`, local networks only).
pub const MIN_NOTICE_SECS: u64 = 3_600;

/// Refuses a severity/flags pair no honest scan can produce. Checks run in this order, so the
/// first failing rule names the error.
pub fn validate(severity: u32, flags: u32) -> Result<(), Error> {
    if severity > SEVERITY_CRITICAL {
        return Err(Error::InvalidSeverity);
    }
    if flags & !KNOWN_FLAGS_MASK != 0 {
        return Err(Error::ReservedFlags);
    }
    // Severity is the strongest single power, so a power bit implies at least its level.
    let implied =
        if flags & (MECH_AUTH_CLAWBACK_ENABLED | MECH_CODE_MUTABLE | MECH_ADMIN_CLAWBACK) != 0 {
            SEVERITY_HIGH
        } else if flags & (MECH_AUTH_REVOCABLE | MECH_ADMIN_FREEZE | MECH_ADMIN_TRANSFER_FEE) != 0 {
            SEVERITY_MEDIUM
        } else if flags & MECH_AUTH_REQUIRED != 0 {
            SEVERITY_LOW
        } else {
            SEVERITY_CLEAR
        };
    if severity < implied {
        return Err(Error::InconsistentAttestation);
    }
    if flags & MECH_SEP41_VIOLATION != 0 && severity != SEVERITY_CRITICAL {
        return Err(Error::ViolationBelowCritical);
    }
    Ok(())
}
