//! Discovery for `assay watch`: the assets a SEP-42 asset list names, or every asset an issuer account
//! issued (Horizon's `/assets?asset_issuer=`). Fetched through the scanner, so each host's bound applies.

use assay_core::parse::{self, urls};
use assay_core::{redact, Asset};

use crate::scanner::{to_failure, API, LIST};
use crate::Scanner;

/// Why discovery gave no list: the source could not be read, or names more than is read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    /// The asset list or Horizon failed, or answered something that is not a list of assets.
    #[error("{source_name} {url}: {detail}")]
    Source {
        /// `asset list` or `horizon`.
        source_name: &'static str,
        /// The URL read, redacted.
        url: String,
        /// What went wrong.
        detail: String,
    },
    /// The issuer has more assets than discovery reads.
    #[error(
        "issuer {0} has more than {max} assets ({MAX_ISSUER_PAGES} pages of {page}): list the ones to watch instead",
        max = MAX_ISSUER_PAGES * urls::ISSUER_ASSETS_PAGE,
        page = urls::ISSUER_ASSETS_PAGE
    )]
    TooManyAssets(String),
}

/// The most pages of an issuer's assets read (200 each): an issuer with more is refused, not cut short.
pub const MAX_ISSUER_PAGES: usize = 50;

impl Scanner {
    /// The classic assets the SEP-42 list at `url` names, in list order. An unreadable list is an error
    /// (the caller keeps the set it had), never an empty list.
    pub async fn list_assets(&self, url: &str) -> Result<Vec<Asset>, DiscoveryError> {
        let failed = |detail: String| DiscoveryError::Source {
            source_name: "asset list",
            url: redact::url(url),
            detail,
        };
        let fetched = self
            .get(url, LIST)
            .await
            .map_err(|e| failed(to_failure(&e).describe()))?;
        if fetched.status != 200 {
            return Err(failed(format!("status {}", fetched.status)));
        }
        let list = parse::parse_asset_list(&fetched.body)
            .map_err(|e| failed(e.to_failure().describe()))?;
        list.entries
            .iter()
            .map(|e| {
                Asset::new(&e.code, &e.issuer)
                    .map_err(|err| failed(format!("entry {}-{}: {err}", e.code, e.issuer)))
            })
            .collect()
    }

    /// Every asset `issuer` issued, as Horizon lists them, page by page.
    pub async fn issuer_assets(&self, issuer: &str) -> Result<Vec<Asset>, DiscoveryError> {
        let horizon = self.config().horizon_url.clone();
        let mut assets = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_ISSUER_PAGES {
            let url = urls::horizon_issuer_assets(&horizon, issuer, cursor.as_deref());
            let failed = |detail: String| DiscoveryError::Source {
                source_name: "horizon",
                url: redact::url(&url),
                detail,
            };
            let fetched = self
                .get(&url, API)
                .await
                .map_err(|e| failed(to_failure(&e).describe()))?;
            if fetched.status != 200 {
                return Err(failed(format!("status {}", fetched.status)));
            }
            let (codes, next) = parse::parse_issuer_assets(&fetched.body, issuer)
                .map_err(|e| failed(e.to_failure().describe()))?;
            let full = codes.len() >= urls::ISSUER_ASSETS_PAGE;
            for code in codes {
                assets.push(
                    Asset::new(&code, issuer)
                        .map_err(|err| failed(format!("{code}-{issuer}: {err}")))?,
                );
            }
            match next {
                Some(next) if full => cursor = Some(next),
                _ => return Ok(assets),
            }
        }
        Err(DiscoveryError::TooManyAssets(issuer.to_string()))
    }
}
