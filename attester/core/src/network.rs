//! The networks Assay knows by name: each one's passphrase and public endpoints, defined once for every
//! crate and command. The names are stellar-cli's; a name not listed here is a stellar-cli network file,
//! resolved by `assay-chain`.

/// Pubnet's passphrase.
pub const PUBNET_PASSPHRASE: &str = "Public Global Stellar Network ; September 2015";
/// Testnet's passphrase.
pub const TESTNET_PASSPHRASE: &str = "Test SDF Network ; September 2015";
/// Futurenet's passphrase.
pub const FUTURENET_PASSPHRASE: &str = "Test SDF Future Network ; October 2022";
/// A standalone network's passphrase, as stellar-core's `--standalone`, quickstart's `local` and
/// `assay localnet` use.
pub const STANDALONE_PASSPHRASE: &str = "Standalone Network ; February 2017";

/// Pubnet's public Horizon.
pub const DEFAULT_HORIZON_URL: &str = "https://horizon.stellar.org";

/// A network known by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownNetwork {
    /// stellar-cli's name for it.
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// Its passphrase.
    pub passphrase: &'static str,
    /// Its public stellar-rpc endpoint; `None` for pubnet, which has no public SDF endpoint.
    pub rpc_url: Option<&'static str>,
    /// Its public Horizon.
    pub horizon_url: &'static str,
}

/// Every network known by name. `local` is where `assay localnet` and quickstart's `local` listen by
/// default: stellar-rpc at `/rpc`, Horizon at the root.
pub const KNOWN_NETWORKS: [KnownNetwork; 4] = [
    KnownNetwork {
        name: "mainnet",
        aliases: &["pubnet"],
        passphrase: PUBNET_PASSPHRASE,
        rpc_url: None,
        horizon_url: DEFAULT_HORIZON_URL,
    },
    KnownNetwork {
        name: "testnet",
        aliases: &[],
        passphrase: TESTNET_PASSPHRASE,
        rpc_url: Some("https://soroban-testnet.stellar.org"),
        horizon_url: "https://horizon-testnet.stellar.org",
    },
    KnownNetwork {
        name: "futurenet",
        aliases: &[],
        passphrase: FUTURENET_PASSPHRASE,
        rpc_url: Some("https://rpc-futurenet.stellar.org"),
        horizon_url: "https://horizon-futurenet.stellar.org",
    },
    KnownNetwork {
        name: "local",
        aliases: &["standalone"],
        passphrase: STANDALONE_PASSPHRASE,
        rpc_url: Some("http://localhost:8000/rpc"),
        horizon_url: "http://localhost:8000",
    },
];

/// The network known by `name` (or one of its aliases).
pub fn by_name(name: &str) -> Option<&'static KnownNetwork> {
    KNOWN_NETWORKS
        .iter()
        .find(|n| n.name == name || n.aliases.contains(&name))
}

/// The network whose passphrase is `passphrase`, when it is a known one.
pub fn by_passphrase(passphrase: &str) -> Option<&'static KnownNetwork> {
    KNOWN_NETWORKS.iter().find(|n| n.passphrase == passphrase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_passphrases_resolve_to_one_network() {
        for n in &KNOWN_NETWORKS {
            assert_eq!(by_name(n.name), Some(n));
            assert_eq!(by_passphrase(n.passphrase), Some(n));
            for alias in n.aliases {
                assert_eq!(by_name(alias), Some(n));
            }
        }
        assert_eq!(by_name("pubnet").unwrap().passphrase, PUBNET_PASSPHRASE);
        assert_eq!(by_name("nope"), None);
        assert_eq!(by_passphrase("Other ; 2020"), None);
    }
}
