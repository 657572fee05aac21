//! Shared harness: a LocalNet with the registry and gate deployed from the built WASM, classic assets whose
//! issuer flags match eval subjects, and their off-chain sources replayed over local HTTPS.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use assay_attest::registry;
use assay_attest::scanning::ScanSettings;
use assay_chain::identity::Signer;
use assay_chain::network::NetworkSpec;
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{InvokeOptions, Invoker};
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_scan::net::mapping::Mappings;
use assay_scan::testsupport::{ReplayServer, Reply};
use stellar_xdr::{
    AccountId, AlphaNum12, AlphaNum4, Asset, AssetCode12, AssetCode4, ContractExecutable,
    ContractId, ContractIdPreimage, ContractIdPreimageFromAddress, CreateContractArgsV2, Hash,
    HostFunction, PublicKey, ScAddress, ScVal, Uint256,
};

pub mod proxy;

pub const EXPERT: &str = "api.stellar.expert";

pub fn wasm(name: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("target/wasm").join(format!("{name}.wasm"));
    if !path.exists() {
        let status = std::process::Command::new(root.join("scripts/build-wasm.sh"))
            .arg(name.replace('_', "-"))
            .status()
            .expect("run scripts/build-wasm.sh");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    }
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

pub fn account(pk: [u8; 32]) -> AccountId {
    AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(pk)))
}

pub fn g_account(g: &str) -> AccountId {
    account(
        stellar_strkey::ed25519::PublicKey::from_string(g)
            .unwrap()
            .0,
    )
}

pub fn fast() -> InvokeOptions {
    InvokeOptions {
        poll_interval: Duration::from_millis(50),
        try_again_backoff: Duration::from_millis(20),
        follow_grace: Duration::from_secs(1),
        ..InvokeOptions::default()
    }
}

/// One classic asset on the local network.
pub struct ClassicAsset {
    pub code: &'static str,
    pub issuer: String,
}

impl ClassicAsset {
    pub fn core(&self) -> assay_core::Asset {
        assay_core::Asset::new(self.code, &self.issuer).unwrap()
    }
    pub fn xdr(&self) -> Asset {
        let iss = g_account(&self.issuer);
        let b = self.code.as_bytes();
        if b.len() <= 4 {
            let mut c = [0u8; 4];
            c[..b.len()].copy_from_slice(b);
            Asset::CreditAlphanum4(AlphaNum4 {
                asset_code: AssetCode4(c),
                issuer: iss,
            })
        } else {
            let mut c = [0u8; 12];
            c[..b.len()].copy_from_slice(b);
            Asset::CreditAlphanum12(AlphaNum12 {
                asset_code: AssetCode12(c),
                issuer: iss,
            })
        }
    }
}

pub struct World {
    pub rt: tokio::runtime::Runtime,
    pub net: LocalNet,
    pub spec: NetworkSpec,
    pub rpc: RpcClient,
    pub admin: Signer,
    pub attester: Signer,
    pub holder: Signer,
    pub registry: [u8; 32],
    pub gate: [u8; 32],
    pub server: ReplayServer,
    pub dir: tempfile::TempDir,
}

impl World {
    pub fn invoker<'a>(&'a self, signer: &'a Signer) -> Invoker<'a> {
        Invoker {
            rpc: &self.rpc,
            network: &self.spec,
            signer,
            options: fast(),
        }
    }

    /// Local network, registry (admin) with `attester` in its set, default-policy gate, replay servers for
    /// StellarExpert and `domains`.
    pub fn start(domains: &[&str]) -> World {
        let net = LocalNet::start(LocalNetConfig {
            port: 0,
            ledger_close_ms: 100,
            ..LocalNetConfig::default()
        })
        .unwrap();
        let spec = NetworkSpec {
            name: "local".into(),
            rpc_url: net.rpc_url(),
            passphrase: net.passphrase().into(),
        };
        let rpc = RpcClient::new(&spec.rpc_url).unwrap();
        let admin = Signer::from_seed([11; 32]);
        let attester = Signer::from_seed([12; 32]);
        let holder = Signer::from_seed([13; 32]);
        for s in [&admin, &attester, &holder] {
            net.fund(&account(s.public_key())).unwrap();
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut hosts = vec![EXPERT];
        hosts.extend_from_slice(domains);
        let server = rt.block_on(ReplayServer::start(&hosts));
        let mut w = World {
            rt,
            net,
            spec,
            rpc,
            admin,
            attester,
            holder,
            registry: [0; 32],
            gate: [0; 32],
            server,
            dir: tempfile::tempdir().unwrap(),
        };
        let admin_addr = registry::account_val(w.admin.public_key());
        w.registry = w.deploy("assay_registry", 1, vec![admin_addr]);
        let add = registry::call(
            w.registry,
            "add_attester",
            vec![registry::account_val(w.attester.public_key())],
        );
        w.invoker(&w.admin).invoke(&add).expect("add_attester");
        let reg = ScVal::Address(ScAddress::Contract(ContractId(Hash(w.registry))));
        w.gate = w.deploy("assay_gate_example", 2, vec![reg, ScVal::Void]);
        w
    }

    pub fn deploy(&self, name: &str, salt: u8, args: Vec<ScVal>) -> [u8; 32] {
        let inv = self.invoker(&self.admin);
        let up = inv
            .invoke(&HostFunction::UploadContractWasm(
                wasm(name).try_into().unwrap(),
            ))
            .expect("upload");
        let hash: [u8; 32] = match up.return_value {
            Some(ScVal::Bytes(b)) => b.as_slice().try_into().unwrap(),
            other => panic!("upload returned {other:?}"),
        };
        let created = inv
            .invoke(&HostFunction::CreateContractV2(CreateContractArgsV2 {
                contract_id_preimage: ContractIdPreimage::Address(ContractIdPreimageFromAddress {
                    address: ScAddress::Account(account(self.admin.public_key())),
                    salt: Uint256([salt; 32]),
                }),
                executable: ContractExecutable::Wasm(Hash(hash)),
                constructor_args: args.try_into().unwrap(),
            }))
            .expect("deploy");
        match created.return_value {
            Some(ScVal::Address(ScAddress::Contract(ContractId(Hash(h))))) => h,
            other => panic!("deploy returned {other:?}"),
        }
    }

    /// Creates the issuer with `flags` (R=1 V=2 I=4 C=8) and `home_domain`, and a holder trustline so Horizon
    /// lists the asset.
    pub fn issue(
        &self,
        code: &'static str,
        issuer: &str,
        flags: u32,
        home_domain: Option<&str>,
    ) -> ClassicAsset {
        let iss = g_account(issuer);
        self.net.fund(&iss).unwrap();
        self.net.admin_set_account_flags(&iss, flags).unwrap();
        if let Some(d) = home_domain {
            self.net.admin_set_home_domain(&iss, d).unwrap();
        }
        let a = ClassicAsset {
            code,
            issuer: issuer.to_string(),
        };
        self.net
            .admin_set_trustline(
                &account(self.holder.public_key()),
                &a.xdr(),
                10_000_000,
                i64::MAX,
                1,
            )
            .unwrap();
        a
    }

    pub fn route(&self, host: &str, path: &str, reply: Reply) {
        self.server.route(host, path, vec![reply]);
    }

    /// Serves an eval subject's directory, blocklist and toml answers from testdata/eval/NAME.
    pub fn serve_eval(&self, name: &str, issuer: &str, domain: &str) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/eval")
            .join(name);
        let read = |f: &str| std::fs::read(dir.join(f)).ok();
        match read("directory.json") {
            Some(b) => self.route(
                EXPERT,
                &format!("/explorer/directory/{issuer}"),
                Reply::json(b),
            ),
            None => self.route(
                EXPERT,
                &format!("/explorer/directory/{issuer}"),
                Reply::status(404),
            ),
        }
        if let Some(b) = read("blocked.json") {
            self.route(
                EXPERT,
                &format!("/explorer/directory/blocked-domains/{domain}"),
                Reply::json(b),
            );
        }
        match read("stellar.toml") {
            Some(b) => self.route(domain, "/.well-known/stellar.toml", Reply::text(b)),
            None => {
                let status: u16 = read("stellar.toml.status")
                    .map(|s| String::from_utf8_lossy(&s).trim().parse().unwrap_or(404))
                    .unwrap_or(404);
                self.route(
                    domain,
                    "/.well-known/stellar.toml",
                    Reply::status(if status == 0 { 503 } else { status }),
                );
            }
        }
    }

    pub fn settings(&self, hosts: &[&str]) -> ScanSettings {
        let mut connect_to = vec![self.server.connect_https(EXPERT).parse().unwrap()];
        for h in hosts {
            connect_to.push(self.server.connect_https(h).parse().unwrap());
        }
        let roots = assay_scan::options::pem_roots(self.server.ca_pem.as_bytes()).unwrap();
        ScanSettings {
            asset_passphrase: self.spec.passphrase.clone(),
            horizon_url: self.net.horizon_url(),
            expert_url: format!("https://{EXPERT}"),
            mappings: Mappings {
                resolve: vec![],
                connect_to,
            },
            extra_roots: roots,
            timeout: Duration::from_secs(5),
        }
    }

    /// The gate's verdict on `asset`: `Ok(())` or the contract error code, by simulation.
    pub fn gate_check(&self, asset: [u8; 32]) -> Result<(), u32> {
        let f = registry::call(
            self.gate,
            "check",
            vec![ScVal::Address(ScAddress::Contract(ContractId(Hash(asset))))],
        );
        match self.invoker(&self.admin).simulate(&f) {
            Ok(_) => Ok(()),
            Err(assay_chain::submit::ChainError::Simulation(text)) => {
                Err(assay_chain::submit::contract_error_code(&text)
                    .unwrap_or_else(|| panic!("no contract error in {text}")))
            }
            Err(e) => panic!("gate check: {e}"),
        }
    }
}
