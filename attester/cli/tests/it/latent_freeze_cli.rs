//! Issue #26, acceptance: the freeze every mutable issuer holds, on the local network with the real
//! `assay scan`. An issuer with flags 0 and no `AUTH_IMMUTABLE` freezes a holder in one transaction
//! (`SetOptions` set `AUTH_REVOCABLE`, `SetTrustLineFlags` clear `AUTHORIZED`, `SetOptions` clear
//! `AUTH_REVOCABLE`), its flags reading 0 before and after; `assay scan` reports the power (bit 1, medium)
//! before it is used. An immutable issuer stays clear; a locked issuer (master weight 0, no signer) stays
//! clear with "locked" shown.

use crate::world;

use std::process::Command;
use std::time::Duration;

use assay_localnet::txbuild;
use assay_scan::testsupport::Reply;
use serde_json::Value;
use stellar_xdr::{
    AccountId, LedgerEntryData, LedgerKey, LedgerKeyAccount, Operation, OperationBody, PaymentOp,
    SetOptionsOp, SetTrustLineFlagsOp, TransactionResult, TransactionResultResult,
};
use world::*;

/// The local network's trustline flag `AUTHORIZED`.
const AUTHORIZED: u32 = 1;
const AUTH_REVOCABLE: u32 = 2;
const AUTH_IMMUTABLE: u32 = 4;

pub(crate) fn seed(n: u8) -> [u8; 32] {
    [n; 32]
}

pub(crate) fn g(secret: &[u8; 32]) -> String {
    assay_localnet::strkey_account(assay_chain::Signer::from_seed(*secret).public_key())
}

/// The account's next sequence number.
fn next_seq(w: &World, account: &AccountId) -> i64 {
    let key = LedgerKey::Account(LedgerKeyAccount {
        account_id: account.clone(),
    });
    match w.net.ledger_entry(&key).expect("account exists").0.data {
        LedgerEntryData::Account(a) => a.seq_num.0 + 1,
        other => panic!("not an account: {other:?}"),
    }
}

/// Signs `ops` as `secret`'s account and applies them; returns whether the transaction succeeded, and its
/// result.
fn send(w: &World, secret: &[u8; 32], ops: Vec<OperationBody>) -> (bool, TransactionResult) {
    use stellar_xdr::{Limits, ReadXdr};
    let source = txbuild::public_account(secret);
    let ops = ops
        .into_iter()
        .map(|body| Operation {
            source_account: None,
            body,
        })
        .collect();
    let tx = txbuild::transaction(&source, next_seq(w, &source), 1_000, ops, None);
    let env = txbuild::sign(tx, w.net.network_id(), secret);
    let (ok, result) = w
        .net
        .submit_and_wait(env, Duration::from_secs(20))
        .expect("applied");
    let result = TransactionResult::from_xdr_base64(&result, Limits::none()).expect("result XDR");
    (ok, result)
}

fn set_options(set: Option<u32>, clear: Option<u32>, master_weight: Option<u32>) -> OperationBody {
    OperationBody::SetOptions(SetOptionsOp {
        inflation_dest: None,
        clear_flags: clear,
        set_flags: set,
        master_weight,
        low_threshold: None,
        med_threshold: None,
        high_threshold: None,
        home_domain: None,
        signer: None,
    })
}

/// Serves clean off-chain answers for `issuer` at `domain`: not in the directory, not blocklisted, its
/// stellar.toml claiming `code`.
pub(crate) fn serve_clean(w: &World, code: &str, issuer: &str, domain: &str) {
    w.route(
        EXPERT,
        &format!("/explorer/directory/{issuer}"),
        Reply::status(404),
    );
    w.route(
        EXPERT,
        &format!("/explorer/directory/blocked-domains/{domain}"),
        Reply::json(serde_json::json!({"domain": domain, "blocked": false}).to_string()),
    );
    w.route(
        domain,
        "/.well-known/stellar.toml",
        Reply::text(format!(
            "[[CURRENCIES]]\ncode=\"{code}\"\nissuer=\"{issuer}\"\n"
        )),
    );
}

/// `assay scan ASSET --output json` against the world; the one report.
fn scan(w: &World, ca: &std::path::Path, asset: &ClassicAsset) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args([
            "scan",
            &format!("{}-{}", asset.code, asset.issuer),
            "--no-history",
            "--output",
            "json",
        ])
        .args(w.source_args(ca))
        .env("STELLAR_NETWORK", "local")
        .env_remove("STELLAR_NETWORK_PASSPHRASE")
        .env("HOME", w.dir.path())
        .env("XDG_DATA_HOME", w.dir.path().join("data"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().next().expect("one report")).expect("JSON report")
}

pub(crate) fn mechanics(report: &Value) -> Vec<String> {
    report["mechanics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_one_transaction_freeze_is_reported_before_it_is_used() {
    let domains = ["mutable.example", "immutable.example", "locked.example"];
    let w = World::start(&domains);
    let ca = w.ca();
    let (mutable_key, immutable_key, locked_key) = (seed(61), seed(62), seed(63));
    let mutable = w.issue("MUT", &g(&mutable_key), 0, Some("mutable.example"));
    let immutable = w.issue(
        "IMM",
        &g(&immutable_key),
        AUTH_IMMUTABLE,
        Some("immutable.example"),
    );
    let locked = w.issue("LCK", &g(&locked_key), 0, Some("locked.example"));
    serve_clean(&w, "MUT", &mutable.issuer, "mutable.example");
    serve_clean(&w, "IMM", &immutable.issuer, "immutable.example");
    serve_clean(&w, "LCK", &locked.issuer, "locked.example");
    // The locked issuer gives up its master key (weight 0) and has no other signer: it can never sign again.
    let (ok, result) = send(&w, &locked_key, vec![set_options(None, None, Some(0))]);
    assert!(ok, "{result:?}");

    // Before any freeze: the mutable issuer already holds the freeze (bit 1, medium), its flags reading 0.
    let before = scan(&w, &ca, &mutable);
    assert_eq!(before["severity"], "medium", "{before:#}");
    assert_eq!(before["base_severity"], "medium");
    assert_eq!(mechanics(&before), ["auth_revocable"]);
    assert_eq!(before["who_can_act"], "1 key");
    let capability = before["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "capability")
        .unwrap();
    assert!(
        capability["reasoning"]
            .as_str()
            .unwrap()
            .contains("can freeze any holder at any time: its flags are not locked"),
        "{capability:#}"
    );
    assert!(before["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["claim"]
            .as_str()
            .unwrap()
            .contains("auth_revocable=false")));

    // The immutable issuer's asset stays clear; the locked issuer's too, with "locked" shown.
    let imm = scan(&w, &ca, &immutable);
    assert_eq!(imm["severity"], "clear", "{imm:#}");
    assert_eq!(mechanics(&imm), ["auth_immutable"]);
    let lck = scan(&w, &ca, &locked);
    assert_eq!(lck["severity"], "clear", "{lck:#}");
    assert!(mechanics(&lck).is_empty(), "{lck:#}");
    assert_eq!(
        lck["who_can_act"],
        "locked: no signer can reach the threshold"
    );

    // A holder of MUT with an authorized trustline pays another holder: accepted.
    let (payer, payee) = (seed(71), seed(72));
    for holder in [&payer, &payee] {
        let account = txbuild::public_account(holder);
        w.net.fund(&account).unwrap();
        w.net
            .admin_set_trustline(&account, &mutable.xdr(), 1_000_000, i64::MAX, AUTHORIZED)
            .unwrap();
    }
    let pay = || {
        OperationBody::Payment(PaymentOp {
            destination: stellar_xdr::MuxedAccount::Ed25519(stellar_xdr::Uint256(
                assay_chain::Signer::from_seed(payee).public_key(),
            )),
            asset: mutable.xdr(),
            amount: 10,
        })
    };
    let (ok, result) = send(&w, &payer, vec![pay()]);
    assert!(ok, "{result:?}");

    // The one-transaction freeze, signed by the issuer's one key.
    let (ok, result) = send(
        &w,
        &mutable_key,
        vec![
            set_options(Some(AUTH_REVOCABLE), None, None),
            OperationBody::SetTrustLineFlags(SetTrustLineFlagsOp {
                trustor: txbuild::public_account(&payer),
                asset: mutable.xdr(),
                clear_flags: AUTHORIZED,
                set_flags: 0,
            }),
            set_options(None, Some(AUTH_REVOCABLE), None),
        ],
    );
    assert!(ok, "the freeze applies: {result:?}");

    // The holder's payment is now refused (src_not_authorized)…
    let (ok, result) = send(&w, &payer, vec![pay()]);
    assert!(!ok);
    let refused = format!("{:?}", result.result);
    assert!(
        matches!(result.result, TransactionResultResult::TxFailed(_))
            && refused.contains("SrcNotAuthorized"),
        "{refused}"
    );
    // …while the flags read 0 again, and the scan says what it said before: the power, not its use.
    let after = scan(&w, &ca, &mutable);
    assert_eq!(after["severity"], "medium", "{after:#}");
    assert_eq!(mechanics(&after), ["auth_revocable"]);
}
