//! Fault tests on the submit path, against a scripted JSON-RPC proxy in front of the local network. Each
//! fault ends in a clear error or a confirmed write, never a silent success, and never a double write.

use crate::common;

use std::sync::Arc;

use assay_attest::attest::{execute, ChainSubmitter, Outcome, Planned, Submitter};
use assay_attest::registry::read_safety;
use assay_attest::registry::Attestation;
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{ChainError, Invoker};
use common::proxy::{Fault, Proxy};
use common::*;
use serde_json::json;
use stellar_xdr::{Limits, ReadXdr, SorobanTransactionData, WriteXdr};

/// A low verdict on a token deployed for it (salt `n`), bound to the token's code.
fn attestation(w: &World, n: u8) -> Attestation {
    let (asset, code) = w.bound_token(0x60 + n);
    Attestation {
        asset,
        severity: 1,
        flags: 1,
        evidence_hash: [n; 32],
        code,
    }
}

fn sequence(w: &World) -> i64 {
    w.invoker(&w.attester).next_sequence().unwrap()
}

fn submit_via(
    w: &World,
    proxy: &Proxy,
    batch: &[Attestation],
) -> Result<assay_chain::submit::Confirmed, ChainError> {
    let rpc = RpcClient::new(&proxy.url).unwrap();
    let mut s = ChainSubmitter {
        invoker: Invoker {
            rpc: &rpc,
            network: &w.spec,
            signer: &w.attester,
            options: local_invoke_options(),
        },
        registry: w.registry,
        confirm_read_back: true,
    };
    s.submit(batch).map(|s| {
        assert_eq!(s.read_back, Ok(()), "the write reads back");
        s.confirmed
    })
}

#[test]
fn faults_on_the_submit_path() {
    let w = World::start(&[]);

    // RPC down: nothing was submitted, and the error says so.
    let closed = assay_scan::testsupport::closed_port();
    let rpc = RpcClient::new(&format!("http://127.0.0.1:{closed}")).unwrap();
    let mut down = ChainSubmitter {
        invoker: Invoker {
            rpc: &rpc,
            network: &w.spec,
            signer: &w.attester,
            options: local_invoke_options(),
        },
        registry: w.registry,
        confirm_read_back: true,
    };
    // One token per write below, deployed up front (the admin deploys; the attester's sequence
    // counts only the writes).
    let first = attestation(&w, 1);
    let (a2, a3, a4, a5) = (
        attestation(&w, 2),
        attestation(&w, 3),
        attestation(&w, 4),
        attestation(&w, 5),
    );
    let err = down.submit(std::slice::from_ref(&first)).unwrap_err();
    assert!(
        matches!(err, ChainError::Rpc(_)) && err.to_string().contains("nothing was submitted"),
        "{err}"
    );
    let planned = vec![Planned {
        index: 0,
        params: assay_core::Params {
            asset: "X".into(),
            severity: 1,
            severity_name: "low".into(),
            flags: 1,
            mechanics: assay_core::Mechanics::empty(),
            checks: vec![],
            network: None,
            evidence_version: 3,
            evidence_hash: hex::encode([1u8; 32]),
            scanned_at: assay_core::Timestamp::from_unix(0).unwrap(),
            preimage: None,
        },
        attestation: first,
    }];
    let outcomes = execute(&planned, vec![None], &mut down, 50, false);
    assert!(
        matches!(&outcomes[0], Outcome::Failed { reason } if reason.contains("unreachable")),
        "{outcomes:?}"
    );
    assert_eq!(
        assay_attest::attest::exit_code(&outcomes),
        assay_attest::attest::exit::ERROR
    );

    // TRY_AGAIN_LATER twice, then accepted: one write.
    let proxy = Proxy::start(w.net.rpc_url());
    let busy = json!({"status": "TRY_AGAIN_LATER", "hash": "00", "latestLedger": 1, "latestLedgerCloseTime": "0"});
    proxy.queue(
        "sendTransaction",
        vec![Fault::Answer(busy.clone()), Fault::Answer(busy.clone())],
    );
    let before = sequence(&w);
    let ok =
        submit_via(&w, &proxy, std::slice::from_ref(&a2)).expect("accepted after TRY_AGAIN_LATER");
    assert_eq!(proxy.count("sendTransaction"), 3);
    assert_eq!(sequence(&w), before + 1, "exactly one transaction applied");
    assert!(read_safety(&w.rpc, w.registry, a2.asset).unwrap().is_some());
    assert_eq!(ok.hash.len(), 64);

    // TRY_AGAIN_LATER forever: a clear error, nothing written.
    let proxy = Proxy::start(w.net.rpc_url());
    proxy.always("sendTransaction", Fault::Answer(busy));
    let before = sequence(&w);
    let err = submit_via(&w, &proxy, std::slice::from_ref(&a3)).unwrap_err();
    assert!(matches!(err, ChainError::Busy(_)), "{err}");
    assert_eq!(sequence(&w), before);
    assert_eq!(read_safety(&w.rpc, w.registry, a3.asset).unwrap(), None);

    // A transaction that fails on chain: simulation's instruction budget is cut to 1, so the host runs out
    // of budget when the ledger applies it. The error names the hash and ledger; nothing is written.
    let proxy = Proxy::start(w.net.rpc_url());
    proxy.always(
        "simulateTransaction",
        Fault::Rewrite(Arc::new(|mut r: serde_json::Value| {
            if let Some(x) = r["transactionData"].as_str() {
                let mut d = SorobanTransactionData::from_xdr_base64(x, Limits::none()).unwrap();
                d.resources.instructions = 1;
                r["transactionData"] = json!(d.to_xdr_base64(Limits::none()).unwrap());
            }
            r
        })),
    );
    let err = submit_via(&w, &proxy, std::slice::from_ref(&a4)).unwrap_err();
    match &err {
        ChainError::Failed { hash, ledger, .. } => assert!(hash.len() == 64 && *ledger > 0),
        other => panic!("expected an on-chain failure, got {other}"),
    }
    assert!(!err.may_have_written());
    assert_eq!(read_safety(&w.rpc, w.registry, a4.asset).unwrap(), None);

    // The response to sendTransaction is lost after the network accepted it: the attester re-polls by hash
    // and re-sends the same envelope, and exactly one transaction applies.
    let proxy = Proxy::start(w.net.rpc_url());
    proxy.queue("sendTransaction", vec![Fault::LoseResponse]);
    let before = sequence(&w);
    let ok =
        submit_via(&w, &proxy, std::slice::from_ref(&a5)).expect("confirmed after a lost response");
    assert!(proxy.count("getTransaction") >= 1, "followed the hash");
    assert_eq!(sequence(&w), before + 1, "no double write");
    assert!(read_safety(&w.rpc, w.registry, a5.asset).unwrap().is_some());
    assert!(ok.ledger > 0);

    // Every getTransaction answer is lost too, until the time bound passes: the outcome is reported as
    // unknown with the hash, never as success.
    let proxy = Proxy::start(w.net.rpc_url());
    proxy.queue("sendTransaction", vec![Fault::LoseResponse]);
    proxy.always(
        "getTransaction",
        Fault::Answer(
            json!({"status": "NOT_FOUND", "latestLedger": 1, "latestLedgerCloseTime": "0"}),
        ),
    );
    let rpc = RpcClient::new(&proxy.url).unwrap();
    let mut options = local_invoke_options();
    options.validity_secs = 2;
    let inv = Invoker {
        rpc: &rpc,
        network: &w.spec,
        signer: &w.attester,
        options,
    };
    let f = assay_attest::registry::attest_many(
        w.registry,
        w.attester.public_key(),
        &[attestation(&w, 6)],
    );
    let before = sequence(&w);
    let err = inv.invoke(&f).unwrap_err();
    assert!(err.may_have_written(), "{err}");
    assert!(err.to_string().contains("check it"), "{err}");
    // It did apply (the first send went through): the operator is told to check, not told it failed.
    assert_eq!(sequence(&w), before + 1);
}
