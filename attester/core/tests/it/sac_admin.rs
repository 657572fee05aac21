//! `sac-admin`: a Stellar Asset Contract named by its `C…` address keeps the classic rules (the
//! issuer's flags decide severity) and records one fact, its `admin()`: the issuer, another address
//! named in the evidence, or no answer (an attempt, never rendered as an answer).

use crate::common;

use assay_core::checks::default_checks;
use assay_core::checks::sac_admin::{SacAdmin, SOURCE_SAC_ADMIN};
use assay_core::hash::EvidenceVersion;
use assay_core::{attestation_params, Engine, Evidence, Freshness, Report, Subject, Timestamp};

const SAC: &str = "CA2E53VHFZ6YSWQIEIPBXJQGT6VW3VKWWZO555XKRQXYJ63GEBJJGHY7";
const OTHER: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";

fn subject() -> Subject {
    common::subject(&common::testdata().join("eval/berkshire-clawback-malicious"))
}

fn with_admin(s: &Subject, admin: Option<&str>) -> Report {
    let mut checks = default_checks();
    checks.push(Box::new(SacAdmin {
        contract: SAC.into(),
        admin: admin.map(str::to_string),
        at: Timestamp::from_unix(1_786_771_651).unwrap(),
    }));
    Engine::with_checks(checks).run(s).unwrap()
}

fn admin_line(r: &Report) -> &Evidence {
    let lines: Vec<&Evidence> = (r.evidence.iter())
        .filter(|e| e.source == SOURCE_SAC_ADMIN)
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", r.evidence);
    assert_eq!(lines[0].url, SAC);
    lines[0]
}

/// The classic (v3) evidence hash the report would be attested with.
fn hash(r: &Report) -> String {
    let never = Freshness { window_secs: 0 };
    attestation_params(r, r.scanned_at, never, EvidenceVersion::V3, false)
        .unwrap()
        .evidence_hash
}

/// Whatever admin() says, the issuer's flags decide: the same severity, bits and determination
/// as the classic report.
fn assert_classic_rules(r: &Report, plain: &Report) {
    assert_eq!(
        (r.severity, r.base_severity, r.mechanics, r.undetermined),
        (
            plain.severity,
            plain.base_severity,
            plain.mechanics,
            plain.undetermined
        )
    );
    assert!(r.checks.contains(&"sac-admin".to_string()));
}

#[test]
fn admin_equal_to_the_issuer_is_recorded_as_the_issuer() {
    let s = subject();
    let plain = assay_core::evaluate(&s).unwrap();
    let r = with_admin(&s, Some(&s.asset.issuer));
    assert_classic_rules(&r, &plain);
    let line = admin_line(&r);
    assert_eq!(
        line.claim,
        format!("admin() is the issuer {}", s.asset.issuer)
    );
    assert!(!line.attempted);
}

#[test]
fn admin_other_than_the_issuer_is_named_in_the_evidence() {
    let s = subject();
    assert_ne!(s.asset.issuer, OTHER);
    let plain = assay_core::evaluate(&s).unwrap();
    let r = with_admin(&s, Some(OTHER));
    assert_classic_rules(&r, &plain);
    let line = admin_line(&r);
    assert_eq!(
        line.claim,
        format!("admin() is {OTHER}, not the issuer {}", s.asset.issuer)
    );
    assert!(!line.attempted);
    let finding = r.findings.iter().find(|f| f.check == "sac-admin").unwrap();
    assert!(finding.reasoning.contains(OTHER), "{}", finding.reasoning);
    // The admin is bound by the evidence hash: a different admin is a different attestation.
    let issuer = with_admin(&s, Some(&s.asset.issuer));
    assert_ne!(hash(&r), hash(&issuer));
}

#[test]
fn admin_unreadable_is_an_attempt_not_an_answer() {
    let s = subject();
    let plain = assay_core::evaluate(&s).unwrap();
    let r = with_admin(&s, None);
    assert_classic_rules(&r, &plain);
    let line = admin_line(&r);
    assert_eq!(line.claim, "admin() did not answer");
    assert!(
        line.attempted,
        "could not check never renders like an answer"
    );
    let finding = r.findings.iter().find(|f| f.check == "sac-admin").unwrap();
    assert!(finding.reasoning.contains("did not answer"));
    assert_ne!(hash(&r), hash(&with_admin(&s, Some(&s.asset.issuer))));
}

#[test]
fn a_sac_named_by_its_address_carries_its_issuers_latent_freeze_and_who_can_act() {
    // XRP's issuer holds no flag but is not locked and one key can sign: its SAC is judged by the issuer, so
    // the freeze (bit 1, medium) and who can act are in the SAC's report and bound by its v6 hash.
    let s = common::subject(&common::testdata().join("eval/xrp-clear-unlocked"));
    let r = with_admin(&s, Some(&s.asset.issuer.clone()));
    assert_eq!(
        r.base_severity,
        assay_core::Rating::Level(assay_core::Severity::Medium)
    );
    assert!(r.mechanics.has(assay_core::Mechanics::AUTH_REVOCABLE));
    assert_eq!(r.who_can_act.as_deref(), Some("1 key"));
    assert_eq!(EvidenceVersion::default_for(&r.asset), EvidenceVersion::V8);
    let never = Freshness { window_secs: 0 };
    let p = attestation_params(&r, r.scanned_at, never, EvidenceVersion::V6, true).unwrap();
    let pre = p.preimage.unwrap();
    assert!(pre.contains("horizon/account/signers"), "{pre}");
    assert!(pre.contains(SOURCE_SAC_ADMIN), "{pre}");
}
