//! Issue #26 item 2: ledger facts read through stellar-rpc (`getLedgerEntries`) over real HTTPS on
//! 127.0.0.1. The issuer account read alone gives the report, and the evidence hash, a Horizon read of the
//! same facts gives; Horizon is optional (a second copy of the flags when it answers); a defective answer,
//! a 5xx, a missing entry, another network or a ledger behind the run's floor is an error, never a fact.
use std::sync::atomic::Ordering;

use assay_core::hash::{evidence_hash, EvidenceVersion, PreimageInput};
use assay_core::{Asset, Report};
use assay_scan::hosts::HostLimits;
use assay_scan::testsupport::{closed_port, ReplayServer, Reply};
use assay_scan::{ScanError, Scanner};
use serde_json::json;
use stellar_xdr::{
    AccountEntry, AccountEntryExt, AccountId, AlphaNum4, AssetCode4, LedgerEntryData, Limits,
    PublicKey, SequenceNumber, String32, Thresholds, TrustLineAsset, TrustLineEntry,
    TrustLineEntryExt, Uint256, WriteXdr,
};

use crate::replay::{self, client, https_to, EXPERT, HORIZON};
use crate::scan_budget::{DOMAIN, ISSUER};

const RPC: &str = "rpc.test";
const HOLDER: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
const REVOCABLE: u32 = 0x2;

fn account_id(address: &str) -> AccountId {
    let key = stellar_strkey::ed25519::PublicKey::from_string(address).unwrap();
    AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(key.0)))
}

/// The issuer's account entry: `flags`, home domain [`DOMAIN`], master weight 1, thresholds 0.
fn issuer_entry(flags: u32) -> String {
    LedgerEntryData::Account(AccountEntry {
        account_id: account_id(ISSUER),
        balance: 100_000_000,
        seq_num: SequenceNumber(7),
        num_sub_entries: 0,
        inflation_dest: None,
        flags,
        home_domain: String32::try_from(DOMAIN.as_bytes().to_vec()).unwrap(),
        thresholds: Thresholds([1, 0, 0, 0]),
        signers: Vec::new().try_into().unwrap(),
        ext: AccountEntryExt::V0,
    })
    .to_xdr_base64(Limits::none())
    .unwrap()
}

fn rpc_answer(result: serde_json::Value) -> Reply {
    Reply::json(json!({"jsonrpc": "2.0", "id": 1, "result": result}).to_string())
}

fn network_answer(passphrase: &str) -> Reply {
    rpc_answer(json!({"passphrase": passphrase, "protocolVersion": 23}))
}

/// A `getLedgerEntries` answer at `ledger` holding `entries` (key, xdr).
fn entries_answer(ledger: u32, entries: &[(String, String)]) -> Reply {
    let entries: Vec<_> = entries
        .iter()
        .map(|(key, xdr)| json!({"key": key, "xdr": xdr, "lastModifiedLedgerSeq": 3}))
        .collect();
    rpc_answer(json!({"entries": entries, "latestLedger": ledger}))
}

fn issuer_key() -> String {
    assay_core::parse::account_key(ISSUER).unwrap()
}

/// The replayed sources of `crate::scan_budget` (Horizon answering flags 0 on both records, the toml, the
/// directory and blocklist), plus a stellar-rpc at `http://rpc.test/rpc`.
async fn world() -> ReplayServer {
    let (server, _, _) = crate::scan_budget::world_with(HostLimits::default(), Some(DOMAIN)).await;
    server
}

/// A scanner of the world: ledger facts from stellar-rpc when `rpc`, Horizon reachable when `horizon_up`
/// (else its host is sent to a closed port). Horizon is always `https://horizon.test`, where facts are cited.
fn scanner(server: &ReplayServer, rpc: bool, horizon_up: bool) -> Scanner {
    let mut connect_to = https_to(server, &[EXPERT, DOMAIN]);
    // stellar-rpc over plain HTTP, as a local or an operator's endpoint may be.
    connect_to.push(server.connect_http(RPC).parse().unwrap());
    connect_to.push(if horizon_up {
        server.connect_https(HORIZON).parse().unwrap()
    } else {
        format!("{HORIZON}:443:127.0.0.1:{}", closed_port())
            .parse()
            .unwrap()
    });
    let rpc_url = rpc.then(|| format!("http://{RPC}/rpc"));
    crate::replay::scanner(
        client(server, connect_to),
        rpc_url,
        1,
        HostLimits::default(),
    )
}

/// The stellar-rpc answers: `getNetwork` on testnet, then `replies` in turn.
fn serve_rpc(server: &ReplayServer, replies: impl IntoIterator<Item = Reply>) {
    let mut answers = vec![network_answer(assay_core::TESTNET_PASSPHRASE)];
    answers.extend(replies);
    server.route(RPC, "/rpc", answers);
}

/// Why a scan of [`asset`] through stellar-rpc (Horizon up when `horizon_up`) fails.
async fn scan_error(server: &ReplayServer, horizon_up: bool) -> ScanError {
    scanner(server, true, horizon_up)
        .scan(&asset())
        .await
        .unwrap_err()
}

fn asset() -> Asset {
    Asset::new("XRP", ISSUER).unwrap()
}

fn hash(report: &Report) -> String {
    evidence_hash(
        &PreimageInput::from_report(report).unwrap(),
        EvidenceVersion::V6,
    )
}

fn rpc_failure(err: ScanError) -> String {
    match err {
        ScanError::Rpc { url, failure } => {
            assert_eq!(url, format!("http://{RPC}/rpc"));
            failure
        }
        other => panic!("expected a stellar-rpc failure, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_entry_alone_gives_the_report_and_hash_horizon_gives() {
    let server = world().await;
    serve_rpc(
        &server,
        [entries_answer(42, &[(issuer_key(), issuer_entry(0))])],
    );
    let by_horizon =
        assay_core::evaluate(&scanner(&server, false, true).scan(&asset()).await.unwrap()).unwrap();
    let subject = scanner(&server, true, false).scan(&asset()).await.unwrap();
    let by_rpc = assay_core::evaluate(&subject).unwrap();
    // Horizon was not reachable: its copy is not read, which is not an observation.
    let read = subject
        .ledger_read
        .as_ref()
        .expect("read through stellar-rpc");
    assert_eq!(read.ledger, 42);
    assert!(read.horizon_copy_unread.is_some(), "{read:?}");
    assert_eq!(by_rpc.severity, by_horizon.severity);
    assert_eq!(by_rpc.mechanics, by_horizon.mechanics);
    assert_eq!(by_rpc.undetermined, by_horizon.undetermined);
    assert_eq!(by_rpc.evidence.len(), by_horizon.evidence.len());
    assert_eq!(hash(&by_rpc), hash(&by_horizon));
    // Flags 0, not locked, one key: the latent freeze (medium).
    assert_eq!(by_rpc.severity.to_string(), "medium");
    assert!(!by_rpc.undetermined, "{:?}", by_rpc.undetermined_checks);
    let capability = &by_rpc.findings[0].reasoning;
    assert!(capability.contains("at ledger 42"), "{capability}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn horizons_copy_beside_the_entry_still_counts_a_power_either_holds() {
    let server = world().await;
    // Horizon's two records say flags 0 (the world's); the ledger entry says auth_revocable.
    serve_rpc(
        &server,
        [entries_answer(
            43,
            &[(issuer_key(), issuer_entry(REVOCABLE))],
        )],
    );
    let subject = scanner(&server, true, true).scan(&asset()).await.unwrap();
    assert_eq!(
        subject.ledger_read.as_ref().unwrap().horizon_copy_unread,
        None
    );
    let report = assay_core::evaluate(&subject).unwrap();
    assert!(
        report.mechanics.names().contains(&"auth_revocable"),
        "{:?}",
        report.mechanics
    );
    // The disagreement is reported with both copies cited.
    assert!(report
        .evidence
        .iter()
        .any(|e| e.source == "horizon/account" && e.claim.contains("auth_revocable=true")));
    assert!(report
        .evidence
        .iter()
        .any(|e| e.source == "horizon" && e.claim.contains("auth_revocable=false")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_answer_is_an_error_never_an_absent_account() {
    let server = world().await;
    serve_rpc(
        &server,
        [Reply::json(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"entries\":[{\"key\":\"K\"}]",
        )],
    );
    let err = scan_error(&server, false).await;
    let failure = rpc_failure(err);
    assert!(failure.starts_with("malformed"), "{failure}");

    // An entry whose XDR is not an account entry is defective too.
    serve_rpc(
        &server,
        [entries_answer(44, &[(issuer_key(), "AAAA".into())])],
    );
    let err = scan_error(&server, false).await;
    assert!(rpc_failure(err).starts_with("malformed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5xx_is_retried_then_an_error() {
    let server = world().await;
    server.route(RPC, "/rpc", vec![Reply::status(503)]);
    let err = scan_error(&server, false).await;
    let failure = rpc_failure(err);
    assert!(
        failure.contains("getNetwork") && failure.contains("503"),
        "{failure}"
    );
    assert_eq!(server.hit_count(RPC, "/rpc"), 3, "three attempts in all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absent_entry_is_an_unknown_issuer() {
    let server = world().await;
    serve_rpc(&server, [entries_answer(45, &[])]);
    let err = scan_error(&server, true).await;
    assert!(
        matches!(&err, ScanError::UnknownIssuer { url } if url.contains("ledger 45")),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rpc_of_another_network_or_behind_the_floor_is_refused() {
    let server = world().await;
    server.route(
        RPC,
        "/rpc",
        vec![network_answer(assay_core::PUBNET_PASSPHRASE)],
    );
    let err = scan_error(&server, false).await;
    assert!(
        matches!(&err, ScanError::RpcWrongNetwork { served, .. } if served == assay_core::PUBNET_PASSPHRASE),
        "{err}"
    );

    serve_rpc(
        &server,
        [entries_answer(50, &[(issuer_key(), issuer_entry(0))])],
    );
    let behind = scanner(&server, true, false);
    behind.config().ledger_floor.store(60, Ordering::Release);
    let failure = rpc_failure(behind.scan(&asset()).await.unwrap_err());
    assert!(
        failure.contains("ledger 50 is behind ledger 60"),
        "{failure}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holders_trustlines_are_read_in_batches_of_200_keys() {
    let server = world().await;
    // 250 assets of the issuer: the holder's account and 250 trustline keys make two calls.
    let assets: Vec<Asset> = (0..250)
        .map(|i| Asset::new(&format!("A{i}"), ISSUER).unwrap())
        .collect();
    let holder_key = assay_core::parse::account_key(HOLDER).unwrap();
    let holder_entry = LedgerEntryData::Account(AccountEntry {
        account_id: account_id(HOLDER),
        balance: 1,
        seq_num: SequenceNumber(1),
        num_sub_entries: 1,
        inflation_dest: None,
        flags: 0,
        home_domain: String32::default(),
        thresholds: Thresholds([1, 0, 0, 0]),
        signers: Vec::new().try_into().unwrap(),
        ext: AccountEntryExt::V0,
    })
    .to_xdr_base64(Limits::none())
    .unwrap();
    // One trustline, in the second batch: to A230, deauthorized, clawback enabled on it.
    let line = LedgerEntryData::Trustline(TrustLineEntry {
        account_id: account_id(HOLDER),
        asset: TrustLineAsset::CreditAlphanum4(AlphaNum4 {
            asset_code: AssetCode4(*b"A230"),
            issuer: account_id(ISSUER),
        }),
        balance: 25_000_000,
        limit: i64::MAX,
        flags: 0x4,
        ext: TrustLineEntryExt::V0,
    })
    .to_xdr_base64(Limits::none())
    .unwrap();
    let line_key = assay_core::parse::trustline_key(HOLDER, &assets[230]).unwrap();
    serve_rpc(
        &server,
        [
            entries_answer(46, &[(holder_key, holder_entry)]),
            entries_answer(46, &[(line_key, line)]),
        ],
    );
    let (url, _, lines) = scanner(&server, true, false)
        .holder_trustlines(HOLDER, Some(&assets))
        .await
        .unwrap();
    assert_eq!(
        server.hit_count(RPC, "/rpc"),
        3,
        "getNetwork and two batches"
    );
    assert_eq!(url, format!("https://{HORIZON}/accounts/{HOLDER}"));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].asset, assets[230]);
    assert_eq!(lines[0].balance, "2.5000000");
    assert!(lines[0].clawback_enabled && !lines[0].authorized);

    // A holder whose account entry is absent is an unknown account, not one without trustlines.
    serve_rpc(&server, [entries_answer(47, &[])]);
    let err = scanner(&server, true, false)
        .holder_trustlines(HOLDER, Some(&assets[..1]))
        .await
        .unwrap_err();
    assert!(matches!(err, ScanError::UnknownAccount { .. }), "{err}");
}

/// A second operator's Horizon: another host, over plain HTTP, under a path prefix with a key in it.
const HORIZON_B: &str = "horizon-b.test";
const TENANT_PREFIX: &str = "/tenant/k8Jd2mQ9xL4vT7pR1sW3";

/// Operator B's scanner: Horizon at `http://horizon-b.test/tenant/KEY`, no stellar-rpc; the same public
/// sources (directory, the issuer's domain) as the world's.
fn scanner_of_operator_b(server: &ReplayServer) -> Scanner {
    let mut connect_to = https_to(server, &[EXPERT, DOMAIN]);
    connect_to.push(server.connect_http(HORIZON_B).parse().unwrap());
    let mut config = replay::scanner_config(None, 1, HostLimits::default());
    config.horizon_url = format!("http://{HORIZON_B}{TENANT_PREFIX}/");
    Scanner::new(client(server, connect_to), config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_operators_with_different_endpoints_attest_the_same_v7_hash() {
    let server = world().await;
    // Operator A reads the ledger through its stellar-rpc (Horizon named `https://horizon.test`, down).
    server.route(
        RPC,
        "/rpc",
        vec![
            network_answer(assay_core::TESTNET_PASSPHRASE),
            entries_answer(42, &[(issuer_key(), issuer_entry(0))]),
        ],
    );
    // Operator B's Horizon answers the same facts as the world's under its own host and prefix.
    let flags = json!({"auth_required": false, "auth_revocable": false, "auth_immutable": false,
        "auth_clawback_enabled": false});
    server.route(
        HORIZON_B,
        &format!("{TENANT_PREFIX}/"),
        vec![Reply::horizon_root(assay_core::TESTNET_PASSPHRASE)],
    );
    server.route(
        HORIZON_B,
        &format!("{TENANT_PREFIX}/assets?asset_code=XRP&asset_issuer={ISSUER}"),
        vec![Reply::json(
            json!({"_embedded": {"records": [{"asset_code": "XRP", "asset_issuer": ISSUER, "flags": flags}]}})
                .to_string(),
        )],
    );
    server.route(
        HORIZON_B,
        &format!("{TENANT_PREFIX}/accounts/{ISSUER}"),
        vec![Reply::json(
            json!({"account_id": ISSUER, "flags": flags, "home_domain": DOMAIN,
                "thresholds": {"low_threshold": 0, "med_threshold": 0, "high_threshold": 0},
                "signers": [{"weight": 1, "key": ISSUER, "type": "ed25519_public_key"}]})
            .to_string(),
        )],
    );
    let a =
        assay_core::evaluate(&scanner(&server, true, false).scan(&asset()).await.unwrap()).unwrap();
    let b = assay_core::evaluate(&scanner_of_operator_b(&server).scan(&asset()).await.unwrap())
        .unwrap();
    assert!(!a.undetermined && !b.undetermined, "{a:?}\n{b:?}");
    assert_eq!((a.severity, a.mechanics), (b.severity, b.mechanics));
    let input = |r: &Report| PreimageInput::from_report(r).unwrap();
    // v6 bound each operator's Horizon URL: the same facts hashed differently.
    assert_ne!(hash(&a), hash(&b));
    // v7 binds none: one hash.
    assert_eq!(
        evidence_hash(&input(&a), EvidenceVersion::V7),
        evidence_hash(&input(&b), EvidenceVersion::V7)
    );
    assert_eq!(
        EvidenceVersion::default_for(&a.asset),
        EvidenceVersion::V8,
        "new attestations use it"
    );
    for report in [&a, &b] {
        let text = assay_core::hash::preimage(&input(report), EvidenceVersion::V7);
        for endpoint in [
            HORIZON,
            HORIZON_B,
            RPC,
            "tenant",
            "k8Jd2mQ9",
            "(redacted)",
            "https://horizon",
            "http://",
        ] {
            assert!(!text.contains(endpoint), "{endpoint} in\n{text}");
        }
        assert!(
            text.contains(&format!(
                "evidence\thorizon\thorizon:/assets?asset_code=XRP&asset_issuer={ISSUER}\t"
            )),
            "{text}"
        );
        // The report still cites where it read (redacted, outside the hash).
        assert!(report.evidence.iter().any(|e| e.url.contains("horizon")));
    }
}
