//! Interface 7 on the local network, with the built registry, verdict store and gate: one attester
//! condemns a token, another clears it, the clearing verdict is withdrawn (by its attester, or by the
//! admin) and written again. Neither the registry, nor the store consumers read, nor the gate that
//! reads the store admits the token: a revocation withdraws only its attester's verdict, and vetoes
//! the admission of every older one.

use crate::common;

use assay_attest::registry::{
    self, describe_assessment, read_assessment, read_safety, read_safety_by, Attestation,
    CodeBinding,
};
use assay_chain::Signer;
use common::*;

/// The gate's refusal of a token no verdict admits (never attested, or revoked).
const GATE_NOT_ATTESTED: u32 = 1;
/// The gate's refusal of a token above its severity ceiling.
const GATE_SEVERITY_TOO_HIGH: u32 = 4;

fn write(w: &World, by: &Signer, token: [u8; 32], code: &CodeBinding, severity: u32) {
    let batch = [Attestation {
        asset: token,
        severity,
        flags: 0,
        evidence_hash: [severity as u8 + 1; 32],
        code: code.clone(),
    }];
    let f = registry::attest_many(w.registry, by.public_key(), &batch);
    w.invoker(by).invoke(&f).expect("attestation written");
}

/// Registry, store and gate all refuse `token` as revoked.
fn assert_refused_as_revoked(w: &World, token: [u8; 32], context: &str) {
    let policy = (3, 0, u64::MAX);
    for (name, contract) in [("registry", w.registry), ("store", w.store)] {
        assert_eq!(
            read_safety(&w.rpc, contract, token).unwrap(),
            None,
            "{context}: {name} get_safety"
        );
        let assessed =
            describe_assessment(&read_assessment(&w.rpc, contract, token, policy).unwrap());
        assert!(
            assessed.starts_with("Revoked("),
            "{context}: {name} assess answered {assessed}"
        );
    }
    assert_eq!(
        w.gate_check(token),
        Err(GATE_NOT_ATTESTED),
        "{context}: the gate admits nothing"
    );
}

#[test]
fn a_revocation_never_clears_another_attesters_critical_verdict_on_the_local_network() {
    let w = World::start(&[]);
    let x = &w.attester;
    let y = Signer::from_seed([21; 32]);
    w.net.fund(&registry::account_id(y.public_key())).unwrap();
    let add = registry::call(
        w.registry,
        "add_attester",
        vec![registry::account_val(y.public_key())],
    );
    w.invoker(&w.admin).invoke(&add).unwrap();

    for (salt, condemned_first, by_admin) in
        [(60, true, false), (61, false, false), (62, true, true)]
    {
        let context = format!("condemned_first={condemned_first} by_admin={by_admin}");
        let (token, code) = w.bound_token(salt);
        if condemned_first {
            write(&w, x, token, &code, 4);
            write(&w, &y, token, &code, 0);
        } else {
            write(&w, &y, token, &code, 0);
            write(&w, x, token, &code, 4);
        }
        assert_eq!(
            w.gate_check(token),
            Err(GATE_SEVERITY_TOO_HIGH),
            "{context}: condemned"
        );

        let withdraw = if by_admin {
            registry::call(
                w.registry,
                "admin_revoke",
                vec![
                    registry::account_val(y.public_key()),
                    registry::contract_val(token),
                ],
            )
        } else {
            registry::revoke(w.registry, y.public_key(), token)
        };
        let signer = if by_admin { &w.admin } else { &y };
        w.invoker(signer).invoke(&withdraw).expect("revoked");
        assert_refused_as_revoked(&w, token, &format!("{context}, revoked"));

        // Y clears the token again, in a later ledger: still refused.
        let revoked_at = assay_attest::verify::ledger_time(&w.rpc).unwrap();
        w.after(revoked_at);
        write(&w, &y, token, &code, 0);
        assert!(
            read_safety_by(&w.rpc, w.registry, token, y.public_key())
                .unwrap()
                .is_some(),
            "{context}: Y's newer verdict is stored and counts on its own"
        );
        assert_refused_as_revoked(&w, token, &format!("{context}, cleared again"));

        // X writes again: its newer critical verdict answers, and the gate refuses it as such.
        write(&w, x, token, &code, 4);
        assert_eq!(
            w.gate_check(token),
            Err(GATE_SEVERITY_TOO_HIGH),
            "{context}: X wrote again"
        );
    }
}
