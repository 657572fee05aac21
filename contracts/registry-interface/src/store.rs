//! The verdict store's interface: the registry's consumer reads, answered from one small entry per
//! asset that the registry publishes.
//!
//! # Why a second contract
//!
//! Every call pays to instantiate the callee's module: about 6,500 instructions for each host
//! function it imports and 2,300 for each function it exports, whether the call uses them or not.
//! The registry's module (attester set, notice, upgrades, per-attester verdicts, quorum reads)
//! costs more to instantiate than a whole read of a small contract. So the registry folds an
//! asset's verdicts into a [`standing`] each time they change (an attestation, a revocation) and
//! publishes it to its verdict store, whose module holds only the reads and the one write, and
//! reads it without converting a structure. A consumer calls the store with the registry's
//! arguments and gets the registry's answers, or stricter ones (below); `docs/contract-interface.md`
//! has the figures.
//!
//! # How the store answers
//!
//! The published standing carries the verdict the registry's `get_safety` would answer with (the
//! most severe that counts, ties to the most recent), its writer's admission, the code it is bound
//! to, and whether every verdict that counted was bound to that same code. At read time the store
//! checks what can change without a write to the asset: the code (compared with the live code, as
//! the registry compares it), the writer's admission (the registry passes every ended admission on)
//! and the age. Two cases answer stricter than the registry until the registry publishes the asset
//! again (`republish`, which anyone may call): the leading verdict's writer was removed (the store
//! answers as for no verdict, where the registry falls back to a less severe verdict), and verdicts
//! that counted were bound to different code (`CodeChanged`, where the registry might admit once
//! the odd verdict's writer was removed, or when both bind the admin of a SAC nobody deployed yet).
//! Never looser.
//!
//! # Types on the wire
//!
//! The answers are the registry's values (`Option<Safety>`, `Assessment`), and this trait's client
//! decodes them as such. The store's own interface section types `get_safety` and `assess` as
//! `Val`: it returns the `Safety` the registry published without decoding it, since typing the
//! return would make every call instantiate the host's map conversions. It types `max_age_secs` as
//! `Val` too (callers pass a `u64`): it reads a small value as it is and a larger one as no limit,
//! without importing the host's `u64` conversion. It creates no symbol: `Assessment`'s long variant
//! names are [`standing::NAMES`], which the registry hands over when it binds the store.
use soroban_sdk::{contractclient, Address, Env, Val, Vec};

use crate::{Assessment, Error, Safety};

/// A published standing: a vector of [`standing::LEN`] values at these positions. The store keeps
/// the first [`standing::STORED_LEN`] under the asset's bare address (the asset, last, is the key
/// and is not stored), so a read deserialises no address and converts nothing. Times are ledger
/// seconds, which fit the host's small-value encoding.
pub mod standing {
    /// `Option<Safety>`: the leading verdict as `get_safety` answers it; void if none counts.
    pub const SAFETY: u32 = 0;
    /// `u32`, `u32`, `u64`: the leading verdict's severity, mechanics bits and ledger time (0 if
    /// none counts), which the store judges without decoding the `Safety`.
    pub const SEVERITY: u32 = 1;
    pub const FLAGS: u32 = 2;
    pub const ATTESTED_AT: u32 = 3;
    /// `u32`: the admission its writer wrote it under.
    pub const ADMISSION: u32 = 4;
    /// `u32`, one of the `CODE_*` values: what the leading verdict is bound to.
    pub const CODE: u32 = 5;
    /// The live code's `Executable`, encoded, that the binding needs (`["Wasm", hash]` or
    /// `["StellarAsset"]`); void unless `CODE` is `CODE_WASM` or `CODE_STELLAR_ASSET`.
    pub const EXECUTABLE: u32 = 6;
    /// `Option<Address>`: a Stellar Asset Contract binding's admin.
    pub const ADMIN: u32 = 7;
    /// `Option<u64>`: the asset's latest revocation, if any (`assess`'s `Revoked` while no verdict
    /// counts).
    pub const REVOKED_AT: u32 = 8;
    /// `Address`: the asset, the key the store keeps the rest under.
    pub const ASSET: u32 = 9;
    pub const LEN: u32 = 10;
    /// What the store keeps of a standing: every value before [`ASSET`].
    pub const STORED_LEN: u32 = ASSET;

    /// No verdict counts.
    pub const CODE_NONE: u32 = 0;
    /// Bound to a WASM hash: holds while the asset's executable is that WASM.
    pub const CODE_WASM: u32 = 1;
    /// Bound to a Stellar Asset Contract's admin: holds while nothing is deployed at the address,
    /// or the SAC is and its `admin()` is this admin.
    pub const CODE_STELLAR_ASSET: u32 = 2;
    /// The verdicts that counted were bound to different code, so one of them judged code that is
    /// not live: `CodeChanged`.
    pub const CODE_DISAGREES: u32 = 3;

    /// The names of `Assessment`'s variants too long for a small symbol, in this order, which the
    /// registry hands its store on binding (`publish`'s `names`): the store then creates no symbol,
    /// a host function every call of it would pay to instantiate.
    pub const NAMES: [&str; NAMES_LEN as usize] = [
        "NotAttested",
        "CodeChanged",
        "SeverityTooHigh",
        "ForbiddenMechanics",
    ];
    pub const NAMES_LEN: u32 = 4;
    pub const NOT_ATTESTED: u32 = 0;
    pub const CODE_CHANGED: u32 = 1;
    pub const SEVERITY_TOO_HIGH: u32 = 2;
    pub const FORBIDDEN_MECHANICS: u32 = 3;
}

/// `VerdictStoreInterfaceClient` calls a deployed verdict store from another contract.
#[contractclient(name = "VerdictStoreInterfaceClient")]
pub trait VerdictStoreInterface {
    /// Interface version of this code (the registry's: 6 is the first with a store).
    fn version(env: Env) -> u32;

    /// The registry whose verdicts this store answers with; the only address that can publish.
    fn registry(env: Env) -> Address;

    /// The registry's `get_safety`, from the published standing (see the module docs).
    fn get_safety(env: Env, asset: Address) -> Option<Safety>;

    /// The registry's `is_safe`, from the published standing.
    fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: u64) -> bool;

    /// The registry's `is_safe_masked`, from the published standing.
    fn is_safe_masked(env: Env, asset: Address, forbidden_mask: u32, max_age_secs: u64) -> bool;

    /// The registry's `assess`, from the published standing. A leading verdict whose writer was
    /// removed answers `NotAttested` or `Revoked(revoked_at)`, as for no verdict.
    fn assess(
        env: Env,
        asset: Address,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Assessment;

    /// The registry's `assess_many`, from the published standings.
    ///
    /// # Errors
    /// * [`Error::TooManyAssets`] (17) - more than `MAX_ASSESS_ASSETS` (10) assets.
    fn assess_many(
        env: Env,
        assets: Vec<Address>,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: u64,
    ) -> Result<Vec<Assessment>, Error>;

    /// Replaces the standing of each asset in `standings` (each a [`standing`] vector; the last
    /// wins for an asset named twice), ends `ended_admission`, if given: no leading verdict
    /// written under it answers any more, and keeps `names`, if given: the symbols of
    /// [`standing::NAMES`], which the registry passes when it binds the store (`assess` and
    /// `assess_many` trap until then; `get_safety`, `is_safe` and `is_safe_masked` answer).
    ///
    /// # Errors
    /// Host auth error unless the registry is the caller.
    fn publish(
        env: Env,
        standings: Vec<Vec<Val>>,
        ended_admission: Option<u32>,
        names: Option<Vec<Val>>,
    );
}
