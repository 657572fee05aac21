//! Issue #16, item 5: a panic inside one asset's scan task becomes that asset's error; the other
//! assets are scanned and the process carries on.
use std::sync::Arc;

use assay_core::Asset;
use assay_scan::net::{HttpClient, NetConfig};
use assay_scan::{ScanConfig, ScanError, Scanner};

const ISSUER: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";

#[tokio::test]
async fn item5_a_panicking_scan_task_is_that_assets_error() {
    // Nothing listens on port 1: every scan fails fast with a Horizon error, which is the
    // ordinary outcome the panicking task must not disturb.
    let http = HttpClient::new(&NetConfig::default()).expect("client");
    let scanner = Arc::new(Scanner::new(
        http,
        ScanConfig {
            network_passphrase: assay_core::TESTNET_PASSPHRASE.into(),
            horizon_url: "http://127.0.0.1:1".into(),
            rpc_url: None,
            ledger_floor: Default::default(),
            expert_url: "http://127.0.0.1:1".into(),
            asset_lists: Vec::new(),
            cache: None,
            concurrency: 2,
            per_host: Default::default(),
        },
    ));
    let assets = vec![
        Asset::new("AAA", ISSUER).unwrap(),
        Asset::new("BBB", ISSUER).unwrap(),
        Asset::new("CCC", ISSUER).unwrap(),
    ];
    let on_done = Arc::new(|index: usize| {
        if index == 1 {
            panic!("planted panic in task {index}");
        }
    });
    let results = scanner.scan_many(assets, on_done).await;
    assert_eq!(results.len(), 3);
    match &results[1] {
        Err(ScanError::Panicked { asset, detail }) => {
            assert_eq!(asset, &format!("BBB-{ISSUER}"));
            assert!(detail.contains("planted panic in task 1"), "{detail}");
        }
        other => panic!("expected the planted panic as BBB's error, got {other:?}"),
    }
    for i in [0, 2] {
        assert!(
            matches!(results[i], Err(ScanError::Horizon { .. })),
            "asset {i}: {:?}",
            results[i]
        );
    }
}
