use soroban_sdk::contracterror;

/// Why the gate refused. Codes 1..=4 are those of the earlier gate and never change.
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Error {
    /// The registry holds no attestation for the token (never attested, or revoked).
    NotAttested = 1,
    /// The attestation is older than the policy's `max_age_secs`.
    AttestationStale = 2,
    /// The token carries a mechanic the policy forbids (by default: freeze or clawback).
    IssuerCanTakeIt = 3,
    /// The token's severity is above the policy's ceiling (this catches critical-by-reputation
    /// tokens that carry no capability bits).
    SeverityTooHigh = 4,
    /// Constructor policy is unusable: a ceiling above 3 (high) or a zero age window.
    InvalidPolicy = 5,
    /// `amount` is zero or negative.
    InvalidAmount = 6,
    /// `withdraw` of more than the holder has deposited.
    InsufficientBalance = 7,
    /// The token's code (or its Stellar Asset Contract's admin) changed since it was attested:
    /// nothing judged the code that runs now.
    CodeChanged = 8,
}
