//! Horizon `/assets` (a HAL page, even when filtered to one asset) and `/accounts/{id}` records.

use serde_json::Value;

use super::ParseError;
use crate::subject::{AccountControl, AccountSigner, Asset, HeldTrustline, IssuerFlags};

/// The fields of an `/assets` record the checks use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetRecord {
    /// The issuer flags on the asset record.
    pub flags: IssuerFlags,
    /// `_links.toml.href`, when non-empty (Horizon's view of the issuer's stellar.toml URL).
    pub toml_href: Option<String>,
    /// `contract_id` (the pubnet SAC address), when deployed.
    pub contract_id: Option<String>,
}

/// The fields of an `/accounts` record the checks use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRecord {
    /// `account_id`.
    pub account_id: String,
    /// `home_domain`; `None` when the key is absent (Horizon's encoding of "unset") or empty.
    pub home_domain: Option<String>,
    /// The issuer flags on the account record.
    pub flags: IssuerFlags,
    /// `signers` and `thresholds`; `None` when the record carries neither (a trimmed record). Horizon
    /// always serves both.
    pub control: Option<AccountControl>,
}

fn json(source: &'static str, body: &[u8]) -> Result<Value, ParseError> {
    serde_json::from_slice(body).map_err(|e| ParseError::new(source, format!("not JSON: {e}")))
}

fn flags(source: &'static str, record: &Value) -> Result<IssuerFlags, ParseError> {
    let obj = record
        .get("flags")
        .and_then(Value::as_object)
        .ok_or_else(|| ParseError::new(source, "record has no `flags` object"))?;
    // Every flag must be present: a missing flag read as false would be absence rendered as "no power".
    let flag = |name: &str| {
        obj.get(name).and_then(Value::as_bool).ok_or_else(|| {
            ParseError::new(
                source,
                format!("`flags.{name}` is missing or not a boolean"),
            )
        })
    };
    Ok(IssuerFlags {
        auth_required: flag("auth_required")?,
        auth_revocable: flag("auth_revocable")?,
        auth_immutable: flag("auth_immutable")?,
        auth_clawback_enabled: flag("auth_clawback_enabled")?,
    })
}

fn opt_string(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Parses an `/assets?asset_code=…&asset_issuer=…` page and returns the record for `asset`, or `None` when
/// the page has no such record (Horizon answers an unknown asset with 200 and `records: []`).
pub fn parse_horizon_assets(body: &[u8], asset: &Asset) -> Result<Option<AssetRecord>, ParseError> {
    const SRC: &str = "horizon /assets";
    let page = json(SRC, body)?;
    let records = page
        .pointer("/_embedded/records")
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::new(SRC, "not a HAL page: no `_embedded.records` array"))?;
    for record in records {
        let code = record.get("asset_code").and_then(Value::as_str);
        let issuer = record.get("asset_issuer").and_then(Value::as_str);
        if code == Some(asset.code.as_str()) && issuer == Some(asset.issuer.as_str()) {
            return Ok(Some(AssetRecord {
                flags: flags(SRC, record)?,
                toml_href: record
                    .pointer("/_links/toml/href")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
                contract_id: opt_string(record, "contract_id"),
            }));
        }
    }
    Ok(None)
}

/// Parses an `/assets?asset_issuer=…` page: each record's asset code (records of another issuer are
/// skipped) and the page's last paging token, the cursor of the next page.
pub fn parse_issuer_assets(
    body: &[u8],
    issuer: &str,
) -> Result<(Vec<String>, Option<String>), ParseError> {
    const SRC: &str = "horizon /assets?asset_issuer";
    let page = json(SRC, body)?;
    let records = page
        .pointer("/_embedded/records")
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::new(SRC, "not a HAL page: no `_embedded.records` array"))?;
    let mut codes = Vec::with_capacity(records.len());
    let mut cursor = None;
    for record in records {
        let code = record
            .get("asset_code")
            .and_then(Value::as_str)
            .ok_or_else(|| ParseError::new(SRC, "a record has no `asset_code`"))?;
        if record.get("asset_issuer").and_then(Value::as_str) == Some(issuer) {
            codes.push(code.to_string());
        }
        cursor = opt_string(record, "paging_token");
    }
    Ok((codes, cursor))
}

/// Parses an `/accounts/{id}` record. Tolerates every field it does not use being absent.
pub fn parse_horizon_account(body: &[u8]) -> Result<AccountRecord, ParseError> {
    const SRC: &str = "horizon /accounts";
    let record = json(SRC, body)?;
    if !record.is_object() {
        return Err(ParseError::new(SRC, "not a JSON object"));
    }
    let account_id = opt_string(&record, "account_id")
        .or_else(|| opt_string(&record, "id"))
        .ok_or_else(|| ParseError::new(SRC, "record has no `account_id`"))?;
    let home_domain = match record.get("home_domain") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(ParseError::new(SRC, "`home_domain` is not a string")),
    };
    Ok(AccountRecord {
        account_id,
        home_domain,
        flags: flags(SRC, &record)?,
        control: control(SRC, &record)?,
    })
}

/// `signers` and `thresholds` of an account record: both absent is `None` (a trimmed record); one without
/// the other, or either malformed, is a defective record.
fn control(source: &'static str, record: &Value) -> Result<Option<AccountControl>, ParseError> {
    let (signers, thresholds) = match (record.get("signers"), record.get("thresholds")) {
        (None, None) => return Ok(None),
        (Some(s), Some(t)) => (s, t),
        _ => {
            return Err(ParseError::new(
                source,
                "the record carries one of `signers` and `thresholds` without the other",
            ))
        }
    };
    let byte = |v: Option<&Value>, what: &str| {
        v.and_then(Value::as_u64)
            .filter(|w| *w <= 255)
            .map(|w| w as u32)
            .ok_or_else(|| ParseError::new(source, format!("`{what}` is missing or not 0-255")))
    };
    let signers = signers
        .as_array()
        .ok_or_else(|| ParseError::new(source, "`signers` is not an array"))?
        .iter()
        .map(|s| {
            let text = |key: &str| {
                s.get(key)
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        ParseError::new(source, format!("a signer has no string `{key}`"))
                    })
            };
            Ok(AccountSigner {
                key: text("key")?,
                kind: text("type")?,
                weight: byte(s.get("weight"), "signers[].weight")?,
            })
        })
        .collect::<Result<Vec<_>, ParseError>>()?;
    Ok(Some(AccountControl {
        signers,
        low: byte(thresholds.get("low_threshold"), "thresholds.low_threshold")?,
        medium: byte(thresholds.get("med_threshold"), "thresholds.med_threshold")?,
        high: byte(
            thresholds.get("high_threshold"),
            "thresholds.high_threshold",
        )?,
    }))
}

/// Parses an `/accounts/{id}` record's trustlines to classic assets (`balances[]` entries of type
/// `credit_alphanum4` / `credit_alphanum12`; native and liquidity-pool shares are not trustlines to an
/// issuer). A trustline without its authorization flags is a defective record: a missing flag read as
/// false would be absence rendered as a state.
pub fn parse_account_trustlines(body: &[u8]) -> Result<Vec<HeldTrustline>, ParseError> {
    const SRC: &str = "horizon /accounts balances";
    let record = json(SRC, body)?;
    let balances = record
        .get("balances")
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::new(SRC, "record has no `balances` array"))?;
    let mut lines = Vec::new();
    for b in balances {
        let kind = b.get("asset_type").and_then(Value::as_str).unwrap_or("");
        if kind != "credit_alphanum4" && kind != "credit_alphanum12" {
            continue;
        }
        let text = |key: &str| {
            b.get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| ParseError::new(SRC, format!("a trustline has no string `{key}`")))
        };
        let flag = |key: &str| {
            b.get(key)
                .and_then(Value::as_bool)
                .ok_or_else(|| ParseError::new(SRC, format!("a trustline has no boolean `{key}`")))
        };
        let asset = Asset::new(text("asset_code")?, text("asset_issuer")?)
            .map_err(|e| ParseError::new(SRC, e.to_string()))?;
        lines.push(HeldTrustline {
            asset,
            balance: text("balance")?.to_string(),
            authorized: flag("is_authorized")?,
            authorized_to_maintain_liabilities: flag("is_authorized_to_maintain_liabilities")?,
            // Horizon leaves it out when false on older records; only an explicit `true` is a power here,
            // and a missing key is read as the ledger's default (a trustline flag that was never set).
            clawback_enabled: b
                .get("is_clawback_enabled")
                .map(|v| {
                    v.as_bool().ok_or_else(|| {
                        ParseError::new(SRC, "`is_clawback_enabled` is not a boolean")
                    })
                })
                .transpose()?
                .unwrap_or(false),
        });
    }
    Ok(lines)
}

/// The `network_passphrase` of Horizon's root document (`GET {horizon}/`): which network it serves.
pub fn parse_horizon_root(body: &[u8]) -> Result<String, ParseError> {
    const SRC: &str = "horizon /";
    let root = json(SRC, body)?;
    opt_string(&root, "network_passphrase")
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ParseError::new(SRC, "root has no string `network_passphrase`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_names_the_network() {
        let body = br#"{"horizon_version":"2.32.0","network_passphrase":"Test SDF Network ; September 2015"}"#;
        assert_eq!(
            parse_horizon_root(body).unwrap(),
            "Test SDF Network ; September 2015"
        );
        for bad in [
            &b"{}"[..],
            b"[]",
            b"not json",
            br#"{"network_passphrase":7}"#,
            br#"{"network_passphrase":""}"#,
        ] {
            assert!(parse_horizon_root(bad).is_err(), "{bad:?}");
        }
    }

    const USDC: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";

    #[test]
    fn assets_page() {
        let a = Asset::new("USDC", USDC).unwrap();
        let body = format!(
            r#"{{"_links":{{}},"_embedded":{{"records":[{{"_links":{{"toml":{{"href":"https://circle.com/.well-known/stellar.toml"}}}},
            "asset_code":"USDC","asset_issuer":"{USDC}","amount":"1.0",
            "flags":{{"auth_required":false,"auth_revocable":true,"auth_immutable":false,"auth_clawback_enabled":false}}}}]}}}}"#
        );
        let r = parse_horizon_assets(body.as_bytes(), &a).unwrap().unwrap();
        assert!(r.flags.auth_revocable && !r.flags.auth_clawback_enabled);
        assert_eq!(
            r.toml_href.as_deref(),
            Some("https://circle.com/.well-known/stellar.toml")
        );
        let empty = br#"{"_embedded":{"records":[]}}"#;
        assert_eq!(parse_horizon_assets(empty, &a).unwrap(), None);
        assert!(parse_horizon_assets(b"{}", &a).is_err());
        let missing_clawback = body.replace(r#","auth_clawback_enabled":false"#, "");
        assert!(parse_horizon_assets(missing_clawback.as_bytes(), &a).is_err());
    }

    #[test]
    fn account_home_domain_absent_vs_present() {
        let f = r#""flags":{"auth_required":false,"auth_revocable":false,"auth_immutable":true,"auth_clawback_enabled":false}"#;
        let with = format!(r#"{{"account_id":"{USDC}","home_domain":"circle.com",{f}}}"#);
        let without = format!(r#"{{"account_id":"{USDC}",{f}}}"#);
        assert_eq!(
            parse_horizon_account(with.as_bytes())
                .unwrap()
                .home_domain
                .as_deref(),
            Some("circle.com")
        );
        let r = parse_horizon_account(without.as_bytes()).unwrap();
        assert_eq!(r.home_domain, None);
        assert!(r.flags.auth_immutable);
        assert!(parse_horizon_account(b"[]").is_err());
        assert_eq!(r.control, None, "a trimmed record has no signers");
    }

    #[test]
    fn account_trustlines() {
        let body = format!(
            r#"{{"balances":[
            {{"balance":"4.0000000","is_authorized":true,"is_authorized_to_maintain_liabilities":true,"is_clawback_enabled":true,"asset_type":"credit_alphanum4","asset_code":"USD","asset_issuer":"{USDC}"}},
            {{"balance":"1.0000000","is_authorized":false,"is_authorized_to_maintain_liabilities":false,"asset_type":"credit_alphanum12","asset_code":"LONGERCODE","asset_issuer":"{USDC}"}},
            {{"balance":"9.0000000","asset_type":"liquidity_pool_shares","liquidity_pool_id":"ab"}},
            {{"balance":"72.8563792","asset_type":"native"}}]}}"#
        );
        let lines = parse_account_trustlines(body.as_bytes()).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].clawback_enabled && lines[0].authorized);
        assert_eq!(lines[1].asset.code, "LONGERCODE");
        assert!(!lines[1].authorized && !lines[1].clawback_enabled);
        let missing = body.replace(r#""is_authorized":false,"#, "");
        assert!(parse_account_trustlines(missing.as_bytes()).is_err());
        assert!(parse_account_trustlines(b"{}").is_err());
    }

    #[test]
    fn account_signers_and_thresholds() {
        let f = r#""flags":{"auth_required":false,"auth_revocable":false,"auth_immutable":false,"auth_clawback_enabled":false}"#;
        let record = |extra: &str| format!(r#"{{"account_id":"{USDC}",{f}{extra}}}"#);
        let full = record(
            r#","thresholds":{"low_threshold":1,"med_threshold":2,"high_threshold":3},
            "signers":[{"weight":0,"key":"GA","type":"ed25519_public_key"},{"weight":2,"key":"GB","type":"ed25519_public_key","sponsor":"GC"}]"#,
        );
        let c = parse_horizon_account(full.as_bytes())
            .unwrap()
            .control
            .unwrap();
        assert_eq!((c.low, c.medium, c.high), (1, 2, 3));
        assert_eq!(c.signers.len(), 2);
        assert_eq!(c.signers[1].weight, 2);
        assert_eq!(c.signers[1].kind, "ed25519_public_key");
        for bad in [
            r#","signers":[]"#,
            r#","thresholds":{"low_threshold":1,"med_threshold":2,"high_threshold":3},"signers":{}"#,
            r#","thresholds":{"low_threshold":1,"med_threshold":2,"high_threshold":256},"signers":[]"#,
            r#","thresholds":{"low_threshold":1,"med_threshold":2,"high_threshold":3},"signers":[{"weight":1,"key":"GA"}]"#,
        ] {
            assert!(
                parse_horizon_account(record(bad).as_bytes()).is_err(),
                "{bad}"
            );
        }
    }
}
