//! Shared harness: local HTTPS/HTTP replay servers for real host names, and the real `assay` binary
//! pointed at them with `--connect-to` and `--cacert`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assay_scan::testsupport::{ReplayServer, Reply};
use serde_json::Value;

pub const HORIZON: &str = "horizon.stellar.org";
pub const EXPERT: &str = "api.stellar.expert";
pub const LISTS: &str = "lists.example.org";

pub struct Harness {
    pub rt: tokio::runtime::Runtime,
    pub server: ReplayServer,
    pub dir: tempfile::TempDir,
    pub hosts: Vec<String>,
    pub ca: PathBuf,
}

/// What one run of the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The JSON reports on stdout, one per line.
    pub fn reports(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    pub fn report(&self) -> Value {
        let mut reports = self.reports();
        assert_eq!(
            reports.len(),
            1,
            "stdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        reports.remove(0)
    }
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Harness {
    /// Servers with a certificate for Horizon, StellarExpert, the list host and `domains`.
    pub fn new(domains: &[&str]) -> Harness {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut hosts: Vec<String> = vec![HORIZON.into(), EXPERT.into(), LISTS.into()];
        hosts.extend(domains.iter().map(|d| d.to_string()));
        let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
        let server = rt.block_on(ReplayServer::start(&names));
        let dir = tempfile::tempdir().unwrap();
        let ca = server.write_ca(dir.path());
        // Horizon's root names the network it serves; `assay scan` reads it before anything else.
        server.route(
            HORIZON,
            "/",
            vec![Reply::horizon_root(assay_core::PUBNET_PASSPHRASE)],
        );
        Harness {
            rt,
            server,
            dir,
            hosts,
            ca,
        }
    }

    pub fn history_path(&self) -> PathBuf {
        self.dir.path().join("history.sqlite3")
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// Runs `assay` with `args`; every known host reaches the trusted HTTPS listener unless
    /// `overrides` (earlier `--connect-to` rules win) send it elsewhere.
    pub fn assay_with(&self, args: &[&str], overrides: &[String]) -> Run {
        self.assay_env(args, overrides, &[])
    }

    /// [`Harness::assay_with`] with `env` set after the harness has cleared its own variables.
    pub fn assay_env(&self, args: &[&str], overrides: &[String], env: &[(&str, &str)]) -> Run {
        self.command(args, overrides, env)
            .output()
            .expect("run assay")
            .into()
    }

    /// The command [`Harness::assay_env`] runs, for a test that sets up its standard streams itself.
    pub fn command(&self, args: &[&str], overrides: &[String], env: &[(&str, &str)]) -> Command {
        // The subcommand first, then the harness's options, then the test's arguments (which may end
        // with `--` and positionals).
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_assay"));
        cmd.args(&args[..1]);
        for rule in overrides {
            cmd.arg("--connect-to").arg(rule);
        }
        if args.first() == Some(&"scan") {
            for host in &self.hosts {
                cmd.arg("--connect-to").arg(self.server.connect_https(host));
            }
            cmd.arg("--cacert").arg(&self.ca);
            if !args.contains(&"--no-cache") && !args.contains(&"--cache-dir") {
                cmd.arg("--cache-dir").arg(self.cache_dir());
            }
        }
        if !args.contains(&"--no-history") && !args.contains(&"--history") {
            cmd.arg("--history").arg(self.history_path());
        }
        cmd.args(&args[1..]);
        cmd.env_remove("ASSAY_HORIZON_URL")
            .env_remove("ASSAY_STELLAR_EXPERT_URL")
            .env_remove("ASSAY_RESOLVE")
            .env_remove("ASSAY_CONNECT_TO")
            .env_remove("ASSAY_CACERT")
            .env_remove("STELLAR_NETWORK")
            .env("HOME", self.dir.path())
            .env("XDG_CACHE_HOME", self.dir.path().join("xdg-cache"))
            .env("XDG_DATA_HOME", self.dir.path().join("xdg-data"));
        cmd.envs(env.iter().copied());
        cmd
    }

    pub fn assay(&self, args: &[&str]) -> Run {
        self.assay_with(args, &[])
    }

    pub fn route(&self, host: &str, path: &str, replies: Vec<Reply>) {
        self.server.route(host, path, replies);
    }
}

/// Issuer flags as R V I C.
#[derive(Clone, Copy)]
pub struct Flags(pub bool, pub bool, pub bool, pub bool);

fn flags_json(f: Flags) -> Value {
    serde_json::json!({
        "auth_required": f.0, "auth_revocable": f.1, "auth_immutable": f.2, "auth_clawback_enabled": f.3
    })
}

pub fn assets_path(code: &str, issuer: &str) -> String {
    format!("/assets?asset_code={code}&asset_issuer={issuer}")
}

pub fn account_path(issuer: &str) -> String {
    format!("/accounts/{issuer}")
}

pub fn directory_path(issuer: &str) -> String {
    format!("/explorer/directory/{issuer}")
}

pub fn blocked_path(domain: &str) -> String {
    format!("/explorer/directory/blocked-domains/{domain}")
}

pub const TOML_PATH: &str = "/.well-known/stellar.toml";

pub fn assets_body(code: &str, issuer: &str, flags: Flags) -> String {
    serde_json::json!({
        "_links": {"self": {"href": ""}},
        "_embedded": {"records": [{
            "asset_type": if code.len() <= 4 { "credit_alphanum4" } else { "credit_alphanum12" },
            "asset_code": code, "asset_issuer": issuer,
            "flags": flags_json(flags)
        }]}
    })
    .to_string()
}

pub fn account_body(issuer: &str, home_domain: Option<&str>, flags: Flags) -> String {
    let mut v = serde_json::json!({"id": issuer, "account_id": issuer, "sequence": "1", "flags": flags_json(flags)});
    if let Some(d) = home_domain {
        v["home_domain"] = Value::String(d.to_string());
    }
    v.to_string()
}

pub fn toml_claiming(code: &str, issuer: &str) -> String {
    format!("[DOCUMENTATION]\nORG_NAME=\"Test Org\"\n\n[[CURRENCIES]]\ncode=\"{code}\"\nissuer=\"{issuer}\"\n")
}

pub fn directory_body(issuer: &str, name: &str, domain: &str, tags: &[&str]) -> String {
    serde_json::json!({"address": issuer, "name": name, "domain": domain, "tags": tags}).to_string()
}

pub fn blocked_body(domain: &str, blocked: bool) -> String {
    serde_json::json!({"domain": domain, "blocked": blocked}).to_string()
}

pub fn expert_json(body: String) -> Reply {
    Reply::status_with(
        200,
        &[
            ("content-type", "application/json"),
            ("cache-control", "max-age=20"),
        ],
        body,
    )
}

/// A complete, healthy subject: every source answers.
pub struct Healthy {
    pub code: &'static str,
    pub issuer: &'static str,
    pub domain: &'static str,
    pub flags: Flags,
}

pub const USDC: Healthy = Healthy {
    code: "USDC",
    issuer: "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
    domain: "circle.com",
    flags: Flags(false, true, false, false),
};

impl Healthy {
    pub fn id(&self) -> String {
        format!("{}-{}", self.code, self.issuer)
    }

    /// Routes every source to a healthy answer; the toml claims the asset, the list carries it.
    pub fn route_all(&self, h: &Harness) {
        h.route(
            HORIZON,
            &assets_path(self.code, self.issuer),
            vec![Reply::json(assets_body(self.code, self.issuer, self.flags))],
        );
        h.route(
            HORIZON,
            &account_path(self.issuer),
            vec![Reply::json(account_body(
                self.issuer,
                Some(self.domain),
                self.flags,
            ))],
        );
        h.route(
            self.domain,
            TOML_PATH,
            vec![Reply::text(toml_claiming(self.code, self.issuer))],
        );
        h.route(
            EXPERT,
            &directory_path(self.issuer),
            vec![expert_json(directory_body(
                self.issuer,
                "Test Org",
                self.domain,
                &["issuer"],
            ))],
        );
        h.route(
            EXPERT,
            &blocked_path(self.domain),
            vec![expert_json(blocked_body(self.domain, false))],
        );
        h.route(
            LISTS,
            "/list.json",
            vec![Reply::json(
                serde_json::json!({
                    "name": "Test List", "provider": "Tests", "version": "1.0", "network": "public",
                    "assets": [{"code": self.code, "issuer": self.issuer, "name": "Test coin", "org": "Test Org", "domain": self.domain}]
                })
                .to_string(),
            )],
        );
    }
}

/// Evidence lines of `report` from `source`.
pub fn evidence_from<'a>(report: &'a Value, source: &str) -> Vec<&'a Value> {
    report["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["source"] == source
                || e["source"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(&format!("{source}/")))
        })
        .collect()
}

pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The contracts the CLI's end-to-end runs load: (package, `.wasm` name).
const E2E_CONTRACTS: [(&str, &str); 6] = [
    ("assay-registry", "assay_registry"),
    ("assay-verdict-store", "assay_verdict_store"),
    ("assay-gate-example", "assay_gate_example"),
    ("conformant-token", "conformant_token"),
    ("vulnerable-token", "vulnerable_token"),
    ("upgradable-token", "upgradable_token"),
];

/// What those `.wasm` files are built from: the contracts' crates (and the interface crate the
/// registry, store and gate use), the manifest and lock, the build script and its spec shaker.
const E2E_SOURCES: [&str; 11] = [
    "contracts/registry",
    "contracts/registry-interface",
    "contracts/verdict-store",
    "gate-example",
    "fixtures/conformant-token",
    "fixtures/vulnerable-token",
    "fixtures/upgradable-token",
    "Cargo.toml",
    "Cargo.lock",
    "scripts/build-wasm.sh",
    "scripts/spec-shake",
];

/// Builds the contracts the CLI's end-to-end runs load with scripts/build-wasm.sh when one of
/// their `.wasm` files in `target/wasm/` is missing or older than anything it is built from, so a
/// test never runs against a stale module.
pub fn ensure_wasm(root: &Path) {
    let wasm: Vec<PathBuf> = (E2E_CONTRACTS.iter())
        .map(|(_, name)| root.join(format!("target/wasm/{name}.wasm")))
        .collect();
    let sources: Vec<PathBuf> = E2E_SOURCES.iter().map(|p| root.join(p)).collect();
    if wasm_is_stale(&wasm, &sources) {
        let status = Command::new(root.join("scripts/build-wasm.sh"))
            .args(E2E_CONTRACTS.iter().map(|(package, _)| package))
            .status()
            .expect("run scripts/build-wasm.sh");
        assert!(status.success(), "scripts/build-wasm.sh failed");
    }
}

pub use crate::fixture_tokens::wasm_is_stale;

#[test]
fn a_wasm_older_than_its_source_or_missing_is_stale() {
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    let (wasm, src) = (dir.path().join("c.wasm"), dir.path().join("crate"));
    std::fs::create_dir_all(src.join("src")).unwrap();
    std::fs::create_dir_all(src.join("test_snapshots")).unwrap();
    let set = |p: &Path, t: SystemTime| {
        let f = std::fs::File::options()
            .create(true)
            .append(true)
            .open(p)
            .unwrap();
        f.set_modified(t).unwrap();
    };
    let t0 = SystemTime::now() - Duration::from_secs(3_600);
    let lib = src.join("src/lib.rs");
    set(&lib, t0);
    let (wasm_list, sources) = (vec![wasm.clone()], vec![src.clone()]);
    assert!(
        wasm_is_stale(&wasm_list, &sources),
        "a missing .wasm is stale"
    );
    set(&wasm, t0 + Duration::from_secs(60));
    assert!(!wasm_is_stale(&wasm_list, &sources));
    // A snapshot the tests write is not a source.
    set(
        &src.join("test_snapshots/t.json"),
        t0 + Duration::from_secs(600),
    );
    assert!(!wasm_is_stale(&wasm_list, &sources));
    // An edited source file makes it stale, however deep.
    set(&lib, t0 + Duration::from_secs(120));
    assert!(wasm_is_stale(&wasm_list, &sources));
}

/// Runs the `assay` binary with `args` against the local world `w` (its registry and network, its sources
/// through `ca`), the attester's `secret` in `STELLAR_SECRET_KEY`: its exit code and its stdout and stderr
/// together. The secret is never printed.
pub fn assay_on_world(
    w: &crate::world::World,
    ca: &Path,
    args: &[&str],
    secret: &str,
) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .args(w.cli_args(ca))
        .env("STELLAR_SECRET_KEY", secret)
        .env("HOME", w.dir.path())
        .env_remove("STELLAR_NETWORK")
        .output()
        .unwrap();
    let text = stdout_and_stderr(&out);
    assert!(!text.contains(secret), "the secret is never printed");
    (out.status.code(), text)
}

/// What a finished command printed: its stdout, then its stderr.
/// `assay watch --once --config CONFIG` with the signing key in `STELLAR_SECRET_KEY` and `home` as HOME
/// (no `ASSAY_HISTORY` from the environment: the config names the history).
pub fn watch_once(config: &Path, secret: &str, home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["watch", "--once", "--config"])
        .arg(config)
        .env("STELLAR_SECRET_KEY", secret)
        .env("HOME", home)
        .env_remove("ASSAY_HISTORY")
        .output()
        .unwrap()
}

pub fn stdout_and_stderr(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The issuer of OUTG in [`aqua_and_outage`].
pub const OUTG: &str = "GARDNV3Q7YGT4AKSDF25LT32YSCCW4EV22Y2TV3I2PU2MMXJTEDL5T55";

/// A local world replaying `aqua.network` and `outage.example`: AQUA clear and verified
/// ([`crate::world::World::clear_aqua`]), and OUTG of [`OUTG`] (no flags, not locked), whose directory
/// answers 500 every time (reputation undetermined). With the CA its sources are served under, and the
/// world's attester key (seed 12) as the environment gives it.
pub fn aqua_and_outage() -> (crate::world::World, PathBuf, String) {
    let w = crate::world::World::start(&["aqua.network", "outage.example"]);
    w.clear_aqua();
    w.issue("OUTG", OUTG, 0, Some("outage.example"));
    w.serve_outage(OUTG, "outage.example");
    let ca = w.ca();
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([12; 32]));
    (w, ca, secret)
}
