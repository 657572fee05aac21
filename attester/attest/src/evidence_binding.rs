//! The binding between a bundle's hashed lines and the fork snapshots it carries: before anything is
//! replayed, every code entry of a snapshot must hash to the key it is stored under, and the token's instance
//! must run the executable the lines hash (`contract/wasm`'s `wasm HASH`, or the external reference they
//! name); for a Stellar Asset Contract, the instance must be the asset's own contract, and its admin the one
//! the lines name. Otherwise a forger could replay other code against genuine-looking lines.

use assay_core::bundle::{Bundle, BundleError};
use assay_core::contract::{SOURCE_CONTRACT_ADMIN, SOURCE_CONTRACT_CODE};
use assay_core::Token;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use soroban_ledger_snapshot::LedgerSnapshot;
use stellar_xdr::{
    ContractExecutable, ContractId, Hash, LedgerEntryData, LedgerKey, ScAddress, ScVal,
};

/// What the lines say the token's instance runs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Expected {
    /// A WASM executable with this SHA-256 (lowercase hex).
    Wasm(String),
    /// A CAP-85 external reference to this contract (`C…`).
    ExternalRef(String),
    /// The Stellar Asset Contract of the report's asset, administered by `admin` (`G…`/`C…`; none for
    /// native XLM's).
    StellarAsset { admin: Option<String> },
}

/// What the lines of `bundle` bind the snapshot of `contract` to; `None` when they hash no code for it (the
/// snapshot then cannot be bound, and is not replayed).
pub(crate) fn expected(bundle: &Bundle, contract: &str) -> Option<Expected> {
    let claims = |source: &'static str| {
        bundle
            .report
            .evidence
            .iter()
            .filter(move |e| e.source == source && e.url == contract && !e.attempted)
            .map(|e| e.claim.as_str())
    };
    let admin_line = claims(SOURCE_CONTRACT_ADMIN).find_map(admin_named);
    match &bundle.report.asset {
        Token::Classic(asset) => Some(Expected::StellarAsset {
            admin: Some(admin_line.unwrap_or_else(|| asset.issuer.clone())),
        }),
        Token::Native => Some(Expected::StellarAsset { admin: None }),
        Token::Contract(_) => {
            let wasm = claims(SOURCE_CONTRACT_CODE)
                .find_map(|c| c.strip_prefix("wasm "))
                .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                .map(str::to_ascii_lowercase);
            let external = claims(SOURCE_CONTRACT_CODE)
                .find_map(|c| c.strip_prefix("the executable is an external reference to "))
                .map(str::to_string);
            wasm.map(Expected::Wasm)
                .or(external.map(Expected::ExternalRef))
        }
    }
}

/// The admin an `admin()` claim names: `admin() is X` (a custom token's), or `sac-admin`'s `admin() is the
/// issuer G…` and `admin() is X, not the issuer G…`.
fn admin_named(claim: &str) -> Option<String> {
    let rest = claim.strip_prefix("admin() is ")?;
    let rest = rest.strip_prefix("the issuer ").unwrap_or(rest);
    rest.split(", not the issuer ").next().map(str::to_string)
}

fn address_text(address: &ScAddress) -> String {
    match address {
        ScAddress::Account(stellar_xdr::AccountId(
            stellar_xdr::PublicKey::PublicKeyTypeEd25519(stellar_xdr::Uint256(k)),
        )) => format!("{}", stellar_strkey::ed25519::PublicKey(*k)),
        ScAddress::Contract(ContractId(Hash(id))) => crate::sac::contract_strkey(*id),
        other => format!("{other:?}"),
    }
}

/// Checks one snapshot (`which`: `snapshot` or `powers_snapshot`) against the lines: every code entry
/// hashes to its key, and `contract`'s instance runs what `expected` says.
///
/// # Errors
/// [`BundleError::SnapshotMismatch`] naming the entry and both values.
pub(crate) fn bind(
    which: &str,
    snapshot: &serde_json::Value,
    contract: [u8; 32],
    passphrase: &str,
    bundle: &Bundle,
    expected: &Expected,
) -> Result<(), BundleError> {
    let refuse = |detail: String| BundleError::SnapshotMismatch {
        snapshot: which.to_string(),
        detail,
    };
    let entries = LedgerSnapshot::deserialize(snapshot)
        .map_err(|e| refuse(format!("it is not a ledger snapshot ({e})")))?;
    let shown = crate::sac::contract_strkey(contract);
    let mut instance = None;
    for (key, (entry, _)) in &entries.ledger_entries {
        match (key.as_ref(), &entry.data) {
            (LedgerKey::ContractCode(k), LedgerEntryData::ContractCode(code)) => {
                let actual = hex::encode(Sha256::digest(code.code.as_slice()));
                if k.hash != code.hash || actual != hex::encode(code.hash.0) {
                    return Err(refuse(format!(
                        "the code stored under key {} hashes to {actual}",
                        hex::encode(k.hash.0)
                    )));
                }
            }
            (LedgerKey::ContractCode(k), _) => {
                return Err(refuse(format!(
                    "the entry under code key {} is not a code entry",
                    hex::encode(k.hash.0)
                )))
            }
            (LedgerKey::ContractData(k), LedgerEntryData::ContractData(d))
                if k.contract == ScAddress::Contract(ContractId(Hash(contract)))
                    && k.key == ScVal::LedgerKeyContractInstance =>
            {
                if d.contract != k.contract || d.key != k.key || d.durability != k.durability {
                    return Err(refuse(format!(
                        "the instance entry of {shown} is stored under another key"
                    )));
                }
                match &d.val {
                    ScVal::ContractInstance(i) => instance = Some(i.clone()),
                    other => {
                        return Err(refuse(format!(
                            "the instance entry of {shown} holds {other:?}, not an instance"
                        )))
                    }
                }
            }
            _ => {}
        }
    }
    let Some(instance) = instance else {
        return Err(refuse(format!("it holds no instance of {shown}")));
    };
    match (expected, &instance.executable) {
        (Expected::Wasm(hash), ContractExecutable::Wasm(Hash(h))) if hex::encode(h) == *hash => {
            Ok(())
        }
        (Expected::ExternalRef(owner), ContractExecutable::ExternalRef(r))
            if address_text(&r.executable_owner) == *owner =>
        {
            Ok(())
        }
        (Expected::StellarAsset { admin }, ContractExecutable::StellarAsset) => {
            let own = match &bundle.report.asset {
                Token::Classic(asset) => crate::sac::asset_contract_id(asset, passphrase)
                    .map_err(|e| refuse(e.to_string()))?,
                Token::Native => crate::sac::contract_id(&stellar_xdr::Asset::Native, passphrase),
                Token::Contract(_) => {
                    return Err(refuse(format!("{shown} is a Stellar Asset Contract")))
                }
            };
            if own != contract {
                return Err(refuse(format!(
                    "{shown} is not {}'s Stellar Asset Contract on {passphrase:?} ({})",
                    bundle.report.asset,
                    crate::sac::contract_strkey(own)
                )));
            }
            let Some(admin) = admin else {
                return Ok(());
            };
            let admin_key = ScVal::Vec(Some(
                vec![ScVal::Symbol("Admin".try_into().expect("a symbol"))]
                    .try_into()
                    .expect("one element"),
            ));
            let stored = instance.storage.as_ref().and_then(|map| {
                map.iter()
                    .find(|e| e.key == admin_key)
                    .map(|e| e.val.clone())
            });
            match stored {
                Some(ScVal::Address(a)) if address_text(&a) == *admin => Ok(()),
                Some(ScVal::Address(a)) => Err(refuse(format!(
                    "{shown}'s admin is {}, the lines name {admin}",
                    address_text(&a)
                ))),
                _ => Err(refuse(format!("{shown}'s instance names no admin"))),
            }
        }
        (expected, executable) => Err(refuse(format!(
            "the instance of {shown} runs {}, the hashed lines name {}",
            executable_text(executable),
            match expected {
                Expected::Wasm(h) => format!("wasm {h}"),
                Expected::ExternalRef(o) => format!("an external reference to {o}"),
                Expected::StellarAsset { .. } => "the asset's Stellar Asset Contract".into(),
            }
        ))),
    }
}

fn executable_text(executable: &ContractExecutable) -> String {
    match executable {
        ContractExecutable::Wasm(Hash(h)) => format!("wasm {}", hex::encode(h)),
        ContractExecutable::StellarAsset => "the Stellar Asset Contract".into(),
        ContractExecutable::ExternalRef(r) => format!(
            "an external reference to {}",
            address_text(&r.executable_owner)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::admin_named;

    #[test]
    fn the_admin_is_read_from_every_wording_of_the_admin_line() {
        assert_eq!(admin_named("admin() is GA").as_deref(), Some("GA"));
        assert_eq!(
            admin_named("admin() is the issuer GI").as_deref(),
            Some("GI")
        );
        assert_eq!(
            admin_named("admin() is CX, not the issuer GI").as_deref(),
            Some("CX")
        );
        assert_eq!(admin_named("admin() did not answer"), None);
    }
}
