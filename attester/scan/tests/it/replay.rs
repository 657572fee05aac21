//! The scan tests' shared set-up: a client that reaches the replay server's hosts and trusts its CA, and a
//! scanner of the replayed Horizon ([`HORIZON`]) and directory ([`EXPERT`]) on testnet.
use assay_scan::hosts::HostLimits;
use assay_scan::net::mapping::{ConnectToRule, Mappings};
use assay_scan::net::{HttpClient, NetConfig};
use assay_scan::testsupport::ReplayServer;
use assay_scan::{ScanConfig, Scanner};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

pub(crate) const HORIZON: &str = "horizon.test";
pub(crate) const EXPERT: &str = "expert.test";

/// `hosts`, each sent to the replay server over HTTPS.
pub(crate) fn https_to(server: &ReplayServer, hosts: &[&str]) -> Vec<ConnectToRule> {
    hosts
        .iter()
        .map(|h| server.connect_https(h).parse().unwrap())
        .collect()
}

/// A client that connects as `connect_to` says and trusts the replay server's CA.
pub(crate) fn client(server: &ReplayServer, connect_to: Vec<ConnectToRule>) -> HttpClient {
    HttpClient::new(&NetConfig {
        mappings: Mappings {
            resolve: Vec::new(),
            connect_to,
        },
        extra_roots: vec![CertificateDer::from_pem_slice(server.ca_pem.as_bytes()).unwrap()],
        ..NetConfig::default()
    })
    .unwrap()
}

/// A testnet scanner on `http`: Horizon at `https://HORIZON`, the directory at `https://EXPERT`, ledger facts
/// from `rpc_url` when given, no asset lists and no cache.
pub(crate) fn scanner(
    http: HttpClient,
    rpc_url: Option<String>,
    concurrency: usize,
    per_host: HostLimits,
) -> Scanner {
    Scanner::new(http, scanner_config(rpc_url, concurrency, per_host))
}

/// The configuration [`scanner`] uses, for a test that changes one of its sources.
pub(crate) fn scanner_config(
    rpc_url: Option<String>,
    concurrency: usize,
    per_host: HostLimits,
) -> ScanConfig {
    ScanConfig {
        network_passphrase: assay_core::TESTNET_PASSPHRASE.into(),
        horizon_url: format!("https://{HORIZON}"),
        rpc_url,
        ledger_floor: Default::default(),
        expert_url: format!("https://{EXPERT}"),
        asset_lists: Vec::new(),
        cache: None,
        concurrency,
        per_host,
    }
}
