//! Every typed stellar-rpc-client call the chain client makes, against the local network: its answers must
//! parse into stellar-rpc-client's structs (the real wire format), and a write must land end to end.

use std::time::Duration;

use assay_chain::{
    ContractCode, InvokeOutcome, NetworkClient, ReadOutcome, RpcClient, Signer,
    STANDALONE_PASSPHRASE,
};
use assay_localnet::{LocalNet, LocalNetConfig};
use stellar_xdr::{Asset, LedgerKey, LedgerKeyAccount, OperationBody, PaymentOp, ScAddress, ScVal};

fn start() -> LocalNet {
    LocalNet::start(LocalNetConfig {
        ledger_close_ms: 50,
        ..LocalNetConfig::default()
    })
    .unwrap()
}

#[test]
fn typed_reads_parse_the_local_network_answers() {
    let net = start();
    let rpc = RpcClient::new(&net.rpc_url()).unwrap();
    let network = rpc.get_network().unwrap();
    assert_eq!(network.passphrase, STANDALONE_PASSPHRASE);
    assert_eq!(network.protocol_version, assay_localnet::PROTOCOL_VERSION);
    let latest = rpc.get_latest_ledger().unwrap();
    assert!(latest.sequence >= 1);
    assert_eq!(latest.id.len(), 64, "ledger hash in hex");
    let fees = rpc.get_fee_stats().unwrap();
    assert!(fees.latest_ledger >= latest.sequence);
    let root = LedgerKey::Account(LedgerKeyAccount {
        account_id: net.root_account(),
    });
    let entries = rpc.get_ledger_entries(&[root]).unwrap();
    let entry = &entries.entries.unwrap()[0];
    assert!(entry.last_modified_ledger >= 1);
    assert!(entries.latest_ledger >= i64::from(latest.sequence));
    let events = rpc.get_events(latest.sequence, &[]).unwrap();
    assert!(events.latest_ledger >= latest.sequence);
    let health = rpc.get_health().unwrap();
    assert_eq!(health.status, "healthy");
    assert!(health.oldest_ledger >= 1 && health.ledger_retention_window > 0);
    assert_eq!(rpc.round_trips(), 6, "one HTTP exchange per call");
}

#[test]
fn writes_land_and_reads_answer_through_the_typed_client() {
    let net = start();
    let mut network = NetworkClient::new(&net.rpc_url(), net.passphrase());
    network.poll_interval = Duration::from_millis(25);
    let root = Signer::from_bytes(net.root_secret());
    let who = Signer::from_seed([5; 32]);
    // A classic op through the same submit path: create the account.
    network
        .submit_classic(
            &root,
            vec![OperationBody::CreateAccount(stellar_xdr::CreateAccountOp {
                destination: who.account_id(),
                starting_balance: 100_000_000,
            })],
        )
        .unwrap();
    assert!(network.account_exists(&who.account_id()).unwrap());
    network
        .submit_classic(
            &who,
            vec![OperationBody::Payment(PaymentOp {
                destination: stellar_xdr::MuxedAccount::Ed25519(stellar_xdr::Uint256(
                    root.public_key(),
                )),
                asset: Asset::Native,
                amount: 1,
            })],
        )
        .unwrap();
    // The native SAC: deploy, then read and write it.
    let sac = network.deploy_sac(&who, &Asset::Native).unwrap();
    assert_eq!(
        network.contract_code(&sac).unwrap(),
        ContractCode::StellarAsset
    );
    let decimals = network
        .read(&who.account_id(), &sac, "decimals", vec![])
        .unwrap();
    assert_eq!(decimals, ReadOutcome::Value(ScVal::U32(7)));
    let to = ScAddress::Account(root.account_id());
    let sent = network
        .invoke(
            &who,
            &sac,
            "transfer",
            vec![
                ScVal::Address(who.sc_address()),
                ScVal::Address(to),
                ScVal::I128(stellar_xdr::Int128Parts { hi: 0, lo: 5 }),
            ],
        )
        .unwrap();
    assert!(
        matches!(sent, InvokeOutcome::Landed { ledger, .. } if ledger > 0),
        "{sent:?}"
    );
    // A refusal is an answer about the contract, with simulation's text.
    let refused = network.invoke(&who, &sac, "no_such_fn", vec![]).unwrap();
    assert!(
        matches!(refused, InvokeOutcome::Refused(ref e) if !e.is_empty()),
        "{refused:?}"
    );
}
