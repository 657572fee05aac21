//! The project's earlier fixtures: a conformant token whose admin mints, a token whose admin replaces its
//! code, and the vulnerable token.
use assay_core::powers::PowerEffect;
use assay_core::Mechanics;
use stellar_xdr::ScVal;

use crate::common::{holder, i128_val, string, wasm, Deployed};

fn conformant(package: &str, name: &str) -> Deployed {
    let d = Deployed::new(wasm(package, name), |admin| {
        vec![
            ScVal::Address(admin.sc_address()),
            ScVal::U32(7),
            string("Token"),
            string("TKN"),
        ]
    });
    d.admin_call("mint", vec![ScVal::Address(holder()), i128_val(1_000)]);
    d
}

#[test]
fn the_admins_mint_is_observed_as_supply_created_and_nothing_else() {
    let d = conformant("conformant-token", "conformant_token");
    let survey = d.discover(&[holder()]);
    eprintln!("{survey:#?}");
    assert_eq!(survey.unobservable, None);
    assert_eq!(survey.bits(), Mechanics::ADMIN_MINT, "{survey:#?}");
    let mint = &survey.powers[0];
    assert_eq!(mint.function, "mint");
    assert!(matches!(mint.effect, PowerEffect::CreatesSupply { .. }));
    assert_eq!(
        mint.label.as_deref(),
        Some("mint"),
        "the name only labels it"
    );
    let admin = d.admin.sc_address();
    assert_eq!(
        mint.authorized_by
            .iter()
            .map(|a| a.address.clone())
            .collect::<Vec<_>>(),
        [assay_chain::strkey_of(&admin)]
    );
    assert_eq!(mint.authorized_by[0].control, "1 key");
    assert!(
        !mint.events.is_empty(),
        "the mint's events are kept for the event checks"
    );
}

#[test]
fn a_token_without_any_holder_is_funded_by_its_observed_mint() {
    let d = conformant("conformant-token", "conformant_token");
    let survey = d.discover(&[]);
    assert_eq!(survey.unobservable, None, "{survey:#?}");
    assert_eq!(survey.bits(), Mechanics::ADMIN_MINT, "{survey:#?}");
}

#[test]
fn replacing_the_code_is_observed_through_the_upgrade_call() {
    let d = Deployed::new(wasm("upgradable-token", "upgradable_token"), |admin| {
        vec![
            ScVal::Address(admin.sc_address()),
            ScVal::U32(7),
            string("Token"),
            string("TKN"),
        ]
    });
    let survey = d.discover(&[holder()]);
    eprintln!("{survey:#?}");
    assert!(
        survey.powers.iter().any(
            |p| p.function == "upgrade" && matches!(p.effect, PowerEffect::ReplacesCode { .. })
        ),
        "{survey:#?}"
    );
    assert!(survey.bits() & Mechanics::CODE_MUTABLE != 0);
}

/// A token that keeps 1 % of every transfer for its admin from the start (conformant-token's planted
/// `fee-on-transfer` defect, the SEP-41 suite's to FAIL): no call raises the share, so it is no power of
/// the admin's (bit 14 is a share a call changes), however its mint moves the holder's balance and the
/// fee's rounding with it.
#[test]
fn a_fee_the_token_always_kept_is_not_a_transfer_fee_power() {
    let d = conformant("defect-token", "defect_token_fee_on_transfer");
    let survey = d.discover(&[holder()]);
    assert_eq!(survey.unobservable, None, "{survey:#?}");
    assert_eq!(survey.bits(), Mechanics::ADMIN_MINT, "{survey:#?}");
    assert!(
        survey
            .powers
            .iter()
            .all(|p| !matches!(p.effect, PowerEffect::TransferFee { .. })),
        "{survey:#?}"
    );
}
