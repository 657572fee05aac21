//! Report JSON (schema_version 1), attestation refusals and freshness, transitions.

use crate::common;

use std::path::Path;

use assay_core::attestation::{attestation_params, Refusal};
use assay_core::hash::EvidenceVersion;
use assay_core::report::Freshness;
use assay_core::transitions::{transition, Attribution, Observation, TransitionState};
use assay_core::{evaluate, Rating, Report, Severity, State, Timestamp};

fn report(name: &str) -> Report {
    let dir = common::testdata().join("eval").join(name);
    evaluate(&common::subject(Path::new(&dir))).unwrap()
}

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

#[test]
fn json_keys_in_schema_order() {
    let json: serde_json::Value =
        serde_json::from_str(&report("usdc-revocable-regulated").to_json_pretty()).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // serde_json without preserve_order sorts keys; check the emitted text order instead.
    let text = report("usdc-revocable-regulated").to_json_pretty();
    let order = [
        "schema_version",
        "asset",
        "severity",
        "base_severity",
        "escalated",
        "accountability",
        "state",
        "stale",
        "undetermined",
        "undetermined_checks",
        "network",
        "checks",
        "mechanics",
        "who_can_act",
        "findings",
        "evidence",
        "observation_window_start",
        "observation_window_end",
        "scanned_at",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|k| {
            text.find(&format!("\n  \"{k}\":"))
                .unwrap_or_else(|| panic!("{k} missing"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "keys out of order: {positions:?}"
    );
    assert_eq!(keys.len(), order.len(), "{keys:?}");
    assert!(text.contains("\"undetermined_checks\": []"));
    assert!(text.contains("\"scanned_at\": \"2026-08-10T12:00:00Z\""));
}

#[test]
fn strict_parsing_rejects_what_it_does_not_know() {
    let good = report("aqua-clear-verified").to_json_pretty();
    assert!(Report::from_json(&good).is_ok());
    let cases = [
        ("\"schema_version\": 1", "\"schema_version\": 2"),
        ("\"severity\": \"clear\"", "\"severity\": \"none\""),
        (
            "\"scanned_at\": \"2026-08-10T12:00:00Z\"",
            "\"scanned_at\": \"2026-08-10T12:00:00.5Z\"",
        ),
        (
            "\"undetermined_checks\": []",
            "\"undetermined_checks\": null",
        ),
        ("\"stale\": false", "\"stale\": false, \"surprise\": 1"),
        ("\"escalated\": false", "\"escalated\": true"),
        ("\"state\": \"valid\"", "\"state\": \"unknown\""),
        ("\"mechanics\": []", "\"mechanics\": [\"flying\"]"),
        ("\"code\": \"AQUA\"", "\"code\": \"AQUA-X\""),
    ];
    for (from, to) in cases {
        assert!(good.contains(from), "{from}");
        let bad = good.replacen(from, to, 1);
        assert!(Report::from_json(&bad).is_err(), "accepted {to}");
    }
    assert!(Report::from_json("").is_err());
    assert!(Report::from_json("[]").is_err());
}

#[test]
fn unevaluated_writes_unknown_never_a_level() {
    let mut s = common::subject(&common::testdata().join("eval/aqua-clear-verified"));
    s.asset_flags = assay_core::FlagsOutcome::NotRead;
    let r = evaluate(&s).unwrap();
    assert_eq!(r.severity, Rating::Unevaluated);
    assert_eq!(r.state, State::Unknown);
    assert!(r.undetermined_checks.contains(&"capability".to_string()));
    let text = r.to_json_pretty();
    assert!(
        text.contains("\"severity\": \"unknown\"")
            && text.contains("\"base_severity\": \"unknown\"")
    );
    let back = Report::from_json(&text).unwrap();
    assert_eq!(back.severity, Rating::Unevaluated);
    let e = attestation_params(
        &back,
        r.scanned_at,
        Freshness::default(),
        EvidenceVersion::V3,
        false,
    )
    .unwrap_err();
    assert_eq!(e, Refusal::Unevaluated);
    assert_eq!(e.to_string(), "attest: capability axis was never evaluated, so there is no severity to attest: capability was never derived from issuer flags");
}

#[test]
fn refusals_in_order_with_exact_wording() {
    let scanned = t("2026-08-10T12:00:00Z");
    // Undetermined (outage) and also old: still undetermined, because an undetermined report never goes stale.
    let outage = report("doge-reputation-outage");
    let e = attestation_params(
        &outage,
        t("2026-12-01T00:00:00Z"),
        Freshness::default(),
        EvidenceVersion::V3,
        false,
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "attest: scan is undetermined, so there is nothing to attest: reputation could not complete");
    // No home_domain and no domain in the directory either: the blocklist cannot be keyed, so undetermined.
    let mut velo = common::subject(&common::testdata().join("eval/velo-no-home-domain"));
    if let assay_core::DirectoryOutcome::Listed(o) = &mut velo.directory {
        o.value.domain = None;
    }
    velo.blocklist = assay_core::BlocklistOutcome::SkippedNoHomeDomain;
    let velo = evaluate(&velo).unwrap();
    assert_eq!(
        attestation_params(
            &velo,
            scanned,
            Freshness::default(),
            EvidenceVersion::V3,
            false
        )
        .unwrap_err()
        .rule(),
        "undetermined"
    );

    // Stale strictly past the window.
    let aqua = report("aqua-clear-verified");
    assert!(attestation_params(
        &aqua,
        scanned.plus_seconds(86_400),
        Freshness::default(),
        EvidenceVersion::V3,
        false
    )
    .is_ok());
    let e = attestation_params(
        &aqua,
        scanned.plus_seconds(86_401),
        Freshness::default(),
        EvidenceVersion::V3,
        false,
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "attest: report is stale, so it cannot be attested as fresh: verdict age 24h0m1s exceeds policy window 24h0m0s");
    // Configurable, and <= 0 disables.
    assert!(attestation_params(
        &aqua,
        scanned.plus_seconds(3_601),
        Freshness { window_secs: 3_600 },
        EvidenceVersion::V3,
        false
    )
    .is_err());
    assert!(attestation_params(
        &aqua,
        scanned.plus_seconds(99_999_999),
        Freshness { window_secs: 0 },
        EvidenceVersion::V3,
        false
    )
    .is_ok());
    // A report that already says stale, with no reason, uses the default reason.
    let mut marked = aqua.clone();
    marked.state = State::Stale;
    marked.stale = true;
    let e = attestation_params(
        &marked,
        scanned,
        Freshness::default(),
        EvidenceVersion::V3,
        false,
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "attest: report is stale, so it cannot be attested as fresh: verdict is older than freshness policy window");

    // Inconsistent: clawback bit below high.
    let mut bad = aqua.clone();
    bad.mechanics
        .set(assay_core::Mechanics::AUTH_CLAWBACK_ENABLED);
    let e = attestation_params(
        &bad,
        scanned,
        Freshness::default(),
        EvidenceVersion::V3,
        false,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "attest: attestation violates the confiscation invariant: clawback bit set at severity 2"
    );
    // Stale outranks inconsistent; unevaluated outranks stale.
    assert_eq!(
        attestation_params(
            &bad,
            scanned.plus_seconds(90_000),
            Freshness::default(),
            EvidenceVersion::V3,
            false
        )
        .unwrap_err()
        .rule(),
        "stale"
    );
}

#[test]
fn params_for_attestable_reports() {
    let scanned = t("2026-08-10T12:00:00Z");
    let doge = report("doge-noflags-malicious");
    let p = attestation_params(
        &doge,
        scanned,
        Freshness::default(),
        EvidenceVersion::V3,
        true,
    )
    .unwrap();
    assert_eq!(
        (p.severity, p.flags, p.severity_name.as_str()),
        (4, 50, "critical")
    );
    // The one capability bit is the latent freeze the ledger grants (flags not locked, a key can sign);
    // the escalation added none.
    assert_eq!(
        p.flags & assay_core::Mechanics::CAPABILITY_MASK,
        assay_core::Mechanics::AUTH_REVOCABLE
    );
    let pre = p.preimage.clone().unwrap();
    assert!(pre.starts_with("assay-evidence-v3\nasset\tDOGE-"));
    assert!(pre.contains("\nnetwork\tPublic Global Stellar Network ; September 2015\n"));
    assert_eq!(p.raw_line(), format!("4\t50\t{}\n", p.evidence_hash));
    let v1 = attestation_params(
        &doge,
        scanned,
        Freshness::default(),
        EvidenceVersion::V1,
        true,
    )
    .unwrap();
    assert!(!v1.preimage.unwrap().contains("checks\t"));
    assert_ne!(v1.evidence_hash, p.evidence_hash);
    // Retrieval times and requested_url are outside the hash.
    let mut moved = doge.clone();
    for e in &mut moved.evidence {
        e.retrieved_at = e.retrieved_at.plus_seconds(60);
        e.requested_url = Some("https://elsewhere.example/".into());
    }
    assert_eq!(
        attestation_params(
            &moved,
            scanned,
            Freshness::default(),
            EvidenceVersion::V3,
            false
        )
        .unwrap()
        .evidence_hash,
        p.evidence_hash
    );
}

fn obs(at: &str, base: Severity, sev: Severity, bits: u32, undetermined: bool) -> Observation {
    Observation {
        asset: "X-G".into(),
        at: t(at),
        mechanics: assay_core::Mechanics::from_bits(bits).unwrap(),
        base_severity: Rating::Level(base),
        severity: Rating::Level(sev),
        undetermined,
        undetermined_checks: if undetermined {
            vec!["reputation".into()]
        } else {
            vec![]
        },
    }
}

#[test]
fn transitions() {
    use Severity::*;
    assert_eq!(transition(&[]).state, TransitionState::Missing);
    assert_eq!(
        transition(&[obs("2026-08-10T00:00:00Z", Clear, Clear, 0, false)]).state,
        TransitionState::Missing
    );
    let a = obs("2026-08-10T00:00:00Z", Medium, Medium, 2, false);
    let b = obs("2026-08-11T00:00:00Z", High, High, 6, false);
    let t1 = transition(&[b.clone(), a.clone()]);
    assert_eq!(t1.state, TransitionState::Valid);
    assert_eq!(t1.added.names(), ["auth_clawback_enabled"]);
    assert!(t1.removed.names().is_empty());
    assert_eq!(t1.attribution, Some(Attribution::Capability));
    let c = obs("2026-08-12T00:00:00Z", High, Critical, 38, false);
    assert_eq!(
        transition(&[b.clone(), c.clone()]).attribution,
        Some(Attribution::Reputation)
    );
    assert!(
        transition(&[b.clone(), c.clone()]).added.names().is_empty(),
        "the blocklisted bit is not a capability"
    );
    let d = obs("2026-08-13T00:00:00Z", Clear, Critical, 32, false);
    let t2 = transition(&[b.clone(), d]);
    assert_eq!(t2.attribution, Some(Attribution::Both));
    assert_eq!(
        t2.removed.names(),
        ["auth_revocable", "auth_clawback_enabled"]
    );
    assert_eq!(
        transition(&[a.clone(), a.clone()]).state,
        TransitionState::Unknown
    );
    let u = obs("2026-08-14T00:00:00Z", High, High, 6, true);
    assert_eq!(transition(&[b.clone(), u]).state, TransitionState::Unknown);
    let same = obs("2026-08-14T00:00:00Z", High, High, 6, false);
    assert_eq!(transition(&[b, same]).attribution, Some(Attribution::None));
}

#[test]
fn v6_binds_the_signers_line_and_earlier_versions_leave_it_out() {
    use assay_core::evidence::SOURCE_ISSUER_SIGNERS;
    use assay_core::hash::{evidence_hash, PreimageInput};
    // USDC holds auth_revocable: its verdict is the same under the latent-freeze rule, so an attestation
    // written in v3 before signers were read must still be reproduced by a fresh scan.
    let r = report("usdc-revocable-regulated");
    assert_eq!(r.who_can_act.as_deref(), Some("1 key"));
    assert!(r.evidence.iter().any(|e| e.source == SOURCE_ISSUER_SIGNERS
        && e.claim.ends_with("who can use the issuer's powers: 1 key")));
    let at = r.scanned_at;
    let v6 = attestation_params(&r, at, Freshness::default(), EvidenceVersion::V6, true).unwrap();
    assert_eq!(v6.evidence_version, 6);
    assert!(v6
        .preimage
        .as_deref()
        .unwrap()
        .contains("horizon/account/signers"));
    let v3 = attestation_params(&r, at, Freshness::default(), EvidenceVersion::V3, true).unwrap();
    assert!(!v3
        .preimage
        .as_deref()
        .unwrap()
        .contains("horizon/account/signers"));
    // The v3 hash is the one of the report without the line (what a scan before signers produced).
    let mut old = PreimageInput::from_report(&r).unwrap();
    old.evidence.retain(|(s, _, _)| s != SOURCE_ISSUER_SIGNERS);
    assert_eq!(v3.evidence_hash, evidence_hash(&old, EvidenceVersion::V3));
    assert_ne!(v3.evidence_hash, v6.evidence_hash);
    assert_eq!(EvidenceVersion::default_for(&r.asset), EvidenceVersion::V8);
    assert_eq!(
        EvidenceVersion::candidates_for(&r.asset)[..3],
        [
            EvidenceVersion::V8,
            EvidenceVersion::V7,
            EvidenceVersion::V6
        ]
    );
    // v7 binds the signers line too, with the Horizon endpoint out of it.
    let v7 = attestation_params(&r, at, Freshness::default(), EvidenceVersion::V7, true).unwrap();
    let v7_text = v7.preimage.unwrap();
    assert!(v7_text.contains("\thorizon:/accounts/"), "{v7_text}");
    assert!(!v7_text.contains("horizon.stellar.org"), "{v7_text}");
    assert_eq!("v6".parse::<EvidenceVersion>(), Ok(EvidenceVersion::V6));
}
