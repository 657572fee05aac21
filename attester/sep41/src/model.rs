//! The checks, their verdicts and the run's report.
use serde::Serialize;

/// Where a check sits: the interface (getters' shapes), the behaviour (what writes do), the
/// authorization a call asks for, or the events it publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Interface,
    Behavior,
    Authorization,
    Events,
}

impl Layer {
    /// The four layers, in report order.
    pub const ALL: [Layer; 4] = [
        Layer::Interface,
        Layer::Behavior,
        Layer::Authorization,
        Layer::Events,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Interface => "interface",
            Layer::Behavior => "behavior",
            Layer::Authorization => "authorization",
            Layer::Events => "events",
        }
    }
}

/// A check's verdict. Only PASS and FAIL are verdicts about the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Pass,
    Fail,
    /// A premise is missing: a fact about the run, not the contract.
    Unverifiable,
    /// The harness or the network failed: the attempt never produced an answer.
    Skipped,
    /// The WASM's contract spec does not declare the member under test.
    NotImplemented,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Unverifiable => "UNVERIFIABLE",
            Status::Skipped => "SKIPPED",
            Status::NotImplemented => "NOT_IMPLEMENTED",
        }
    }

    /// The text-row mark.
    pub fn mark(self) -> char {
        match self {
            Status::Pass => '✓',
            Status::Fail => '✗',
            Status::Unverifiable => '?',
            Status::Skipped => '○',
            Status::NotImplemented => '–',
        }
    }
}

/// One of the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckDef {
    pub id: &'static str,
    pub layer: Layer,
    /// The SEP-41 member and the case of it under test.
    pub clause: &'static str,
    /// The member whose absence from the spec makes this NOT_IMPLEMENTED; empty for a check of
    /// something SEP-41 leaves unnamed (a mint or a clawback, from whichever function).
    pub member: &'static str,
    /// What PASS requires, shown for every non-PASS row.
    pub expected: &'static str,
}

const fn check(
    id: &'static str,
    layer: Layer,
    clause: &'static str,
    member: &'static str,
    expected: &'static str,
) -> CheckDef {
    CheckDef {
        id,
        layer,
        clause,
        member,
        expected,
    }
}

/// The checks in run order. The sixteen: five reads; five of the six negative checks,
/// least-destructive first; the five writes that move value; the expiry check. Then nine that
/// simulate and submit nothing: the authorization each write asks for, the events three writes
/// publish, and an approval that expired before it was given. Last, the two that judge the event
/// of a mint and of a clawback power discovery exercised ([`POWER_EVENT_CHECKS`]).
pub const CHECKS: [CheckDef; 27] = [
    check(
        "sep41-decimals",
        Layer::Interface,
        "decimals",
        "decimals",
        "a u32",
    ),
    check(
        "sep41-balance",
        Layer::Behavior,
        "balance",
        "balance",
        "a non-negative i128 for the holder",
    ),
    check(
        "sep41-allowance",
        Layer::Behavior,
        "allowance",
        "allowance",
        "a non-negative i128 for the holder/spender pair",
    ),
    check("sep41-name", Layer::Interface, "name", "name", "a string"),
    check(
        "sep41-symbol",
        Layer::Interface,
        "symbol",
        "symbol",
        "a string",
    ),
    check(
        "sep41-transfer_from-unauthorized",
        Layer::Behavior,
        "transfer_from: no allowance",
        "transfer_from",
        "a spend with no allowance is refused",
    ),
    check(
        "sep41-transfer-zero-amount",
        Layer::Behavior,
        "transfer: zero amount",
        "transfer",
        "accepted or refused, with no balance moved",
    ),
    check(
        "sep41-transfer-self",
        Layer::Behavior,
        "transfer: to self",
        "transfer",
        "accepted or refused, with the holder's balance unchanged",
    ),
    check(
        "sep41-transfer-negative-amount",
        Layer::Behavior,
        "transfer: negative amount",
        "transfer",
        "a transfer of -1 is refused",
    ),
    check(
        "sep41-transfer-over-balance",
        Layer::Behavior,
        "transfer: over balance",
        "transfer",
        "a transfer of balance + 1 is refused",
    ),
    check(
        "sep41-transfer",
        Layer::Behavior,
        "transfer",
        "transfer",
        "holder -1, recipient +1",
    ),
    check(
        "sep41-approve",
        Layer::Behavior,
        "approve",
        "approve",
        "the allowance equals the amount approved (overwrite, not add)",
    ),
    check(
        "sep41-transfer_from",
        Layer::Behavior,
        "transfer_from",
        "transfer_from",
        "holder -1, recipient +1, allowance -1",
    ),
    check("sep41-burn", Layer::Behavior, "burn", "burn", "holder -1"),
    check(
        "sep41-burn_from",
        Layer::Behavior,
        "burn_from",
        "burn_from",
        "holder -1, spender 0, allowance -1",
    ),
    check(
        "sep41-transfer_from-expired",
        Layer::Behavior,
        "transfer_from: expired allowance",
        "transfer_from",
        "a spend on an expired allowance is refused",
    ),
    check(
        "sep41-transfer-auth",
        Layer::Authorization,
        "transfer: authorization",
        "transfer",
        "refused with no authorization; asks the holder's, for exactly the call, nothing nested",
    ),
    check(
        "sep41-transfer_from-auth",
        Layer::Authorization,
        "transfer_from: authorization",
        "transfer_from",
        "asks the spender's authorization only, for exactly the call, nothing nested",
    ),
    check(
        "sep41-approve-auth",
        Layer::Authorization,
        "approve: authorization",
        "approve",
        "asks the holder's (from) authorization only, for exactly the call, nothing nested",
    ),
    check(
        "sep41-burn-auth",
        Layer::Authorization,
        "burn: authorization",
        "burn",
        "asks the holder's (from) authorization only, for exactly the call, nothing nested",
    ),
    check(
        "sep41-burn_from-auth",
        Layer::Authorization,
        "burn_from: authorization",
        "burn_from",
        "asks the spender's authorization only, for exactly the call, nothing nested",
    ),
    check(
        "sep41-events-transfer",
        Layer::Events,
        "transfer: event",
        "transfer",
        "one event from the token: topics [\"transfer\", from, to] (a SAC adds the asset name), \
         data the amount as i128 or {amount, to_muxed_id: void or absent}",
    ),
    check(
        "sep41-events-approve",
        Layer::Events,
        "approve: event",
        "approve",
        "one event from the token: topics [\"approve\", from, spender] (a SAC adds the asset \
         name), data [amount, live_until_ledger] or {amount, live_until_ledger}",
    ),
    check(
        "sep41-events-burn",
        Layer::Events,
        "burn: event",
        "burn",
        "one event from the token: topics [\"burn\", from] (a SAC adds the asset name), data \
         the amount as i128 or {amount}",
    ),
    check(
        "sep41-approve-past-expiry",
        Layer::Behavior,
        "approve: live_until_ledger in the past",
        "approve",
        "approve(1) with a live_until_ledger below the current ledger is refused",
    ),
    check(
        "sep41-events-mint",
        Layer::Events,
        "mint: event",
        "",
        "the mint power discovery exercised publishes a `mint` event from the token: topics \
         [\"mint\", to] (an asset string may follow), data the amount as i128 or {amount, \
         to_muxed_id: void or absent}",
    ),
    check(
        "sep41-events-clawback",
        Layer::Events,
        "clawback: event",
        "",
        "the clawback power discovery exercised publishes a `clawback` event from the token: \
         topics [\"clawback\", from] (an asset string may follow), data the amount as i128 or \
         {amount}",
    ),
];

/// The checks that judge the event of a power discovery exercised. SKIPPED when no such power
/// was observed: there is no call to judge, so the row leaves the run's exit code alone (the
/// power itself is judged by discovery, not here).
pub const POWER_EVENT_CHECKS: [&str; 2] = ["sep41-events-mint", "sep41-events-clawback"];

/// The SEP-41 members; all are required.
pub const MEMBERS: [&str; 10] = [
    "allowance",
    "approve",
    "balance",
    "burn",
    "burn_from",
    "decimals",
    "name",
    "symbol",
    "transfer",
    "transfer_from",
];

/// What a check saw, for the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<serde_json::Value>,
    #[serde(rename = "txHash", skip_serializing_if = "Option::is_none")]
    pub tx_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger: Option<u32>,
    /// A refusal's or fault's error text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// An allowance the check granted itself to set up its premise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub granted: Option<String>,
    /// What a simulation showed, one line each: the authorization tree asked for, or the events
    /// published (topics and data).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub observed: Vec<String>,
}

impl Evidence {
    pub fn is_empty(&self) -> bool {
        *self == Evidence::default()
    }
}

/// One row of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    pub id: &'static str,
    pub clause: &'static str,
    pub layer: Layer,
    pub requirement: &'static str,
    pub status: Status,
    pub expected: &'static str,
    /// What was observed, terse, with the numbers seen.
    pub actual: String,
    pub evidence: Evidence,
    #[serde(rename = "durationMs")]
    pub duration_ms: u64,
}

impl CheckResult {
    /// A power-event row SKIPPED because discovery observed no such power.
    pub fn no_power_observed(&self) -> bool {
        self.status == Status::Skipped && POWER_EVENT_CHECKS.contains(&self.id)
    }
}

/// Counts by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub total: usize,
    pub pass: usize,
    pub fail: usize,
    pub unverifiable: usize,
    pub skipped: usize,
    #[serde(rename = "notImplemented")]
    pub not_implemented: usize,
}

/// Exit code: all exercised and held.
pub const EXIT_CONFORMANT: u8 = assay_core::exit::OK;
/// Exit code: a FAIL, or a required member not implemented.
pub const EXIT_VIOLATION: u8 = assay_core::exit::NEGATIVE;
/// Exit code: something unassessed (UNVERIFIABLE or SKIPPED), or nothing ran.
pub const EXIT_INCOMPLETE: u8 = assay_core::exit::UNDETERMINED;

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub contract_id: String,
    /// Where the run happened, with no credentials (origin only, or "embedded local network").
    pub network: String,
    pub ran_at: String,
    pub results: Vec<CheckResult>,
    /// A run on a fork of the network: where it forked and how the holder got its units.
    pub fork: Option<ForkFacts>,
}

/// What a fork run records about its premises.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForkFacts {
    /// The upstream ledger the fork started from.
    pub ledger: u32,
    /// `holder` (`--holder`), `discovered` (from the token's events), `holder-address` (the
    /// suite acts as an existing holder whose balance the token refused to move), `mint` (as the
    /// admin), or `none`.
    pub premise: &'static str,
    /// The premise in words: which address, how many units, or what was tried.
    pub detail: String,
    /// Ledgers an earlier attempt was pinned at, oldest first, each abandoned because an entry it
    /// read had changed upstream after it (drift); the run then started again at the upstream's
    /// latest ledger.
    pub repinned_from: Vec<u32>,
    /// Entries this run read that changed upstream after `ledger` (base64 keys). When any, the
    /// fork held state of two ledgers: the run is undetermined, never a PASS.
    pub drifted: Vec<String>,
}

impl Report {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            total: self.results.len(),
            ..Summary::default()
        };
        for r in &self.results {
            match r.status {
                Status::Pass => s.pass += 1,
                Status::Fail => s.fail += 1,
                Status::Unverifiable => s.unverifiable += 1,
                Status::Skipped => s.skipped += 1,
                Status::NotImplemented => s.not_implemented += 1,
            }
        }
        s
    }

    /// 0 all held; 3 any FAIL or required member missing; 2 anything unassessed, a fork run that
    /// drifted ([`Report::drifted`]), or nothing ran.
    /// A power-event row SKIPPED for want of the power ([`CheckResult::no_power_observed`]) is
    /// not unassessed: the token gave it nothing to judge.
    pub fn exit_code(&self) -> u8 {
        let s = self.summary();
        let unassessed_skips = (self.results.iter())
            .filter(|r| r.status == Status::Skipped && !r.no_power_observed())
            .count();
        if s.total == 0 {
            EXIT_INCOMPLETE
        } else if s.fail > 0 || s.not_implemented > 0 {
            EXIT_VIOLATION
        } else if s.unverifiable > 0 || unassessed_skips > 0 || self.drifted() {
            EXIT_INCOMPLETE
        } else {
            EXIT_CONFORMANT
        }
    }

    /// A fork run whose state mixed ledgers ([`ForkFacts::drifted`]): its PASSes prove nothing.
    pub fn drifted(&self) -> bool {
        self.fork.as_ref().is_some_and(|f| !f.drifted.is_empty())
    }

    /// The status of check `id`, if it ran.
    pub fn status_of(&self, id: &str) -> Option<Status> {
        self.results.iter().find(|r| r.id == id).map(|r| r.status)
    }
}
