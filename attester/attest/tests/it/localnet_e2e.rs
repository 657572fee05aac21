//! End to end on the local network: registry and gate from the built WASM, classic assets whose issuer
//! flags match eval subjects, off-chain sources over local HTTPS; attest, read back, gate, verify.

use crate::common;

use assay_attest::attest::{execute, plan, ChainSubmitter, Outcome, Write};
use assay_attest::registry::read_safety;
use assay_attest::sac;
use assay_attest::scanning::scan_fresh;
use assay_attest::targets::Target;
use assay_attest::verify::{self, compare, Verdict};
use assay_core::Freshness;
use assay_scan::testsupport::Reply;
use common::*;

const AQUA: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
const USDC: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
const DOGE: &str = "GA22IDJNHUMC3XKUCCBFNTQIJOUBWINC5GCXHLJ2V6KZ3OWAXCULNQ7P";
const OUTAGE_ISSUER: &str = "GARDNV3Q7YGT4AKSDF25LT32YSCCW4EV22Y2TV3I2PU2MMXJTEDL5T55";
const DOMAINS: [&str; 4] = [
    "aqua.network",
    "circle.com",
    "darkpool.digital",
    "outage.example",
];

#[test]
fn attest_read_back_gate_and_verify_on_localnet() {
    let w = World::start(&DOMAINS);
    // Issuer flags as the eval subjects hold them: AQUA none, USDC revocable, DOGE none (reputation only).
    let aqua = w.issue("AQUA", AQUA, 0, Some("aqua.network"));
    // Locked (master weight 0): no flag and no key, so no power over holders (clear).
    w.lock(AQUA);
    let usdc = w.issue("USDC", USDC, 2, Some("circle.com"));
    let doge = w.issue("DOGE", DOGE, 0, Some("darkpool.digital"));
    let outage = w.issue("OUTG", OUTAGE_ISSUER, 0, Some("outage.example"));
    w.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
    w.serve_eval("usdc-revocable-regulated", USDC, "circle.com");
    w.serve_eval("doge-noflags-malicious", DOGE, "darkpool.digital");
    // The outage asset's directory answers 500 every time: reputation is undetermined.
    w.serve_outage(OUTAGE_ISSUER, "outage.example");

    let settings = w.settings(&DOMAINS);
    let assets = [&aqua, &usdc, &doge, &outage];
    let targets: Vec<Target> = assets
        .iter()
        .map(|a| Target {
            asset: a.core().into(),
            contract: sac::asset_contract_id(&a.core(), &w.spec.passphrase).unwrap(),
        })
        .collect();
    let cores: Vec<_> = assets.iter().map(|a| a.core()).collect();
    let reports = scan_fresh(&settings, &cores).unwrap();
    let now = assay_core::Timestamp::now();
    let (planned, slots) = plan(&targets, reports, now, Freshness::default());
    assert_eq!(
        planned.len(),
        3,
        "AQUA, USDC, DOGE are attestable; OUTG is not"
    );
    let mut submitter = ChainSubmitter {
        invoker: w.invoker(&w.attester),
        registry: w.registry,
        confirm_read_back: true,
    };
    let outcomes = execute(&planned, slots, &mut submitter, 50, false);

    let written = |o: &Outcome| match o {
        Outcome::Written(Write {
            severity,
            flags,
            tx_hash,
            ledger,
            ..
        }) => (*severity, *flags, tx_hash.clone(), *ledger),
        other => panic!("expected written, got {other:?}"),
    };
    let (s0, f0, tx0, l0) = written(&outcomes[0]);
    let (s1, f1, tx1, _) = written(&outcomes[1]);
    let (s2, f2, tx2, _) = written(&outcomes[2]);
    assert_eq!((s0, f0), (0, 0), "AQUA clear");
    assert_eq!(
        (s1, f1),
        (2, 18),
        "USDC medium, revocable + domain_unverified"
    );
    // DOGE: critical by reputation; bit 1 is its own latent freeze (flags not locked, a key can sign).
    assert_eq!((s2, f2), (4, 50), "DOGE critical by reputation");
    assert!(
        tx0 == tx1 && tx1 == tx2 && tx0.len() == 64 && l0 > 0,
        "one attest_many transaction for the batch"
    );
    match &outcomes[3] {
        Outcome::Refused { rule, reason } => {
            assert_eq!(rule, "undetermined");
            assert!(reason.contains("reputation"), "{reason}");
        }
        other => panic!("OUTG must be refused, got {other:?}"),
    }

    // Read back: exactly what was decided, and nothing for the refused asset.
    for (p, t) in planned.iter().zip(&targets) {
        let s = read_safety(&w.rpc, w.registry, t.contract)
            .unwrap()
            .expect("attested");
        assert_eq!(
            (s.severity, s.flags, hex::encode(s.evidence_hash)),
            (
                p.params.severity,
                p.params.flags,
                p.params.evidence_hash.clone()
            )
        );
    }
    assert_eq!(
        read_safety(&w.rpc, w.registry, targets[3].contract).unwrap(),
        None
    );

    // The gate admits the clean asset and refuses the others with their distinct errors.
    assert_eq!(w.gate_check(targets[0].contract), Ok(()), "AQUA admitted");
    assert_eq!(
        w.gate_check(targets[1].contract),
        Err(3),
        "USDC: IssuerCanTakeIt (freeze)"
    );
    assert_eq!(
        w.gate_check(targets[2].contract),
        Err(4),
        "DOGE: SeverityTooHigh"
    );
    assert_eq!(
        w.gate_check(targets[3].contract),
        Err(1),
        "OUTG: NotAttested"
    );

    // verify: agreement (0).
    let fresh = |a: &ClassicAsset| {
        scan_fresh(&settings, &[a.core()])
            .unwrap()
            .remove(0)
            .unwrap()
    };
    let ledger_now = verify::ledger_time(&w.rpc).unwrap();
    let on_chain = read_safety(&w.rpc, w.registry, targets[0].contract).unwrap();
    let v = compare(on_chain.as_ref(), &fresh(&aqua), ledger_now, 86_400);
    assert!(
        matches!(
            v,
            Verdict::Agreement {
                evidence_version: 8,
                ..
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.exit_code(), verify::exit::AGREEMENT);
    // absent (3).
    let v = compare(None, &fresh(&aqua), ledger_now, 86_400);
    assert_eq!(v.exit_code(), verify::exit::ABSENT);
    // mismatch after a flag change (4): USDC's issuer adds clawback; severity moves first.
    w.net
        .admin_set_account_flags(&g_account(USDC), 2 | 8)
        .unwrap();
    let on_chain = read_safety(&w.rpc, w.registry, targets[1].contract).unwrap();
    let v = compare(on_chain.as_ref(), &fresh(&usdc), ledger_now, 86_400);
    assert_eq!(
        v,
        Verdict::Mismatch {
            field: "severity".into(),
            on_chain: "2".into(),
            scanned: "3".into()
        }
    );
    assert_eq!(v.exit_code(), verify::exit::MISMATCH);
    // stale after the clock moves (5): wait for the ledger clock to pass a 1 s window.
    let attested_at = read_safety(&w.rpc, w.registry, targets[0].contract)
        .unwrap()
        .unwrap()
        .attested_at;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut later = verify::ledger_time(&w.rpc).unwrap();
    while later <= attested_at + 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
        later = verify::ledger_time(&w.rpc).unwrap();
    }
    let on_chain = read_safety(&w.rpc, w.registry, targets[0].contract).unwrap();
    let v = compare(on_chain.as_ref(), &fresh(&aqua), later, 1);
    assert!(
        matches!(
            v,
            Verdict::Stale {
                max_age_secs: 1,
                ..
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.exit_code(), verify::exit::STALE);
    // could not verify during a source outage (2): AQUA's directory starts failing.
    w.route(
        EXPERT,
        &format!("/explorer/directory/{AQUA}"),
        Reply::status(503),
    );
    let v = compare(on_chain.as_ref(), &fresh(&aqua), ledger_now, 86_400);
    assert!(matches!(v, Verdict::Unverifiable { .. }), "{v:?}");
    assert_eq!(v.exit_code(), verify::exit::UNVERIFIABLE);
}
