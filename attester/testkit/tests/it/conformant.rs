//! The macro as an author uses it, over the conformant fixture: one test per check, all holding, and the
//! power assertion; then the assertions' messages on a token with a defect and a power.
use assay_sep41::CHECKS;
use assay_testkit::{test_name, Token};

use crate::common::fixture_wasm;

assay_testkit::sep41_tests!(Token::wasm_file(fixture_wasm("conformant_token"))
    .constructor_args(r#"["@admin", 7, "Conformant", "CNF"]"#));

#[test]
fn the_macro_makes_one_test_per_check_in_run_order() {
    let ids: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
    assert_eq!(SEP41_TESTED, ids.as_slice());
    // The names the macro gives them are the ids with `-` as `_`, and no two collide.
    let mut names: Vec<String> = ids.iter().map(|id| test_name(id)).collect();
    let source = include_str!("../../src/lib.rs");
    for (name, id) in names.iter().zip(&ids) {
        assert!(
            source.contains(&format!("{name} \"{id}\",")),
            "{id} has no `{name}` test"
        );
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), CHECKS.len());
}

#[test]
fn the_conformant_token_holds_with_only_its_mint_power() {
    let suite = sep41_suite();
    suite.assert_only_powers(&["admin_mint"]);
    assert_eq!(suite.power_names(), ["admin_mint"]);
    println!(
        "testkit bench: conformant_token: setup {:.1} s, discovery {:.1} s, suite {:.1} s",
        suite.setup_time.as_secs_f64(),
        suite.discovery_time.as_secs_f64(),
        suite.suite_time.as_secs_f64()
    );
}

#[test]
fn the_power_assertion_names_each_power_not_allowed() {
    let err = sep41_suite().only_powers(&[]).unwrap_err().to_string();
    assert!(
        err.contains("unexpected power admin_mint: `mint` creates supply"),
        "{err}"
    );
    let err = sep41_suite()
        .only_powers(&["mint"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"mint\" is not a power discovery reports"),
        "{err}"
    );
}

#[test]
fn a_failing_check_panics_with_its_expected_and_actual() {
    let suite = Token::wasm_file(fixture_wasm("vulnerable_token"))
        .run()
        .expect("the suite runs");
    let failed: Vec<_> = (suite.report.results.iter())
        .filter(|r| r.status == assay_sep41::Status::Fail)
        .collect();
    assert!(!failed.is_empty(), "the vulnerable token fails some check");
    for row in failed {
        let message = suite.check_verdict(row.id).unwrap_err().to_string();
        let head = format!(
            "{} FAIL: {}\n  expected: {}\n  actual:   {}",
            row.id, row.clause, row.expected, row.actual
        );
        assert!(message.starts_with(&head), "{message}");
        let panic = std::panic::catch_unwind(|| suite.assert_check(row.id)).unwrap_err();
        assert_eq!(panic.downcast_ref::<String>(), Some(&message));
    }
    assert!(suite
        .only_powers(&[
            "admin_mint",
            "admin_clawback",
            "admin_freeze",
            "code_mutable",
            "admin_unclassified"
        ])
        .is_err());
}

#[test]
fn an_unreadable_wasm_names_the_path_and_the_fix() {
    let err = Token::wasm_file("/nonexistent/token.wasm")
        .run()
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/token.wasm"), "{err}");
    assert!(err.contains("stellar contract build"), "{err}");
    let err = Token::wasm_bytes(vec![0u8; 4], "junk.wasm")
        .constructor_args("[not json")
        .run()
        .unwrap_err()
        .to_string();
    assert!(err.contains("not JSON"), "{err}");
}
