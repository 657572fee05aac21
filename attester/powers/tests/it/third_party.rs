//! Real third-party tokens (fixtures/third-party: OpenZeppelin's stellar-tokens, the soroban-examples
//! token): every power their source grants over holders is found by what it does, under OpenZeppelin's
//! names and the roles its access control keeps, with who can use it.
use assay_chain::strkey_of;
use assay_core::powers::{FreezeScope, PowerEffect, PowerSurvey};
use assay_core::Mechanics;
use stellar_xdr::{ScAddress, ScVal};

use crate::common::{i128_val, string, wasm, Deployed};

fn tp(name: &str) -> Vec<u8> {
    wasm("third-party", name)
}

/// An account that is not the admin, for a manager role.
fn manager() -> ScAddress {
    ScAddress::Account(assay_chain::account_id([0x51; 32]))
}

fn find<'a>(s: &'a PowerSurvey, function: &str) -> &'a assay_core::powers::ObservedPower {
    s.powers
        .iter()
        .find(|p| p.function == function)
        .unwrap_or_else(|| panic!("no power through {function}: {s:#?}"))
}

#[test]
fn pausable_pause_stops_everyone_and_the_owner_mints() {
    let d = Deployed::new(tp("tp_oz_pausable"), |admin| {
        vec![
            string("Pause"),
            string("PAU"),
            ScVal::Address(admin.sc_address()),
            i128_val(1_000_000),
        ]
    });
    let s = d.discover(&[d.admin.sc_address()]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    let pause = find(&s, "pause");
    assert!(
        matches!(
            pause.effect,
            PowerEffect::Freezes {
                scope: FreezeScope::Everyone,
                ..
            }
        ),
        "{pause:#?}"
    );
    assert_eq!(pause.label.as_deref(), Some("pause"));
    assert!(matches!(
        find(&s, "mint").effect,
        PowerEffect::CreatesSupply { .. }
    ));
    assert_eq!(
        s.bits() & (Mechanics::ADMIN_FREEZE | Mechanics::ADMIN_MINT),
        Mechanics::ADMIN_FREEZE | Mechanics::ADMIN_MINT
    );
    assert_eq!(s.bits() & Mechanics::ADMIN_CLAWBACK, 0, "{s:#?}");
}

#[test]
fn blocklist_block_user_freezes_one_account_as_the_manager_role() {
    let d = Deployed::new(tp("tp_oz_blocklist"), |admin| {
        vec![
            string("Block"),
            string("BLK"),
            ScVal::Address(admin.sc_address()),
            ScVal::Address(manager()),
            i128_val(1_000_000),
        ]
    });
    let s = d.discover(&[]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    let block = find(&s, "block_user");
    assert!(
        matches!(
            block.effect,
            PowerEffect::Freezes {
                scope: FreezeScope::OneAccount,
                ..
            }
        ),
        "{block:#?}"
    );
    assert_eq!(block.label.as_deref(), Some("blocklist"));
    // Blocking the address the probe's transfers go to stops those transfers, not every sender's.
    let everyone: Vec<_> = (s.powers.iter())
        .filter(|p| {
            matches!(
                p.effect,
                PowerEffect::Freezes {
                    scope: FreezeScope::Everyone,
                    ..
                }
            )
        })
        .collect();
    assert!(everyone.is_empty(), "no freeze of everyone: {everyone:#?}");
    assert_eq!(
        block.authorized_by[0].address,
        strkey_of(&manager()),
        "found through the role member the contract names"
    );
    assert_eq!(s.bits() & Mechanics::ADMIN_CLAWBACK, 0, "{s:#?}");
}

#[test]
fn allowlist_disallow_user_freezes_one_account() {
    let d = Deployed::new(tp("tp_oz_allowlist"), |admin| {
        vec![
            string("Allow"),
            string("ALW"),
            ScVal::Address(admin.sc_address()),
            ScVal::Address(manager()),
            i128_val(1_000_000),
        ]
    });
    let s = d.discover(&[]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    let disallow = find(&s, "disallow_user");
    assert!(
        matches!(
            disallow.effect,
            PowerEffect::Freezes {
                scope: FreezeScope::OneAccount,
                ..
            }
        ),
        "{disallow:#?}"
    );
    assert!(
        !(s.powers.iter()).any(|p| matches!(
            p.effect,
            PowerEffect::Freezes {
                scope: FreezeScope::Everyone,
                ..
            }
        )),
        "no freeze of everyone: {s:#?}"
    );
    assert_eq!(disallow.authorized_by[0].address, strkey_of(&manager()));
}

#[test]
fn capped_mint_is_a_power_of_anyone() {
    let d = Deployed::new(tp("tp_oz_capped"), |_| vec![i128_val(1_000_000)]);
    let s = d.discover(&[]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    let mint = find(&s, "mint");
    assert!(matches!(mint.effect, PowerEffect::CreatesSupply { .. }));
    assert!(
        mint.authorized_by.is_empty(),
        "nobody authorizes it: {mint:#?}"
    );
    assert_eq!(mint.holders(), "anyone (no authorization asked)");
    assert_eq!(s.bits(), Mechanics::ADMIN_MINT, "{s:#?}");
}

#[test]
fn soroban_examples_token_mints_as_its_admin_and_names_set_admin() {
    let d = Deployed::new(tp("tp_soroban_token"), |admin| {
        vec![
            ScVal::Address(admin.sc_address()),
            ScVal::U32(7),
            string("Token"),
            string("TOK"),
        ]
    });
    let s = d.discover(&[]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    let mint = find(&s, "mint");
    assert_eq!(
        mint.authorized_by[0].address,
        strkey_of(&d.admin.sc_address())
    );
    assert!(
        s.unclassified.iter().any(|u| u.function == "set_admin"),
        "a privileged write with no effect on holders is named: {s:#?}"
    );
    assert_eq!(
        s.bits(),
        Mechanics::ADMIN_MINT | Mechanics::ADMIN_UNCLASSIFIED,
        "{s:#?}"
    );
}

/// OpenZeppelin's SEP-57 (RWA) token with its compliance contract and identity verifier, two verified
/// holders: the operator's forced transfer, burn and mint, the freezes, the pause and the replaceable
/// compliance are each found by what they do.
#[test]
fn the_rwa_tokens_operator_powers_are_each_found() {
    let mut d = Deployed::empty();
    let admin = ScVal::Address(d.admin.sc_address());
    let compliance = d.deploy(
        &tp("tp_oz_rwa_compliance"),
        1,
        vec![admin.clone(), admin.clone()],
    );
    let verifier = d.deploy(
        &tp("tp_oz_rwa_verifier"),
        2,
        vec![admin.clone(), admin.clone()],
    );
    let token_wasm = tp("tp_oz_rwa_token");
    d.token = d.deploy(
        &token_wasm,
        3,
        vec![
            string("Real"),
            string("RWA"),
            admin.clone(),
            admin.clone(),
            ScVal::Address(compliance.clone()),
            ScVal::Address(verifier.clone()),
        ],
    );
    d.wasm = token_wasm;
    d.call(
        &compliance,
        "bind_token",
        vec![ScVal::Address(d.token.clone()), admin.clone()],
    );
    let holders = [
        ScAddress::Account(assay_chain::account_id([0x61; 32])),
        ScAddress::Account(assay_chain::account_id([0x62; 32])),
    ];
    for (h, units) in holders.iter().zip([1_000_000, 500_000]) {
        d.call(
            &verifier,
            "set_verified",
            vec![ScVal::Address(h.clone()), ScVal::Bool(true), admin.clone()],
        );
        d.call(
            &d.token.clone(),
            "mint",
            vec![ScVal::Address(h.clone()), i128_val(units), admin.clone()],
        );
    }
    let s = d.discover(&holders);
    assert_eq!(s.unobservable, None, "{s:#?}");
    let admin_text = strkey_of(&d.admin.sc_address());
    let forced = find(&s, "forced_transfer");
    assert!(
        matches!(
            &forced.effect,
            PowerEffect::TakesBalance {
                moved_to: Some(_),
                ..
            }
        ),
        "{forced:#?}"
    );
    assert_eq!(forced.label.as_deref(), Some("SEP-57 forced transfer"));
    assert_eq!(forced.authorized_by[0].address, admin_text);
    assert!(
        matches!(
            &find(&s, "burn").effect,
            PowerEffect::TakesBalance { moved_to: None, .. }
        ),
        "the operator's burn of another's balance"
    );
    assert!(matches!(
        find(&s, "mint").effect,
        PowerEffect::CreatesSupply { .. }
    ));
    assert!(matches!(
        find(&s, "set_address_frozen").effect,
        PowerEffect::Freezes { .. }
    ));
    assert!(matches!(
        find(&s, "freeze_partial_tokens").effect,
        PowerEffect::Freezes { .. }
    ));
    assert!(matches!(
        find(&s, "pause").effect,
        PowerEffect::Freezes { .. }
    ));
    // Replacing the compliance contract every transfer calls is code that can change (and, pointed at
    // an address that is no contract, stops every transfer too).
    assert!(
        s.powers.iter().any(|p| p.function == "set_compliance"
            && matches!(p.effect, PowerEffect::ReplacesDependency { .. })),
        "{s:#?}"
    );
    for bit in [
        Mechanics::ADMIN_CLAWBACK,
        Mechanics::ADMIN_FREEZE,
        Mechanics::ADMIN_MINT,
        Mechanics::CODE_MUTABLE,
    ] {
        assert!(s.bits() & bit != 0, "bit {bit}: {s:#?}");
    }
}

/// OpenZeppelin's votes token: the owner's mint is its power over supply; `delegate(account, delegatee)`
/// asks only `account`'s authorization and moves only `account`'s own votes, so it is no power over
/// anyone (neither a power nor an unclassified write), whether the owner holds units or not.
#[test]
fn votes_token_mints_as_its_owner_and_delegating_ones_own_votes_is_no_power() {
    let d = Deployed::new(tp("tp_oz_votes"), |admin| {
        vec![ScVal::Address(admin.sc_address())]
    });
    let owner = strkey_of(&d.admin.sc_address());
    let no_delegate = |s: &PowerSurvey| {
        assert!(
            (s.powers.iter().map(|p| &p.function))
                .chain(s.unclassified.iter().map(|u| &u.function))
                .all(|f| !f.contains("delegate")),
            "{s:#?}"
        );
    };
    // Nobody holds units: discovery funds its own holder through the owner's mint.
    let s = d.discover(&[]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    let mint = find(&s, "mint");
    assert!(matches!(mint.effect, PowerEffect::CreatesSupply { .. }));
    assert_eq!(mint.authorized_by[0].address, owner);
    no_delegate(&s);
    assert_eq!(
        s.bits() & !Mechanics::ADMIN_UNCLASSIFIED,
        Mechanics::ADMIN_MINT,
        "{s:#?}"
    );
    // The owner holds units too, so its delegation moves real votes: still its own act.
    let holder = ScAddress::Account(assay_chain::account_id([0x63; 32]));
    for (to, units) in [(d.admin.sc_address(), 1_000_000), (holder.clone(), 5_000)] {
        d.admin_call("mint", vec![ScVal::Address(to), i128_val(units)]);
    }
    let s = d.discover(&[holder]);
    assert_eq!(s.unobservable, None, "{s:#?}");
    assert_eq!(find(&s, "mint").authorized_by[0].address, owner);
    no_delegate(&s);
    assert_eq!(
        s.bits() & !Mechanics::ADMIN_UNCLASSIFIED,
        Mechanics::ADMIN_MINT,
        "{s:#?}"
    );
}
