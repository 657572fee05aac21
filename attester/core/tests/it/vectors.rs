//! Committed preimage/digest vectors (testdata/vectors/NAME.preimage + NAME.digest), each pinned: the builder
//! reproduces the committed bytes from the inputs below, and SHA-256 of those bytes is the committed digest.
//! The bytes were written by hand (printf) and the digests by `sha256sum`, not by this crate.

use crate::common;

use assay_core::hash::{evidence_hash, preimage, EvidenceVersion, PreimageInput};
use assay_core::{Accountability, Severity};
use sha2::{Digest, Sha256};

const AQ: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
const DG: &str = "GA22IDJNHUMC3XKUCCBFNTQIJOUBWINC5GCXHLJ2V6KZ3OWAXCULNQ7P";
const UZ: &str = "GAKTLPC4ZV37SSCITQ5IS5AQ4WPF4CF4VZJQPPAROSGXMYOATF5U6XPR";
const VL: &str = "GDM4RQUQQUVSKQA7S6EM7XBZP3FCGH4Q7CL6TABQ7B2BEJ5ERARM2M5M";
const F0: &str = "issuer flags: auth_required=false auth_revocable=false auth_immutable=false auth_clawback_enabled=false";
const FZ: &str = "issuer flags: auth_required=false auth_revocable=true auth_immutable=false auth_clawback_enabled=true";
const CHECKS: [&str; 4] = ["sep1-domain", "capability", "reputation", "mutability"];
const PUB: &str = "Public Global Stellar Network ; September 2015";
const TEST: &str = "Test SDF Network ; September 2015";

fn ev(s: &str, u: &str, c: &str) -> (String, String, String) {
    (s.into(), u.into(), c.into())
}

fn base(
    asset: String,
    sev: Severity,
    b: Severity,
    esc: bool,
    m: u32,
    acc: Accountability,
) -> PreimageInput {
    PreimageInput {
        asset,
        severity: sev,
        base_severity: b,
        escalated: esc,
        mechanics: m,
        accountability: acc,
        checks: vec![],
        network: None,
        scanner: None,
        evidence: vec![],
    }
}

fn assets_url(code: &str, issuer: &str) -> String {
    format!("https://horizon.stellar.org/assets?asset_code={code}&asset_issuer={issuer}")
}

fn usdz() -> PreimageInput {
    let mut p = base(
        format!("USDZ-{UZ}"),
        Severity::High,
        Severity::High,
        false,
        6,
        Accountability::Verified,
    );
    p.checks = CHECKS.iter().map(|s| s.to_string()).collect();
    p.evidence = vec![
        ev(
            "stellar.toml",
            "https://zeam.money/.well-known/stellar.toml",
            &format!("CURRENCIES claims USDZ-{UZ}"),
        ),
        ev("horizon", &assets_url("USDZ", UZ), FZ),
    ];
    p
}

fn pin(name: &str, input: &PreimageInput, version: EvidenceVersion) {
    let dir = common::testdata().join("vectors");
    let bytes = std::fs::read(dir.join(format!("{name}.preimage"))).unwrap();
    let digest = std::fs::read_to_string(dir.join(format!("{name}.digest"))).unwrap();
    let digest = digest.trim();
    let built = preimage(input, version);
    assert_eq!(
        built.as_bytes(),
        &bytes[..],
        "{name}: preimage bytes differ:\n{built}"
    );
    assert_eq!(
        hex::encode(Sha256::digest(&bytes)),
        digest,
        "{name}: committed digest is not SHA-256 of the bytes"
    );
    assert_eq!(
        evidence_hash(input, version),
        digest,
        "{name}: evidence_hash differs"
    );
}

#[test]
fn sorted_multi_evidence() {
    let mut p = base(
        format!("AQUA-{AQ}"),
        Severity::Clear,
        Severity::Clear,
        false,
        0,
        Accountability::Verified,
    );
    p.evidence = vec![
        ev(
            "stellar.toml",
            "https://aqua.network/.well-known/stellar.toml",
            &format!("CURRENCIES claims AQUA-{AQ}"),
        ),
        ev(
            "stellar.expert/directory",
            &format!("https://api.stellar.expert/explorer/directory/{AQ}"),
            r#"listed as "AQUA Issuer" (domain "aqua.network", tags: anchor, issuer)"#,
        ),
        ev("horizon", &assets_url("AQUA", AQ), F0),
        ev(
            "stellar.expert/blocked-domains",
            "https://api.stellar.expert/explorer/directory/blocked-domains/aqua.network",
            r#"domain "aqua.network" blocked=false"#,
        ),
    ];
    pin("sorted-multi-evidence", &p, EvidenceVersion::V1);
}

#[test]
fn escapes_in_claim() {
    let mut p = base(
        format!("AQUA-{AQ}"),
        Severity::Clear,
        Severity::Clear,
        false,
        16,
        Accountability::Unverified,
    );
    p.evidence = vec![ev(
        "stellar.toml",
        "https://aqua.network/.well-known/stellar.toml",
        "refused: a\tb\nc\rd \\ e\\\\f",
    )];
    pin("escapes-in-claim", &p, EvidenceVersion::V1);
}

#[test]
fn each_accountability() {
    let mut unknown = base(
        format!("VELO-{VL}"),
        Severity::Clear,
        Severity::Clear,
        false,
        16,
        Accountability::Unknown,
    );
    unknown.evidence = vec![ev("horizon", &assets_url("VELO", VL), F0)];
    pin("accountability-unknown", &unknown, EvidenceVersion::V1);
    let mut unverified = base(
        format!("AQUA-{AQ}"),
        Severity::Clear,
        Severity::Clear,
        false,
        16,
        Accountability::Unverified,
    );
    unverified.evidence = vec![ev(
        "stellar.toml",
        "https://aqua.network/.well-known/stellar.toml",
        "not retrievable: status 404",
    )];
    pin(
        "accountability-unverified",
        &unverified,
        EvidenceVersion::V1,
    );
    let verified = base(
        format!("AQUA-{AQ}"),
        Severity::Clear,
        Severity::Clear,
        false,
        0,
        Accountability::Verified,
    );
    pin("accountability-verified", &verified, EvidenceVersion::V1);
}

#[test]
fn escalated_true_critical() {
    let mut p = base(
        format!("DOGE-{DG}"),
        Severity::Critical,
        Severity::Clear,
        true,
        48,
        Accountability::Unverified,
    );
    p.checks = CHECKS.iter().map(|s| s.to_string()).collect();
    p.evidence = vec![
        ev(
            "stellar.toml",
            "https://darkpool.digital/.well-known/stellar.toml",
            "not retrievable: dns-failure",
        ),
        ev(
            "stellar.expert/directory",
            &format!("https://api.stellar.expert/explorer/directory/{DG}"),
            r#"listed as "Scam" (domain "darkpool.digital", tags: malicious, unsafe)"#,
        ),
        ev(
            "stellar.expert/blocked-domains",
            "https://api.stellar.expert/explorer/directory/blocked-domains/darkpool.digital",
            r#"domain "darkpool.digital" blocked=false"#,
        ),
        ev("horizon", &assets_url("DOGE", DG), F0),
    ];
    pin("escalated-true-critical", &p, EvidenceVersion::V2);
}

#[test]
fn each_preimage_version() {
    let mut p = usdz();
    p.scanner = Some("v0.1.0".into());
    p.network = Some(PUB.into());
    pin("version-v1", &p, EvidenceVersion::V1);
    pin("version-v2", &p, EvidenceVersion::V2);
    pin("version-v3", &p, EvidenceVersion::V3);
    assert_eq!(EvidenceVersion::minimal_for(&p), EvidenceVersion::V3);
}

#[test]
fn both_network_passphrases() {
    let mut p = usdz();
    p.network = Some(PUB.into());
    pin("network-bound-pubnet", &p, EvidenceVersion::V3);
    p.network = Some(TEST.into());
    pin("network-bound-testnet", &p, EvidenceVersion::V3);
}

#[test]
fn every_committed_vector_is_pinned_here() {
    let src = include_str!("vectors.rs");
    for entry in std::fs::read_dir(common::testdata().join("vectors")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".preimage") {
            assert!(
                src.contains(&format!("\"{stem}\"")),
                "vector {stem} has no pinning test"
            );
            assert!(common::testdata()
                .join("vectors")
                .join(format!("{stem}.digest"))
                .is_file());
        }
    }
}

const TOKEN: &str = "CA2E53VHFZ6YSWQIEIPBXJQGT6VW3VKWWZO555XKRQXYJ63GEBJJGHY7";
const ADMIN: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";

#[test]
fn contract_tokens_hash_with_v4_and_a_token_line() {
    // Scanner-bound and network-bound: an upgradable token that can also mint.
    let mut p = base(
        TOKEN.into(),
        Severity::High,
        Severity::High,
        false,
        512 | 4096,
        Accountability::Unverified,
    );
    p.checks = vec!["contract-mechanics".into(), "contract-domain".into()];
    p.network = Some(TEST.into());
    p.scanner = Some("v0.1.0".into());
    p.evidence = vec![
        ev("contract/wasm", TOKEN, &format!("wasm {}", "ab".repeat(32))),
        ev(
            "contract/wasm",
            TOKEN,
            "imports l.6 (update_current_contract_wasm): the code can be replaced",
        ),
        ev("contract/wasm", TOKEN, "spec exposes mint"),
    ];
    pin("contract-upgradable-v4", &p, EvidenceVersion::V4);

    // A SEP-41 FAIL beside an open row (the ceiling), a verified admin domain, no scanner or network line.
    let mut p = base(
        TOKEN.into(),
        Severity::Critical,
        Severity::Clear,
        true,
        256 | 4096,
        Accountability::Verified,
    );
    p.checks = vec![
        "contract-mechanics".into(),
        "contract-domain".into(),
        "sep41".into(),
    ];
    p.evidence = vec![
        ev("contract/wasm", TOKEN, "spec exposes mint"),
        ev("contract/admin", TOKEN, &format!("admin() is {ADMIN}")),
        ev(
            "horizon",
            &format!("https://horizon-testnet.stellar.org/accounts/{ADMIN}"),
            "home_domain \"token.example\"",
        ),
        ev(
            "stellar.toml",
            "https://token.example/.well-known/stellar.toml",
            &format!("CURRENCIES claims contract {TOKEN}"),
        ),
        ev(
            "sep41",
            TOKEN,
            "sep41-transfer FAIL: requires holder -1, recipient +1",
        ),
        ev(
            "sep41",
            TOKEN,
            "sep41-transfer-from UNVERIFIABLE: requires d",
        ),
    ];
    pin("contract-sep41-critical-v4", &p, EvidenceVersion::V4);
}

/// The signers line v6 binds, built with the crate's own wording, so the vectors pin it.
fn signers_claim(signers: &[(&str, u32)], low: u32, medium: u32, high: u32) -> String {
    use assay_core::subject::{AccountControl, AccountSigner};
    let control = AccountControl {
        signers: signers
            .iter()
            .map(|(key, weight)| AccountSigner {
                key: key.to_string(),
                kind: "ed25519_public_key".into(),
                weight: *weight,
            })
            .collect(),
        low,
        medium,
        high,
    };
    assay_core::evidence::claims::issuer_signers(&control, control.who_can_act())
}

/// An issuer with flags 0, not locked, one key: the latent freeze, its facts read from `horizon`.
fn latent_freeze(horizon: &str) -> PreimageInput {
    const XR: &str = "GBXRPL45NPHCVMFFAYZVUVFFVKSIZ362ZXFP7I2ETNQ3QKZMFLPRDTD5";
    let mut p = base(
        format!("XRP-{XR}"),
        Severity::Medium,
        Severity::Medium,
        false,
        2,
        Accountability::Verified,
    );
    p.checks = CHECKS.iter().map(|s| s.to_string()).collect();
    p.scanner = Some("v0.1.0".into());
    p.network = Some(PUB.into());
    p.evidence = vec![
        ev(
            "stellar.toml",
            "https://fchain.io/.well-known/stellar.toml",
            &format!("CURRENCIES claims XRP-{XR}"),
        ),
        ev(
            "horizon/account/signers",
            &format!("{horizon}/accounts/{XR}"),
            &signers_claim(&[(XR, 1)], 0, 0, 0),
        ),
        ev(
            "horizon",
            &format!("{horizon}/assets?asset_code=XRP&asset_issuer={XR}"),
            F0,
        ),
    ];
    p
}

#[test]
fn v6_latent_freeze_binds_who_can_act() {
    let p = latent_freeze("https://horizon.stellar.org");
    pin("classic-latent-freeze-v6", &p, EvidenceVersion::V6);
}

#[test]
fn v6_locked_issuer_stays_clear_with_locked_shown() {
    const LK: &str = "GBMPHVLKP4GBL7QKDDS2OVADHWNLIP33ZB4YEVRUQI2QWX6DZ4XZI7RA";
    const S2: &str = "GDFE5IMLT6X2WQIH6WM2NQBKGWUESBLPF5OTYUOVKOC6UTADUZ56YIDH";
    let mut p = base(
        format!("LOCK-{LK}"),
        Severity::Clear,
        Severity::Clear,
        false,
        16,
        Accountability::Unknown,
    );
    p.checks = CHECKS.iter().map(|s| s.to_string()).collect();
    p.network = Some(TEST.into());
    p.evidence = vec![
        ev(
            "horizon/account/signers",
            &format!("https://horizon-testnet.stellar.org/accounts/{LK}"),
            // Given out of key order: the claim lists signers sorted.
            &signers_claim(&[(S2, 1), (LK, 0)], 2, 2, 2),
        ),
        ev(
            "horizon",
            &format!(
                "https://horizon-testnet.stellar.org/assets?asset_code=LOCK&asset_issuer={LK}"
            ),
            F0,
        ),
    ];
    pin("classic-locked-v6", &p, EvidenceVersion::V6);
}

/// Operators' endpoints as two attesters may configure them: the public Horizon, and a provider's with
/// credentials, a port, a path prefix and a key in the path (as [`assay_core::redact::url`] leaves it).
const OPERATOR_HORIZONS: [&str; 2] = [
    "https://horizon.stellar.org",
    "http://127.0.0.1:8000/provider/(redacted)/horizon",
];

#[test]
fn v7_classic_binds_no_operator_endpoint() {
    for horizon in OPERATOR_HORIZONS {
        // Both operators' inputs give the one committed preimage.
        pin(
            "classic-latent-freeze-v7",
            &latent_freeze(horizon),
            EvidenceVersion::V7,
        );
    }
}

#[test]
fn v7_token_contract_binds_no_operator_endpoint_and_a_token_line() {
    for horizon in OPERATOR_HORIZONS {
        let p = admin_token(
            horizon,
            Severity::Clear,
            4096,
            format!(
                "mint authorized by {ADMIN} (1 key, 0 s): a balance rose by the units asked with no \
                 matching debit"
            ),
        );
        pin("contract-behaviour-v7", &p, EvidenceVersion::V7);
    }
}

/// A token contract whose admin, verified through its home domain, holds the power `behaviour` describes.
fn admin_token(horizon: &str, severity: Severity, flags: u32, behaviour: String) -> PreimageInput {
    let mut p = base(
        TOKEN.into(),
        severity,
        severity,
        false,
        flags,
        Accountability::Verified,
    );
    p.checks = vec!["contract-mechanics".into(), "contract-domain".into()];
    p.network = Some(TEST.into());
    p.scanner = Some("v0.1.0".into());
    p.evidence = vec![
        ev("contract/wasm", TOKEN, &format!("wasm {}", "ab".repeat(32))),
        ev("contract/behaviour", TOKEN, &behaviour),
        ev("contract/admin", TOKEN, &format!("admin() is {ADMIN}")),
        ev(
            "horizon",
            &format!("{horizon}/accounts/{ADMIN}"),
            "home_domain \"token.example\"",
        ),
        ev(
            "stellar.toml",
            "https://token.example/.well-known/stellar.toml",
            &format!("CURRENCIES claims contract {TOKEN}"),
        ),
    ];
    p
}

/// A token whose admin's levy takes everything a holder's transfer sends: bit 14, high, in v8 (the first
/// version that binds the bit). The claim is the crate's own wording, so the vector pins it.
fn transfer_fee_full(horizon: &str) -> PreimageInput {
    use assay_core::powers::PowerEffect;
    let claim = PowerEffect::TransferFee {
        holder: ADMIN.into(),
        sent: "999998".into(),
        delivered: "0".into(),
        share_bps: assay_core::powers::FULL_SHARE_BPS,
        credited: Some(ADMIN.into()),
    }
    .stable_claim();
    admin_token(
        horizon,
        Severity::High,
        16384,
        format!("set_levy authorized by {ADMIN} (1 key, 0 s): {claim}"),
    )
}

#[test]
fn v8_binds_a_transfer_fee_of_everything_as_high() {
    for horizon in OPERATOR_HORIZONS {
        pin(
            "contract-transfer-fee-v8",
            &transfer_fee_full(horizon),
            EvidenceVersion::V8,
        );
    }
    // The v8 lines are v7's under their own header: nothing else moved.
    let p = transfer_fee_full(OPERATOR_HORIZONS[0]);
    let v7 = preimage(&p, EvidenceVersion::V7);
    let v8 = preimage(&p, EvidenceVersion::V8);
    assert_eq!(
        v7.strip_prefix("assay-evidence-v7\n"),
        v8.strip_prefix("assay-evidence-v8\n")
    );
}
