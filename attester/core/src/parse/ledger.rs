//! stellar-rpc answers about the ledger itself: `getNetwork` (which network the endpoint serves) and
//! `getLedgerEntries` (an account entry, a trustline entry), decoded from their XDR into the same values the
//! Horizon parsers give, so a fact reads the same whichever source carried it.
//!
//! Also the keys the scan asks for: an account's and a trustline's `LedgerKey`, as base64 XDR.

use std::collections::BTreeMap;

use serde_json::Value;
use stellar_xdr::{
    AccountEntry, AccountId, AlphaNum12, AlphaNum4, AssetCode12, AssetCode4, LedgerEntryData,
    LedgerKey, LedgerKeyAccount, LedgerKeyTrustLine, Limits, PublicKey, ReadXdr, SignerKey,
    TrustLineAsset, TrustLineEntry, Uint256, WriteXdr,
};

use super::horizon::AccountRecord;
use super::ParseError;
use crate::subject::{AccountControl, AccountSigner, Asset, HeldTrustline, IssuerFlags};

/// Keys per `getLedgerEntries` call: stellar-rpc refuses more than 200.
pub const MAX_KEYS_PER_CALL: usize = 200;

/// Bounds on decoding one entry an endpoint sent (an account entry is well under a kilobyte).
const XDR_LIMITS: Limits = Limits {
    depth: 64,
    len: 64 * 1024,
};

// The issuer account flags (stellar-core `AccountFlags`) and trustline flags (`TrustLineFlags`).
const AUTH_REQUIRED: u32 = 0x1;
const AUTH_REVOCABLE: u32 = 0x2;
const AUTH_IMMUTABLE: u32 = 0x4;
const AUTH_CLAWBACK_ENABLED: u32 = 0x8;
const TRUSTLINE_AUTHORIZED: u32 = 0x1;
const TRUSTLINE_MAINTAIN_LIABILITIES: u32 = 0x2;
const TRUSTLINE_CLAWBACK_ENABLED: u32 = 0x4;

/// A `getLedgerEntries` answer: the ledger it was served at and each entry found, by its key (base64 XDR).
/// A key asked for and not among `entries` does not exist at `latest_ledger`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntries {
    /// `latestLedger`: the ledger whose state the entries are.
    pub latest_ledger: u32,
    /// `entries[].xdr` (a base64 `LedgerEntryData`) by `entries[].key`.
    pub entries: BTreeMap<String, String>,
}

fn account_id(source: &'static str, address: &str) -> Result<AccountId, ParseError> {
    let key = stellar_strkey::ed25519::PublicKey::from_string(address).map_err(|_| {
        ParseError::new(
            source,
            format!("{address:?} is not an account address (G…)"),
        )
    })?;
    Ok(AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(key.0))))
}

fn key_text(key: LedgerKey) -> String {
    key.to_xdr_base64(Limits::none())
        .expect("a ledger key always encodes")
}

/// The `LedgerKey` of `account` (`G…`), as base64 XDR.
pub fn account_key(account: &str) -> Result<String, ParseError> {
    Ok(key_text(LedgerKey::Account(LedgerKeyAccount {
        account_id: account_id("account key", account)?,
    })))
}

/// The `LedgerKey` of `holder`'s trustline to `asset`, as base64 XDR.
pub fn trustline_key(holder: &str, asset: &Asset) -> Result<String, ParseError> {
    const SRC: &str = "trustline key";
    let issuer = account_id(SRC, &asset.issuer)?;
    let code = asset.code.as_bytes();
    let asset_xdr = if code.len() <= 4 {
        let mut padded = [0u8; 4];
        padded[..code.len()].copy_from_slice(code);
        TrustLineAsset::CreditAlphanum4(AlphaNum4 {
            asset_code: AssetCode4(padded),
            issuer,
        })
    } else {
        let mut padded = [0u8; 12];
        padded[..code.len()].copy_from_slice(code);
        TrustLineAsset::CreditAlphanum12(AlphaNum12 {
            asset_code: AssetCode12(padded),
            issuer,
        })
    };
    Ok(key_text(LedgerKey::Trustline(LedgerKeyTrustLine {
        account_id: account_id(SRC, holder)?,
        asset: asset_xdr,
    })))
}

/// The `result` of a JSON-RPC 2.0 answer; a JSON-RPC error object is the endpoint refusing the call.
fn rpc_result(source: &'static str, body: &[u8]) -> Result<Value, ParseError> {
    let answer: Value = serde_json::from_slice(body)
        .map_err(|e| ParseError::new(source, format!("not JSON: {e}")))?;
    if let Some(error) = answer.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(ParseError::new(
            source,
            format!("the endpoint refused the call: {message} (code {code})"),
        ));
    }
    match answer.get("result") {
        Some(result) if result.is_object() => Ok(result.clone()),
        _ => Err(ParseError::new(
            source,
            "not a JSON-RPC answer: no `result` object",
        )),
    }
}

/// The passphrase a `getNetwork` answer names: which network the endpoint serves.
pub fn parse_rpc_network(body: &[u8]) -> Result<String, ParseError> {
    const SRC: &str = "stellar-rpc getNetwork";
    rpc_result(SRC, body)?
        .get("passphrase")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .ok_or_else(|| ParseError::new(SRC, "no string `passphrase`"))
}

/// A `getLedgerEntries` answer. Every entry must carry a string `key` and `xdr`, and the answer its
/// `latestLedger`: an entry missing one is a defective answer, never a missing entry.
pub fn parse_ledger_entries(body: &[u8]) -> Result<LedgerEntries, ParseError> {
    const SRC: &str = "stellar-rpc getLedgerEntries";
    let result = rpc_result(SRC, body)?;
    let latest_ledger = result
        .get("latestLedger")
        .and_then(Value::as_u64)
        .and_then(|l| u32::try_from(l).ok())
        .ok_or_else(|| ParseError::new(SRC, "no `latestLedger` ledger number"))?;
    let listed = match result.get("entries") {
        // stellar-rpc leaves `entries` out (or null) when none of the keys exists.
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(entries)) => entries.clone(),
        Some(_) => return Err(ParseError::new(SRC, "`entries` is not an array")),
    };
    let mut entries = BTreeMap::new();
    for entry in &listed {
        let text = |name: &str| {
            entry
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| ParseError::new(SRC, format!("an entry has no string `{name}`")))
        };
        entries.insert(text("key")?, text("xdr")?);
    }
    Ok(LedgerEntries {
        latest_ledger,
        entries,
    })
}

fn entry_data(source: &'static str, xdr: &str) -> Result<LedgerEntryData, ParseError> {
    LedgerEntryData::from_xdr_base64(xdr, XDR_LIMITS)
        .map_err(|e| ParseError::new(source, format!("entry XDR does not decode: {e}")))
}

fn address(account: &AccountId) -> String {
    let AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(key))) = account;
    format!("{}", stellar_strkey::ed25519::PublicKey(*key))
}

/// A signer key as Horizon spells it: its StrKey and its `type`.
fn signer(key: &SignerKey) -> (String, &'static str) {
    match key {
        SignerKey::Ed25519(k) => (
            format!("{}", stellar_strkey::ed25519::PublicKey(k.0)),
            "ed25519_public_key",
        ),
        SignerKey::PreAuthTx(k) => (format!("{}", stellar_strkey::PreAuthTx(k.0)), "preauth_tx"),
        SignerKey::HashX(k) => (format!("{}", stellar_strkey::HashX(k.0)), "sha256_hash"),
        // Its XDR (key, length, padded payload) is the StrKey's payload.
        SignerKey::Ed25519SignedPayload(p) => (
            p.to_xdr(Limits::none())
                .ok()
                .and_then(|bytes| stellar_strkey::ed25519::SignedPayload::from_payload(&bytes).ok())
                .map(|p| format!("{p}"))
                .unwrap_or_default(),
            "ed25519_signed_payload",
        ),
    }
}

/// An account entry (`getLedgerEntries`' `xdr` for an account key) as the record Horizon's `/accounts`
/// gives: flags, `home_domain` (empty is none; bytes that are not UTF-8 replaced as Horizon's JSON does),
/// and every signer, the master key first with its weight, and the three thresholds.
pub fn parse_account_entry(xdr: &str) -> Result<AccountRecord, ParseError> {
    const SRC: &str = "stellar-rpc account entry";
    let LedgerEntryData::Account(account) = entry_data(SRC, xdr)? else {
        return Err(ParseError::new(SRC, "the entry is not an account"));
    };
    Ok(account_record(&account))
}

fn account_record(account: &AccountEntry) -> AccountRecord {
    let account_id = address(&account.account_id);
    let [master, low, medium, high] = account.thresholds.0;
    let mut signers = vec![AccountSigner {
        key: account_id.clone(),
        kind: "ed25519_public_key".to_string(),
        weight: u32::from(master),
    }];
    signers.extend(account.signers.iter().map(|s| {
        let (key, kind) = signer(&s.key);
        AccountSigner {
            key,
            kind: kind.to_string(),
            weight: s.weight,
        }
    }));
    let home_domain = String::from_utf8_lossy(account.home_domain.as_slice()).into_owned();
    AccountRecord {
        account_id,
        home_domain: (!home_domain.is_empty()).then_some(home_domain),
        flags: IssuerFlags {
            auth_required: account.flags & AUTH_REQUIRED != 0,
            auth_revocable: account.flags & AUTH_REVOCABLE != 0,
            auth_immutable: account.flags & AUTH_IMMUTABLE != 0,
            auth_clawback_enabled: account.flags & AUTH_CLAWBACK_ENABLED != 0,
        },
        control: Some(AccountControl {
            signers,
            low: u32::from(low),
            medium: u32::from(medium),
            high: u32::from(high),
        }),
    }
}

/// An amount in stroops as Horizon prints it: 7 decimals.
fn amount(stroops: i64) -> String {
    let sign = if stroops < 0 { "-" } else { "" };
    let v = stroops.unsigned_abs();
    format!("{sign}{}.{:07}", v / 10_000_000, v % 10_000_000)
}

fn code_text(source: &'static str, code: &[u8]) -> Result<String, ParseError> {
    let code: Vec<u8> = code.iter().copied().take_while(|b| *b != 0).collect();
    String::from_utf8(code).map_err(|_| ParseError::new(source, "an asset code is not text"))
}

/// A trustline entry (`getLedgerEntries`' `xdr` for a trustline key) as Horizon's `balances[]` gives it.
pub fn parse_trustline_entry(xdr: &str) -> Result<HeldTrustline, ParseError> {
    const SRC: &str = "stellar-rpc trustline entry";
    let LedgerEntryData::Trustline(line) = entry_data(SRC, xdr)? else {
        return Err(ParseError::new(SRC, "the entry is not a trustline"));
    };
    held_trustline(SRC, &line)
}

fn held_trustline(
    source: &'static str,
    line: &TrustLineEntry,
) -> Result<HeldTrustline, ParseError> {
    let (code, issuer) = match &line.asset {
        TrustLineAsset::CreditAlphanum4(a) => (code_text(source, &a.asset_code.0)?, &a.issuer),
        TrustLineAsset::CreditAlphanum12(a) => (code_text(source, &a.asset_code.0)?, &a.issuer),
        _ => {
            return Err(ParseError::new(
                source,
                "the trustline is not to a classic asset",
            ))
        }
    };
    let asset =
        Asset::new(&code, &address(issuer)).map_err(|e| ParseError::new(source, e.to_string()))?;
    Ok(HeldTrustline {
        asset,
        balance: amount(line.balance),
        authorized: line.flags & TRUSTLINE_AUTHORIZED != 0,
        authorized_to_maintain_liabilities: line.flags & TRUSTLINE_MAINTAIN_LIABILITIES != 0,
        clawback_enabled: line.flags & TRUSTLINE_CLAWBACK_ENABLED != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use stellar_xdr::{
        AccountEntryExt, SequenceNumber, Signer, String32, Thresholds, TrustLineEntryExt,
    };

    const ISSUER: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
    const HOLDER: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";

    fn entry(data: LedgerEntryData) -> String {
        data.to_xdr_base64(Limits::none()).unwrap()
    }

    fn account(flags: u32, home_domain: &[u8], signers: Vec<Signer>) -> LedgerEntryData {
        LedgerEntryData::Account(AccountEntry {
            account_id: account_id("test", ISSUER).unwrap(),
            balance: 10_000_000,
            seq_num: SequenceNumber(1),
            num_sub_entries: 0,
            inflation_dest: None,
            flags,
            home_domain: String32::try_from(home_domain.to_vec()).unwrap(),
            thresholds: Thresholds([1, 0, 2, 3]),
            signers: signers.try_into().unwrap(),
            ext: AccountEntryExt::V0,
        })
    }

    #[test]
    fn an_account_entry_reads_as_horizon_records_it() {
        let other = account_id("test", HOLDER).unwrap();
        let AccountId(PublicKey::PublicKeyTypeEd25519(other)) = other;
        let record = parse_account_entry(&entry(account(
            AUTH_REVOCABLE | AUTH_CLAWBACK_ENABLED,
            b"centre.io",
            vec![Signer {
                key: SignerKey::Ed25519(other),
                weight: 5,
            }],
        )))
        .unwrap();
        assert_eq!(record.account_id, ISSUER);
        assert_eq!(record.home_domain.as_deref(), Some("centre.io"));
        assert_eq!(
            record.flags,
            IssuerFlags {
                auth_revocable: true,
                auth_clawback_enabled: true,
                ..IssuerFlags::default()
            }
        );
        let control = record.control.unwrap();
        assert_eq!((control.low, control.medium, control.high), (0, 2, 3));
        let keys: Vec<(&str, u32)> = control
            .signers
            .iter()
            .map(|s| (s.key.as_str(), s.weight))
            .collect();
        assert_eq!(keys, vec![(ISSUER, 1), (HOLDER, 5)]);
        assert!(control
            .signers
            .iter()
            .all(|s| s.kind == "ed25519_public_key"));

        let bare = parse_account_entry(&entry(account(0, b"", vec![]))).unwrap();
        assert_eq!(bare.home_domain, None);
        assert_eq!(bare.flags, IssuerFlags::default());
    }

    #[test]
    fn a_trustline_entry_reads_as_a_horizon_balance() {
        let asset = Asset::new("USDC", ISSUER).unwrap();
        let line = LedgerEntryData::Trustline(TrustLineEntry {
            account_id: account_id("test", HOLDER).unwrap(),
            asset: TrustLineAsset::CreditAlphanum4(AlphaNum4 {
                asset_code: AssetCode4(*b"USDC"),
                issuer: account_id("test", ISSUER).unwrap(),
            }),
            balance: 12_345_678,
            limit: i64::MAX,
            flags: TRUSTLINE_MAINTAIN_LIABILITIES | TRUSTLINE_CLAWBACK_ENABLED,
            ext: TrustLineEntryExt::V0,
        });
        let held = parse_trustline_entry(&entry(line)).unwrap();
        assert_eq!(
            held,
            HeldTrustline {
                asset,
                balance: "1.2345678".into(),
                authorized: false,
                authorized_to_maintain_liabilities: true,
                clawback_enabled: true,
            }
        );
        let not_a_line = parse_trustline_entry(&entry(account(0, b"", vec![]))).unwrap_err();
        assert!(
            not_a_line.message.contains("not a trustline"),
            "{not_a_line}"
        );
    }

    #[test]
    fn keys_are_the_ledger_keys_stellar_rpc_answers_by() {
        let asset = Asset::new("LONGERCODE12", ISSUER).unwrap();
        let key = trustline_key(HOLDER, &asset).unwrap();
        let LedgerKey::Trustline(k) = LedgerKey::from_xdr_base64(&key, Limits::none()).unwrap()
        else {
            panic!("not a trustline key");
        };
        assert!(matches!(k.asset, TrustLineAsset::CreditAlphanum12(_)));
        assert_eq!(address(&k.account_id), HOLDER);
        assert!(account_key("GNOTANACCOUNT").is_err());
    }

    #[test]
    fn answers_without_their_fields_are_defective_never_empty() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"entries":[{"key":"K","xdr":"X","lastModifiedLedgerSeq":3}],"latestLedger":9}}"#;
        let read = parse_ledger_entries(ok).unwrap();
        assert_eq!(read.latest_ledger, 9);
        assert_eq!(read.entries.get("K").map(String::as_str), Some("X"));
        let none = br#"{"jsonrpc":"2.0","id":1,"result":{"latestLedger":9}}"#;
        assert!(parse_ledger_entries(none).unwrap().entries.is_empty());
        for bad in [
            &br#"{"jsonrpc":"2.0","id":1,"result":{"entries":[]}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"result":{"entries":[{"key":"K"}],"latestLedger":9}}"#,
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"too many keys"}}"#,
            br#"<html>"#,
        ] {
            assert!(parse_ledger_entries(bad).is_err());
        }
        let refused = parse_ledger_entries(
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"too many keys"}}"#,
        )
        .unwrap_err();
        assert!(refused.message.contains("too many keys (code -32602)"));
        assert_eq!(
            parse_rpc_network(br#"{"jsonrpc":"2.0","id":1,"result":{"passphrase":"P ; 1"}}"#)
                .unwrap(),
            "P ; 1"
        );
        assert!(parse_account_entry("!!!").is_err());
    }
}
