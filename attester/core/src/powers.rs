//! What a token's code lets someone do to a holder's balance, as observed on a fork: the facts power
//! discovery (`assay-powers`) hands the `contract-mechanics` check. Every power here was seen happen —
//! state before and after one call with exactly the authorization it asked for — and a function's name
//! only labels it afterwards; no bit is set or cleared by a name.

use serde::{Deserialize, Serialize};

use crate::model::Mechanics;

/// Whose authorization a power needed, resolved one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Authority {
    /// The address whose authorization the call asked for (`G…` or `C…`).
    pub address: String,
    /// Who can act as it: "1 key", "2 of 3 keys", "locked: no signer can reach the threshold",
    /// "contract" (not resolved further), or "unknown" when its entry could not be read.
    pub control: String,
    /// Whether it can never act again (a locked account): its powers are dormant for good.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub locked: bool,
}

impl Authority {
    /// "G… (1 key, 0 s)": the address, who can act as it, and the delay before it can (an account acts at
    /// once).
    pub fn describe(&self) -> String {
        if self.address.starts_with('G') {
            format!("{} ({}, 0 s)", self.address, self.control)
        } else {
            format!("{} ({})", self.address, self.control)
        }
    }
}

/// How far a freeze reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FreezeScope {
    /// The account the call named; another holder still transfers.
    OneAccount,
    /// Every holder the run could test.
    Everyone,
}

/// The effect a call was seen to have, before vs after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "effect")]
pub enum PowerEffect {
    /// A holder's balance fell without the holder's authorization: burned (`moved_to` empty) or moved to
    /// another address (a forced transfer).
    TakesBalance {
        /// The holder whose balance fell.
        holder: String,
        /// Units taken by the probe.
        amount: String,
        /// Where they went, when another address rose by the same amount.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        moved_to: Option<String>,
    },
    /// A holder's transfer that succeeded before the call is refused after it.
    Freezes {
        /// The holder whose transfer is refused.
        holder: String,
        /// One account or everyone.
        scope: FreezeScope,
    },
    /// A balance rose with no matching debit: supply was created.
    CreatesSupply {
        /// The address credited.
        credited: String,
        /// Units created by the probe.
        amount: String,
    },
    /// The token's executable changed.
    ReplacesCode {
        /// Executable before (WASM hash hex, or a description).
        before: String,
        /// Executable after.
        after: String,
    },
    /// A contract the token's `transfer` calls into was replaced by another address.
    ReplacesDependency {
        /// The contract the transfer called before.
        dependency: String,
    },
    /// The token's executable is a CAP-85 external reference: the code's owner can replace it.
    ExternalCode {
        /// The contract the reference names.
        owner: String,
    },
    /// The code imports a host function that replaces it (`update_current_contract_wasm`): whoever its
    /// logic admits can replace every rule.
    ImportsCodeUpdate {
        /// The import (`module.name (label)`).
        import: String,
    },
    /// After the call, a holder's transfer delivers a smaller share of what it sends to its recipient than
    /// before it: the rest is burned or credited to someone else, on every transfer.
    TransferFee {
        /// The holder whose transfer was measured.
        holder: String,
        /// Units the measured transfer took from the holder.
        sent: String,
        /// Units its recipient received, after the call.
        delivered: String,
        /// The share of what was sent that did not reach the recipient after the call, in basis points
        /// (10,000 exactly when nothing was delivered; a delivery above zero is at most 9,999).
        share_bps: u32,
        /// The watched address credited with (most of) the rest, when one was; absent: burned, or credited
        /// to no address discovery watches.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        credited: Option<String>,
    },
}

/// A share of 10,000 basis points: the transfer delivered nothing.
pub const FULL_SHARE_BPS: u32 = 10_000;

/// The share of `sent` that `delivered` leaves out, in basis points rounded to the nearest (half up): 10,000
/// only when nothing was delivered, at most 9,999 otherwise, 0 when all of it (or more) arrived. `sent`
/// must be above zero.
pub fn undelivered_share_bps(sent: i128, delivered: i128) -> u32 {
    if sent <= 0 || delivered >= sent {
        return 0;
    }
    if delivered <= 0 {
        return FULL_SHARE_BPS;
    }
    let missing = sent - delivered;
    // missing / sent in basis points without overflow: sent may be near i128::MAX.
    let bps = match missing.checked_mul(20_000) {
        Some(twice) => ((twice / sent + 1) / 2).min(i128::from(FULL_SHARE_BPS)),
        None => ((missing as f64 / sent as f64) * 10_000.0).round() as i128,
    };
    (bps as u32).min(FULL_SHARE_BPS - 1)
}

impl PowerEffect {
    /// The mechanics bit this effect sets.
    pub fn bit(&self) -> u32 {
        match self {
            PowerEffect::TakesBalance { .. } => Mechanics::ADMIN_CLAWBACK,
            PowerEffect::Freezes { .. } => Mechanics::ADMIN_FREEZE,
            PowerEffect::CreatesSupply { .. } => Mechanics::ADMIN_MINT,
            PowerEffect::ReplacesCode { .. }
            | PowerEffect::ReplacesDependency { .. }
            | PowerEffect::ExternalCode { .. }
            | PowerEffect::ImportsCodeUpdate { .. } => Mechanics::CODE_MUTABLE,
            PowerEffect::TransferFee { .. } => Mechanics::ADMIN_TRANSFER_FEE,
        }
    }

    /// Whether the effect was seen to leave a holder with nothing of what it sends: a transfer fee that
    /// took everything (rated high, above bit 14's medium floor).
    pub fn takes_every_transfer(&self) -> bool {
        matches!(self, PowerEffect::TransferFee { share_bps, .. } if *share_bps >= FULL_SHARE_BPS)
    }

    /// The kind, in the words of the report ("takes a holder's balance", …).
    pub fn kind(&self) -> &'static str {
        match self {
            PowerEffect::TakesBalance { moved_to: None, .. } => "takes a holder's balance (burned)",
            PowerEffect::TakesBalance { .. } => {
                "moves a holder's balance elsewhere (forced transfer)"
            }
            PowerEffect::Freezes {
                scope: FreezeScope::OneAccount,
                ..
            } => "freezes one account",
            PowerEffect::Freezes {
                scope: FreezeScope::Everyone,
                ..
            } => "stops every transfer",
            PowerEffect::CreatesSupply { .. } => "creates supply",
            PowerEffect::ReplacesCode { .. } => "replaces the token's code",
            PowerEffect::ReplacesDependency { .. } => {
                "replaces a contract the token's transfer calls into"
            }
            PowerEffect::ExternalCode { .. } => "runs code another contract owns (CAP-85)",
            PowerEffect::ImportsCodeUpdate { .. } => "can replace the token's code",
            PowerEffect::TransferFee { .. } => "changes what a holder's transfer delivers",
        }
    }

    /// What was observed, in words free of run-specific numbers and addresses (hashed: a re-run that sees
    /// the same behaviour reproduces it).
    pub fn stable_claim(&self) -> String {
        match self {
            PowerEffect::TakesBalance { moved_to: None, .. } => {
                "a holder's balance fell by the units asked, without the holder's authorization; nobody was credited"
                    .into()
            }
            PowerEffect::TakesBalance { .. } => {
                "a holder's balance fell by the units asked, without the holder's authorization; another address rose by as much"
                    .into()
            }
            PowerEffect::Freezes {
                scope: FreezeScope::OneAccount,
                ..
            } => "a holder's transfer that succeeded before the call is refused after it; another holder's still succeeds".into(),
            PowerEffect::Freezes {
                scope: FreezeScope::Everyone,
                ..
            } => "every tested holder's transfer that succeeded before the call is refused after it".into(),
            PowerEffect::CreatesSupply { .. } => {
                "a balance rose by the units asked with no matching debit".into()
            }
            PowerEffect::ReplacesCode { .. } => "the token's executable changed".into(),
            PowerEffect::ReplacesDependency { dependency } => {
                format!("the contract {dependency} that transfer calls into was replaced in the token's storage")
            }
            PowerEffect::ExternalCode { owner } => {
                format!("the executable is an external reference to {owner}")
            }
            PowerEffect::ImportsCodeUpdate { import } => format!("the code imports {import}"),
            PowerEffect::TransferFee { credited, .. } => {
                let full = self.takes_every_transfer();
                match (full, credited.is_some()) {
                    (true, true) => TRANSFER_FEE_CLAIMS[0],
                    (true, false) => TRANSFER_FEE_CLAIMS[1],
                    (false, true) => TRANSFER_FEE_CLAIMS[2],
                    (false, false) => TRANSFER_FEE_CLAIMS[3],
                }
                .into()
            }
        }
    }

    /// What was observed, with this run's numbers and addresses (for people; not hashed).
    pub fn detail(&self) -> String {
        match self {
            PowerEffect::TakesBalance {
                holder,
                amount,
                moved_to: None,
            } => format!("{holder}'s balance fell by {amount} without its authorization; burned"),
            PowerEffect::TakesBalance {
                holder,
                amount,
                moved_to: Some(to),
            } => format!(
                "{holder}'s balance fell by {amount} without its authorization; {to} rose by as much"
            ),
            PowerEffect::Freezes { holder, scope } => match scope {
                FreezeScope::OneAccount => format!(
                    "{holder}'s transfer succeeded before and is refused after; another holder's still succeeds"
                ),
                FreezeScope::Everyone => format!(
                    "{holder}'s transfer and every other tested holder's succeeded before and are refused after"
                ),
            },
            PowerEffect::CreatesSupply { credited, amount } => {
                format!("{credited} rose by {amount} with no matching debit")
            }
            PowerEffect::ReplacesCode { before, after } => {
                format!("the executable changed from {before} to {after}")
            }
            PowerEffect::TransferFee {
                holder,
                sent,
                delivered,
                share_bps,
                credited,
            } => {
                let rest = match credited {
                    Some(to) => format!("{to} was credited the rest"),
                    None => "no watched address was credited the rest (burned)".into(),
                };
                format!(
                    "after the call {holder}'s transfer of {sent} delivered {delivered} to its recipient \
                     ({} not delivered); {rest}",
                    share_text(*share_bps)
                )
            }
            other => other.stable_claim(),
        }
    }
}

/// The stable claims of a transfer fee (no run numbers): nothing delivered, credited elsewhere or not; less
/// delivered, credited elsewhere or not. The first two rate high.
pub const TRANSFER_FEE_CLAIMS: [&str; 4] = [
    "after the call a holder's transfer delivers nothing of what it sends to its recipient; another address is credited with it",
    "after the call a holder's transfer delivers nothing of what it sends to its recipient; no watched address is credited with it",
    "after the call a holder's transfer delivers less than it sends to its recipient; another address is credited with the rest",
    "after the call a holder's transfer delivers less than it sends to its recipient; no watched address is credited with the rest",
];

/// A share in basis points as a percentage: `30 %`, `0.25 %`, `100 %`.
pub fn share_text(bps: u32) -> String {
    let (whole, part) = (bps / 100, bps % 100);
    if part == 0 {
        format!("{whole} %")
    } else if part % 10 == 0 {
        format!("{whole}.{} %", part / 10)
    } else {
        format!("{whole}.{part:02} %")
    }
}

/// One power, observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedPower {
    /// The exported function that exercised it (empty for a power of the code itself, e.g. an external
    /// reference).
    pub function: String,
    /// Whose authorization the call asked for; empty: nobody's, so anyone can use it.
    pub authorized_by: Vec<Authority>,
    /// What it did.
    #[serde(flatten)]
    pub effect: PowerEffect,
    /// A name from the common vocabulary of admin powers that labels it (report only; never sets a bit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The contract events the exercising call emitted (base64 `ContractEvent` XDR), for the SEP-41 event
    /// checks of a mint or a clawback.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// For a power that needs a preparing call (`function` is then `FIRST then SECOND`): each call of the
    /// sequence and whose authorization it asked for, in order. Empty for a power one call shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    /// For a power refused at the ledger's time and shown with the clock moved forward: the earliest
    /// instant discovery saw it work (to the hour). `None`: usable now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable_from: Option<crate::time::Timestamp>,
}

/// One call of a sequence that showed a power.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The exported function called.
    pub function: String,
    /// Whose authorization it asked for; empty: nobody's.
    pub authorized_by: Vec<Authority>,
}

impl Step {
    /// Who can make this call, in words (as [`ObservedPower::holders`]).
    pub fn holders(&self) -> String {
        describe_authorities(&self.authorized_by)
    }
}

fn describe_authorities(authorized_by: &[Authority]) -> String {
    if authorized_by.is_empty() {
        "anyone (no authorization asked)".into()
    } else {
        authorized_by
            .iter()
            .map(Authority::describe)
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

impl ObservedPower {
    /// Who can use it, in words: "nobody's authorization: anyone", or each authority described.
    pub fn holders(&self) -> String {
        describe_authorities(&self.authorized_by)
    }

    /// Who authorizes what: the parties of a one-call power, or of a sequence step by step
    /// ("A (1 key, 0 s) then B (1 key, 0 s)").
    pub fn authorization(&self) -> String {
        if self.steps.is_empty() {
            self.holders()
        } else {
            self.steps
                .iter()
                .map(Step::holders)
                .collect::<Vec<_>>()
                .join(" then ")
        }
    }

    /// Whether every party that can use it is locked for good (the power is dormant).
    pub fn dormant(&self) -> bool {
        !self.authorized_by.is_empty() && self.authorized_by.iter().all(|a| a.locked)
    }
}

/// A privileged entry point that wrote state whose effect on holders was not classified within the bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnclassifiedWrite {
    /// The function.
    pub function: String,
    /// Whose authorization it asked for.
    pub authorized_by: Vec<Authority>,
}

/// Everything discovery observed about one token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerSurvey {
    /// The code judged: WASM hash (hex) of the executable the token runs (resolving an external reference).
    pub wasm_hash: String,
    /// The ledger the fork (or the embedded network) stood at.
    pub ledger: u32,
    /// Exported functions probed, in order.
    pub probed: Vec<String>,
    /// Invocations run.
    pub invocations: u32,
    /// The holders whose balances and transfers were watched.
    pub holders: Vec<String>,
    /// Powers observed (one per function and kind of effect).
    pub powers: Vec<ObservedPower>,
    /// Privileged writes no effect was found for.
    pub unclassified: Vec<UnclassifiedWrite>,
    /// Where a bound cut the search: `function: reason`.
    pub cut: Vec<String>,
    /// Why powers over balances could not be observed at all (no holder held units), when so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unobservable: Option<String>,
    /// How far the search went past today's clock and values (absent in surveys made before it did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<Reach>,
}

/// The search past today's clock and today's values: what was re-probed, and whether a bound cut it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    /// Argument sets refused at the ledger's time that were re-probed with the clock moved forward.
    pub later_sets: u32,
    /// The clock offsets tried (seconds after the ledger's time).
    pub later_offsets: Vec<u64>,
    /// Whether a bound left refused argument sets out of the later-clock probe.
    pub later_cut: bool,
    /// Values the module itself holds (its integer constants, the addresses in its instance storage)
    /// tried as arguments.
    pub module_values: u32,
    /// Invocations those values took.
    pub module_calls: u32,
    /// Whether a bound left module values or functions out.
    pub module_cut: bool,
}

impl PowerSurvey {
    /// The mechanics bits the observations set.
    pub fn bits(&self) -> u32 {
        let mut bits = self.powers.iter().fold(0, |b, p| b | p.effect.bit());
        if !self.unclassified.is_empty() {
            bits |= Mechanics::ADMIN_UNCLASSIFIED;
        }
        bits
    }

    /// Whether the search could not cover what a verdict needs: no holder to observe, or the time budget
    /// left functions unprobed. Such a survey is a floor, never a clean answer.
    pub fn incomplete(&self) -> Option<String> {
        if let Some(why) = &self.unobservable {
            return Some(why.clone());
        }
        self.cut
            .iter()
            .find(|c| c.ends_with(BUDGET_CUT))
            .map(|c| format!("the search stopped early ({c})"))
    }
}

/// The reason a function was left unprobed because the token's time budget ran out.
pub const BUDGET_CUT: &str = "not probed: the time budget ran out";

/// Labels from the common vocabulary of admin powers (OpenZeppelin stellar-contracts, SEP-57, the SAC).
/// They only name an effect that was observed; nothing here decides a bit.
const VOCABULARY: [(&str, &str); 17] = [
    ("clawback", "clawback"),
    ("forced_transfer", "SEP-57 forced transfer"),
    ("recover_balance", "SEP-57 balance recovery"),
    ("burn", "operator burn"),
    ("set_address_frozen", "SEP-57 address freeze"),
    ("freeze_partial_tokens", "SEP-57 partial freeze"),
    ("pause", "pause"),
    ("block_user", "blocklist"),
    ("disallow_user", "allowlist removal"),
    ("set_authorized", "SAC deauthorization"),
    ("mint", "mint"),
    ("set_compliance", "SEP-57 replaceable compliance"),
    (
        "set_identity_verifier",
        "SEP-57 replaceable identity verifier",
    ),
    ("upgrade", "upgrade"),
    ("set_admin", "admin change"),
    ("freeze", "freeze"),
    ("blacklist", "blocklist"),
];

/// The vocabulary's label for `function`, if it has one.
pub fn label_for(function: &str) -> Option<String> {
    VOCABULARY
        .iter()
        .find(|(name, _)| *name == function)
        .map(|(_, label)| (*label).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn power(effect: PowerEffect) -> ObservedPower {
        ObservedPower {
            function: "rebalance".into(),
            authorized_by: vec![],
            effect,
            label: None,
            events: vec![],
            steps: vec![],
            usable_from: None,
        }
    }

    #[test]
    fn when_usable_and_the_reach_are_absent_from_older_json_and_round_trip() {
        let plain = survey(vec![power(PowerEffect::CreatesSupply {
            credited: "GA".into(),
            amount: "1".into(),
        })]);
        let json = serde_json::to_string(&plain).unwrap();
        assert!(
            !json.contains("usable_from") && !json.contains("reach"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<PowerSurvey>(&json).unwrap(), plain);
        let mut later = plain.clone();
        later.powers[0].usable_from = crate::time::Timestamp::from_unix(1_800_000_000);
        later.reach = Some(Reach {
            later_sets: 2,
            later_offsets: vec![3_600],
            module_values: 5,
            ..Reach::default()
        });
        let json = serde_json::to_string(&later).unwrap();
        assert!(
            json.contains("\"usable_from\":\"2027-01-15T08:00:00Z\""),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<PowerSurvey>(&json).unwrap(), later);
    }

    fn survey(powers: Vec<ObservedPower>) -> PowerSurvey {
        PowerSurvey {
            wasm_hash: "00".into(),
            ledger: 1,
            probed: vec![],
            invocations: 0,
            holders: vec!["GA".into()],
            powers,
            unclassified: vec![],
            cut: vec![],
            unobservable: None,
            reach: None,
        }
    }

    #[test]
    fn each_effect_sets_its_bit() {
        let take = power(PowerEffect::TakesBalance {
            holder: "GA".into(),
            amount: "1".into(),
            moved_to: None,
        });
        let freeze = power(PowerEffect::Freezes {
            holder: "GA".into(),
            scope: FreezeScope::Everyone,
        });
        let mint = power(PowerEffect::CreatesSupply {
            credited: "GA".into(),
            amount: "1".into(),
        });
        let code = power(PowerEffect::ExternalCode { owner: "C".into() });
        assert_eq!(survey(vec![take]).bits(), Mechanics::ADMIN_CLAWBACK);
        assert_eq!(survey(vec![freeze]).bits(), Mechanics::ADMIN_FREEZE);
        assert_eq!(survey(vec![mint]).bits(), Mechanics::ADMIN_MINT);
        assert_eq!(survey(vec![code]).bits(), Mechanics::CODE_MUTABLE);
        let mut s = survey(vec![]);
        assert_eq!(s.bits(), 0);
        s.unclassified.push(UnclassifiedWrite {
            function: "set_memo".into(),
            authorized_by: vec![],
        });
        assert_eq!(s.bits(), Mechanics::ADMIN_UNCLASSIFIED);
    }

    #[test]
    fn a_survey_without_holders_or_cut_by_time_is_incomplete() {
        let mut s = survey(vec![]);
        assert_eq!(s.incomplete(), None);
        s.cut.push("set_mode: 64 invocations".into());
        assert_eq!(
            s.incomplete(),
            None,
            "a per-function bound is reported, not fatal"
        );
        s.cut.push(format!("reward: {BUDGET_CUT}"));
        assert!(s.incomplete().is_some());
        let mut s = survey(vec![]);
        s.unobservable = Some("no holder held units".into());
        assert!(s.incomplete().is_some());
    }

    #[test]
    fn a_name_only_labels() {
        assert_eq!(
            label_for("forced_transfer").as_deref(),
            Some("SEP-57 forced transfer")
        );
        assert_eq!(label_for("rebalance"), None);
    }

    #[test]
    fn a_transfer_fee_sets_bit_14_and_its_share_rounds_to_basis_points() {
        let fee = |share_bps, credited: Option<&str>| PowerEffect::TransferFee {
            holder: "GA".into(),
            sent: "10000".into(),
            delivered: "7000".into(),
            share_bps,
            credited: credited.map(str::to_string),
        };
        assert_eq!(
            survey(vec![power(fee(3_000, Some("GB")))]).bits(),
            Mechanics::ADMIN_TRANSFER_FEE
        );
        assert!(!fee(3_000, Some("GB")).takes_every_transfer());
        assert!(fee(FULL_SHARE_BPS, None).takes_every_transfer());
        assert_eq!(undelivered_share_bps(10_000, 7_000), 3_000);
        assert_eq!(undelivered_share_bps(999_998, 699_999), 3_000);
        assert_eq!(undelivered_share_bps(10, 0), FULL_SHARE_BPS);
        assert_eq!(
            undelivered_share_bps(1_000_000, 1),
            9_999,
            "anything delivered is short of everything"
        );
        assert_eq!(undelivered_share_bps(10, 10), 0);
        assert_eq!(undelivered_share_bps(10, 12), 0);
        assert_eq!(undelivered_share_bps(i128::MAX, i128::MAX / 2), 5_000);
        assert_eq!(share_text(3_000), "30 %");
        assert_eq!(share_text(25), "0.25 %");
        assert_eq!(share_text(10), "0.1 %");
        assert_eq!(share_text(FULL_SHARE_BPS), "100 %");
        // Four distinct claims, none with a number; the share shows only in the detail.
        let claims: std::collections::BTreeSet<String> = [
            fee(FULL_SHARE_BPS, Some("GB")),
            fee(FULL_SHARE_BPS, None),
            fee(3_000, Some("GB")),
            fee(3_000, None),
        ]
        .iter()
        .map(PowerEffect::stable_claim)
        .collect();
        assert_eq!(claims.len(), 4);
        assert!(
            claims.iter().all(|c| !c.contains(char::is_numeric)),
            "{claims:?}"
        );
        assert_eq!(
            fee(2_999, Some("GB")).stable_claim(),
            fee(3_000, Some("GC")).stable_claim()
        );
        assert!(fee(3_000, Some("GB"))
            .detail()
            .contains("(30 % not delivered)"));
    }

    #[test]
    fn stable_claims_carry_no_run_numbers() {
        let a = PowerEffect::TakesBalance {
            holder: "GA".into(),
            amount: "1".into(),
            moved_to: Some("GB".into()),
        };
        let b = PowerEffect::TakesBalance {
            holder: "GC".into(),
            amount: "900".into(),
            moved_to: Some("GD".into()),
        };
        assert_eq!(a.stable_claim(), b.stable_claim());
        assert_ne!(a.detail(), b.detail());
    }
}
