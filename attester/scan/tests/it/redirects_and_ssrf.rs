//! The SEP-1 fetch policy over real HTTPS against local servers: redirect bounds, the namespace
//! rule, loops, and SSRF refusal of literal addresses and DNS answers.
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use assay_scan::net::mapping::Mappings;
use assay_scan::net::{FailureKind, FetchOptions, HttpClient, NetConfig, RedirectPolicy};
use assay_scan::testsupport::{ReplayServer, Reply};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

const TOML: &str = "/.well-known/stellar.toml";
const SEP1: FetchOptions = FetchOptions {
    guarded: true,
    https_only: true,
    redirects: RedirectPolicy::SameHostOrSubdomain,
    accept: "text/plain",
};

async fn setup(hosts: &[&str], dns: &[(&str, &str)]) -> (ReplayServer, HttpClient) {
    let server = ReplayServer::start(hosts).await;
    let mut mappings = Mappings::default();
    for host in hosts {
        mappings
            .connect_to
            .push(server.connect_https(host).parse().unwrap());
    }
    let dns_answers: HashMap<String, Vec<IpAddr>> = dns
        .iter()
        .map(|(name, ip)| (name.to_string(), vec![ip.parse().unwrap()]))
        .collect();
    let config = NetConfig {
        mappings,
        extra_roots: vec![CertificateDer::from_pem_slice(server.ca_pem.as_bytes()).unwrap()],
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(3),
        dns_answers,
    };
    (server, HttpClient::new(&config).unwrap())
}

fn url(host: &str, path: &str) -> String {
    format!("https://{host}{path}")
}

#[tokio::test]
async fn five_redirects_within_the_host_are_followed() {
    let (server, client) = setup(&["example.com"], &[]).await;
    for hop in 0..5 {
        server.route(
            "example.com",
            &format!("/hop{hop}"),
            vec![Reply::redirect(&format!("/hop{}", hop + 1))],
        );
    }
    server.route("example.com", TOML, vec![Reply::redirect("/hop0")]);
    server.route("example.com", "/hop5", vec![Reply::text("ok")]);
    // TOML -> hop0 .. hop4 -> hop5 is six redirects; start from hop0 for exactly five.
    let fetched = client
        .get(&url("example.com", "/hop0"), SEP1)
        .await
        .unwrap();
    assert_eq!(fetched.status, 200);
    assert_eq!(fetched.url, "https://example.com/hop5");
    assert_eq!(fetched.requested_url, "https://example.com/hop0");
    assert_eq!(fetched.body, b"ok");
}

#[tokio::test]
async fn six_redirects_are_too_many() {
    let (server, client) = setup(&["example.com"], &[]).await;
    server.route("example.com", TOML, vec![Reply::redirect("/hop0")]);
    for hop in 0..5 {
        server.route(
            "example.com",
            &format!("/hop{hop}"),
            vec![Reply::redirect(&format!("/hop{}", hop + 1))],
        );
    }
    server.route("example.com", "/hop5", vec![Reply::text("ok")]);
    let err = client
        .get(&url("example.com", TOML), SEP1)
        .await
        .unwrap_err();
    assert_eq!(err.kind, FailureKind::TooManyRedirects);
    assert_eq!(
        server.hit_count("example.com", "/hop5"),
        0,
        "the sixth hop must not be fetched"
    );
}

#[tokio::test]
async fn redirect_to_a_subdomain_is_followed_and_recorded() {
    let (server, client) = setup(&["circle.com", "www.circle.com"], &[]).await;
    server.route(
        "circle.com",
        TOML,
        vec![Reply::redirect(
            "https://www.circle.com/.well-known/stellar.toml",
        )],
    );
    server.route(
        "www.circle.com",
        TOML,
        vec![Reply::text("VERSION=\"2.0.0\"")],
    );
    let fetched = client.get(&url("circle.com", TOML), SEP1).await.unwrap();
    assert_eq!(
        fetched.url,
        "https://www.circle.com/.well-known/stellar.toml"
    );
    assert_eq!(
        fetched.requested_url,
        "https://circle.com/.well-known/stellar.toml"
    );
}

#[tokio::test]
async fn redirect_to_a_parent_domain_is_refused() {
    let (server, client) = setup(&["www.circle.com", "circle.com"], &[]).await;
    server.route(
        "www.circle.com",
        TOML,
        vec![Reply::redirect(
            "https://circle.com/.well-known/stellar.toml",
        )],
    );
    server.route("circle.com", TOML, vec![Reply::text("stolen")]);
    let err = client
        .get(&url("www.circle.com", TOML), SEP1)
        .await
        .unwrap_err();
    assert!(
        matches!(&err.kind, FailureKind::Refused(r) if r.contains("circle.com")),
        "{err:?}"
    );
    assert_eq!(server.hit_count("circle.com", TOML), 0);
}

#[tokio::test]
async fn redirect_to_a_foreign_host_is_refused() {
    let (server, client) = setup(&["example.com", "evil.net", "example.com.evil.net"], &[]).await;
    server.route(
        "example.com",
        TOML,
        vec![Reply::redirect(
            "https://example.com.evil.net/.well-known/stellar.toml",
        )],
    );
    let err = client
        .get(&url("example.com", TOML), SEP1)
        .await
        .unwrap_err();
    assert!(
        matches!(&err.kind, FailureKind::Refused(r) if r.contains("example.com.evil.net")),
        "{err:?}"
    );
    assert_eq!(server.hits().len(), 1);
}

#[tokio::test]
async fn redirect_loop_is_refused() {
    let (server, client) = setup(&["example.com"], &[]).await;
    server.route("example.com", TOML, vec![Reply::redirect("/a")]);
    server.route("example.com", "/a", vec![Reply::redirect(TOML)]);
    let err = client
        .get(&url("example.com", TOML), SEP1)
        .await
        .unwrap_err();
    assert!(
        matches!(&err.kind, FailureKind::Refused(r) if r.contains("loop")),
        "{err:?}"
    );
    assert_eq!(server.hits().len(), 2);
}

#[tokio::test]
async fn redirect_to_plain_http_is_refused() {
    let (server, client) = setup(&["example.com"], &[]).await;
    server.route(
        "example.com",
        TOML,
        vec![Reply::redirect("http://example.com/x")],
    );
    let err = client
        .get(&url("example.com", TOML), SEP1)
        .await
        .unwrap_err();
    assert!(
        matches!(&err.kind, FailureKind::Refused(r) if r.contains("HTTPS")),
        "{err:?}"
    );
}

#[tokio::test]
async fn redirect_to_loopback_private_and_metadata_addresses_is_refused() {
    let (server, client) = setup(&["example.com"], &[]).await;
    for target in ["127.0.0.1", "10.0.0.7", "169.254.169.254"] {
        server.route(
            "example.com",
            TOML,
            vec![Reply::redirect(&format!(
                "https://{target}/latest/meta-data"
            ))],
        );
        let err = client
            .get(&url("example.com", TOML), SEP1)
            .await
            .unwrap_err();
        assert!(
            matches!(err.kind, FailureKind::Refused(_)),
            "{target}: {err:?}"
        );
    }
}

#[tokio::test]
async fn subdomain_whose_dns_answer_is_internal_is_refused() {
    // The redirect stays in the namespace, but DNS points the subdomain at an internal address:
    // names resolved through DNS are never exempt.
    for internal in ["127.0.0.1", "10.1.2.3", "169.254.169.254"] {
        let (server, client) = setup(&["example.com"], &[("metadata.example.com", internal)]).await;
        server.route(
            "example.com",
            TOML,
            vec![Reply::redirect(
                "https://metadata.example.com/.well-known/stellar.toml",
            )],
        );
        let err = client
            .get(&url("example.com", TOML), SEP1)
            .await
            .unwrap_err();
        assert!(
            matches!(&err.kind, FailureKind::Refused(r) if r.contains("metadata.example.com")),
            "{internal}: {err:?}"
        );
    }
}

#[tokio::test]
async fn home_domain_resolving_to_loopback_is_refused_but_operator_mapping_is_exempt() {
    let (server, client) = setup(&["mapped.example"], &[("hostile.example", "127.0.0.1")]).await;
    server.route("mapped.example", TOML, vec![Reply::text("ok")]);
    let err = client
        .get(&url("hostile.example", TOML), SEP1)
        .await
        .unwrap_err();
    assert!(
        matches!(&err.kind, FailureKind::Refused(r) if r.contains("loopback")),
        "{err:?}"
    );
    // mapped.example reaches 127.0.0.1 too, through the operator's --connect-to: allowed.
    assert_eq!(
        client
            .get(&url("mapped.example", TOML), SEP1)
            .await
            .unwrap()
            .body,
        b"ok"
    );
}

#[tokio::test]
async fn literal_internal_addresses_and_private_names_are_refused() {
    let (_server, client) = setup(&["example.com"], &[]).await;
    for target in [
        "https://127.0.0.1/x",
        "https://[::1]/x",
        "https://169.254.169.254/x",
        "https://localhost/x",
        "https://db.internal/x",
    ] {
        let err = client.get(target, SEP1).await.unwrap_err();
        assert!(
            matches!(err.kind, FailureKind::Refused(_)),
            "{target}: {err:?}"
        );
    }
}

#[tokio::test]
async fn transport_failures_map_to_categories() {
    let (server, client) = setup(&["example.com"], &[]).await;
    // TLS: a certificate from an untrusted CA.
    let mut mappings = Mappings::default();
    mappings
        .connect_to
        .push(server.connect_bad_tls("bad.example").parse().unwrap());
    mappings.connect_to.push(
        format!(
            "closed.example:443:127.0.0.1:{}",
            assay_scan::testsupport::closed_port()
        )
        .parse()
        .unwrap(),
    );
    mappings
        .connect_to
        .push(server.connect_https("example.com").parse().unwrap());
    let config = NetConfig {
        mappings,
        extra_roots: vec![CertificateDer::from_pem_slice(server.ca_pem.as_bytes()).unwrap()],
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(1),
        dns_answers: HashMap::new(),
    };
    let strict = HttpClient::new(&config).unwrap();
    assert_eq!(
        strict
            .get("https://bad.example/x", SEP1)
            .await
            .unwrap_err()
            .kind,
        FailureKind::Tls
    );
    assert_eq!(
        strict
            .get("https://closed.example/x", SEP1)
            .await
            .unwrap_err()
            .kind,
        FailureKind::ConnectionRefused
    );
    assert_eq!(
        strict
            .get("https://no-such-host.invalid/x", SEP1)
            .await
            .unwrap_err()
            .kind,
        FailureKind::Dns
    );
    server.route("example.com", "/hang", vec![Reply::Hang]);
    assert_eq!(
        strict
            .get("https://example.com/hang", SEP1)
            .await
            .unwrap_err()
            .kind,
        FailureKind::Timeout
    );
    server.route(
        "example.com",
        "/big",
        vec![Reply::text(vec![
            b'a';
            assay_scan::net::client::BODY_CAP + 1
        ])],
    );
    assert_eq!(
        client
            .get("https://example.com/big", SEP1)
            .await
            .unwrap_err()
            .kind,
        FailureKind::TooLarge
    );
    server.route(
        "example.com",
        "/cap",
        vec![Reply::text(vec![b'a'; assay_scan::net::client::BODY_CAP])],
    );
    assert_eq!(
        client
            .get("https://example.com/cap", SEP1)
            .await
            .unwrap()
            .body
            .len(),
        assay_scan::net::client::BODY_CAP
    );
}
