//! Custom token contracts: each mechanics bit from what was observed (never from a name) and the floor it
//! implies, a discovery that did not cover the token is undetermined, accountability through the admin
//! account's home domain (never undetermined), the FAIL ceiling of the `sep41` check at the report level,
//! and a property: no contract-token report is attestable below a floor its bits imply.

use assay_core::checks::sep41::{Sep41Check, Sep41Row, Sep41Status};
use assay_core::contract::{
    evaluate_contract, AdminOutcome, CodeOutcome, ContractCode, ContractSubject, HostImport,
    PowersOutcome,
};
use assay_core::hash::EvidenceVersion;
use assay_core::powers::{
    Authority, FreezeScope, ObservedPower, PowerEffect, PowerSurvey, UnclassifiedWrite, BUDGET_CUT,
};
use assay_core::{
    attestation_params, Accountability, Attempt, Currency, FailureCategory, FetchFailure,
    Freshness, HomeDomain, Mechanics, Observed, Rating, Refusal, Severity, Timestamp, Token,
    TomlDocument, TomlOutcome,
};
use proptest::prelude::*;

const TOKEN: &str = "CA2E53VHFZ6YSWQIEIPBXJQGT6VW3VKWWZO555XKRQXYJ63GEBJJGHY7";
const ADMIN: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";

fn at() -> Timestamp {
    Timestamp::from_unix(1_786_771_651).unwrap()
}

fn code(imports: &[(&str, &str)], functions: &[&str]) -> CodeOutcome {
    CodeOutcome::Read(Observed {
        url: "http://rpc.example".into(),
        retrieved_at: at(),
        value: ContractCode {
            wasm_hash: "ab".repeat(32),
            imports: imports
                .iter()
                .map(|(m, n)| HostImport {
                    module: m.to_string(),
                    name: n.to_string(),
                })
                .collect(),
            functions: functions.iter().map(|f| f.to_string()).collect(),
            external_owner: None,
        },
    })
}

fn survey(powers: Vec<ObservedPower>) -> PowerSurvey {
    PowerSurvey {
        wasm_hash: "ab".repeat(32),
        ledger: 100,
        probed: vec!["rebalance".into()],
        invocations: 12,
        holders: vec![ADMIN.into()],
        powers,
        unclassified: vec![],
        cut: vec![],
        unobservable: None,
        reach: None,
    }
}

fn observed(s: PowerSurvey) -> PowersOutcome {
    PowersOutcome::Observed(Observed {
        url: "http://rpc.example".into(),
        retrieved_at: at(),
        value: s,
    })
}

fn admin_authority() -> Authority {
    Authority {
        address: ADMIN.into(),
        control: "1 key".into(),
        locked: false,
    }
}

/// A power `function` was seen to exercise with the admin's authorization.
fn power(function: &str, effect: PowerEffect) -> ObservedPower {
    ObservedPower {
        function: function.into(),
        authorized_by: vec![admin_authority()],
        effect,
        label: None,
        events: vec![],
        steps: vec![],
        usable_from: None,
    }
}

fn takes() -> PowerEffect {
    PowerEffect::TakesBalance {
        holder: ADMIN.into(),
        amount: "1".into(),
        moved_to: None,
    }
}

fn freezes() -> PowerEffect {
    PowerEffect::Freezes {
        holder: ADMIN.into(),
        scope: FreezeScope::OneAccount,
    }
}

fn creates() -> PowerEffect {
    PowerEffect::CreatesSupply {
        credited: ADMIN.into(),
        amount: "1".into(),
    }
}

/// A subject whose code was read and whose discovery observed `powers`.
fn subject_with(code: CodeOutcome, powers: Vec<ObservedPower>) -> ContractSubject {
    let mut s = subject(code);
    s.powers = observed(survey(powers));
    s
}

fn subject(code: CodeOutcome) -> ContractSubject {
    ContractSubject {
        contract: TOKEN.into(),
        code,
        powers: observed(survey(vec![])),
        admin: AdminOutcome::NoAdminFunction,
        home_domain: HomeDomain::Absent,
        account_url: None,
        stellar_toml: TomlOutcome::NotFetched,
        network: Some("Standalone Network ; February 2017".into()),
        scanner_version: Some("v0.1.0".into()),
        scanned_at: at(),
    }
}

fn sep41(statuses: &[Sep41Status]) -> Sep41Check {
    Sep41Check {
        contract: TOKEN.into(),
        rows: statuses
            .iter()
            .enumerate()
            .map(|(i, s)| Sep41Row {
                id: format!("sep41-c{i}"),
                status: *s,
                detail: "requires d".into(),
            })
            .collect(),
        at: at(),
    }
}

fn claims(r: &assay_core::Report) -> Vec<&str> {
    r.evidence.iter().map(|e| e.claim.as_str()).collect()
}

/// Imports, observed powers, the bits and floor expected, and the evidence line that names them.
type Case = (
    &'static [(&'static str, &'static str)],
    Vec<ObservedPower>,
    u32,
    Severity,
    &'static str,
);

#[test]
fn each_bit_comes_from_what_was_observed_with_its_floor_and_an_evidence_line() {
    let cases: [Case; 7] = [
        (
            &[("l", "j")],
            vec![],
            Mechanics::CODE_MUTABLE,
            Severity::High,
            "imports l.j (update_current_contract_executable_ref): the code can be replaced",
        ),
        (&[], vec![], 0, Severity::Clear, ""),
        (
            &[("l", "6")],
            vec![],
            Mechanics::CODE_MUTABLE,
            Severity::High,
            "imports l.6 (update_current_contract_wasm): the code can be replaced",
        ),
        (
            &[],
            vec![power("rebalance", takes())],
            Mechanics::ADMIN_CLAWBACK,
            Severity::High,
            "rebalance authorized by GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN (1 key, 0 s): \
             a holder's balance fell by the units asked, without the holder's authorization; nobody was credited",
        ),
        (
            &[],
            vec![power("set_mode", freezes())],
            Mechanics::ADMIN_FREEZE,
            Severity::Medium,
            "set_mode authorized by GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN (1 key, 0 s): \
             a holder's transfer that succeeded before the call is refused after it; another holder's still succeeds",
        ),
        (
            &[],
            vec![ObservedPower {
                authorized_by: vec![],
                ..power("poke", freezes())
            }],
            Mechanics::ADMIN_FREEZE,
            Severity::Medium,
            "poke authorized by anyone (no authorization asked): a holder's transfer that succeeded before the \
             call is refused after it; another holder's still succeeds",
        ),
        (
            &[("x", "1")],
            vec![power("reward", creates())],
            Mechanics::ADMIN_MINT,
            Severity::Clear,
            "reward authorized by GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN (1 key, 0 s): \
             a balance rose by the units asked with no matching debit",
        ),
    ];
    for (imports, powers, bits, floor, line) in cases {
        let r = evaluate_contract(&subject_with(code(imports, &[]), powers), None).unwrap();
        assert_eq!(r.mechanics.bits(), bits, "{line}");
        assert_eq!(r.severity, Rating::Level(floor), "{line}");
        assert_eq!(r.base_severity, Rating::Level(floor));
        assert!(!r.escalated && !r.undetermined, "{line}");
        assert_eq!(r.asset, Token::Contract(TOKEN.into()));
        let c = claims(&r);
        assert!(
            c.contains(&format!("wasm {}", "ab".repeat(32)).as_str()),
            "{c:?}"
        );
        if !line.is_empty() {
            assert!(c.contains(&line), "{c:?}");
        }
        let p =
            attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V5, true).unwrap();
        assert_eq!((p.severity, p.flags), (floor.level(), bits));
        assert!(p.preimage.unwrap().starts_with(&format!(
            "assay-evidence-v5\nscanner\tv0.1.0\ntoken\t{TOKEN}\n"
        )));
    }
    // The strongest power decides; the others are still recorded.
    let r = evaluate_contract(
        &subject_with(
            code(&[("l", "6")], &[]),
            vec![power("reward", creates()), power("set_mode", freezes())],
        ),
        None,
    )
    .unwrap();
    assert_eq!(
        r.mechanics.names(),
        ["code_mutable", "admin_freeze", "admin_mint"]
    );
    assert_eq!(r.severity, Rating::Level(Severity::High));
}

#[test]
fn a_name_sets_no_bit_and_a_privileged_write_nobody_could_classify_sets_bit_13() {
    // Every name of the common vocabulary in the spec, nothing observed: clear.
    let names = [
        "clawback",
        "mint",
        "set_authorized",
        "freeze",
        "blacklist",
        "pause",
    ];
    let r = evaluate_contract(&subject(code(&[], &names)), None).unwrap();
    assert_eq!(r.mechanics.bits(), 0);
    assert_eq!(r.severity, Rating::Level(Severity::Clear));
    assert!(!r.undetermined);

    let mut s = subject(code(&[], &[]));
    let mut found = survey(vec![]);
    found.unclassified.push(UnclassifiedWrite {
        function: "set_memo".into(),
        authorized_by: vec![admin_authority()],
    });
    s.powers = observed(found);
    let r = evaluate_contract(&s, None).unwrap();
    assert_eq!(r.mechanics.names(), ["admin_unclassified"]);
    assert_eq!(r.severity, Rating::Level(Severity::Clear), "no floor");
    assert!(
        claims(&r)
            .iter()
            .any(|c| c.starts_with("set_memo authorized by GA5Z")),
        "the report names the function: {:?}",
        claims(&r)
    );
}

#[test]
fn a_discovery_that_did_not_cover_the_token_is_undetermined_never_clear() {
    let failed = PowersOutcome::Failed(Attempt {
        url: "http://rpc.example".into(),
        retrieved_at: at(),
        failure: FetchFailure::with_detail(FailureCategory::UnknownFailure, "upstream gone"),
    });
    let mut unobservable = survey(vec![]);
    unobservable.unobservable = Some("no address held units".into());
    let mut cut = survey(vec![power("reward", creates())]);
    cut.cut.push(format!("set_mode: {BUDGET_CUT}"));
    for outcome in [
        PowersOutcome::NotRun,
        failed,
        observed(unobservable),
        observed(cut),
    ] {
        let mut s = subject(code(&[], &[]));
        s.powers = outcome.clone();
        let r = evaluate_contract(&s, None).unwrap();
        assert!(r.undetermined, "{outcome:?}");
        assert_eq!(r.undetermined_checks, ["contract-mechanics"]);
        assert!(matches!(
            attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V5, false),
            Err(Refusal::Undetermined { .. })
        ));
    }
}

#[test]
fn unreadable_code_is_undetermined_never_clear() {
    let r = evaluate_contract(
        &subject(CodeOutcome::Failed(Attempt {
            url: "http://rpc.example".into(),
            retrieved_at: at(),
            failure: FetchFailure::new(FailureCategory::Timeout),
        })),
        None,
    )
    .unwrap();
    assert!(r.undetermined);
    assert_eq!(r.undetermined_checks, ["contract-mechanics"]);
    assert!(r.unevaluated());
    assert!(
        attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V4, false).is_err()
    );
}

#[test]
fn accountability_is_verified_only_by_the_admin_domains_contract_entry() {
    let toml = |contract: Option<&str>| {
        TomlOutcome::Document(TomlDocument {
            requested_url: "https://token.example/.well-known/stellar.toml".into(),
            url: "https://token.example/.well-known/stellar.toml".into(),
            retrieved_at: at(),
            currencies: vec![Currency {
                code: Some("TKN".into()),
                contract: contract.map(str::to_string),
                ..Default::default()
            }],
            linked: vec![],
        })
    };
    let with = |admin: AdminOutcome, domain: HomeDomain, t: TomlOutcome| {
        let mut s = subject_with(code(&[], &[]), vec![power("reward", creates())]);
        s.admin = admin;
        s.home_domain = domain;
        s.account_url = Some(format!("https://horizon.example/accounts/{ADMIN}"));
        s.stellar_toml = t;
        evaluate_contract(&s, None).unwrap()
    };
    let account = || {
        AdminOutcome::Address(Observed {
            url: TOKEN.into(),
            retrieved_at: at(),
            value: ADMIN.into(),
        })
    };
    let domain = || HomeDomain::Present("token.example".into());

    let r = with(account(), domain(), toml(Some(TOKEN)));
    assert_eq!(r.accountability, Accountability::Verified);
    let c = claims(&r);
    assert!(c.contains(&format!("admin() is {ADMIN}").as_str()), "{c:?}");
    assert!(c.contains(&"home_domain \"token.example\""), "{c:?}");
    assert!(c.contains(&format!("CURRENCIES claims contract {TOKEN}").as_str()));
    assert_eq!(r.mechanics.bits(), Mechanics::ADMIN_MINT, "no domain bit");

    let unverified = [
        with(account(), domain(), toml(None)),
        with(account(), domain(), toml(Some("CBAD"))),
        with(account(), HomeDomain::Absent, TomlOutcome::NotFetched),
        with(
            AdminOutcome::NoAdminFunction,
            HomeDomain::Absent,
            TomlOutcome::NotFetched,
        ),
        with(
            AdminOutcome::Address(Observed {
                url: TOKEN.into(),
                retrieved_at: at(),
                value: TOKEN.into(),
            }),
            HomeDomain::Absent,
            TomlOutcome::NotFetched,
        ),
        with(
            AdminOutcome::Failed(Attempt {
                url: TOKEN.into(),
                retrieved_at: at(),
                failure: FetchFailure::new(FailureCategory::Timeout),
            }),
            HomeDomain::Absent,
            TomlOutcome::NotFetched,
        ),
        with(
            account(),
            domain(),
            TomlOutcome::Failed {
                requested_url: "https://token.example/.well-known/stellar.toml".into(),
                retrieved_at: at(),
                failure: FetchFailure::new(FailureCategory::Status(404)),
            },
        ),
    ];
    for r in unverified {
        assert_eq!(
            r.accountability,
            Accountability::Unverified,
            "{:?}",
            claims(&r)
        );
        assert!(!r.undetermined, "accountability is never undetermined");
        assert_eq!(r.severity, Rating::Level(Severity::Clear));
    }
}

#[test]
fn a_fail_is_the_ceiling_beside_open_rows_and_open_rows_alone_are_undetermined() {
    use Sep41Status::*;
    let s = subject_with(code(&[], &[]), vec![power("reward", creates())]);
    // The vulnerable token's shape: FAILs and five UNVERIFIABLE rows.
    let rows = [
        Pass,
        Fail,
        Fail,
        Unverifiable,
        Unverifiable,
        Unverifiable,
        Unverifiable,
        Unverifiable,
    ];
    let r = evaluate_contract(&s, Some(&sep41(&rows))).unwrap();
    assert_eq!(r.severity, Rating::Level(Severity::Critical));
    assert_eq!(r.base_severity, Rating::Level(Severity::Clear));
    assert!(r.escalated && !r.undetermined);
    assert_eq!(
        r.mechanics.bits(),
        Mechanics::SEP41_VIOLATION | Mechanics::ADMIN_MINT
    );
    assert_eq!(
        claims(&r)
            .iter()
            .filter(|c| c.contains("UNVERIFIABLE"))
            .count(),
        5,
        "the open rows stay bound by the hash"
    );
    let p = attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V4, false).unwrap();
    assert_eq!((p.severity, p.flags), (4, 256 | 4096));

    let r = evaluate_contract(&s, Some(&sep41(&[Pass, Unverifiable]))).unwrap();
    assert!(r.undetermined && r.undetermined_checks == ["sep41"]);
    assert!(matches!(
        attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V4, false),
        Err(Refusal::Undetermined { .. })
    ));
    let r = evaluate_contract(&s, Some(&sep41(&[Pass, Pass]))).unwrap();
    assert_eq!(r.severity, Rating::Level(Severity::Clear));
    assert!(!r.undetermined);
}

#[test]
fn versions_fit_their_subject() {
    let r = evaluate_contract(&subject(code(&[], &[])), None).unwrap();
    for v in [
        EvidenceVersion::V1,
        EvidenceVersion::V2,
        EvidenceVersion::V3,
        EvidenceVersion::V6,
    ] {
        assert!(matches!(
            attestation_params(&r, at(), Freshness::default(), v, false),
            Err(Refusal::WrongVersion { .. })
        ));
    }
    assert_eq!(EvidenceVersion::default_for(&r.asset), EvidenceVersion::V8);
    let v7 = attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V7, true)
        .expect("v7 hashes a token contract");
    assert!(
        v7.preimage
            .unwrap()
            .contains(&format!("\ntoken\t{TOKEN}\n")),
        "v7 names a token contract by its token line"
    );
    let json = r.to_json_pretty();
    assert!(
        json.contains(&format!("\"contract\": \"{TOKEN}\"")),
        "{json}"
    );
    assert_eq!(assay_core::Report::from_json(&json).unwrap(), r);
}

#[test]
fn a_report_edited_below_its_floor_is_refused() {
    let mut r = evaluate_contract(&subject(code(&[("l", "6")], &[])), None).unwrap();
    r.severity = Rating::Level(Severity::Medium);
    r.base_severity = Rating::Level(Severity::Medium);
    assert!(matches!(
        attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V4, false),
        Err(Refusal::BelowFloor { .. })
    ));
}

/// A levy the admin sets: `share_bps` of a holder's transfer of 10,000 goes to the admin.
fn levy(share_bps: u32) -> PowerEffect {
    PowerEffect::TransferFee {
        holder: "GBHOLDER".into(),
        sent: "10000".into(),
        delivered: (10_000 - share_bps).to_string(),
        share_bps,
        credited: Some(ADMIN.into()),
    }
}

#[test]
fn a_transfer_fee_is_medium_high_when_it_delivers_nothing_and_hashes_from_v8() {
    use assay_core::bundle::{check_bundle, Bundle};
    for (share, severity, percent) in [
        (3_000, Severity::Medium, "30 %"),
        (assay_core::powers::FULL_SHARE_BPS, Severity::High, "100 %"),
    ] {
        let s = subject_with(code(&[], &[]), vec![power("set_levy", levy(share))]);
        let r = evaluate_contract(&s, None).unwrap();
        assert_eq!(r.mechanics.bits(), Mechanics::ADMIN_TRANSFER_FEE);
        assert_eq!(r.mechanics.names(), ["admin_transfer_fee"]);
        assert_eq!(r.severity, Rating::Level(severity), "{share}");
        assert_eq!(r.base_severity, Rating::Level(severity));
        assert!(!r.undetermined);
        // The evidence line names the function and who authorizes it, in words free of the run's numbers;
        // the reasoning (not hashed) gives the share.
        let line = claims(&r)
            .into_iter()
            .find(|c| c.starts_with("set_levy authorized by "))
            .expect("a behaviour line");
        assert!(line.starts_with(&format!(
            "set_levy authorized by {ADMIN} (1 key, 0 s): after the call"
        )));
        let effect = line.rsplit_once(": ").unwrap().1;
        assert!(!effect.contains(char::is_numeric), "{line}");
        let mechanics = r
            .findings
            .iter()
            .find(|f| f.check == "contract-mechanics")
            .unwrap();
        assert!(
            mechanics.reasoning.contains(&format!(
                "changes what a holder's transfer delivers ({percent} of it not delivered) through `set_levy`"
            )),
            "{}",
            mechanics.reasoning
        );
        // Bound from v8 on: an earlier version is refused, v8 writes the bit at the severity.
        for v in [
            EvidenceVersion::V4,
            EvidenceVersion::V5,
            EvidenceVersion::V7,
        ] {
            assert!(
                matches!(
                    attestation_params(&r, at(), Freshness::default(), v, false),
                    Err(Refusal::WrongVersion { .. })
                ),
                "{v}"
            );
        }
        let p =
            attestation_params(&r, at(), Freshness::default(), EvidenceVersion::V8, true).unwrap();
        assert_eq!((p.severity, p.flags), (severity.level(), 16384));
        // Its bundle re-derives the same verdict from the lines alone.
        let derived = check_bundle(&Bundle::of(&r, EvidenceVersion::V8).unwrap()).unwrap();
        assert_eq!(
            (derived.severity, derived.mechanics),
            (severity, Mechanics::ADMIN_TRANSFER_FEE)
        );
    }
}

fn status() -> impl Strategy<Value = Sep41Status> {
    prop_oneof![
        Just(Sep41Status::Pass),
        Just(Sep41Status::Fail),
        Just(Sep41Status::Unverifiable),
        Just(Sep41Status::Skipped),
    ]
}

fn effect() -> impl Strategy<Value = PowerEffect> {
    prop_oneof![
        Just(takes()),
        Just(freezes()),
        Just(creates()),
        Just(PowerEffect::ReplacesDependency {
            dependency: TOKEN.into()
        }),
        Just(levy(2_500)),
        Just(levy(assay_core::powers::FULL_SHARE_BPS)),
    ]
}

fn import() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        Just(("l".to_string(), "6".to_string())),
        Just(("l".to_string(), "0".to_string())),
        ("[a-z]", "[0-9a-z_]{1,2}"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever the code and the suite say, an attestable contract-token report is never below the floor
    /// its bits imply, so the registry's consistency rule can never refuse what the attester decided.
    #[test]
    fn no_contract_token_report_is_attested_below_its_floor(
        imports in proptest::collection::vec(import(), 0..4),
        effects in proptest::collection::vec(effect(), 0..4),
        rows in proptest::option::of(proptest::collection::vec(status(), 0..8)),
    ) {
        let imports: Vec<(&str, &str)> = imports.iter().map(|(m, n)| (m.as_str(), n.as_str())).collect();
        let powers = effects.into_iter().map(|e| power("f", e)).collect();
        let s = subject_with(code(&imports, &["mint", "clawback"]), powers);
        let check = rows.as_ref().map(|r| sep41(r));
        let r = evaluate_contract(&s, check.as_ref()).unwrap();
        if let Ok(p) = attestation_params(&r, at(), Freshness::default(), EvidenceVersion::DEFAULT, false) {
            let floor = Mechanics::from_bits(p.flags).unwrap().floor();
            prop_assert!(p.severity >= floor.level(), "{} below {floor}", p.severity);
            if p.flags & Mechanics::SEP41_VIOLATION != 0 {
                prop_assert_eq!(p.severity, 4);
            }
        }
        if let Some(rows) = &rows {
            if rows.contains(&Sep41Status::Fail) {
                prop_assert!(!r.undetermined);
                prop_assert_eq!(r.severity, Rating::Level(Severity::Critical));
            } else if rows.is_empty() || rows.iter().any(|s| *s != Sep41Status::Pass) {
                prop_assert!(r.undetermined);
            }
        }
    }
}

#[test]
fn a_power_usable_only_later_says_so_before_its_effect_and_names_no_date_in_evidence() {
    let later = ObservedPower {
        usable_from: assay_core::time::Timestamp::from_unix(1_800_000_000),
        ..power("settle", takes())
    };
    let r = evaluate_contract(&subject_with(code(&[], &[]), vec![later]), None).unwrap();
    assert_eq!(r.mechanics.bits(), Mechanics::ADMIN_CLAWBACK);
    let c = claims(&r);
    let line = c
        .iter()
        .find(|l| l.starts_with("settle authorized by"))
        .expect("the power's evidence line");
    assert!(
        line.contains(", usable only later (refused at the ledger's time, shown with the clock moved forward): "),
        "{line}"
    );
    assert!(!line.contains("2027"), "no date in the evidence: {line}");
    assert_eq!(
        assay_core::bundle::behaviour_bit(line),
        Some(Mechanics::ADMIN_CLAWBACK),
        "{line}"
    );
    let reasoning: Vec<&str> = r.findings.iter().map(|f| f.reasoning.as_str()).collect();
    assert!(
        reasoning
            .iter()
            .any(|t| t.contains("from 2027-01-15T08:00:00Z")),
        "{reasoning:?}"
    );
}
