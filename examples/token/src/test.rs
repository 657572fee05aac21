//! The token's own native tests: who authorizes a mint, and a refusal's error code.
extern crate std;

use soroban_sdk::testutils::{Address as _, AuthorizedFunction, AuthorizedInvocation};
use soroban_sdk::{Address, Env, IntoVal, String, Symbol};

use crate::{Error, ExampleToken, ExampleTokenClient};

fn token(env: &Env) -> (ExampleTokenClient<'_>, Address) {
    let admin = Address::generate(env);
    let name = String::from_str(env, "Example");
    let symbol = String::from_str(env, "EXT");
    let id = env.register(ExampleToken, (admin.clone(), 7u32, name, symbol));
    (ExampleTokenClient::new(env, &id), admin)
}

#[test]
fn mint_asks_the_admin_and_nobody_else() {
    let env = Env::default();
    env.mock_all_auths();
    let (token, admin) = token(&env);
    let holder = Address::generate(&env);
    token.mint(&holder, &5);
    assert_eq!(
        env.auths(),
        [(
            admin,
            AuthorizedInvocation {
                function: AuthorizedFunction::Contract((
                    token.address.clone(),
                    Symbol::new(&env, "mint"),
                    (holder.clone(), 5i128).into_val(&env),
                )),
                sub_invocations: std::vec![],
            }
        )]
    );
    assert_eq!(token.balance(&holder), 5);
}

#[test]
fn a_burn_over_the_balance_is_refused_with_insufficient_balance() {
    let env = Env::default();
    env.mock_all_auths();
    let (token, _) = token(&env);
    let holder = Address::generate(&env);
    token.mint(&holder, &5);
    assert_eq!(
        token.try_burn(&holder, &6),
        Err(Ok(contract_error(Error::InsufficientBalance)))
    );
    assert_eq!(
        token.try_burn(&holder, &-1),
        Err(Ok(contract_error(Error::NegativeAmount)))
    );
}

/// The host's error for one of the token's: `Error(Contract, #N)`.
fn contract_error(e: Error) -> soroban_sdk::Error {
    e.into()
}
