//! `--sep41` on the local network through the attester's library path (the same functions `assay attest`
//! calls): the conformance suite runs live against tokens built from the fixtures, their FAIL rows enter
//! the report, the report is critical with `sep41_violation` (bit 8) and unchanged capability bits, and that
//! is what the registry holds afterwards — unless some check could not conclude, when nothing is written.

use crate::common;

use assay_attest::attest::{execute, plan, ChainSubmitter, Outcome, Write};
use assay_attest::registry;
use assay_attest::registry::read_safety;
use assay_attest::scanning::scan_subjects;
use assay_attest::sep41::{evaluate_subject, Sep41Runner, Sep41Status};
use assay_attest::targets::Target;
use assay_chain::Signer;
use assay_core::{Freshness, Mechanics, Rating, Severity};
use assay_sep41::live::Parties;
use assay_sep41::Status;
use common::*;
use stellar_xdr::{Int128Parts, ScVal};

/// Deploys `wasm_name` (a token with the fixtures' constructor and `mint`), mints 1000 to the holder, and runs
/// the suite against it as the attester does.
fn suite_on(w: &World, wasm_name: &str, salt: u8) -> ([u8; 32], assay_attest::sep41::Sep41Outcome) {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/wasm")
        .join(format!("{wasm_name}.wasm"));
    if wasm_name.starts_with("defect_token_") && !path.exists() {
        let status = std::process::Command::new(
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../scripts/build-wasm.sh"),
        )
        .arg("defect-token")
        .status()
        .expect("run scripts/build-wasm.sh");
        assert!(
            status.success(),
            "scripts/build-wasm.sh defect-token failed"
        );
    }
    let token = w.deploy(
        wasm_name,
        salt,
        vec![
            registry::account_val(w.admin.public_key()),
            ScVal::U32(7),
            string("Test Token"),
            string("TEST"),
        ],
    );
    let holder = Signer::from_bytes([13; 32]);
    let spender = Signer::from_bytes([14; 32]);
    let mint = registry::call(
        token,
        "mint",
        vec![
            registry::account_val(holder.public_key()),
            ScVal::I128(Int128Parts { hi: 0, lo: 1000 }),
        ],
    );
    w.invoker(&w.admin).invoke(&mint).expect("mint");
    let runner = Sep41Runner {
        rpc_url: w.spec.rpc_url.clone(),
        passphrase: w.spec.passphrase.clone(),
        parties: Some(Parties {
            holder: party(&holder),
            holder_key: Some(holder.clone()),
            spender: party(&spender),
            spender_key: Some(spender.clone()),
        }),
    };
    (token, runner.run(token))
}

#[test]
fn a_failing_token_is_attested_critical_with_bit_8_and_capability_bits_unchanged() {
    let w = World::start(&["aqua.network"]);
    let aqua = w.clear_aqua();
    w.net
        .fund(&account_id(Signer::from_bytes([14; 32]).public_key()))
        .unwrap();

    // A token whose approve accumulates instead of overwriting: one clause violated, everything else
    // assessed.
    let (_, run) = suite_on(&w, "defect_token_approve_accumulates", 3);
    let suite = run.report.as_ref().expect("the suite ran");
    assert_eq!(run.verdict(), "violation", "{}", run.summary());
    assert_eq!(
        suite.status_of("sep41-approve"),
        Some(Status::Fail),
        "{:?}",
        suite.results
    );
    // Every check concluded, but the two power-event rows: no power was exercised for them to judge.
    assert!(
        (suite.results.iter().filter(|r| !r.no_power_observed()))
            .all(|r| matches!(r.status, Status::Pass | Status::Fail)),
        "every check concluded: {:?}",
        suite.results
    );
    assert_eq!(
        run.rows.len(),
        25,
        "the power-event rows stay out of the evidence"
    );
    assert!(run
        .rows
        .iter()
        .any(|r| r.id == "sep41-approve" && r.status == Sep41Status::Fail));

    // The classic asset's own scan, with and without the suite's rows.
    let subject = scan_subjects(&w.settings(&["aqua.network"]), &[aqua.core()])
        .unwrap()
        .remove(0)
        .unwrap();
    let now = assay_core::Timestamp::now();
    let plain = evaluate_subject(&subject, None, now).unwrap();
    let report = evaluate_subject(&subject, Some(&run), now).unwrap();
    assert_eq!(plain.severity, Rating::Level(Severity::Clear));
    assert_eq!(report.severity, Rating::Level(Severity::Critical));
    assert!(report.mechanics.has(Mechanics::SEP41_VIOLATION));
    assert!(!plain.mechanics.has(Mechanics::SEP41_VIOLATION));
    assert_eq!(
        report.mechanics.bits() & Mechanics::CAPABILITY_MASK,
        plain.mechanics.bits() & Mechanics::CAPABILITY_MASK,
        "capability bits untouched"
    );
    assert_eq!(
        report.base_severity, plain.base_severity,
        "base severity untouched"
    );
    // A FAIL is a finding, not an unknown: the report is attestable. Every sep41 line is in the evidence.
    assert!(!report.undetermined, "{:?}", report.undetermined_checks);
    let lines: Vec<&str> = report
        .evidence
        .iter()
        .filter(|e| e.source == "sep41")
        .map(|e| e.claim.as_str())
        .collect();
    assert_eq!(lines.len(), 25, "{lines:?}");
    assert!(
        lines.contains(
            &"sep41-approve FAIL: requires the allowance equals the amount approved (overwrite, not add)"
        ),
        "{lines:?}"
    );

    // Attested under the asset's Stellar Asset Contract (a verdict on a classic asset judges its
    // issuer, the SAC's admin; interface 5 refuses it under another contract's code): the registry
    // holds critical with bit 8.
    let sac = w.deploy_sac(&aqua);
    let targets = [Target {
        asset: aqua.core().into(),
        contract: sac,
    }];
    let (planned, slots) = plan(
        &targets,
        vec![Ok(report.clone())],
        now,
        Freshness::default(),
    );
    assert_eq!(planned.len(), 1);
    let mut submitter = ChainSubmitter {
        invoker: w.invoker(&w.attester),
        registry: w.registry,
        confirm_read_back: true,
    };
    let outcomes = execute(&planned, slots, &mut submitter, 50, false);
    let (severity, flags, hash) = match &outcomes[0] {
        Outcome::Written(Write {
            severity,
            flags,
            evidence_hash,
            ..
        }) => (*severity, *flags, evidence_hash.clone()),
        other => panic!("expected written, got {other:?}"),
    };
    assert_eq!(severity, 4);
    assert_eq!(flags & (1 << 8), 1 << 8, "sep41_violation is bit 8");
    let on_chain = read_safety(&w.rpc, w.registry, sac).unwrap().unwrap();
    assert_eq!(
        (
            on_chain.severity,
            on_chain.flags,
            hex::encode(on_chain.evidence_hash)
        ),
        (4, plain.mechanics.bits() | Mechanics::SEP41_VIOLATION, hash)
    );
    assert_eq!(
        w.gate_check(sac),
        Err(4),
        "the gate refuses it: SeverityTooHigh"
    );

    // The vulnerable fixture fails several clauses, and its over-balance transfer wrecks the holder's
    // accounting, so later checks cannot conclude. A FAIL is the ceiling: the report is critical with bit 8
    // and determined although rows are open, so it is written, and the gate refuses it.
    let (_, run) = suite_on(&w, "vulnerable_token", 4);
    let suite = run.report.as_ref().expect("the suite ran");
    assert_eq!(suite.status_of("sep41-transfer-self"), Some(Status::Fail));
    assert!(
        suite
            .results
            .iter()
            .any(|r| matches!(r.status, Status::Unverifiable | Status::Skipped)),
        "{:?}",
        suite.results
    );
    let report = evaluate_subject(&subject, Some(&run), now).unwrap();
    assert_eq!(report.severity, Rating::Level(Severity::Critical));
    assert!(report.mechanics.has(Mechanics::SEP41_VIOLATION));
    assert!(!report.undetermined, "{:?}", report.undetermined_checks);
    let targets = [Target {
        asset: aqua.core().into(),
        contract: sac,
    }];
    let (planned, slots) = plan(&targets, vec![Ok(report)], now, Freshness::default());
    assert_eq!(planned.len(), 1);
    let outcomes = execute(&planned, slots, &mut submitter, 50, false);
    assert!(
        matches!(&outcomes[0], Outcome::Written(Write { severity: 4, .. })),
        "{:?}",
        outcomes[0]
    );
    assert_eq!(
        read_safety(&w.rpc, w.registry, sac)
            .unwrap()
            .unwrap()
            .severity,
        4
    );
    assert_eq!(w.gate_check(sac), Err(4), "SeverityTooHigh");
}
