//! Who can act as the party a power needs, resolved one step: an account's signers and thresholds (one
//! key? how many of how many? locked for good?), or a contract (not resolved further).

use assay_chain::strkey_of;
use assay_core::powers::Authority;
use assay_localnet::Sandbox;
use stellar_xdr::{AccountEntry, LedgerEntryData, LedgerKey, LedgerKeyAccount, ScAddress};

/// Soroban authorizes an account's signature at its medium threshold.
const MEDIUM: usize = 2;

/// Resolves `address` in `sandbox`.
pub fn resolve(sandbox: &Sandbox, address: &ScAddress) -> Authority {
    let text = strkey_of(address);
    let ScAddress::Account(id) = address else {
        return Authority {
            address: text,
            control: "contract".into(),
            locked: false,
        };
    };
    let key = LedgerKey::Account(LedgerKeyAccount {
        account_id: id.clone(),
    });
    match sandbox.entry(&key) {
        Ok(Some(e)) => match e.data {
            LedgerEntryData::Account(a) => {
                let (control, locked) = control_of(&a);
                Authority {
                    address: text,
                    control,
                    locked,
                }
            }
            _ => unknown(text),
        },
        Ok(None) => Authority {
            address: text,
            control: "no account on the ledger".into(),
            locked: false,
        },
        Err(_) => unknown(text),
    }
}

fn unknown(address: String) -> Authority {
    Authority {
        address,
        control: "unknown (its account could not be read)".into(),
        locked: false,
    }
}

/// "1 key", "2 of 3 keys", or "locked: no signer can reach the threshold" from an account entry.
pub fn control_of(account: &AccountEntry) -> (String, bool) {
    let thresholds = account.thresholds.0;
    let needed = u32::from(thresholds[MEDIUM]).max(1);
    let mut weights: Vec<u32> = std::iter::once(u32::from(thresholds[0]))
        .chain(account.signers.iter().map(|s| s.weight))
        .filter(|w| *w > 0)
        .collect();
    weights.sort_unstable_by(|a, b| b.cmp(a));
    let mut sum = 0u32;
    let mut keys = 0usize;
    for w in &weights {
        if sum >= needed {
            break;
        }
        sum = sum.saturating_add(*w);
        keys += 1;
    }
    if sum < needed {
        return ("locked: no signer can reach the threshold".into(), true);
    }
    if weights.len() == 1 {
        ("1 key".into(), false)
    } else {
        (format!("{keys} of {} keys", weights.len()), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stellar_xdr::{Signer, SignerKey, Thresholds, Uint256};

    fn account(master: u8, medium: u8, signers: &[u32]) -> AccountEntry {
        AccountEntry {
            thresholds: Thresholds([master, 0, medium, 0]),
            signers: signers
                .iter()
                .enumerate()
                .map(|(i, w)| Signer {
                    key: SignerKey::Ed25519(Uint256([i as u8 + 1; 32])),
                    weight: *w,
                })
                .collect::<Vec<_>>()
                .try_into()
                .unwrap(),
            ..AccountEntry::default()
        }
    }

    #[test]
    fn one_key_several_keys_and_locked() {
        assert_eq!(control_of(&account(1, 0, &[])), ("1 key".into(), false));
        assert_eq!(
            control_of(&account(1, 2, &[1, 1])),
            ("2 of 3 keys".into(), false)
        );
        assert_eq!(
            control_of(&account(0, 0, &[])),
            ("locked: no signer can reach the threshold".into(), true)
        );
        assert!(control_of(&account(0, 5, &[1, 1])).1);
    }
}
