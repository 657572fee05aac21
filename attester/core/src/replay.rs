//! Builds a [`Subject`] from recorded raw source answers — the eval data under `testdata/eval/<name>/` — with
//! the same parsers the scan uses. Pure: the caller supplies a `read` function that returns a file's bytes,
//! so this module never touches the filesystem itself.
//!
//! Layout (documented in `testdata/eval/README.md`): `subject.json` (metadata), `expected.json`,
//! `horizon-assets.json`, `horizon-account.json`, `stellar.toml`, `directory.json`, `blocked.json`,
//! `linked/<last path segment of the toml= URL>`; any answer may instead be a `<file>.status` holding an HTTP
//! status (`404`) or a failure category (`dns-failure`).

use serde::Deserialize;

use crate::failure::{FailureCategory, FetchFailure};
use crate::model::{Accountability, Mechanics, Rating, State};
use crate::parse::{self, urls};
use crate::subject::*;
use crate::time::Timestamp;

/// A recorded answer: a body, or a status/failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// The body the source served with 200.
    Body(Vec<u8>),
    /// The source did not answer with a usable body.
    Failed(FailureCategory),
}

/// `subject.json`: what the raw answers do not carry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubjectMeta {
    /// `CODE-ISSUER`.
    pub asset: String,
    /// What the eval subject represents, in a sentence.
    #[serde(default)]
    pub label: String,
    /// When every recorded answer was produced.
    pub retrieved_at: Timestamp,
    /// When the scan ran (defaults to `retrieved_at`).
    #[serde(default)]
    pub scanned_at: Option<Timestamp>,
    /// Network passphrase.
    #[serde(default)]
    pub network: Option<String>,
    /// Scanner version bound into the hash.
    #[serde(default)]
    pub scanner_version: Option<String>,
    /// Horizon base URL (default pubnet Horizon).
    #[serde(default)]
    pub horizon_url: Option<String>,
    /// StellarExpert base URL (default `https://api.stellar.expert`).
    #[serde(default)]
    pub stellar_expert_url: Option<String>,
    /// Where the stellar.toml was finally read from, when a same-site redirect moved it.
    #[serde(default)]
    pub stellar_toml_final_url: Option<String>,
    /// Set when the fetch policy refused the stellar.toml host: the reason.
    #[serde(default)]
    pub stellar_toml_refused: Option<String>,
    /// Configured SEP-42 list URLs; each answer is `asset-lists/<last path segment>` (or `.status`).
    #[serde(default)]
    pub asset_lists: Vec<String>,
}

/// `expected.json`: the verdict an eval subject must yield, and why.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// Final severity.
    pub severity: Rating,
    /// Capability-only severity.
    pub base_severity: Rating,
    /// Whether escalated.
    pub escalated: bool,
    /// Accountability.
    pub accountability: Accountability,
    /// Mechanics names.
    pub mechanics: Mechanics,
    /// State at scan time.
    pub state: State,
    /// Undetermined checks (sorted).
    pub undetermined_checks: Vec<String>,
    /// The reason, in words.
    pub why: String,
}

/// Why recorded answers could not become a subject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A required file is missing.
    #[error("missing {0} (or {0}.status)")]
    Missing(String),
    /// A file is not what it should be.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

fn invalid(file: &str, message: impl ToString) -> ReplayError {
    ReplayError::Invalid {
        file: file.to_string(),
        message: message.to_string(),
    }
}

/// Parses a `.status` file: `404`, `status 404`, a category (`dns-failure`), or the old fixtures' `000`
/// (no answer: DNS failure).
pub fn parse_status(text: &str) -> Result<FailureCategory, crate::failure::FailureCategoryError> {
    let t = text.trim();
    if t == "000" {
        return Ok(FailureCategory::DnsFailure);
    }
    if t.len() == 3 && t.bytes().all(|b| b.is_ascii_digit()) {
        return format!("status {t}").parse();
    }
    t.parse()
}

/// Reads `name` or `name.status` through `read`.
pub fn recorded(
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
    name: &str,
) -> Result<Option<Recorded>, ReplayError> {
    if let Some(body) = read(name) {
        return Ok(Some(Recorded::Body(body)));
    }
    let status_name = format!("{name}.status");
    match read(&status_name) {
        Some(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| invalid(&status_name, "not UTF-8"))?;
            parse_status(&text)
                .map(|c| Some(Recorded::Failed(c)))
                .map_err(|e| invalid(&status_name, e))
        }
        None => Ok(None),
    }
}

fn last_segment(url: &str) -> &str {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/').next().unwrap_or(path)
}

/// The `linked/` file name for a `toml=` link: its last path segment.
pub fn linked_file_name(url: &str) -> String {
    format!("linked/{}", last_segment(url))
}

/// The `asset-lists/` file name for a SEP-42 list URL: its last path segment.
pub fn asset_list_file_name(url: &str) -> String {
    format!("asset-lists/{}", last_segment(url))
}

/// Builds the subject for an eval directory. `read(name)` returns the bytes of `name` relative to it.
pub fn load_subject(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<Subject, ReplayError> {
    let meta_bytes =
        read("subject.json").ok_or_else(|| ReplayError::Missing("subject.json".into()))?;
    let meta: SubjectMeta =
        serde_json::from_slice(&meta_bytes).map_err(|e| invalid("subject.json", e))?;
    build_subject(&meta, read)
}

/// Reads `expected.json`.
pub fn load_expected(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<Expected, ReplayError> {
    let bytes =
        read("expected.json").ok_or_else(|| ReplayError::Missing("expected.json".into()))?;
    serde_json::from_slice(&bytes).map_err(|e| invalid("expected.json", e))
}

/// Builds a subject from metadata and recorded answers.
pub fn build_subject(
    meta: &SubjectMeta,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Result<Subject, ReplayError> {
    let asset: Asset = meta.asset.parse().map_err(|e| invalid("subject.json", e))?;
    let at = meta.retrieved_at;
    let horizon = meta.horizon_url.as_deref().unwrap_or(DEFAULT_HORIZON_URL);
    let se = meta
        .stellar_expert_url
        .as_deref()
        .unwrap_or(DEFAULT_STELLAR_EXPERT_URL);
    let attempt = |url: String, c: FailureCategory| Attempt {
        url,
        retrieved_at: at,
        failure: FetchFailure::new(c),
    };

    let assets_url = urls::horizon_assets(horizon, &asset);
    let asset_flags = match recorded(read, "horizon-assets.json")? {
        None => FlagsOutcome::NotRead,
        Some(Recorded::Failed(c)) => FlagsOutcome::Failed(attempt(assets_url, c)),
        Some(Recorded::Body(b)) => match parse::parse_horizon_assets(&b, &asset) {
            Ok(Some(rec)) => FlagsOutcome::Read(Observed {
                url: assets_url,
                retrieved_at: at,
                value: rec.flags,
            }),
            Ok(None) => {
                return Err(invalid(
                    "horizon-assets.json",
                    format!("no record for {asset}"),
                ))
            }
            Err(e) => FlagsOutcome::Failed(Attempt {
                url: assets_url,
                retrieved_at: at,
                failure: e.to_failure(),
            }),
        },
    };
    let account_url = urls::horizon_account(horizon, &asset.issuer);
    let (account_flags, home_domain, control) = match recorded(read, "horizon-account.json")? {
        None => (
            FlagsOutcome::NotRead,
            HomeDomain::Unknown,
            ControlOutcome::NotRead,
        ),
        Some(Recorded::Failed(c)) => (
            FlagsOutcome::Failed(attempt(account_url, c)),
            HomeDomain::Unknown,
            ControlOutcome::NotRead,
        ),
        Some(Recorded::Body(b)) => match parse::parse_horizon_account(&b) {
            Ok(rec) => (
                FlagsOutcome::Read(Observed {
                    url: account_url.clone(),
                    retrieved_at: at,
                    value: rec.flags,
                }),
                rec.home_domain
                    .map_or(HomeDomain::Absent, HomeDomain::Present),
                ControlOutcome::of_record(&account_url, at, rec.control),
            ),
            Err(e) => (
                FlagsOutcome::Failed(Attempt {
                    url: account_url,
                    retrieved_at: at,
                    failure: e.to_failure(),
                }),
                HomeDomain::Unknown,
                ControlOutcome::NotRead,
            ),
        },
    };

    let stellar_toml = match home_domain.domain() {
        None => TomlOutcome::NotFetched,
        Some(domain) => {
            let requested_url = urls::stellar_toml(domain);
            if let Some(reason) = &meta.stellar_toml_refused {
                TomlOutcome::Refused {
                    requested_url,
                    retrieved_at: at,
                    reason: reason.clone(),
                }
            } else {
                match recorded(read, "stellar.toml")? {
                    None => TomlOutcome::NotFetched,
                    Some(Recorded::Failed(c)) => TomlOutcome::Failed {
                        requested_url,
                        retrieved_at: at,
                        failure: FetchFailure::new(c),
                    },
                    Some(Recorded::Body(b)) => match parse::parse_stellar_toml(&b) {
                        Err(e) => TomlOutcome::Failed {
                            requested_url,
                            retrieved_at: at,
                            failure: e.to_failure(),
                        },
                        Ok(doc) => {
                            let mut linked = Vec::new();
                            for (i, url) in doc.unresolved_links(&asset).into_iter().enumerate() {
                                let outcome = if i >= MAX_LINKED_DOCUMENTS {
                                    LinkedOutcome::NotFollowed
                                } else {
                                    match recorded(read, &linked_file_name(&url))? {
                                        None => LinkedOutcome::Failed {
                                            retrieved_at: at,
                                            failure: FetchFailure::new(FailureCategory::Status(
                                                404,
                                            )),
                                        },
                                        Some(Recorded::Failed(c)) => LinkedOutcome::Failed {
                                            retrieved_at: at,
                                            failure: FetchFailure::new(c),
                                        },
                                        Some(Recorded::Body(b)) => {
                                            match parse::parse_linked_currency_document(&b) {
                                                Ok(currencies) => LinkedOutcome::Read {
                                                    retrieved_at: at,
                                                    currencies,
                                                },
                                                Err(e) => LinkedOutcome::Failed {
                                                    retrieved_at: at,
                                                    failure: e.to_failure(),
                                                },
                                            }
                                        }
                                    }
                                };
                                linked.push(LinkedDocument { url, outcome });
                            }
                            TomlOutcome::Document(TomlDocument {
                                url: meta
                                    .stellar_toml_final_url
                                    .clone()
                                    .unwrap_or_else(|| requested_url.clone()),
                                requested_url,
                                retrieved_at: at,
                                currencies: doc.currencies,
                                linked,
                            })
                        }
                    },
                }
            }
        }
    };

    let dir_url = urls::directory(se, &asset.issuer);
    let directory = match recorded(read, "directory.json")? {
        None => DirectoryOutcome::NotAsked,
        Some(Recorded::Failed(FailureCategory::Status(404))) => DirectoryOutcome::NotListed {
            url: dir_url,
            retrieved_at: at,
        },
        Some(Recorded::Failed(c)) => DirectoryOutcome::Failed(attempt(dir_url, c)),
        Some(Recorded::Body(b)) => match parse::parse_directory(&b) {
            Ok(Some(entry)) => DirectoryOutcome::Listed(Observed {
                url: dir_url,
                retrieved_at: at,
                value: entry,
            }),
            Ok(None) => DirectoryOutcome::NotListed {
                url: dir_url,
                retrieved_at: at,
            },
            Err(e) => DirectoryOutcome::Failed(Attempt {
                url: dir_url,
                retrieved_at: at,
                failure: e.to_failure(),
            }),
        },
    };

    let blocklist = match crate::checks::blocklist_key(&home_domain, &directory) {
        None => BlocklistOutcome::SkippedNoHomeDomain,
        Some(domain) => {
            let domain = domain.as_str();
            let url = urls::blocked_domain(se, domain);
            match recorded(read, "blocked.json")? {
                None => return Err(ReplayError::Missing("blocked.json".into())),
                // A 404 is the blocklist read with no entry for the domain (scanner-checks.md).
                Some(Recorded::Failed(FailureCategory::Status(404))) => {
                    BlocklistOutcome::Answered(Observed {
                        url,
                        retrieved_at: at,
                        value: BlocklistAnswer {
                            domain: domain.to_string(),
                            blocked: false,
                        },
                    })
                }
                Some(Recorded::Failed(c)) => BlocklistOutcome::Failed(attempt(url, c)),
                Some(Recorded::Body(b)) => match parse::parse_blocked_domain(&b) {
                    Ok(answer) => BlocklistOutcome::Answered(Observed {
                        url,
                        retrieved_at: at,
                        value: answer,
                    }),
                    Err(e) => BlocklistOutcome::Failed(Attempt {
                        url,
                        retrieved_at: at,
                        failure: e.to_failure(),
                    }),
                },
            }
        }
    };

    let mut asset_lists = Vec::new();
    for url in &meta.asset_lists {
        let name = asset_list_file_name(url);
        let result = match recorded(read, &name)? {
            None => return Err(ReplayError::Missing(name)),
            Some(Recorded::Failed(c)) => AssetListResult::Failed(FetchFailure::new(c)),
            Some(Recorded::Body(b)) => match parse::parse_asset_list(&b) {
                Ok(list) => AssetListResult::Read {
                    entry: list.find(&asset).cloned(),
                    list_name: list.name,
                },
                Err(e) => AssetListResult::Failed(e.to_failure()),
            },
        };
        asset_lists.push(AssetListOutcome {
            url: url.clone(),
            retrieved_at: at,
            result,
        });
    }

    let provenance = Provenance {
        network: meta.network.clone(),
        scanner_version: meta.scanner_version.clone(),
        scanned_at: meta.scanned_at.unwrap_or(at),
    };
    let issuer = (asset_flags, account_flags, home_domain);
    let sources = (stellar_toml, directory, blocklist, asset_lists);
    Ok(Subject::read(asset, issuer, sources, provenance).with_control(control))
}
