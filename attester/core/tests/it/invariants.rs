//! The invariants the on-chain gate and the project's rules rest on.

use crate::common;

use assay_core::checks::default_checks;
use assay_core::engine::{assemble, Engine, EngineError};
use assay_core::finding::{Check, Finding};
use assay_core::model::{Mechanics, Rating, Severity, State};
use assay_core::report::Freshness;
use assay_core::subject::*;
use assay_core::{evaluate, FailureCategory, FetchFailure, Timestamp};

fn at() -> Timestamp {
    "2026-08-10T12:00:00Z".parse().unwrap()
}

/// Removes every trace of attribution: no home_domain, no toml, directory entries without name or domain,
/// no asset lists. Reputation observations (directory tags, a blocklist answer) are adverse evidence, not
/// attribution, and stay.
fn strip_attribution(s: &Subject) -> Subject {
    let mut s = s.clone();
    s.home_domain = HomeDomain::Absent;
    s.stellar_toml = TomlOutcome::NotFetched;
    if let DirectoryOutcome::Listed(o) = &mut s.directory {
        o.value.name.clear();
        o.value.domain = None;
    }
    s.asset_lists.clear();
    s
}

/// Removes reputation too: what is left is the flags.
fn strip_everything(s: &Subject) -> Subject {
    let mut s = strip_attribution(s);
    s.directory = DirectoryOutcome::NotListed {
        url: "https://api.stellar.expert/explorer/directory/X".into(),
        retrieved_at: at(),
    };
    s.blocklist = BlocklistOutcome::SkippedNoHomeDomain;
    s
}

fn hand_built(flags: IssuerFlags, tags: &[&str], blocked: Option<bool>) -> Subject {
    let asset = Asset::new(
        "HAND",
        "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA",
    )
    .unwrap();
    let obs = |url: &str| {
        FlagsOutcome::Read(Observed {
            url: url.into(),
            retrieved_at: at(),
            value: flags,
        })
    };
    Subject {
        asset,
        asset_flags: obs("https://h/assets"),
        account_flags: obs("https://h/accounts"),
        home_domain: HomeDomain::Present("hand.example".into()),
        issuer_control: ControlOutcome::NotRead,
        stellar_toml: TomlOutcome::Failed {
            requested_url: "https://hand.example/.well-known/stellar.toml".into(),
            retrieved_at: at(),
            failure: FetchFailure::new(FailureCategory::Status(404)),
        },
        directory: DirectoryOutcome::Listed(Observed {
            url: "https://se/explorer/directory/HAND".into(),
            retrieved_at: at(),
            value: DirectoryEntry {
                name: "Hand".into(),
                domain: Some("hand.example".into()),
                tags: tags.iter().map(|t| t.to_string()).collect(),
            },
        }),
        blocklist: match blocked {
            Some(b) => BlocklistOutcome::Answered(Observed {
                url: "https://se/blocked/hand.example".into(),
                retrieved_at: at(),
                value: BlocklistAnswer {
                    domain: "hand.example".into(),
                    blocked: b,
                },
            }),
            None => BlocklistOutcome::Failed(Attempt {
                url: "https://se/blocked/hand.example".into(),
                retrieved_at: at(),
                failure: FetchFailure::new(FailureCategory::Timeout),
            }),
        },
        asset_lists: vec![],
        network: None,
        scanner_version: None,
        scanned_at: at(),
        ledger_read: None,
    }
}

fn all_flag_sets() -> Vec<IssuerFlags> {
    (0u8..16)
        .map(|b| IssuerFlags {
            auth_required: b & 1 != 0,
            auth_revocable: b & 2 != 0,
            auth_immutable: b & 4 != 0,
            auth_clawback_enabled: b & 8 != 0,
        })
        .collect()
}

#[test]
fn stripping_attribution_never_changes_severity() {
    for dir in common::eval_dirs() {
        let s = common::subject(&dir);
        let full = evaluate(&s).unwrap();
        let stripped = evaluate(&strip_attribution(&s)).unwrap();
        assert_eq!(
            full.severity,
            stripped.severity,
            "{}: severity moved when attribution was stripped",
            common::name(&dir)
        );
        assert_eq!(
            full.base_severity,
            stripped.base_severity,
            "{}",
            common::name(&dir)
        );
        let bare = evaluate(&strip_everything(&s)).unwrap();
        assert_eq!(
            full.base_severity,
            bare.base_severity,
            "{}: base moved without reputation",
            common::name(&dir)
        );
    }
}

fn assert_no_capability_bits_from_escalation(report: &assay_core::Report, what: &str) {
    for f in report.findings.iter().filter(|f| f.escalation) {
        assert_eq!(
            f.mechanics.bits() & Mechanics::CAPABILITY_MASK,
            0,
            "{what}: escalation finding {} carries capability bits",
            f.check
        );
    }
    // The report's capability bits are exactly what the flags say.
    let caps = report
        .findings
        .iter()
        .filter(|f| !f.escalation)
        .fold(0, |m, f| m | f.mechanics.bits())
        & Mechanics::CAPABILITY_MASK;
    assert_eq!(
        report.mechanics.bits() & Mechanics::CAPABILITY_MASK,
        caps,
        "{what}"
    );
}

#[test]
fn escalation_never_sets_a_capability_bit() {
    for dir in common::eval_dirs() {
        assert_no_capability_bits_from_escalation(
            &evaluate(&common::subject(&dir)).unwrap(),
            &common::name(&dir),
        );
    }
    for flags in all_flag_sets() {
        for (tags, blocked) in [
            (&["malicious"][..], Some(false)),
            (&["unsafe", "issuer"][..], None),
            (&[][..], Some(true)),
        ] {
            let r = evaluate(&hand_built(flags, tags, blocked)).unwrap();
            assert_eq!(
                r.severity,
                Rating::Level(Severity::Critical),
                "{flags:?} {tags:?}"
            );
            assert!(r.escalated || r.base_severity == Rating::Level(Severity::Critical));
            assert!(r.mechanics.has(Mechanics::BLOCKLISTED));
            assert_no_capability_bits_from_escalation(
                &r,
                &format!("{flags:?} {tags:?} {blocked:?}"),
            );
            // Masked to capability bits, a reputation-only critical on an issuer that holds no power (no flag,
            // flags locked) shows no power (the gate must use the ceiling).
            if !flags.auth_required && !flags.auth_revocable && !flags.auth_clawback_enabled {
                let locked = IssuerFlags {
                    auth_immutable: true,
                    ..flags
                };
                let r = evaluate(&hand_built(locked, tags, blocked)).unwrap();
                assert_eq!(r.severity, Rating::Level(Severity::Critical));
                assert_eq!(r.mechanics.capabilities().bits(), 0);
            }
        }
    }
}

/// A deliberately bugged reputation check that sets the clawback bit when it escalates.
struct BuggedReputation;

impl Check for BuggedReputation {
    fn id(&self) -> &'static str {
        "reputation"
    }
    fn title(&self) -> &'static str {
        "Curated reputation signals"
    }
    fn run(&self, s: &Subject) -> Finding {
        let mut f = assay_core::checks::Reputation.run(s);
        f.mechanics.set(Mechanics::AUTH_CLAWBACK_ENABLED);
        f
    }
}

#[test]
fn a_bugged_escalation_is_an_error_not_masked() {
    let mut checks = default_checks();
    checks.pop();
    checks.push(Box::new(BuggedReputation));
    let engine = Engine::with_checks(checks);
    let s = hand_built(IssuerFlags::default(), &["malicious"], Some(false));
    match engine.run(&s) {
        Err(EngineError::EscalationSetsCapability { check, bits }) => {
            assert_eq!(check, "reputation");
            assert_eq!(bits, 4);
        }
        other => panic!("bugged finding was not rejected: {other:?}"),
    }
    // And the same guard on a finding assembled directly.
    let mut f = assay_core::checks::Reputation.run(&s);
    f.mechanics.set(Mechanics::AUTH_REQUIRED);
    assert!(matches!(
        assemble(&s, vec![f]),
        Err(EngineError::EscalationSetsCapability { bits: 1, .. })
    ));
    // A non-escalation finding may not claim critical.
    let mut cap = assay_core::checks::Capability.run(&s);
    cap.severity = Rating::Level(Severity::Critical);
    assert!(matches!(
        assemble(&s, vec![cap]),
        Err(EngineError::NonEscalationEscalates { .. })
    ));
}

#[test]
fn undetermined_or_unevaluated_never_becomes_valid_or_stale() {
    let mut unevaluated = hand_built(IssuerFlags::default(), &[], Some(false));
    unevaluated.asset_flags = FlagsOutcome::NotRead;
    let outage = hand_built(IssuerFlags::default(), &[], None);
    for (name, s) in [("unevaluated", unevaluated), ("outage", outage)] {
        let mut r = evaluate(&s).unwrap();
        assert_eq!(r.state, State::Unknown, "{name}");
        for age in [0, 1, 86_400, 86_401, 10_000_000] {
            for window in [0, 1, 86_400] {
                r.apply_freshness(
                    r.scanned_at.plus_seconds(age),
                    Freshness {
                        window_secs: window,
                    },
                );
                assert_eq!(r.state, State::Unknown, "{name} age {age} window {window}");
                assert!(!r.stale);
            }
        }
        // A file claiming otherwise is rejected.
        let mut forged = r.clone();
        forged.state = State::Valid;
        assert!(
            assay_core::Report::from_json(&serde_json::to_string(&forged).unwrap()).is_err(),
            "{name}"
        );
        forged.state = State::Stale;
        forged.stale = true;
        assert!(
            assay_core::Report::from_json(&serde_json::to_string(&forged).unwrap()).is_err(),
            "{name}"
        );
    }
}

type Mutation<'a> = Box<dyn Fn(&mut Subject) + 'a>;

/// Every way a source can fail, applied to every eval subject: none may yield a valid clear report.
#[test]
fn no_source_failure_yields_a_clean_report() {
    let fail = || FetchFailure::new(FailureCategory::Status(503));
    let att = |url: &str| Attempt {
        url: url.into(),
        retrieved_at: at(),
        failure: fail(),
    };
    for dir in common::eval_dirs() {
        let s = common::subject(&dir);
        let mutations: Vec<(&str, Mutation)> = vec![
            (
                "assets flags",
                Box::new(|s: &mut Subject| {
                    s.asset_flags = FlagsOutcome::Failed(att("https://h/a"))
                }),
            ),
            (
                "account flags",
                Box::new(|s: &mut Subject| {
                    s.account_flags = FlagsOutcome::Failed(att("https://h/acc"));
                    s.home_domain = HomeDomain::Unknown;
                }),
            ),
            (
                "directory",
                Box::new(|s: &mut Subject| {
                    s.directory = DirectoryOutcome::Failed(att("https://se/d"))
                }),
            ),
            (
                "blocklist",
                Box::new(|s: &mut Subject| {
                    s.blocklist = BlocklistOutcome::Failed(att("https://se/b"))
                }),
            ),
            (
                "stellar.toml",
                Box::new(|s: &mut Subject| {
                    if let Some(d) = s.home_domain.domain() {
                        s.stellar_toml = TomlOutcome::Failed {
                            requested_url: format!("https://{d}/.well-known/stellar.toml"),
                            retrieved_at: at(),
                            failure: fail(),
                        };
                    }
                }),
            ),
        ];
        for (what, mutate) in mutations {
            let mut m = s.clone();
            mutate(&mut m);
            let r = evaluate(&m).unwrap();
            let clean = r.state == State::Valid
                && r.severity == Rating::Level(Severity::Clear)
                && r.accountability == assay_core::Accountability::Verified;
            assert!(
                !clean,
                "{}: {what} failure rendered clean",
                common::name(&dir)
            );
            if what != "stellar.toml" {
                assert!(
                    r.severity == Rating::Level(Severity::Critical) || r.state == State::Unknown,
                    "{}: a {what} failure left a valid non-critical report",
                    common::name(&dir)
                );
            } else if r.state == State::Valid {
                assert!(
                    r.mechanics.has(Mechanics::DOMAIN_UNVERIFIED),
                    "{}",
                    common::name(&dir)
                );
            }
            // The failure is recorded as attributed evidence wherever the failed source was consulted. (A toml
            // is not consulted when there is no home_domain, or when the directory names a different domain.)
            let consulted = match what {
                "stellar.toml" => {
                    m.home_domain.domain().is_some()
                        && !r
                            .evidence
                            .iter()
                            .any(|e| e.claim.starts_with("listed under domain"))
                }
                "blocklist" => true,
                _ => true,
            };
            if consulted {
                assert!(
                    r.evidence
                        .iter()
                        .any(|e| e.attempted && e.claim == "not retrievable: status 503"),
                    "{}: {what} failure left no failure evidence",
                    common::name(&dir)
                );
            }
        }
    }
}
