//! Fork mode on a permissioned token: OpenZeppelin's allowlist token refuses to move its holder's
//! balance to the fork's fresh account, so the suite acts as that holder's own address inside the
//! fork, and rows that need the unallowed spender are UNVERIFIABLE, never FAIL.
use std::time::Duration;

use assay_chain::{strkey_of, InvokeOutcome, NetworkClient, Signer};
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_sep41::{
    fork::{run_fork, ForkOptions},
    Status,
};
use stellar_xdr::{CreateAccountOp, Int128Parts, OperationBody, ScAddress, ScString, ScVal};

use crate::offline::wasm;

#[test]
fn an_allowlist_holder_the_token_will_not_move_is_acted_for_in_the_fork() {
    // Built first: a client connection left idle through a build would be closed by the server.
    let token_wasm = wasm("tp_oz_allowlist");
    let upstream = LocalNet::start(LocalNetConfig::default()).expect("the upstream starts");
    let mut network = NetworkClient::new(&upstream.rpc_url(), upstream.passphrase());
    network.poll_interval = Duration::from_millis(50);
    let root_key = Signer::from_bytes(upstream.root_secret());
    let (admin, holder) = (Signer::generate(), Signer::generate());
    let create = |who: &Signer| {
        OperationBody::CreateAccount(CreateAccountOp {
            destination: who.account_id(),
            starting_balance: 100_000_000_000,
        })
    };
    network
        .submit_classic(&root_key, vec![create(&admin), create(&holder)])
        .expect("accounts");
    let hash = network.upload_wasm(&admin, &token_wasm).expect("upload");
    let text = |s: &str| ScVal::String(ScString(s.try_into().expect("short")));
    // (name, symbol, admin, manager, initial_supply): the holder is allowed and credited.
    let args = vec![
        text("Allow"),
        text("ALW"),
        ScVal::Address(holder.sc_address()),
        ScVal::Address(admin.sc_address()),
        ScVal::I128(stellar_xdr::Int128Parts { hi: 0, lo: 1_000 }),
    ];
    let contract = network
        .create_contract(&admin, hash, [9; 32], args)
        .expect("deploy");

    let options = ForkOptions {
        rpc_url: Some(upstream.rpc_url()),
        passphrase: upstream.passphrase().to_string(),
        ledger: None,
        cache: None,
        holder: Some(strkey_of(&holder.sc_address())),
        ledger_close_ms: 100,
        before_suite: None,
    };
    let run = run_fork(&contract, &options).expect("fork run");
    eprintln!("{}", assay_sep41::render::text(&run.report));
    let fork = run.report.fork.as_ref().expect("fork facts");
    assert_eq!(fork.premise, "holder-address", "{}", fork.detail);
    assert!(
        fork.detail.contains(&strkey_of(&holder.sc_address())),
        "{}",
        fork.detail
    );

    let status = |id: &str| {
        let row = run.report.results.iter().find(|r| r.id == id).expect(id);
        (row.status, row.actual.clone())
    };
    // The holder's own writes run as its address inside the fork.
    assert_eq!(
        status("sep41-burn").0,
        Status::Pass,
        "{}",
        status("sep41-burn").1
    );
    assert_eq!(status("sep41-transfer-self").0, Status::Pass);
    // The fork's spender was never allowed: a missing premise, not a finding.
    let (transfer, why) = status("sep41-transfer");
    assert_eq!(transfer, Status::Unverifiable, "{why}");
    assert!(why.contains("does not accept the spender"), "{why}");
    let failed: Vec<String> = (run.report.results.iter())
        .filter(|r| r.status == Status::Fail)
        .map(|r| format!("{}: {}", r.id, r.actual))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// OpenZeppelin's SEP-57 (RWA) token with its compliance contract and identity verifier: only
/// verified accounts hold or receive it, and its `burn` is the operator's `burn(user, amount,
/// operator)`, not SEP-41's. Acted for as its verified holder, the suite FAILs nothing: the unverified
/// spender is a missing premise, and a `burn` of another signature is NOT_IMPLEMENTED, not called.
#[test]
fn the_rwa_token_is_judged_as_its_verified_holder_and_fails_nothing() {
    let (token_wasm, compliance_wasm, verifier_wasm) = (
        wasm("tp_oz_rwa_token"),
        wasm("tp_oz_rwa_compliance"),
        wasm("tp_oz_rwa_verifier"),
    );
    let upstream = LocalNet::start(LocalNetConfig::default()).expect("the upstream starts");
    let mut network = NetworkClient::new(&upstream.rpc_url(), upstream.passphrase());
    network.poll_interval = Duration::from_millis(50);
    let root_key = Signer::from_bytes(upstream.root_secret());
    let (admin, holder) = (Signer::generate(), Signer::generate());
    let create = |who: &Signer| {
        OperationBody::CreateAccount(CreateAccountOp {
            destination: who.account_id(),
            starting_balance: 100_000_000_000,
        })
    };
    network
        .submit_classic(&root_key, vec![create(&admin), create(&holder)])
        .expect("accounts");
    let address = |who: &Signer| ScVal::Address(who.sc_address());
    let deploy = |code: &[u8], salt: u8, args: Vec<ScVal>| -> ScAddress {
        let hash = network.upload_wasm(&admin, code).expect("upload");
        network
            .create_contract(&admin, hash, [salt; 32], args)
            .expect("deploy")
    };
    let invoke = |contract: &ScAddress, function: &str, args: Vec<ScVal>| {
        let outcome = network.invoke(&admin, contract, function, args);
        assert!(
            matches!(outcome, Ok(InvokeOutcome::Landed { .. })),
            "{function}: {outcome:?}"
        );
    };
    let compliance = deploy(&compliance_wasm, 1, vec![address(&admin), address(&admin)]);
    let verifier = deploy(&verifier_wasm, 2, vec![address(&admin), address(&admin)]);
    let text = |s: &str| ScVal::String(ScString(s.try_into().expect("short")));
    let token = deploy(
        &token_wasm,
        3,
        vec![
            text("Real"),
            text("RWA"),
            address(&admin),
            address(&admin),
            ScVal::Address(compliance.clone()),
            ScVal::Address(verifier.clone()),
        ],
    );
    invoke(
        &compliance,
        "bind_token",
        vec![ScVal::Address(token.clone()), address(&admin)],
    );
    invoke(
        &verifier,
        "set_verified",
        vec![address(&holder), ScVal::Bool(true), address(&admin)],
    );
    let units = ScVal::I128(Int128Parts { hi: 0, lo: 1_000 });
    invoke(
        &token,
        "mint",
        vec![address(&holder), units, address(&admin)],
    );

    let options = ForkOptions {
        rpc_url: Some(upstream.rpc_url()),
        passphrase: upstream.passphrase().to_string(),
        ledger: None,
        cache: None,
        holder: Some(strkey_of(&holder.sc_address())),
        ledger_close_ms: 100,
        before_suite: None,
    };
    let run = run_fork(&token, &options).expect("fork run");
    eprintln!("{}", assay_sep41::render::text(&run.report));
    let fork = run.report.fork.as_ref().expect("fork facts");
    assert_eq!(fork.premise, "holder-address", "{}", fork.detail);
    let row = |id: &str| run.report.results.iter().find(|r| r.id == id).expect(id);
    assert_eq!(
        row("sep41-burn").status,
        Status::NotImplemented,
        "{}",
        row("sep41-burn").actual
    );
    assert_eq!(row("sep41-transfer").status, Status::Unverifiable);
    assert_eq!(row("sep41-transfer-self").status, Status::Pass);
    let failed: Vec<String> = (run.report.results.iter())
        .filter(|r| r.status == Status::Fail)
        .map(|r| format!("{}: {}", r.id, r.actual))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}
