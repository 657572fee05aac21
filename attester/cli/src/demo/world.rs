//! The demo's world: a local network with the registry and gate deployed from the built WASM, classic
//! assets whose issuer flags and home domains are the eval subjects' recorded ones, and those subjects'
//! off-chain sources replayed over local HTTPS with an in-process CA.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assay_attest::registry;
use assay_chain::identity::Signer;
use assay_chain::network::NetworkSpec;
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{ChainError, InvokeOptions, Invoker};
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_scan::testsupport::{closed_port, ReplayServer, Reply};
use stellar_xdr::{
    AccountId, Asset, ContractExecutable, ContractId, ContractIdPreimage,
    ContractIdPreimageFromAddress, CreateContractArgs, CreateContractArgsV2, Hash, HostFunction,
    PublicKey, ScAddress, ScVal, Uint256,
};

pub const EXPERT: &str = "api.stellar.expert";

pub fn account(pk: [u8; 32]) -> AccountId {
    AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(pk)))
}

pub fn contract_val(id: [u8; 32]) -> ScVal {
    ScVal::Address(ScAddress::Contract(ContractId(Hash(id))))
}

/// One subject as recorded in testdata/eval/NAME.
pub struct Subject {
    pub name: String,
    pub code: String,
    pub issuer: String,
    pub domain: Option<String>,
    /// R=1 V=2 I=4 C=8, from the recorded Horizon account.
    pub flags: u32,
    pub dir: PathBuf,
}

impl Subject {
    /// Reads subject.json and horizon-account.json; `issuer` overrides the recorded issuer (so two
    /// recordings of one asset can both run).
    pub fn load(eval: &Path, name: &str, issuer: Option<&str>) -> Result<Subject, String> {
        let dir = eval.join(name);
        let read = |f: &str| -> Result<serde_json::Value, String> {
            let p = dir.join(f);
            let text = std::fs::read_to_string(&p).map_err(|e| {
                format!(
                    "{}: {e}; run from the repository root or pass --eval-dir",
                    p.display()
                )
            })?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
        };
        let subject = read("subject.json")?;
        let acct = read("horizon-account.json")?;
        let asset = subject["asset"]
            .as_str()
            .ok_or("subject.json has no asset")?;
        let (code, recorded) = asset.split_once('-').ok_or("asset is not CODE-ISSUER")?;
        let f = &acct["flags"];
        let bit = |k: &str, v: u32| if f[k].as_bool() == Some(true) { v } else { 0 };
        Ok(Subject {
            name: name.into(),
            code: code.into(),
            issuer: issuer.unwrap_or(recorded).into(),
            domain: acct["home_domain"].as_str().map(str::to_string),
            flags: bit("auth_required", 1)
                | bit("auth_revocable", 2)
                | bit("auth_immutable", 4)
                | bit("auth_clawback_enabled", 8),
            dir,
        })
    }

    /// `CODE-GABC…`: enough of the issuer to tell two assets with one code apart.
    pub fn short(&self) -> String {
        let head = self.issuer.get(..4).unwrap_or(&self.issuer);
        format!("{}-{head}…", self.code)
    }

    pub fn id(&self) -> String {
        format!("{}-{}", self.code, self.issuer)
    }

    pub fn expected(&self) -> Result<serde_json::Value, String> {
        let p = self.dir.join("expected.json");
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
    }

    pub fn xdr(&self) -> Result<Asset, String> {
        assay_attest::sac::xdr_asset(&self.code, &self.issuer).map_err(|e| e.to_string())
    }
}

pub struct World {
    /// Runs the replay servers; dropping it stops them.
    _rt: tokio::runtime::Runtime,
    pub net: LocalNet,
    pub spec: NetworkSpec,
    pub rpc: RpcClient,
    pub admin: Signer,
    pub attester: Signer,
    pub holder: Signer,
    pub registry: [u8; 32],
    pub gate: [u8; 32],
    pub server: ReplayServer,
    /// `--connect-to` rules: every replayed host, and unreachable hosts sent to a closed port.
    pub connect_to: Vec<String>,
    pub dir: tempfile::TempDir,
}

impl World {
    pub fn invoker<'a>(&'a self, signer: &'a Signer) -> Invoker<'a> {
        Invoker {
            rpc: &self.rpc,
            network: &self.spec,
            signer,
            options: InvokeOptions {
                poll_interval: Duration::from_millis(50),
                try_again_backoff: Duration::from_millis(20),
                follow_grace: Duration::from_secs(1),
                ..InvokeOptions::default()
            },
        }
    }

    /// Starts the network and the replay servers for StellarExpert and `domains`; funds the demo's keys.
    pub fn start(domains: &[&str]) -> Result<World, String> {
        let net = LocalNet::start(LocalNetConfig {
            port: 0,
            ledger_close_ms: 100,
            ..LocalNetConfig::default()
        })
        .map_err(|e| format!("local network: {e}"))?;
        let spec = NetworkSpec {
            name: "local".into(),
            rpc_url: net.rpc_url(),
            passphrase: net.passphrase().into(),
        };
        let rpc = RpcClient::new(&spec.rpc_url).map_err(|e| e.to_string())?;
        // Demo-only keys from fixed seeds: they exist only on this throwaway network.
        let admin = Signer::from_seed([11; 32]);
        let attester = Signer::from_seed([12; 32]);
        let holder = Signer::from_seed([13; 32]);
        for s in [&admin, &attester, &holder] {
            net.fund(&account(s.public_key()))
                .map_err(|e| format!("fund: {e}"))?;
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let mut hosts = vec![EXPERT];
        hosts.extend_from_slice(domains);
        let server = rt.block_on(ReplayServer::start(&hosts));
        let connect_to = hosts.iter().map(|h| server.connect_https(h)).collect();
        Ok(World {
            _rt: rt,
            net,
            spec,
            rpc,
            admin,
            attester,
            holder,
            registry: [0; 32],
            gate: [0; 32],
            server,
            connect_to,
            dir: tempfile::tempdir().map_err(|e| e.to_string())?,
        })
    }

    /// Uploads `wasm` and creates a contract from it with `args`.
    pub fn deploy(&self, wasm: &[u8], salt: u8, args: Vec<ScVal>) -> Result<[u8; 32], String> {
        let inv = self.invoker(&self.admin);
        let code = wasm.to_vec().try_into().map_err(|_| "wasm too large")?;
        let up = inv
            .invoke(&HostFunction::UploadContractWasm(code))
            .map_err(|e| format!("upload: {e}"))?;
        let hash: [u8; 32] = match up.return_value {
            Some(ScVal::Bytes(b)) => b.as_slice().try_into().map_err(|_| "bad hash")?,
            other => return Err(format!("upload returned {other:?}")),
        };
        let created = inv
            .invoke(&HostFunction::CreateContractV2(CreateContractArgsV2 {
                contract_id_preimage: ContractIdPreimage::Address(ContractIdPreimageFromAddress {
                    address: ScAddress::Account(account(self.admin.public_key())),
                    salt: Uint256([salt; 32]),
                }),
                executable: ContractExecutable::Wasm(Hash(hash)),
                constructor_args: args.try_into().map_err(|_| "too many args")?,
            }))
            .map_err(|e| format!("deploy: {e}"))?;
        match created.return_value {
            Some(ScVal::Address(ScAddress::Contract(ContractId(Hash(h))))) => Ok(h),
            other => Err(format!("deploy returned {other:?}")),
        }
    }

    /// Deploys the registry (admin, with the attester in its set) and the default-policy gate.
    pub fn deploy_registry_and_gate(&mut self, wasm_dir: &Path) -> Result<(), String> {
        let read = |n: &str| {
            let p = wasm_dir.join(format!("{n}.wasm"));
            std::fs::read(&p).map_err(|e| {
                format!(
                    "{}: {e}; build the contracts first with scripts/build-wasm.sh",
                    p.display()
                )
            })
        };
        let admin = registry::account_val(self.admin.public_key());
        self.registry = self.deploy(&read("assay_registry")?, 1, vec![admin])?;
        let add = registry::call(
            self.registry,
            "add_attester",
            vec![registry::account_val(self.attester.public_key())],
        );
        self.invoker(&self.admin)
            .invoke(&add)
            .map_err(|e| format!("add_attester: {e}"))?;
        self.gate = self.deploy(
            &read("assay_gate_example")?,
            2,
            vec![contract_val(self.registry), ScVal::Void],
        )?;
        Ok(())
    }

    /// Creates the subject's issuer with its recorded flags and home domain, a holder trustline with
    /// `balance`, and the asset's Stellar Asset Contract. Returns the SAC id.
    pub fn issue(&self, s: &Subject, balance: i64) -> Result<[u8; 32], String> {
        let key = stellar_strkey::ed25519::PublicKey::from_string(&s.issuer)
            .map_err(|e| format!("{}: {e}", s.issuer))?;
        let iss = account(key.0);
        self.net
            .fund(&iss)
            .map_err(|e| format!("fund issuer: {e}"))?;
        self.net
            .admin_set_account_flags(&iss, s.flags)
            .map_err(|e| format!("issuer flags: {e}"))?;
        if let Some(d) = &s.domain {
            self.net
                .admin_set_home_domain(&iss, d)
                .map_err(|e| format!("home domain: {e}"))?;
        }
        let asset = s.xdr()?;
        self.net
            .admin_set_trustline(
                &account(self.holder.public_key()),
                &asset,
                balance,
                i64::MAX,
                1,
            )
            .map_err(|e| format!("trustline: {e}"))?;
        let created = self
            .invoker(&self.admin)
            .invoke(&HostFunction::CreateContract(CreateContractArgs {
                contract_id_preimage: ContractIdPreimage::Asset(asset.clone()),
                executable: ContractExecutable::StellarAsset,
            }))
            .map_err(|e| format!("deploy the asset contract: {e}"))?;
        match created.return_value {
            Some(ScVal::Address(ScAddress::Contract(ContractId(Hash(h))))) => Ok(h),
            other => Err(format!("asset contract deploy returned {other:?}")),
        }
    }

    /// Serves the subject's recorded directory, blocklist and stellar.toml answers. A recorded `N` status
    /// is replayed as that status; a recorded network failure (timeout, dns-failure) as a refused
    /// connection.
    pub fn serve(&mut self, s: &Subject) {
        let file = |f: &str| std::fs::read(s.dir.join(f)).ok();
        let status = |f: &str| {
            file(&format!("{f}.status")).map(|b| String::from_utf8_lossy(&b).trim().to_string())
        };
        let replay = |server: &ReplayServer, host: &str, path: &str, f: &str| match file(f) {
            Some(b) if f.ends_with(".toml") => server.route(host, path, vec![Reply::text(b)]),
            Some(b) => server.route(host, path, vec![Reply::json(b)]),
            None => {
                let code = status(f).and_then(|s| s.parse().ok()).unwrap_or(503);
                server.route(host, path, vec![Reply::status(code)]);
            }
        };
        let issuer = &s.issuer;
        replay(
            &self.server,
            EXPERT,
            &format!("/explorer/directory/{issuer}"),
            "directory.json",
        );
        if let Some(d) = &s.domain {
            replay(
                &self.server,
                EXPERT,
                &format!("/explorer/directory/blocked-domains/{d}"),
                "blocked.json",
            );
            let toml_status = status("stellar.toml");
            if toml_status
                .as_deref()
                .is_some_and(|v| v.parse::<u16>().is_err())
            {
                // Recorded as unreachable: route the host to a port where nothing listens.
                self.connect_to.retain(|r| !r.starts_with(&format!("{d}:")));
                self.connect_to
                    .push(format!("{d}:443:127.0.0.1:{}", closed_port()));
            } else {
                replay(&self.server, d, "/.well-known/stellar.toml", "stellar.toml");
            }
        }
    }

    /// Invokes the gate's `deposit` of `amount` of `asset` from the holder: `Ok(())`, or the contract
    /// error code the gate refused with (nothing is submitted when simulation refuses).
    pub fn deposit(&self, asset: [u8; 32], amount: i128) -> Result<(), Result<u32, String>> {
        let f = registry::call(
            self.gate,
            "deposit",
            vec![
                contract_val(asset),
                registry::account_val(self.holder.public_key()),
                ScVal::I128(stellar_xdr::Int128Parts {
                    hi: (amount >> 64) as i64,
                    lo: amount as u64,
                }),
            ],
        );
        match self.invoker(&self.holder).invoke(&f) {
            Ok(_) => Ok(()),
            Err(ChainError::Simulation(text)) => {
                Err(assay_chain::submit::contract_error_code(&text)
                    .ok_or(format!("no contract error in: {text}")))
            }
            Err(e) => Err(Err(e.to_string())),
        }
    }

    /// The gate's recorded deposit balance of `asset` for the holder.
    pub fn gate_balance(&self, asset: [u8; 32]) -> Result<i128, String> {
        let f = registry::call(
            self.gate,
            "balance",
            vec![
                contract_val(asset),
                registry::account_val(self.holder.public_key()),
            ],
        );
        match self.invoker(&self.admin).read(&f) {
            Ok(Some(ScVal::I128(p))) => Ok(((p.hi as i128) << 64) | p.lo as i128),
            Ok(other) => Err(format!("balance returned {other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The registry's `is_safe(asset, max_severity, max_age_secs)`, by simulation (nothing is signed).
    pub fn is_safe(
        &self,
        asset: [u8; 32],
        max_severity: u32,
        max_age_secs: u64,
    ) -> Result<bool, String> {
        let f = registry::call(
            self.registry,
            "is_safe",
            vec![
                contract_val(asset),
                ScVal::U32(max_severity),
                ScVal::U64(max_age_secs),
            ],
        );
        match self.invoker(&self.admin).read(&f) {
            Ok(Some(ScVal::Bool(b))) => Ok(b),
            Ok(other) => Err(format!("is_safe returned {other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    pub fn ca(&self) -> PathBuf {
        self.server.write_ca(self.dir.path())
    }
}
