//! The Stellar Asset Contract address of a classic asset, derived locally: SHA-256 of the XDR
//! `HashIdPreimage::ContractId { network_id, FromAsset(asset) }`, as a `C…` StrKey. The registry keys
//! attestations by this address, so it must match what `stellar contract id asset` prints.

use stellar_xdr::Asset;

/// Why an asset has no SAC address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid asset {0:?}: expected CODE-ISSUER with a 1-12 character code and a G… issuer")]
pub struct SacError(pub String);

/// The XDR asset of `code` issued by `issuer` (`G…`), through the one conversion
/// ([`assay_chain::asset::xdr_asset`]).
pub fn xdr_asset(code: &str, issuer: &str) -> Result<Asset, SacError> {
    let bad = || SacError(format!("{code}-{issuer}"));
    let asset = assay_core::Asset::new(code, issuer).map_err(|_| bad())?;
    assay_chain::asset::xdr_asset(&assay_core::Token::Classic(asset)).map_err(|_| bad())
}

/// The 32-byte contract id of `asset`'s SAC on the network with `passphrase` (assay-chain's derivation).
pub fn contract_id(asset: &Asset, passphrase: &str) -> [u8; 32] {
    assay_chain::contract_id_from_asset(asset, passphrase)
}

/// The SAC id of a classic `core` asset.
pub fn asset_contract_id(
    asset: &assay_core::Asset,
    passphrase: &str,
) -> Result<[u8; 32], SacError> {
    Ok(contract_id(
        &xdr_asset(&asset.code, &asset.issuer)?,
        passphrase,
    ))
}

/// `C…` StrKey of a contract id.
pub fn contract_strkey(id: [u8; 32]) -> String {
    format!("{}", stellar_strkey::Contract(id))
}

/// Parses a `C…` StrKey.
pub fn parse_contract(text: &str) -> Option<[u8; 32]> {
    stellar_strkey::Contract::from_string(text.trim())
        .ok()
        .map(|c| c.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use assay_chain::network::{PUBNET_PASSPHRASE, TESTNET_PASSPHRASE};

    fn sac(code: &str, issuer: &str, pass: &str) -> String {
        contract_strkey(contract_id(&xdr_asset(code, issuer).unwrap(), pass))
    }

    #[test]
    fn known_testnet_sacs_of_pubnet_assets() {
        // The earlier deployment keyed pubnet assets by their testnet SAC (prior-implementation.md §11).
        let known = [
            (
                "AQUA",
                "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA",
                "CDJF2JQINO7WRFXB2AAHLONFDPPI4M3W2UM5THGQQ7JMJDIEJYC4CMPG",
            ),
            (
                "USDC",
                "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
                "CA2E53VHFZ6YSWQIEIPBXJQGT6VW3VKWWZO555XKRQXYJ63GEBJJGHY7",
            ),
            (
                "BERKSHIRE",
                "GA22QHSHQEHDJS2ZOINSC77XPPQ24G5EFRJGVEIZLKC5FAW3PQ5XNSDQ",
                "CALAZXOC32XF2DFRKDOFQK7XQETZZTUK7C2OKC6YKPX6KY2YWU2YSPQW",
            ),
            (
                "USDGLO",
                "GBBS25EGYQPGEZCGCFBKG4OAGFXU6DSOQBGTHELLJT3HZXZJ34HWS6XV",
                "CDGBOKCE25PVUKFWST2EEK52NHRS5WQ7TN26DFJYCEQNZNROQRSPIBQA",
            ),
        ];
        for (code, issuer, want) in known {
            assert_eq!(sac(code, issuer, TESTNET_PASSPHRASE), want, "{code}");
        }
    }

    #[test]
    fn native_sacs() {
        let native = |p| contract_strkey(contract_id(&Asset::Native, p));
        assert_eq!(
            native(TESTNET_PASSPHRASE),
            "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC"
        );
        assert_eq!(
            native(PUBNET_PASSPHRASE),
            "CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA"
        );
    }

    #[test]
    fn network_changes_the_address_and_bad_input_is_refused() {
        let i = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
        assert_ne!(
            sac("AQUA", i, TESTNET_PASSPHRASE),
            sac("AQUA", i, PUBNET_PASSPHRASE)
        );
        assert!(xdr_asset("TOOLONGCODE123", i).is_err());
        assert!(xdr_asset("AQUA", "GBAD").is_err());
        assert!(xdr_asset("A-B", i).is_err());
    }
}
