//! The chain client over real HTTP against a 127.0.0.1 server that scripts stellar-rpc answers: each fault
//! on the submit path ends in one exact outcome, and nothing is ever reported as written unless a
//! `getTransaction` said SUCCESS.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assay_chain::{
    submit::foreign_auth, ChainError, InvokeOptions, Invoker, NetworkSpec, RpcClient, RpcError,
    Signer,
};
use serde_json::{json, Value};
use stellar_xdr::{
    AccountEntry, AccountEntryExt, ContractId, Hash, HostFunction, InvokeContractArgs,
    LedgerEntryData, LedgerFootprint, Limits, OperationBody, ReadXdr, ScAddress, ScSymbol, ScVal,
    SequenceNumber, SorobanAddressCredentials, SorobanAuthorizationEntry,
    SorobanAuthorizedFunction, SorobanAuthorizedInvocation, SorobanCredentials, SorobanResources,
    SorobanTransactionData, SorobanTransactionDataExt, Thresholds, TransactionEnvelope,
    TransactionExt, TransactionResult, TransactionResultExt, TransactionResultResult, WriteXdr,
};

/// What the server does with one request of a method.
#[derive(Clone)]
enum Act {
    /// Answer with this `result`.
    Result(Value),
    /// Answer with a JSON-RPC error object.
    Error(i64, &'static str),
    /// Answer with this raw body (HTTP 200).
    Raw(&'static str),
    /// Read the request, then close the connection without answering.
    Drop,
    /// Read the request and never answer.
    Hang,
}

#[derive(Default)]
struct Script {
    queued: HashMap<String, VecDeque<Act>>,
    fallback: HashMap<String, Act>,
    /// (method, params) of every request, in order.
    seen: Vec<(String, Value)>,
}

struct Server {
    url: String,
    script: Arc<Mutex<Script>>,
}

fn read_request(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    loop {
        let n = s.read(&mut tmp).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..pos]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while buf.len() < pos + 4 + len {
                let n = s.read(&mut tmp).ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&tmp[..n]);
            }
            return Some(buf[pos + 4..pos + 4 + len].to_vec());
        }
    }
}

fn reply(s: &mut TcpStream, body: &str) {
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let script: Arc<Mutex<Script>> = Arc::default();
        let sc = script.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut s) = conn else { continue };
                let sc = sc.clone();
                std::thread::spawn(move || {
                    let Some(body) = read_request(&mut s) else {
                        return;
                    };
                    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let method = req["method"].as_str().unwrap_or("").to_string();
                    let act = {
                        let mut g = sc.lock().unwrap();
                        g.seen.push((method.clone(), req["params"].clone()));
                        let queued = g.queued.get_mut(&method).and_then(VecDeque::pop_front);
                        queued.or_else(|| g.fallback.get(&method).cloned())
                    };
                    let id = req["id"].clone();
                    match act {
                        Some(Act::Result(r)) => reply(
                            &mut s,
                            &json!({"jsonrpc": "2.0", "id": id, "result": r}).to_string(),
                        ),
                        Some(Act::Error(code, message)) => reply(
                            &mut s,
                            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                                .to_string(),
                        ),
                        Some(Act::Raw(body)) => reply(&mut s, body),
                        Some(Act::Drop) => drop(s),
                        Some(Act::Hang) => std::thread::sleep(Duration::from_secs(30)),
                        None => reply(
                            &mut s,
                            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("unscripted {method}")}})
                                .to_string(),
                        ),
                    }
                });
            }
        });
        Server { url, script }
    }

    fn queue(&self, method: &str, acts: Vec<Act>) {
        self.script
            .lock()
            .unwrap()
            .queued
            .insert(method.into(), acts.into());
    }

    fn always(&self, method: &str, act: Act) {
        self.script
            .lock()
            .unwrap()
            .fallback
            .insert(method.into(), act);
    }

    fn params(&self, method: &str) -> Vec<Value> {
        self.script
            .lock()
            .unwrap()
            .seen
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    fn count(&self, method: &str) -> usize {
        self.params(method).len()
    }

    /// The envelopes sent with `sendTransaction`, decoded.
    fn sent(&self) -> Vec<TransactionEnvelope> {
        self.params("sendTransaction")
            .iter()
            .map(|p| {
                TransactionEnvelope::from_xdr_base64(
                    p["transaction"].as_str().unwrap(),
                    Limits::none(),
                )
                .unwrap()
            })
            .collect()
    }
}

const SEQ: i64 = 41;

fn signer() -> Signer {
    Signer::from_seed([7; 32])
}

fn spec(url: &str) -> NetworkSpec {
    NetworkSpec {
        name: "scripted".into(),
        rpc_url: url.into(),
        passphrase: assay_chain::STANDALONE_PASSPHRASE.into(),
    }
}

fn fast() -> InvokeOptions {
    InvokeOptions {
        poll_interval: Duration::from_millis(10),
        try_again_backoff: Duration::from_millis(10),
        follow_grace: Duration::from_millis(300),
        ..InvokeOptions::default()
    }
}

fn b64<T: WriteXdr>(v: &T) -> String {
    v.to_xdr_base64(Limits::none()).unwrap()
}

fn account_entry() -> Value {
    account_entry_at(SEQ - 1)
}

fn account_entry_at(seq: i64) -> Value {
    let entry = LedgerEntryData::Account(AccountEntry {
        account_id: signer().account_id(),
        balance: 100_000_000,
        seq_num: SequenceNumber(seq),
        num_sub_entries: 0,
        inflation_dest: None,
        flags: 0,
        home_domain: Default::default(),
        thresholds: Thresholds([1, 0, 0, 0]),
        signers: Default::default(),
        ext: AccountEntryExt::V0,
    });
    json!({"entries": [{"key": "AAAA", "xdr": b64(&entry), "lastModifiedLedgerSeq": 5}], "latestLedger": 10})
}

fn transaction_data(instructions: u32) -> SorobanTransactionData {
    SorobanTransactionData {
        ext: SorobanTransactionDataExt::V0,
        resources: SorobanResources {
            footprint: LedgerFootprint {
                read_only: Default::default(),
                read_write: Default::default(),
            },
            instructions,
            disk_read_bytes: 0,
            write_bytes: 0,
        },
        resource_fee: 0,
    }
}

fn simulation(auth: Vec<String>) -> Value {
    json!({
        "transactionData": b64(&transaction_data(1_000_000)),
        "minResourceFee": "1000",
        "results": [{"auth": auth, "xdr": b64(&ScVal::U32(7))}],
        "latestLedger": 10,
    })
}

fn tx_result(result: TransactionResultResult) -> String {
    b64(&TransactionResult {
        fee_charged: 100,
        result,
        ext: TransactionResultExt::V0,
    })
}

fn call() -> HostFunction {
    HostFunction::InvokeContract(InvokeContractArgs {
        contract_address: ScAddress::Contract(ContractId(Hash([9; 32]))),
        function_name: ScSymbol("set".try_into().unwrap()),
        args: Default::default(),
    })
}

fn pending() -> Act {
    Act::Result(
        json!({"status": "PENDING", "hash": "ab", "latestLedger": 10, "latestLedgerCloseTime": "1"}),
    )
}

fn not_found() -> Act {
    Act::Result(json!({"status": "NOT_FOUND", "latestLedger": 10, "latestLedgerCloseTime": "1"}))
}

fn success() -> Act {
    Act::Result(
        json!({"status": "SUCCESS", "ledger": 11, "createdAt": "1700000000", "latestLedger": 11, "latestLedgerCloseTime": "1700000000"}),
    )
}

/// A server that answers the account and simulation like a healthy network.
fn healthy() -> Server {
    let s = Server::start();
    s.always("getLedgerEntries", Act::Result(account_entry()));
    s.always("simulateTransaction", Act::Result(simulation(vec![])));
    s
}

fn invoke(s: &Server) -> Result<assay_chain::Confirmed, ChainError> {
    let rpc = RpcClient::new(&s.url).unwrap();
    let net = spec(&s.url);
    let me = signer();
    Invoker {
        rpc: &rpc,
        network: &net,
        signer: &me,
        options: fast(),
    }
    .invoke(&call())
}

#[test]
fn try_again_later_then_pending_confirms_one_envelope() {
    let s = healthy();
    s.queue(
        "sendTransaction",
        vec![
            Act::Result(json!({"status": "TRY_AGAIN_LATER", "hash": "ab", "latestLedger": 10, "latestLedgerCloseTime": "1"})),
            pending(),
        ],
    );
    s.queue("getTransaction", vec![not_found(), not_found()]);
    s.always("getTransaction", success());
    let ok = invoke(&s).unwrap();
    assert_eq!((ok.ledger, ok.created_at), (11, Some(1_700_000_000)));
    let sent = s.sent();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0], sent[1], "the retry re-sends the same envelope");
    assert_eq!(
        s.count("getTransaction"),
        3,
        "NOT_FOUND twice, then SUCCESS"
    );
    // Fee margin: simulated 1000 + 15 % = 1150 resource fee, plus the 100 inclusion fee.
    let TransactionEnvelope::Tx(v1) = &sent[0] else {
        panic!("v1 envelope")
    };
    assert_eq!(v1.tx.fee, 1250);
    assert_eq!(v1.tx.seq_num.0, SEQ);
    let TransactionExt::V1(data) = &v1.tx.ext else {
        panic!("soroban data attached")
    };
    assert_eq!(data.resource_fee, 1150);
    assert_eq!(data.resources.instructions, 1_000_000);
    assert_eq!(v1.signatures.len(), 1);
}

#[test]
fn try_again_later_forever_is_busy_and_nothing_written() {
    let s = healthy();
    s.always(
        "sendTransaction",
        Act::Result(json!({"status": "TRY_AGAIN_LATER", "hash": "ab", "latestLedger": 10, "latestLedgerCloseTime": "1"})),
    );
    let err = invoke(&s).unwrap_err();
    assert_eq!(err, ChainError::Busy(6));
    assert!(!err.may_have_written());
    assert_eq!(s.count("getTransaction"), 0);
    assert!(err.to_string().contains("nothing was written"), "{err}");
}

#[test]
fn duplicate_is_followed_to_success() {
    let s = healthy();
    s.queue(
        "sendTransaction",
        vec![Act::Result(json!({"status": "DUPLICATE", "hash": "ab", "latestLedger": 10, "latestLedgerCloseTime": "1"}))],
    );
    s.always("getTransaction", success());
    assert_eq!(invoke(&s).unwrap().ledger, 11);
    assert_eq!(s.count("sendTransaction"), 1);
}

#[test]
fn error_with_result_xdr_is_rejected_with_its_code() {
    let s = healthy();
    s.always(
        "sendTransaction",
        Act::Result(json!({"status": "ERROR", "hash": "ab", "errorResultXdr": tx_result(TransactionResultResult::TxInsufficientFee), "latestLedger": 10, "latestLedgerCloseTime": "1"})),
    );
    let err = invoke(&s).unwrap_err();
    match &err {
        ChainError::Rejected { hash, code } => {
            assert_eq!(code, "txINSUFFICIENT_FEE");
            assert_eq!(hash.len(), 64);
        }
        other => panic!("expected a rejection, got {other}"),
    }
    assert!(!err.may_have_written());
    assert_eq!(s.count("getTransaction"), 0);
}

#[test]
fn bad_sequence_is_rebuilt_at_most_twice() {
    let s = healthy();
    s.always(
        "sendTransaction",
        Act::Result(json!({"status": "ERROR", "hash": "ab", "errorResultXdr": tx_result(TransactionResultResult::TxBadSeq), "latestLedger": 10, "latestLedgerCloseTime": "1"})),
    );
    let err = invoke(&s).unwrap_err();
    assert!(
        matches!(&err, ChainError::Rejected { code, .. } if code == "txBAD_SEQ"),
        "{err}"
    );
    assert_eq!(s.count("sendTransaction"), 3, "first try plus two rebuilds");
    assert_eq!(
        s.count("getLedgerEntries"),
        3,
        "each rebuild re-reads the sequence"
    );
}

#[test]
fn failed_on_chain_names_hash_ledger_and_operation_code() {
    let s = healthy();
    s.always("sendTransaction", pending());
    let failed = TransactionResultResult::TxFailed(
        vec![stellar_xdr::OperationResult::OpInner(
            stellar_xdr::OperationResultTr::InvokeHostFunction(
                stellar_xdr::InvokeHostFunctionResult::ResourceLimitExceeded,
            ),
        )]
        .try_into()
        .unwrap(),
    );
    s.always(
        "getTransaction",
        Act::Result(json!({"status": "FAILED", "ledger": 12, "resultXdr": tx_result(failed), "latestLedger": 12, "latestLedgerCloseTime": "2"})),
    );
    let err = invoke(&s).unwrap_err();
    match &err {
        ChainError::Failed { ledger, code, .. } => {
            assert_eq!(*ledger, 12);
            assert_eq!(
                code,
                "txFAILED [INVOKE_HOST_FUNCTION_RESOURCE_LIMIT_EXCEEDED]"
            );
        }
        other => panic!("expected an on-chain failure, got {other}"),
    }
    assert!(!err.may_have_written());
    // A call that ran out of its simulated resources wrote nothing: it is simulated again (on the
    // network, on the sequence number the failure consumed) and sent once more, never more than once.
    assert_eq!(
        s.sent().len(),
        2,
        "one retry after the resource-limit failure"
    );
    assert_eq!(s.count("simulateTransaction"), 2);
}

#[test]
fn connection_refused_is_not_delivered_and_nothing_submitted() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let rpc = RpcClient::new(&url).unwrap();
    let err = rpc.get_network().unwrap_err();
    assert!(
        matches!(&err, RpcError::Transport { detail, .. } if detail.starts_with("connect")),
        "{err}"
    );
    assert!(!err.maybe_delivered());
    let net = spec(&url);
    let me = signer();
    let err = Invoker {
        rpc: &rpc,
        network: &net,
        signer: &me,
        options: fast(),
    }
    .invoke(&call())
    .unwrap_err();
    assert!(matches!(err, ChainError::Rpc(_)), "{err}");
    assert!(err.to_string().contains("nothing was submitted"), "{err}");
}

#[test]
fn lost_send_answer_is_repolled_and_the_same_envelope_resent() {
    let s = healthy();
    s.queue("sendTransaction", vec![Act::Drop]);
    s.always(
        "sendTransaction",
        Act::Result(json!({"status": "DUPLICATE", "hash": "ab", "latestLedger": 10, "latestLedgerCloseTime": "1"})),
    );
    s.queue("getTransaction", vec![not_found()]);
    s.always("getTransaction", success());
    let ok = invoke(&s).unwrap();
    assert_eq!(ok.ledger, 11);
    let sent = s.sent();
    assert_eq!(
        sent.len(),
        2,
        "the lost send, then one re-send while NOT_FOUND"
    );
    assert_eq!(sent[0], sent[1], "never a second envelope: no double write");
}

#[test]
fn lost_send_answer_with_no_final_status_is_unknown_never_success() {
    let s = healthy();
    s.queue("sendTransaction", vec![Act::Drop]);
    s.always("sendTransaction", Act::Drop);
    s.always("getTransaction", Act::Drop);
    let rpc = RpcClient::new(&s.url).unwrap();
    let net = spec(&s.url);
    let me = signer();
    let mut options = fast();
    options.validity_secs = 1;
    let err = Invoker {
        rpc: &rpc,
        network: &net,
        signer: &me,
        options,
    }
    .invoke(&call())
    .unwrap_err();
    assert!(err.may_have_written(), "{err}");
    assert!(
        matches!(&err, ChainError::Unknown { hash, .. } if hash.len() == 64),
        "{err}"
    );
    assert!(err.to_string().contains("check it"), "{err}");
    assert_eq!(
        s.sent()
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len(),
        1,
        "every re-send is the same envelope"
    );
}

#[test]
fn expired_time_bound_is_reported_as_expired() {
    let s = healthy();
    s.always("sendTransaction", pending());
    s.always(
        "getTransaction",
        Act::Result(json!({"status": "NOT_FOUND", "latestLedger": 10, "latestLedgerCloseTime": "99999999999"})),
    );
    let err = invoke(&s).unwrap_err();
    assert!(matches!(err, ChainError::Expired { .. }), "{err}");
    assert!(!err.may_have_written());
}

#[test]
fn malformed_json_is_a_protocol_error_and_a_maybe_delivered_send() {
    let s = healthy();
    s.always("getNetwork", Act::Raw("{not json"));
    let rpc = RpcClient::new(&s.url).unwrap();
    let err = rpc.get_network().unwrap_err();
    assert!(matches!(err, RpcError::Protocol { .. }), "{err}");
    assert!(err.maybe_delivered());

    // The send's answer is garbage: the envelope may be in the queue, so the hash is followed.
    s.queue(
        "sendTransaction",
        vec![Act::Raw("<html>bad gateway</html>")],
    );
    s.always("sendTransaction", pending());
    s.always("getTransaction", success());
    assert_eq!(invoke(&s).unwrap().ledger, 11);
    assert_eq!(
        s.sent().len(),
        1,
        "found on the first poll: no re-send needed"
    );
    assert_eq!(s.count("getTransaction"), 1);
}

#[test]
fn typed_answer_missing_a_field_names_the_method() {
    let s = Server::start();
    // stellar-rpc always sends protocolVersion; a server that does not is not speaking its shape.
    s.always("getNetwork", Act::Result(json!({"passphrase": "x"})));
    let err = RpcClient::new(&s.url).unwrap().get_network().unwrap_err();
    assert!(
        matches!(&err, RpcError::Protocol { method, detail, .. } if method == "getNetwork" && detail.contains("protocolVersion")),
        "{err}"
    );
}

#[test]
fn json_rpc_error_is_a_server_refusal() {
    let s = Server::start();
    s.always("getLatestLedger", Act::Error(-32603, "database locked"));
    let err = RpcClient::new(&s.url)
        .unwrap()
        .get_latest_ledger()
        .unwrap_err();
    assert_eq!(
        err,
        RpcError::Server {
            method: "getLatestLedger".into(),
            code: -32603,
            message: "database locked".into()
        }
    );
    assert!(!err.maybe_delivered());
}

#[test]
fn a_server_that_never_answers_times_out() {
    let s = Server::start();
    s.always("getLatestLedger", Act::Hang);
    let rpc = RpcClient::new(&s.url)
        .unwrap()
        .with_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let err = rpc.get_latest_ledger().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(&err, RpcError::Transport { detail, .. } if detail.contains("no answer to getLatestLedger")),
        "{err}"
    );
    assert!(
        err.maybe_delivered(),
        "a request that timed out may have acted"
    );
}

#[test]
fn restore_preamble_restores_first_then_invokes() {
    let s = healthy();
    let mut first = simulation(vec![]);
    first["restorePreamble"] =
        json!({"transactionData": b64(&transaction_data(0)), "minResourceFee": "2000"});
    s.queue("simulateTransaction", vec![Act::Result(first)]);
    s.always("sendTransaction", pending());
    s.always("getTransaction", success());
    invoke(&s).unwrap();
    let sent = s.sent();
    assert_eq!(sent.len(), 2);
    let ops: Vec<_> = sent
        .iter()
        .map(|e| {
            let TransactionEnvelope::Tx(v1) = e else {
                panic!("v1")
            };
            (v1.tx.operations[0].body.clone(), v1.tx.fee)
        })
        .collect();
    assert!(
        matches!(ops[0], (OperationBody::RestoreFootprint(_), 2400)),
        "restore first, priced with the margin: {:?}",
        ops[0].1
    );
    assert!(matches!(ops[1].0, OperationBody::InvokeHostFunction(_)));
}

#[test]
fn foreign_auth_is_refused_before_sending() {
    let entry = SorobanAuthorizationEntry {
        credentials: SorobanCredentials::Address(SorobanAddressCredentials {
            address: Signer::from_seed([8; 32]).sc_address(),
            nonce: 1,
            signature_expiration_ledger: 100,
            signature: ScVal::Void,
        }),
        root_invocation: SorobanAuthorizedInvocation {
            function: SorobanAuthorizedFunction::ContractFn(InvokeContractArgs {
                contract_address: ScAddress::Contract(ContractId(Hash([9; 32]))),
                function_name: ScSymbol("set".try_into().unwrap()),
                args: Default::default(),
            }),
            sub_invocations: Default::default(),
        },
    };
    assert_eq!(
        foreign_auth(std::slice::from_ref(&entry)),
        Some(Signer::from_seed([8; 32]).address())
    );
    let s = Server::start();
    s.always("getLedgerEntries", Act::Result(account_entry()));
    s.always(
        "simulateTransaction",
        Act::Result(simulation(vec![b64(&entry)])),
    );
    let err = invoke(&s).unwrap_err();
    assert_eq!(
        err,
        ChainError::ForeignAuth {
            address: Signer::from_seed([8; 32]).address(),
            auth: vec![entry.clone()],
        }
    );
    assert_eq!(err.refused_authorization(), Some(&[entry][..]));
    assert_eq!(s.count("sendTransaction"), 0);
}

#[test]
fn missing_account_says_fund_it() {
    let s = Server::start();
    s.always(
        "getLedgerEntries",
        Act::Result(json!({"entries": [], "latestLedger": 10})),
    );
    let err = invoke(&s).unwrap_err();
    assert_eq!(err, ChainError::NoAccount(signer().address()));
    assert!(err.to_string().contains("fund it"), "{err}");
}

#[test]
fn credentials_in_the_url_are_never_shown() {
    let rpc = RpcClient::new("https://user:pw@rpc.example/x?apikey=k").unwrap();
    assert!(
        !rpc.url().contains("pw") && !rpc.url().contains("apikey"),
        "{}",
        rpc.url()
    );
    assert!(RpcClient::new("ftp://rpc.example").is_err());
}

/// A source-account authorization entry for `function` with these sub-invocations.
fn source_auth(
    function: SorobanAuthorizedFunction,
    sub_invocations: Vec<SorobanAuthorizedInvocation>,
) -> SorobanAuthorizationEntry {
    SorobanAuthorizationEntry {
        credentials: SorobanCredentials::SourceAccount,
        root_invocation: SorobanAuthorizedInvocation {
            function,
            sub_invocations: sub_invocations.try_into().unwrap(),
        },
    }
}

fn the_call() -> SorobanAuthorizedFunction {
    let HostFunction::InvokeContract(args) = call() else {
        unreachable!()
    };
    SorobanAuthorizedFunction::ContractFn(args)
}

/// A native-XLM `transfer` from the signer to a third party, as a hostile token would nest it.
fn payment_to_a_third_party() -> SorobanAuthorizedInvocation {
    SorobanAuthorizedInvocation {
        function: SorobanAuthorizedFunction::ContractFn(InvokeContractArgs {
            contract_address: ScAddress::Contract(ContractId(Hash([1; 32]))),
            function_name: ScSymbol("transfer".try_into().unwrap()),
            args: vec![
                ScVal::Address(signer().sc_address()),
                ScVal::Address(Signer::from_seed([3; 32]).sc_address()),
            ]
            .try_into()
            .unwrap(),
        }),
        sub_invocations: Default::default(),
    }
}

fn refused_auth(entry: &SorobanAuthorizationEntry) -> (ChainError, usize) {
    let s = Server::start();
    s.always("getLedgerEntries", Act::Result(account_entry()));
    s.always(
        "simulateTransaction",
        Act::Result(simulation(vec![b64(entry)])),
    );
    s.always("sendTransaction", pending());
    s.always("getTransaction", success());
    let err = invoke(&s).unwrap_err();
    for p in s.params("simulateTransaction") {
        let sim = p["transaction"].as_str().unwrap();
        let TransactionEnvelope::Tx(v1) =
            TransactionEnvelope::from_xdr_base64(sim, Limits::none()).unwrap()
        else {
            panic!("v1")
        };
        assert!(v1.signatures.is_empty(), "a simulation is never signed");
    }
    (err, s.count("sendTransaction"))
}

#[test]
fn issue14_auth_with_a_sub_invocation_is_never_signed() {
    let entry = source_auth(the_call(), vec![payment_to_a_third_party()]);
    let (err, sent) = refused_auth(&entry);
    assert_eq!(sent, 0, "nothing may be submitted");
    let ChainError::UnexpectedAuth {
        signer: who,
        asked,
        auth,
        ..
    } = &err
    else {
        panic!("expected UnexpectedAuth, got {err:?}");
    };
    assert_eq!(who, &signer().address());
    assert_eq!(
        auth,
        &vec![entry.clone()],
        "the refused tree is kept for the report"
    );
    assert_eq!(err.refused_authorization(), Some(&[entry][..]));
    assert!(
        asked.contains("1 sub-invocation") && asked.contains(".transfer("),
        "{asked}"
    );
    assert!(
        err.to_string().contains("nothing was signed or submitted"),
        "{err}"
    );
}

#[test]
fn issue14_auth_for_another_call_is_never_signed() {
    let other = SorobanAuthorizedFunction::ContractFn(InvokeContractArgs {
        contract_address: ScAddress::Contract(ContractId(Hash([9; 32]))),
        function_name: ScSymbol("set".try_into().unwrap()),
        args: vec![ScVal::U32(1)].try_into().unwrap(),
    });
    let (err, sent) = refused_auth(&source_auth(other, vec![]));
    assert_eq!(sent, 0);
    assert!(
        matches!(&err, ChainError::UnexpectedAuth { asked, .. } if asked.contains(".set(1 args)")),
        "{err:?}"
    );
}

#[test]
fn issue14_auth_for_exactly_the_call_is_signed_and_sent() {
    let s = healthy();
    let entry = source_auth(the_call(), vec![]);
    s.always(
        "simulateTransaction",
        Act::Result(simulation(vec![b64(&entry)])),
    );
    s.always("sendTransaction", pending());
    s.always("getTransaction", success());
    invoke(&s).unwrap();
    let sent = s.sent();
    let TransactionEnvelope::Tx(v1) = &sent[0] else {
        panic!("v1")
    };
    let OperationBody::InvokeHostFunction(op) = &v1.tx.operations[0].body else {
        panic!("invoke")
    };
    assert_eq!(op.auth.to_vec(), vec![entry]);
}

#[test]
fn issue14_a_nested_call_is_signed_only_when_the_caller_names_it() {
    let entry = source_auth(the_call(), vec![payment_to_a_third_party()]);
    let s = healthy();
    s.always(
        "simulateTransaction",
        Act::Result(simulation(vec![b64(&entry)])),
    );
    s.always("sendTransaction", pending());
    s.always("getTransaction", success());
    let rpc = RpcClient::new(&s.url).unwrap();
    let net = spec(&s.url);
    let me = signer();
    let invoker = |nested: Vec<SorobanAuthorizedInvocation>| Invoker {
        rpc: &rpc,
        network: &net,
        signer: &me,
        options: InvokeOptions {
            authorized_sub_invocations: nested,
            ..fast()
        },
    };
    // Naming a different nested call does not open the door to this one.
    let other = SorobanAuthorizedInvocation {
        function: the_call(),
        sub_invocations: Default::default(),
    };
    let err = invoker(vec![other]).invoke(&call()).unwrap_err();
    assert!(matches!(err, ChainError::UnexpectedAuth { .. }), "{err:?}");
    assert_eq!(s.count("sendTransaction"), 0);
    invoker(vec![payment_to_a_third_party()])
        .invoke(&call())
        .unwrap();
    assert_eq!(s.count("sendTransaction"), 1);
}

#[test]
fn item7_a_fee_above_the_cap_is_never_signed_and_item5_hostile_numbers_do_not_panic() {
    let s = Server::start();
    s.always("getLedgerEntries", Act::Result(account_entry()));
    let mut expensive = simulation(vec![]);
    expensive["minResourceFee"] = json!("200000000");
    s.always("simulateTransaction", Act::Result(expensive));
    s.always("sendTransaction", pending());
    let err = invoke(&s).unwrap_err();
    assert_eq!(
        err,
        ChainError::FeeOverCap {
            fee: 200_000_000 + 30_000_000 + 100,
            cap: assay_chain::submit::DEFAULT_MAX_FEE_STROOPS
        }
    );
    assert_eq!(s.count("sendTransaction"), 0);

    // A hostile sequence number is an error, not an arithmetic panic.
    let s = Server::start();
    s.always("getLedgerEntries", Act::Result(account_entry_at(i64::MAX)));
    let err = invoke(&s).unwrap_err();
    assert!(matches!(err, ChainError::Simulation(_)), "{err:?}");

    // A hostile fee is an error, not an arithmetic panic.
    let s = Server::start();
    s.always("getLedgerEntries", Act::Result(account_entry()));
    let mut hostile = simulation(vec![]);
    hostile["minResourceFee"] = json!(i64::MAX.to_string());
    s.always("simulateTransaction", Act::Result(hostile));
    let err = invoke(&s).unwrap_err();
    assert!(matches!(err, ChainError::Simulation(_)), "{err:?}");
    assert_eq!(s.count("sendTransaction"), 0);
}

#[test]
fn item3_a_refused_rpc_url_never_shows_its_credentials() {
    for url in [
        "ftp://user:pw1@rpc.example/x?apikey=k1",
        "https://user:pw1@[::1/x?apikey=k1",
        "https://user:pw1@/x?apikey=k1",
    ] {
        let Err(err) = RpcClient::new(url) else {
            panic!("{url} accepted");
        };
        let shown = err.to_string();
        assert!(!shown.contains("pw1") && !shown.contains("k1"), "{shown}");
    }
}
