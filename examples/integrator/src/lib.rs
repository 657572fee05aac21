#![no_std]
//! A vault that accepts a token only on a fresh, acceptable Assay verdict about the code the token
//! runs now, and fails closed: no verdict, a revoked or stale one, one about replaced code, or one it
//! does not accept all refuse.
use soroban_sdk::{contract, contracterror, contractimpl, contracttype, token, Address, Env};

/// The registry's client (`registry::Client`) and types, generated from its `.wasm`.
pub mod registry {
    soroban_sdk::contractimport!(file = "wasm/assay_registry.wasm");
}

/// Mechanics bit 1: the issuer can freeze a balance.
pub const MECH_AUTH_REVOCABLE: u32 = 1 << 1;
/// Mechanics bit 2: the issuer can claw a balance back.
pub const MECH_AUTH_CLAWBACK_ENABLED: u32 = 1 << 2;
/// Mechanics bit 9: a custom token's code can be replaced.
pub const MECH_CODE_MUTABLE: u32 = 1 << 9;
/// Mechanics bit 10: a custom token's code can claw a balance back.
pub const MECH_ADMIN_CLAWBACK: u32 = 1 << 10;
/// Mechanics bit 11: a custom token's code can freeze a balance.
pub const MECH_ADMIN_FREEZE: u32 = 1 << 11;
/// Mechanics bit 14: a custom token's admin can change what a transfer delivers (a fee it sets).
pub const MECH_ADMIN_TRANSFER_FEE: u32 = 1 << 14;
/// Highest severity accepted: 2 (medium).
pub const MAX_SEVERITY: u32 = 2;
/// Mechanics that refuse a token whatever its severity: freezing and confiscation, by the issuer's
/// flags or by a token's code, replaceable code and a transfer fee the admin sets (the registry's
/// `POLICY_MASK_FREEZE_INCLUSIVE`).
pub const REFUSED_MECHANICS: u32 = MECH_AUTH_REVOCABLE
    | MECH_AUTH_CLAWBACK_ENABLED
    | MECH_CODE_MUTABLE
    | MECH_ADMIN_CLAWBACK
    | MECH_ADMIN_FREEZE
    | MECH_ADMIN_TRANSFER_FEE;
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
    /// The token's code (or its Stellar Asset Contract's admin) changed since it was attested.
    CodeChanged = 5,
    /// A deposit of zero or less.
    InvalidAmount = 6,
}

#[contracttype]
enum DataKey {
    Registry,
    /// What `holder` has deposited of `token`.
    Balance(Address, Address),
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
    /// `NotAttested` (1), `CodeChanged` (5), `Stale` (2), `TooSevere` (3), `IssuerCanTakeIt` (4), in
    /// that order.
    pub fn accept(env: Env, token: Address) -> Result<(), Error> {
        let registry: Address = env.storage().instance().get(&DataKey::Registry).unwrap();
        let assessment = registry::Client::new(&env, &registry).assess(
            &token,
            &MAX_SEVERITY,
            &REFUSED_MECHANICS,
            &MAX_AGE_SECS,
        );
        match assessment {
            registry::Assessment::Safe(_) => Ok(()),
            registry::Assessment::NotAttested | registry::Assessment::Revoked(_) => {
                Err(Error::NotAttested)
            }
            registry::Assessment::CodeChanged => Err(Error::CodeChanged),
            registry::Assessment::Stale(_) => Err(Error::Stale),
            registry::Assessment::SeverityTooHigh(_) => Err(Error::TooSevere),
            registry::Assessment::ForbiddenMechanics(_) => Err(Error::IssuerCanTakeIt),
        }
    }

    /// Moves `amount` of `token` from `from` into the vault, if the vault accepts `token` now.
    /// `from` authorises this call and the token transfer inside it.
    ///
    /// # Errors
    /// `InvalidAmount` (6), then whatever [`Vault::accept`] refuses with.
    pub fn deposit(env: Env, token: Address, from: Address, amount: i128) -> Result<(), Error> {
        from.require_auth();
        if amount <= 0 {
            return Err(Error::InvalidAmount);
        }
        Self::accept(env.clone(), token.clone())?;
        token::Client::new(&env, &token).transfer(&from, env.current_contract_address(), &amount);
        let key = DataKey::Balance(token, from);
        let held: i128 = env.storage().persistent().get(&key).unwrap_or(0);
        env.storage().persistent().set(&key, &(held + amount));
        Ok(())
    }

    /// What `holder` has deposited of `token`.
    pub fn balance(env: Env, token: Address, holder: Address) -> i128 {
        let key = DataKey::Balance(token, holder);
        env.storage().persistent().get(&key).unwrap_or(0)
    }
}
