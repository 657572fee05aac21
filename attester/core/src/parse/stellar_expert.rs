//! StellarExpert directory (`/explorer/directory/{address}`) and blocklist
//! (`/explorer/directory/blocked-domains/{domain}`) answers.

use serde_json::Value;

use super::ParseError;
use crate::subject::{BlocklistAnswer, DirectoryEntry};

/// Parses a directory answer. The server answers an unlisted address with 200 `{}`: a body without an
/// `address` key is "not listed" (`Ok(None)`), never an entry with an empty name (#25).
pub fn parse_directory(body: &[u8]) -> Result<Option<DirectoryEntry>, ParseError> {
    const SRC: &str = "stellar.expert directory";
    let v: Value =
        serde_json::from_slice(body).map_err(|e| ParseError::new(SRC, format!("not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| ParseError::new(SRC, "not a JSON object"))?;
    if obj.get("address").is_none() {
        return Ok(None);
    }
    let name = match obj.get("name") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(_) => return Err(ParseError::new(SRC, "`name` is not a string")),
    };
    let domain = match obj.get("domain") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        None | Some(Value::Null) | Some(Value::String(_)) => None,
        Some(_) => return Err(ParseError::new(SRC, "`domain` is not a string")),
    };
    let tags = match obj.get("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|t| {
                t.as_str()
                    .map(|s| s.trim_start_matches('#').to_string())
                    .ok_or_else(|| ParseError::new(SRC, "a tag is not a string"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(ParseError::new(SRC, "`tags` is not an array")),
    };
    Ok(Some(DirectoryEntry { name, domain, tags }))
}

/// Parses a blocked-domains answer, `{"domain": "...", "blocked": true|false}`. `blocked` is required: a body
/// without it is malformed, never "not blocked".
pub fn parse_blocked_domain(body: &[u8]) -> Result<BlocklistAnswer, ParseError> {
    const SRC: &str = "stellar.expert blocked-domains";
    let v: Value =
        serde_json::from_slice(body).map_err(|e| ParseError::new(SRC, format!("not JSON: {e}")))?;
    let blocked = v
        .get("blocked")
        .and_then(Value::as_bool)
        .ok_or_else(|| ParseError::new(SRC, "no boolean `blocked`"))?;
    let domain = v
        .get("domain")
        .and_then(Value::as_str)
        .ok_or_else(|| ParseError::new(SRC, "no string `domain`"))?
        .to_string();
    Ok(BlocklistAnswer { domain, blocked })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_listed_and_not() {
        let e = parse_directory(br#"{"address":"GA22","name":"Scam Asset","domain":"nasdaq.finance","tags":["malicious","unsafe"]}"#)
            .unwrap()
            .unwrap();
        assert_eq!(e.domain.as_deref(), Some("nasdaq.finance"));
        assert_eq!(e.tags, ["malicious", "unsafe"]);
        assert_eq!(parse_directory(b"{}").unwrap(), None);
        assert!(parse_directory(b"not json").is_err());
        assert!(parse_directory(br#"{"address":"G","tags":"malicious"}"#).is_err());
    }

    #[test]
    fn blocked() {
        let b = parse_blocked_domain(br#"{"domain":"xlmcash.tech","blocked":true}"#).unwrap();
        assert!(b.blocked);
        assert!(parse_blocked_domain(br#"{"domain":"x"}"#).is_err());
        assert!(parse_blocked_domain(br#"{"error":"Service unavailable.","status":503}"#).is_err());
    }
}
