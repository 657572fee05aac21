//! Files the operator's programs read and write whole (evidence bundles, fork caches): read with a size cap,
//! so a hostile or mistaken file is refused by its size before it is parsed; written atomically, through a
//! fresh randomly named file in the target's own directory that is created exclusively (so a link planted
//! at a predictable name is never followed) and then renamed over the target.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rand_core::RngCore;

/// The largest fork cache (a `stellar snapshot` JSON file) read back, 64 MiB: a fork of one token's run
/// reads a few hundred entries, its code included, in well under a megabyte.
pub const MAX_FORK_CACHE_BYTES: u64 = 64 << 20;

/// A fork cache read back as JSON, or `None` when it is absent, over [`MAX_FORK_CACHE_BYTES`] or not JSON.
pub fn read_fork_cache(path: &Path) -> Option<serde_json::Value> {
    read_capped(path, MAX_FORK_CACHE_BYTES, "fork caches")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
}

/// Why a capped read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than the cap.
    #[error("{path} is larger than {cap} bytes ({what} are at most that); refused unread")]
    TooLarge {
        path: String,
        cap: u64,
        what: &'static str,
    },
    /// The file is not UTF-8 text.
    #[error("{path} is not UTF-8 text")]
    NotText { path: String },
}

/// Reads `path` as text, refusing a file over `cap` bytes (`what` names such files in the message) before
/// reading more than `cap + 1` bytes of it.
///
/// # Errors
/// [`ReadError`], naming the file.
pub fn read_capped(path: &Path, cap: u64, what: &'static str) -> Result<String, ReadError> {
    let bytes = read_capped_bytes(path, cap, what)?;
    String::from_utf8(bytes).map_err(|_| ReadError::NotText {
        path: path.display().to_string(),
    })
}

/// [`read_capped`] for a file that need not be text (a contract's WASM).
///
/// # Errors
/// [`ReadError::Io`] or [`ReadError::TooLarge`], naming the file.
pub fn read_capped_bytes(path: &Path, cap: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let shown = || path.display().to_string();
    let io = |source| ReadError::Io {
        path: shown(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let too_large = || ReadError::TooLarge {
        path: shown(),
        cap,
        what,
    };
    if file.metadata().map_err(io)?.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Writes `bytes` to `path` atomically: a new file in `path`'s directory, created exclusively under a random
/// name (never an existing file or link), synced, then renamed over `path` (which replaces a link at `path`
/// rather than writing through it). Nothing half-written is left on failure.
///
/// # Errors
/// The I/O error, after the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut suffix = [0u8; 8];
    rand_core::OsRng.fill_bytes(&mut suffix);
    let tmp = dir.join(format!(".{name}.{}.partial", hex::encode(suffix)));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_cap_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let file = std::fs::File::create(&path).unwrap();
        // Sparse: a terabyte-sized file costs nothing, and must not be read.
        file.set_len(1 << 40).unwrap();
        let err = read_capped(&path, 1024, "test files").unwrap_err();
        assert!(
            matches!(err, ReadError::TooLarge { cap: 1024, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("big.json"), "{err}");
        std::fs::write(&path, "x".repeat(1024)).unwrap();
        assert_eq!(read_capped(&path, 1024, "test files").unwrap().len(), 1024);
    }

    #[cfg(unix)]
    #[test]
    fn an_atomic_write_never_follows_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.path().join("cache.json");
        // The names an attacker can predict: the old `.partial` and the target itself, both linked.
        std::os::unix::fs::symlink(&victim, dir.path().join("cache.partial")).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".partial") && n != "cache.partial")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
