//! A local network with a token deployed from its built WASM and a funded holder.
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use assay_chain::{NetworkClient, Signer};
use assay_core::powers::PowerSurvey;
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_powers::{discover, Bounds, Target};
use stellar_xdr::{ScAddress, ScString, ScVal};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `packages` once per test binary with scripts/build-wasm.sh (it rebuilds only what changed).
pub fn wasm(package: &str, name: &str) -> Vec<u8> {
    static BUILT: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(Vec::new()));
    let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
    if !built.iter().any(|p| p == package) {
        let status = Command::new(root().join("scripts/build-wasm.sh"))
            .arg(package)
            .status()
            .expect("scripts/build-wasm.sh runs");
        assert!(status.success(), "scripts/build-wasm.sh {package} failed");
        built.push(package.to_string());
    }
    let path = root().join("target/wasm").join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub use assay_chain::scval::i128_val;

pub fn string(s: &str) -> ScVal {
    ScVal::String(ScString(s.as_bytes().to_vec().try_into().unwrap()))
}

/// A local network with one token deployed; `admin` is the network's root account.
pub struct Deployed {
    pub net: LocalNet,
    pub network: NetworkClient,
    pub admin: Signer,
    pub token: ScAddress,
    pub wasm: Vec<u8>,
}

impl Deployed {
    /// Deploys `wasm` with `constructor(admin) -> args`.
    pub fn new(wasm: Vec<u8>, constructor: impl FnOnce(&Signer) -> Vec<ScVal>) -> Deployed {
        Deployed::with_dependency(Vec::new(), wasm, |admin, _| constructor(admin))
    }

    /// Deploys `dependency` (no constructor arguments) when it is not empty, then `wasm` with
    /// `constructor(admin, dependency's address)`.
    pub fn with_dependency(
        dependency: Vec<u8>,
        wasm: Vec<u8>,
        constructor: impl FnOnce(&Signer, &ScAddress) -> Vec<ScVal>,
    ) -> Deployed {
        let mut d = Deployed::empty();
        let dependency = if dependency.is_empty() {
            ScAddress::Account(assay_chain::account_id([0; 32]))
        } else {
            d.deploy(&dependency, 8, vec![])
        };
        let args = constructor(&d.admin, &dependency);
        d.token = d.deploy(&wasm, 7, args);
        d.wasm = wasm;
        d
    }

    /// A local network with no token yet (`token` and `wasm` are set once one is deployed).
    pub fn empty() -> Deployed {
        let net = LocalNet::start(LocalNetConfig {
            ledger_close_ms: 50,
            ..Default::default()
        })
        .expect("local network");
        let mut network = NetworkClient::new(&net.rpc_url(), net.passphrase());
        network.poll_interval = std::time::Duration::from_millis(20);
        let admin = Signer::from_bytes(net.root_secret());
        Deployed {
            net,
            network,
            admin,
            token: ScAddress::Account(assay_chain::account_id([0; 32])),
            wasm: Vec::new(),
        }
    }

    /// Deploys `wasm` as the admin with `args` for its constructor.
    pub fn deploy(&self, wasm: &[u8], salt: u8, args: Vec<ScVal>) -> ScAddress {
        let hash = self.network.upload_wasm(&self.admin, wasm).expect("upload");
        self.network
            .create_contract(&self.admin, hash, [salt; 32], args)
            .expect("deploy")
    }

    /// Calls `function(args)` on `contract` as the admin, on the network itself.
    pub fn call(&self, contract: &ScAddress, function: &str, args: Vec<ScVal>) {
        self.network
            .invoke(&self.admin, contract, function, args)
            .unwrap_or_else(|e| panic!("{function}: {e}"));
    }

    /// Calls `function(args)` on the token as the admin, on the network itself.
    pub fn admin_call(&self, function: &str, args: Vec<ScVal>) {
        self.call(&self.token, function, args);
    }

    /// Runs discovery with `holders` as the candidates.
    pub fn discover(&self, holders: &[ScAddress]) -> PowerSurvey {
        self.discover_within(holders, Bounds::default())
    }

    /// Runs discovery with `holders` as the candidates, within `bounds`.
    pub fn discover_within(&self, holders: &[ScAddress], bounds: Bounds) -> PowerSurvey {
        let mut sandbox = self.net.sandbox().expect("sandbox");
        let started = std::time::Instant::now();
        let survey = discover(
            &mut sandbox,
            &Target {
                contract: self.token.clone(),
                wasm: self.wasm.clone(),
            },
            holders,
            bounds,
        )
        .expect("discovery runs");
        // The figure the discovery's cost is measured by (`--nocapture` shows it).
        let reach = survey.reach.clone().unwrap_or_default();
        eprintln!(
            "discovery in {}: {:.2} s, {} invocations (later clock: {} refused sets{}; module values: {} in {} invocations{})",
            std::thread::current().name().unwrap_or("?"),
            started.elapsed().as_secs_f64(),
            survey.invocations,
            reach.later_sets,
            if reach.later_cut { ", cut" } else { "" },
            reach.module_values,
            reach.module_calls,
            if reach.module_cut { ", cut" } else { "" },
        );
        survey
    }
}

/// A holder address nobody else uses in the tests.
pub fn holder() -> ScAddress {
    ScAddress::Account(assay_chain::account_id([0x42; 32]))
}
