//! An archived attestation entry (the asset's verdicts, keyed by the bare asset address): re-attesting
//! still works (the simulation restores it, automatically or through a restore preamble that the
//! attester submits first), and the value read back is the new one.

use crate::common;

use assay_attest::attest::{ChainSubmitter, Submitter};
use assay_attest::registry::read_safety;
use assay_attest::registry::Attestation;
use common::*;
use stellar_xdr::{
    ContractDataDurability, ContractId, Hash, LedgerKey, LedgerKeyContractData, ScAddress, ScVal,
};

#[test]
fn re_attesting_an_archived_entry_restores_it() {
    let w = World::start(&[]);
    let mut s = ChainSubmitter {
        invoker: w.invoker(&w.attester),
        registry: w.registry,
        confirm_read_back: true,
    };
    let (token, code) = w.bound_token(7);
    let first = Attestation {
        asset: token,
        severity: 1,
        flags: 1,
        evidence_hash: [1; 32],
        code: code.clone(),
    };
    s.submit(std::slice::from_ref(&first)).unwrap();

    // The entry the write made: the asset's verdicts, keyed by the bare asset address.
    let asset = ScVal::Address(ScAddress::Contract(ContractId(Hash(token))));
    let keys = [registry_key(&w, asset)];
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
        asset: token,
        severity: 2,
        flags: 2,
        evidence_hash: [2; 32],
        code,
    };
    let written = s
        .submit(std::slice::from_ref(&second))
        .expect("re-attest an archived entry");
    assert_eq!(written.read_back, Ok(()));
    let confirmed = written.confirmed;
    assert!(confirmed.ledger > now);
    let read = read_safety(&w.rpc, w.registry, token).unwrap().unwrap();
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

/// The registry's persistent entry under `key`.
fn registry_key(w: &World, key: ScVal) -> LedgerKey {
    LedgerKey::ContractData(LedgerKeyContractData {
        contract: ScAddress::Contract(ContractId(Hash(w.registry))),
        key,
        durability: ContractDataDurability::Persistent,
    })
}
