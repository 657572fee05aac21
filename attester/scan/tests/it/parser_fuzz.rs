//! Bounded property tests ("fuzzing" that runs in CI) over every parser the scan feeds with bytes from
//! the network, and the asset-id parser fed from argv: no input panics, and what is accepted keeps the
//! invariants the checks rely on.
use assay_core::parse::{
    parse_asset_list, parse_blocked_domain, parse_directory, parse_horizon_account,
    parse_horizon_assets, parse_linked_currency_document, parse_stellar_toml,
};
use assay_core::{Asset, Report};
use proptest::prelude::*;

const ISSUER: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";

/// JSON-ish text: fragments of the real shapes glued at random, so the parsers see near-misses.
fn json_like() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"address\"",
        "\"blocked\"",
        "true",
        "false",
        "null",
        "\"domain\"",
        "\"circle.com\"",
        "\"tags\"",
        "\"malicious\"",
        "\"flags\"",
        "\"auth_revocable\"",
        "\"_embedded\"",
        "\"records\"",
        "\"asset_code\"",
        "\"USDC\"",
        "\"asset_issuer\"",
        "\"home_domain\"",
        "\"assets\"",
        "\"code\"",
        "\"issuer\"",
        "1",
        "-0.5e9",
        "\"\\u0000\"",
        " ",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

/// TOML-ish text.
fn toml_like() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "[[CURRENCIES]]\n",
        "[CURRENCIES]\n",
        "code=",
        "issuer=",
        "toml=",
        "\"USDC\"",
        "\"GA5Z\"",
        "'x'",
        "\n",
        "=",
        "[",
        "]",
        "\"",
        "1",
        "true",
        "{a=1}",
        "CURRENCIES=",
        "[DOCUMENTATION]\n",
        "\u{feff}",
        "#c\n",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

fn asset() -> Asset {
    Asset::new("USDC", ISSUER).unwrap()
}

/// The body cap of a source fetch: the largest answer a parser is ever handed.
const BODY_CAP: usize = 1 << 20;

/// Arbitrary bytes: mostly small, now and then up to the 1 MiB body cap (a random block repeated to
/// the length, so a large case costs few draws and CI time stays modest).
fn arbitrary_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        60 => prop::collection::vec(any::<u8>(), 0..512),
        1 => (prop::collection::vec(any::<u8>(), 1..256), 0usize..=BODY_CAP)
            .prop_map(|(block, len)| block.iter().copied().cycle().take(len).collect::<Vec<u8>>()),
    ]
}

/// Every parser fed from a source answer, a report file or argv, on the same bytes.
fn parse_everything(bytes: &[u8]) {
    let _ = parse_horizon_assets(bytes, &asset());
    let _ = parse_horizon_account(bytes);
    let _ = parse_directory(bytes);
    let _ = parse_blocked_domain(bytes);
    let _ = parse_asset_list(bytes);
    let _ = parse_stellar_toml(bytes);
    let _ = parse_linked_currency_document(bytes);
    let text = String::from_utf8_lossy(bytes);
    let _ = Report::from_json(&text);
    let _ = assay_core::Token::parse_classic(&text);
}

proptest! {
    // Issue #16 acceptance: at least 10,000 cases each, sizes up to the body cap, zero panics.
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn parsers_never_panic_on_arbitrary_bytes(bytes in arbitrary_bytes()) {
        parse_everything(&bytes);
    }

    #[test]
    fn parsers_never_panic_on_near_misses(text in prop_oneof![json_like(), toml_like()]) {
        parse_everything(text.as_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn json_parsers_keep_their_invariants(text in json_like()) {
        let bytes = text.as_bytes();
        if let Ok(Some(_)) = parse_directory(bytes) {
            prop_assert!(text.contains("\"address\""), "a listing needs an address key: {text}");
        }
        if parse_blocked_domain(bytes).is_ok() {
            prop_assert!(text.contains("\"blocked\""), "an answer needs `blocked`: {text}");
        }
        if let Ok(Some(_)) = parse_horizon_assets(bytes, &asset()) {
            prop_assert!(text.contains("auth_revocable"), "flags must be present: {text}");
        }
        let _ = parse_horizon_account(bytes);
        let _ = parse_asset_list(bytes);
    }

    #[test]
    fn toml_parsers_never_panic_and_only_match_on_code_and_issuer(text in toml_like()) {
        if let Ok(doc) = parse_stellar_toml(text.as_bytes()) {
            for c in &doc.currencies {
                if c.declares(&asset()) {
                    prop_assert!(c.code.is_some() && c.issuer.is_some());
                }
            }
            let _ = doc.unresolved_links(&asset());
        }
        let _ = parse_linked_currency_document(text.as_bytes());
    }

    #[test]
    fn asset_ids_never_panic(text in "[A-Za-z0-9:\\-_ G]{0,80}") {
        if let Ok(a) = assay_core::Token::parse_classic(&text) {
            prop_assert!(!a.code.is_empty() && a.code.len() <= 12);
            prop_assert!(stellar_strkey::ed25519::PublicKey::from_string(&a.issuer).is_ok());
        }
    }
}
