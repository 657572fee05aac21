//! The demo's world: a local network with the registry and gate deployed from the built WASM, classic
//! assets whose issuer flags and home domains are the eval subjects' recorded ones, and those subjects'
//! off-chain sources replayed over local HTTPS with an in-process CA.

use std::path::{Path, PathBuf};

use assay_attest::local_world::EXPERT;
use assay_attest::registry::account_id;
use assay_attest::AttestError;
use assay_scan::testsupport::{closed_port, ReplayServer, Reply};
use stellar_xdr::Asset;

pub use assay_attest::local_world::LocalWorld;

/// One asset as recorded in testdata/eval/NAME (its Horizon, stellar.toml and StellarExpert answers).
pub struct EvalRecording {
    pub name: String,
    pub code: String,
    pub issuer: String,
    pub domain: Option<String>,
    /// R=1 V=2 I=4 C=8, from the recorded Horizon account.
    pub flags: u32,
    pub dir: PathBuf,
}

impl EvalRecording {
    /// Reads subject.json and horizon-account.json; `issuer` overrides the recorded issuer (so two
    /// recordings of one asset can both run).
    pub fn load(
        eval: &Path,
        name: &str,
        issuer: Option<&str>,
    ) -> Result<EvalRecording, AttestError> {
        let dir = eval.join(name);
        let read = |f: &str| -> Result<serde_json::Value, AttestError> {
            let p = dir.join(f);
            let text = std::fs::read_to_string(&p).map_err(|e| {
                AttestError::Local(format!(
                    "{}: {e}; run from the repository root or pass --eval-dir",
                    p.display()
                ))
            })?;
            serde_json::from_str(&text)
                .map_err(|e| AttestError::Local(format!("{}: {e}", p.display())))
        };
        let subject = read("subject.json")?;
        let acct = read("horizon-account.json")?;
        let recording = |m: &str| AttestError::Local(m.to_string());
        let asset = subject["asset"]
            .as_str()
            .ok_or_else(|| recording("subject.json has no asset"))?;
        let (code, recorded) = asset
            .split_once('-')
            .ok_or_else(|| recording("asset is not CODE-ISSUER"))?;
        let f = &acct["flags"];
        let bit = |k: &str, v: u32| if f[k].as_bool() == Some(true) { v } else { 0 };
        Ok(EvalRecording {
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

    pub fn expected(&self) -> Result<serde_json::Value, AttestError> {
        let p = self.dir.join("expected.json");
        let local = |e: &dyn std::fmt::Display| AttestError::Local(format!("{}: {e}", p.display()));
        let text = std::fs::read_to_string(&p).map_err(|e| local(&e))?;
        serde_json::from_str(&text).map_err(|e| local(&e))
    }

    pub fn xdr(&self) -> Result<Asset, AttestError> {
        assay_attest::sac::xdr_asset(&self.code, &self.issuer)
            .map_err(|e| AttestError::Local(e.to_string()))
    }

    /// Creates this subject's issuer with its recorded flags and home domain, a holder trustline with
    /// `balance`, and the asset's Stellar Asset Contract. Returns the SAC id.
    pub fn issue_on(&self, w: &LocalWorld, balance: i64) -> Result<[u8; 32], AttestError> {
        let local =
            |step: &str, e: &dyn std::fmt::Display| AttestError::Local(format!("{step}: {e}"));
        let key = stellar_strkey::ed25519::PublicKey::from_string(&self.issuer)
            .map_err(|e| local(&self.issuer, &e))?;
        let iss = account_id(key.0);
        w.net.fund(&iss).map_err(|e| local("fund issuer", &e))?;
        w.net
            .admin_set_account_flags(&iss, self.flags)
            .map_err(|e| local("issuer flags", &e))?;
        if let Some(d) = &self.domain {
            w.net
                .admin_set_home_domain(&iss, d)
                .map_err(|e| local("home domain", &e))?;
        }
        let asset = self.xdr()?;
        w.net
            .admin_set_trustline(
                &account_id(w.holder.public_key()),
                &asset,
                balance,
                i64::MAX,
                1,
            )
            .map_err(|e| local("trustline", &e))?;
        w.invoker(&w.admin)
            .deploy_sac(&asset)
            .map_err(|e| AttestError::Chain(format!("deploy the asset contract: {e}")))
    }

    /// Serves the subject's recorded directory, blocklist and stellar.toml answers. A recorded `N` status
    /// is replayed as that status; a recorded network failure (timeout, dns-failure) as a refused
    /// connection.
    pub fn serve_on(&self, w: &mut LocalWorld) {
        let file = |f: &str| std::fs::read(self.dir.join(f)).ok();
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
        let issuer = &self.issuer;
        replay(
            &w.server,
            EXPERT,
            &format!("/explorer/directory/{issuer}"),
            "directory.json",
        );
        if let Some(d) = &self.domain {
            replay(
                &w.server,
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
                w.connect_to.retain(|r| !r.starts_with(&format!("{d}:")));
                w.connect_to
                    .push(format!("{d}:443:127.0.0.1:{}", closed_port()));
            } else {
                replay(&w.server, d, "/.well-known/stellar.toml", "stellar.toml");
            }
        }
    }
}
