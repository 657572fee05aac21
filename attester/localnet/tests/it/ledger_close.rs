//! A ledger's close statistics are published with its results: a client that has seen its
//! transaction land through JSON-RPC reads that ledger's `CloseStat` (issue #29).

use crate::common;

use assay_localnet::xdr::{Operation, OperationBody, SetOptionsOp};
use assay_localnet::{LocalNet, LocalNetConfig};
use common::*;
use serde_json::json;

#[test]
fn a_client_that_saw_its_transaction_land_sees_the_close_statistics_of_its_ledger() {
    let net = LocalNet::start(LocalNetConfig {
        ledger_close_ms: 20,
        ..LocalNetConfig::default()
    })
    .unwrap();
    let client = Client::root(&net);
    for round in 0..100 {
        let op = Operation {
            source_account: None,
            body: OperationBody::SetOptions(SetOptionsOp::default()),
        };
        let sent = client.send(&client.envelope(vec![op], 100, None));
        assert_eq!(sent["status"], "PENDING", "{sent}");
        let hash = sent["hash"].as_str().unwrap();
        // Polled without a pause: the read that follows the first SUCCESS is as close to the
        // ledger's publication as a client can get.
        let landed = loop {
            let r = rpc(&net, "getTransaction", json!({ "hash": hash }));
            if r["status"] != "NOT_FOUND" {
                break r;
            }
        };
        assert_eq!(landed["status"], "SUCCESS", "{landed}");
        let ledger = landed["ledger"].as_u64().unwrap();
        let stats = net.close_stats();
        let stat = stats.iter().find(|s| u64::from(s.ledger) == ledger);
        assert!(
            stat.is_some_and(|s| s.transactions >= 1),
            "round {round}: ledger {ledger} landed the transaction, close statistics end at {:?}",
            stats.last()
        );
    }
}
