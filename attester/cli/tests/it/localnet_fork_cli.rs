//! `assay localnet --fork-rpc-url` through the binary, with a second `assay localnet` as the
//! upstream: a contract deployed upstream is invoked on the fork through stellar-rpc, the upstream
//! is unchanged, and `--fork-cache` replays the fork with the upstream stopped.
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use assay_chain::{InvokeOutcome, NetworkClient, ReadOutcome, Signer};
use serde_json::Value;
use stellar_xdr::{CreateAccountOp, OperationBody, ScAddress, ScVal};

const PASSPHRASE: &str = assay_localnet::STANDALONE_PASSPHRASE;

/// A running `assay localnet` and its one-line JSON summary; stopped with SIGTERM on drop.
struct Node {
    child: Child,
    summary: Value,
}

impl Node {
    fn start(extra: &[&str]) -> Node {
        let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args([
                "localnet",
                "--port",
                "0",
                "--ledger-close-ms",
                "100",
                "--output",
                "json",
            ])
            .args(extra)
            .env_remove("STELLAR_NETWORK_PASSPHRASE")
            .env_remove("STELLAR_LOCALNET_PORT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("assay localnet starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let summary =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("summary line ({e}): {line:?}"));
        Node { child, summary }
    }

    fn rpc_url(&self) -> String {
        self.summary["rpcUrl"].as_str().unwrap().to_string()
    }

    fn network(&self) -> NetworkClient {
        let mut n = NetworkClient::new(&self.rpc_url(), PASSPHRASE);
        n.poll_interval = Duration::from_millis(50);
        n
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // SAFETY: signals the child this test started, by its pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

fn read_floor() -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let status = Command::new(root.join("scripts/build-wasm.sh"))
        .arg("read-floor")
        .status()
        .expect("scripts/build-wasm.sh runs");
    assert!(status.success());
    std::fs::read(root.join("target/wasm/read_floor.wasm")).unwrap()
}

fn create(network: &NetworkClient, who: &Signer) {
    let root = Signer::from_bytes(assay_localnet::root_secret(PASSPHRASE));
    let op = OperationBody::CreateAccount(CreateAccountOp {
        destination: who.account_id(),
        starting_balance: 100_000_000_000,
    });
    network.submit_classic(&root, vec![op]).unwrap();
}

fn get(
    network: &NetworkClient,
    reader: &Signer,
    contract: &ScAddress,
    key: &Signer,
) -> ReadOutcome {
    let args = vec![ScVal::Address(key.sc_address())];
    network
        .read(&reader.account_id(), contract, "get", args)
        .unwrap()
}

#[test]
fn assay_localnet_forks_a_second_assay_localnet_and_replays_its_cache() {
    let wasm = read_floor();
    let upstream = Node::start(&[]);
    let up = upstream.network();
    let alice = Signer::from_bytes([61; 32]);
    create(&up, &alice);
    let hash = up.upload_wasm(&alice, &wasm).unwrap();
    let contract = up.create_contract(&alice, hash, [61; 32], vec![]).unwrap();
    let set = |n: &NetworkClient, who: &Signer, v: u64| {
        let args = vec![ScVal::Address(alice.sc_address()), ScVal::U64(v)];
        n.invoke(who, &contract, "set", args).unwrap()
    };
    assert!(matches!(set(&up, &alice, 7), InvokeOutcome::Landed { .. }));
    let alice_seq = up.account_sequence(&alice.account_id()).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("fork.json");
    let cache_arg = cache.to_str().unwrap();
    let upstream_rpc = upstream.rpc_url();
    let fork = Node::start(&["--fork-rpc-url", &upstream_rpc, "--fork-cache", cache_arg]);
    assert_eq!(fork.summary["networkPassphrase"], PASSPHRASE);
    let fork_ledger = fork.summary["forkLedger"].as_u64().expect("forkLedger");
    assert_eq!(fork.summary["forkOffline"], false);

    // On the fork: bob exists only there, reads alice's value from upstream, overwrites it.
    let on_fork = fork.network();
    let bob = Signer::from_bytes([62; 32]);
    create(&on_fork, &bob);
    assert_eq!(
        get(&on_fork, &bob, &contract, &alice),
        ReadOutcome::Value(ScVal::U64(7))
    );
    assert!(matches!(
        set(&on_fork, &bob, 9),
        InvokeOutcome::Landed { .. }
    ));
    assert_eq!(
        get(&on_fork, &bob, &contract, &alice),
        ReadOutcome::Value(ScVal::U64(9))
    );

    // The upstream is unchanged.
    assert_eq!(
        get(&up, &alice, &contract, &alice),
        ReadOutcome::Value(ScVal::U64(7))
    );
    assert_eq!(up.account_sequence(&bob.account_id()).unwrap(), None);
    assert_eq!(up.account_sequence(&alice.account_id()).unwrap(), alice_seq);
    drop(fork);
    drop(upstream);

    // With the upstream stopped, the cache replays the fork at the same ledger.
    let replay = Node::start(&["--fork-rpc-url", &upstream_rpc, "--fork-cache", cache_arg]);
    assert_eq!(replay.summary["forkOffline"], true);
    assert_eq!(replay.summary["forkLedger"].as_u64(), Some(fork_ledger));
    let on_replay = replay.network();
    create(&on_replay, &bob);
    assert_eq!(
        get(&on_replay, &bob, &contract, &alice),
        ReadOutcome::Value(ScVal::U64(7))
    );
}
