//! Archived attestation entries (the asset's latest verdict and the attester's own): re-attesting still works (the simulation restores it, automatically or
//! through a restore preamble that the attester submits first), and the value read back is the new one.

use crate::common;

use assay_attest::attest::{ChainSubmitter, Submitter};
use assay_attest::registry::{self, Attestation};
use assay_attest::verify::read_safety;
use common::*;
use stellar_xdr::{
    ContractDataDurability, ContractId, Hash, LedgerKey, LedgerKeyContractData, ScAddress,
    ScSymbol, ScVal,
};

#[test]
fn re_attesting_an_archived_entry_restores_it() {
    let w = World::start(&[]);
    let mut s = ChainSubmitter {
        invoker: w.invoker(&w.attester),
        registry: w.registry,
        confirm_read_back: true,
    };
    let first = Attestation {
        asset: [7; 32],
        severity: 1,
        flags: 1,
        evidence_hash: [1; 32],
    };
    s.submit(std::slice::from_ref(&first)).unwrap();

    // Both entries the write made: the asset's latest verdict (keyed by the bare asset address)
    // and the attester's own.
    let asset = ScVal::Address(ScAddress::Contract(ContractId(Hash([7; 32]))));
    let keys = [
        registry_key(&w, asset.clone()),
        registry_key(
            &w,
            ScVal::Vec(Some(
                vec![
                    symbol("Verdict"),
                    asset,
                    registry::account_val(w.attester.public_key()),
                ]
                .try_into()
                .unwrap(),
            )),
        ),
    ];
    let now = w.net.latest_ledger();
    for key in &keys {
        assert!(
            w.net.ledger_entry(key).is_some(),
            "the entry exists under the expected key: {key:?}"
        );
        w.net
            .admin_set_live_until(key, now.saturating_sub(1))
            .unwrap();
    }
    w.net
        .wait_for_ledger(now + 2, std::time::Duration::from_secs(10));

    let second = Attestation {
        asset: [7; 32],
        severity: 2,
        flags: 2,
        evidence_hash: [2; 32],
    };
    let written = s
        .submit(std::slice::from_ref(&second))
        .expect("re-attest an archived entry");
    assert_eq!(written.read_back, Ok(()));
    let confirmed = written.confirmed;
    assert!(confirmed.ledger > now);
    let read = read_safety(&w.rpc, w.registry, [7; 32]).unwrap().unwrap();
    assert_eq!(
        (read.severity, read.flags, read.evidence_hash),
        (2, 2, [2; 32])
    );
    for key in &keys {
        let (_, live_until) = w.net.ledger_entry(key).unwrap();
        assert!(
            live_until.unwrap_or(0) > w.net.latest_ledger(),
            "live again after the write: {key:?}"
        );
    }
}

fn symbol(name: &str) -> ScVal {
    ScVal::Symbol(ScSymbol(name.try_into().unwrap()))
}

/// The registry's persistent entry under the `DataKey` variant whose parts are `parts`.
fn registry_key(w: &World, key: ScVal) -> LedgerKey {
    LedgerKey::ContractData(LedgerKeyContractData {
        contract: ScAddress::Contract(ContractId(Hash(w.registry))),
        key,
        durability: ContractDataDurability::Persistent,
    })
}
