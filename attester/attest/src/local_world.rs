//! A throwaway world for the demo and the end-to-end tests: a local network with funded admin,
//! attester and holder keys, the registry and gate deployed from built WASM, and replay servers that
//! answer for StellarExpert and the assets' home domains over local HTTPS with an in-process CA.
//!
//! Only with the `local-world` feature (`assay demo` and this crate's tests); never used against a
//! real network.
use std::path::{Path, PathBuf};
use std::time::Duration;

use assay_chain::identity::Signer;
use assay_chain::network::NetworkSpec;
use assay_chain::rpc::RpcClient;
use assay_chain::submit::{ChainError, InvokeOptions, Invoker};
use assay_localnet::{LocalNet, LocalNetConfig};
use assay_scan::testsupport::ReplayServer;
use assay_sep41::checks::i128_val;
use stellar_xdr::{
    ContractId, Hash, InvokeContractArgs, ScAddress, ScSymbol, ScVal, SorobanAuthorizedFunction,
    SorobanAuthorizedInvocation,
};

use crate::registry::{self, account_id, contract_val};
use crate::AttestError;

/// The StellarExpert host the replay server answers for.
pub const EXPERT: &str = "api.stellar.expert";

/// Invoke options at the local network's pace (it closes a ledger every 100 ms). Uncapped fees:
/// the world's own set-up deploys contract code, whose rent for the maximum TTL (about 24 XLM for
/// the registry) is above the attester's default cap for a write.
pub fn local_invoke_options() -> InvokeOptions {
    InvokeOptions {
        poll_interval: Duration::from_millis(50),
        try_again_backoff: Duration::from_millis(20),
        follow_grace: Duration::from_secs(1),
        max_fee: u32::MAX,
        ..InvokeOptions::default()
    }
}

pub struct LocalWorld {
    /// Runs the replay servers; dropping it stops them.
    _rt: tokio::runtime::Runtime,
    pub net: LocalNet,
    pub spec: NetworkSpec,
    pub rpc: RpcClient,
    pub admin: Signer,
    pub attester: Signer,
    pub holder: Signer,
    /// Zero until [`LocalWorld::deploy_registry_and_gate`].
    pub registry: [u8; 32],
    /// The registry's verdict store, which the gate reads.
    pub store: [u8; 32],
    pub gate: [u8; 32],
    pub server: ReplayServer,
    /// `--connect-to` rules sending every replayed host to the replay server.
    pub connect_to: Vec<String>,
    pub dir: tempfile::TempDir,
}

impl LocalWorld {
    /// Starts the network (a ledger every 100 ms) and the replay servers for StellarExpert and
    /// `domains`; funds the keys.
    pub fn start(domains: &[&str]) -> Result<LocalWorld, AttestError> {
        Self::start_closing_every(domains, 100)
    }

    /// [`LocalWorld::start`] with a ledger closing every `ledger_close_ms` (5,000 like the public networks).
    pub fn start_closing_every(
        domains: &[&str],
        ledger_close_ms: u64,
    ) -> Result<LocalWorld, AttestError> {
        let local = |e: &dyn std::fmt::Display| AttestError::Local(e.to_string());
        let net = LocalNet::start(LocalNetConfig {
            port: 0,
            ledger_close_ms,
            ..LocalNetConfig::default()
        })
        .map_err(|e| local(&format!("local network: {e}")))?;
        let spec = NetworkSpec {
            name: "local".into(),
            rpc_url: net.rpc_url(),
            passphrase: net.passphrase().into(),
        };
        let rpc = RpcClient::new(&spec.rpc_url).map_err(|e| AttestError::Chain(e.to_string()))?;
        // Keys from fixed seeds: they exist only on this throwaway network.
        let admin = Signer::from_seed([11; 32]);
        let attester = Signer::from_seed([12; 32]);
        let holder = Signer::from_seed([13; 32]);
        for s in [&admin, &attester, &holder] {
            net.fund(&account_id(s.public_key()))
                .map_err(|e| local(&format!("fund: {e}")))?;
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| local(&e))?;
        let mut hosts = vec![EXPERT];
        hosts.extend_from_slice(domains);
        let server = rt.block_on(ReplayServer::start(&hosts));
        let connect_to = hosts.iter().map(|h| server.connect_https(h)).collect();
        Ok(LocalWorld {
            _rt: rt,
            net,
            spec,
            rpc,
            admin,
            attester,
            holder,
            registry: [0; 32],
            store: [0; 32],
            gate: [0; 32],
            server,
            connect_to,
            dir: tempfile::tempdir().map_err(|e| local(&e))?,
        })
    }

    /// An invoker for `signer` that polls at the local network's pace.
    pub fn invoker<'a>(&'a self, signer: &'a Signer) -> Invoker<'a> {
        Invoker {
            rpc: &self.rpc,
            network: &self.spec,
            signer,
            options: local_invoke_options(),
        }
    }

    /// Uploads `wasm` and creates a contract from it with `args`, as the admin.
    pub fn deploy(&self, wasm: &[u8], salt: u8, args: Vec<ScVal>) -> Result<[u8; 32], AttestError> {
        let inv = self.invoker(&self.admin);
        let hash = inv
            .upload_wasm(wasm)
            .map_err(|e| AttestError::Chain(format!("upload: {e}")))?;
        inv.create_contract(hash, [salt; 32], args)
            .map_err(|e| AttestError::Chain(format!("deploy: {e}")))
    }

    /// Deploys the registry (admin, with the attester in its set) and the default-policy gate from
    /// `wasm_dir` (`target/wasm`).
    pub fn deploy_registry_and_gate(&mut self, wasm_dir: &Path) -> Result<(), AttestError> {
        let read = |n: &str| {
            let p = wasm_dir.join(format!("{n}.wasm"));
            std::fs::read(&p).map_err(|e| {
                AttestError::Local(format!(
                    "{}: {e}; build the contracts first with scripts/build-wasm.sh",
                    p.display()
                ))
            })
        };
        // A local network upgrades without notice (delay 0, explicitly allowed).
        let args = registry::constructor_args(self.admin.public_key(), 0);
        self.registry = self.deploy(&read("assay_registry")?, 1, args)?;
        let add = registry::call(
            self.registry,
            "add_attester",
            vec![registry::account_val(self.attester.public_key())],
        );
        self.invoker(&self.admin)
            .invoke(&add)
            .map_err(|e| AttestError::Chain(format!("add_attester: {e}")))?;
        // Consumers read the registry's verdict store, which the registry publishes every change to.
        // A salt no test's own deployment uses (they count up from 1).
        self.store = self.deploy(
            &read("assay_verdict_store")?,
            0xFE,
            vec![contract_val(self.registry)],
        )?;
        let bind = registry::call(
            self.registry,
            "bind_verdict_store",
            vec![contract_val(self.store)],
        );
        self.invoker(&self.admin)
            .invoke(&bind)
            .map_err(|e| AttestError::Chain(format!("bind_verdict_store: {e}")))?;
        self.gate = self.deploy(
            &read("assay_gate_example")?,
            2,
            vec![contract_val(self.store), ScVal::Void],
        )?;
        Ok(())
    }

    /// Writes the replay servers' CA certificate into the world's directory (for `--cacert`).
    pub fn ca(&self) -> PathBuf {
        self.server.write_ca(self.dir.path())
    }

    /// The source arguments of `assay scan`, `attest`, `verify` and `watch` for this world: its Horizon,
    /// the replayed StellarExpert and home domains, trusted through the CA file `ca` (see [`Self::ca`]).
    pub fn source_args(&self, ca: &Path) -> Vec<String> {
        let mut args = vec![
            "--horizon-url".to_string(),
            self.net.horizon_url(),
            "--expert-url".into(),
            format!("https://{EXPERT}"),
            "--cacert".into(),
            ca.display().to_string(),
        ];
        for rule in &self.connect_to {
            args.push("--connect-to".into());
            args.push(rule.clone());
        }
        args
    }

    /// Invokes the gate's `deposit` of `amount` of `asset` from the holder: `Ok(())`, or the contract
    /// error code the gate refused with (nothing is submitted when simulation refuses).
    pub fn deposit(&self, asset: [u8; 32], amount: i128) -> Result<(), Result<u32, AttestError>> {
        self.deposit_into(self.gate, asset, amount)
    }

    /// [`LocalWorld::deposit`] into another gate, e.g. one deployed with its own policy.
    pub fn deposit_into(
        &self,
        gate: [u8; 32],
        asset: [u8; 32],
        amount: i128,
    ) -> Result<(), Result<u32, AttestError>> {
        let f = registry::call(
            gate,
            "deposit",
            vec![
                contract_val(asset),
                registry::account_val(self.holder.public_key()),
                i128_val(amount),
            ],
        );
        // The holder authorizes the deposit and, inside it, exactly the token transfer to the gate.
        let transfer = SorobanAuthorizedInvocation {
            function: SorobanAuthorizedFunction::ContractFn(InvokeContractArgs {
                contract_address: ScAddress::Contract(ContractId(Hash(asset))),
                function_name: ScSymbol("transfer".try_into().expect("a symbol")),
                args: vec![
                    registry::account_val(self.holder.public_key()),
                    contract_val(gate),
                    i128_val(amount),
                ]
                .try_into()
                .expect("three arguments"),
            }),
            sub_invocations: Default::default(),
        };
        let mut invoker = self.invoker(&self.holder);
        invoker.options.authorized_sub_invocations = vec![transfer];
        match invoker.invoke(&f) {
            Ok(_) => Ok(()),
            Err(ChainError::Simulation(text)) => {
                Err(assay_chain::submit::contract_error_code(&text)
                    .ok_or(AttestError::Chain(format!("no contract error in: {text}"))))
            }
            Err(e) => Err(Err(AttestError::Chain(e.to_string()))),
        }
    }

    /// The gate's recorded deposit balance of `asset` for the holder.
    pub fn gate_balance(&self, asset: [u8; 32]) -> Result<i128, AttestError> {
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
            Ok(other) => Err(AttestError::Chain(format!("balance returned {other:?}"))),
            Err(e) => Err(AttestError::Chain(e.to_string())),
        }
    }

    /// The registry's `is_safe(asset, max_severity, max_age_secs)`, by simulation (nothing is signed).
    pub fn is_safe(
        &self,
        asset: [u8; 32],
        max_severity: u32,
        max_age_secs: u64,
    ) -> Result<bool, AttestError> {
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
            Ok(other) => Err(AttestError::Chain(format!("is_safe returned {other:?}"))),
            Err(e) => Err(AttestError::Chain(e.to_string())),
        }
    }
}
