//! Custom Soroban tokens end to end on the local network, through the library path `assay attest` and
//! `assay verify` call: the registry and gate deployed from WASM; each token read from the network (its
//! instance and WASM by getLedgerEntries), judged, attested, refused or admitted by the gate, and verified
//! by a fresh read that agrees.

use crate::common;

use assay_attest::attest::{execute, plan, ChainSubmitter, Outcome, Write};
use assay_attest::registry::read_safety;
use assay_attest::sep41::Sep41Runner;
use assay_attest::targets::resolve;
use assay_attest::targets::Target;
use assay_attest::verify::{compare, ledger_time, verify_target, Verdict};
use assay_chain::Signer;
use assay_core::{Freshness, Mechanics, Rating, Report, Severity};
use assay_sep41::live::Parties;
use common::*;

fn runner(w: &World, holder: &Signer, spender: &Signer) -> Sep41Runner {
    Sep41Runner {
        rpc_url: w.spec.rpc_url.clone(),
        passphrase: w.spec.passphrase.clone(),
        parties: Some(Parties {
            holder: party(holder),
            holder_key: Some(holder.clone()),
            spender: party(spender),
            spender_key: Some(spender.clone()),
        }),
    }
}

fn attest(w: &World, target: Target, report: Report) -> Outcome {
    let now = assay_core::Timestamp::now();
    let (planned, slots) = plan(&[target], vec![Ok(report)], now, Freshness::default());
    let mut submitter = ChainSubmitter {
        invoker: w.invoker(&w.attester),
        registry: w.registry,
        confirm_read_back: true,
    };
    execute(&planned, slots, &mut submitter, 50, false).remove(0)
}

/// `assay verify C…`: the on-chain value against a fresh read (and a fresh suite run when given).
fn verify(w: &World, token: [u8; 32], suite: Option<&Sep41Runner>) -> Verdict {
    let on_chain = read_safety(&w.rpc, w.registry, token).unwrap();
    let (_, fresh) = w.evaluate_token(token, suite);
    compare(
        on_chain.as_ref(),
        &fresh,
        ledger_time(&w.rpc).unwrap(),
        86_400,
    )
}

#[test]
fn custom_tokens_are_attested_by_their_code_and_the_gate_follows() {
    let w = World::start(&[]);
    let holder = Signer::from_bytes([13; 32]);
    let spender = Signer::from_bytes([14; 32]);
    w.net.fund(&account_id(spender.public_key())).unwrap();
    let suite = runner(&w, &holder, &spender);

    // The conformant token: its admin's mint is the one power observed (bit 12, no floor), the suite all
    // PASS: clear, admitted.
    let conformant = w.deploy_token("conformant_token", 21);
    w.mint(conformant, 13);
    let (target, report) = w.evaluate_token(conformant, Some(&suite));
    assert_eq!(
        report.mechanics.bits(),
        Mechanics::ADMIN_MINT,
        "{:?}",
        report.evidence
    );
    assert_eq!(report.severity, Rating::Level(Severity::Clear));
    assert!(!report.undetermined, "{:?}", report.undetermined_checks);
    assert!(report
        .evidence
        .iter()
        .any(|e| e.source == "contract/behaviour"
            && e.claim.starts_with("mint authorized by G")
            && e.claim
                .ends_with("a balance rose by the units asked with no matching debit")));
    assert!(matches!(
        attest(&w, target, report),
        Outcome::Written(Write {
            severity: 0,
            flags: 4096,
            evidence_version: 8,
            ..
        })
    ));
    assert_eq!(w.gate_check(conformant), Ok(()), "admitted");
    w.mint(conformant, 13);
    assert!(
        matches!(
            verify(&w, conformant, Some(&suite)),
            Verdict::Agreement {
                evidence_version: 8,
                ..
            }
        ),
        "verify --sep41 agrees"
    );

    // The upgradable token: imports the contract-update function (bit 9): high, refused by the gate.
    let upgradable = w.deploy_token("upgradable_token", 22);
    let (target, report) = w.evaluate_token(upgradable, None);
    assert_eq!(report.mechanics.bits(), Mechanics::CODE_MUTABLE);
    assert_eq!(report.severity, Rating::Level(Severity::High));
    assert!(
        report
            .evidence
            .iter()
            .any(|e| e.claim
                == "imports l.6 (update_current_contract_wasm): the code can be replaced")
    );
    assert!(
        matches!(
            report
                .findings
                .iter()
                .find(|f| f.check == "contract-domain")
                .and_then(|f| f.accountability),
            Some(assay_core::Accountability::Unverified)
        ),
        "an admin account without a home domain is unverified, not undetermined"
    );
    assert!(matches!(
        attest(&w, target, report),
        Outcome::Written(Write {
            severity: 3,
            flags: 512,
            ..
        })
    ));
    assert_eq!(w.gate_check(upgradable), Err(4), "SeverityTooHigh");
    assert!(matches!(
        verify(&w, upgradable, None),
        Verdict::Agreement { .. }
    ));

    // The vulnerable token: FAILs beside UNVERIFIABLE rows; a FAIL is the ceiling: critical, bit 8,
    // determined, written, refused by the gate.
    let vulnerable = w.deploy_token("vulnerable_token", 23);
    w.mint(vulnerable, 13);
    let (target, report) = w.evaluate_token(vulnerable, Some(&suite));
    let open = report
        .evidence
        .iter()
        .filter(|e| {
            e.source == "sep41"
                && (e.claim.contains(" UNVERIFIABLE:") || e.claim.contains(" SKIPPED:"))
        })
        .count();
    assert!(open > 0, "{:?}", report.evidence);
    assert_eq!(report.severity, Rating::Level(Severity::Critical));
    assert!(!report.undetermined);
    assert_eq!(
        report.mechanics.bits(),
        Mechanics::SEP41_VIOLATION | Mechanics::ADMIN_MINT
    );
    assert!(matches!(
        attest(&w, target, report),
        Outcome::Written(Write {
            severity: 4,
            flags: 4352,
            ..
        })
    ));
    assert_eq!(w.gate_check(vulnerable), Err(4), "SeverityTooHigh");
    // The first run wrecked these parties' accounting (that is the defect), so the re-run is made by a
    // fresh holder and spender: the rows bind verdicts, not who observed them.
    let (holder2, spender2) = (Signer::from_bytes([15; 32]), Signer::from_bytes([16; 32]));
    for k in [&holder2, &spender2] {
        w.net.fund(&account_id(k.public_key())).unwrap();
    }
    w.mint(vulnerable, 15);
    let v = verify(&w, vulnerable, Some(&runner(&w, &holder2, &spender2)));
    assert!(matches!(v, Verdict::Agreement { .. }), "{v:?}");
}

/// `assay verify C…` with no flag: the fresh read alone, and the keyless suite again only when that
/// does not reproduce the on-chain hash. Returns the verdict and the plain comparison.
fn verify_unasked(w: &World, token: [u8; 32], suite: &Sep41Runner) -> (Verdict, Verdict) {
    let on_chain = read_safety(&w.rpc, w.registry, token).unwrap();
    let id = format!("{}", stellar_strkey::Contract(token));
    let target = resolve(&id, &w.spec.passphrase, &w.spec.passphrase).unwrap();
    let verdict = verify_target(
        &w.settings(&[]),
        &w.spec.rpc_url,
        &w.spec.passphrase,
        &target,
        on_chain.as_ref(),
        Some(suite),
        false,
        &|| ledger_time(&w.rpc),
        86_400,
    )
    .unwrap();
    (verdict, verify(w, token, None))
}

fn sep41_lines(report: &Report) -> Vec<&str> {
    (report.evidence.iter())
        .filter(|e| e.source == "sep41")
        .map(|e| e.claim.as_str())
        .collect()
}

/// `assay attest C… --sep41` with no key for the suite: it runs keyless on a fork of the network
/// (the holder found from the token's mint events), the attester's key signs only the registry
/// write, and `assay verify` re-runs the suite by itself because the hash needs it.
#[test]
fn keyless_suite_is_attested_and_verify_reruns_it_unasked() {
    let w = World::start(&[]);
    let keyless = Sep41Runner::keyless(&w.spec.rpc_url, &w.spec.passphrase);

    let conformant = w.deploy_token("conformant_token", 31);
    w.mint(conformant, 13);
    let (target, report) = w.evaluate_token(conformant, Some(&keyless));
    let lines = sep41_lines(&report);
    // The 25 rows plus the mint event: discovery exercised the admin's mint when the subject was read.
    assert_eq!(lines.len(), 26, "{lines:?}");
    assert!(lines.iter().all(|l| l.contains(" PASS:")), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("sep41-events-mint PASS")),
        "{lines:?}"
    );
    assert_eq!(report.severity, Rating::Level(Severity::Clear));
    assert!(!report.undetermined, "{:?}", report.undetermined_checks);
    assert!(matches!(
        attest(&w, target, report),
        Outcome::Written(Write { flags: 4096, .. })
    ));
    let (verdict, plain) = verify_unasked(&w, conformant, &keyless);
    assert!(matches!(verdict, Verdict::Agreement { .. }), "{verdict:?}");
    assert!(
        matches!(&plain, Verdict::Mismatch { field, .. } if field == "evidence_hash"),
        "without the suite the hash differs, so verify had to re-run it: {plain:?}"
    );

    // The vulnerable token: the keyless run FAILs, so the report is critical with bit 8 and
    // attested; verify re-runs it and agrees.
    let vulnerable = w.deploy_token("vulnerable_token", 33);
    w.mint(vulnerable, 13);
    let (target, report) = w.evaluate_token(vulnerable, Some(&keyless));
    assert!(
        sep41_lines(&report).iter().any(|l| l.contains(" FAIL:")),
        "{:?}",
        report.evidence
    );
    assert_eq!(report.severity, Rating::Level(Severity::Critical));
    assert!(report.mechanics.has(Mechanics::SEP41_VIOLATION));
    assert!(matches!(
        attest(&w, target, report),
        Outcome::Written(Write { severity: 4, .. })
    ));
    let (verdict, _) = verify_unasked(&w, vulnerable, &keyless);
    assert!(matches!(verdict, Verdict::Agreement { .. }), "{verdict:?}");

    // An attestation without sep41 lines agrees on the plain read alone.
    let upgradable = w.deploy_token("upgradable_token", 32);
    let (target, report) = w.evaluate_token(upgradable, None);
    assert!(matches!(attest(&w, target, report), Outcome::Written(_)));
    let (verdict, plain) = verify_unasked(&w, upgradable, &keyless);
    assert!(
        matches!(verdict, Verdict::Agreement { .. }) && matches!(plain, Verdict::Agreement { .. }),
        "{verdict:?} {plain:?}"
    );
}
