//! Fork mode against a second local network as the upstream: entries are read from it through
//! stellar-rpc, writes stay in the fork, and the cache file replays the fork with the upstream
//! stopped.

use crate::common;

use assay_localnet::xdr::{Int128Parts, LedgerKey, LedgerKeyAccount, ScAddress, ScString, ScVal};
use assay_localnet::{ForkConfig, LocalNet, LocalNetConfig, LocalNetError};
use common::*;
use serde_json::{json, Value};

fn fork_of(upstream_rpc: Option<String>, cache: Option<std::path::PathBuf>) -> LocalNet {
    LocalNet::start_fork(
        LocalNetConfig::default(),
        ForkConfig {
            rpc_url: upstream_rpc,
            ledger: None,
            cache,
        },
    )
    .expect("the fork starts")
}

fn transactions(net: &LocalNet) -> usize {
    net.close_stats().iter().map(|s| s.transactions).sum()
}

fn simulated_return(
    client: &Client,
    contract: [u8; 32],
    function: &str,
    args: Vec<ScVal>,
) -> ScVal {
    let sim = client.simulate(call_fn(contract, function, args), vec![]);
    assert!(sim.get("error").is_none(), "{sim}");
    unb64(sim["results"][0]["xdr"].as_str().unwrap())
}

fn account_entries(net: &LocalNet, client: &Client) -> Value {
    let key = LedgerKey::Account(LedgerKeyAccount {
        account_id: client.account.clone(),
    });
    rpc(net, "getLedgerEntries", json!({"keys": [b64(&key)]}))["entries"].clone()
}

#[test]
fn a_fork_reads_the_upstream_keeps_writes_local_and_replays_its_cache_offline() {
    let upstream = LocalNet::start(LocalNetConfig::default()).unwrap();
    let alice = Client::funded(&upstream, 1);
    let contract = alice.deploy(alice.upload(&wasm("read_floor")), 3, vec![]);
    let set = alice.call(contract, "set", vec![addr(&alice.account), ScVal::U64(7)]);
    assert_eq!(set.status, "SUCCESS", "{}", set.get_tx);
    let upstream_ledger = upstream.latest_ledger();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("fork.json");

    let fork = fork_of(Some(upstream.rpc_url()), Some(cache.clone()));
    assert_eq!(fork.passphrase(), upstream.passphrase());
    let stats = fork.fork_stats().unwrap();
    assert!(
        stats.ledger >= upstream_ledger && !stats.offline,
        "{stats:?}"
    );
    let upstream_txs = transactions(&upstream);

    // Bob exists only in the fork; the contract and alice's value come from the upstream.
    let bob = Client::funded(&fork, 2);
    let read = bob.call(contract, "get", vec![addr(&alice.account)]);
    assert_eq!(read.return_value, Some(ScVal::U64(7)), "{}", read.get_tx);
    let write = bob.call(contract, "set", vec![addr(&alice.account), ScVal::U64(9)]);
    assert_eq!(write.status, "SUCCESS", "{}", write.get_tx);
    let read = bob.call(contract, "get", vec![addr(&alice.account)]);
    assert_eq!(read.return_value, Some(ScVal::U64(9)));
    let round_trips = fork.fork_stats().unwrap().upstream_round_trips;
    assert!(
        round_trips > 2,
        "the fork read entries from the upstream ({round_trips})"
    );

    // The upstream is unchanged: alice's value, no bob, no transaction it did not make itself.
    assert_eq!(
        simulated_return(&alice, contract, "get", vec![addr(&alice.account)]),
        ScVal::U64(7)
    );
    assert_eq!(account_entries(&upstream, &bob), json!([]));
    assert_eq!(transactions(&upstream), upstream_txs);
    let alice_account = alice.account.clone();
    drop(fork);
    drop(upstream);

    // The cache is a stellar snapshot file holding what the fork read.
    let file: Value = serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
    assert_eq!(file["sequence_number"], json!(stats.ledger));
    assert!(
        file["ledger_entries"]
            .as_array()
            .is_some_and(|e| e.len() >= 3),
        "{file}"
    );

    // Replayed with the upstream stopped: the upstream's state at the fork ledger again.
    let replay = fork_of(Some("http://127.0.0.1:9/rpc".into()), Some(cache.clone()));
    let replayed = replay.fork_stats().unwrap();
    assert!(
        replayed.offline && replayed.ledger == stats.ledger,
        "{replayed:?}"
    );
    let bob = Client::funded(&replay, 2);
    let read = bob.call(contract, "get", vec![addr(&alice_account)]);
    assert_eq!(read.return_value, Some(ScVal::U64(7)), "{}", read.get_tx);
    assert_eq!(replay.fork_stats().unwrap().upstream_round_trips, 0);
}

#[test]
fn a_fork_grants_one_invocation_as_exactly_one_address() {
    let upstream = LocalNet::start(LocalNetConfig::default()).unwrap();
    let alice = Client::funded(&upstream, 11);
    let text = |s: &str| ScVal::String(ScString(s.try_into().unwrap()));
    let token = alice.deploy(
        alice.upload(&wasm("conformant_token")),
        4,
        vec![
            addr(&alice.account),
            ScVal::U32(7),
            text("Fork"),
            text("FORK"),
        ],
    );
    let amount = |v: i128| {
        ScVal::I128(Int128Parts {
            hi: (v >> 64) as i64,
            lo: v as u64,
        })
    };
    let minted = alice.call(token, "mint", vec![addr(&alice.account), amount(100)]);
    assert_eq!(minted.status, "SUCCESS", "{}", minted.get_tx);

    let fork = fork_of(Some(upstream.rpc_url()), None);
    let bob = Client::funded(&fork, 12);
    let (alice_addr, bob_addr) = (
        ScAddress::Account(alice.account.clone()),
        ScAddress::Account(bob.account.clone()),
    );
    let token_addr = contract_addr(token);
    let transfer = vec![addr(&alice.account), addr(&bob.account), amount(10)];

    // Granted as bob, a transfer out of alice's balance asks for alice's authorization: refused.
    let refused = fork.invoke_authorized_as(&bob_addr, &token_addr, "transfer", transfer.clone());
    assert!(
        matches!(&refused, Err(LocalNetError::Invoke(m)) if m.contains("beyond")),
        "{refused:?}"
    );
    let balance = |net_client: &Client, who: &Client| {
        simulated_return(net_client, token, "balance", vec![addr(&who.account)])
    };
    assert_eq!(balance(&bob, &bob), amount(0));

    // Granted as alice, in the fork only.
    fork.invoke_authorized_as(&alice_addr, &token_addr, "transfer", transfer)
        .expect("alice's own transfer runs with her authorization granted");
    assert_eq!(balance(&bob, &bob), amount(10));
    assert_eq!(balance(&bob, &alice), amount(90));
    assert_eq!(balance(&alice, &alice), amount(100));
}

#[test]
fn a_fork_ledger_ahead_of_the_upstream_is_refused() {
    let upstream = LocalNet::start(LocalNetConfig::default()).unwrap();
    let ahead = upstream.latest_ledger() + 1_000;
    let err = LocalNet::start_fork(
        LocalNetConfig::default(),
        ForkConfig {
            rpc_url: Some(upstream.rpc_url()),
            ledger: Some(ahead),
            cache: None,
        },
    )
    .err()
    .expect("refused");
    assert!(
        err.to_string().contains(&format!("--fork-ledger {ahead}")),
        "{err}"
    );
}

#[test]
fn a_fork_ledger_behind_the_upstream_is_served_only_from_a_cache_recorded_there() {
    let upstream = LocalNet::start(LocalNetConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("fork.json");
    let recorded = fork_of(Some(upstream.rpc_url()), Some(cache.clone()));
    let ledger = recorded.fork_stats().unwrap().ledger;
    recorded.fork_note("test.recorded", json!(true)).unwrap();
    drop(recorded);
    upstream.wait_for_ledger(ledger + 1, std::time::Duration::from_secs(10));
    assert!(upstream.latest_ledger() > ledger);
    let at = |cache: Option<std::path::PathBuf>| {
        LocalNet::start_fork(
            LocalNetConfig::default(),
            ForkConfig {
                rpc_url: Some(upstream.rpc_url()),
                ledger: Some(ledger),
                cache,
            },
        )
    };

    // stellar-rpc serves its latest state only: a past ledger without its cache is refused.
    let err = at(None).err().expect("refused");
    let message = err.to_string();
    assert!(matches!(err, LocalNetError::ForkLedger(_)), "{err:?}");
    assert!(
        message.contains(&format!(
            "--fork-ledger {ledger} is behind the upstream's latest ledger"
        )) && message.contains("--fork-cache FILE"),
        "{message}"
    );
    // The cache recorded there replays it, offline.
    let replay = at(Some(cache)).expect("the cache holds that ledger");
    let stats = replay.fork_stats().unwrap();
    assert_eq!((stats.ledger, stats.offline), (ledger, true));
    assert_eq!(replay.fork_noted("test.recorded"), Some(json!(true)));
}

#[test]
fn an_upstream_lost_mid_run_is_a_server_error_not_a_contract_answer() {
    let upstream = LocalNet::start(LocalNetConfig::default()).unwrap();
    let alice = Client::funded(&upstream, 21);
    let contract = alice.deploy(alice.upload(&wasm("read_floor")), 5, vec![]);
    let fork = fork_of(Some(upstream.rpc_url()), None);
    let bob = Client::funded(&fork, 22);
    let alice_account = alice.account.clone();
    drop(upstream);

    // The contract was never read by the fork: simulating a call to it needs the upstream.
    let op = invoke_op(call_fn(contract, "get", vec![addr(&alice_account)]), vec![]);
    let tx =
        assay_localnet::txbuild::transaction(&bob.account, bob.next_seq(), 100, vec![op], None);
    let env = assay_localnet::txbuild::sign(tx, fork.network_id(), &bob.secret);
    let (status, body) = http(
        &fork.rpc_url(),
        "POST",
        Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "simulateTransaction", "params": {"transaction": b64(&env)}}).to_string()),
    );
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("upstream"), "{message}");
}
