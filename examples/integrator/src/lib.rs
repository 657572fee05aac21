#![no_std]
//! A vault that accepts a token only on a fresh, acceptable Assay verdict, and fails closed:
//! no verdict, a revoked or stale one, or one it does not accept all refuse.
use soroban_sdk::{contract, contracterror, contractimpl, contracttype, Address, Env};

/// The registry's client (`registry::Client`) and types, generated from its `.wasm`.
pub mod registry {
    soroban_sdk::contractimport!(file = "wasm/assay_registry.wasm");
}

/// Mechanics bit 1: the issuer can freeze a balance.
pub const MECH_AUTH_REVOCABLE: u32 = 1 << 1;
/// Mechanics bit 2: the issuer can claw a balance back.
pub const MECH_AUTH_CLAWBACK_ENABLED: u32 = 1 << 2;
/// Highest severity accepted: 2 (medium).
pub const MAX_SEVERITY: u32 = 2;
/// Mechanics that refuse a token whatever its severity.
pub const REFUSED_MECHANICS: u32 = MECH_AUTH_REVOCABLE | MECH_AUTH_CLAWBACK_ENABLED;
/// Oldest verdict accepted, in seconds.
pub const MAX_AGE_SECS: u64 = 86_400;

#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
#[repr(u32)]
pub enum Error {
    /// The registry holds no verdict (never attested, or revoked).
    NotAttested = 1,
    /// The verdict is older than `MAX_AGE_SECS`.
    Stale = 2,
    /// The severity is above `MAX_SEVERITY`.
    TooSevere = 3,
    /// The issuer can freeze or claw back a balance.
    IssuerCanTakeIt = 4,
}

#[contracttype]
enum DataKey {
    Registry,
}

#[contract]
pub struct Vault;

#[contractimpl]
impl Vault {
    pub fn __constructor(env: Env, registry: Address) {
        env.storage().instance().set(&DataKey::Registry, &registry);
    }

    /// Ok if the vault accepts `token` now.
    ///
    /// # Errors
    /// `NotAttested` (1), `Stale` (2), `TooSevere` (3), `IssuerCanTakeIt` (4), in that order.
    pub fn accept(env: Env, token: Address) -> Result<(), Error> {
        let registry: Address = env.storage().instance().get(&DataKey::Registry).unwrap();
        let safety = registry::Client::new(&env, &registry)
            .get_safety(&token)
            .ok_or(Error::NotAttested)?;
        if env.ledger().timestamp().saturating_sub(safety.attested_at) > MAX_AGE_SECS {
            return Err(Error::Stale);
        }
        if safety.severity > MAX_SEVERITY {
            return Err(Error::TooSevere);
        }
        if safety.flags & REFUSED_MECHANICS != 0 {
            return Err(Error::IssuerCanTakeIt);
        }
        Ok(())
    }
}
