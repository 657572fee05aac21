//! Discovery for `assay watch`: the assets a SEP-42 asset list names, or every asset an issuer account
//! issued (Horizon's `/assets?asset_issuer=`). Fetched through the scanner, so each host's bound applies.

use assay_core::parse::{self, urls};
use assay_core::{redact, Asset};

use crate::scanner::{to_failure, API, LIST};
use crate::Scanner;

/// The most pages of an issuer's assets read (200 each): an issuer with more is refused, not cut short.
pub const MAX_ISSUER_PAGES: usize = 50;

impl Scanner {
    /// The classic assets the SEP-42 list at `url` names, in list order. An unreadable list is an error
    /// (the caller keeps the set it had), never an empty list.
    pub async fn list_assets(&self, url: &str) -> Result<Vec<Asset>, String> {
        let shown = redact::url(url);
        let fetched = self
            .get(url, LIST)
            .await
            .map_err(|e| format!("asset list {shown}: {}", to_failure(&e).describe()))?;
        if fetched.status != 200 {
            return Err(format!("asset list {shown}: status {}", fetched.status));
        }
        let list = parse::parse_asset_list(&fetched.body)
            .map_err(|e| format!("asset list {shown}: {}", e.to_failure().describe()))?;
        list.entries
            .iter()
            .map(|e| {
                Asset::new(&e.code, &e.issuer).map_err(|err| {
                    format!("asset list {shown}: entry {}-{}: {err}", e.code, e.issuer)
                })
            })
            .collect()
    }

    /// Every asset `issuer` issued, as Horizon lists them, page by page.
    pub async fn issuer_assets(&self, issuer: &str) -> Result<Vec<Asset>, String> {
        let horizon = self.config().horizon_url.clone();
        let mut assets = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_ISSUER_PAGES {
            let url = urls::horizon_issuer_assets(&horizon, issuer, cursor.as_deref());
            let shown = redact::url(&url);
            let fetched = self
                .get(&url, API)
                .await
                .map_err(|e| format!("horizon {shown}: {}", to_failure(&e).describe()))?;
            if fetched.status != 200 {
                return Err(format!("horizon {shown}: status {}", fetched.status));
            }
            let (codes, next) = parse::parse_issuer_assets(&fetched.body, issuer)
                .map_err(|e| format!("horizon {shown}: {}", e.to_failure().describe()))?;
            let full = codes.len() >= urls::ISSUER_ASSETS_PAGE;
            for code in codes {
                assets.push(
                    Asset::new(&code, issuer)
                        .map_err(|err| format!("horizon {shown}: {code}-{issuer}: {err}"))?,
                );
            }
            match next {
                Some(next) if full => cursor = Some(next),
                _ => return Ok(assets),
            }
        }
        Err(format!(
            "issuer {issuer} has more than {} assets ({MAX_ISSUER_PAGES} pages of {}): list the ones to watch instead",
            MAX_ISSUER_PAGES * urls::ISSUER_ASSETS_PAGE,
            urls::ISSUER_ASSETS_PAGE
        ))
    }
}
