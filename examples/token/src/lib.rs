//! A small SEP-41 token: an admin who mints, balances, allowances with an expiry, and the events SEP-41
//! names. Its tests (`tests/sep41.rs`) run Assay's conformance suite and power discovery on its WASM.
#![no_std]
use soroban_sdk::{
    contract, contracterror, contractevent, contractimpl, contracttype, panic_with_error, Address,
    Env, MuxedAddress, String,
};

const DAY_IN_LEDGERS: u32 = 17_280;
const INSTANCE_BUMP: u32 = 7 * DAY_IN_LEDGERS;
const BALANCE_BUMP: u32 = 30 * DAY_IN_LEDGERS;

/// Why a call was refused.
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Error {
    /// A negative amount.
    NegativeAmount = 1,
    /// The balance is below the amount.
    InsufficientBalance = 2,
    /// The allowance is below the amount.
    InsufficientAllowance = 3,
    /// An approval of a positive amount whose `live_until_ledger` has passed.
    InvalidExpiration = 4,
    /// A balance would exceed `i128::MAX`.
    Overflow = 5,
}

/// An allowance: how much `spender` may spend of `from`'s balance.
#[contracttype]
#[derive(Clone)]
pub struct Allowance {
    pub amount: i128,
    pub live_until_ledger: u32,
}

/// Every storage key.
#[contracttype]
#[derive(Clone)]
pub enum DataKey {
    Admin,
    Decimals,
    Name,
    Symbol,
    Balance(Address),
    Allowance(Address, Address),
}

/// `amount` moved from `from` to `to`.
#[contractevent(topics = ["transfer"], data_format = "single-value")]
pub struct Transfer {
    #[topic]
    pub from: Address,
    #[topic]
    pub to: Address,
    pub amount: i128,
}

/// `from` allowed `spender` to spend `amount` until `live_until_ledger`.
#[contractevent(topics = ["approve"], data_format = "vec")]
pub struct Approve {
    #[topic]
    pub from: Address,
    #[topic]
    pub spender: Address,
    pub amount: i128,
    pub live_until_ledger: u32,
}

/// `amount` of `from`'s balance destroyed.
#[contractevent(topics = ["burn"], data_format = "single-value")]
pub struct Burn {
    #[topic]
    pub from: Address,
    pub amount: i128,
}

/// `amount` created for `to`.
#[contractevent(topics = ["mint"], data_format = "single-value")]
pub struct Mint {
    #[topic]
    pub to: Address,
    pub amount: i128,
}

fn emit_transfer(env: &Env, from: &Address, to: &Address, amount: i128) {
    Transfer {
        from: from.clone(),
        to: to.clone(),
        amount,
    }
    .publish(env);
}

fn emit_approve(
    env: &Env,
    from: &Address,
    spender: &Address,
    amount: i128,
    live_until_ledger: u32,
) {
    Approve {
        from: from.clone(),
        spender: spender.clone(),
        amount,
        live_until_ledger,
    }
    .publish(env);
}

fn emit_burn(env: &Env, from: &Address, amount: i128) {
    Burn {
        from: from.clone(),
        amount,
    }
    .publish(env);
}

fn emit_mint(env: &Env, to: &Address, amount: i128) {
    Mint {
        to: to.clone(),
        amount,
    }
    .publish(env);
}

fn nonnegative(env: &Env, amount: i128) {
    if amount < 0 {
        panic_with_error!(env, Error::NegativeAmount);
    }
    env.storage()
        .instance()
        .extend_ttl(INSTANCE_BUMP - DAY_IN_LEDGERS, INSTANCE_BUMP);
}

fn balance_of(env: &Env, id: &Address) -> i128 {
    env.storage()
        .persistent()
        .get(&DataKey::Balance(id.clone()))
        .unwrap_or(0)
}

fn set_balance(env: &Env, id: &Address, amount: i128) {
    let key = DataKey::Balance(id.clone());
    env.storage().persistent().set(&key, &amount);
    env.storage()
        .persistent()
        .extend_ttl(&key, BALANCE_BUMP - DAY_IN_LEDGERS, BALANCE_BUMP);
}

fn credit(env: &Env, id: &Address, amount: i128) {
    let Some(updated) = balance_of(env, id).checked_add(amount) else {
        panic_with_error!(env, Error::Overflow);
    };
    set_balance(env, id, updated);
}

fn debit(env: &Env, id: &Address, amount: i128) {
    let balance = balance_of(env, id);
    if balance < amount {
        panic_with_error!(env, Error::InsufficientBalance);
    }
    set_balance(env, id, balance - amount);
}

fn allowance_of(env: &Env, from: &Address, spender: &Address) -> Allowance {
    let key = DataKey::Allowance(from.clone(), spender.clone());
    match env.storage().temporary().get::<_, Allowance>(&key) {
        Some(a) if a.live_until_ledger >= env.ledger().sequence() => a,
        _ => Allowance {
            amount: 0,
            live_until_ledger: 0,
        },
    }
}

fn set_allowance(
    env: &Env,
    from: &Address,
    spender: &Address,
    amount: i128,
    live_until_ledger: u32,
) {
    let now = env.ledger().sequence();
    if amount > 0 && live_until_ledger < now {
        panic_with_error!(env, Error::InvalidExpiration);
    }
    let key = DataKey::Allowance(from.clone(), spender.clone());
    env.storage().temporary().set(
        &key,
        &Allowance {
            amount,
            live_until_ledger,
        },
    );
    if amount > 0 {
        let ttl = live_until_ledger - now;
        env.storage().temporary().extend_ttl(&key, ttl, ttl);
    }
}

fn spend_allowance(env: &Env, from: &Address, spender: &Address, amount: i128) {
    let allowance = allowance_of(env, from, spender);
    if allowance.amount < amount {
        panic_with_error!(env, Error::InsufficientAllowance);
    }
    if amount > 0 {
        set_allowance(
            env,
            from,
            spender,
            allowance.amount - amount,
            allowance.live_until_ledger,
        );
    }
}

#[contract]
pub struct ExampleToken;

#[contractimpl]
impl ExampleToken {
    /// Arguments: `admin` (who may mint), `decimals`, `name`, `symbol`.
    pub fn __constructor(env: Env, admin: Address, decimals: u32, name: String, symbol: String) {
        let storage = env.storage().instance();
        storage.set(&DataKey::Admin, &admin);
        storage.set(&DataKey::Decimals, &decimals);
        storage.set(&DataKey::Name, &name);
        storage.set(&DataKey::Symbol, &symbol);
    }

    /// Creates `amount` for `to`; the admin authorizes.
    ///
    /// Errors: `NegativeAmount`, `Overflow`. Events: `mint`.
    pub fn mint(env: Env, to: Address, amount: i128) {
        let admin: Address = env.storage().instance().get(&DataKey::Admin).unwrap();
        admin.require_auth();
        nonnegative(&env, amount);
        credit(&env, &to, amount);
        emit_mint(&env, &to, amount);
    }

    /// What `spender` may still spend of `from`'s balance (0 once expired).
    pub fn allowance(env: Env, from: Address, spender: Address) -> i128 {
        allowance_of(&env, &from, &spender).amount
    }

    /// Sets (overwrites) `spender`'s allowance over `from`'s balance; `from` authorizes.
    ///
    /// Errors: `NegativeAmount`, `InvalidExpiration`. Events: `approve`.
    pub fn approve(
        env: Env,
        from: Address,
        spender: Address,
        amount: i128,
        live_until_ledger: u32,
    ) {
        from.require_auth();
        nonnegative(&env, amount);
        set_allowance(&env, &from, &spender, amount, live_until_ledger);
        emit_approve(&env, &from, &spender, amount, live_until_ledger);
    }

    /// `id`'s balance.
    pub fn balance(env: Env, id: Address) -> i128 {
        balance_of(&env, &id)
    }

    /// Moves `amount` from `from` to `to`; `from` authorizes.
    ///
    /// Errors: `NegativeAmount`, `InsufficientBalance`, `Overflow`. Events: `transfer`.
    pub fn transfer(env: Env, from: Address, to: MuxedAddress, amount: i128) {
        from.require_auth();
        nonnegative(&env, amount);
        let to = to.address();
        debit(&env, &from, amount);
        credit(&env, &to, amount);
        emit_transfer(&env, &from, &to, amount);
    }

    /// Moves `amount` from `from` to `to` out of `spender`'s allowance; `spender` authorizes.
    ///
    /// Errors: `NegativeAmount`, `InsufficientAllowance`, `InsufficientBalance`, `Overflow`. Events:
    /// `transfer`.
    pub fn transfer_from(env: Env, spender: Address, from: Address, to: Address, amount: i128) {
        spender.require_auth();
        nonnegative(&env, amount);
        spend_allowance(&env, &from, &spender, amount);
        debit(&env, &from, amount);
        credit(&env, &to, amount);
        emit_transfer(&env, &from, &to, amount);
    }

    /// Destroys `amount` of `from`'s balance; `from` authorizes.
    ///
    /// Errors: `NegativeAmount`, `InsufficientBalance`. Events: `burn`.
    pub fn burn(env: Env, from: Address, amount: i128) {
        from.require_auth();
        nonnegative(&env, amount);
        debit(&env, &from, amount);
        emit_burn(&env, &from, amount);
    }

    /// Destroys `amount` of `from`'s balance out of `spender`'s allowance; `spender` authorizes.
    ///
    /// Errors: `NegativeAmount`, `InsufficientAllowance`, `InsufficientBalance`. Events: `burn`.
    pub fn burn_from(env: Env, spender: Address, from: Address, amount: i128) {
        spender.require_auth();
        nonnegative(&env, amount);
        spend_allowance(&env, &from, &spender, amount);
        debit(&env, &from, amount);
        emit_burn(&env, &from, amount);
    }

    pub fn decimals(env: Env) -> u32 {
        env.storage().instance().get(&DataKey::Decimals).unwrap()
    }

    pub fn name(env: Env) -> String {
        env.storage().instance().get(&DataKey::Name).unwrap()
    }

    pub fn symbol(env: Env) -> String {
        env.storage().instance().get(&DataKey::Symbol).unwrap()
    }
}

#[cfg(test)]
mod test;
