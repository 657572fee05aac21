//! Issue #16 on the local network: an issuer that evades the update, a Horizon of another network, and
//! a write whose read-back fails. Registry and gate from the built WASM, sources over local HTTPS.

use crate::common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use assay_attest::attest::{
    execute, exit, exit_code, plan, revoke_weaker_entries, ChainSubmitter, Outcome, Write,
};
use assay_attest::decide::Floor;
use assay_attest::registry;
use assay_attest::registry::read_safety;
use assay_attest::sac;
use assay_attest::scanning::{scan_fresh, scan_subjects, ScanSettings};
use assay_attest::targets::Target;
use assay_attest::watch::{Checked, WatchConfig, Watcher};
use assay_chain::rpc::RpcClient;
use assay_chain::submit::Invoker;
use assay_core::Freshness;
use assay_scan::testsupport::Reply;
use common::proxy::{Fault, Proxy};
use common::*;

const USDC: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
const AUTH_REVOCABLE: u32 = 2;

fn target(w: &World, asset: &ClassicAsset) -> Target {
    Target {
        asset: assay_core::Token::Classic(asset.core()),
        contract: sac::asset_contract_id(&asset.core(), &w.spec.passphrase).unwrap(),
    }
}

fn submitter<'a>(w: &'a World, rpc: &'a RpcClient) -> ChainSubmitter<'a> {
    ChainSubmitter {
        invoker: Invoker {
            rpc,
            network: &w.spec,
            signer: &w.attester,
            options: local_invoke_options(),
        },
        registry: w.registry,
        confirm_read_back: true,
    }
}

/// `assay attest`'s steps for `targets`: scan fresh, plan, write, revoke weaker entries.
fn attest(
    w: &World,
    settings: &ScanSettings,
    targets: &[Target],
    rpc: &RpcClient,
    dry_run: bool,
) -> Vec<Outcome> {
    let assets: Vec<_> = targets
        .iter()
        .map(|t| match &t.asset {
            assay_core::Token::Classic(asset) => asset.clone(),
            other => panic!("{other}: the hardening tests attest classic assets"),
        })
        .collect();
    let reports = scan_fresh(settings, &assets).unwrap();
    let floors: Vec<Option<Floor>> = reports
        .iter()
        .map(|r| r.as_ref().ok().and_then(Floor::of))
        .collect();
    let now = assay_core::Timestamp::now();
    let (planned, slots) = plan(targets, reports, now, Freshness::default());
    let mut s = submitter(w, rpc);
    let outcomes = execute(&planned, slots, &mut s, 50, dry_run);
    revoke_weaker_entries(targets, &floors, outcomes, &mut s, dry_run)
}

fn watcher<'a>(
    w: &'a World,
    rpc: &'a RpcClient,
    settings: ScanSettings,
    t: &Target,
) -> Watcher<'a> {
    let config = WatchConfig::parse(&format!(
        "registry = \"C\"\nnetwork = \"local\"\n[[asset]]\nasset = \"{}\"\n",
        t.asset
    ))
    .unwrap();
    w.watcher(
        rpc,
        settings,
        config,
        vec![(t.asset.clone(), t.contract, Duration::from_secs(300))],
    )
}

fn revocation(w: &World, contract: [u8; 32]) -> Option<stellar_xdr::ScVal> {
    let f = registry::call(
        w.registry,
        "get_revocation",
        vec![registry::contract_val(contract)],
    );
    w.invoker(&w.admin)
        .read(&f)
        .unwrap()
        .filter(|v| *v != stellar_xdr::ScVal::Void)
}

/// Issue #16 item 1: an issuer sets AUTH_REVOCABLE and clears home_domain in one go while the directory
/// is down (with no home_domain the blocklist is keyed on the directory's domain, issue #26), so the
/// blocklist cannot be asked and the report is refused. The refused report still proves the flags it read,
/// which are stricter than the clear entry on chain: `watch` and `attest` revoke the entry (gates fail
/// closed) and raise an alert; repeated refusals degrade health.
#[test]
fn item1_a_refusal_with_a_stricter_floor_revokes_the_weaker_entry() {
    let w = World::start(&["aqua.network"]);
    let aqua = w.clear_aqua();
    let settings = w.settings(&["aqua.network"]);
    let t = target(&w, &aqua);
    let issuer = g_account(AQUA);
    let evade = || {
        w.net
            .admin_set_account_flags(&issuer, AUTH_REVOCABLE)
            .unwrap();
        w.net.admin_set_home_domain(&issuer, "").unwrap();
        w.route(
            EXPERT,
            &format!("/explorer/directory/{AQUA}"),
            Reply::status(503),
        );
    };
    let restore = || {
        w.net.admin_set_account_flags(&issuer, 0).unwrap();
        w.net
            .admin_set_home_domain(&issuer, "aqua.network")
            .unwrap();
        w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    };
    let clear_on_chain = |w: &World| {
        // A revocation just before (the previous round's) vetoes a verdict written in its second.
        w.after(assay_attest::verify::ledger_time(&w.rpc).unwrap());
        let outcomes = attest(w, &settings, std::slice::from_ref(&t), &w.rpc, false);
        assert!(
            matches!(&outcomes[0], Outcome::Written(Write { severity: 0, .. })),
            "{outcomes:?}"
        );
        assert_eq!(w.gate_check(t.contract), Ok(()), "the gate admits it");
    };

    // watch: the clear entry is revoked at the first refused check, with an alert and its metric.
    clear_on_chain(&w);
    evade();
    let mut watch = watcher(&w, &w.rpc, settings.clone(), &t);
    let stop = AtomicBool::new(false);
    let checked = watch.run(&stop, true);
    assert!(
        matches!(&checked[0], Checked::Revoked(rule, tx) if rule == "undetermined" && tx.len() == 64),
        "{checked:?}"
    );
    assert_eq!(read_safety(&w.rpc, w.registry, t.contract).unwrap(), None);
    assert!(
        revocation(&w, t.contract).is_some(),
        "the revocation is traced"
    );
    assert!(w.gate_check(t.contract).is_err(), "gates now fail closed");
    let metrics = watch.health.lock().unwrap().metrics();
    assert!(
        metrics.contains("assay_watch_alerts_total{alert=\"refused_stricter_floor\"} 1\n")
            && metrics.contains("assay_watch_revocations_total 1\n"),
        "{metrics}"
    );
    assert_eq!(watch.health.lock().unwrap().status(), "ok", "one refusal");
    // Refused again: nothing left to revoke, no second alert, but repeated refusals degrade health.
    let checked = watch.run(&stop, true);
    assert_eq!(checked[0], Checked::Refused("undetermined".into()));
    let health = watch.health.lock().unwrap();
    assert_eq!(health.status(), "degraded");
    assert_eq!(health.alerts_total.get("refused_stricter_floor"), Some(&1));
    assert!(
        health.metrics().contains(&format!(
            "assay_watch_consecutive_refusals{{asset=\"{}\"}} 2\n",
            t.asset
        )),
        "{}",
        health.metrics()
    );
    drop(health);

    // attest: the same evasion after a fresh clear write. A dry run only reports; the real run revokes.
    restore();
    clear_on_chain(&w);
    evade();
    let dry = attest(&w, &settings, std::slice::from_ref(&t), &w.rpc, true);
    assert!(matches!(&dry[0], Outcome::Refused { .. }), "{dry:?}");
    assert!(read_safety(&w.rpc, w.registry, t.contract)
        .unwrap()
        .is_some());
    let outcomes = attest(&w, &settings, std::slice::from_ref(&t), &w.rpc, false);
    match &outcomes[0] {
        Outcome::Revoked {
            rule,
            floor,
            revoked_severity,
            revoked_flags,
            tx_hash,
            ..
        } => {
            assert_eq!(rule, "undetermined");
            assert!(
                floor.severity > 0 && floor.flags & AUTH_REVOCABLE != 0,
                "{floor:?}"
            );
            assert_eq!((*revoked_severity, *revoked_flags), (0, 0));
            assert_eq!(tx_hash.len(), 64);
        }
        other => panic!("expected revoked, got {other:?}"),
    }
    assert_eq!(exit_code(&outcomes), exit::REFUSED);
    assert_eq!(read_safety(&w.rpc, w.registry, t.contract).unwrap(), None);
    assert!(w.gate_check(t.contract).is_err());
}

/// Issue #16 item 2 on the local network: assets said to live on testnet, read from the local
/// network's Horizon, are refused before any flag is read, and nothing is attested.
#[test]
fn item2_attest_refuses_a_horizon_of_another_network() {
    let w = World::start(&["aqua.network"]);
    let aqua = w.clear_aqua();
    let t = target(&w, &aqua);
    let mut settings = w.settings(&["aqua.network"]);
    let local = settings.asset_passphrase.clone();
    settings.asset_passphrase = assay_core::TESTNET_PASSPHRASE.into();
    let subjects = scan_subjects(&settings, &[aqua.core()]).unwrap();
    let err = subjects[0].as_ref().unwrap_err().to_string();
    for needle in [
        local.as_str(),
        assay_core::TESTNET_PASSPHRASE,
        &w.net.horizon_url(),
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let outcomes = attest(&w, &settings, std::slice::from_ref(&t), &w.rpc, false);
    assert!(
        matches!(&outcomes[0], Outcome::NoReport { reason } if reason.contains("serves the network")),
        "{outcomes:?}"
    );
    assert_eq!(exit_code(&outcomes), exit::ERROR);
    assert_eq!(read_safety(&w.rpc, w.registry, t.contract).unwrap(), None);

    // The local network's own passphrase: the same Horizon scans and attests.
    settings.asset_passphrase = local;
    let outcomes = attest(&w, &settings, std::slice::from_ref(&t), &w.rpc, false);
    assert!(matches!(&outcomes[0], Outcome::Written(_)), "{outcomes:?}");
}

/// Issue #16 item 6: the write is confirmed but reading it back fails. `attest` reports it written
/// but unconfirmed, with the hash and its own exit code (never "nothing was submitted"); `watch`
/// re-reads it at the next check instead of writing again.
#[test]
fn item6_a_confirmed_write_whose_read_back_fails_is_written_unconfirmed() {
    let w = World::start(&["aqua.network", "circle.com"]);
    let aqua = w.issue("AQUA", AQUA, 0, Some("aqua.network"));
    // Locked (master weight 0): no flag and no key, so no power over holders (clear).
    w.lock(AQUA);
    let usdc = w.issue("USDC", USDC, AUTH_REVOCABLE, Some("circle.com"));
    w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    w.serve_eval("usdc-revocable-regulated", USDC, "circle.com");
    let settings = w.settings(&["aqua.network", "circle.com"]);
    // The registry's storage, read with getLedgerEntries, answers without any verdict (so the batched
    // read-back finds none), while simulations still see them.
    let hide_verdicts = || {
        Fault::Rewrite(Arc::new(|mut r: serde_json::Value| {
            if let Some(entries) = r["entries"].as_array_mut() {
                entries.retain(|e| !is_verdict(e["key"].as_str().unwrap_or_default()));
            }
            r
        }))
    };

    // attest: simulate, send, confirm; the read-back finds no entry.
    let t = target(&w, &aqua);
    let proxy = Proxy::start(w.net.rpc_url());
    proxy.always("getLedgerEntries", hide_verdicts());
    let rpc = RpcClient::new(&proxy.url).unwrap();
    let outcomes = attest(&w, &settings, std::slice::from_ref(&t), &rpc, false);
    match &outcomes[0] {
        Outcome::WrittenUnconfirmed {
            write: Write { tx_hash, .. },
            reason,
        } => {
            assert_eq!(tx_hash.len(), 64);
            assert!(
                reason.contains(tx_hash.as_str()) && reason.contains("succeeded"),
                "{reason}"
            );
            assert!(!reason.contains("nothing was submitted"), "{reason}");
        }
        other => panic!("expected written_unconfirmed, got {other:?}"),
    }
    assert_eq!(exit_code(&outcomes), exit::WRITTEN_UNCONFIRMED);
    assert_eq!(proxy.count("sendTransaction"), 1);
    assert!(
        read_safety(&w.rpc, w.registry, t.contract)
            .unwrap()
            .is_some(),
        "it is written"
    );

    // watch: read the chain (one batched getLedgerEntries: nothing yet), write, lose the read-back; the
    // next check re-reads by simulation.
    let t = target(&w, &usdc);
    let proxy = Proxy::start(w.net.rpc_url());
    proxy.always("getLedgerEntries", hide_verdicts());
    let rpc = RpcClient::new(&proxy.url).unwrap();
    let watch = watcher(&w, &rpc, settings, &t);
    let first = watch.check(0);
    assert!(
        matches!(&first, Checked::WrittenUnconfirmed(tx, why) if tx.len() == 64 && why.contains("succeeded")),
        "{first:?}"
    );
    assert_eq!(proxy.count("sendTransaction"), 1);
    let second = watch.check(0);
    assert_eq!(second, Checked::Unchanged, "re-read and found the write");
    assert_eq!(proxy.count("sendTransaction"), 1, "never written twice");
    assert!(watch.unconfirmed.lock().unwrap().is_empty());
}

/// #28 item 5: an RPC that answers "absent" to every read of the registry's entries makes each pass want
/// to write every asset; the pass's spend budget (here room for one transaction) stops the sends at what it
/// allows, marks `/health` degraded and raises one alert, and the write it held back is made at the next
/// pass, not lost.
#[test]
fn a_hostile_rpc_cannot_make_a_pass_spend_beyond_its_budget() {
    let w = World::start(&["aqua.network", "circle.com"]);
    let aqua = w.issue("AQUA", AQUA, 0, Some("aqua.network"));
    w.lock(AQUA);
    let usdc = w.issue("USDC", USDC, AUTH_REVOCABLE, Some("circle.com"));
    w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    w.serve_eval("usdc-revocable-regulated", USDC, "circle.com");
    let settings = w.settings(&["aqua.network", "circle.com"]);
    let proxy = Proxy::start(w.net.rpc_url());
    proxy.always(
        "getLedgerEntries",
        Fault::Rewrite(Arc::new(|mut r: serde_json::Value| {
            if let Some(entries) = r["entries"].as_array_mut() {
                entries.retain(|e| !is_verdict(e["key"].as_str().unwrap_or_default()));
            }
            r
        })),
    );
    let rpc = RpcClient::new(&proxy.url).unwrap();
    let (a, u) = (target(&w, &aqua), target(&w, &usdc));
    // A 1 XLM fee cap counts 2 XLM per transaction (itself and a restore it may need): one per pass, two a day.
    let config = WatchConfig::parse(&format!(
        "registry = \"C\"\nnetwork = \"local\"\nbatch_size = 1\nmax_fee_stroops = 10000000\n\
         max_spend_per_pass_xlm = 2\nmax_spend_per_day_xlm = 4\n\
         [[asset]]\nasset = \"{}\"\n[[asset]]\nasset = \"{}\"\n",
        a.asset, u.asset
    ))
    .unwrap();
    let interval = Duration::from_secs(300);
    let watch = w.watcher(
        &rpc,
        settings,
        config,
        vec![
            (a.asset.clone(), a.contract, interval),
            (u.asset.clone(), u.contract, interval),
        ],
    );

    let first: Vec<Checked> = watch.pass(&[0, 1]).into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        proxy.count("sendTransaction"),
        1,
        "one transaction fits the pass: {first:?}"
    );
    let deferred: Vec<usize> = (0..2)
        .filter(|&i| matches!(&first[i], Checked::Deferred(why) if why.contains("max_spend_per_pass_xlm = 2")))
        .collect();
    assert_eq!(deferred.len(), 1, "{first:?}");
    assert!(
        first
            .iter()
            .any(|c| matches!(c, Checked::WrittenUnconfirmed(..))),
        "the other was sent (its read-back hidden by the RPC): {first:?}"
    );
    {
        let h = watch.health.lock().unwrap();
        assert_eq!(h.status(), "degraded");
        assert_eq!(h.alerts_total.get("spend_budget_reached"), Some(&1));
        assert_eq!(h.spend.pass_stroops, 20_000_000);
        assert!(h
            .metrics()
            .contains("assay_watch_spend_day_xlm 2.0000000\n"));
    }

    // The next pass has room again: the deferred write goes out; the sent one is re-read, never re-sent.
    let second: Vec<Checked> = watch.pass(&[0, 1]).into_iter().map(|(_, c)| c).collect();
    assert_eq!(proxy.count("sendTransaction"), 2, "{second:?}");
    assert!(
        matches!(&second[deferred[0]], Checked::WrittenUnconfirmed(..)),
        "the deferred write is made: {second:?}"
    );
    assert_eq!(second[1 - deferred[0]], Checked::Unchanged, "{second:?}");
    for t in [&a, &u] {
        assert!(read_safety(&w.rpc, w.registry, t.contract)
            .unwrap()
            .is_some());
    }
    // The day's budget is spent now: a pass that wanted to write could not send.
    let h = watch.health.lock().unwrap();
    assert_eq!(h.spend.day_stroops, 40_000_000);
    assert_eq!(
        h.status(),
        "ok",
        "the second pass had room for what it sent"
    );
}

/// Whether a `getLedgerEntries` key (base64 XDR) is a registry verdict (`Verdict(asset, attester)`).
fn is_verdict(key: &str) -> bool {
    use stellar_xdr::{LedgerKey, Limits, ReadXdr, ScAddress, ScVal};
    let Ok(LedgerKey::ContractData(d)) = LedgerKey::from_xdr_base64(key, Limits::none()) else {
        return false;
    };
    // Interface 5 keeps an asset's verdicts under the bare asset address.
    matches!(&d.key, ScVal::Address(ScAddress::Contract(_)))
}

/// Issue #26: an entry written `clear` under the rule before the latent freeze (an issuer with flags 0, not
/// locked, whose key can still sign) is re-judged and rewritten by `watch` on its next pass: medium with
/// bit 1, in evidence v6, and the gate that admitted it now refuses it.
#[test]
fn an_entry_written_clear_before_the_latent_freeze_is_rewritten_by_watch() {
    use assay_attest::batch::{write_batched, Landed};
    use assay_attest::registry::Attestation;
    use assay_core::{evidence_hash, EvidenceVersion, PreimageInput, Severity};

    let w = World::start(&["aqua.network"]);
    // Not locked: the issuer's one key can set AUTH_REVOCABLE and freeze at any time.
    let aqua = w.issue("AQUA", AQUA, 0, Some("aqua.network"));
    w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    let settings = w.settings(&["aqua.network"]);
    let t = target(&w, &aqua);

    // What the earlier rule wrote for this issuer: clear, no bit, the v3 hash of that report (which had no
    // signers line).
    let report = scan_fresh(&settings, &[aqua.core()])
        .unwrap()
        .remove(0)
        .unwrap();
    let mut old = PreimageInput::from_report(&report).unwrap();
    old.severity = Severity::Clear;
    old.base_severity = Severity::Clear;
    old.mechanics &= !assay_core::Mechanics::AUTH_REVOCABLE;
    old.evidence
        .retain(|(source, _, _)| source != assay_core::evidence::SOURCE_ISSUER_SIGNERS);
    let mut old_hash = [0u8; 32];
    hex::decode_to_slice(evidence_hash(&old, EvidenceVersion::V3), &mut old_hash).unwrap();
    let written = write_batched(
        &mut submitter(&w, &w.rpc),
        &[Attestation {
            asset: t.contract,
            severity: 0,
            flags: old.mechanics,
            evidence_hash: old_hash,
            code: assay_attest::registry::CodeBinding::judged_by(&report)
                .expect("the report names what it judged"),
        }],
        50,
    );
    assert!(
        matches!(written.landed[0], Landed::Written { .. }),
        "{written:?}"
    );
    assert_eq!(
        w.gate_check(t.contract),
        Ok(()),
        "the old clear entry admits it"
    );

    // The next pass re-judges it and rewrites it.
    let mut watch = watcher(&w, &w.rpc, settings.clone(), &t);
    let stop = AtomicBool::new(false);
    let checked = watch.run(&stop, true);
    assert!(matches!(&checked[0], Checked::Written(_)), "{checked:?}");
    let held = read_safety(&w.rpc, w.registry, t.contract)
        .unwrap()
        .expect("rewritten");
    assert_eq!(
        (
            held.severity,
            held.flags & assay_core::Mechanics::CAPABILITY_MASK
        ),
        (2, assay_core::Mechanics::AUTH_REVOCABLE)
    );
    assert_ne!(held.evidence_hash, old_hash);
    assert_eq!(w.gate_check(t.contract), Err(3), "IssuerCanTakeIt");
    // And it stays: the pass after agrees.
    assert_eq!(watch.run(&stop, true)[0], Checked::Unchanged);
}
