//! The sandbox's clock: calls after `set_clock` run at the later sequence and time, and entries whose TTL
//! ended by then are read as the host reads them (a temporary entry absent, an archived persistent entry
//! restored), so a probe of "later" sees what the network would.

use crate::common;

use assay_localnet::xdr::{ScString, ScVal};
use assay_localnet::{LocalNet, LocalNetConfig};
use common::*;

#[test]
fn a_later_clock_expires_temporary_entries_and_restores_archived_ones() {
    let net = LocalNet::start(LocalNetConfig::default()).unwrap();
    let admin = Client::funded(&net, 3);
    let spender = Client::funded(&net, 4);
    let hash = admin.upload(&wasm("conformant_token"));
    let text = |s: &str| ScVal::String(ScString(s.try_into().unwrap()));
    let token = admin.deploy(
        hash,
        6,
        vec![
            addr(&admin.account),
            ScVal::U32(7),
            text("Test"),
            text("TST"),
        ],
    );
    let token = contract_addr(token);
    let mut sandbox = net.sandbox().unwrap();
    let today = sandbox.clock();
    let minted = sandbox.invoke(&token, "mint", vec![addr(&admin.account), i128v(1_000)]);
    assert!(minted.succeeded(), "{:?}", minted.result);
    // An allowance whose temporary entry lives about an hour (720 ledgers).
    let approved = sandbox.invoke(
        &token,
        "approve",
        vec![
            addr(&admin.account),
            addr(&spender.account),
            i128v(10),
            ScVal::U32(today.sequence + 720),
        ],
    );
    assert!(approved.succeeded(), "{:?}", approved.result);
    let read = |sandbox: &mut assay_localnet::Sandbox, function: &str, args: Vec<ScVal>| {
        let call = sandbox.simulate(&token, function, args);
        call.result.unwrap_or_else(|e| panic!("{function}: {e}"))
    };
    let allowance = vec![addr(&admin.account), addr(&spender.account)];
    assert_eq!(
        read(&mut sandbox, "allowance", allowance.clone()),
        i128v(10)
    );

    let day = today.later(86_400);
    assert_eq!(
        (day.sequence, day.timestamp),
        (today.sequence + 17_280, today.timestamp + 86_400)
    );
    sandbox.set_clock(day);
    assert_eq!(sandbox.clock(), day);
    assert_eq!(read(&mut sandbox, "allowance", allowance.clone()), i128v(0));

    // A year is past every entry's TTL (the longest is 3,110,400 ledgers, about 180 days): the instance,
    // the code and the balance are archived, and the host restores them for the call.
    sandbox.set_clock(today.later(365 * 86_400));
    assert_eq!(
        read(&mut sandbox, "balance", vec![addr(&admin.account)]),
        i128v(1_000)
    );
    let spent = sandbox.invoke(
        &token,
        "transfer",
        vec![addr(&admin.account), addr(&spender.account), i128v(1)],
    );
    assert!(
        spent.succeeded(),
        "a write on restored entries: {:?}",
        spent.result
    );
    assert_eq!(
        read(&mut sandbox, "balance", vec![addr(&spender.account)]),
        i128v(1)
    );

    // Back to today: the clock moves only the calls' view; the entries written stay.
    sandbox.set_clock(today);
    assert_eq!(read(&mut sandbox, "allowance", allowance), i128v(10));
}

fn i128v(v: i128) -> ScVal {
    ScVal::I128(assay_localnet::xdr::Int128Parts {
        hi: (v >> 64) as i64,
        lo: v as u64,
    })
}
