//! Network selection compatible with stellar-cli: built-in names, `NAME.toml` files under the stellar
//! config directory, or an explicit RPC URL and passphrase.

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::address::network_id;

pub use assay_core::network::{
    FUTURENET_PASSPHRASE, PUBNET_PASSPHRASE, STANDALONE_PASSPHRASE, TESTNET_PASSPHRASE,
};

/// A network to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkSpec {
    /// How the user named it (`testnet`, a config name, or `custom`).
    pub name: String,
    /// stellar-rpc endpoint.
    pub rpc_url: String,
    /// Exact network passphrase.
    pub passphrase: String,
}

impl NetworkSpec {
    /// SHA-256 of the passphrase: what signatures and contract ids are bound to.
    pub fn network_id(&self) -> [u8; 32] {
        network_id(&self.passphrase)
    }

    /// Pubnet is the only network where real value is at stake; everything else is a test network.
    pub fn is_mainnet(&self) -> bool {
        self.passphrase == PUBNET_PASSPHRASE
    }
}

/// Why no network could be selected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// Neither `--network` nor `--rpc-url` + `--network-passphrase`.
    #[error("no network: pass --network testnet|mainnet|futurenet|local|NAME, or --rpc-url URL with --network-passphrase TEXT")]
    Missing,
    /// `--rpc-url` without a passphrase or the reverse.
    #[error("--rpc-url and --network-passphrase go together: pass both, or use --network NAME")]
    Half,
    /// A name with no built-in and no config file.
    #[error("unknown network {name:?}: not built in (testnet, mainnet, futurenet, local) and no {path} (create it with `stellar network add`)")]
    Unknown {
        /// The name.
        name: String,
        /// Where it was looked for.
        path: String,
    },
    /// A config file that does not parse.
    #[error(
        "network config {path}: {message}; expected rpc_url = \"…\" and network_passphrase = \"…\""
    )]
    BadFile {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Mainnet has no public SDF RPC endpoint.
    #[error("mainnet has no default RPC endpoint: pass --rpc-url URL of your provider (the passphrase is known)")]
    MainnetNeedsRpc,
    /// Not an http(s) URL.
    #[error("invalid RPC URL {0:?}: expected http:// or https://, e.g. https://soroban-testnet.stellar.org")]
    BadUrl(String),
    /// A network name with characters that could escape the config directory.
    #[error("invalid network name {0:?}: use letters, digits, '-' and '_'")]
    BadName(String),
}

#[derive(Deserialize)]
struct NetworkFile {
    rpc_url: String,
    network_passphrase: String,
}

/// stellar-cli's config directory: `$STELLAR_CONFIG_HOME`, else `$XDG_CONFIG_HOME/stellar`, else
/// `~/.config/stellar`.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("STELLAR_CONFIG_HOME") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("stellar"));
    }
    dirs::home_dir().map(|h| h.join(".config").join("stellar"))
}

fn check_url(url: &str) -> Result<(), NetworkError> {
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        _ => Err(NetworkError::BadUrl(url.to_string())),
    }
}

/// The passphrase `name` stands for (a known network or a stellar-cli network file), for commands that
/// read Horizon only and need no RPC endpoint.
pub fn passphrase_of(name: &str, config_dir: Option<&Path>) -> Result<String, NetworkError> {
    named(name, config_dir).map(|spec| spec.passphrase)
}

/// Resolves the network from the flags. `--rpc-url` overrides a named network's endpoint (as stellar-cli
/// does); a config file under `config_dir/network/NAME.toml` wins over a built-in of the same name.
pub fn resolve(
    network: Option<&str>,
    rpc_url: Option<&str>,
    passphrase: Option<&str>,
    config_dir: Option<&Path>,
) -> Result<NetworkSpec, NetworkError> {
    let Some(name) = network else {
        return match (rpc_url, passphrase) {
            (Some(url), Some(pass)) => {
                check_url(url)?;
                Ok(NetworkSpec {
                    name: "custom".into(),
                    rpc_url: url.into(),
                    passphrase: pass.into(),
                })
            }
            (None, None) => Err(NetworkError::Missing),
            _ => Err(NetworkError::Half),
        };
    };
    let mut spec = named(name, config_dir)?;
    if let Some(url) = rpc_url {
        spec.rpc_url = url.to_string();
    }
    if let Some(pass) = passphrase {
        spec.passphrase = pass.to_string();
    }
    if spec.rpc_url.is_empty() {
        return Err(NetworkError::MainnetNeedsRpc);
    }
    check_url(&spec.rpc_url)?;
    Ok(spec)
}

/// The network `name` stands for: `config_dir/network/NAME.toml` if it exists, else a built-in. Its
/// endpoint is empty when the network has no public one (mainnet).
fn named(name: &str, config_dir: Option<&Path>) -> Result<NetworkSpec, NetworkError> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(NetworkError::BadName(name.to_string()));
    }
    let file = config_dir.map(|d| d.join("network").join(format!("{name}.toml")));
    let spec = match file.as_ref().filter(|p| p.is_file()) {
        Some(path) => {
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| NetworkError::BadFile {
                path: shown.clone(),
                message: e.to_string(),
            })?;
            let parsed: NetworkFile = toml::from_str(&text).map_err(|e| NetworkError::BadFile {
                path: shown.clone(),
                message: e.message().to_string(),
            })?;
            NetworkSpec {
                name: name.into(),
                rpc_url: parsed.rpc_url,
                passphrase: parsed.network_passphrase,
            }
        }
        None => {
            let Some(known) = assay_core::network::by_name(name) else {
                return Err(NetworkError::Unknown {
                    name: name.into(),
                    path: file
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| format!("network/{name}.toml (no config directory)")),
                });
            };
            NetworkSpec {
                name: name.into(),
                rpc_url: known.rpc_url.unwrap_or_default().into(),
                passphrase: known.passphrase.into(),
            }
        }
    };
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_and_files() {
        let t = resolve(Some("testnet"), None, None, None).unwrap();
        assert_eq!(t.passphrase, TESTNET_PASSPHRASE);
        assert_eq!(t.rpc_url, "https://soroban-testnet.stellar.org");
        assert_eq!(
            resolve(Some("mainnet"), None, None, None),
            Err(NetworkError::MainnetNeedsRpc)
        );
        let m = resolve(Some("mainnet"), Some("https://rpc.example"), None, None).unwrap();
        assert!(m.is_mainnet());

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("network")).unwrap();
        std::fs::write(
            dir.path().join("network/mine.toml"),
            "rpc_url = \"http://127.0.0.1:9/rpc\"\nnetwork_passphrase = \"Mine ; 2026\"\n",
        )
        .unwrap();
        let n = resolve(Some("mine"), None, None, Some(dir.path())).unwrap();
        assert_eq!(
            (n.rpc_url.as_str(), n.passphrase.as_str()),
            ("http://127.0.0.1:9/rpc", "Mine ; 2026")
        );
        std::fs::write(dir.path().join("network/bad.toml"), "rpc = 1").unwrap();
        assert!(matches!(
            resolve(Some("bad"), None, None, Some(dir.path())),
            Err(NetworkError::BadFile { .. })
        ));
        assert!(matches!(
            resolve(Some("nope"), None, None, Some(dir.path())),
            Err(NetworkError::Unknown { .. })
        ));
        assert!(matches!(
            resolve(Some("../x"), None, None, None),
            Err(NetworkError::BadName(_))
        ));
    }

    #[test]
    fn explicit_pair() {
        assert_eq!(resolve(None, None, None, None), Err(NetworkError::Missing));
        assert_eq!(
            resolve(None, Some("http://x"), None, None),
            Err(NetworkError::Half)
        );
        assert!(matches!(
            resolve(None, Some("ftp://x"), Some("p"), None),
            Err(NetworkError::BadUrl(_))
        ));
        let c = resolve(None, Some("http://127.0.0.1:1"), Some("P"), None).unwrap();
        assert_eq!(c.network_id(), network_id("P"));
    }
}
