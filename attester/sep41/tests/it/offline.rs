//! Offline runs on the embedded network, from the built fixture WASMs.
use std::{path::PathBuf, process::Command, sync::OnceLock};

use assay_sep41::{
    offline::{run_offline, OfflineOptions, OfflineToken},
    Report, Status,
};
use Status::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the fixture WASMs once per test binary with scripts/build-wasm.sh.
fn wasm(name: &str) -> Vec<u8> {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .args(["conformant-token", "vulnerable-token", "defect-token"])
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    });
    let path = root().join("target/wasm").join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run_wasm(name: &str) -> Report {
    let subject = OfflineToken::Wasm {
        wasm: wasm(name),
        origin: format!("{name}.wasm"),
        constructor_args: None,
        mint_fn: "mint".into(),
    };
    let run = run_offline(&subject, &OfflineOptions::default()).expect("offline run");
    eprintln!("{}", assay_sep41::render::text(&run.report));
    run.report
}

fn assert_status(report: &Report, id: &str, status: Status) {
    let row = report.results.iter().find(|r| r.id == id).expect(id);
    assert_eq!(row.status, status, "{id}: {}", row.actual);
}

/// What a conformant check reports: PASS, or SKIPPED for the power-event rows, which have no
/// exercised power to judge in a run of the suite alone.
fn conformant(id: &str) -> Status {
    if assay_sep41::model::POWER_EVENT_CHECKS.contains(&id) {
        Skipped
    } else {
        Pass
    }
}

#[test]
fn conformant_token_passes_all_twenty_five() {
    let report = run_wasm("conformant_token");
    assert_eq!(report.results.len(), 27);
    for def in assay_sep41::CHECKS {
        assert_status(&report, def.id, conformant(def.id));
    }
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn vulnerable_token_fails_self_and_negative_like_the_reference_run() {
    let report = run_wasm("vulnerable_token");
    assert_status(&report, "sep41-decimals", Pass);
    assert_status(&report, "sep41-balance", Pass);
    assert_status(&report, "sep41-allowance", Pass);
    assert_status(&report, "sep41-name", Pass);
    assert_status(&report, "sep41-symbol", Pass);
    assert_status(&report, "sep41-transfer_from-unauthorized", Pass);
    assert_status(&report, "sep41-transfer-zero-amount", Pass);
    assert_status(&report, "sep41-transfer-self", Fail);
    assert_status(&report, "sep41-transfer-negative-amount", Fail);
    assert_status(&report, "sep41-transfer-over-balance", Unverifiable);
    assert_status(&report, "sep41-transfer", Unverifiable);
    assert_status(&report, "sep41-approve", Pass);
    assert_status(&report, "sep41-transfer_from", Unverifiable);
    assert_status(&report, "sep41-burn", Pass);
    assert_status(&report, "sep41-burn_from", Unverifiable);
    assert_status(&report, "sep41-transfer_from-expired", Unverifiable);
    assert_eq!(report.exit_code(), 3);
}

#[test]
fn stellar_asset_contract_passes_all_twenty_five() {
    let subject = OfflineToken::Sac {
        code: "ASSAY".into(),
    };
    let run = run_offline(&subject, &OfflineOptions::default()).expect("offline SAC run");
    eprintln!("{}", assay_sep41::render::text(&run.report));
    assert_eq!(run.report.results.len(), 27);
    for def in assay_sep41::CHECKS {
        assert_status(&run.report, def.id, conformant(def.id));
    }
    // The asset contract appends its asset's name to each event's topics.
    let transfer_event = run
        .report
        .results
        .iter()
        .find(|r| r.id == "sep41-events-transfer");
    assert!(
        transfer_event.unwrap().actual.contains("\"ASSAY:G"),
        "{}",
        transfer_event.unwrap().actual
    );
    assert_eq!(run.report.exit_code(), 0);
}

/// Each planted defect FAILs its own check, and every other of the twenty-seven still passes (or, for
/// the power-event rows, is SKIPPED).
fn assert_only_failure(wasm_name: &str, failing: &str) -> Report {
    let report = run_wasm(wasm_name);
    for def in assay_sep41::CHECKS {
        let expected = if def.id == failing {
            Fail
        } else {
            conformant(def.id)
        };
        assert_status(&report, def.id, expected);
    }
    assert_eq!(report.exit_code(), 3);
    report
}

#[test]
fn fee_on_transfer_fails_transfer() {
    assert_only_failure("defect_token_fee_on_transfer", "sep41-transfer");
}

#[test]
fn allowance_not_decremented_fails_transfer_from() {
    assert_only_failure(
        "defect_token_allowance_not_decremented",
        "sep41-transfer_from",
    );
}

#[test]
fn accumulating_approve_fails_approve() {
    assert_only_failure("defect_token_approve_accumulates", "sep41-approve");
}

#[test]
fn burn_from_debiting_the_spender_fails_burn_from() {
    assert_only_failure("defect_token_burn_from_debits_spender", "sep41-burn_from");
}

#[test]
fn zero_transfer_that_mints_fails_zero_amount() {
    assert_only_failure(
        "defect_token_zero_transfer_mints",
        "sep41-transfer-zero-amount",
    );
}

#[test]
fn transfer_from_ignoring_the_allowance_fails_unauthorized() {
    assert_only_failure(
        "defect_token_transfer_from_ignores_allowance",
        "sep41-transfer_from-unauthorized",
    );
}

#[test]
fn transfer_without_authorization_fails_transfer_auth() {
    let report = assert_only_failure("defect_token_transfer_skips_auth", "sep41-transfer-auth");
    let row = report
        .results
        .iter()
        .find(|r| r.id == "sep41-transfer-auth");
    assert!(row.unwrap().actual.contains("nobody authorized"));
}

#[test]
fn transfer_from_without_authorization_fails_transfer_from_auth() {
    assert_only_failure(
        "defect_token_transfer_from_skips_auth",
        "sep41-transfer_from-auth",
    );
}

#[test]
fn approve_without_authorization_fails_approve_auth() {
    assert_only_failure("defect_token_approve_skips_auth", "sep41-approve-auth");
}

#[test]
fn burn_without_authorization_fails_burn_auth() {
    assert_only_failure("defect_token_burn_skips_auth", "sep41-burn-auth");
}

#[test]
fn burn_from_without_authorization_fails_burn_from_auth() {
    assert_only_failure("defect_token_burn_from_skips_auth", "sep41-burn_from-auth");
}

#[test]
fn swapped_transfer_event_fails_events_transfer() {
    let report = assert_only_failure(
        "defect_token_transfer_event_swaps_parties",
        "sep41-events-transfer",
    );
    let row = report
        .results
        .iter()
        .find(|r| r.id == "sep41-events-transfer");
    assert!(
        row.unwrap()
            .actual
            .starts_with("token: topics [transfer, spender, holder] data 1; expected"),
        "{}",
        row.unwrap().actual
    );
}

#[test]
fn approve_event_without_expiry_fails_events_approve() {
    assert_only_failure(
        "defect_token_approve_event_omits_expiry",
        "sep41-events-approve",
    );
}

#[test]
fn silent_burn_fails_events_burn() {
    assert_only_failure("defect_token_burn_emits_no_event", "sep41-events-burn");
}

#[test]
fn approve_of_an_expired_grant_fails_approve_past_expiry() {
    assert_only_failure(
        "defect_token_approve_accepts_past_expiry",
        "sep41-approve-past-expiry",
    );
}

/// The holder's authorization of `transfer` also covers a native XLM transfer to the admin: the
/// recorded tree shows it nested under the call.
#[test]
fn transfer_pulling_xlm_fails_transfer_auth_and_shows_the_nested_call() {
    let report = run_wasm("defect_token_transfer_pulls_xlm");
    assert_status(&report, "sep41-transfer-auth", Fail);
    let row = report
        .results
        .iter()
        .find(|r| r.id == "sep41-transfer-auth");
    let row = row.unwrap();
    assert!(row.actual.contains("nested call"), "{}", row.actual);
    assert_eq!(
        row.evidence.observed.len(),
        2,
        "{:?}",
        row.evidence.observed
    );
    assert_eq!(
        row.evidence.observed[0],
        "holder authorizes token.transfer(holder, spender, 1)"
    );
    assert!(
        row.evidence.observed[1].starts_with("  ⤷ C")
            && row.evidence.observed[1].contains(".transfer(holder, G"),
        "{:?}",
        row.evidence.observed
    );
}
