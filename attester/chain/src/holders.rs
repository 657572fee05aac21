//! Who holds a token, as its newest `transfer` and `mint` events name them: the addresses a fork (the
//! SEP-41 suite's holder premise, power discovery's watched holders) takes as candidates. stellar-rpc's
//! getEvents answers a range oldest first, so the ranges end at the fork ledger and widen backwards.

use std::collections::BTreeSet;

use stellar_xdr::{ScAddress, ScVal};

use crate::rpc::{RpcClient, RpcError};
use crate::strkey_of;
use crate::submit::decode_rpc_xdr;

/// Candidate holders read at most (each costs a balance read).
pub const MAX_CANDIDATES: usize = 8;
/// How far back the events are read: about a day of 5 s ledgers.
pub const DISCOVERY_LEDGERS: u32 = 17_280;
/// The first window, in ledgers back from the fork ledger; each next one reaches twice as far back (64,
/// 128, 256, … ledgers), so the newest events are read first.
pub const FIRST_WINDOW: u32 = 64;
/// Events per getEvents page; a full page of a window wider than one ledger is read again over its
/// newer half, since a page holds the window's oldest events.
pub const EVENTS_PER_PAGE: usize = 100;
/// getEvents calls at most.
pub const MAX_EVENT_PAGES: usize = 10;

/// Why the events could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HolderScanError {
    /// The upstream did not answer.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// getEvents answered a value that does not decode within the limits of every RPC answer: the
    /// upstream is broken or hostile, and nothing rests on it.
    #[error("the upstream sent an event that does not decode: {0}")]
    UndecodableEvent(String),
}

/// The addresses `contract`'s newest `transfer` and `mint` events up to `ledger` name (receivers first),
/// newest first, as `G…`/`C…` text.
pub fn holders_in_events(
    client: &RpcClient,
    contract: &ScAddress,
    ledger: u32,
) -> Result<Vec<String>, HolderScanError> {
    let oldest = client.get_health()?.oldest_ledger;
    let ids = [strkey_of(contract)];
    named_in_windows(ledger, oldest, |start, end| {
        let page = client.get_events_between(start, end, &ids, EVENTS_PER_PAGE)?;
        Ok(page.events.into_iter().map(|e| e.topic).collect())
    })
}

/// The addresses the `transfer` and `mint` events name, receivers first, newest first: windows
/// `[start, end)` ending just past the fork ledger `ledger`, each reaching twice as far back as the last,
/// until enough candidates, the upstream's `oldest` ledger, a day back, or the page budget.
/// `page(start, end)` answers as getEvents does: the topics (base64) of the range's events, oldest first,
/// at most [`EVENTS_PER_PAGE`].
pub fn named_in_windows(
    ledger: u32,
    oldest: u32,
    mut page: impl FnMut(u32, u32) -> Result<Vec<Vec<String>>, HolderScanError>,
) -> Result<Vec<String>, HolderScanError> {
    let floor = (ledger.saturating_sub(DISCOVERY_LEDGERS))
        .max(oldest)
        .max(1);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut end = ledger.saturating_add(1);
    let mut span = FIRST_WINDOW;
    let mut pages = 0;
    while end > floor && out.len() < MAX_CANDIDATES && pages < MAX_EVENT_PAGES {
        let start = end.saturating_sub(span).max(floor);
        let events = page(start, end)?;
        pages += 1;
        if events.len() >= EVENTS_PER_PAGE && end - start > 1 {
            // A full page holds the window's oldest events: read its newer half first.
            span = (end - start) / 2;
            continue;
        }
        for topics in events.iter().rev() {
            let topics = (topics.iter())
                .map(|t| decode_rpc_xdr::<ScVal>("getEvents topic", Some(t)))
                .collect::<Result<Vec<ScVal>, _>>()
                .map_err(|e| HolderScanError::UndecodableEvent(e.to_string()))?;
            let named = match topics.first() {
                Some(ScVal::Symbol(s)) => s.to_utf8_string_lossy(),
                _ => continue,
            };
            if named != "transfer" && named != "mint" {
                continue;
            }
            // Receivers first (transfer's `to`, mint's last address), then senders.
            for topic in topics[1..].iter().rev() {
                if let ScVal::Address(a) = topic {
                    let text = strkey_of(a);
                    if seen.insert(text.clone()) {
                        out.push(text);
                    }
                }
            }
        }
        end = start;
        span = span.saturating_mul(2);
    }
    out.truncate(MAX_CANDIDATES);
    Ok(out)
}
