//! Signing keys that never print.
//!
//! Secrets come from environment variables or stellar-cli identity files
//! (`~/.config/stellar/identity/NAME.toml` with `secret_key = "S…"`), never from argv.
use std::{fmt, path::PathBuf};

use ed25519_dalek::{Signer, SigningKey};
use stellar_xdr::{AccountId, ScAddress};

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("{0} is not a valid Stellar secret key (expected S… strkey, 56 characters)")]
    Malformed(String),
    #[error("cannot read stellar identity `{name}` at {path}: {reason}")]
    Identity {
        name: String,
        path: String,
        reason: String,
    },
    #[error("identity name `{0}` may only contain letters, digits, `-` and `_`")]
    BadIdentityName(String),
}

/// An ed25519 signing key. Its `Debug` and `Display` show the public key only.
#[derive(Clone)]
pub struct Secret(SigningKey);

impl Secret {
    /// Parses an `S…` strkey; `origin` names where it came from (an env var, a file) for errors.
    pub fn from_strkey(text: &str, origin: &str) -> Result<Self, SecretError> {
        match stellar_strkey::ed25519::PrivateKey::from_string(text.trim()) {
            Ok(key) => Ok(Secret(SigningKey::from_bytes(&key.0))),
            Err(_) => Err(SecretError::Malformed(origin.to_string())),
        }
    }

    /// From raw seed bytes (a generated key, a local network's root).
    pub fn from_bytes(seed: [u8; 32]) -> Self {
        Secret(SigningKey::from_bytes(&seed))
    }

    /// A fresh random key.
    pub fn generate() -> Self {
        Secret(SigningKey::generate(&mut rand_core::OsRng))
    }

    /// Reads env var `var`; `Ok(None)` when it is unset or empty.
    pub fn from_env(var: &str) -> Result<Option<Self>, SecretError> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Self::from_strkey(&v, var).map(Some),
            _ => Ok(None),
        }
    }

    /// Reads a stellar-cli identity: `$STELLAR_CONFIG_HOME/identity/NAME.toml`, else
    /// `~/.config/stellar/identity/NAME.toml`, with a `secret_key = "S…"` line.
    pub fn from_identity(name: &str) -> Result<Self, SecretError> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(SecretError::BadIdentityName(name.to_string()));
        }
        let path = identity_dir().join(format!("{name}.toml"));
        let fail = |reason: String| SecretError::Identity {
            name: name.to_string(),
            path: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("secret_key") {
                let value = rest.trim_start().trim_start_matches('=').trim();
                let value = value.trim_matches('"').trim_matches('\'');
                return Self::from_strkey(value, &format!("identity `{name}`"));
            }
            if line.starts_with("seed_phrase") {
                return Err(fail(
                    "seed-phrase identities are not supported; export the key with \
                     `stellar keys show NAME` into an env var instead"
                        .into(),
                ));
            }
        }
        Err(fail("no `secret_key = \"S…\"` line".into()))
    }

    /// The raw public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.0.verifying_key().to_bytes()
    }

    /// The G… address.
    pub fn address(&self) -> String {
        stellar_strkey::ed25519::PublicKey(self.public_key())
            .to_string()
            .as_str()
            .to_string()
    }

    pub fn account_id(&self) -> AccountId {
        crate::address::account_id(self.public_key())
    }

    pub fn sc_address(&self) -> ScAddress {
        ScAddress::Account(self.account_id())
    }

    /// Signs `message` (a transaction hash).
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({}, redacted)", self.address())
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "secret key for {} (redacted)", self.address())
    }
}

fn identity_dir() -> PathBuf {
    if let Ok(home) = std::env::var("STELLAR_CONFIG_HOME") {
        return PathBuf::from(home).join("identity");
    }
    let base = std::env::var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".config")
        });
    base.join("stellar").join("identity")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_show_the_secret() {
        let s = stellar_strkey::ed25519::PrivateKey([9; 32])
            .to_string()
            .as_str()
            .to_string();
        let secret = Secret::from_strkey(&s, "TEST").unwrap();
        for shown in [format!("{secret:?}"), format!("{secret}")] {
            assert!(!shown.contains(&s), "{shown}");
            assert!(shown.contains(&secret.address()));
        }
        let err = Secret::from_strkey("SBAD", "OWNER_SECRET")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("OWNER_SECRET") && !err.contains("SBAD"),
            "{err}"
        );
    }

    #[test]
    fn reads_a_stellar_cli_identity_file() {
        let dir = tempfile::tempdir().unwrap();
        let ids = dir.path().join("identity");
        std::fs::create_dir_all(&ids).unwrap();
        let s = stellar_strkey::ed25519::PrivateKey([3; 32])
            .to_string()
            .as_str()
            .to_string();
        std::fs::write(ids.join("alice.toml"), format!("secret_key = \"{s}\"\n")).unwrap();
        std::fs::write(ids.join("bob.toml"), "seed_phrase = \"a b c\"\n").unwrap();
        // Only this test sets STELLAR_CONFIG_HOME in this binary.
        std::env::set_var("STELLAR_CONFIG_HOME", dir.path());
        let alice = Secret::from_identity("alice").unwrap();
        assert_eq!(alice.public_key(), Secret::from_bytes([3; 32]).public_key());
        assert!(Secret::from_identity("bob")
            .unwrap_err()
            .to_string()
            .contains("seed-phrase"));
        assert!(matches!(
            Secret::from_identity("../etc"),
            Err(SecretError::BadIdentityName(_))
        ));
        assert!(matches!(
            Secret::from_identity("carol"),
            Err(SecretError::Identity { .. })
        ));
    }
}
