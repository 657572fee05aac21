//! Keeps key material and credentials out of every message: a secret key or seed phrase is never
//! shown, and a URL is shown without its userinfo, without the values of its query and without the path
//! segments that look like keys (where providers put API keys). The one secret detector of the workspace
//! ([`is_secret`]) lives here too. Pure text functions; callers apply them where a message leaves.

/// The query parameters shown as they are: the public asset identifiers the scan itself puts in
/// Horizon URLs. Every other parameter's value is replaced.
const PUBLIC_QUERY_KEYS: &[&str] = &["asset_code", "asset_issuer", "addr"];

/// What stands in for removed text.
pub const REDACTED: &str = "(redacted)";

/// True for an `S…` secret-key StrKey: 56 characters of the base32 alphabet starting with `S`.
pub fn is_secret_strkey(word: &str) -> bool {
    word.len() == 56
        && word.starts_with('S')
        && word.bytes().all(|b| matches!(b, b'A'..=b'Z' | b'2'..=b'7'))
}

/// True for text shaped like a BIP-39 seed phrase: 12 or more lowercase words.
pub fn is_seed_phrase(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.len() >= 12
        && words
            .iter()
            .all(|w| w.bytes().all(|b| b.is_ascii_lowercase()))
}

/// True when an argument or a configuration value is key material that must never be accepted
/// there: an `S…` secret key or a seed phrase.
pub fn is_secret(text: &str) -> bool {
    let t = text.trim();
    is_secret_strkey(t) || is_seed_phrase(t)
}

/// The shortest path segment that can be taken for a key: API keys run to 20 characters and more, the
/// words of a route (`soroban`, `rpc`, `well-known`, `v1`) stay well below.
const KEY_SEGMENT_MIN_LEN: usize = 20;

/// True for a public Stellar address (`G…` account, `C…` contract, `M…` muxed account), which routes name
/// and which is never a secret.
fn is_public_strkey(word: &str) -> bool {
    matches!(word.len(), 56 | 69)
        && word.starts_with(['G', 'C', 'M'])
        && word.bytes().all(|b| matches!(b, b'A'..=b'Z' | b'2'..=b'7'))
}

/// True for a URL path segment that looks like a key: 20 characters or more of a token alphabet, with
/// both letters and digits, and not a public address (an asset's `CODE-ISSUER` included).
fn is_key_segment(segment: &str) -> bool {
    if segment.len() < KEY_SEGMENT_MIN_LEN
        || !segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'%'))
        || !segment.bytes().any(|b| b.is_ascii_digit())
        || !segment.bytes().any(|b| b.is_ascii_alphabetic())
    {
        return false;
    }
    // An asset names its issuer last: `CODE-ISSUER`, `CODE:ISSUER`, `CODE%3AISSUER`.
    let issuer = |separator: &str| segment.rsplit(separator).next().unwrap_or(segment);
    ![
        segment,
        issuer("-"),
        issuer(":"),
        issuer("%3A"),
        issuer("%3a"),
    ]
    .into_iter()
    .any(is_public_strkey)
}

/// True when `url` carries something only its operator may see: userinfo (`user:password@`), a query
/// string, or a path segment that looks like a key. Such a URL is accepted from the environment or a
/// config file, never from the command line, and is only ever shown through [`url`].
pub fn url_is_private(url: &str) -> bool {
    let Some(scheme_end) = url.find("://") else {
        return false;
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let path = tail.split(['?', '#']).next().unwrap_or("");
    authority.contains('@') || tail.contains('?') || path.split('/').any(is_key_segment)
}

/// The URL's scheme, host and port only: how a report names an operator's endpoint (an RPC server) when
/// the rest of it is nobody else's business.
pub fn origin(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return "(unparseable URL)".to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() {
        return "(unparseable URL)".to_string();
    }
    format!("{scheme}{host}")
}

/// `url` without userinfo, with every query value but the public ones replaced, and with every path
/// segment that looks like a key replaced.
pub fn url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (path, query_and_fragment) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let path: Vec<&str> = path
        .split('/')
        .map(|segment| {
            if is_key_segment(segment) {
                REDACTED
            } else {
                segment
            }
        })
        .collect();
    let mut shown = format!("{scheme}{host}{}", path.join("/"));
    if let Some(qf) = query_and_fragment {
        let query = qf.split('#').next().unwrap_or("");
        let params: Vec<String> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((k, v)) if PUBLIC_QUERY_KEYS.contains(&k) && !is_secret(v) => p.to_string(),
                Some((k, _)) => format!("{k}={REDACTED}"),
                None => p.to_string(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&params.join("&"));
    }
    shown
}

/// `text` with every secret key replaced and every URL in it redacted as [`url`] does. A seed
/// phrase inside a longer text cannot be told from prose; [`is_secret`] refuses one at the door.
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, after) = rest.split_at(word_end);
        out.push_str(&word_redacted(word));
        let space_end = after
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(after.len());
        out.push_str(&after[..space_end]);
        rest = &after[space_end..];
    }
    out
}

/// One whitespace-free word: URLs redacted, secret keys (even glued to punctuation) replaced.
fn word_redacted(word: &str) -> String {
    let word = match word.find("://") {
        Some(at) => {
            // The URL starts at its scheme: the letters just before `://`.
            let start = word[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '.' || c == '-'))
                .map_or(0, |i| i + 1);
            let mut end = word[at..]
                .find(['"', '\'', '`', '<', '>', ')', ']', '}', ','])
                .map_or(word.len(), |i| at + i);
            // Sentence punctuation after a URL is not part of it.
            while end > at && word[..end].ends_with(['.', ':', ';']) {
                end -= 1;
            }
            format!(
                "{}{}{}",
                &word[..start],
                url(&word[start..end]),
                &word[end..]
            )
        }
        None => word.to_string(),
    };
    let mut out = String::with_capacity(word.len());
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if is_secret_strkey(token) {
            out.push_str("S…");
            out.push_str(REDACTED);
        } else {
            out.push_str(token);
        }
        token.clear();
    };
    for c in word.chars() {
        if c.is_ascii_alphanumeric() {
            token.push(c);
        } else {
            flush(&mut token, &mut out);
            out.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "SBK2VIYYSVG76E7VC3QHYARNFLY2EAQXDHRC7BMXBBGIFG74ARPRMNQM";

    #[test]
    fn item3_urls_lose_userinfo_and_query_values() {
        assert_eq!(
            url("https://user:pw@rpc.example:443/soroban?apikey=k1&x"),
            "https://rpc.example:443/soroban?apikey=(redacted)&x"
        );
        assert_eq!(
            url("https://h.example/assets?asset_code=USDC&asset_issuer=GA5Z&key=s3cret#frag"),
            "https://h.example/assets?asset_code=USDC&asset_issuer=GA5Z&key=(redacted)"
        );
        assert_eq!(url("https://h.example/a/b"), "https://h.example/a/b");
        assert_eq!(url("not a url"), "not a url");
    }

    #[test]
    fn path_segments_that_look_like_keys_are_hidden_but_addresses_kept() {
        let account = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
        assert_eq!(
            url("https://rpc.provider.example/v1/9f3b2c7d1e8a4b6c9d0e1f2a3b4c5d6e/soroban"),
            "https://rpc.provider.example/v1/(redacted)/soroban"
        );
        assert_eq!(
            url("https://mainnet.example/stellar/ak_7Hq2LmZp9XwR4tYvB3nK8sDf"),
            "https://mainnet.example/stellar/(redacted)"
        );
        // Routes with public addresses stay readable, as evidence and logs need them.
        for kept in [
            format!("https://horizon.stellar.org/accounts/{account}"),
            format!("https://h.example/assets/USDC-{account}"),
            format!("https://h.example/assets/USDC%3A{account}"),
            "https://home.example/.well-known/stellar.toml".to_string(),
            "https://api.stellar.expert/explorer/directory/blocked-domains/example.org".to_string(),
        ] {
            assert_eq!(url(&kept), kept);
            assert!(!url_is_private(&kept), "{kept}");
        }
        assert_eq!(
            text("rpc https://r.example/9f3b2c7d1e8a4b6c9d0e1f2a3b4c5d6e failed"),
            "rpc https://r.example/(redacted) failed"
        );
    }

    #[test]
    fn private_urls_are_told_apart_and_origins_shown() {
        assert!(url_is_private("https://u:pw@rpc.example/"));
        assert!(url_is_private("https://rpc.example/?apikey=1"));
        assert!(url_is_private(
            "https://rpc.example/9f3b2c7d1e8a4b6c9d0e1f2a3b4c5d6e"
        ));
        assert!(!url_is_private("https://soroban-testnet.stellar.org"));
        assert!(!url_is_private("http://127.0.0.1:8000/soroban/rpc"));
        assert_eq!(
            origin("https://u:pw@rpc.example:8443/v1/KEY?token=x"),
            "https://rpc.example:8443"
        );
        assert_eq!(origin("not a url"), "(unparseable URL)");
    }

    #[test]
    fn item3_text_hides_secrets_and_credentials() {
        let message = format!(
            "horizon: https://u:pw@h.example/assets?token=abc: refused `{SECRET}`, (also {SECRET})."
        );
        let shown = text(&message);
        assert!(!shown.contains(SECRET), "{shown}");
        assert!(!shown.contains("pw") && !shown.contains("abc"), "{shown}");
        assert!(
            shown.starts_with(
                "horizon: https://h.example/assets?token=(redacted): refused `S…(redacted)`"
            ),
            "{shown}"
        );
        assert_eq!(text("plain  words\nkept"), "plain  words\nkept");
    }

    #[test]
    fn secrets_are_recognised_but_addresses_and_hashes_are_not() {
        assert!(is_secret(SECRET));
        assert!(is_secret(&("abandon ".repeat(11) + "about")));
        assert!(!is_secret(
            "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN"
        ));
        assert!(!is_secret(&"11".repeat(32)));
        assert!(!is_secret(
            "USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN"
        ));
    }
}
