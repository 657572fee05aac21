//! The deployment an offline run makes around the token: contracts deployed before it (a SEP-57 token's
//! compliance and identity verifier, a ledger the token keeps its balances in) and calls made after it
//! (binding the token, verifying the parties, minting through an operator's `mint(to, amount, operator)`).
//!
//! A set-up file (`assay sep41 --wasm FILE --setup SETUP.json`) says it in JSON:
//!
//! ```json
//! {
//!   "contracts": [
//!     { "name": "verifier", "wasm": "verifier.wasm", "constructor_args": ["@admin", "@admin"] }
//!   ],
//!   "constructor_args": ["Real", "RWA", "@admin", "@verifier"],
//!   "calls": [
//!     { "contract": "@verifier", "function": "set_verified", "args": ["@holder", true, "@admin"] },
//!     { "contract": "@token", "function": "mint", "args": ["@holder", 1000, "@admin"], "as": "@admin" }
//!   ]
//! }
//! ```
//!
//! Contracts are deployed in order, so a constructor may name the ones before it; `"@token"` is the token
//! once deployed; a call is signed by `as` (`"@admin"` when absent) and by no one else. A WASM path is
//! relative to the set-up file.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assay_chain::files::{read_capped, read_capped_bytes, ReadError};
use serde::Deserialize;
use serde_json::Value;

/// The largest set-up file read (a deployment description, not data).
pub const MAX_SETUP_FILE_BYTES: u64 = 1 << 20;
/// The largest contract WASM read (the network's own limit is 128 KiB).
pub const MAX_WASM_BYTES: u64 = 4 << 20;
/// Bounds on one deployment: contracts before the token, calls after it.
pub const MAX_CONTRACTS: usize = 16;
pub const MAX_CALLS: usize = 64;

/// Names a contract of the deployment cannot take: the parties, and the token itself.
const RESERVED: [&str; 4] = ["admin", "holder", "spender", "token"];

/// Contracts deployed before the token and calls made after it; empty for a token that stands alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Deployment {
    pub contracts: Vec<Contract>,
    /// The token's constructor arguments, when the set-up file gives them.
    pub constructor_args: Option<Value>,
    pub calls: Vec<Call>,
}

/// A contract deployed before the token, `"@name"` in later arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Contract {
    pub name: String,
    pub wasm: Vec<u8>,
    /// The WASM's path as the file gave it, for messages.
    pub origin: String,
    pub constructor_args: Option<Value>,
}

/// A call made once the token is deployed, before its holder is funded.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// `"@token"` or `"@NAME"` of a contract deployed before it.
    pub contract: String,
    pub function: String,
    /// An array in order or an object by parameter name (none: no arguments).
    #[serde(default = "no_args")]
    pub args: Value,
    /// The party that signs: `"@admin"` (default), `"@holder"` or `"@spender"`.
    #[serde(rename = "as", default = "admin")]
    pub signer: String,
}

fn no_args() -> Value {
    Value::Array(vec![])
}

fn admin() -> String {
    "@admin".into()
}

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupFile {
    #[serde(default)]
    contracts: Vec<ContractEntry>,
    #[serde(default)]
    constructor_args: Option<Value>,
    #[serde(default)]
    calls: Vec<Call>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContractEntry {
    name: String,
    wasm: PathBuf,
    #[serde(default)]
    constructor_args: Option<Value>,
}

/// Why a set-up file cannot be used; each names the file and what to change.
#[derive(Debug, thiserror::Error)]
pub enum DeploymentError {
    /// The set-up file itself cannot be read (missing, over [`MAX_SETUP_FILE_BYTES`], not text).
    #[error("--setup {0}")]
    Unreadable(ReadError),
    /// A contract's WASM cannot be read (missing, over [`MAX_WASM_BYTES`]).
    #[error(
        "--setup {path}: contract {name:?}: {error}; build it first, or give its path relative to \
         the set-up file"
    )]
    ContractWasm {
        path: String,
        name: String,
        error: ReadError,
    },
    /// The file reads, but does not describe a usable deployment.
    #[error("--setup {path}: {reason}")]
    Invalid { path: String, reason: String },
}

impl Deployment {
    /// Reads and checks the set-up file at `path`, and the WASM of every contract it names.
    pub fn load(path: &Path) -> Result<Deployment, DeploymentError> {
        let shown = path.display().to_string();
        let text = read_capped(path, MAX_SETUP_FILE_BYTES, "set-up files")
            .map_err(DeploymentError::Unreadable)?;
        let file: SetupFile =
            serde_json::from_str(&text).map_err(|e| DeploymentError::Invalid {
                path: shown.clone(),
                reason: format!(
                    "not a set-up file ({e}); it is a JSON object with \"contracts\", \
                 \"constructor_args\" and \"calls\" (docs/token-tests.md)"
                ),
            })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let mut contracts = Vec::with_capacity(file.contracts.len());
        for entry in file.contracts {
            let wasm_path = base.join(&entry.wasm);
            let wasm = read_capped_bytes(&wasm_path, MAX_WASM_BYTES, "contract WASM files")
                .map_err(|error| DeploymentError::ContractWasm {
                    path: shown.clone(),
                    name: entry.name.clone(),
                    error,
                })?;
            contracts.push(Contract {
                name: entry.name,
                wasm,
                origin: wasm_path.display().to_string(),
                constructor_args: entry.constructor_args,
            });
        }
        let deployment = Deployment {
            contracts,
            constructor_args: file.constructor_args,
            calls: file.calls,
        };
        deployment
            .check()
            .map_err(|reason| DeploymentError::Invalid {
                path: shown,
                reason,
            })?;
        Ok(deployment)
    }

    /// The deployment of the set-up file at `path`, or none (a token that stands alone).
    pub fn load_if_given(path: Option<&Path>) -> Result<Deployment, DeploymentError> {
        path.map_or(Ok(Deployment::default()), Deployment::load)
    }

    /// The names, bounds and signers are usable: each contract named once, with a name no party has, and
    /// every call to a contract deployed by then, signed by a party.
    pub fn check(&self) -> Result<(), String> {
        if self.contracts.len() > MAX_CONTRACTS || self.calls.len() > MAX_CALLS {
            return Err(format!(
                "{} contracts and {} calls; one deployment holds at most {MAX_CONTRACTS} and \
                 {MAX_CALLS}",
                self.contracts.len(),
                self.calls.len()
            ));
        }
        let mut names = BTreeSet::new();
        for contract in &self.contracts {
            let name = contract.name.as_str();
            let well_formed = (1..=32).contains(&name.len())
                && name.starts_with(|c: char| c.is_ascii_lowercase())
                && (name.chars()).all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !well_formed {
                return Err(format!(
                    "contract name {name:?}: a name is 1 to 32 of a-z, 0-9 and _, starting with a \
                     letter (it is written \"@{name}\" in arguments)"
                ));
            }
            if RESERVED.contains(&name) {
                return Err(format!(
                    "contract name {name:?} is taken by {}; choose another",
                    if name == "token" {
                        "the token under test"
                    } else {
                        "a party of the run"
                    }
                ));
            }
            if !names.insert(name) {
                return Err(format!("contract name {name:?} is given twice"));
            }
        }
        for (n, call) in self.calls.iter().enumerate() {
            let target = call.contract.strip_prefix('@').unwrap_or("");
            if target != "token" && !names.contains(target) {
                return Err(format!(
                    "call {} ({}.{}): \"contract\" is \"@token\" or \"@NAME\" of a contract listed \
                     under \"contracts\"",
                    n + 1,
                    call.contract,
                    call.function
                ));
            }
            if !["@admin", "@holder", "@spender"].contains(&call.signer.as_str()) {
                return Err(format!(
                    "call {} ({}.{}): \"as\" is \"@admin\", \"@holder\" or \"@spender\", not {:?}",
                    n + 1,
                    call.contract,
                    call.function,
                    call.signer
                ));
            }
        }
        Ok(())
    }

    /// The token's constructor arguments: `given` (by `given_by`, e.g. `--constructor-args`) or the set-up
    /// file's; never both, since one would silently lose.
    pub fn token_constructor_args(
        &self,
        given: Option<Value>,
        given_by: &str,
    ) -> Result<Option<Value>, String> {
        match (given, &self.constructor_args) {
            (Some(_), Some(_)) => Err(format!(
                "the constructor arguments are given twice, by {given_by} and by the set-up file; \
                 keep one"
            )),
            (given, from_file) => Ok(given.or_else(|| from_file.clone())),
        }
    }

    /// Whether `"@holder"` appears in the token's constructor arguments or any call's.
    pub fn names_holder(&self, constructor_args: Option<&Value>) -> bool {
        names(constructor_args, "@holder")
            || (self.calls.iter()).any(|c| names(Some(&c.args), "@holder"))
    }
}

/// Whether `json` holds the string `placeholder`, at any depth.
pub(crate) fn names(json: Option<&Value>, placeholder: &str) -> bool {
    match json {
        Some(Value::String(s)) => s == placeholder,
        Some(Value::Array(items)) => items.iter().any(|v| names(Some(v), placeholder)),
        Some(Value::Object(map)) => map.values().any(|v| names(Some(v), placeholder)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn invalid(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("helper.wasm"), b"\0asm\x01\0\0\0").unwrap();
        let path = write(dir.path(), "setup.json", text);
        match Deployment::load(&path) {
            Err(DeploymentError::Invalid { reason, .. }) => reason,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_set_up_file_reads_its_contracts_relative_to_itself() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("wasm")).unwrap();
        std::fs::write(dir.path().join("wasm/verifier.wasm"), b"\0asm\x01\0\0\0").unwrap();
        let path = write(
            dir.path(),
            "rwa.setup.json",
            r#"{
                "contracts": [{"name": "verifier", "wasm": "wasm/verifier.wasm", "constructor_args": ["@admin"]}],
                "constructor_args": ["@verifier"],
                "calls": [
                    {"contract": "@verifier", "function": "set_verified", "args": ["@holder", true]},
                    {"contract": "@token", "function": "mint", "args": {"to": "@spender"}, "as": "@holder"}
                ]
            }"#,
        );
        let d = Deployment::load(&path).unwrap();
        assert_eq!(d.contracts.len(), 1);
        assert_eq!(d.contracts[0].name, "verifier");
        assert_eq!(d.contracts[0].wasm, b"\0asm\x01\0\0\0");
        assert_eq!(
            d.contracts[0].constructor_args,
            Some(serde_json::json!(["@admin"]))
        );
        assert_eq!(d.constructor_args, Some(serde_json::json!(["@verifier"])));
        assert_eq!(
            d.calls[0].signer, "@admin",
            "a call is the admin's unless it says"
        );
        assert_eq!(d.calls[1].signer, "@holder");
        assert!(d.names_holder(None), "a call names the holder");
        assert!(!Deployment::default().names_holder(Some(&serde_json::json!(["@admin"]))));
        assert!(Deployment::default().names_holder(Some(&serde_json::json!({"to": ["@holder"]}))));
    }

    #[test]
    fn a_set_up_file_that_cannot_be_used_says_what_to_change() {
        let unknown = invalid(r#"{"contract": []}"#);
        assert!(unknown.contains("unknown field `contract`"), "{unknown}");
        assert!(unknown.contains("\"contracts\""), "{unknown}");
        let reserved = invalid(r#"{"contracts": [{"name": "token", "wasm": "helper.wasm"}]}"#);
        assert!(
            reserved.contains("taken by the token under test"),
            "{reserved}"
        );
        let party = invalid(r#"{"contracts": [{"name": "admin", "wasm": "helper.wasm"}]}"#);
        assert!(party.contains("taken by a party"), "{party}");
        let twice = invalid(
            r#"{"contracts": [{"name": "a", "wasm": "helper.wasm"}, {"name": "a", "wasm": "helper.wasm"}]}"#,
        );
        assert_eq!(twice, "contract name \"a\" is given twice");
        let shape = invalid(r#"{"contracts": [{"name": "Ledger-1", "wasm": "helper.wasm"}]}"#);
        assert!(
            shape.starts_with("contract name \"Ledger-1\": a name is 1 to 32"),
            "{shape}"
        );
        let target = invalid(r#"{"calls": [{"contract": "@ledger", "function": "f"}]}"#);
        assert!(
            target.starts_with("call 1 (@ledger.f): \"contract\" is"),
            "{target}"
        );
        let signer = invalid(r#"{"calls": [{"contract": "@token", "function": "f", "as": "G…"}]}"#);
        assert!(signer.contains("\"as\" is \"@admin\""), "{signer}");
        let many = format!(
            r#"{{"calls": [{}]}}"#,
            vec![r#"{"contract": "@token", "function": "f"}"#; MAX_CALLS + 1].join(",")
        );
        assert!(invalid(&many).contains("at most 16 and 64"));
    }

    #[test]
    fn a_missing_or_oversized_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Deployment::load(&dir.path().join("none.json")).unwrap_err();
        assert!(
            missing.to_string().contains("none.json: No such file"),
            "{missing}"
        );
        let big = write(
            dir.path(),
            "big.json",
            &" ".repeat(MAX_SETUP_FILE_BYTES as usize + 1),
        );
        let err = Deployment::load(&big).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "big.json is larger than 1048576 bytes (set-up files are at most that); refused unread"
            ),
            "{err}"
        );
        let no_wasm = write(
            dir.path(),
            "s.json",
            r#"{"contracts": [{"name": "ledger", "wasm": "ledger.wasm"}]}"#,
        );
        let err = Deployment::load(&no_wasm).unwrap_err().to_string();
        assert!(err.contains("contract \"ledger\": "), "{err}");
        assert!(err.contains("ledger.wasm: No such file"), "{err}");
        assert!(err.contains("build it first"), "{err}");
    }
}
