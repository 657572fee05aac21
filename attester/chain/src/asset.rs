//! The one conversion from an asset as Assay names it ([`assay_core::Token`], parsed by the one parser) to
//! the XDR asset the network knows.

use assay_core::Token;
use stellar_xdr::{
    AccountId, AlphaNum12, AlphaNum4, Asset, AssetCode12, AssetCode4, PublicKey, Uint256,
};

/// Why a token has no XDR asset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssetXdrError {
    /// A token contract is not a classic asset.
    #[error("{0} is a token contract, not a classic asset: it has no XDR asset")]
    Contract(String),
    /// The code or issuer does not fit the XDR shape (only a hand-built `Asset` can get here).
    #[error(
        "invalid asset {0:?}: expected CODE-ISSUER with a 1-12 character code and a G… issuer"
    )]
    Invalid(String),
}

/// The XDR asset of `token`: `Native`, or `CreditAlphanum4`/`12` by the code's length.
pub fn xdr_asset(token: &Token) -> Result<Asset, AssetXdrError> {
    let asset = match token {
        Token::Native => return Ok(Asset::Native),
        Token::Contract(c) => return Err(AssetXdrError::Contract(c.clone())),
        Token::Classic(a) => a,
    };
    let bad = || AssetXdrError::Invalid(asset.to_string());
    let key = stellar_strkey::ed25519::PublicKey::from_string(&asset.issuer).map_err(|_| bad())?;
    let issuer = AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(key.0)));
    let bytes = asset.code.as_bytes();
    if bytes.is_empty() || bytes.len() > 12 || !bytes.iter().all(u8::is_ascii_alphanumeric) {
        return Err(bad());
    }
    Ok(if bytes.len() <= 4 {
        let mut c = [0u8; 4];
        c[..bytes.len()].copy_from_slice(bytes);
        Asset::CreditAlphanum4(AlphaNum4 {
            asset_code: AssetCode4(c),
            issuer,
        })
    } else {
        let mut c = [0u8; 12];
        c[..bytes.len()].copy_from_slice(bytes);
        Asset::CreditAlphanum12(AlphaNum12 {
            asset_code: AssetCode12(c),
            issuer,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_converts_or_says_why_not() {
        let i = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
        let t = |s: &str| Token::parse(s).unwrap();
        assert_eq!(xdr_asset(&t("native")).unwrap(), Asset::Native);
        assert!(matches!(
            xdr_asset(&t(&format!("AQUA-{i}"))).unwrap(),
            Asset::CreditAlphanum4(_)
        ));
        assert!(matches!(
            xdr_asset(&t(&format!("BERKSHIRE-{i}"))).unwrap(),
            Asset::CreditAlphanum12(_)
        ));
        let c = "CA2E53VHFZ6YSWQIEIPBXJQGT6VW3VKWWZO555XKRQXYJ63GEBJJGHY7";
        assert_eq!(xdr_asset(&t(c)), Err(AssetXdrError::Contract(c.into())));
    }
}
