//! Property: the attester submits a report if and only if it is attestable. Reports are generated around a
//! real one with every refusal-relevant field varied; a recording submitter sees everything that would have
//! reached sendTransaction.

use assay_attest::attest::{execute, plan, Outcome, Submitted, Submitter};
use assay_attest::registry::{Attestation, Safety};
use assay_attest::targets::Target;
use assay_chain::submit::{ChainError, Confirmed};
use assay_core::{Freshness, Mechanics, Rating, Report, Severity, State, Timestamp};
use proptest::prelude::*;

#[derive(Default)]
struct Recording {
    submitted: Vec<Vec<Attestation>>,
    simulated: usize,
}

impl Submitter for Recording {
    fn simulate(&mut self, _: &[Attestation]) -> Result<i64, ChainError> {
        self.simulated += 1;
        Ok(1)
    }
    fn submit(&mut self, batch: &[Attestation]) -> Result<Submitted, ChainError> {
        self.submitted.push(batch.to_vec());
        Ok(Submitted {
            confirmed: confirmed(),
            read_back: Ok(()),
        })
    }
    fn read(&mut self, _: [u8; 32]) -> Result<Option<Safety>, ChainError> {
        Ok(None)
    }
    fn revoke(&mut self, _: [u8; 32]) -> Result<Confirmed, ChainError> {
        panic!("execute never revokes")
    }
}

fn confirmed() -> Confirmed {
    Confirmed {
        hash: "ab".repeat(32),
        ledger: 7,
        created_at: None,
        return_value: None,
        fee: 100,
    }
}

fn base() -> Report {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/reports/hand-written-usdz.json"
    ))
    .unwrap();
    Report::from_json(&text).unwrap()
}

fn rating(n: u8) -> Rating {
    if n >= 5 {
        Rating::Unevaluated
    } else {
        Rating::Level(Severity::ALL[n as usize])
    }
}

/// Independent statement of the rules (not the core's code): unevaluated, stale, undetermined,
/// inconsistent and holder-specific (bits 6-7: one holder's trustline) reports are never written.
fn attestable(r: &Report, as_of: Timestamp, window: i64) -> bool {
    let unevaluated = r.severity == Rating::Unevaluated || r.base_severity == Rating::Unevaluated;
    let aged = window > 0 && as_of.unix() - r.scanned_at.unix() > window;
    let stale = r.stale || r.state == State::Stale || aged;
    let sev = r.severity.level().map(|s| s.level()).unwrap_or(5);
    // The registry's floor: a power bit implies at least its level (clawback, code_mutable, admin_clawback →
    // high; revocable, admin_freeze → medium; auth required → low).
    let b = r.mechanics.bits();
    let floor = if b & (4 | 512 | 1024) != 0 {
        3
    } else if b & (2 | 2048) != 0 {
        2
    } else {
        b & 1
    };
    let inconsistent = sev < floor;
    let holder = b & (64 | 128) != 0;
    !unevaluated && !stale && !r.undetermined && !inconsistent && !holder
}

#[derive(Debug, Clone)]
struct Knobs {
    severity: u8,
    base: u8,
    undetermined: bool,
    stale: bool,
    bits: u32,
    age: i64,
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        0u8..6,
        0u8..6,
        any::<bool>(),
        prop::bool::weighted(0.2),
        0u32..8192,
        0i64..200_000,
    )
        .prop_map(|(severity, base, undetermined, stale, bits, age)| Knobs {
            severity,
            base,
            undetermined,
            stale,
            bits,
            age,
        })
}

fn build(k: &Knobs, now: Timestamp) -> Report {
    let mut r = base();
    r.severity = rating(k.severity);
    r.base_severity = rating(k.base);
    r.escalated =
        matches!((r.severity, r.base_severity), (Rating::Level(a), Rating::Level(b)) if a > b);
    r.undetermined = k.undetermined;
    r.undetermined_checks = if k.undetermined {
        vec!["reputation".into()]
    } else {
        vec![]
    };
    r.mechanics = Mechanics::from_bits(k.bits).unwrap_or_default();
    r.scanned_at = now.plus_seconds(-k.age);
    r.stale = k.stale;
    r.state = if k.stale { State::Stale } else { State::Valid };
    r.stale_reason = k.stale.then(|| "marked stale".to_string());
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn submits_iff_attestable(ks in prop::collection::vec(knobs(), 1..70), dry_run in prop::bool::weighted(0.1)) {
        let now = Timestamp::from_unix(1_790_000_000).unwrap();
        let reports: Vec<Report> = ks.iter().map(|k| build(k, now)).collect();
        let targets: Vec<Target> = (0..reports.len())
            .map(|i| Target { asset: reports[i].asset.clone(), contract: [i as u8; 32] })
            .collect();
        let expected: Vec<bool> = reports.iter().map(|r| attestable(r, now, 86_400)).collect();
        let (planned, slots) = plan(&targets, reports.iter().cloned().map(Ok).collect(), now, Freshness::default());
        let mut rec = Recording::default();
        let outcomes = execute(&planned, slots, &mut rec, 50, dry_run);
        let sent: Vec<Attestation> = rec.submitted.iter().flatten().cloned().collect();
        if dry_run {
            prop_assert!(sent.is_empty(), "a dry run sent something");
        }
        for batch in &rec.submitted {
            prop_assert!(!batch.is_empty() && batch.len() <= 50);
        }
        for (i, ok) in expected.iter().enumerate() {
            let times = sent.iter().filter(|a| a.asset == [i as u8; 32]).count();
            if dry_run {
                prop_assert_eq!(matches!(outcomes[i], Outcome::Simulated { .. }), *ok);
            } else {
                prop_assert_eq!(times, usize::from(*ok), "asset {} attestable={} sent {} times: {:?}", i, ok, times, ks[i]);
                prop_assert_eq!(matches!(outcomes[i], Outcome::Written(_)), *ok);
            }
            if !ok {
                prop_assert!(matches!(outcomes[i], Outcome::Refused { .. }), "{:?}", outcomes[i]);
            }
        }
        // What was sent is exactly what the report says.
        for a in &sent {
            let r = &reports[a.asset[0] as usize];
            prop_assert_eq!(a.severity, r.severity.level().unwrap().level());
            prop_assert_eq!(a.flags, r.mechanics.bits());
        }
    }
}
