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
pub(crate) fn wasm(name: &str) -> Vec<u8> {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .args([
                "conformant-token",
                "vulnerable-token",
                "defect-token",
                "power-token",
                "third-party",
            ])
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    });
    let path = root().join("target/wasm").join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run_wasm(name: &str) -> Report {
    run_wasm_with(name, None)
}

/// An offline run of `target/wasm/<name>.wasm` deployed with `constructor_args` (JSON).
fn run_wasm_with(name: &str, constructor_args: Option<serde_json::Value>) -> Report {
    let subject = OfflineToken::Wasm {
        wasm: wasm(name),
        origin: format!("{name}.wasm"),
        constructor_args,
        mint_fn: "mint".into(),
        deployment: Default::default(),
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

/// The power fixtures have no `mint`: the constructor credits `"@holder"`, which funds the suite's
/// holder, and each is a correct token, so all twenty-five pass whatever its admin's power.
/// (`swappable-ledger` needs its ledger contract deployed first, which an offline run does not do.)
#[test]
fn power_fixtures_funded_by_their_constructor_pass_all_twenty_five() {
    for feature in [
        "control",
        "take_burn",
        "take_move",
        "freeze_one",
        "pause_all",
        "create_supply",
        "hidden_clawback",
        "unclassified",
        "two_step",
        "admin_allowance",
    ] {
        let name = format!("power_token_{feature}");
        let report = run_wasm_with(&name, Some(serde_json::json!(["@admin", "@holder", 1000])));
        for row in &report.results {
            // A power-event row (sep41-events-mint, -clawback) has nothing to judge in a run of
            // the suite alone, which exercises no admin power.
            let power_event = matches!(row.id, "sep41-events-mint" | "sep41-events-clawback");
            let expected = if power_event && row.status == Skipped {
                Skipped
            } else {
                Pass
            };
            assert_eq!(row.status, expected, "{name} {}: {}", row.id, row.actual);
        }
        assert_eq!(report.exit_code(), 0, "{name}");
    }
}

#[test]
fn a_constructor_that_credits_nobody_and_no_mint_function_is_a_usage_error() {
    let subject = OfflineToken::Wasm {
        wasm: wasm("power_token_control"),
        origin: "power_token_control.wasm".into(),
        constructor_args: Some(serde_json::json!(["@admin", "@holder", 0])),
        mint_fn: "mint".into(),
        deployment: Default::default(),
    };
    let err = run_offline(&subject, &OfflineOptions::default()).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("credited it nothing"), "{message}");
    assert!(message.contains("--mint-fn"), "{message}");
}

/// Rows a third-party token FAILs (none may, outside `allowed`), with the reasons.
fn failures(report: &Report) -> Vec<String> {
    report
        .results
        .iter()
        .filter(|r| r.status == Fail)
        .map(|r| format!("{}: {}", r.id, r.actual))
        .collect()
}

/// OpenZeppelin's allowlist token admits only accounts its manager allowed: its constructor
/// allows and credits the suite's holder, the spender stays unallowed. Rows that need the spender
/// are UNVERIFIABLE with that reason; nothing is a FAIL.
#[test]
fn openzeppelin_allowlist_token_fails_nothing_and_names_the_unallowed_spender() {
    let report = run_wasm_with(
        "tp_oz_allowlist",
        Some(serde_json::json!([
            "Allow", "ALW", "@holder", "@admin", 1000
        ])),
    );
    let failed = failures(&report);
    assert!(failed.is_empty(), "{failed:#?}");
    let transfer = report
        .results
        .iter()
        .find(|r| r.id == "sep41-transfer")
        .unwrap();
    assert_eq!(transfer.status, Unverifiable, "{}", transfer.actual);
    assert!(
        transfer.actual.contains("does not accept the spender"),
        "{}",
        transfer.actual
    );
    assert_status(&report, "sep41-burn", Pass);
}

/// OpenZeppelin's blocklist, pausable, capped and votes tokens and the soroban-examples token: no FAIL.
#[test]
fn other_third_party_tokens_fail_nothing() {
    for (name, args) in [
        (
            "tp_oz_blocklist",
            serde_json::json!(["Block", "BLK", "@holder", "@admin", 1000]),
        ),
        (
            "tp_oz_pausable",
            serde_json::json!(["Pause", "PAU", "@admin", 0]),
        ),
        ("tp_oz_capped", serde_json::json!([1_000_000])),
        ("tp_oz_votes", serde_json::json!(["@admin"])),
        (
            "tp_soroban_token",
            serde_json::json!(["@admin", 7, "Token", "TOK"]),
        ),
    ] {
        let report = run_wasm_with(name, Some(args));
        let failed = failures(&report);
        assert!(failed.is_empty(), "{name}: {failed:#?}");
    }
}
