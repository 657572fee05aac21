//! Friendbot: funds an account from the root account with a real transaction.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use soroban_env_host::xdr::{
    self, AccountId, Asset, CreateAccountOp, LedgerEntryData, Operation, OperationBody, PaymentOp,
    TransactionResultResult,
};

use crate::error::LocalNetError;
use crate::genesis::{root_public_key, root_secret, BASE_FEE};
use crate::node::{wait_tx, Shared};
use crate::{classic, http, ledger, txbuild, xdrutil};

/// What friendbot gives a new account: 10,000 XLM.
pub const FRIENDBOT_STARTING_BALANCE: i64 = 10_000 * 10_000_000;

/// Creates (or tops up) an account from the root account with a real transaction.
pub(crate) fn fund(
    shared: &Shared,
    account: &AccountId,
) -> Result<([u8; 32], ledger::TxRecord), LocalNetError> {
    crate::fork::fault_in(shared, vec![classic::account_key(account)])?;
    let (env, hash) = {
        let mut l = shared.lock();
        let root = xdrutil::account_id(root_public_key(&l.passphrase));
        let root_key = classic::account_key(&root);
        let Some(LedgerEntryData::Account(root_acc)) =
            l.entries.get(&root_key).map(|s| s.entry.data.clone())
        else {
            return Err(LocalNetError::Friendbot(
                "the root account is missing".into(),
            ));
        };
        let existing = match l
            .entries
            .get(&classic::account_key(account))
            .map(|s| &s.entry.data)
        {
            Some(LedgerEntryData::Account(a)) => Some(a.balance),
            _ => None,
        };
        let body = match existing {
            Some(b) if b >= FRIENDBOT_STARTING_BALANCE => {
                return Err(LocalNetError::Friendbot(
                    "account already funded to starting balance".into(),
                ))
            }
            Some(b) => OperationBody::Payment(PaymentOp {
                destination: xdr::MuxedAccount::Ed25519(xdr::Uint256(xdrutil::account_key(
                    account,
                ))),
                asset: Asset::Native,
                amount: FRIENDBOT_STARTING_BALANCE - b,
            }),
            None => OperationBody::CreateAccount(CreateAccountOp {
                destination: account.clone(),
                starting_balance: FRIENDBOT_STARTING_BALANCE,
            }),
        };
        let queued = l.queue.iter().filter(|p| p.source == root).count() as i64;
        let tx = txbuild::transaction(
            &root,
            root_acc.seq_num.0 + 1 + queued,
            BASE_FEE,
            vec![Operation {
                source_account: None,
                body,
            }],
            None,
        );
        let env = txbuild::sign(tx, l.network_id, &root_secret(&l.passphrase));
        let (hash, outcome) = l.submit(env.clone());
        match outcome {
            ledger::Submission::Pending | ledger::Submission::Duplicate => {}
            ledger::Submission::Error(r, _) => {
                return Err(LocalNetError::Friendbot(format!(
                    "friendbot transaction refused: {}",
                    xdrutil::to_b64(&r)
                )))
            }
        }
        (env, hash)
    };
    let _ = env;
    let rec = wait_tx(shared, &hash, Duration::from_secs(30)).ok_or_else(|| {
        LocalNetError::Friendbot("friendbot transaction was not applied in time".into())
    })?;
    if !matches!(rec.result.result, TransactionResultResult::TxSuccess(_)) {
        return Err(LocalNetError::Friendbot(format!(
            "friendbot transaction failed: {}",
            rec.result_xdr
        )));
    }
    Ok((hash, rec))
}

/// `GET|POST /friendbot?addr=G…`.
pub(crate) fn route(shared: &Arc<Shared>, req: &http::Request) -> http::Response {
    let problem = |detail: String| {
        http::Response::problem(
            400,
            &json!({
                "type": "https://stellar.org/horizon-errors/bad_request",
                "title": "Bad Request",
                "status": 400,
                "detail": detail,
            }),
        )
    };
    let Some(addr) = http::query_param(&req.query, "addr") else {
        return problem("missing ?addr=G… (the account to fund)".into());
    };
    let Some(account) = xdrutil::parse_g_address(&addr) else {
        return problem(format!("addr '{addr}' is not a valid G… account address"));
    };
    match fund(shared, &account) {
        Ok((hash, rec)) => http::Response::json(
            200,
            &json!({
                "successful": true,
                "hash": hex::encode(hash),
                "id": hex::encode(hash),
                "ledger": rec.ledger,
                "envelope_xdr": rec.envelope_xdr,
                "result_xdr": rec.result_xdr,
                "result_meta_xdr": rec.result_meta_xdr,
                "fee_charged": rec.result.fee_charged.to_string(),
                "created_at": xdrutil::iso8601(rec.created_at),
            }),
        ),
        Err(e) => problem(e.to_string()),
    }
}
