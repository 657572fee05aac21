//! Shared harness: a LocalNet with the registry and gate deployed from the built WASM, classic assets whose
//! issuer flags match eval subjects, and their off-chain sources replayed over local HTTPS.
#![allow(dead_code)]

use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::time::Duration;

use assay_attest::local_world::LocalWorld;
use assay_attest::registry;
use assay_attest::scanning::ScanSettings;
use assay_scan::net::mapping::Mappings;
use assay_scan::testsupport::Reply;
use stellar_xdr::{
    AccountId, AlphaNum12, AlphaNum4, Asset, AssetCode12, AssetCode4, ScMap, ScMapEntry, ScSymbol,
    ScVal,
};

pub use assay_attest::local_world::EXPERT;

/// The issuer of the eval subject `aqua-clear-verified` (see [`World::clear_aqua`]).
pub const AQUA: &str = "GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA";
pub use assay_attest::registry::account_id;
// Shared by several test crates, not all of which use it.
#[allow(unused_imports)]
pub use assay_attest::local_world::local_invoke_options;

pub mod proxy;

/// A suite party that signs with `key`.
pub fn party(key: &assay_chain::Signer) -> assay_sep41::Party {
    assay_sep41::Party {
        address: key.sc_address(),
        generated: false,
        can_sign: true,
        key_hint: "set ASSAY_OWNER_SECRET".into(),
        address_hint: String::new(),
    }
}

/// A contract string value.
pub fn string(s: &str) -> ScVal {
    ScVal::String(stellar_xdr::ScString(s.try_into().unwrap()))
}

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

pub fn g_account(g: &str) -> AccountId {
    account_id(
        stellar_strkey::ed25519::PublicKey::from_string(g)
            .unwrap()
            .0,
    )
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

/// The shared local world with the registry and gate deployed; panics where a test cannot go on.
pub struct World(LocalWorld);

impl Deref for World {
    type Target = LocalWorld;
    fn deref(&self) -> &LocalWorld {
        &self.0
    }
}

impl DerefMut for World {
    fn deref_mut(&mut self) -> &mut LocalWorld {
        &mut self.0
    }
}

impl World {
    /// Local network, registry (admin) with `attester` in its set, default-policy gate, replay servers for
    /// StellarExpert and `domains`.
    pub fn start(domains: &[&str]) -> World {
        Self::start_closing_every(domains, 100)
    }

    /// [`World::start`] with a ledger closing every `ledger_close_ms`.
    pub fn start_closing_every(domains: &[&str], ledger_close_ms: u64) -> World {
        // Builds the contracts when they are missing.
        wasm("assay_registry");
        wasm("assay_verdict_store");
        wasm("assay_gate_example");
        let mut world =
            LocalWorld::start_closing_every(domains, ledger_close_ms).expect("local world");
        let wasm_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wasm");
        world
            .deploy_registry_and_gate(&wasm_dir)
            .expect("deploy registry and gate");
        World(world)
    }

    /// Deploys the built contract `name` (e.g. `conformant_token`) with `args`.
    pub fn deploy(&self, name: &str, salt: u8, args: Vec<ScVal>) -> [u8; 32] {
        self.0.deploy(&wasm(name), salt, args).expect("deploy")
    }

    /// Deploys the token fixture `name` (conformant, vulnerable, upgradable, a defect build) with the
    /// world's admin as its admin, 7 decimals, and "Test Token" / "TEST".
    pub fn deploy_token(&self, name: &str, salt: u8) -> [u8; 32] {
        let admin = registry::account_val(self.admin.public_key());
        let args = vec![admin, ScVal::U32(7), string("Test Token"), string("TEST")];
        self.deploy(name, salt, args)
    }

    /// Deploys the upgradable-token fixture under `salt` and returns it with the code binding a
    /// verdict on it carries (the SHA-256 of its WASM): an asset the registry accepts writes for.
    pub fn bound_token(&self, salt: u8) -> ([u8; 32], registry::CodeBinding) {
        use sha2::Digest as _;
        let token = self.deploy_token("upgradable_token", salt);
        let hash: [u8; 32] = sha2::Sha256::digest(wasm("upgradable_token")).into();
        (token, registry::CodeBinding::Wasm(hash))
    }

    /// Deploys the Stellar Asset Contract of `asset` (as the world's admin); returns its id. Its admin is
    /// the asset's issuer.
    pub fn deploy_sac(&self, asset: &ClassicAsset) -> [u8; 32] {
        self.invoker(&self.admin)
            .deploy_sac(&asset.xdr())
            .expect("deploy the SAC")
    }

    /// `set_admin(new_admin)` on the Stellar Asset Contract `sac`, signed by its current admin `by`;
    /// returns the ledger it applied in.
    pub fn set_sac_admin(
        &self,
        sac: [u8; 32],
        by: &assay_chain::Signer,
        new_admin: [u8; 32],
    ) -> u32 {
        let f = registry::call(sac, "set_admin", vec![registry::account_val(new_admin)]);
        self.invoker(by).invoke(&f).expect("set_admin").ledger
    }

    /// Uploads the built contract `name` as the world's admin; returns its code's hash.
    pub fn upload(&self, name: &str) -> [u8; 32] {
        self.invoker(&self.admin)
            .upload_wasm(&wasm(name))
            .expect("upload")
    }

    /// Replaces the code of the upgradable token `token` (deployed by [`World::deploy_token`], so the
    /// world's admin is its admin) with the uploaded `wasm_hash`; returns the ledger it applied in.
    pub fn upgrade_token(&self, token: [u8; 32], wasm_hash: [u8; 32]) -> u32 {
        let hash = ScVal::Bytes(stellar_xdr::ScBytes(wasm_hash.to_vec().try_into().unwrap()));
        let f = registry::call(token, "upgrade", vec![hash]);
        self.invoker(&self.admin)
            .invoke(&f)
            .expect("upgrade")
            .ledger
    }

    /// Mints 1,000 units of `token` to the account of the key `seed`, as the admin (a `mint` event
    /// the fork's holder discovery can find).
    pub fn mint(&self, token: [u8; 32], seed: u8) {
        let to = assay_chain::Signer::from_seed([seed; 32]).public_key();
        let amount = ScVal::I128(stellar_xdr::Int128Parts { hi: 0, lo: 1000 });
        let f = registry::call(token, "mint", vec![registry::account_val(to), amount]);
        self.invoker(&self.admin).invoke(&f).expect("mint");
    }

    /// Gives the holder 1,000 units of `token` (from [`World::deploy_token`]) out of the admin's supply.
    pub fn fund_holder(&self, token: [u8; 32]) {
        let amount = ScVal::I128(stellar_xdr::Int128Parts { hi: 0, lo: 1_000 });
        let transfer = registry::call(
            token,
            "transfer",
            vec![
                registry::account_val(self.admin.public_key()),
                registry::account_val(self.holder.public_key()),
                amount,
            ],
        );
        self.invoker(&self.admin)
            .invoke(&transfer)
            .expect("fund the holder");
    }

    /// The example gate, deployed under `salt`, under a policy that tolerates replaceable code (ceiling
    /// high; freezing and confiscation still forbidden), so an upgradable token is admitted until its code
    /// is replaced.
    pub fn tolerant_gate(&self, salt: u8) -> [u8; 32] {
        let entry = |key: &str, val: ScVal| ScMapEntry {
            key: ScVal::Symbol(ScSymbol(key.try_into().unwrap())),
            val,
        };
        let policy = ScVal::Map(Some(ScMap(
            vec![
                entry("forbidden_mask", ScVal::U32(2 | 4 | 1024 | 2048)),
                entry("max_age_secs", ScVal::U64(86_400)),
                entry("max_severity", ScVal::U32(3)),
            ]
            .try_into()
            .unwrap(),
        )));
        self.deploy(
            "assay_gate_example",
            salt,
            vec![registry::contract_val(self.store), policy],
        )
    }

    /// Reads and evaluates `token` as `assay attest C…` does (with the suite when `suite` is given).
    pub fn evaluate_token(
        &self,
        token: [u8; 32],
        suite: Option<&assay_attest::sep41::Sep41Runner>,
    ) -> (assay_attest::targets::Target, assay_core::Report) {
        let id = format!("{}", stellar_strkey::Contract(token));
        let target =
            assay_attest::targets::resolve(&id, &self.spec.passphrase, &self.spec.passphrase)
                .unwrap();
        let report = assay_attest::targets::evaluate_targets(
            &self.settings(&[]),
            &self.spec.rpc_url,
            &self.spec.passphrase,
            std::slice::from_ref(&target),
            suite,
        )
        .unwrap()
        .remove(0)
        .report
        .unwrap();
        (target, report)
    }

    /// The arguments that point `assay attest`, `verify` and `watch` at this world: its registry and
    /// network, then [`LocalWorld::source_args`].
    pub fn cli_args(&self, ca: &std::path::Path) -> Vec<String> {
        let mut args = vec![
            "--registry".to_string(),
            format!("{}", stellar_strkey::Contract(self.registry)),
            "--rpc-url".into(),
            self.net.rpc_url(),
            "--network-passphrase".into(),
            self.net.passphrase().to_string(),
        ];
        args.extend(self.source_args(ca));
        args
    }

    /// Waits (bounded) until the ledger clock has passed `t`, so the next write is newer than a
    /// revocation at `t`: the registry counts a verdict written in its revocation's second as older.
    pub fn after(&self, t: u64) {
        for _ in 0..100 {
            if assay_attest::verify::ledger_time(&self.rpc).unwrap() > t {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the local network's clock did not pass {t}");
    }

    /// The top of a `watch.toml` that points `assay watch` at this world (registry, network, sources,
    /// `history`, the CA and a connect-to rule per replayed `domains`); callers append their own keys and
    /// `[[asset]]` tables.
    pub fn watch_toml(
        &self,
        ca: &std::path::Path,
        history: &std::path::Path,
        domains: &[&str],
    ) -> String {
        let connect_to: Vec<String> = std::iter::once(EXPERT)
            .chain(domains.iter().copied())
            .map(|host| format!("\"{}\"", self.server.connect_https(host)))
            .collect();
        format!(
            "registry = \"{}\"\nrpc_url = \"{}\"\nnetwork_passphrase = \"{}\"\nhorizon_url = \"{}\"\nexpert_url = \"https://{EXPERT}\"\nhistory = \"{}\"\ncacert = [\"{}\"]\nconnect_to = [{}]\n",
            stellar_strkey::Contract(self.registry),
            self.net.rpc_url(),
            self.net.passphrase(),
            self.net.horizon_url(),
            history.display(),
            ca.display(),
            connect_to.join(", "),
        )
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
                &account_id(self.holder.public_key()),
                &a.xdr(),
                10_000_000,
                i64::MAX,
                1,
            )
            .unwrap();
        a
    }

    /// `issuers` issuers (keys `[n, salt, salt, …]`) of one asset per code in `codes` each, spread over
    /// `domains` (issuer `n` on `domains[n % len]`), each serving the eval subject `aqua-clear-verified`
    /// (clear, verified); each asset with a holder trustline so Horizon lists it. For the benchmarks and
    /// the tests at operator scale.
    pub fn issue_many(
        &self,
        issuers: u8,
        salt: u8,
        codes: &[&'static str],
        domains: &[&str],
    ) -> Vec<ClassicAsset> {
        let mut assets = Vec::new();
        for n in 0..issuers {
            let mut key = [salt; 32];
            key[0] = n;
            let issuer = stellar_strkey::ed25519::PublicKey(key)
                .to_string()
                .as_str()
                .to_string();
            let domain = domains[n as usize % domains.len()];
            self.serve_eval("aqua-clear-verified", &issuer, domain);
            for (k, code) in codes.iter().enumerate() {
                let asset = if k == 0 {
                    self.issue(code, &issuer, 0, Some(domain))
                } else {
                    let asset = ClassicAsset {
                        code,
                        issuer: issuer.clone(),
                    };
                    self.net
                        .admin_set_trustline(
                            &account_id(self.holder.public_key()),
                            &asset.xdr(),
                            10_000_000,
                            i64::MAX,
                            1,
                        )
                        .expect("trustline");
                    asset
                };
                assets.push(asset);
            }
        }
        assets
    }

    /// AQUA of [`AQUA`] as the eval subject `aqua-clear-verified` has it: no flags, the issuer locked
    /// (master weight 0: no flag and no key, so no power over holders: clear), its sources served on
    /// `aqua.network`, which the world must replay.
    pub fn clear_aqua(&self) -> ClassicAsset {
        let aqua = self.issue("AQUA", AQUA, 0, Some("aqua.network"));
        self.lock(AQUA);
        self.serve_eval("aqua-clear-verified", AQUA, "aqua.network");
        aqua
    }

    /// Locks `asset`'s issuer for good (master weight 0, no other signer): it holds no power its flags do
    /// not give it, since it can never set a flag again (no latent freeze).
    pub fn lock(&self, issuer: &str) {
        self.net
            .admin_set_thresholds(&g_account(issuer), [0, 0, 0, 0])
            .unwrap();
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

    /// An asset whose reputation cannot be determined: StellarExpert's directory answers 500 every
    /// time for `issuer`, `domain` is not blocked and serves no stellar.toml.
    pub fn serve_outage(&self, issuer: &str, domain: &str) {
        self.route(
            EXPERT,
            &format!("/explorer/directory/{issuer}"),
            Reply::status(500),
        );
        self.route(
            EXPERT,
            &format!("/explorer/directory/blocked-domains/{domain}"),
            Reply::json(format!(r#"{{"domain":"{domain}","blocked":false}}"#)),
        );
        self.route(domain, "/.well-known/stellar.toml", Reply::status(404));
    }

    /// A watcher over `assets` writing to this world's registry as its attester through `rpc`, with
    /// `settings`' sources and `config`'s scan limits; no history, SEP-41 runner, discovery or reaction
    /// (callers set those fields).
    pub fn watcher<'a>(
        &'a self,
        rpc: &'a assay_chain::rpc::RpcClient,
        mut settings: ScanSettings,
        config: assay_attest::watch::WatchConfig,
        assets: Vec<(assay_core::Token, [u8; 32], Duration)>,
    ) -> assay_attest::watch::Watcher<'a> {
        settings.limits = config.scan_limits();
        assay_attest::watch::Watcher {
            rpc,
            network: &self.spec,
            signer: &self.attester,
            registry: self.registry,
            settings,
            config,
            assets,
            history: None,
            health: Default::default(),
            options: local_invoke_options(),
            sep41: None,
            unconfirmed: Default::default(),
            discovery: None,
            reaction: None,
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
            rpc_url: None,
            ledger_floor: Default::default(),
            expert_url: format!("https://{EXPERT}"),
            mappings: Mappings {
                resolve: vec![],
                connect_to,
            },
            extra_roots: roots,
            timeout: Duration::from_secs(5),
            limits: Default::default(),
        }
    }

    /// The gate's verdict on `asset`: `Ok(())` or the contract error code, by simulation.
    pub fn gate_check(&self, asset: [u8; 32]) -> Result<(), u32> {
        let f = registry::call(self.gate, "check", vec![registry::contract_val(asset)]);
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
