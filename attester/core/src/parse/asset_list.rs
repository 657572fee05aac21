//! SEP-42 asset lists, decoded leniently: real lists violate the schema (Soroswap's `network: "mainnet"`,
//! LOBSTR's missing `org` and hex contracts, a `{results: [{asset_code, asset_issuer}]}` variant), and a list
//! is evidence only, so the parser keeps what it can identify and drops what it cannot.

use serde_json::Value;

use super::ParseError;
use crate::subject::{Asset, ListEntry};

/// A parsed SEP-42 list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetList {
    /// The list's `name` (empty when the list gives none).
    pub name: String,
    /// The list's `provider` (empty when absent).
    pub provider: String,
    /// Entries that identify a classic asset by code and issuer. Contract-only entries are dropped.
    pub entries: Vec<AssetListEntry>,
}

/// One classic-asset entry of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetListEntry {
    /// `code` (or `asset_code`).
    pub code: String,
    /// `issuer` (or `asset_issuer`).
    pub issuer: String,
    /// `name`, `org`, `domain` as given.
    pub entry: ListEntry,
}

impl AssetList {
    /// The entry for `asset` (code and issuer compared case-insensitively), if the list carries it.
    pub fn find(&self, asset: &Asset) -> Option<&ListEntry> {
        self.entries
            .iter()
            .find(|e| {
                e.code.eq_ignore_ascii_case(&asset.code)
                    && e.issuer.eq_ignore_ascii_case(&asset.issuer)
            })
            .map(|e| &e.entry)
    }
}

fn s(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
}

/// Parses a list body. Fails only when the body is not JSON or carries no asset array at all.
pub fn parse_asset_list(body: &[u8]) -> Result<AssetList, ParseError> {
    const SRC: &str = "asset list";
    let v: Value =
        serde_json::from_slice(body).map_err(|e| ParseError::new(SRC, format!("not JSON: {e}")))?;
    let items = v
        .get("assets")
        .or_else(|| v.get("results"))
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::new(SRC, "no `assets` array"))?;
    let entries = items
        .iter()
        .filter_map(|item| {
            Some(AssetListEntry {
                code: s(item, &["code", "asset_code"])?,
                issuer: s(item, &["issuer", "asset_issuer"])?,
                entry: ListEntry {
                    name: s(item, &["name"]),
                    org: s(item, &["org"]),
                    domain: s(item, &["domain", "home_domain"]),
                },
            })
        })
        .collect();
    Ok(AssetList {
        name: s(&v, &["name"]).unwrap_or_default(),
        provider: s(&v, &["provider"]).unwrap_or_default(),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_shapes() {
        let a = Asset::new(
            "AQUA",
            "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA",
        )
        .unwrap();
        let l = parse_asset_list(br#"{"name":"Top","provider":"SE","network":"mainnet","assets":[
            {"contract":"CAUIKL3IYGMERDRUN6YSCLWVAKIFG5Q4YJHUKM4S4NJZQIA3BAS6OJPK"},
            {"code":"AQUA","issuer":"GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA","name":"Aquarius","org":"Aqua","extra":1}]}"#).unwrap();
        assert_eq!(l.entries.len(), 1);
        assert_eq!(l.find(&a).unwrap().name.as_deref(), Some("Aquarius"));
        let lobstr = parse_asset_list(br#"{"results":[{"asset_code":"AQUA","asset_issuer":"GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA"}]}"#).unwrap();
        assert_eq!(lobstr.find(&a), Some(&ListEntry::default()));
        assert!(parse_asset_list(b"{}").is_err());
    }
}
