//! Holder discovery reads the newest events first: windows ending at the fork ledger, widening
//! backwards, a full page narrowed to its newer half; every topic decoded within limits. The
//! pages come from an in-memory event log answering as stellar-rpc's getEvents does.
use std::cell::Cell;

use stellar_xdr::{Limits, ScVal, WriteXdr};

use crate::scripted::account;
use assay_chain::holders::{named_in_windows, HolderScanError, EVENTS_PER_PAGE, MAX_EVENT_PAGES};
use assay_chain::scval::symbol;

/// One event: its ledger and topics (base64).
type Logged = (u32, Vec<String>);

fn transfer(ledger: u32, from: u8, to: u8) -> Logged {
    let topics = [
        symbol("transfer"),
        ScVal::Address(account(from)),
        ScVal::Address(account(to)),
    ];
    let topics = topics
        .iter()
        .map(|t| t.to_xdr_base64(Limits::none()).unwrap());
    (ledger, topics.collect())
}

/// Discovery at fork ledger `ledger` over `log` (ascending); also the getEvents calls made.
fn discover(log: &[Logged], ledger: u32) -> (Result<Vec<String>, HolderScanError>, usize) {
    let calls = Cell::new(0);
    let named = named_in_windows(ledger, 1, |start, end| {
        calls.set(calls.get() + 1);
        assert!(start < end, "a window is never empty: {start}..{end}");
        Ok((log.iter())
            .filter(|(l, _)| (start..end).contains(l))
            .take(EVENTS_PER_PAGE)
            .map(|(_, topics)| topics.clone())
            .collect())
    });
    (named, calls.get())
}

fn strkey(seed: u8) -> String {
    assay_chain::strkey_of(&account(seed))
}

#[test]
fn the_newest_receivers_come_first_even_behind_a_full_page_of_older_events() {
    // Old holders at ledgers 10-19, then 150 transfers in the last ten ledgers: the first page of
    // the retention window would hold only the old ones.
    let mut log: Vec<Logged> = (0..10).map(|i| transfer(10 + i, 1, 2 + i as u8)).collect();
    for i in 0..150u32 {
        log.push(transfer(991 + i / 15, 50, 60 + (i % 90) as u8));
    }
    let (named, calls) = discover(&log, 1_000);
    let named = named.unwrap();
    let newest_receiver = 60 + (149 % 90) as u8;
    assert_eq!(named.len(), 8, "{named:?}");
    assert_eq!(named[0], strkey(newest_receiver), "{named:?}");
    assert!(
        !(1..12).any(|old| named.contains(&strkey(old))),
        "no holder of the old events: {named:?}"
    );
    assert!(calls <= MAX_EVENT_PAGES, "{calls} getEvents calls");
}

#[test]
fn a_quiet_token_is_found_by_widening_backwards_within_the_page_budget() {
    let log = vec![transfer(3_000, 7, 8)];
    let (named, calls) = discover(&log, 10_000);
    assert_eq!(named.unwrap(), [strkey(8), strkey(7)]);
    assert!(calls <= MAX_EVENT_PAGES, "{calls} getEvents calls");
    // Nothing at all: the search stops at the budget or a day back, with no candidate.
    let (named, calls) = discover(&[], 100_000);
    assert!(named.unwrap().is_empty());
    assert!(calls <= MAX_EVENT_PAGES, "{calls} getEvents calls");
}

/// The base64 of an ScVal vec nested `depth` levels around a void, built without recursion: each
/// level is 12 bytes (a multiple of 3), so its base64 repeats unchanged.
pub(crate) fn nested_vec_base64(depth: usize) -> String {
    let one = ScVal::Vec(Some(vec![ScVal::Void].try_into().unwrap()))
        .to_xdr_base64(Limits::none())
        .unwrap();
    let (level, void) = one.split_at(16);
    format!("{}{void}", level.repeat(depth))
}

#[test]
fn a_topic_nested_past_the_depth_limit_is_an_undecodable_event_not_a_crash() {
    // The helper builds what it says: shallow nesting decodes.
    let shallow = nested_vec_base64(3);
    assert!(matches!(
        stellar_xdr::ReadXdr::from_xdr_base64(shallow, Limits::none()),
        Ok(ScVal::Vec(Some(_)))
    ));
    let deep = (900, vec![nested_vec_base64(200_000)]);
    let (named, _) = discover(&[transfer(899, 1, 2), deep], 1_000);
    let Err(HolderScanError::UndecodableEvent(message)) = named else {
        panic!("{named:?}")
    };
    assert!(message.contains("getEvents topic"), "{message}");
}
