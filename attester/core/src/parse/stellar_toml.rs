//! SEP-1 stellar.toml: only `[[CURRENCIES]]` matters to the checks. Nothing else is required (live files such
//! as stronghold.co's have no `VERSION` or `NETWORK_PASSPHRASE`).

use toml::{Table, Value};

use super::ParseError;
use crate::subject::Currency;

/// The parts of a stellar.toml the checks read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StellarToml {
    /// `[[CURRENCIES]]` entries in document order.
    pub currencies: Vec<Currency>,
}

impl StellarToml {
    /// The distinct `toml=` links of entries that do not already declare `asset` inline, in first-seen order:
    /// the documents a scan should follow (up to its bound).
    pub fn unresolved_links(&self, asset: &crate::subject::Asset) -> Vec<String> {
        unresolved_links(&self.currencies, asset)
    }
}

/// The distinct `toml=` links of entries in `currencies` that do not declare `asset` inline, first-seen order.
pub fn unresolved_links(currencies: &[Currency], asset: &crate::subject::Asset) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in currencies {
        if c.declares(asset) {
            continue;
        }
        if let Some(link) = &c.toml {
            if !out.contains(link) {
                out.push(link.clone());
            }
        }
    }
    out
}

fn text(source: &'static str, body: &[u8]) -> Result<Table, ParseError> {
    let s = std::str::from_utf8(body).map_err(|_| ParseError::new(source, "not UTF-8"))?;
    let s = s.strip_prefix('\u{feff}').unwrap_or(s);
    s.parse::<Table>()
        .map_err(|e| ParseError::new(source, format!("not TOML: {}", e.message())))
}

fn currency(table: &Table) -> Currency {
    // Leniency: a field of the wrong type is treated as absent, so it can never produce a match.
    let field = |k: &str| {
        table
            .get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Currency {
        code: field("code"),
        issuer: field("issuer"),
        toml: field("toml"),
        contract: field("contract"),
    }
}

fn currencies(source: &'static str, doc: &Table) -> Result<Vec<Currency>, ParseError> {
    match doc.get("CURRENCIES") {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_table()
                    .map(currency)
                    .ok_or_else(|| ParseError::new(source, "a CURRENCIES element is not a table"))
            })
            .collect(),
        Some(_) => Err(ParseError::new(
            source,
            "CURRENCIES is not an array of tables",
        )),
    }
}

/// Parses a stellar.toml body.
pub fn parse_stellar_toml(body: &[u8]) -> Result<StellarToml, ParseError> {
    const SRC: &str = "stellar.toml";
    let doc = text(SRC, body)?;
    Ok(StellarToml {
        currencies: currencies(SRC, &doc)?,
    })
}

/// Parses a linked `toml=` currency document. SEP-1 describes one currency per document with its fields at
/// the top level; a document that instead carries `[[CURRENCIES]]` is read too. Returns every declared
/// currency (a top-level one first).
pub fn parse_linked_currency_document(body: &[u8]) -> Result<Vec<Currency>, ParseError> {
    const SRC: &str = "linked currency document";
    let doc = text(SRC, body)?;
    let mut out = Vec::new();
    let top = currency(&doc);
    if top.code.is_some() || top.issuer.is_some() {
        out.push(Currency { toml: None, ..top });
    }
    out.extend(currencies(SRC, &doc)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::Asset;

    #[test]
    fn currencies_and_links() {
        let body = br#"
ACCOUNTS = ["GDSTRSHXHGJ7ZIVRBXEYE5Q74XUVCUSEKEBR7UCHEUUEK72N7I7KJ6JH"]
[DOCUMENTATION]
ORG_NAME = "X"
[[CURRENCIES]]
code = "SHX"
issuer = "GDSTRSHXHGJ7ZIVRBXEYE5Q74XUVCUSEKEBR7UCHEUUEK72N7I7KJ6JH"
[[CURRENCIES]]
toml = "https://example.org/.well-known/A.toml"
[[CURRENCIES]]
code = 5
toml = "https://example.org/.well-known/A.toml"
"#;
        let t = parse_stellar_toml(body).unwrap();
        assert_eq!(t.currencies.len(), 3);
        let shx = Asset::new(
            "shx",
            "GDSTRSHXHGJ7ZIVRBXEYE5Q74XUVCUSEKEBR7UCHEUUEK72N7I7KJ6JH",
        )
        .unwrap();
        assert!(t.currencies[0].declares(&shx));
        assert_eq!(t.currencies[2].code, None);
        assert_eq!(
            t.unresolved_links(&shx),
            ["https://example.org/.well-known/A.toml"]
        );
        assert!(parse_stellar_toml(b"<html>not found</html>").is_err());
        assert!(parse_stellar_toml(b"CURRENCIES = 3").is_err());
        assert!(parse_stellar_toml(b"\xff\xfe").is_err());
        assert_eq!(parse_stellar_toml(b"").unwrap().currencies, vec![]);
    }

    #[test]
    fn linked_document_top_level() {
        let c = parse_linked_currency_document(b"code = \"AB\"\nissuer = \"GX\"\n").unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].code.as_deref(), Some("AB"));
    }
}
