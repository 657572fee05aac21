//! Strkeys and contract ids.
use sha2::{Digest, Sha256};
use stellar_xdr::{
    AccountId, Asset, ContractId, ContractIdPreimage, ContractIdPreimageFromAddress, Hash,
    HashIdPreimage, HashIdPreimageContractId, Limits, PublicKey, ScAddress, Uint256, WriteXdr,
};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AddressError {
    #[error("`{0}` is not a Stellar address: expected an account (G…, 56 characters) or a contract (C…, 56 characters)")]
    Invalid(String),
    #[error("`{0}` is a {1}, but an account (G…) or contract (C…) address is needed here")]
    WrongKind(String, &'static str),
}

/// Parses a G… or C… strkey into an [`ScAddress`].
pub fn parse_address(text: &str) -> Result<ScAddress, AddressError> {
    match stellar_strkey::Strkey::from_string(text.trim()) {
        Ok(stellar_strkey::Strkey::PublicKeyEd25519(pk)) => {
            Ok(ScAddress::Account(account_id(pk.0)))
        }
        Ok(stellar_strkey::Strkey::Contract(c)) => Ok(ScAddress::Contract(ContractId(Hash(c.0)))),
        Ok(stellar_strkey::Strkey::PrivateKeyEd25519(_)) => {
            // Never echo a secret back, even in an error.
            Err(AddressError::WrongKind("S…".into(), "secret key"))
        }
        Ok(_) => Err(AddressError::WrongKind(
            text.into(),
            "different kind of strkey",
        )),
        Err(_) => Err(AddressError::Invalid(text.into())),
    }
}

/// The XDR account id for a raw ed25519 public key.
pub fn account_id(key: [u8; 32]) -> AccountId {
    AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(key)))
}

/// The strkey (G… or C…) of an address; other kinds render as their XDR debug form.
pub fn strkey_of(address: &ScAddress) -> String {
    match address {
        ScAddress::Account(AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(k)))) => {
            stellar_strkey::ed25519::PublicKey(*k)
                .to_string()
                .as_str()
                .to_string()
        }
        ScAddress::Contract(ContractId(Hash(h))) => stellar_strkey::Contract(*h)
            .to_string()
            .as_str()
            .to_string(),
        other => format!("{other:?}"),
    }
}

/// The network id: SHA-256 of the passphrase.
pub fn network_id(passphrase: &str) -> [u8; 32] {
    Sha256::digest(passphrase.as_bytes()).into()
}

fn contract_id(passphrase: &str, preimage: ContractIdPreimage) -> [u8; 32] {
    let preimage = HashIdPreimage::ContractId(HashIdPreimageContractId {
        network_id: Hash(network_id(passphrase)),
        contract_id_preimage: preimage,
    });
    let bytes = preimage
        .to_xdr(Limits::none())
        .expect("a contract id preimage always encodes");
    Sha256::digest(bytes).into()
}

/// The contract id of the Stellar Asset Contract for `asset` on the network with `passphrase`.
pub fn contract_id_from_asset(asset: &Asset, passphrase: &str) -> [u8; 32] {
    contract_id(passphrase, ContractIdPreimage::Asset(asset.clone()))
}

/// The contract id a deployer address and salt produce on the network with `passphrase`.
pub fn contract_id_from_deployer(
    deployer: &ScAddress,
    salt: [u8; 32],
    passphrase: &str,
) -> [u8; 32] {
    contract_id(
        passphrase,
        ContractIdPreimage::Address(ContractIdPreimageFromAddress {
            address: deployer.clone(),
            salt: Uint256(salt),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_sac_on_testnet_has_the_published_id() {
        // The native asset's SAC id on testnet is well known.
        let id = contract_id_from_asset(&Asset::Native, crate::TESTNET_PASSPHRASE);
        assert_eq!(
            stellar_strkey::Contract(id).to_string(),
            "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC"
        );
    }

    #[test]
    fn addresses_round_trip_and_secrets_are_not_echoed() {
        let g = "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7";
        assert_eq!(strkey_of(&parse_address(g).unwrap()), g);
        let c = "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC";
        assert_eq!(strkey_of(&parse_address(c).unwrap()), c);
        let s = stellar_strkey::ed25519::PrivateKey([7; 32])
            .to_string()
            .as_str()
            .to_string();
        let err = parse_address(&s).unwrap_err().to_string();
        assert!(!err.contains(&s[1..]), "{err}");
        assert!(matches!(
            parse_address("nope"),
            Err(AddressError::Invalid(_))
        ));
    }
}
