//! The closed set of ways a source can fail to answer, and their wire text.
//!
//! Evidence claims are hashed into attestations, so a failure is recorded by its *category*, never by raw
//! transport text (which embeds resolver addresses and differs between machines, #24). The raw text may be
//! kept in [`FetchFailure::detail`]; it reaches a finding's reasoning and nothing that is hashed.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a fetch produced no usable answer. `Display` / `FromStr` give the wire text, which is stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureCategory {
    /// `dns-failure`: the host name did not resolve.
    DnsFailure,
    /// `connection-refused`: nothing accepted the TCP connection.
    ConnectionRefused,
    /// `tls-failure`: the TLS handshake or certificate validation failed.
    TlsFailure,
    /// `timeout`: no complete answer within the fetch deadline.
    Timeout,
    /// `status N`: the server answered with an HTTP status that is not an answer for this source
    /// (e.g. `status 404` for a stellar.toml, `status 429` or `status 503` anywhere).
    Status(u16),
    /// `too-many-redirects`: the redirect chain exceeded its bound (5 hops).
    TooManyRedirects,
    /// `body-too-large`: the body exceeded the size cap (1 MiB, or the source's own lower limit).
    BodyTooLarge,
    /// `malformed`: the body arrived but could not be parsed as the source's format (bad JSON, bad TOML,
    /// a JSON shape that lacks the fields the source always sends).
    Malformed,
    /// `unknown-failure`: any other transport error.
    UnknownFailure,
}

impl FailureCategory {
    /// Every category except the `status N` family, for tests and documentation.
    pub const FIXED: [FailureCategory; 8] = [
        FailureCategory::DnsFailure,
        FailureCategory::ConnectionRefused,
        FailureCategory::TlsFailure,
        FailureCategory::Timeout,
        FailureCategory::TooManyRedirects,
        FailureCategory::BodyTooLarge,
        FailureCategory::Malformed,
        FailureCategory::UnknownFailure,
    ];
}

impl fmt::Display for FailureCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureCategory::DnsFailure => f.write_str("dns-failure"),
            FailureCategory::ConnectionRefused => f.write_str("connection-refused"),
            FailureCategory::TlsFailure => f.write_str("tls-failure"),
            FailureCategory::Timeout => f.write_str("timeout"),
            FailureCategory::Status(code) => write!(f, "status {code}"),
            FailureCategory::TooManyRedirects => f.write_str("too-many-redirects"),
            FailureCategory::BodyTooLarge => f.write_str("body-too-large"),
            FailureCategory::Malformed => f.write_str("malformed"),
            FailureCategory::UnknownFailure => f.write_str("unknown-failure"),
        }
    }
}

/// A failure category text that is not in the closed set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown failure category {0:?}: expected one of dns-failure, connection-refused, tls-failure, timeout, \
     status N (N = 100..=599), too-many-redirects, body-too-large, malformed, unknown-failure"
)]
pub struct FailureCategoryError(pub String);

impl FromStr for FailureCategory {
    type Err = FailureCategoryError;

    fn from_str(text: &str) -> Result<FailureCategory, FailureCategoryError> {
        if let Some(code) = text.strip_prefix("status ") {
            return match code.parse::<u16>() {
                Ok(n) if (100..=599).contains(&n) && code.len() == 3 => {
                    Ok(FailureCategory::Status(n))
                }
                _ => Err(FailureCategoryError(text.to_string())),
            };
        }
        FailureCategory::FIXED
            .into_iter()
            .find(|c| c.to_string() == text)
            .ok_or_else(|| FailureCategoryError(text.to_string()))
    }
}

impl Serialize for FailureCategory {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FailureCategory {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FailureCategory, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A fetch that produced no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchFailure {
    /// The canonical category; the only part of a failure that reaches a hashed evidence claim.
    pub category: FailureCategory,
    /// Free-text detail for people (e.g. the transport error, or the final host of a refused redirect).
    /// Shown in reasoning only; never hashed. Empty when there is nothing to add.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl FetchFailure {
    /// A failure with no extra detail.
    pub fn new(category: FailureCategory) -> FetchFailure {
        FetchFailure {
            category,
            detail: String::new(),
        }
    }

    /// A failure with a human-readable detail, redacted ([`crate::redact::text`]): a detail is published
    /// with the report (its reasoning, the history, `serve`), and an error's text can carry the URL it
    /// asked, an operator's key with it.
    pub fn with_detail(category: FailureCategory, detail: impl Into<String>) -> FetchFailure {
        FetchFailure {
            category,
            detail: crate::redact::text(&detail.into()),
        }
    }

    /// `category`, or `category (detail)` when there is a detail: for reasoning text.
    pub fn describe(&self) -> String {
        if self.detail.is_empty() {
            self.category.to_string()
        } else {
            format!("{} ({})", self.category, self.detail)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_text_round_trips() {
        for c in FailureCategory::FIXED {
            assert_eq!(c.to_string().parse::<FailureCategory>().unwrap(), c);
        }
        assert_eq!(FailureCategory::Status(404).to_string(), "status 404");
        assert_eq!(
            "status 429".parse::<FailureCategory>().unwrap(),
            FailureCategory::Status(429)
        );
        for bad in [
            "status 000",
            "status 4040",
            "status 99",
            "status",
            "DNS-failure",
            "refused",
            "",
        ] {
            assert!(bad.parse::<FailureCategory>().is_err(), "{bad} accepted");
        }
    }
}
