//! Command-line front ends for `assay attest`, `assay verify` and `assay watch` (clap argument structs and
//! `run` functions; the `assay` binary only dispatches to them).

use std::path::PathBuf;

use assay_scan::net::mapping::{ConnectToRule, Mappings, ResolveRule};
use assay_scan::options;
use clap::{Args, ValueEnum};

use assay_attest::sac;
use assay_attest::scanning::ScanSettings;
use assay_attest::sep41::Sep41Runner;
use assay_chain::identity::{self, Signer, SECRET_ENV};
use assay_chain::network::{self, NetworkSpec};
use assay_chain::rpc::RpcClient;

/// `--sep41`: run the SEP-41 conformance suite against each target's contract and bind its verdicts.
#[derive(Args, Debug, Clone, Default)]
pub struct Sep41Args {
    /// Also run the 16-check SEP-41 conformance suite against each target's contract (a classic asset's
    /// Stellar Asset Contract, or the token contract itself, on the registry's network) and bind its
    /// verdicts into the report: a FAIL escalates to critical with sep41_violation (bit 8), even beside
    /// checks that could not conclude; without a FAIL, an UNVERIFIABLE or SKIPPED check leaves the report
    /// undetermined. The suite's transactions are sent even with --dry-run: they are the measurement.
    #[arg(long)]
    pub sep41: bool,
    /// stellar-cli identity of the suite's holder (instead of ASSAY_OWNER_SECRET). Needs 5 units of the
    /// asset and XLM for fees.
    #[arg(long, value_name = "NAME", requires = "sep41")]
    pub owner_identity: Option<String>,
    /// stellar-cli identity of the suite's spender (instead of ASSAY_SPENDER_SECRET). Needs a trustline
    /// to the asset (for a classic asset) and XLM for fees.
    #[arg(long, value_name = "NAME", requires = "sep41")]
    pub spender_identity: Option<String>,
    /// Consent to the suite's writes on a network other than testnet, futurenet or standalone.
    #[arg(long, requires = "sep41")]
    pub allow_non_testnet_write: bool,
}

impl Sep41Args {
    /// The suite's runner when `--sep41` is given: the registry's network (the contract an asset is keyed
    /// by lives there), the holder and spender from identities or ASSAY_OWNER_SECRET /
    /// ASSAY_SPENDER_SECRET, and the consent gate.
    pub fn runner(
        &self,
        spec: &NetworkSpec,
        asset_passphrase: &str,
    ) -> Result<Option<Sep41Runner>, String> {
        use assay_sep41::live::{self, PartiesInput, PartyInput};
        if !self.sep41 {
            return Ok(None);
        }
        if asset_passphrase != spec.passphrase {
            return Err(
                "--sep41 runs the conformance suite against the contract on the registry's network, so \
                 the assets must live there: drop --asset-network (or point --network at the assets' \
                 network)"
                    .into(),
            );
        }
        let parties = live::resolve_parties(&PartiesInput {
            owner: PartyInput {
                address: None,
                identity: self.owner_identity.clone(),
            },
            spender: PartyInput {
                address: None,
                identity: self.spender_identity.clone(),
            },
        })
        .map_err(|e| format!("--sep41: {e}"))?;
        live::consent(&spec.passphrase, &parties, self.allow_non_testnet_write)
            .map_err(|e| format!("--sep41: {e}"))?;
        Ok(Some(Sep41Runner {
            rpc_url: spec.rpc_url.clone(),
            passphrase: spec.passphrase.clone(),
            parties,
        }))
    }
}

/// Output format of every command that prints results (`assay sep41` adds `md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people.
    Text,
    /// One JSON object per result per line, for machines.
    Json,
}

/// Where the registry lives (stellar-cli compatible).
#[derive(Args, Debug, Clone)]
pub struct NetworkArgs {
    /// Network of the registry: testnet, mainnet, futurenet, local, or a NAME from
    /// ~/.config/stellar/network/NAME.toml.
    #[arg(long, env = "STELLAR_NETWORK", value_name = "NAME")]
    pub network: Option<String>,
    /// stellar-rpc endpoint (overrides the named network's).
    #[arg(long, env = "STELLAR_RPC_URL", value_name = "URL")]
    pub rpc_url: Option<String>,
    /// Network passphrase (with --rpc-url when no --network is given).
    #[arg(long, env = "STELLAR_NETWORK_PASSPHRASE", value_name = "TEXT")]
    pub network_passphrase: Option<String>,
    /// The registry contract (C…).
    #[arg(long, env = "ASSAY_REGISTRY", value_name = "C…")]
    pub registry: String,
}

/// Where the assets' sources are read.
#[derive(Args, Debug, Clone)]
pub struct SourceArgs {
    /// Network the assets live on, whose Horizon is read and whose passphrase the evidence binds
    /// (default: the registry's network).
    #[arg(long, value_name = "NAME")]
    pub asset_network: Option<String>,
    /// Horizon base URL (default: the asset network's public Horizon).
    #[arg(long, env = "ASSAY_HORIZON_URL", value_name = "URL")]
    pub horizon_url: Option<String>,
    /// StellarExpert API base URL.
    #[arg(long, env = "ASSAY_STELLAR_EXPERT_URL", value_name = "URL", default_value = assay_core::DEFAULT_STELLAR_EXPERT_URL)]
    pub expert_url: String,
    /// Answer the name lookup for HOST:PORT with ADDR (repeatable, curl-style).
    /// In the environment: comma-separated rules.
    #[arg(
        long,
        value_name = "HOST:PORT:ADDR",
        env = "ASSAY_RESOLVE",
        value_delimiter = ','
    )]
    pub resolve: Vec<ResolveRule>,
    /// Connect to ADDR:PORT2 for HOST:PORT (repeatable, curl-style).
    /// In the environment: comma-separated rules.
    #[arg(
        long = "connect-to",
        value_name = "HOST:PORT:ADDR:PORT2",
        env = "ASSAY_CONNECT_TO",
        value_delimiter = ','
    )]
    pub connect_to: Vec<ConnectToRule>,
    /// PEM file of extra trusted roots for source fetches.
    #[arg(long, value_name = "FILE", env = "ASSAY_CACERT")]
    pub cacert: Vec<PathBuf>,
    /// Seconds allowed for one source fetch.
    #[arg(long, value_name = "SECONDS", default_value_t = 15.0)]
    pub timeout: f64,
}

/// Who signs.
#[derive(Args, Debug, Clone)]
pub struct SignerArgs {
    /// A stellar-cli identity NAME (~/.config/stellar/identity/NAME.toml). Never a secret: secrets on the
    /// command line are refused. Without it, STELLAR_SECRET_KEY is used.
    #[arg(long, value_name = "NAME")]
    pub source: Option<String>,
    /// A file holding an S… secret key.
    #[arg(long, value_name = "FILE")]
    pub source_file: Option<PathBuf>,
}

impl NetworkArgs {
    /// Resolves the network and registry id.
    pub fn resolve(&self) -> Result<(NetworkSpec, [u8; 32]), String> {
        let spec = network::resolve(
            self.network.as_deref(),
            self.rpc_url.as_deref(),
            self.network_passphrase.as_deref(),
            network::config_dir().as_deref(),
        )
        .map_err(|e| e.to_string())?;
        let registry = sac::parse_contract(&self.registry).ok_or_else(|| {
            format!(
                "invalid --registry {:?}: expected a C… contract address (56 characters)",
                self.registry
            )
        })?;
        Ok((spec, registry))
    }
}

impl SignerArgs {
    /// Loads the signer (never echoes a secret).
    pub fn load(&self) -> Result<Signer, String> {
        identity::load(
            self.source.as_deref(),
            self.source_file.as_deref(),
            std::env::var(SECRET_ENV).ok(),
            network::config_dir().as_deref(),
        )
        .map_err(|e| e.to_string())
    }
}

impl SourceArgs {
    /// Scan settings for assets on `registry_network` unless --asset-network says otherwise.
    pub fn settings(&self, registry_network: &NetworkSpec) -> Result<ScanSettings, String> {
        let passphrase = match &self.asset_network {
            None => registry_network.passphrase.clone(),
            Some(name) => {
                network::resolve(
                    Some(name),
                    Some("http://unused.invalid"),
                    None,
                    network::config_dir().as_deref(),
                )
                .map_err(|e| format!("--asset-network: {e}"))?
                .passphrase
            }
        };
        let horizon_url = match &self.horizon_url {
            Some(u) => u.clone(),
            None => ScanSettings::default_horizon(&passphrase)
                .ok_or("this network has no default Horizon: pass --horizon-url URL")?
                .to_string(),
        };
        for (flag, value) in [
            ("--horizon-url", &horizon_url),
            ("--expert-url", &self.expert_url),
        ] {
            options::check_base_url(flag, value)?;
        }
        let timeout = options::fetch_timeout(self.timeout)?;
        let extra_roots = options::read_pem_roots(&self.cacert)?;
        Ok(ScanSettings {
            asset_passphrase: passphrase,
            horizon_url,
            expert_url: self.expert_url.clone(),
            mappings: Mappings {
                resolve: self.resolve.clone(),
                connect_to: self.connect_to.clone(),
            },
            extra_roots,
            timeout,
            limits: Default::default(),
        })
    }
}

/// Rejects any argv word that looks like key material, wherever it was typed.
pub fn reject_argv_secrets<I: IntoIterator<Item = String>>(args: I) -> Result<(), String> {
    for a in args {
        let value = a.split_once('=').map(|(_, v)| v.to_string()).unwrap_or(a);
        if identity::looks_like_secret(&value) && value.trim().starts_with('S') {
            return Err(identity::IdentityError::SecretInArgv.to_string());
        }
    }
    Ok(())
}

/// An RPC client for the network.
pub fn rpc_client(spec: &NetworkSpec) -> Result<RpcClient, String> {
    RpcClient::new(&spec.rpc_url).map_err(|e| e.to_string())
}
