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
    assert_eq!(ra.severity, Rating::Level(Severity::Clear));
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
    assert_eq!(r.severity, Rating::Level(Severity::Clear));
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
