//! Parsing a classic asset argument (`CODE-ISSUER` or `CODE:ISSUER`) with the one parser,
//! [`assay_core::Token::parse`], for the commands that take only classic assets.
use assay_core::{Asset, Token};

/// The expected form, quoted in every error.
pub const EXPECTED_FORM: &str = assay_core::token::EXPECTED_FORM;

/// A rejected asset argument. `Display` is one line naming the input and the expected form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid asset {input:?}: {reason}; expected {EXPECTED_FORM}")]
pub struct AssetArgError {
    pub input: String,
    pub reason: String,
}

/// Parses one classic asset argument. A trailing StellarExpert type digit (`-1`, `-2`) after the issuer is
/// accepted, as StellarExpert prints assets that way; `native` and `C…` parse but are not classic assets.
pub fn parse_asset_arg(input: &str) -> Result<Asset, AssetArgError> {
    match Token::parse(input) {
        Ok(Token::Classic(asset)) => Ok(asset),
        Ok(other) => Err(AssetArgError {
            input: input.to_string(),
            reason: format!("{other} is not a classic asset; this command takes CODE-ISSUER"),
        }),
        Err(e) => Err(AssetArgError {
            input: e.input,
            reason: e.reason,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const USDC: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";

    #[test]
    fn accepts_both_separators_and_the_type_digit() {
        for input in [
            format!("USDC-{USDC}"),
            format!("USDC:{USDC}"),
            format!("USDC-{USDC}-1"),
        ] {
            let asset = parse_asset_arg(&input).unwrap();
            assert_eq!((asset.code.as_str(), asset.issuer.as_str()), ("USDC", USDC));
        }
    }

    #[test]
    fn rejects_with_a_named_reason() {
        let bad_checksum = format!("USDC-{}A", &USDC[..55]);
        let cases = [
            ("", "empty"),
            ("USDC", "no '-' or ':'"),
            ("-GA5Z", "code is empty"),
            ("ABCDEFGHIJKLM-X", "longer than 12"),
            ("US$C-X", "other than ASCII"),
            ("USDC-", "issuer is empty"),
            ("USDC-GABC", "56-character"),
            (bad_checksum.as_str(), "checksum"),
        ];
        for (input, reason) in cases {
            let message = parse_asset_arg(input).unwrap_err().to_string();
            assert!(message.contains(reason), "{input}: {message}");
            assert!(message.contains("expected CODE-ISSUER"), "{message}");
            assert!(!message.contains('\n'));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn never_panics_and_accepts_only_valid_ids(input in ".{0,80}") {
            if let Ok(asset) = parse_asset_arg(&input) {
                prop_assert!(asset.code.len() <= 12);
                prop_assert!(stellar_strkey::ed25519::PublicKey::from_string(&asset.issuer).is_ok());
            }
        }

        #[test]
        fn round_trips_valid_ids(code in "[A-Za-z0-9]{1,12}", key in any::<[u8; 32]>(), colon in any::<bool>()) {
            let issuer = stellar_strkey::ed25519::PublicKey(key).to_string().as_str().to_string();
            let input = format!("{code}{}{issuer}", if colon { ':' } else { '-' });
            let asset = parse_asset_arg(&input).unwrap();
            prop_assert_eq!(asset.code, code);
            prop_assert_eq!(asset.issuer, issuer);
        }
    }
}
