//! `evidence_hash`: SHA-256 over a line-oriented preimage (versions v1, v2, v3 and v6 for classic assets; v4
//! and v5 for custom token contracts; v7 for both, with no operator endpoint in it; v8, v7's lines, the first
//! to bind mechanics bit 14).
//!
//! Each line is `key<TAB>value<LF>` (the final line too). Values and each evidence field are escaped in one
//! pass (`\` → `\\`, TAB → `\t`, LF → `\n`, CR → `\r`); evidence lines are built escaped, then sorted
//! bytewise with duplicates kept. Timestamps, `requested_url`, `attempted`, `refused`, `undetermined`, titles
//! and reasoning are outside the preimage.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::model::{Accountability, Severity};
use crate::report::Report;

/// A preimage format version. Cumulative: v2 adds the `checks` line, v3 the `scanner` and `network` lines, v6
/// the evidence lines of the issuer's signers (who can use its powers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EvidenceVersion {
    /// `assay-evidence-v1`.
    V1,
    /// `assay-evidence-v2`: adds `checks` when the check set is non-empty.
    V2,
    /// `assay-evidence-v3`: adds `scanner` when scanner-bound and `network` when set.
    V3,
    /// `assay-evidence-v4`: the v3 lines with `token<TAB>C…` in place of `asset`. The only version of a
    /// custom token contract's report; never used for a classic asset, so classic hashes do not move.
    V4,
    /// `assay-evidence-v5`: the v4 lines, for a token contract judged by behaviour: its evidence carries the
    /// powers power discovery observed (`contract/behaviour` lines: the function, whose authorization it
    /// needed, the observed effect). The default for token contracts before v7.
    V5,
    /// `assay-evidence-v6`: the v3 lines, plus the evidence lines only v6 binds ([`V6_ONLY_SOURCES`]: the
    /// issuer's signers and thresholds, and who can use its powers). Judged under the latent-freeze rule
    /// (an issuer whose flags are not locked and who can still sign holds the freeze). The default for
    /// classic assets before v7.
    V6,
    /// `assay-evidence-v7`: the v6 lines for a classic asset, the v5 lines (`token` in place of `asset`) for
    /// a token contract, with no operator endpoint in them: an evidence line read from the operator's
    /// Horizon or stellar-rpc carries the endpoint's kind and the request relative to it
    /// ([`operator_free_url`]) in place of the URL, so two attesters that read the same facts through
    /// different servers compute the same hash. The default for every subject before v8.
    V7,
    /// `assay-evidence-v8`: the v7 lines, and the first version that binds mechanics bit 14
    /// (`admin_transfer_fee`) with its `contract/behaviour` claim (after a privileged call a holder's
    /// transfer delivers less than it sends to its recipient, or nothing, which rates high). A report
    /// carrying bit 14 is hashed in v8 only: an earlier version's re-derivation reads no bit from that
    /// claim. Default for new attestations of every subject.
    V8,
}

/// Evidence sources that only v6 and later bind: a report hashed in an earlier version leaves their lines
/// out, so an attestation written before they existed is still reproduced by a fresh scan whose verdict
/// did not change.
pub const V6_ONLY_SOURCES: [&str; 1] = [crate::evidence::SOURCE_ISSUER_SIGNERS];

impl EvidenceVersion {
    /// The version new attestations use.
    pub const DEFAULT: EvidenceVersion = EvidenceVersion::V8;

    /// The version's number (1 to 8).
    pub fn number(self) -> u8 {
        match self {
            EvidenceVersion::V1 => 1,
            EvidenceVersion::V2 => 2,
            EvidenceVersion::V3 => 3,
            EvidenceVersion::V4 => 4,
            EvidenceVersion::V5 => 5,
            EvidenceVersion::V6 => 6,
            EvidenceVersion::V7 => 7,
            EvidenceVersion::V8 => 8,
        }
    }

    /// Whether this version hashes only custom token contracts (v4, v5). v7 and v8 hash either subject; see
    /// [`EvidenceVersion::hashes_contract`].
    pub fn is_contract(self) -> bool {
        matches!(self, EvidenceVersion::V4 | EvidenceVersion::V5)
    }

    /// Whether this version can hash a token contract (v4, v5, v7, v8).
    pub fn admits_contract(self) -> bool {
        self.is_contract() || self >= EvidenceVersion::V7
    }

    /// Whether this version can hash a classic asset (v1-v3, v6, v7, v8).
    pub fn admits_classic(self) -> bool {
        !self.is_contract()
    }

    /// Whether the preimage of `asset` (the preimage input's subject text) in this version names a token
    /// contract (`token` line) rather than a classic asset (`asset` line).
    pub fn hashes_contract(self, asset: &str) -> bool {
        self.is_contract() || (self >= EvidenceVersion::V7 && is_contract_address(asset))
    }

    /// Whether this version keeps operator endpoints out of evidence lines (v7 on).
    pub fn operator_free(self) -> bool {
        self >= EvidenceVersion::V7
    }

    /// Whether this version binds mechanics bit 14 (`admin_transfer_fee`) and its claim (v8 on).
    pub fn binds_transfer_fee(self) -> bool {
        self >= EvidenceVersion::V8
    }

    /// The version new attestations of `asset` use: v8 for every subject.
    pub fn default_for(_asset: &crate::token::Token) -> EvidenceVersion {
        EvidenceVersion::DEFAULT
    }

    /// The versions an attestation of `asset` may have been written with, newest first.
    pub fn candidates_for(asset: &crate::token::Token) -> &'static [EvidenceVersion] {
        match asset {
            crate::token::Token::Contract(_) => &[
                EvidenceVersion::V8,
                EvidenceVersion::V7,
                EvidenceVersion::V5,
                EvidenceVersion::V4,
            ],
            _ => &[
                EvidenceVersion::V8,
                EvidenceVersion::V7,
                EvidenceVersion::V6,
                EvidenceVersion::V3,
                EvidenceVersion::V2,
                EvidenceVersion::V1,
            ],
        }
    }

    /// The lowest version that carries everything `input` binds (v3 if scanner-bound or network set, else v2
    /// if there are checks, else v1): the rule the earlier implementation used to pick a version.
    pub fn minimal_for(input: &PreimageInput) -> EvidenceVersion {
        if input.scanner.is_some() || input.network.is_some() {
            EvidenceVersion::V3
        } else if !input.checks.is_empty() {
            EvidenceVersion::V2
        } else {
            EvidenceVersion::V1
        }
    }
}

impl fmt::Display for EvidenceVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.number())
    }
}

/// An evidence version text that names none of the versions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown evidence version {0:?}: expected 8 or 7 (any subject), 1, 2, 3, 6 (classic assets), 4 or 5 (token contracts)"
)]
pub struct UnknownEvidenceVersion(pub String);

impl FromStr for EvidenceVersion {
    type Err = UnknownEvidenceVersion;

    fn from_str(s: &str) -> Result<EvidenceVersion, UnknownEvidenceVersion> {
        match s.trim_start_matches('v') {
            "1" => Ok(EvidenceVersion::V1),
            "2" => Ok(EvidenceVersion::V2),
            "3" => Ok(EvidenceVersion::V3),
            "4" => Ok(EvidenceVersion::V4),
            "5" => Ok(EvidenceVersion::V5),
            "6" => Ok(EvidenceVersion::V6),
            "7" => Ok(EvidenceVersion::V7),
            "8" => Ok(EvidenceVersion::V8),
            _ => Err(UnknownEvidenceVersion(s.to_string())),
        }
    }
}

/// Everything the preimage binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreimageInput {
    /// `CODE-ISSUER`, or the token contract's `C…` address (v4).
    pub asset: String,
    /// Severity level.
    pub severity: Severity,
    /// Base severity level.
    pub base_severity: Severity,
    /// Whether escalated.
    pub escalated: bool,
    /// Mechanics bitset.
    pub mechanics: u32,
    /// Accountability.
    pub accountability: Accountability,
    /// Check ids (sorted on write).
    pub checks: Vec<String>,
    /// Network passphrase (v3).
    pub network: Option<String>,
    /// Scanner version (v3).
    pub scanner: Option<String>,
    /// `(source, url, claim)` per evidence item.
    pub evidence: Vec<(String, String, String)>,
}

/// The report has no severity to hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the report is unevaluated: capability was never derived from issuer flags, so there is nothing to hash")]
pub struct UnevaluatedError;

impl PreimageInput {
    /// The hashed fields of a report. Fails when severity or base severity is unevaluated.
    pub fn from_report(r: &Report) -> Result<PreimageInput, UnevaluatedError> {
        Ok(PreimageInput {
            asset: r.asset.to_string(),
            severity: r.severity.level().ok_or(UnevaluatedError)?,
            base_severity: r.base_severity.level().ok_or(UnevaluatedError)?,
            escalated: r.escalated,
            mechanics: r.mechanics.bits(),
            accountability: r.accountability,
            checks: r.checks.clone(),
            network: r.network.clone(),
            scanner: r.scanner_bound.clone(),
            evidence: r
                .evidence
                .iter()
                .map(|e| (e.source.clone(), e.url.clone(), e.claim.clone()))
                .collect(),
        })
    }
}

/// Escapes `\`, TAB, LF and CR in one pass.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// The preimage text for `version`.
pub fn preimage(input: &PreimageInput, version: EvidenceVersion) -> String {
    let mut out = format!("assay-evidence-v{}\n", version.number());
    let mut line = |key: &str, value: &str| {
        out.push_str(key);
        out.push('\t');
        out.push_str(&escape(value));
        out.push('\n');
    };
    if version >= EvidenceVersion::V3 {
        if let Some(scanner) = &input.scanner {
            line("scanner", scanner);
        }
    }
    line(
        if version.hashes_contract(&input.asset) {
            "token"
        } else {
            "asset"
        },
        &input.asset,
    );
    line("severity", &input.severity.level().to_string());
    line("base_severity", &input.base_severity.level().to_string());
    line("escalated", if input.escalated { "true" } else { "false" });
    line("mechanics", &input.mechanics.to_string());
    line("accountability", input.accountability.name());
    if version >= EvidenceVersion::V2 && !input.checks.is_empty() {
        let mut checks = input.checks.clone();
        checks.sort();
        line("checks", &checks.join(","));
    }
    if version >= EvidenceVersion::V3 {
        if let Some(network) = &input.network {
            line("network", network);
        }
    }
    let mut evidence: Vec<String> = input
        .evidence
        .iter()
        .map(|(s, u, c)| {
            let url = if version.operator_free() {
                operator_free_url(s, u)
            } else {
                u.clone()
            };
            format!("evidence\t{}\t{}\t{}\n", escape(s), escape(&url), escape(c))
        })
        .collect();
    evidence.sort();
    for e in evidence {
        out.push_str(&e);
    }
    out
}

/// True for a contract StrKey (`C…`): the subject text of a token contract, parsed as [`Token`] parses it.
/// A classic asset's (`CODE-ISSUER`) or the native asset's (`native`) never is one.
///
/// [`Token`]: crate::token::Token
fn is_contract_address(subject: &str) -> bool {
    stellar_strkey::Contract::from_string(subject).is_ok()
}

/// The kind v7 names a Horizon endpoint by.
pub const ENDPOINT_HORIZON: &str = "horizon";
/// The kind v7 names a stellar-rpc endpoint by.
pub const ENDPOINT_STELLAR_RPC: &str = "stellar-rpc";

/// The Horizon routes whose request names the fact read (the account or the asset), as the scan builds them
/// (`crate::parse::urls`).
const HORIZON_ROUTES: [&str; 3] = ["/accounts/", "/assets?", "/assets"];

/// An evidence line's URL as v7 hashes it: with no operator endpoint in it.
///
/// - A line read from the operator's Horizon (a `horizon…` source) becomes `horizon:` and the request
///   relative to Horizon (`horizon:/accounts/G…`, `horizon:/assets?asset_code=…&asset_issuer=…`): the fact
///   stays attributed to its source by kind and names what was asked, never the server that answered.
/// - A line whose URL is an endpoint of the operator's stellar-rpc (a `contract/…` or `sep41` line that
///   records a failed read: its URL is the RPC URL, not the contract) becomes `stellar-rpc:`.
/// - Everything else is a fact about the asset and stays as it is: a contract's `C…` address, the
///   stellar.toml its home domain serves, the public directory's and an asset list's URLs.
pub fn operator_free_url(source: &str, url: &str) -> String {
    let endpoint_of_rpc =
        (source.starts_with("contract/") || source == "sep41") && url.contains("://");
    if source == ENDPOINT_HORIZON || source.starts_with("horizon/") {
        format!("{ENDPOINT_HORIZON}:{}", horizon_request(url))
    } else if endpoint_of_rpc {
        format!("{ENDPOINT_STELLAR_RPC}:")
    } else {
        url.to_string()
    }
}

/// The request part of a Horizon URL: from its last known route on (the operator's base, host and path
/// prefix removed); empty when no route is recognised.
fn horizon_request(url: &str) -> &str {
    let after_authority = match url.find("://") {
        Some(i) => {
            let rest = &url[i + 3..];
            &rest[rest.find(['/', '?', '#']).unwrap_or(rest.len())..]
        }
        None => url,
    };
    let without_fragment = after_authority.split('#').next().unwrap_or("");
    HORIZON_ROUTES
        .iter()
        .filter_map(|route| {
            let at = without_fragment.rfind(route)?;
            let tail = &without_fragment[at..];
            // `/assets` is a route only as the whole last segment (`/assets` or `/assets?…`).
            (*route != "/assets" || tail == "/assets").then_some(at)
        })
        .max()
        .map_or("", |at| &without_fragment[at..])
}

/// SHA-256 of the preimage, lowercase hex.
pub fn evidence_hash(input: &PreimageInput, version: EvidenceVersion) -> String {
    hex::encode(Sha256::digest(preimage(input, version).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUER: &str = "GBXRPL45NPHCVMFFAYZVUVFFVKSIZ362ZXFP7I2ETNQ3QKZMFLPRDTD5";
    const TOKEN: &str = "CA2E53VHFZ6YSWQIEIPBXJQGT6VW3VKWWZO555XKRQXYJ63GEBJJGHY7";

    /// One operator's endpoints: Horizon base and stellar-rpc URL, as evidence carries them (redacted).
    struct Operator {
        horizon: &'static str,
        rpc: &'static str,
    }

    const OPERATORS: [Operator; 2] = [
        Operator {
            horizon: "https://horizon.stellar.org",
            rpc: "https://soroban-rpc.mainnet.stellar.gateway.fm",
        },
        Operator {
            horizon: "http://10.0.0.7:8000/tenant-a/(redacted)/horizon/",
            rpc: "https://rpc.provider.example:4443/v1/(redacted)/rpc",
        },
    ];

    /// The same facts as `operator` read them: a token whose behaviour discovery failed at its RPC, whose
    /// admin's home domain came from its Horizon; and a classic asset's Horizon lines.
    fn inputs(operator: &Operator) -> [PreimageInput; 2] {
        let base = |asset: String| PreimageInput {
            asset,
            severity: Severity::Medium,
            base_severity: Severity::Medium,
            escalated: false,
            mechanics: 2,
            accountability: Accountability::Verified,
            checks: vec!["capability".into()],
            network: Some("Test SDF Network ; September 2015".into()),
            scanner: Some("v0.1.0".into()),
            evidence: vec![],
        };
        let horizon = operator.horizon.trim_end_matches('/');
        let mut token = base(TOKEN.into());
        token.evidence = vec![
            (
                "contract/behaviour".into(),
                operator.rpc.into(),
                "not retrievable: timeout".into(),
            ),
            ("contract/wasm".into(), TOKEN.into(), "wasm ab".into()),
            (
                "horizon".into(),
                format!("{horizon}/accounts/{ISSUER}"),
                "home_domain \"token.example\"".into(),
            ),
        ];
        let mut classic = base(format!("XRP-{ISSUER}"));
        classic.evidence = vec![
            (
                "horizon".into(),
                format!("{horizon}/assets?asset_code=XRP&asset_issuer={ISSUER}"),
                "issuer flags: …".into(),
            ),
            (
                "horizon/account/signers".into(),
                format!("{horizon}/accounts/{ISSUER}"),
                "signers: …".into(),
            ),
            (
                "stellar.toml".into(),
                "https://fchain.io/.well-known/stellar.toml".into(),
                "CURRENCIES claims …".into(),
            ),
        ];
        [token, classic]
    }

    #[test]
    fn two_operators_get_one_v7_hash_and_no_endpoint_enters_the_preimage() {
        let [token_a, classic_a] = inputs(&OPERATORS[0]);
        let [token_b, classic_b] = inputs(&OPERATORS[1]);
        for (a, b) in [(&token_a, &token_b), (&classic_a, &classic_b)] {
            assert_eq!(
                evidence_hash(a, EvidenceVersion::V7),
                evidence_hash(b, EvidenceVersion::V7)
            );
            // Earlier versions bound the endpoint: the same facts hashed differently per operator.
            let earlier = if a.asset == TOKEN {
                EvidenceVersion::V5
            } else {
                EvidenceVersion::V6
            };
            assert_ne!(evidence_hash(a, earlier), evidence_hash(b, earlier));
            for (input, operator) in [(a, &OPERATORS[0]), (b, &OPERATORS[1])] {
                let text = preimage(input, EvidenceVersion::V7);
                for endpoint in [operator.horizon, operator.rpc] {
                    let host = endpoint
                        .split("://")
                        .nth(1)
                        .unwrap()
                        .split('/')
                        .next()
                        .unwrap();
                    assert!(!text.contains(host), "{host} in\n{text}");
                    assert!(!text.contains(endpoint.trim_end_matches('/')), "{endpoint}");
                }
                for fragment in ["tenant-a", "(redacted)", "/v1/", "8000", "4443"] {
                    assert!(!text.contains(fragment), "{fragment} in\n{text}");
                }
            }
        }
        let token = preimage(&token_a, EvidenceVersion::V7);
        assert!(token.contains(&format!("\ntoken\t{TOKEN}\n")), "{token}");
        assert!(
            token
                .contains("evidence\tcontract/behaviour\tstellar-rpc:\tnot retrievable: timeout\n"),
            "{token}"
        );
        assert!(token.contains(&format!("evidence\thorizon\thorizon:/accounts/{ISSUER}\t")));
        let classic = preimage(&classic_a, EvidenceVersion::V7);
        assert!(
            classic.contains(&format!("\nasset\tXRP-{ISSUER}\n")),
            "{classic}"
        );
        assert!(
            classic.contains(&format!(
                "evidence\thorizon\thorizon:/assets?asset_code=XRP&asset_issuer={ISSUER}\t"
            )),
            "{classic}"
        );
        // Facts about the asset keep their URL.
        assert!(classic.contains("\thttps://fchain.io/.well-known/stellar.toml\t"));
    }

    #[test]
    fn operator_free_urls() {
        let cases = [
            ("horizon", "https://h.example/", "horizon:"),
            ("horizon", "", "horizon:"),
            (
                "horizon/holder",
                "https://u@h.example/accounts/x/horizon/accounts/GA",
                "horizon:/accounts/GA",
            ),
            (
                "horizon",
                "https://h.example/assets-api/assets?asset_code=A&asset_issuer=G",
                "horizon:/assets?asset_code=A&asset_issuer=G",
            ),
            ("sep41", TOKEN, TOKEN),
            ("contract/admin", "https://rpc.example/rpc", "stellar-rpc:"),
            (
                "stellar.expert/directory",
                "https://api.stellar.expert/explorer/directory/G",
                "https://api.stellar.expert/explorer/directory/G",
            ),
            (
                "asset-list",
                "https://lists.example/l.json",
                "https://lists.example/l.json",
            ),
        ];
        for (source, url, want) in cases {
            assert_eq!(operator_free_url(source, url), want, "{source} {url}");
        }
    }

    #[test]
    fn v7_parses_and_admits_both_subjects() {
        assert_eq!("v7".parse::<EvidenceVersion>(), Ok(EvidenceVersion::V7));
        assert!(EvidenceVersion::V7.admits_contract() && EvidenceVersion::V7.admits_classic());
        assert!(!EvidenceVersion::V6.admits_contract() && !EvidenceVersion::V5.admits_classic());
        assert!(EvidenceVersion::V7.hashes_contract(TOKEN));
        assert!(!EvidenceVersion::V7.hashes_contract(&format!("XRP-{ISSUER}")));
        assert!(!EvidenceVersion::V7.hashes_contract("native"));
    }

    #[test]
    fn v8_is_the_default_for_both_subjects_and_the_first_to_bind_bit_14() {
        assert_eq!("8".parse::<EvidenceVersion>(), Ok(EvidenceVersion::V8));
        assert_eq!("v8".parse::<EvidenceVersion>(), Ok(EvidenceVersion::V8));
        assert!("9".parse::<EvidenceVersion>().is_err());
        assert_eq!(EvidenceVersion::DEFAULT, EvidenceVersion::V8);
        assert!(EvidenceVersion::V8.admits_contract() && EvidenceVersion::V8.admits_classic());
        assert!(EvidenceVersion::V8.hashes_contract(TOKEN));
        assert!(EvidenceVersion::V8.operator_free());
        assert!(EvidenceVersion::V8.binds_transfer_fee());
        assert!(!EvidenceVersion::V7.binds_transfer_fee());
    }
}
