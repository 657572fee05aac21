//! Ledger facts through the network's stellar-rpc: the issuer account entry (flags, home domain, signers,
//! thresholds) and a holder's trustlines, read with batched `getLedgerEntries` under the same fetch policy,
//! host gates and scan deadline as every other source. Each fact becomes the value Horizon's record of it
//! gives, cited at that record's Horizon address, so the evidence (and its hash) is the same whichever
//! source carried it.
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use assay_core::parse::{self, urls, LedgerEntries};
use assay_core::{
    Asset, ControlOutcome, FailureCategory, HeldTrustline, IssuerFlags, Observed, Timestamp,
};
use tokio::time::Instant;

use super::{scan_deadline, to_failure, AccountAnswer, ScanError, Scanner};
use crate::retry;

/// Why a ledger read produced no answer (shown in a [`ScanError::Rpc`]).
fn rpc_error(url: &str, failure: String) -> ScanError {
    ScanError::Rpc {
        url: url.to_string(),
        failure,
    }
}

impl Scanner {
    /// One JSON-RPC call to the configured stellar-rpc through its host's gate, within the scan's deadline.
    /// A non-200 status is a failure, retried (as a 5xx or 429 is) up to [`retry::ATTEMPTS`] in budget.
    async fn rpc_call(
        &self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<Vec<u8>, ScanError> {
        let url = self.config.rpc_url.as_deref().unwrap_or_default();
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
                .to_string()
                .into_bytes();
        let mut attempt = 0;
        loop {
            let (failure, server_asked, retryable) = match self.post(url, body.clone()).await {
                Ok(f) if f.status == 200 => return Ok(f.body),
                Ok(f) => (
                    format!("{method}: {}", FailureCategory::Status(f.status)),
                    retry::retry_after(&f.headers),
                    retry::retryable_status(f.status),
                ),
                Err(err) => (
                    format!("{method}: {}", to_failure(&err).describe()),
                    None,
                    !super::is_out_of_budget(&err)
                        && !matches!(err.kind, crate::net::FailureKind::Refused(_)),
                ),
            };
            attempt += 1;
            let wait = retry::backoff(attempt - 1, server_asked);
            let in_budget = scan_deadline().is_none_or(|d| Instant::now() + wait < d);
            if !retryable || attempt >= retry::ATTEMPTS || !in_budget {
                return Err(rpc_error(url, failure));
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// Reads stellar-rpc's `getNetwork` once per run and refuses an endpoint that serves another network:
    /// its entries would be another ledger's, bound into evidence as if observed on the asset's network.
    pub(super) async fn check_rpc_network(&self) -> Result<(), ScanError> {
        let url = self.config.rpc_url.clone().unwrap_or_default();
        let body = self.rpc_call("getNetwork", serde_json::json!({})).await?;
        let served = parse::parse_rpc_network(&body)
            .map_err(|err| rpc_error(&url, err.to_failure().describe()))?;
        if served != self.config.network_passphrase {
            return Err(ScanError::RpcWrongNetwork {
                url,
                served,
                expected: self.config.network_passphrase.clone(),
            });
        }
        Ok(())
    }

    /// The entries for `keys` (base64 `LedgerKey`s), in batches of at most
    /// [`parse::MAX_KEYS_PER_CALL`], and the lowest ledger a batch was served at. Every batch must be
    /// served at or after the run's ledger floor ([`crate::ScanConfig::ledger_floor`]): an endpoint behind
    /// it is asked again within the budget, and is a failure when it stays behind.
    pub(crate) async fn ledger_entries(&self, keys: &[String]) -> Result<LedgerEntries, ScanError> {
        self.rpc_network
            .get_or_fetch(&(), || self.check_rpc_network())
            .await?;
        let url = self.config.rpc_url.clone().unwrap_or_default();
        let floor = self.config.ledger_floor.load(Ordering::Acquire);
        let mut read = LedgerEntries {
            latest_ledger: u32::MAX,
            entries: BTreeMap::new(),
        };
        for batch in keys.chunks(parse::MAX_KEYS_PER_CALL) {
            let mut attempt = 0;
            let answer = loop {
                let body = self
                    .rpc_call("getLedgerEntries", serde_json::json!({ "keys": batch }))
                    .await?;
                let answer = parse::parse_ledger_entries(&body)
                    .map_err(|err| rpc_error(&url, err.to_failure().describe()))?;
                if answer.latest_ledger >= floor {
                    break answer;
                }
                attempt += 1;
                let wait = retry::backoff(attempt - 1, None);
                let in_budget = scan_deadline().is_none_or(|d| Instant::now() + wait < d);
                if attempt >= retry::ATTEMPTS || !in_budget {
                    return Err(rpc_error(
                        &url,
                        format!(
                            "getLedgerEntries: served ledger {} is behind ledger {floor}, which this run has \
                             already seen; a fact read there could be older than the change being checked",
                            answer.latest_ledger
                        ),
                    ));
                }
                tokio::time::sleep(wait).await;
            };
            read.latest_ledger = read.latest_ledger.min(answer.latest_ledger);
            read.entries.extend(answer.entries);
        }
        if read.latest_ledger == u32::MAX {
            read.latest_ledger = floor;
        }
        Ok(read)
    }

    /// The account entry of `account` read through stellar-rpc, as the Horizon `/accounts` record it stands
    /// for (cited at that record's address on the configured Horizon).
    pub(super) async fn rpc_account(&self, account: &str) -> AccountAnswer {
        let rpc_url = self.config.rpc_url.clone().unwrap_or_default();
        let cited = urls::horizon_account(&self.config.horizon_url, account);
        let key = match parse::account_key(account) {
            Ok(key) => key,
            Err(err) => return AccountAnswer::Error(rpc_error(&rpc_url, err.to_string())),
        };
        let read = match self.ledger_entries(std::slice::from_ref(&key)).await {
            Ok(read) => read,
            Err(err) => return AccountAnswer::Error(err),
        };
        let retrieved_at = Timestamp::now();
        let Some(xdr) = read.entries.get(&key) else {
            return AccountAnswer::Error(ScanError::UnknownIssuer {
                url: format!(
                    "{} (getLedgerEntries, ledger {})",
                    rpc_url, read.latest_ledger
                ),
            });
        };
        match parse::parse_account_entry(xdr) {
            Ok(record) => AccountAnswer::Read {
                flags: Observed {
                    url: cited.clone(),
                    retrieved_at,
                    value: record.flags,
                },
                home_domain: record.home_domain,
                control: ControlOutcome::of_record(&cited, retrieved_at, record.control),
                ledger: Some(read.latest_ledger),
            },
            Err(err) => AccountAnswer::Error(rpc_error(&rpc_url, err.to_failure().describe())),
        }
    }

    /// `holder`'s trustlines to `assets`, read through stellar-rpc with the holder's account entry (an
    /// account that does not exist is an error, never "no trustlines"); a trustline entry that does not
    /// exist is the ledger's answer that the holder holds none to that asset.
    pub(super) async fn rpc_holder_trustlines(
        &self,
        holder: &str,
        assets: &[Asset],
    ) -> Result<(String, Timestamp, Vec<HeldTrustline>), ScanError> {
        let rpc_url = self.config.rpc_url.clone().unwrap_or_default();
        let cited = urls::horizon_account(&self.config.horizon_url, holder);
        let bad_key = |err: parse::ParseError| rpc_error(&rpc_url, err.to_string());
        let account = parse::account_key(holder).map_err(bad_key)?;
        let mut keys = vec![account.clone()];
        for asset in assets {
            keys.push(parse::trustline_key(holder, asset).map_err(bad_key)?);
        }
        let read = self.ledger_entries(&keys).await?;
        if !read.entries.contains_key(&account) {
            return Err(ScanError::UnknownAccount {
                url: format!(
                    "{rpc_url} (getLedgerEntries, ledger {})",
                    read.latest_ledger
                ),
            });
        }
        let mut lines = Vec::new();
        for key in &keys[1..] {
            if let Some(xdr) = read.entries.get(key) {
                lines.push(
                    parse::parse_trustline_entry(xdr)
                        .map_err(|err| rpc_error(&rpc_url, err.to_failure().describe()))?,
                );
            }
        }
        Ok((cited, Timestamp::now(), lines))
    }

    /// Horizon's `/assets` record of `asset`, the second copy of the flags beside the ledger entry: its
    /// flags, or why it was not read. Only a Horizon that serves another network is an error; one that does
    /// not answer, or has no record, is a copy not read, which is not an observation.
    pub(super) async fn horizon_asset_copy(
        &self,
        asset: &Asset,
    ) -> Result<Result<Observed<IssuerFlags>, CopyUnread>, ScanError> {
        match self
            .horizon_network
            .get_or_fetch(&(), || self.check_horizon_network())
            .await
        {
            Err(err @ ScanError::WrongNetwork { .. }) => return Err(err),
            Err(err) => return Ok(Err(CopyUnread::NoAnswer(err))),
            Ok(()) => {}
        }
        let url = urls::horizon_assets(&self.config.horizon_url, asset);
        let fetched = match self.get(&url, super::API).await {
            Ok(f) if f.status == 200 => f,
            Ok(f) => return Ok(Err(CopyUnread::Status(FailureCategory::Status(f.status)))),
            Err(err) => return Ok(Err(CopyUnread::Fetch(to_failure(&err).describe()))),
        };
        Ok(match parse::parse_horizon_assets(&fetched.body, asset) {
            Ok(Some(record)) => Ok(Observed {
                url,
                retrieved_at: Timestamp::from_system_time(fetched.retrieved_at),
                value: record.flags,
            }),
            Ok(None) => Err(CopyUnread::NoRecord),
            // A defective answer is a failure wherever it appears, never a copy quietly left out.
            Err(err) => {
                return Err(ScanError::Horizon {
                    url,
                    failure: err.to_failure().describe(),
                })
            }
        })
    }
}

/// Why Horizon's `/assets` record, the second copy of the flags beside the ledger entry, was not read: not
/// an observation, so the ledger's copy stands alone.
#[derive(Debug, thiserror::Error)]
pub(super) enum CopyUnread {
    /// Horizon's root did not answer.
    #[error("Horizon did not answer: {0}")]
    NoAnswer(ScanError),
    /// It answered a status that is not the record.
    #[error("Horizon answered {0}")]
    Status(FailureCategory),
    /// The fetch failed (described as the failure category says).
    #[error("Horizon: {0}")]
    Fetch(String),
    /// It has no record of the asset.
    #[error("Horizon has no asset record for it")]
    NoRecord,
}
