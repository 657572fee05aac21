//! The URLs each source is read from. Evidence carries these exact strings, and they are hashed, so the scan
//! builds them here rather than by its own formatting.

use crate::subject::Asset;

fn trim(base: &str) -> &str {
    base.trim_end_matches('/')
}

/// `{horizon}/`: the root document, which names the network Horizon serves.
pub fn horizon_root(horizon: &str) -> String {
    format!("{}/", trim(horizon))
}

/// `{horizon}/assets?asset_code=CODE&asset_issuer=ISSUER`.
pub fn horizon_assets(horizon: &str, asset: &Asset) -> String {
    format!(
        "{}/assets?asset_code={}&asset_issuer={}",
        trim(horizon),
        asset.code,
        asset.issuer
    )
}

/// `{horizon}/assets?asset_issuer=ISSUER&limit=200[&cursor=CURSOR]`: a page of every asset `issuer` issued.
pub fn horizon_issuer_assets(horizon: &str, issuer: &str, cursor: Option<&str>) -> String {
    let mut url = format!(
        "{}/assets?asset_issuer={issuer}&limit={ISSUER_ASSETS_PAGE}",
        trim(horizon)
    );
    if let Some(cursor) = cursor {
        url.push_str("&cursor=");
        url.push_str(cursor);
    }
    url
}

/// Records per page of [`horizon_issuer_assets`] (Horizon's largest page).
pub const ISSUER_ASSETS_PAGE: usize = 200;

/// `{horizon}/accounts/ACCOUNT`.
pub fn horizon_account(horizon: &str, account: &str) -> String {
    format!("{}/accounts/{account}", trim(horizon))
}

/// `{stellar_expert}/explorer/directory/ADDRESS`.
pub fn directory(stellar_expert: &str, address: &str) -> String {
    format!("{}/explorer/directory/{address}", trim(stellar_expert))
}

/// `{stellar_expert}/explorer/directory/blocked-domains/DOMAIN`.
pub fn blocked_domain(stellar_expert: &str, domain: &str) -> String {
    format!(
        "{}/explorer/directory/blocked-domains/{domain}",
        trim(stellar_expert)
    )
}

/// `https://DOMAIN/.well-known/stellar.toml` (HTTPS only; SEP-1).
pub fn stellar_toml(domain: &str) -> String {
    format!("https://{domain}/.well-known/stellar.toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let a = Asset::new(
            "USDC",
            "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
        )
        .unwrap();
        assert_eq!(
            horizon_assets("https://horizon.stellar.org/", &a),
            "https://horizon.stellar.org/assets?asset_code=USDC&asset_issuer=GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN"
        );
        assert_eq!(
            blocked_domain("https://api.stellar.expert", "circle.com"),
            "https://api.stellar.expert/explorer/directory/blocked-domains/circle.com"
        );
        assert_eq!(
            stellar_toml("circle.com"),
            "https://circle.com/.well-known/stellar.toml"
        );
    }
}
