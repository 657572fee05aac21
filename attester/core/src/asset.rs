//! A classic Stellar asset: its code and issuing account, with the shape checks every constructor makes.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A classic Stellar asset: its code and issuing account. `Display` gives `CODE-ISSUER`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Asset {
    /// Asset code, 1-12 ASCII alphanumerics (e.g. `USDC`).
    pub code: String,
    /// Issuer account, a `G…` StrKey.
    pub issuer: String,
}

impl fmt::Display for Asset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.code, self.issuer)
    }
}

/// Why `CODE-ISSUER` text is not an asset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid asset {text:?}: {reason}; expected CODE-ISSUER, e.g. USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN")]
pub struct AssetParseError {
    text: String,
    reason: &'static str,
}

impl Asset {
    /// Builds an asset, checking the code (`^[A-Za-z0-9]{1,12}$`) and issuer (`^G[A-Z2-7]{55}$`) shapes.
    /// The issuer's checksum is not verified here (that needs a StrKey crate; the scan does it).
    pub fn new(code: &str, issuer: &str) -> Result<Asset, AssetParseError> {
        let text = format!("{code}-{issuer}");
        if code.is_empty() || code.len() > 12 || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(AssetParseError {
                text,
                reason: "the code must be 1-12 ASCII letters or digits",
            });
        }
        let issuer_ok = issuer.len() == 56
            && issuer.starts_with('G')
            && issuer
                .bytes()
                .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b));
        if !issuer_ok {
            return Err(AssetParseError {
                text,
                reason: "the issuer must be a G… account address of 56 characters",
            });
        }
        Ok(Asset {
            code: code.to_string(),
            issuer: issuer.to_string(),
        })
    }
}
