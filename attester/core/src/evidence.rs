//! Evidence: an outside claim attributed to its source, and the exact claim wording (hashed: byte-exact).

use serde::{Deserialize, Serialize};

use crate::failure::FetchFailure;
use crate::subject::{AccountControl, Asset, Attempt, DirectoryEntry, IssuerFlags, ListEntry};
use crate::time::Timestamp;

/// Source name of the `/assets` flag copy.
pub const SOURCE_HORIZON: &str = "horizon";
/// Source name of the `/accounts` flag copy.
pub const SOURCE_HORIZON_ACCOUNT: &str = "horizon/account";
/// Source name of the issuer account's signers and thresholds (bound from evidence v6 on).
pub const SOURCE_ISSUER_SIGNERS: &str = "horizon/account/signers";
/// Source name of stellar.toml evidence.
pub const SOURCE_STELLAR_TOML: &str = "stellar.toml";
/// Source name of the StellarExpert directory.
pub const SOURCE_DIRECTORY: &str = "stellar.expert/directory";
/// Source name of the StellarExpert blocklist.
pub const SOURCE_BLOCKLIST: &str = "stellar.expert/blocked-domains";
/// Source name of a SEP-42 list whose own name is not known (it could not be read).
pub const SOURCE_ASSET_LIST: &str = "asset-list";

/// One attributed claim. `source`, `url` and `claim` are hashed; the rest is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// Who made the claim (e.g. `horizon`, `stellar.expert/directory`).
    pub source: String,
    /// Where it was read (for a stellar.toml, the final URL after redirects).
    pub url: String,
    /// For a stellar.toml read, the well-known URL built from home_domain. Not hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_url: Option<String>,
    /// The claim, in the fixed wording of [`claims`].
    pub claim: String,
    /// When the source produced it. Not hashed.
    pub retrieved_at: Timestamp,
    /// True when this line records an attempt that produced no answer (a failure or a refusal).
    pub attempted: bool,
    /// True when the fetch policy refused the host.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

impl Evidence {
    /// An answer from `source`. The URL is kept as [`crate::redact::url`] shows it: evidence is published
    /// (history, `serve`, the hashed preimage), so an operator's credentials or key never enter it.
    pub fn answer(source: &str, url: &str, claim: String, retrieved_at: Timestamp) -> Evidence {
        Evidence {
            source: source.to_string(),
            url: crate::redact::url(url),
            requested_url: None,
            claim,
            retrieved_at,
            attempted: false,
            refused: false,
        }
    }

    /// A failed attempt: `not retrievable: <category>`.
    pub fn failure(
        source: &str,
        url: &str,
        failure: &FetchFailure,
        retrieved_at: Timestamp,
    ) -> Evidence {
        Evidence {
            attempted: true,
            ..Evidence::answer(source, url, claims::not_retrievable(failure), retrieved_at)
        }
    }

    /// A failed attempt at `source`, attributed to the URL it asked.
    pub fn failed_attempt(source: &str, attempt: &Attempt) -> Evidence {
        Evidence::failure(source, &attempt.url, &attempt.failure, attempt.retrieved_at)
    }

    /// A refused attempt: `refused: <reason>`.
    pub fn refusal(source: &str, url: &str, reason: &str, retrieved_at: Timestamp) -> Evidence {
        Evidence {
            attempted: true,
            refused: true,
            ..Evidence::answer(source, url, claims::refused(reason), retrieved_at)
        }
    }
}

/// Quotes `s` the way Go's `%q` does: double quotes; `"` and `\` escaped; `\a \b \f \n \r \t \v`; other
/// control characters as `\xNN` (ASCII) or `\uNNNN`; printable non-ASCII kept as is.
///
/// Go decides "printable" from Unicode tables; this uses the categories that occur in practice: control
/// characters, format characters (e.g. zero-width and bidi controls), non-ASCII spaces, line/paragraph
/// separators, private-use and noncharacter code points are escaped.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if !go_printable(c) => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn go_printable(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || matches!(u, 0xA0 | 0xAD | 0x1680 | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x206F | 0x3000)
        || matches!(u, 0x061C | 0x180E | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF)
        || matches!(u, 0xFDD0..=0xFDEF | 0xF0000..=0x10FFFF | 0xE0000..=0xE007F)
        || u & 0xFFFE == 0xFFFE)
}

/// The claim wordings. Each is hashed into `evidence_hash`, so none may change.
pub mod claims {
    use super::*;

    fn b(v: bool) -> &'static str {
        if v {
            "true"
        } else {
            "false"
        }
    }

    /// `issuer flags: auth_required=B auth_revocable=B auth_immutable=B auth_clawback_enabled=B` (`/assets`).
    pub fn issuer_flags(f: &IssuerFlags) -> String {
        format!(
            "issuer flags: auth_required={} auth_revocable={} auth_immutable={} auth_clawback_enabled={}",
            b(f.auth_required),
            b(f.auth_revocable),
            b(f.auth_immutable),
            b(f.auth_clawback_enabled)
        )
    }

    /// `issuer account flags: …` (the `/accounts` copy, cited only when the copies disagree).
    pub fn issuer_account_flags(f: &IssuerFlags) -> String {
        format!("issuer account {}", &issuer_flags(f)["issuer ".len()..])
    }

    /// `signers: KEY weight W (TYPE), …; thresholds: low L, medium M, high H; who can use the issuer's powers:
    /// WHO` (signers in key order; v6 only).
    pub fn issuer_signers(c: &AccountControl, who: crate::control::WhoCanAct) -> String {
        let mut signers: Vec<String> = c
            .signers
            .iter()
            .map(|s| format!("{} weight {} ({})", s.key, s.weight, s.kind))
            .collect();
        signers.sort();
        let signers = if signers.is_empty() {
            "none".to_string()
        } else {
            signers.join(", ")
        };
        format!(
            "signers: {signers}; thresholds: low {}, medium {}, high {}; who can use the issuer's powers: {who}",
            c.low, c.medium, c.high
        )
    }

    /// The line for an account record without signers and thresholds (v6 only).
    pub fn issuer_signers_missing() -> String {
        "signers and thresholds: not in the account record; who can use the issuer's powers: not known, so the \
         issuer is taken to be able to sign"
            .to_string()
    }

    /// `CURRENCIES claims CODE-ISSUER`.
    pub fn toml_claims(asset: &Asset) -> String {
        format!("CURRENCIES claims {asset}")
    }

    /// `CURRENCIES lists N entries, none matching CODE-ISSUER`.
    pub fn toml_no_match(entries: usize, asset: &Asset) -> String {
        format!("CURRENCIES lists {entries} entries, none matching {asset}")
    }

    /// `CURRENCIES lists N entries, none matching CODE-ISSUER inline; K are links not followed`.
    pub fn toml_links_not_followed(entries: usize, asset: &Asset, links: usize) -> String {
        format!("CURRENCIES lists {entries} entries, none matching {asset} inline; {links} are links not followed")
    }

    /// `linked document claims CODE-ISSUER`.
    pub fn linked_claims(asset: &Asset) -> String {
        format!("linked document claims {asset}")
    }

    /// `CURRENCIES lists N entries, none matching CODE-ISSUER inline; K linked documents left unread (bound: 8)`.
    pub fn toml_links_beyond_bound(
        entries: usize,
        asset: &Asset,
        unread: usize,
        bound: usize,
    ) -> String {
        format!(
            "CURRENCIES lists {entries} entries, none matching {asset} inline; {unread} linked documents left unread (bound: {bound})"
        )
    }

    /// `CURRENCIES lists N entries, none matching CODE-ISSUER inline; U of A linked documents could not be read`.
    pub fn toml_links_unreadable(
        entries: usize,
        asset: &Asset,
        unreadable: usize,
        attempted: usize,
    ) -> String {
        format!(
            "CURRENCIES lists {entries} entries, none matching {asset} inline; {unreadable} of {attempted} linked documents could not be read"
        )
    }

    /// `CURRENCIES lists N entries and A linked documents, none matching CODE-ISSUER`.
    pub fn toml_links_no_match(entries: usize, linked: usize, asset: &Asset) -> String {
        format!("CURRENCIES lists {entries} entries and {linked} linked documents, none matching {asset}")
    }

    /// `not retrievable: <category>`.
    pub fn not_retrievable(failure: &FetchFailure) -> String {
        format!("not retrievable: {}", failure.category)
    }

    /// `refused: <reason>`.
    pub fn refused(reason: &str) -> String {
        format!("refused: {reason}")
    }

    /// `home_domain "X"` (the advertised side of a directory/home_domain disagreement).
    pub fn home_domain(domain: &str) -> String {
        format!("home_domain {}", go_quote(domain))
    }

    /// `listed under domain "Y"` (the directory side of that disagreement).
    pub fn listed_under_domain(domain: &str) -> String {
        format!("listed under domain {}", go_quote(domain))
    }

    /// `listed as "NAME" (domain "DOMAIN", tags: t1, t2)`; a missing domain prints as `""`.
    pub fn directory_entry(e: &DirectoryEntry) -> String {
        format!(
            "listed as {} (domain {}, tags: {})",
            go_quote(&e.name),
            go_quote(e.domain.as_deref().unwrap_or("")),
            e.tags.join(", ")
        )
    }

    /// `domain "DOMAIN" blocked=B`.
    pub fn blocklist(domain: &str, blocked: bool) -> String {
        format!("domain {} blocked={}", go_quote(domain), b(blocked))
    }

    /// The line recorded for a directory tag outside Assay's documented vocabulary.
    pub fn unknown_tag(tag: &str) -> String {
        format!(
            "unrecognised directory tag {}: not in Assay's documented vocabulary, so it did not affect severity; review it so the vocabulary can be updated deliberately",
            go_quote(tag)
        )
    }

    /// `listed as "N" (org "O", domain "D") in list "L"`, or `present in list "L"` when the entry has no name.
    pub fn list_present(list: &str, entry: &ListEntry) -> String {
        match &entry.name {
            Some(name) => format!(
                "listed as {} (org {}, domain {}) in list {}",
                go_quote(name),
                go_quote(entry.org.as_deref().unwrap_or("")),
                go_quote(entry.domain.as_deref().unwrap_or("")),
                go_quote(list)
            ),
            None => format!("present in list {}", go_quote(list)),
        }
    }

    /// `not present in list "L"`.
    pub fn list_absent(list: &str) -> String {
        format!("not present in list {}", go_quote(list))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_matches_go() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\t\n\r\u{1b}\u{7f}"), r#""\t\n\r\x1b\x7f""#);
        assert_eq!(go_quote("zé→日本"), "\"zé→日本\"");
        assert_eq!(go_quote("a\u{200b}b\u{a0}"), r#""a\u200bb\u00a0""#);
    }

    #[test]
    fn claim_wording() {
        let f = IssuerFlags {
            auth_revocable: true,
            ..Default::default()
        };
        assert_eq!(
            claims::issuer_account_flags(&f),
            "issuer account flags: auth_required=false auth_revocable=true auth_immutable=false auth_clawback_enabled=false"
        );
        let e = DirectoryEntry {
            name: "Centre".into(),
            domain: Some("centre.io".into()),
            tags: vec!["anchor".into(), "issuer".into()],
        };
        assert_eq!(
            claims::directory_entry(&e),
            r#"listed as "Centre" (domain "centre.io", tags: anchor, issuer)"#
        );
        assert_eq!(
            claims::blocklist("circle.com", false),
            r#"domain "circle.com" blocked=false"#
        );
    }
}
