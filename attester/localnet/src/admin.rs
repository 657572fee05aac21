//! The admin API: direct ledger writes where no classic operation is supported, as methods of
//! [`LocalNet`] and as `POST /admin/ledger-entry`.

use std::sync::Arc;

use serde_json::json;
use soroban_env_host::xdr::{
    self, AccountId, Asset, LedgerEntry, LedgerEntryData, LedgerKey, TrustLineAsset,
    TrustLineEntry, TrustLineEntryExt,
};

use crate::error::LocalNetError;
use crate::node::Shared;
use crate::{classic, host, http, state, xdrutil, LocalNet};

impl LocalNet {
    /// Writes (creates or replaces) a ledger entry. `live_until` is required for contract data
    /// and code (the last ledger the entry is live in) and must be `None` for classic entries.
    pub fn admin_put_entry(
        &self,
        entry: LedgerEntry,
        live_until: Option<u32>,
    ) -> Result<(), LocalNetError> {
        put(&self.shared, entry, live_until)
    }

    /// Removes a ledger entry; returns whether it existed. In fork mode the key then reads as
    /// absent; it never falls through to the upstream again.
    pub fn admin_remove_entry(&self, key: &LedgerKey) -> bool {
        let mut l = self.shared.lock();
        l.faulted.insert(key.clone());
        l.entries.remove(key).is_some()
    }

    /// Reads an entry and its live-until ledger, archived or not (in fork mode, the upstream's
    /// when this network has never held it; `None` also when the upstream cannot be reached).
    pub fn ledger_entry(&self, key: &LedgerKey) -> Option<(LedgerEntry, Option<u32>)> {
        crate::fork::fault_in(&self.shared, vec![key.clone()]).ok()?;
        let l = self.shared.lock();
        l.entries.get(key).map(|s| (s.entry.clone(), s.live_until))
    }

    /// Sets the live-until ledger of a contract data or code entry (e.g. to archive it in a test).
    pub fn admin_set_live_until(
        &self,
        key: &LedgerKey,
        live_until: u32,
    ) -> Result<(), LocalNetError> {
        let (entry, old) = self
            .ledger_entry(key)
            .ok_or_else(|| LocalNetError::InvalidEntry("no such entry".into()))?;
        if old.is_none() {
            return Err(LocalNetError::InvalidEntry(
                "only contract data and code entries have a TTL".into(),
            ));
        }
        self.admin_put_entry(entry, Some(live_until))
    }

    /// Sets an account's flags (`AUTH_REQUIRED` 1, `AUTH_REVOCABLE` 2, `AUTH_IMMUTABLE` 4,
    /// `AUTH_CLAWBACK_ENABLED` 8) without a transaction.
    pub fn admin_set_account_flags(
        &self,
        account: &AccountId,
        flags: u32,
    ) -> Result<(), LocalNetError> {
        self.admin_update_account(account, |a| a.flags = flags)
    }

    /// Sets an account's thresholds without a transaction: `[master weight, low, medium, high]`, as the
    /// account entry keeps them (a master weight of 0 with no other signer locks the account for good).
    pub fn admin_set_thresholds(
        &self,
        account: &AccountId,
        thresholds: [u8; 4],
    ) -> Result<(), LocalNetError> {
        self.admin_update_account(account, |a| a.thresholds = xdr::Thresholds(thresholds))
    }

    /// Sets an account's home domain without a transaction.
    pub fn admin_set_home_domain(
        &self,
        account: &AccountId,
        domain: &str,
    ) -> Result<(), LocalNetError> {
        let hd =
            domain.as_bytes().to_vec().try_into().map_err(|_| {
                LocalNetError::InvalidEntry("home domain longer than 32 bytes".into())
            })?;
        self.admin_update_account(account, |a| a.home_domain = hd)
    }

    /// Sets an account's native balance (stroops) without a transaction.
    pub fn admin_set_native_balance(
        &self,
        account: &AccountId,
        stroops: i64,
    ) -> Result<(), LocalNetError> {
        self.admin_update_account(account, |a| a.balance = stroops)
    }

    fn admin_update_account(
        &self,
        account: &AccountId,
        f: impl FnOnce(&mut xdr::AccountEntry),
    ) -> Result<(), LocalNetError> {
        let key = classic::account_key(account);
        let (mut entry, _) = self.ledger_entry(&key).ok_or_else(|| {
            LocalNetError::InvalidEntry(format!(
                "account {} does not exist; fund it first",
                xdrutil::g_address(account)
            ))
        })?;
        if let LedgerEntryData::Account(a) = &mut entry.data {
            f(a);
        }
        self.admin_put_entry(entry, None)
    }

    /// Creates or replaces a trustline with the given balance, limit and flags (`AUTHORIZED` 1,
    /// `AUTHORIZED_TO_MAINTAIN_LIABILITIES` 2, `TRUSTLINE_CLAWBACK_ENABLED` 4); counts a new
    /// line as a subentry of the account.
    pub fn admin_set_trustline(
        &self,
        account: &AccountId,
        asset: &Asset,
        balance: i64,
        limit: i64,
        flags: u32,
    ) -> Result<(), LocalNetError> {
        let tl_asset: TrustLineAsset = classic::trustline_asset(asset)
            .ok_or_else(|| LocalNetError::InvalidEntry("native XLM has no trustline".into()))?;
        let key = classic::trustline_key(account, &tl_asset);
        let is_new = self.ledger_entry(&key).is_none();
        if is_new {
            self.admin_update_account(account, |a| a.num_sub_entries += 1)?;
        }
        self.admin_put_entry(
            LedgerEntry {
                last_modified_ledger_seq: 0,
                data: LedgerEntryData::Trustline(TrustLineEntry {
                    account_id: account.clone(),
                    asset: tl_asset,
                    balance,
                    limit,
                    flags,
                    ext: TrustLineEntryExt::V0,
                }),
                ext: xdr::LedgerEntryExt::V0,
            },
            None,
        )
    }
}

fn put(shared: &Shared, entry: LedgerEntry, live_until: Option<u32>) -> Result<(), LocalNetError> {
    let key = state::key_of(&entry)
        .ok_or_else(|| LocalNetError::InvalidEntry("unsupported ledger entry type".into()))?;
    if state::durability(&key).is_some() != live_until.is_some() {
        return Err(LocalNetError::InvalidEntry(
            "contract data and code entries need a live-until ledger; classic entries take none"
                .into(),
        ));
    }
    let mut l = shared.lock();
    let seq = l.latest_seq();
    if let LedgerEntryData::ContractCode(c) = &entry.data {
        host::add_to_module_cache(&l.module_cache, c).map_err(LocalNetError::InvalidCode)?;
    }
    let mut ov = state::Overlay::default();
    ov.put(key, entry, live_until);
    ov.commit(&mut l.entries, seq);
    Ok(())
}

/// `POST /admin/ledger-entry` with `{"xdr": "<base64 LedgerEntry>", "liveUntilLedgerSeq": n?}`.
pub(crate) fn route(shared: &Arc<Shared>, body: &[u8]) -> http::Response {
    let bad = |m: String| http::Response::json(400, &json!({"error": m}));
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return bad(
            "body must be JSON: {\"xdr\": \"<base64 LedgerEntry>\", \"liveUntilLedgerSeq\": n}"
                .into(),
        );
    };
    let Some(x) = v.get("xdr").and_then(|x| x.as_str()) else {
        return bad("missing 'xdr': a base64 LedgerEntry".into());
    };
    let entry: LedgerEntry = match xdrutil::from_b64(x) {
        Ok(e) => e,
        Err(e) => return bad(e.to_string()),
    };
    let live = v
        .get("liveUntilLedgerSeq")
        .and_then(|x| x.as_u64())
        .map(|x| x as u32);
    match put(shared, entry, live) {
        Ok(()) => http::Response::json(
            200,
            &json!({"ok": true, "latestLedger": shared.lock().latest_seq()}),
        ),
        Err(e) => bad(e.to_string()),
    }
}
