//! On-disk cache of StellarExpert answers, for the lifetime the source advertises (`max-age`).
//!
//! Only answers that were read are cached (a listing, "not listed", a blocklist answer); a failure
//! is never cached, so an outage cannot outlive itself. A hit returns the original `retrieved_at`, so
//! a report states a claim's true age rather than implying it was just checked. Entries are written
//! to a temporary file and renamed, so a crash never leaves a half-written entry.
use std::path::{Path, PathBuf};
use std::time::Duration;

use assay_core::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A cached answer.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CachedAnswer {
    pub url: String,
    pub body: Vec<u8>,
    /// Unix seconds when the source produced the answer.
    pub retrieved_at: i64,
    /// Unix seconds after which the entry is stale.
    pub expires_at: i64,
}

/// A cache directory.
#[derive(Clone, Debug)]
pub struct AnswerCache {
    dir: PathBuf,
}

/// `max-age` from a Cache-Control value; `None` when absent or when the source forbids storing.
pub fn max_age(cache_control: Option<&str>) -> Option<Duration> {
    let value = cache_control?.to_ascii_lowercase();
    let directives: Vec<&str> = value.split(',').map(str::trim).collect();
    if directives
        .iter()
        .any(|d| *d == "no-store" || *d == "no-cache")
    {
        return None;
    }
    directives
        .iter()
        .find_map(|d| d.strip_prefix("max-age="))
        .and_then(|v| v.trim_matches('"').parse::<u64>().ok())
        .filter(|secs| *secs > 0)
        .map(Duration::from_secs)
}

impl AnswerCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        AnswerCache { dir: dir.into() }
    }

    /// The default location: `$XDG_CACHE_HOME/assay/stellar-expert` or the platform cache directory.
    pub fn default_dir() -> Option<PathBuf> {
        dirs::cache_dir().map(|d| d.join("assay").join("stellar-expert"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, url: &str) -> PathBuf {
        self.dir.join(format!(
            "{}.json",
            hex::encode(Sha256::digest(url.as_bytes()))
        ))
    }

    /// A fresh entry for `url`, if any. Unreadable or stale entries are ignored.
    pub fn get(&self, url: &str) -> Option<CachedAnswer> {
        let bytes = std::fs::read(self.path(url)).ok()?;
        let entry: CachedAnswer = serde_json::from_slice(&bytes).ok()?;
        (entry.url == url && entry.expires_at > Timestamp::now().unix()).then_some(entry)
    }

    /// Stores an answer that was read; errors are ignored (a cache is an optimisation, never a source).
    pub fn put(&self, url: &str, body: &[u8], retrieved_at: i64, ttl: Duration) {
        let entry = CachedAnswer {
            url: url.to_string(),
            body: body.to_vec(),
            retrieved_at,
            expires_at: retrieved_at.saturating_add(ttl.as_secs() as i64),
        };
        let Ok(bytes) = serde_json::to_vec(&entry) else {
            return;
        };
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let path = self.path(url);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_max_age() {
        assert_eq!(max_age(Some("max-age=20")), Some(Duration::from_secs(20)));
        assert_eq!(
            max_age(Some("public, Max-Age=60")),
            Some(Duration::from_secs(60))
        );
        assert_eq!(max_age(Some("max-age=0")), None);
        assert_eq!(max_age(Some("no-store, max-age=20")), None);
        assert_eq!(max_age(None), None);
    }

    #[test]
    fn round_trips_and_expires() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::new(dir.path());
        let now = Timestamp::now().unix();
        cache.put("https://x/a", b"{}", now - 5, Duration::from_secs(20));
        let hit = cache.get("https://x/a").unwrap();
        assert_eq!(hit.retrieved_at, now - 5);
        assert_eq!(hit.body, b"{}");
        cache.put("https://x/b", b"{}", now - 30, Duration::from_secs(20));
        assert_eq!(cache.get("https://x/b"), None);
        assert_eq!(cache.get("https://x/c"), None);
    }
}
