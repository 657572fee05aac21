//! Assay's SEP-41 suite and power discovery over this token's WASM: one test per check
//! (`sep41_transfer_auth`, …) and one for the powers.
//!
//! Build the WASM first (`stellar contract build`); EXAMPLE_TOKEN_WASM names another build.
use assay_testkit::Token;

fn wasm() -> String {
    std::env::var("EXAMPLE_TOKEN_WASM")
        .unwrap_or_else(|_| "target/wasm32v1-none/release/example_token.wasm".into())
}

assay_testkit::sep41_tests!(
    Token::wasm_file(wasm()).constructor_args(r#"["@admin", 7, "Example", "EXT"]"#)
);

#[test]
fn holds_every_check_with_only_the_mint_power() {
    sep41_suite().assert_only_powers(&["admin_mint"]);
}
