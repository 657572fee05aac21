use soroban_sdk::{contractevent, Address};

/// A deposit was admitted and the tokens moved into the vault.
#[contractevent(topics = ["deposit"])]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Deposited {
    #[topic]
    pub asset: Address,
    #[topic]
    pub from: Address,
    pub amount: i128,
}

/// Tokens left the vault to their depositor.
#[contractevent(topics = ["withdraw"])]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Withdrawn {
    #[topic]
    pub asset: Address,
    #[topic]
    pub to: Address,
    pub amount: i128,
}
