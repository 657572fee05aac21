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
    let r = Replay {
        meta,
        read,
        at: meta.retrieved_at,
        horizon: meta.horizon_url.as_deref().unwrap_or(DEFAULT_HORIZON_URL),
        stellar_expert: meta
            .stellar_expert_url
            .as_deref()
            .unwrap_or(DEFAULT_STELLAR_EXPERT_URL),
    };
    let asset_flags = r.asset_flags(&asset)?;
    let (account_flags, home_domain, control) = r.account(&asset)?;
    let stellar_toml = r.stellar_toml(&asset, &home_domain)?;
    let directory = r.directory(&asset)?;
    let blocklist = r.blocklist(&home_domain, &directory)?;
    let asset_lists = r.asset_lists(&asset)?;
    let provenance = Provenance {
        network: meta.network.clone(),
        scanner_version: meta.scanner_version.clone(),
        scanned_at: meta.scanned_at.unwrap_or(r.at),
    };
    let issuer = (asset_flags, account_flags, home_domain);
    let sources = (stellar_toml, directory, blocklist, asset_lists);
    Ok(Subject::read(asset, issuer, sources, provenance).with_control(control))
}

/// One eval directory's recorded answers, turned into the outcomes a scan records, source by source.
struct Replay<'a> {
    meta: &'a SubjectMeta,
    read: &'a dyn Fn(&str) -> Option<Vec<u8>>,
    at: Timestamp,
    horizon: &'a str,
    stellar_expert: &'a str,
}

impl Replay<'_> {
    fn recorded(&self, name: &str) -> Result<Option<Recorded>, ReplayError> {
        recorded(self.read, name)
    }

    fn attempt(&self, url: String, c: FailureCategory) -> Attempt {
        Attempt {
            url,
            retrieved_at: self.at,
            failure: FetchFailure::new(c),
        }
    }

    fn observed<T>(&self, url: String, value: T) -> Observed<T> {
        Observed {
            url,
            retrieved_at: self.at,
            value,
        }
    }

    fn failed(&self, url: String, failure: FetchFailure) -> Attempt {
        Attempt {
            url,
            retrieved_at: self.at,
            failure,
        }
    }

    /// Horizon's `/assets` record: the asset's flags.
    fn asset_flags(&self, asset: &Asset) -> Result<FlagsOutcome, ReplayError> {
        let url = urls::horizon_assets(self.horizon, asset);
        Ok(match self.recorded("horizon-assets.json")? {
            None => FlagsOutcome::NotRead,
            Some(Recorded::Failed(c)) => FlagsOutcome::Failed(self.attempt(url, c)),
            Some(Recorded::Body(b)) => match parse::parse_horizon_assets(&b, asset) {
                Ok(Some(rec)) => FlagsOutcome::Read(self.observed(url, rec.flags)),
                Ok(None) => {
                    return Err(invalid(
                        "horizon-assets.json",
                        format!("no record for {asset}"),
                    ))
                }
                Err(e) => FlagsOutcome::Failed(self.failed(url, e.to_failure())),
            },
        })
    }

    /// The issuer's account: its flags, home domain and who can sign for it.
    fn account(
        &self,
        asset: &Asset,
    ) -> Result<(FlagsOutcome, HomeDomain, ControlOutcome), ReplayError> {
        let url = urls::horizon_account(self.horizon, &asset.issuer);
        let unread = |flags| (flags, HomeDomain::Unknown, ControlOutcome::NotRead);
        Ok(match self.recorded("horizon-account.json")? {
            None => unread(FlagsOutcome::NotRead),
            Some(Recorded::Failed(c)) => unread(FlagsOutcome::Failed(self.attempt(url, c))),
            Some(Recorded::Body(b)) => match parse::parse_horizon_account(&b) {
                Ok(rec) => (
                    FlagsOutcome::Read(self.observed(url.clone(), rec.flags)),
                    rec.home_domain
                        .map_or(HomeDomain::Absent, HomeDomain::Present),
                    ControlOutcome::of_record(&url, self.at, rec.control),
                ),
                Err(e) => unread(FlagsOutcome::Failed(self.failed(url, e.to_failure()))),
            },
        })
    }

    /// The home domain's stellar.toml, with the currency documents it links.
    fn stellar_toml(
        &self,
        asset: &Asset,
        home_domain: &HomeDomain,
    ) -> Result<TomlOutcome, ReplayError> {
        let Some(domain) = home_domain.domain() else {
            return Ok(TomlOutcome::NotFetched);
        };
        let requested_url = urls::stellar_toml(domain);
        let failed = |requested_url, failure| TomlOutcome::Failed {
            requested_url,
            retrieved_at: self.at,
            failure,
        };
        if let Some(reason) = &self.meta.stellar_toml_refused {
            return Ok(TomlOutcome::Refused {
                requested_url,
                retrieved_at: self.at,
                reason: reason.clone(),
            });
        }
        Ok(match self.recorded("stellar.toml")? {
            None => TomlOutcome::NotFetched,
            Some(Recorded::Failed(c)) => failed(requested_url, FetchFailure::new(c)),
            Some(Recorded::Body(b)) => match parse::parse_stellar_toml(&b) {
                Err(e) => failed(requested_url, e.to_failure()),
                Ok(doc) => {
                    let mut linked = Vec::new();
                    for (i, url) in doc.unresolved_links(asset).into_iter().enumerate() {
                        let outcome = if i >= MAX_LINKED_DOCUMENTS {
                            LinkedOutcome::NotFollowed
                        } else {
                            self.linked(&url)?
                        };
                        linked.push(LinkedDocument { url, outcome });
                    }
                    TomlOutcome::Document(TomlDocument {
                        url: self
                            .meta
                            .stellar_toml_final_url
                            .clone()
                            .unwrap_or_else(|| requested_url.clone()),
                        requested_url,
                        retrieved_at: self.at,
                        currencies: doc.currencies,
                        linked,
                    })
                }
            },
        })
    }

    /// One linked currency document (a `toml=` link); one not recorded reads as a 404.
    fn linked(&self, url: &str) -> Result<LinkedOutcome, ReplayError> {
        let failed = |failure| LinkedOutcome::Failed {
            retrieved_at: self.at,
            failure,
        };
        Ok(match self.recorded(&linked_file_name(url))? {
            None => failed(FetchFailure::new(FailureCategory::Status(404))),
            Some(Recorded::Failed(c)) => failed(FetchFailure::new(c)),
            Some(Recorded::Body(b)) => match parse::parse_linked_currency_document(&b) {
                Ok(currencies) => LinkedOutcome::Read {
                    retrieved_at: self.at,
                    currencies,
                },
                Err(e) => failed(e.to_failure()),
            },
        })
    }

    /// StellarExpert's directory entry for the issuer.
    fn directory(&self, asset: &Asset) -> Result<DirectoryOutcome, ReplayError> {
        let url = urls::directory(self.stellar_expert, &asset.issuer);
        let not_listed = |url| DirectoryOutcome::NotListed {
            url,
            retrieved_at: self.at,
        };
        Ok(match self.recorded("directory.json")? {
            None => DirectoryOutcome::NotAsked,
            Some(Recorded::Failed(FailureCategory::Status(404))) => not_listed(url),
            Some(Recorded::Failed(c)) => DirectoryOutcome::Failed(self.attempt(url, c)),
            Some(Recorded::Body(b)) => match parse::parse_directory(&b) {
                Ok(Some(entry)) => DirectoryOutcome::Listed(self.observed(url, entry)),
                Ok(None) => not_listed(url),
                Err(e) => DirectoryOutcome::Failed(self.failed(url, e.to_failure())),
            },
        })
    }

    /// StellarExpert's blocklist, asked for the domain the spec keys it on.
    fn blocklist(
        &self,
        home_domain: &HomeDomain,
        directory: &DirectoryOutcome,
    ) -> Result<BlocklistOutcome, ReplayError> {
        let Some(domain) = crate::checks::blocklist_key(home_domain, directory) else {
            return Ok(BlocklistOutcome::SkippedNoHomeDomain);
        };
        let domain = domain.as_str();
        let url = urls::blocked_domain(self.stellar_expert, domain);
        Ok(match self.recorded("blocked.json")? {
            None => return Err(ReplayError::Missing("blocked.json".into())),
            // A 404 is the blocklist read with no entry for the domain (scanner-checks.md).
            Some(Recorded::Failed(FailureCategory::Status(404))) => {
                BlocklistOutcome::Answered(self.observed(
                    url,
                    BlocklistAnswer {
                        domain: domain.to_string(),
                        blocked: false,
                    },
                ))
            }
            Some(Recorded::Failed(c)) => BlocklistOutcome::Failed(self.attempt(url, c)),
            Some(Recorded::Body(b)) => match parse::parse_blocked_domain(&b) {
                Ok(answer) => BlocklistOutcome::Answered(self.observed(url, answer)),
                Err(e) => BlocklistOutcome::Failed(self.failed(url, e.to_failure())),
            },
        })
    }

    /// Every SEP-42 list the subject names; each must be recorded.
    fn asset_lists(&self, asset: &Asset) -> Result<Vec<AssetListOutcome>, ReplayError> {
        let mut asset_lists = Vec::new();
        for url in &self.meta.asset_lists {
            let name = asset_list_file_name(url);
            let result = match self.recorded(&name)? {
                None => return Err(ReplayError::Missing(name)),
                Some(Recorded::Failed(c)) => AssetListResult::Failed(FetchFailure::new(c)),
                Some(Recorded::Body(b)) => match parse::parse_asset_list(&b) {
                    Ok(list) => AssetListResult::Read {
                        entry: list.find(asset).cloned(),
                        list_name: list.name,
                    },
                    Err(e) => AssetListResult::Failed(e.to_failure()),
                },
            };
            asset_lists.push(AssetListOutcome {
                url: url.clone(),
                retrieved_at: self.at,
                result,
            });
        }
        Ok(asset_lists)
    }
}
