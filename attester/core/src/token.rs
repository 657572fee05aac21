//! The one parser for what a command names: a classic asset (`CODE-ISSUER` / `CODE:ISSUER`), the native
//! asset (`native`), or a Soroban token contract (`C…`). Every command parses its argument here; only the
//! command decides which kinds it can act on.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::asset::Asset;

/// The forms every asset argument accepts, quoted in every parse error.
pub const EXPECTED_FORM: &str = "CODE-ISSUER or CODE:ISSUER (CODE 1-12 letters or digits, ISSUER a G... account address, e.g. USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN), native, or a C... token contract address";

/// What a report (and an attestation) is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Token {
    /// A classic asset; its Stellar Asset Contract is keyed on chain.
    Classic(Asset),
    /// The native asset (XLM).
    Native,
    /// A Soroban token contract, by its `C…` address (checksum verified).
    Contract(String),
}

/// A rejected asset argument: the input, why, and the forms accepted. One line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid asset {input:?}: {reason}; expected {EXPECTED_FORM}")]
pub struct TokenParseError {
    /// The text as given.
    pub input: String,
    /// Why it is not an asset.
    pub reason: String,
}

impl Token {
    /// The classic asset, if this is one.
    pub fn classic(&self) -> Option<&Asset> {
        match self {
            Token::Classic(a) => Some(a),
            _ => None,
        }
    }

    /// The `C…` address, if this is a token contract.
    pub fn contract(&self) -> Option<&str> {
        match self {
            Token::Contract(c) => Some(c),
            _ => None,
        }
    }

    /// Parses an argument of a command that takes classic assets only (`CODE-ISSUER` / `CODE:ISSUER`);
    /// `native` and `C…` are refused with the form that is expected.
    pub fn parse_classic(input: &str) -> Result<Asset, TokenParseError> {
        match Token::parse(input)? {
            Token::Classic(asset) => Ok(asset),
            other => Err(TokenParseError {
                input: input.to_string(),
                reason: format!("{other} is not a classic asset; this command takes CODE-ISSUER"),
            }),
        }
    }

    /// Parses an argument: `native`, a `C…` contract address, or `CODE-ISSUER` / `CODE:ISSUER` (a trailing
    /// StellarExpert type digit `-1` / `-2` after the issuer is dropped). Account and contract addresses are
    /// checked down to their checksum.
    pub fn parse(input: &str) -> Result<Token, TokenParseError> {
        let err = |reason: String| TokenParseError {
            input: input.to_string(),
            reason,
        };
        if input.trim().is_empty() {
            return Err(err("the asset is empty".into()));
        }
        if input.eq_ignore_ascii_case("native") {
            return Ok(Token::Native);
        }
        if input.len() == 56 && input.starts_with('C') && !input.contains(['-', ':']) {
            return match stellar_strkey::Contract::from_string(input) {
                Ok(_) => Ok(Token::Contract(input.to_string())),
                Err(_) => Err(err(format!(
                    "{input:?} is not a valid contract address (bad encoding or checksum)"
                ))),
            };
        }
        let Some(split) = input.find(['-', ':']) else {
            return Err(err("no '-' or ':' between code and issuer".into()));
        };
        let (code, issuer) = (&input[..split], &input[split + 1..]);
        let issuer = match issuer.rsplit_once('-') {
            Some((head, "1" | "2")) => head,
            _ => issuer,
        };
        if code.is_empty() {
            return Err(err("the code is empty".into()));
        }
        if code.chars().count() > 12 {
            return Err(err(format!(
                "the code {code:?} is longer than 12 characters"
            )));
        }
        if !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(err(format!(
                "the code {code:?} has characters other than ASCII letters and digits"
            )));
        }
        if issuer.is_empty() {
            return Err(err("the issuer is empty".into()));
        }
        if !issuer.starts_with('G') || issuer.len() != 56 {
            return Err(err(format!(
                "the issuer {issuer:?} is not a 56-character G... account address"
            )));
        }
        if stellar_strkey::ed25519::PublicKey::from_string(issuer).is_err() {
            return Err(err(format!(
                "the issuer {issuer:?} is not a valid account address (bad encoding or checksum)"
            )));
        }
        Asset::new(code, issuer)
            .map(Token::Classic)
            .map_err(|e| err(e.to_string()))
    }
}

impl std::str::FromStr for Token {
    type Err = TokenParseError;

    fn from_str(text: &str) -> Result<Token, TokenParseError> {
        Token::parse(text)
    }
}

impl std::str::FromStr for Asset {
    type Err = TokenParseError;

    /// Parses `CODE-ISSUER` or `CODE:ISSUER` with [`Token::parse`] (the one parser), accepting
    /// only a classic asset.
    fn from_str(text: &str) -> Result<Asset, Self::Err> {
        match Token::parse(text)? {
            Token::Classic(a) => Ok(a),
            other => Err(TokenParseError {
                input: text.to_string(),
                reason: format!("{other} is not a classic asset (CODE-ISSUER)"),
            }),
        }
    }
}

impl From<Asset> for Token {
    fn from(a: Asset) -> Token {
        Token::Classic(a)
    }
}

impl fmt::Display for Token {
    /// `CODE-ISSUER`, `native`, or the `C…` address.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Classic(a) => a.fmt(f),
            Token::Native => f.write_str("native"),
            Token::Contract(c) => f.write_str(c),
        }
    }
}

/// The report's `asset` key: `{code, issuer}` for a classic asset (unchanged), `{contract}` for a token
/// contract, `"native"` for XLM.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    Classic(Asset),
    Contract(ContractWire),
    Native(String),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContractWire {
    contract: String,
}

impl Serialize for Token {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Token::Classic(a) => Wire::Classic(a.clone()),
            Token::Native => Wire::Native("native".into()),
            Token::Contract(c) => Wire::Contract(ContractWire {
                contract: c.clone(),
            }),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Token {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Token, D::Error> {
        match Wire::deserialize(d)? {
            Wire::Classic(a) => Ok(Token::Classic(a)),
            Wire::Native(n) if n == "native" => Ok(Token::Native),
            Wire::Native(n) => Err(D::Error::custom(format!(
                "asset {n:?}: expected {{code, issuer}}, {{contract}} or \"native\""
            ))),
            Wire::Contract(c) => match Token::parse(&c.contract).map_err(D::Error::custom)? {
                t @ Token::Contract(_) => Ok(t),
                _ => Err(D::Error::custom(format!(
                    "asset contract {:?} is not a C… address",
                    c.contract
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const USDC: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
    const SAC: &str = "CA2E53VHFZ6YSWQIEIPBXJQGT6VW3VKWWZO555XKRQXYJ63GEBJJGHY7";

    #[test]
    fn accepts_every_form() {
        for input in [
            format!("USDC-{USDC}"),
            format!("USDC:{USDC}"),
            format!("USDC-{USDC}-1"),
        ] {
            let t = Token::parse(&input).unwrap();
            let a = t.classic().unwrap();
            assert_eq!((a.code.as_str(), a.issuer.as_str()), ("USDC", USDC));
        }
        assert_eq!(Token::parse("native").unwrap(), Token::Native);
        assert_eq!(Token::parse(SAC).unwrap(), Token::Contract(SAC.into()));
        assert_eq!(Token::parse(SAC).unwrap().to_string(), SAC);
    }

    #[test]
    fn parse_classic_takes_classic_assets_only() {
        let asset = Token::parse_classic(&format!("USDC:{USDC}")).unwrap();
        assert_eq!((asset.code.as_str(), asset.issuer.as_str()), ("USDC", USDC));
        for other in ["native", SAC] {
            let message = Token::parse_classic(other).unwrap_err().to_string();
            assert!(
                message.contains("is not a classic asset")
                    && message.contains("expected CODE-ISSUER"),
                "{message}"
            );
        }
        assert!(Token::parse_classic("USDC")
            .unwrap_err()
            .to_string()
            .contains("no '-' or ':'"));
    }

    #[test]
    fn rejects_with_a_named_reason() {
        let bad_checksum = format!("USDC-{}A", &USDC[..55]);
        let bad_contract = format!("{}A", &SAC[..55]);
        let cases = [
            ("", "empty"),
            ("USDC", "no '-' or ':'"),
            ("-GA5Z", "code is empty"),
            ("ABCDEFGHIJKLM-X", "longer than 12"),
            ("US$C-X", "other than ASCII"),
            ("USDC-", "issuer is empty"),
            ("USDC-GABC", "56-character"),
            (bad_checksum.as_str(), "checksum"),
            (bad_contract.as_str(), "not a valid contract address"),
        ];
        for (input, reason) in cases {
            let message = Token::parse(input).unwrap_err().to_string();
            assert!(message.contains(reason), "{input}: {message}");
            assert!(message.contains("expected CODE-ISSUER"), "{message}");
            assert!(!message.contains('\n'));
        }
    }

    #[test]
    fn report_wire_forms_round_trip() {
        let classic = Token::parse(&format!("USDC-{USDC}")).unwrap();
        assert_eq!(
            serde_json::to_string(&classic).unwrap(),
            format!(r#"{{"code":"USDC","issuer":"{USDC}"}}"#)
        );
        let contract = Token::Contract(SAC.into());
        let json = serde_json::to_string(&contract).unwrap();
        assert_eq!(json, format!(r#"{{"contract":"{SAC}"}}"#));
        for t in [classic, contract, Token::Native] {
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(serde_json::from_str::<Token>(&json).unwrap(), t);
        }
        assert!(serde_json::from_str::<Token>(r#"{"contract":"CBAD"}"#).is_err());
        assert!(serde_json::from_str::<Token>(r#""xlm""#).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn never_panics_and_accepts_only_valid_ids(input in ".{0,80}") {
            match Token::parse(&input) {
                Ok(Token::Classic(a)) => {
                    prop_assert!(a.code.len() <= 12);
                    prop_assert!(stellar_strkey::ed25519::PublicKey::from_string(&a.issuer).is_ok());
                }
                Ok(Token::Contract(c)) => prop_assert!(stellar_strkey::Contract::from_string(&c).is_ok()),
                Ok(Token::Native) | Err(_) => {}
            }
        }

        #[test]
        fn round_trips_valid_ids(code in "[A-Za-z0-9]{1,12}", key in any::<[u8; 32]>(), colon in any::<bool>()) {
            let issuer = stellar_strkey::ed25519::PublicKey(key).to_string().as_str().to_string();
            let input = format!("{code}{}{issuer}", if colon { ':' } else { '-' });
            let t = Token::parse(&input).unwrap();
            let a = t.classic().unwrap();
            prop_assert_eq!(&a.code, &code);
            prop_assert_eq!(&a.issuer, &issuer);
            let contract = stellar_strkey::Contract(key).to_string().as_str().to_string();
            prop_assert_eq!(Token::parse(&contract).unwrap(), Token::Contract(contract.clone()));
        }
    }
}
