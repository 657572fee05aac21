//! Property tests over arbitrary subjects: the engine never panics, reports round-trip through JSON, and the
//! evidence hash ignores evidence order but moves with every hashed field.

use assay_core::hash::{evidence_hash, EvidenceVersion, PreimageInput};
use assay_core::subject::*;
use assay_core::{
    evaluate, Accountability, FailureCategory, FetchFailure, Report, Severity, Timestamp,
};
use proptest::prelude::*;

fn ts() -> impl Strategy<Value = Timestamp> {
    (1_700_000_000i64..1_900_000_000).prop_map(|s| Timestamp::from_unix(s).unwrap())
}

fn text() -> impl Strategy<Value = String> {
    // Includes quotes, backslashes, control characters, tabs, newlines and non-ASCII.
    proptest::string::string_regex("[a-z0-9.\"\\\\\t\n\r\u{1}é日\u{200b} -]{0,12}").unwrap()
}

fn failure() -> impl Strategy<Value = FetchFailure> {
    (
        prop_oneof![
            Just(FailureCategory::DnsFailure),
            Just(FailureCategory::ConnectionRefused),
            Just(FailureCategory::TlsFailure),
            Just(FailureCategory::Timeout),
            (100u16..600).prop_map(FailureCategory::Status),
            Just(FailureCategory::TooManyRedirects),
            Just(FailureCategory::BodyTooLarge),
            Just(FailureCategory::Malformed),
            Just(FailureCategory::UnknownFailure),
        ],
        text(),
    )
        .prop_map(|(c, d)| FetchFailure::with_detail(c, d))
}

fn flags() -> impl Strategy<Value = IssuerFlags> {
    any::<[bool; 4]>().prop_map(|b| IssuerFlags {
        auth_required: b[0],
        auth_revocable: b[1],
        auth_immutable: b[2],
        auth_clawback_enabled: b[3],
    })
}

fn attempt() -> impl Strategy<Value = Attempt> {
    (text(), ts(), failure()).prop_map(|(url, retrieved_at, failure)| Attempt {
        url,
        retrieved_at,
        failure,
    })
}

fn flags_outcome() -> impl Strategy<Value = FlagsOutcome> {
    prop_oneof![
        6 => (text(), ts(), flags()).prop_map(|(url, retrieved_at, value)| FlagsOutcome::Read(Observed { url, retrieved_at, value })),
        1 => attempt().prop_map(FlagsOutcome::Failed),
        1 => Just(FlagsOutcome::NotRead),
    ]
}

fn currency(code: String, issuer: String) -> impl Strategy<Value = Currency> {
    (
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(prop_oneof![
            Just("https://l.example/a.toml".to_string()),
            Just("https://l.example/b.toml".to_string()),
            text()
        ]),
    )
        .prop_map(move |(c, i, toml)| Currency {
            code: c.then(|| code.clone()),
            issuer: i.then(|| issuer.clone()),
            toml,
            contract: None,
        })
}

fn linked_outcome(code: String, issuer: String) -> impl Strategy<Value = LinkedOutcome> {
    prop_oneof![
        (
            ts(),
            proptest::collection::vec(currency(code, issuer), 0..3)
        )
            .prop_map(|(retrieved_at, currencies)| LinkedOutcome::Read {
                retrieved_at,
                currencies
            }),
        (ts(), failure()).prop_map(|(retrieved_at, failure)| LinkedOutcome::Failed {
            retrieved_at,
            failure
        }),
        (ts(), text()).prop_map(|(retrieved_at, reason)| LinkedOutcome::Refused {
            retrieved_at,
            reason
        }),
        Just(LinkedOutcome::NotFollowed),
    ]
}

fn toml(code: String, issuer: String) -> impl Strategy<Value = TomlOutcome> {
    let doc = (
        text(),
        text(),
        ts(),
        proptest::collection::vec(currency(code.clone(), issuer.clone()), 0..4),
        proptest::collection::vec(
            (
                prop_oneof![Just("https://l.example/a.toml".to_string()), text()],
                linked_outcome(code, issuer),
            ),
            0..3,
        ),
    )
        .prop_map(|(requested_url, url, retrieved_at, currencies, linked)| {
            TomlOutcome::Document(TomlDocument {
                requested_url,
                url,
                retrieved_at,
                currencies,
                linked: linked
                    .into_iter()
                    .map(|(url, outcome)| LinkedDocument { url, outcome })
                    .collect(),
            })
        });
    prop_oneof![
        Just(TomlOutcome::NotFetched),
        doc,
        (text(), ts(), failure()).prop_map(|(requested_url, retrieved_at, failure)| {
            TomlOutcome::Failed {
                requested_url,
                retrieved_at,
                failure,
            }
        }),
        (text(), ts(), text()).prop_map(|(requested_url, retrieved_at, reason)| {
            TomlOutcome::Refused {
                requested_url,
                retrieved_at,
                reason,
            }
        }),
    ]
}

fn directory() -> impl Strategy<Value = DirectoryOutcome> {
    let tags = proptest::collection::vec(
        prop_oneof![
            Just("malicious".to_string()),
            Just("unsafe".to_string()),
            Just("issuer".to_string()),
            text()
        ],
        0..3,
    );
    prop_oneof![
        (
            text(),
            ts(),
            text(),
            proptest::option::of(prop_oneof![Just("d.example".to_string()), text()]),
            tags
        )
            .prop_map(
                |(url, retrieved_at, name, domain, tags)| DirectoryOutcome::Listed(Observed {
                    url,
                    retrieved_at,
                    value: DirectoryEntry { name, domain, tags }
                })
            ),
        (text(), ts())
            .prop_map(|(url, retrieved_at)| DirectoryOutcome::NotListed { url, retrieved_at }),
        attempt().prop_map(DirectoryOutcome::Failed),
        Just(DirectoryOutcome::NotAsked),
    ]
}

fn blocklist() -> impl Strategy<Value = BlocklistOutcome> {
    prop_oneof![
        (text(), ts(), text(), any::<bool>()).prop_map(|(url, retrieved_at, domain, blocked)| {
            BlocklistOutcome::Answered(Observed {
                url,
                retrieved_at,
                value: BlocklistAnswer { domain, blocked },
            })
        }),
        attempt().prop_map(BlocklistOutcome::Failed),
        Just(BlocklistOutcome::SkippedNoHomeDomain),
    ]
}

fn lists() -> impl Strategy<Value = Vec<AssetListOutcome>> {
    let entry = (
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(text()),
    )
        .prop_map(|(name, org, domain)| ListEntry { name, org, domain });
    let result = prop_oneof![
        (text(), proptest::option::of(entry))
            .prop_map(|(list_name, entry)| AssetListResult::Read { list_name, entry }),
        failure().prop_map(AssetListResult::Failed),
    ];
    proptest::collection::vec(
        (text(), ts(), result).prop_map(|(url, retrieved_at, result)| AssetListOutcome {
            url,
            retrieved_at,
            result,
        }),
        0..3,
    )
}

fn subject() -> impl Strategy<Value = Subject> {
    let asset = Asset::new(
        "PROP",
        "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA",
    )
    .unwrap();
    let (code, issuer) = (asset.code.clone(), asset.issuer.clone());
    let issuer_answers = (
        flags_outcome(),
        flags_outcome(),
        prop_oneof![
            Just(HomeDomain::Absent),
            Just(HomeDomain::Unknown),
            prop_oneof![Just("d.example".to_string()), text()].prop_map(HomeDomain::Present)
        ],
    );
    let source_answers = (toml(code, issuer), directory(), blocklist(), lists());
    let provenance = (
        proptest::option::of(prop_oneof![
            Just(PUBNET_PASSPHRASE.to_string()),
            Just(TESTNET_PASSPHRASE.to_string())
        ]),
        proptest::option::of(text()),
        ts(),
    )
        .prop_map(|(network, scanner_version, scanned_at)| Provenance {
            network,
            scanner_version,
            scanned_at,
        });
    (issuer_answers, source_answers, provenance).prop_map(move |(issuer, sources, provenance)| {
        Subject::read(asset.clone(), issuer, sources, provenance)
    })
}

fn input() -> impl Strategy<Value = PreimageInput> {
    let sev = prop_oneof![
        Just(Severity::Clear),
        Just(Severity::Low),
        Just(Severity::Medium),
        Just(Severity::High),
        Just(Severity::Critical)
    ];
    let acc = prop_oneof![
        Just(Accountability::Verified),
        Just(Accountability::Unverified),
        Just(Accountability::Unknown)
    ];
    (
        text(),
        sev.clone(),
        sev,
        any::<bool>(),
        0u32..512,
        acc,
        proptest::collection::vec(text(), 0..3),
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::collection::vec((text(), text(), text()), 0..5),
    )
        .prop_map(
            |(
                asset,
                severity,
                base_severity,
                escalated,
                mechanics,
                accountability,
                checks,
                network,
                scanner,
                evidence,
            )| PreimageInput {
                asset,
                severity,
                base_severity,
                escalated,
                mechanics,
                accountability,
                checks,
                network,
                scanner,
                evidence,
            },
        )
}

fn version() -> impl Strategy<Value = EvidenceVersion> {
    prop_oneof![
        Just(EvidenceVersion::V1),
        Just(EvidenceVersion::V2),
        Just(EvidenceVersion::V3)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn engine_never_panics_and_reports_round_trip(s in subject()) {
        let report = evaluate(&s).expect("the default checks never break the engine's invariants");
        prop_assert!(report.validate().is_ok(), "{:?}", report.validate());
        let json = report.to_json_pretty();
        let back = Report::from_json(&json).expect("a produced report parses strictly");
        prop_assert_eq!(&back, &report);
        prop_assert_eq!(back.to_json_pretty(), json);
        // Escalation never sets a capability bit, and failures never read clean.
        for f in report.findings.iter().filter(|f| f.escalation) {
            prop_assert_eq!(f.mechanics.capabilities().bits(), 0);
        }
    }

    #[test]
    fn a_source_failure_never_reads_clean(s in subject(), age in 0i64..10_000_000, window in -5i64..200_000) {
        let mut report = evaluate(&s).unwrap();
        let required_missing = !matches!(s.asset_flags, FlagsOutcome::Read(_))
            || !matches!(s.account_flags, FlagsOutcome::Read(_))
            || matches!(s.directory, DirectoryOutcome::Failed(_) | DirectoryOutcome::NotAsked)
            || !matches!(s.blocklist, BlocklistOutcome::Answered(_));
        let critical = report.severity == assay_core::Rating::Level(Severity::Critical);
        if required_missing && !critical {
            prop_assert_eq!(report.state, assay_core::State::Unknown);
        }
        // Unknown never becomes valid or stale, whatever the clock and window say.
        let was_unknown = report.state == assay_core::State::Unknown;
        report.apply_freshness(report.scanned_at.plus_seconds(age), assay_core::report::Freshness { window_secs: window });
        if was_unknown {
            prop_assert_eq!(report.state, assay_core::State::Unknown);
            prop_assert!(!report.stale);
        } else if window > 0 && age > window {
            prop_assert_eq!(report.state, assay_core::State::Stale);
        } else {
            prop_assert_eq!(report.state, assay_core::State::Valid);
        }
        prop_assert!(report.validate().is_ok());
    }

    #[test]
    fn hash_ignores_evidence_order(p in input(), v in version(), seed in any::<u64>()) {
        let mut shuffled = p.clone();
        let n = shuffled.evidence.len();
        if n > 1 {
            let k = (seed as usize) % n;
            shuffled.evidence.rotate_left(k);
            shuffled.evidence.reverse();
        }
        prop_assert_eq!(evidence_hash(&p, v), evidence_hash(&shuffled, v));
    }

    #[test]
    fn hash_moves_with_every_hashed_field(p in input(), v in version(), extra in text()) {
        let h = evidence_hash(&p, v);
        let mut changes: Vec<PreimageInput> = Vec::new();
        let mut c = p.clone(); c.asset.push('x'); changes.push(c);
        let mut c = p.clone(); c.severity = if p.severity == Severity::Clear { Severity::Low } else { Severity::Clear }; changes.push(c);
        let mut c = p.clone(); c.base_severity = if p.base_severity == Severity::Clear { Severity::Low } else { Severity::Clear }; changes.push(c);
        let mut c = p.clone(); c.escalated = !p.escalated; changes.push(c);
        let mut c = p.clone(); c.mechanics ^= 1; changes.push(c);
        let mut c = p.clone(); c.accountability = if p.accountability == Accountability::Verified { Accountability::Unknown } else { Accountability::Verified }; changes.push(c);
        let mut c = p.clone(); c.evidence.push(("s".into(), "u".into(), extra.clone())); changes.push(c);
        if let Some(first) = p.evidence.first() {
            let mut c = p.clone(); c.evidence[0].0 = format!("{}x", first.0); changes.push(c);
            let mut c = p.clone(); c.evidence[0].1 = format!("{}x", first.1); changes.push(c);
            let mut c = p.clone(); c.evidence[0].2 = format!("{}x", first.2); changes.push(c);
        }
        if v >= EvidenceVersion::V2 {
            let mut c = p.clone(); c.checks.push("extra-check".into()); changes.push(c);
        }
        if v == EvidenceVersion::V3 {
            let mut c = p.clone(); c.network = Some(format!("{}x", p.network.clone().unwrap_or_default())); changes.push(c);
            let mut c = p.clone(); c.scanner = Some(format!("{}x", p.scanner.clone().unwrap_or_default())); changes.push(c);
        }
        for (i, c) in changes.iter().enumerate() {
            prop_assert_ne!(&evidence_hash(c, v), &h, "change #{} did not move the hash", i);
        }
    }
}
