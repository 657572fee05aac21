//! Signing identities. A secret comes from `STELLAR_SECRET_KEY`, a file, or a stellar-cli identity file
//! (`~/.config/stellar/identity/NAME.toml`, `secret_key = "S…"`), never from argv, and is never printed:
//! [`Signer`]'s `Debug` shows only the public key.

use std::fmt;
use std::path::Path;

use ed25519_dalek::{Signer as _, SigningKey};
use serde::Deserialize;
use stellar_xdr::{AccountId, ScAddress};

/// The environment variable stellar-cli reads a secret key from.
pub const SECRET_ENV: &str = "STELLAR_SECRET_KEY";

/// An ed25519 signing key. Holds the secret; shows only the `G…` address.
#[derive(Clone)]
pub struct Signer {
    key: SigningKey,
}

impl fmt::Debug for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Signer({})", self.address())
    }
}

impl fmt::Display for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "secret key for {} (redacted)", self.address())
    }
}

impl Signer {
    /// From a raw 32-byte seed.
    pub fn from_seed(seed: [u8; 32]) -> Signer {
        Signer {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// From raw seed bytes (a generated key, a local network's root); the same as [`Signer::from_seed`].
    pub fn from_bytes(seed: [u8; 32]) -> Signer {
        Signer::from_seed(seed)
    }

    /// A fresh random key.
    pub fn generate() -> Signer {
        Signer {
            key: SigningKey::generate(&mut rand_core::OsRng),
        }
    }

    /// Reads the env var `var`; `Ok(None)` when it is unset or empty. The error names the variable, never
    /// its value.
    pub fn from_env(var: &str) -> Result<Option<Signer>, IdentityError> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Signer::from_strkey(&v)
                .map(Some)
                .map_err(|_| IdentityError::BadEnv(var.to_string())),
            _ => Ok(None),
        }
    }

    /// Reads a stellar-cli identity `NAME` from the stellar config directory
    /// ([`crate::network::config_dir`]).
    pub fn from_identity(name: &str) -> Result<Signer, IdentityError> {
        load_identity(name, crate::network::config_dir().as_deref())
    }

    /// From an `S…` StrKey.
    pub fn from_strkey(text: &str) -> Result<Signer, IdentityError> {
        match stellar_strkey::ed25519::PrivateKey::from_string(text.trim()) {
            Ok(k) => Ok(Signer::from_seed(k.0)),
            Err(_) => Err(IdentityError::NotASecret),
        }
    }

    /// Raw public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// `G…` address.
    pub fn address(&self) -> String {
        format!("{}", stellar_strkey::ed25519::PublicKey(self.public_key()))
    }

    /// The account id (the public key as XDR).
    pub fn account_id(&self) -> AccountId {
        crate::address::account_id(self.public_key())
    }

    /// The account as a contract address.
    pub fn sc_address(&self) -> ScAddress {
        ScAddress::Account(self.account_id())
    }

    /// ed25519 signature of `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }
}

/// Why no signer could be loaded. No variant ever carries secret text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// Key material where an identity name belongs (`--source` on the command line, where `ps` and
    /// shell history would see it, or `source` in watch.toml, which holds no secrets).
    #[error("refusing key material where an identity name belongs (--source, or `source` in watch.toml; it is not shown): name a stellar-cli identity (`stellar keys generate NAME`), set STELLAR_SECRET_KEY, or use --source-file FILE (`source_file` in watch.toml)")]
    KeyMaterialAsName,
    /// Neither `--source` nor the environment.
    #[error("no signing identity: pass --source NAME (a stellar-cli identity), --source-file FILE, or set STELLAR_SECRET_KEY")]
    Missing,
    /// An environment variable that does not hold an `S…` secret.
    #[error("{0} is not a valid Stellar secret key (expected an S… strkey, 56 characters)")]
    BadEnv(String),
    /// The text is not an `S…` secret.
    #[error("the secret is not a valid S… ed25519 secret key")]
    NotASecret,
    /// No identity file of that name.
    #[error("no identity {name:?} at {path}: create it with `stellar keys generate {name}` or use STELLAR_SECRET_KEY")]
    UnknownIdentity {
        /// Identity name.
        name: String,
        /// Path looked at.
        path: String,
    },
    /// An identity file that cannot be used.
    #[error("identity file {path}: {reason}")]
    BadIdentity {
        /// The file.
        path: String,
        /// What is wrong (never the secret).
        reason: String,
    },
    /// A secret file that cannot be read.
    #[error("cannot read secret file {path}: {reason}")]
    BadFile {
        /// The file.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// Identity names are file names.
    #[error("invalid identity name {0:?}: use letters, digits, '-' and '_'")]
    BadName(String),
}

/// True when a name slot (`--source`, `source`) holds key material instead of a name: a secret key or
/// seed phrase as [`assay_core::redact::is_secret`] knows them, or a raw ed25519 seed in hex, which an
/// identity name never is (hashes are arguments elsewhere, so only this slot refuses them).
fn is_key_not_name(text: &str) -> bool {
    let t = text.trim();
    assay_core::redact::is_secret(t) || (t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[derive(Deserialize)]
struct IdentityFile {
    secret_key: Option<String>,
    seed_phrase: Option<String>,
    public_key: Option<String>,
}

/// Loads the signer: `source_file` if given, else `source` as an identity name, else `env_secret`
/// (the caller passes `std::env::var(SECRET_ENV).ok()`).
pub fn load(
    source: Option<&str>,
    source_file: Option<&Path>,
    env_secret: Option<String>,
    config_dir: Option<&Path>,
) -> Result<Signer, IdentityError> {
    if let Some(s) = source {
        if is_key_not_name(s) {
            return Err(IdentityError::KeyMaterialAsName);
        }
    }
    if let Some(path) = source_file {
        let text = std::fs::read_to_string(path).map_err(|e| IdentityError::BadFile {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        return Signer::from_strkey(text.trim());
    }
    match source {
        Some(name) => load_identity(name, config_dir),
        None => match env_secret {
            Some(s) if !s.trim().is_empty() => Signer::from_strkey(&s),
            _ => Err(IdentityError::Missing),
        },
    }
}

fn load_identity(name: &str, config_dir: Option<&Path>) -> Result<Signer, IdentityError> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(IdentityError::BadName(name.to_string()));
    }
    let path = config_dir
        .map(|d| d.join("identity").join(format!("{name}.toml")))
        .ok_or_else(|| IdentityError::UnknownIdentity {
            name: name.into(),
            path: "(no config directory)".into(),
        })?;
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|_| IdentityError::UnknownIdentity {
        name: name.into(),
        path: shown.clone(),
    })?;
    // Parse errors from toml can quote the offending line, which may hold the secret: report none of it.
    let file: IdentityFile = toml::from_str(&text).map_err(|_| IdentityError::BadIdentity {
        path: shown.clone(),
        reason: "not a stellar-cli identity TOML file".into(),
    })?;
    match (file.secret_key, file.seed_phrase, file.public_key) {
        (Some(secret), _, _) => Signer::from_strkey(&secret)
            .map_err(|_| IdentityError::BadIdentity { path: shown, reason: "secret_key is not a valid S… key".into() }),
        (None, Some(_), _) => Err(IdentityError::BadIdentity {
            path: shown,
            reason: "seed-phrase identities are not supported; export the key with `stellar keys show NAME` into a file and pass --source-file".into(),
        }),
        (None, None, Some(_)) => Err(IdentityError::BadIdentity {
            path: shown,
            reason: "holds only a public key (a hardware or ledger identity); it cannot sign here".into(),
        }),
        _ => Err(IdentityError::BadIdentity { path: shown, reason: "no secret_key".into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "SBK2VIYYSVG76E7VC3QHYARNFLY2EAQXDHRC7BMXBBGIFG74ARPRMNQM";

    #[test]
    fn key_material_as_a_name_is_rejected_and_never_echoed() {
        let err = load(Some(SECRET), None, None, None).unwrap_err();
        assert_eq!(err, IdentityError::KeyMaterialAsName);
        assert!(!err.to_string().contains(SECRET));
        // Reached from watch.toml as well as from argv, so it names both places and the fix.
        for place in ["--source", "`source` in watch.toml", "STELLAR_SECRET_KEY"] {
            assert!(err.to_string().contains(place), "{err} names {place}");
        }
        let hex = "11".repeat(32);
        assert_eq!(
            load(Some(&hex), None, None, None).unwrap_err(),
            IdentityError::KeyMaterialAsName
        );
        let words = "abandon ".repeat(11) + "about";
        assert_eq!(
            load(Some(&words), None, None, None).unwrap_err(),
            IdentityError::KeyMaterialAsName
        );
    }

    #[test]
    fn display_and_env_errors_never_show_the_secret() {
        let signer = Signer::from_strkey(SECRET).unwrap();
        for shown in [format!("{signer:?}"), format!("{signer}")] {
            assert!(!shown.contains(SECRET), "{shown}");
            assert!(shown.contains(&signer.address()));
        }
        std::env::set_var("ASSAY_CHAIN_TEST_BAD_SECRET", "SBAD-NOT-A-KEY");
        let err = Signer::from_env("ASSAY_CHAIN_TEST_BAD_SECRET")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ASSAY_CHAIN_TEST_BAD_SECRET") && !err.contains("SBAD-NOT-A-KEY"),
            "{err}"
        );
        assert!(Signer::from_env("ASSAY_CHAIN_TEST_UNSET")
            .unwrap()
            .is_none());
        assert_eq!(
            Signer::from_bytes([3; 32]).sc_address(),
            ScAddress::Account(crate::address::account_id(
                Signer::from_seed([3; 32]).public_key()
            ))
        );
    }

    #[test]
    fn env_file_and_identity() {
        let from_env = load(None, None, Some(SECRET.into()), None).unwrap();
        assert!(!format!("{from_env:?}").contains(SECRET));
        assert!(format!("{from_env:?}").contains(&from_env.address()));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("key");
        std::fs::write(&f, format!("{SECRET}\n")).unwrap();
        assert_eq!(
            load(None, Some(&f), None, None).unwrap().address(),
            from_env.address()
        );
        std::fs::create_dir_all(dir.path().join("identity")).unwrap();
        std::fs::write(
            dir.path().join("identity/op.toml"),
            format!("secret_key = \"{SECRET}\"\n"),
        )
        .unwrap();
        assert_eq!(
            load(Some("op"), None, None, Some(dir.path()))
                .unwrap()
                .address(),
            from_env.address()
        );
        std::fs::write(
            dir.path().join("identity/bad.toml"),
            format!("secret_key = {SECRET}\n"),
        )
        .unwrap();
        let err = load(Some("bad"), None, None, Some(dir.path())).unwrap_err();
        assert!(!err.to_string().contains(SECRET), "{err}");
        assert!(matches!(
            load(Some("gone"), None, None, Some(dir.path())),
            Err(IdentityError::UnknownIdentity { .. })
        ));
        assert_eq!(
            load(None, None, None, None).unwrap_err(),
            IdentityError::Missing
        );
    }
}
