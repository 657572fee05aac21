//! Check behaviour beyond the eval set: asset lists, refusals, redirects, unknown tags, partial outages.

use crate::common;

use assay_core::subject::*;
use assay_core::{
    evaluate, Accountability, FailureCategory, FetchFailure, Mechanics, Rating, Severity, State,
    Timestamp,
};

fn at() -> Timestamp {
    "2026-08-10T12:00:00Z".parse().unwrap()
}

fn aqua() -> Subject {
    common::subject(&common::testdata().join("eval/aqua-clear-verified"))
}

fn doge() -> Subject {
    common::subject(&common::testdata().join("eval/doge-noflags-malicious"))
}

fn claims(r: &assay_core::Report) -> Vec<String> {
    r.evidence
        .iter()
        .map(|e| format!("{} | {}", e.source, e.claim))
        .collect()
}

#[test]
fn asset_lists_are_evidence_only() {
    let mut s = doge();
    s.asset_lists = vec![
        AssetListOutcome {
            url: "https://lists.example/top.json".into(),
            retrieved_at: at(),
            result: AssetListResult::Read {
                list_name: "Top Assets".into(),
                entry: Some(ListEntry {
                    name: Some("Doge".into()),
                    org: Some("Nobody".into()),
                    domain: None,
                }),
            },
        },
        AssetListOutcome {
            url: "https://lists.example/other.json".into(),
            retrieved_at: at(),
            result: AssetListResult::Read {
                list_name: "Other".into(),
                entry: None,
            },
        },
        AssetListOutcome {
            url: "https://lists.example/down.json".into(),
            retrieved_at: at(),
            result: AssetListResult::Failed(FetchFailure::new(FailureCategory::Status(502))),
        },
    ];
    let r = evaluate(&s).unwrap();
    // Inclusion never lowers: still critical. A list failure never makes the report undetermined.
    assert_eq!(r.severity, Rating::Level(Severity::Critical));
    assert_eq!(r.state, State::Valid);
    let c = claims(&r);
    assert!(c.contains(&r#"asset-list/Top Assets | listed as "Doge" (org "Nobody", domain "") in list "Top Assets""#.to_string()), "{c:#?}");
    assert!(c.contains(&r#"asset-list/Other | not present in list "Other""#.to_string()));
    assert!(c.contains(&"asset-list | not retrievable: status 502".to_string()));
    let rep = r.findings.iter().find(|f| f.check == "reputation").unwrap();
    assert!(
        rep.reasoning
            .contains("disagree and Assay leaves it unresolved"),
        "{}",
        rep.reasoning
    );

    // On a clean asset, lists disagreeing with each other are reported, and nothing moves.
    let mut a = aqua();
    a.asset_lists = s.asset_lists[..2].to_vec();
    let ra = evaluate(&a).unwrap();
    // AQUA's level is its latent freeze (medium); the lists move nothing.
    assert_eq!(ra.severity, evaluate(&aqua()).unwrap().severity);
    let rep = ra
        .findings
        .iter()
        .find(|f| f.check == "reputation")
        .unwrap();
    assert!(
        rep.reasoning
            .contains("present in Top Assets, absent from Other"),
        "{}",
        rep.reasoning
    );
    let entry = ListEntry::default();
    assert_eq!(
        assay_core::evidence::claims::list_present("L", &entry),
        r#"present in list "L""#
    );
}

#[test]
fn refused_toml_is_attributed_and_unverified() {
    let mut s = aqua();
    s.stellar_toml = TomlOutcome::Refused {
        requested_url: "https://aqua.network/.well-known/stellar.toml".into(),
        retrieved_at: at(),
        reason: "redirect to evil.example leaves aqua.network".into(),
    };
    let r = evaluate(&s).unwrap();
    assert_eq!(r.accountability, Accountability::Unverified);
    let e = r
        .evidence
        .iter()
        .find(|e| e.source == "stellar.toml")
        .unwrap();
    assert_eq!(
        e.claim,
        "refused: redirect to evil.example leaves aqua.network"
    );
    assert!(e.attempted && e.refused);
    assert_eq!(e.url, "https://aqua.network/.well-known/stellar.toml");
    assert!(r.to_json_pretty().contains("\"refused\": true"));
}

#[test]
fn redirected_toml_records_both_urls() {
    let mut s = aqua();
    if let TomlOutcome::Document(d) = &mut s.stellar_toml {
        d.url = "https://www.aqua.network/.well-known/stellar.toml".into();
    }
    let r = evaluate(&s).unwrap();
    let e = r
        .evidence
        .iter()
        .find(|e| e.source == "stellar.toml")
        .unwrap();
    assert_eq!(e.url, "https://www.aqua.network/.well-known/stellar.toml");
    assert_eq!(
        e.requested_url.as_deref(),
        Some("https://aqua.network/.well-known/stellar.toml")
    );
    assert_eq!(r.accountability, Accountability::Verified);
}

#[test]
fn unknown_tags_are_recorded_not_scored() {
    let mut s = aqua();
    if let DirectoryOutcome::Listed(o) = &mut s.directory {
        o.value.tags.push("suspicious-ish".into());
    }
    let r = evaluate(&s).unwrap();
    assert_eq!(r.severity, evaluate(&aqua()).unwrap().severity);
    assert!(claims(&r).iter().any(|c| c
        .starts_with("stellar.expert/directory | unrecognised directory tag \"suspicious-ish\"")));
}

#[test]
fn a_hit_escalates_even_when_the_other_source_is_down() {
    let mut s = doge();
    s.blocklist = BlocklistOutcome::Failed(Attempt {
        url: "https://se/b".into(),
        retrieved_at: at(),
        failure: FetchFailure::new(FailureCategory::Timeout),
    });
    let r = evaluate(&s).unwrap();
    assert_eq!(r.severity, Rating::Level(Severity::Critical));
    assert!(
        !r.undetermined,
        "critical is the ceiling; nothing missing could raise it"
    );
    assert!(claims(&r)
        .contains(&"stellar.expert/blocked-domains | not retrievable: timeout".to_string()));

    // A blocklist hit with the directory down escalates too, with the unverified caveat.
    let mut s = aqua();
    s.directory = DirectoryOutcome::Failed(Attempt {
        url: "https://se/d".into(),
        retrieved_at: at(),
        failure: FetchFailure::new(FailureCategory::Status(429)),
    });
    s.blocklist = BlocklistOutcome::Answered(Observed {
        url: "https://se/b".into(),
        retrieved_at: at(),
        value: BlocklistAnswer {
            domain: "aqua.network".into(),
            blocked: true,
        },
    });
    s.stellar_toml = TomlOutcome::NotFetched;
    let r = evaluate(&s).unwrap();
    assert_eq!(r.severity, Rating::Level(Severity::Critical));
    assert!(r.mechanics.has(Mechanics::BLOCKLISTED));
    let rep = r.findings.iter().find(|f| f.check == "reputation").unwrap();
    assert!(
        rep.reasoning
            .contains("caveat: this domain has not reciprocally claimed the asset"),
        "{}",
        rep.reasoning
    );
}

#[test]
fn directory_not_listed_is_not_an_observation_but_a_failure_is_a_gap() {
    let mut s = aqua();
    s.directory = DirectoryOutcome::NotListed {
        url: "https://se/d".into(),
        retrieved_at: at(),
    };
    let r = evaluate(&s).unwrap();
    assert_eq!(r.state, State::Valid);
    assert!(
        !r.evidence
            .iter()
            .any(|e| e.source == "stellar.expert/directory"),
        "not listed writes no line (#25)"
    );
    s.directory = DirectoryOutcome::Failed(Attempt {
        url: "https://se/d".into(),
        retrieved_at: at(),
        failure: FetchFailure::new(FailureCategory::Status(503)),
    });
    let r = evaluate(&s).unwrap();
    assert_eq!(r.state, State::Unknown);
    assert_eq!(r.undetermined_checks, ["reputation"]);
    assert_eq!(
        r.undetermined_by_source.get("stellar.expert/directory"),
        Some(&1)
    );
    assert_ne!(
        r.to_json_pretty(),
        evaluate(&aqua()).unwrap().to_json_pretty()
    );
}

#[test]
fn an_unread_account_copy_makes_capability_a_floor() {
    let mut s = common::subject(&common::testdata().join("eval/usdz-clawback-verified"));
    s.account_flags = FlagsOutcome::Failed(Attempt {
        url: "https://h/accounts/X".into(),
        retrieved_at: at(),
        failure: FetchFailure::new(FailureCategory::Status(404)),
    });
    s.home_domain = HomeDomain::Unknown;
    let r = evaluate(&s).unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::High));
    assert!(r.undetermined_checks.contains(&"capability".to_string()));
    assert_eq!(r.state, State::Unknown);
    assert!(claims(&r).contains(&"horizon/account | not retrievable: status 404".to_string()));
}

#[test]
fn links_beyond_the_bound_and_not_followed() {
    let asset = Asset::new(
        "LINKU",
        "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA",
    )
    .unwrap();
    let mut s = aqua();
    s.asset = asset.clone();
    let links: Vec<String> = (0..10)
        .map(|i| format!("https://x.example/{i}.toml"))
        .collect();
    let currencies: Vec<Currency> = links
        .iter()
        .map(|l| Currency {
            toml: Some(l.clone()),
            ..Default::default()
        })
        .collect();
    let doc = |linked: Vec<LinkedDocument>| {
        TomlOutcome::Document(TomlDocument {
            requested_url: "https://aqua.network/.well-known/stellar.toml".into(),
            url: "https://aqua.network/.well-known/stellar.toml".into(),
            retrieved_at: at(),
            currencies: currencies.clone(),
            linked,
        })
    };
    s.stellar_toml = doc(vec![]);
    let r = evaluate(&s).unwrap();
    assert!(claims(&r).contains(&format!("stellar.toml | CURRENCIES lists 10 entries, none matching {asset} inline; 10 are links not followed")));
    let linked = links
        .iter()
        .enumerate()
        .map(|(i, l)| LinkedDocument {
            url: l.clone(),
            outcome: if i < MAX_LINKED_DOCUMENTS {
                LinkedOutcome::Read {
                    retrieved_at: at(),
                    currencies: vec![],
                }
            } else {
                LinkedOutcome::NotFollowed
            },
        })
        .collect();
    s.stellar_toml = doc(linked);
    let r = evaluate(&s).unwrap();
    assert!(claims(&r).contains(&format!("stellar.toml | CURRENCIES lists 10 entries, none matching {asset} inline; 2 linked documents left unread (bound: 8)")));
    assert_eq!(r.accountability, Accountability::Unverified);
    let all_read = links
        .iter()
        .map(|l| LinkedDocument {
            url: l.clone(),
            outcome: LinkedOutcome::Read {
                retrieved_at: at(),
                currencies: vec![],
            },
        })
        .collect();
    s.stellar_toml = doc(all_read);
    let r = evaluate(&s).unwrap();
    assert!(claims(&r).contains(&format!(
        "stellar.toml | CURRENCIES lists 10 entries and 10 linked documents, none matching {asset}"
    )));
}

/// AQUA's recorded subject with these signers (weights by key) and thresholds, and these flags on both
/// copies.
fn with_control(flags: IssuerFlags, signers: &[(&str, u32)], thresholds: [u32; 3]) -> Subject {
    let mut s = aqua();
    for copy in [&mut s.asset_flags, &mut s.account_flags] {
        if let FlagsOutcome::Read(o) = copy {
            o.value = flags;
        }
    }
    s.issuer_control = ControlOutcome::Read(Observed {
        url: format!("https://horizon.stellar.org/accounts/{}", s.asset.issuer),
        retrieved_at: at(),
        value: AccountControl {
            signers: signers
                .iter()
                .map(|(key, weight)| AccountSigner {
                    key: key.to_string(),
                    kind: "ed25519_public_key".into(),
                    weight: *weight,
                })
                .collect(),
            low: thresholds[0],
            medium: thresholds[1],
            high: thresholds[2],
        },
    });
    s
}

fn capability(r: &assay_core::Report) -> &assay_core::Finding {
    r.findings.iter().find(|f| f.check == "capability").unwrap()
}

#[test]
fn an_unlocked_issuer_that_can_sign_holds_the_freeze() {
    let none = IssuerFlags::default();
    let r = evaluate(&with_control(none, &[("GA", 1)], [0, 0, 0])).unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::Medium));
    assert!(r.mechanics.has(Mechanics::AUTH_REVOCABLE));
    assert_eq!(r.who_can_act.as_deref(), Some("1 key"));
    let reasoning = &capability(&r).reasoning;
    assert!(
        reasoning.contains("can freeze any holder at any time: its flags are not locked"),
        "{reasoning}"
    );
    assert!(claims(&r).iter().any(|c| c
        == "horizon/account/signers | signers: GA weight 1 (ed25519_public_key); thresholds: low 0, medium 0, high 0; who can use the issuer's powers: 1 key"));
    // The mutability text no longer says a later flag misses existing trustlines for a freeze.
    let m = r.findings.iter().find(|f| f.check == "mutability").unwrap();
    assert!(
        m.reasoning.contains("existing trustlines included"),
        "{}",
        m.reasoning
    );
    assert!(!m.reasoning.contains("does not reach existing trustlines"));

    // auth_required alone: the latent freeze still lifts it to medium.
    let required = IssuerFlags {
        auth_required: true,
        ..none
    };
    let r = evaluate(&with_control(
        required,
        &[("GA", 1), ("GB", 1), ("GC", 1)],
        [2, 2, 2],
    ))
    .unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::Medium));
    assert_eq!(r.who_can_act.as_deref(), Some("2 of 3 keys"));
    assert!(r
        .mechanics
        .has(Mechanics::AUTH_REQUIRED | Mechanics::AUTH_REVOCABLE));

    // Who can sign not known (a trimmed record): the stricter answer stands.
    let mut s = with_control(none, &[], [0, 0, 0]);
    s.issuer_control = ControlOutcome::Missing {
        url: "https://horizon.stellar.org/accounts/X".into(),
        retrieved_at: at(),
    };
    let r = evaluate(&s).unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::Medium));
    assert!(r.who_can_act.as_deref().unwrap().starts_with("not known"));
    assert!(claims(&r).iter().any(|c| c.starts_with(
        "horizon/account/signers | signers and thresholds: not in the account record"
    )));
}

#[test]
fn immutable_or_locked_issuers_without_revocable_stay_clear() {
    let immutable = IssuerFlags {
        auth_immutable: true,
        ..Default::default()
    };
    let r = evaluate(&with_control(immutable, &[("GA", 1)], [0, 0, 0])).unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::Clear));
    assert_eq!(r.mechanics.capabilities().bits(), 0);

    // Master weight 0, no other signer: locked for good, shown as such.
    let r = evaluate(&with_control(
        IssuerFlags::default(),
        &[("GA", 0)],
        [0, 0, 0],
    ))
    .unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::Clear));
    assert_eq!(r.mechanics.capabilities().bits(), 0);
    assert_eq!(
        r.who_can_act.as_deref(),
        Some("locked: no signer can reach the threshold")
    );
    assert!(capability(&r).reasoning.contains("dormant for good"));

    // Only one copy says immutable: the lock is not claimed, so the freeze counts.
    let mut s = with_control(immutable, &[("GA", 1)], [0, 0, 0]);
    if let FlagsOutcome::Read(o) = &mut s.account_flags {
        o.value.auth_immutable = false;
    }
    let r = evaluate(&s).unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::Medium));
}

#[test]
fn a_locked_issuer_keeps_the_powers_its_flags_hold() {
    // Nothing lowers severity: auth_revocable on a locked account is still bit 1 and medium.
    let revocable = IssuerFlags {
        auth_revocable: true,
        ..Default::default()
    };
    let r = evaluate(&with_control(revocable, &[("GA", 0)], [0, 0, 0])).unwrap();
    assert_eq!(r.base_severity, Rating::Level(Severity::Medium));
    assert!(r.mechanics.has(Mechanics::AUTH_REVOCABLE));
    assert_eq!(
        r.who_can_act.as_deref(),
        Some("locked: no signer can reach the threshold")
    );
}

#[test]
fn capability_is_unmoved_by_attribution_under_the_latent_rule() {
    // The same flags and signers with and without every trace of attribution: the same base severity.
    let s = with_control(IssuerFlags::default(), &[("GA", 1)], [0, 0, 0]);
    let mut stripped = s.clone();
    stripped.home_domain = HomeDomain::Absent;
    stripped.stellar_toml = TomlOutcome::NotFetched;
    stripped.directory = DirectoryOutcome::NotAsked;
    stripped.blocklist = BlocklistOutcome::SkippedNoHomeDomain;
    assert_eq!(
        evaluate(&s).unwrap().base_severity,
        evaluate(&stripped).unwrap().base_severity
    );
}

/// VELO (no home_domain; the directory lists it under velo.org) with the blocklist's answer for that domain.
fn velo_with_directory_domain(domain: Option<&str>, blocked: Option<bool>) -> Subject {
    let mut s = common::subject(&common::testdata().join("eval/velo-no-home-domain"));
    assert_eq!(s.home_domain, HomeDomain::Absent);
    if let DirectoryOutcome::Listed(o) = &mut s.directory {
        o.value.domain = domain.map(str::to_string);
    }
    s.blocklist = match (domain, blocked) {
        (Some(d), Some(blocked)) => BlocklistOutcome::Answered(Observed {
            url: format!("https://api.stellar.expert/explorer/directory/blocked-domains/{d}"),
            retrieved_at: at(),
            value: BlocklistAnswer {
                domain: d.to_string(),
                blocked,
            },
        }),
        _ => BlocklistOutcome::SkippedNoHomeDomain,
    };
    s
}

#[test]
fn without_a_home_domain_the_blocklist_is_keyed_on_the_directorys_domain() {
    // The key: home_domain first, the directory's domain when there is none, else nothing.
    let s = common::subject(&common::testdata().join("eval/velo-no-home-domain"));
    assert_eq!(
        assay_core::checks::blocklist_key(&s.home_domain, &s.directory).as_deref(),
        Some("velo.org")
    );
    assert_eq!(
        assay_core::checks::blocklist_key(&HomeDomain::Present("a.example".into()), &s.directory)
            .as_deref(),
        Some("a.example")
    );
    assert_eq!(
        assay_core::checks::blocklist_key(&HomeDomain::Absent, &DirectoryOutcome::NotAsked),
        None
    );

    // A blocklisted directory domain escalates, with the link stated.
    let r = evaluate(&velo_with_directory_domain(
        Some("hiddenstellar.com"),
        Some(true),
    ))
    .unwrap();
    assert_eq!(r.severity, Rating::Level(Severity::Critical));
    assert!(r.escalated && r.mechanics.has(Mechanics::BLOCKLISTED));
    let rep = r.findings.iter().find(|f| f.check == "reputation").unwrap();
    assert!(
        rep.reasoning
            .contains("the domain StellarExpert's directory lists the issuer under"),
        "{}",
        rep.reasoning
    );

    // A clean directory domain with every other source answered: determined, and attestable.
    let r = evaluate(&velo_with_directory_domain(Some("velo.org"), Some(false))).unwrap();
    assert!(!r.undetermined, "{:?}", r.undetermined_checks);
    assert_eq!(r.state, State::Valid);
    let p = assay_core::attestation_params(
        &r,
        r.scanned_at,
        assay_core::Freshness::default(),
        assay_core::EvidenceVersion::V6,
        false,
    );
    assert!(p.is_ok(), "{p:?}");

    // No domain anywhere: the lookup cannot be keyed, and that is a gap.
    let r = evaluate(&velo_with_directory_domain(None, None)).unwrap();
    assert_eq!(r.undetermined_checks, ["reputation"]);
}

#[test]
fn a_holders_trustline_sets_bits_6_and_7_and_is_never_attested() {
    use assay_core::checks::HolderTrustline;
    let s = common::subject(&common::testdata().join("eval/usdz-clawback-verified"));
    let line = |authorized: bool, clawback_enabled: bool| HeldTrustline {
        asset: s.asset.clone(),
        balance: "5.0000000".into(),
        authorized,
        authorized_to_maintain_liabilities: false,
        clawback_enabled,
    };
    let run = |trustlines: Vec<HeldTrustline>| {
        let mut checks = assay_core::checks::default_checks();
        checks.push(Box::new(HolderTrustline {
            holder: "GHOLDER".into(),
            url: "https://horizon.stellar.org/accounts/GHOLDER".into(),
            retrieved_at: at(),
            trustlines,
        }));
        assay_core::Engine::with_checks(checks).run(&s).unwrap()
    };
    let base = evaluate(&s).unwrap();
    let r = run(vec![line(false, true)]);
    assert!(r
        .mechanics
        .has(Mechanics::TRUSTLINE_CLAWBACK_ENABLED | Mechanics::TRUSTLINE_DEAUTHORIZED));
    // The holder's bits move no level.
    assert_eq!(
        (r.severity, r.base_severity),
        (base.severity, base.base_severity)
    );
    assert!(claims(&r)
        .iter()
        .any(|c| c.starts_with("horizon/holder | trustline to USDZ-")));
    let refusal = assay_core::attestation_params(
        &r,
        r.scanned_at,
        assay_core::Freshness::default(),
        assay_core::EvidenceVersion::V6,
        false,
    )
    .unwrap_err();
    assert_eq!(refusal.rule(), "holder");
    // A plain trustline: no bit, yet still a holder's report (the check ran), so never attested either.
    let r = run(vec![line(true, false)]);
    assert_eq!(r.mechanics.bits() & Mechanics::HOLDER_MASK, 0);
    assert_eq!(
        assay_core::attestation_params(
            &r,
            r.scanned_at,
            assay_core::Freshness::default(),
            assay_core::EvidenceVersion::V6,
            false
        )
        .unwrap_err()
        .rule(),
        "holder"
    );
    // No trustline to the asset: said so, no bit.
    let r = run(vec![]);
    assert!(claims(&r)
        .iter()
        .any(|c| c.starts_with("horizon/holder | no trustline to USDZ-")));
    assert_eq!(r.mechanics.bits() & Mechanics::HOLDER_MASK, 0);
}
