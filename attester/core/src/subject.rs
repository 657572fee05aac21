//! The Subject: everything the scan fetched about one asset, before any judgment.
//!
//! The scan stage performs every fetch once and records each answer here *with its source URL and the
//! instant the source produced it*, or the failure with its canonical category. The checks only compute over
//! this value, so a check cannot reach the network and the judgment can be replayed from recorded answers.
//!
//! Every outcome type distinguishes "the source answered" from "the source could not be read" from "nobody
//! asked": absence from a list is not an observation, and "we could not check" must never render like
//! "this is fine".

use serde::{Deserialize, Serialize};

use crate::failure::FetchFailure;
use crate::time::Timestamp;

/// Bound on linked `toml=` currency documents a scan follows (one hop each); more are left unread.
pub const MAX_LINKED_DOCUMENTS: usize = 8;

/// Default StellarExpert API base URL.
pub const DEFAULT_STELLAR_EXPERT_URL: &str = "https://api.stellar.expert";
pub use crate::network::{
    DEFAULT_HORIZON_URL, PUBNET_PASSPHRASE, STANDALONE_PASSPHRASE, TESTNET_PASSPHRASE,
};

pub use crate::asset::{Asset, AssetParseError};

/// The four issuer authorization flags, as Horizon publishes them on both the `/assets` and `/accounts`
/// records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerFlags {
    /// `auth_required`: the issuer decides who may open a trustline.
    pub auth_required: bool,
    /// `auth_revocable`: the issuer can freeze a held balance.
    pub auth_revocable: bool,
    /// `auth_immutable`: the flag set can never change again.
    pub auth_immutable: bool,
    /// `auth_clawback_enabled`: the issuer can take and burn a balance without the holder's signature.
    pub auth_clawback_enabled: bool,
}

/// A source's answer, with where it came from and when the source produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed<T> {
    /// The URL the answer was read from (after redirects, where the source may redirect).
    pub url: String,
    /// When the source produced this answer. A cached answer keeps its original fetch time.
    pub retrieved_at: Timestamp,
    /// The parsed answer.
    pub value: T,
}

/// A fetch that was attempted and produced no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The URL that was requested.
    pub url: String,
    /// When the attempt gave up.
    pub retrieved_at: Timestamp,
    /// What went wrong, by canonical category.
    pub failure: FetchFailure,
}

/// One copy of the issuer flags (the `/assets` record or the issuer's `/accounts` record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum FlagsOutcome {
    /// The record was read.
    Read(Observed<IssuerFlags>),
    /// The record could not be read.
    Failed(Attempt),
    /// Nobody asked. The live scan never produces this; it exists so a hand-built subject with no flags is
    /// *unevaluated*, never silently clear.
    NotRead,
}

/// One signer of an account, as its record lists it (the master key included, with its weight).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountSigner {
    /// The signer key (`G…` for an ed25519 key, `T…` a pre-authorised transaction, `X…` a hash).
    pub key: String,
    /// Horizon's `type` (`ed25519_public_key`, `preauth_tx`, `sha256_hash`, `ed25519_signed_payload`).
    pub kind: String,
    /// Its weight (0-255; a weight of 0 cannot sign).
    pub weight: u32,
}

/// Who can sign for an account: its signers and its three thresholds (`low_threshold`, `med_threshold`,
/// `high_threshold`, 0-255). An operation needs signatures whose weights reach its threshold (and at least
/// one signature): `SetTrustLineFlags`, `AllowTrust` the low one, a `SetOptions` that sets flags the medium
/// one, a `SetOptions` that changes signers or thresholds the high one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountControl {
    /// Every signer the record lists, the master key included (possibly with weight 0).
    pub signers: Vec<AccountSigner>,
    /// `thresholds.low_threshold`.
    pub low: u32,
    /// `thresholds.med_threshold`.
    pub medium: u32,
    /// `thresholds.high_threshold`.
    pub high: u32,
}

/// The issuer account's signers and thresholds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum ControlOutcome {
    /// The account record was read with its signers and thresholds.
    Read(Observed<AccountControl>),
    /// The account record was read but carried no `signers` or no `thresholds` (a trimmed record): who can
    /// sign is not known, so the issuer is taken to be able to.
    Missing {
        /// The account record's URL.
        url: String,
        /// When it was read.
        retrieved_at: Timestamp,
    },
    /// Nobody asked (subjects recorded before signers were read, hand-built subjects): who can sign is not
    /// known, so the issuer is taken to be able to.
    #[default]
    NotRead,
}

impl ControlOutcome {
    /// What an account record read from `url` at `retrieved_at` says about its signers.
    pub fn of_record(
        url: &str,
        retrieved_at: Timestamp,
        control: Option<AccountControl>,
    ) -> ControlOutcome {
        match control {
            Some(value) => ControlOutcome::Read(Observed {
                url: url.to_string(),
                retrieved_at,
                value,
            }),
            None => ControlOutcome::Missing {
                url: url.to_string(),
                retrieved_at,
            },
        }
    }
}

/// One trustline an account holds, as its Horizon `/accounts` record lists it (`balances[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldTrustline {
    /// The asset the trustline holds.
    pub asset: Asset,
    /// `balance`, as served (7 decimals).
    pub balance: String,
    /// `is_authorized`: the holder may send and receive.
    pub authorized: bool,
    /// `is_authorized_to_maintain_liabilities`: frozen for payments, its offers kept.
    pub authorized_to_maintain_liabilities: bool,
    /// `is_clawback_enabled`: the issuer can claw this balance back.
    pub clawback_enabled: bool,
}

/// The issuer account's `home_domain`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "domain")]
pub enum HomeDomain {
    /// The account record was read and carries no `home_domain` (key absent, or empty): nobody claimed it.
    Absent,
    /// The account advertises this domain (free text the account controls).
    Present(String),
    /// The account record was not read, so whether a domain is advertised is not known.
    Unknown,
}

impl HomeDomain {
    /// The advertised domain, if one is known to be present.
    pub fn domain(&self) -> Option<&str> {
        match self {
            HomeDomain::Present(d) => Some(d),
            _ => None,
        }
    }
}

/// One `[[CURRENCIES]]` entry of a stellar.toml (or of a linked currency document), reduced to what the
/// reciprocal check needs. Unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Currency {
    /// `code`, if present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// `issuer`, if present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// `toml`: a delegation link to a separate currency document, if present. May sit beside other keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toml: Option<String>,
    /// `contract`: the `C…` address of a Soroban token the entry declares (SEP-1), if present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
}

impl Currency {
    /// Whether this entry declares `asset` inline: code and issuer both match, case-insensitively.
    pub fn declares(&self, asset: &Asset) -> bool {
        matches!((&self.code, &self.issuer), (Some(c), Some(i))
            if c.eq_ignore_ascii_case(&asset.code) && i.eq_ignore_ascii_case(&asset.issuer))
    }

    /// Whether this entry declares the token contract `contract` (`C…`), exactly.
    pub fn declares_contract(&self, contract: &str) -> bool {
        self.contract.as_deref() == Some(contract)
    }
}

/// What became of one linked `toml=` currency document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum LinkedOutcome {
    /// Read and parsed; the currencies it declares.
    Read {
        /// When the document was read.
        retrieved_at: Timestamp,
        /// Currencies the document declares.
        currencies: Vec<Currency>,
    },
    /// Fetched and failed.
    Failed {
        /// When the attempt gave up.
        retrieved_at: Timestamp,
        /// Why.
        failure: FetchFailure,
    },
    /// Refused by the fetch policy (e.g. an internal address, plain HTTP).
    Refused {
        /// When the refusal was decided.
        retrieved_at: Timestamp,
        /// Why, in words.
        reason: String,
    },
    /// Not fetched because the scan's bound ([`MAX_LINKED_DOCUMENTS`]) was reached.
    NotFollowed,
}

/// A linked currency document, by the URL the `toml=` key names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedDocument {
    /// The link exactly as written in the stellar.toml.
    pub url: String,
    /// What happened to it.
    pub outcome: LinkedOutcome,
}

/// A stellar.toml that was read and parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TomlDocument {
    /// The well-known URL built from home_domain (`https://DOMAIN/.well-known/stellar.toml`).
    pub requested_url: String,
    /// The URL the document was actually read from, after same-site redirects.
    pub url: String,
    /// When it was read.
    pub retrieved_at: Timestamp,
    /// Its `[[CURRENCIES]]` entries, in document order.
    pub currencies: Vec<Currency>,
    /// Outcomes for the distinct `toml=` links of entries that do not declare the asset inline, in first-seen
    /// order. Empty when the scan did not follow links at all.
    #[serde(default)]
    pub linked: Vec<LinkedDocument>,
}

/// The stellar.toml outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum TomlOutcome {
    /// Not fetched (no home_domain, or the scan did not ask).
    NotFetched,
    /// Read and parsed.
    Document(TomlDocument),
    /// Fetched and failed (status, transport, redirect bound, size, unparseable TOML).
    Failed {
        /// The well-known URL built from home_domain.
        requested_url: String,
        /// When the attempt gave up.
        retrieved_at: Timestamp,
        /// Why.
        failure: FetchFailure,
    },
    /// Refused by the fetch policy: an internal address, or a redirect leaving the requested host's namespace.
    /// A document served by a refused host is never this domain's claim.
    Refused {
        /// The well-known URL built from home_domain.
        requested_url: String,
        /// When the refusal was decided.
        retrieved_at: Timestamp,
        /// Why, in words, naming the host (e.g. `redirect to evil.example leaves circle.com`).
        reason: String,
    },
}

/// A StellarExpert directory entry for the issuer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectoryEntry {
    /// The entry's display name.
    pub name: String,
    /// The entry's domain, when the directory has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Tags as served (lowercase), in served order.
    pub tags: Vec<String>,
}

/// The StellarExpert directory outcome for the issuer address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum DirectoryOutcome {
    /// The address is listed.
    Listed(Observed<DirectoryEntry>),
    /// The directory answered and has no entry (200 `{}` or 404). Not an observation about the issuer.
    NotListed {
        /// URL asked.
        url: String,
        /// When it answered.
        retrieved_at: Timestamp,
    },
    /// The directory could not be read (429, 5xx, timeout, …): reputation cannot conclude.
    Failed(Attempt),
    /// Nobody asked (hand-built subjects only).
    NotAsked,
}

/// StellarExpert's answer for one domain on its malicious-domain blocklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlocklistAnswer {
    /// The domain asked about (home_domain).
    pub domain: String,
    /// Whether it (or a parent domain) is blocked.
    pub blocked: bool,
}

/// The blocklist outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum BlocklistOutcome {
    /// The blocklist answered for home_domain.
    Answered(Observed<BlocklistAnswer>),
    /// The blocklist could not be read.
    Failed(Attempt),
    /// Never asked because there was no home_domain to key the lookup on. Not a clean answer.
    SkippedNoHomeDomain,
}

/// The asset's entry in a SEP-42 list, as far as the list describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListEntry {
    /// The entry's `name`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The entry's `org`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// The entry's `domain`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
}

/// What one configured SEP-42 asset list said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum AssetListResult {
    /// The list was read; `entry` is the asset's entry, or `None` when the list does not carry it.
    Read {
        /// The list's own `name`.
        list_name: String,
        /// The asset's entry, if present.
        entry: Option<ListEntry>,
    },
    /// The list could not be read. Recorded as failure evidence; never makes a report undetermined.
    Failed(FetchFailure),
}

/// One configured SEP-42 asset list's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssetListOutcome {
    /// The list URL.
    pub url: String,
    /// When it answered or gave up.
    pub retrieved_at: Timestamp,
    /// What it said.
    pub result: AssetListResult,
}

/// Everything fetched about one asset, ready for the checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// The asset scanned.
    pub asset: Asset,
    /// Flags from Horizon's `/assets?asset_code=…&asset_issuer=…` record (source `horizon`).
    pub asset_flags: FlagsOutcome,
    /// Flags from Horizon's `/accounts/ISSUER` record (source `horizon/account`).
    pub account_flags: FlagsOutcome,
    /// The issuer's `home_domain` from the `/accounts` record.
    pub home_domain: HomeDomain,
    /// The issuer account's signers and thresholds from the `/accounts` record: who can use its powers.
    #[serde(default)]
    pub issuer_control: ControlOutcome,
    /// The stellar.toml outcome for home_domain.
    pub stellar_toml: TomlOutcome,
    /// The StellarExpert directory outcome for the issuer.
    pub directory: DirectoryOutcome,
    /// The StellarExpert blocklist outcome for home_domain.
    pub blocklist: BlocklistOutcome,
    /// Configured SEP-42 asset lists (none by default), in configuration order.
    #[serde(default)]
    pub asset_lists: Vec<AssetListOutcome>,
    /// The network passphrase the scan was made on (pubnet or testnet), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The scanner version bound into the evidence hash (e.g. `v0.1.0`), when the scan binds one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scanner_version: Option<String>,
    /// When the scan ran.
    pub scanned_at: Timestamp,
    /// Where the issuer account was read when it was read from the ledger through stellar-rpc; `None` when
    /// Horizon's two records were read. Told in the reasoning, never hashed: the evidence binds the facts,
    /// not the endpoint that carried them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_read: Option<LedgerRead>,
}

/// One read of the issuer account entry through stellar-rpc (`getLedgerEntries`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerRead {
    /// The stellar-rpc endpoint (shown redacted).
    pub rpc_url: String,
    /// The ledger whose state the entry is (`latestLedger` of the answer).
    pub ledger: u32,
    /// Horizon's `/assets` record, the second copy of the flags: `None` when it was read, else why not (not
    /// configured, not reachable, no record). A copy not read is not an observation: the ledger entry then
    /// stands for both copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon_copy_unread: Option<String>,
}

/// Where and when a subject was read, and by which scanner: bound into the evidence hash beside what
/// was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The network passphrase the scan was made on, when known.
    pub network: Option<String>,
    /// The scanner version, when the scan binds one.
    pub scanner_version: Option<String>,
    /// When the scan ran.
    pub scanned_at: Timestamp,
}

/// Horizon's answers about the issuer: the `/assets` flags, the `/accounts` flags and `home_domain`.
pub type IssuerAnswers = (FlagsOutcome, FlagsOutcome, HomeDomain);

/// The answers read after Horizon: stellar.toml, the StellarExpert directory and blocklist, and the
/// configured asset lists, in that order.
pub type SourceAnswers = (
    TomlOutcome,
    DirectoryOutcome,
    BlocklistOutcome,
    Vec<AssetListOutcome>,
);

impl Subject {
    /// The subject one scan of `asset` read: Horizon's answers, then the other sources', under the
    /// scan's provenance. The live scanner and the replay of recorded answers both build it here.
    pub fn read(
        asset: Asset,
        issuer: IssuerAnswers,
        sources: SourceAnswers,
        provenance: Provenance,
    ) -> Subject {
        let (asset_flags, account_flags, home_domain) = issuer;
        let (stellar_toml, directory, blocklist, asset_lists) = sources;
        Subject {
            asset,
            asset_flags,
            account_flags,
            home_domain,
            issuer_control: ControlOutcome::NotRead,
            stellar_toml,
            directory,
            blocklist,
            asset_lists,
            network: provenance.network,
            scanner_version: provenance.scanner_version,
            scanned_at: provenance.scanned_at,
            ledger_read: None,
        }
    }

    /// This subject with the issuer account read through stellar-rpc as `read` says.
    pub fn with_ledger_read(mut self, read: Option<LedgerRead>) -> Subject {
        self.ledger_read = read;
        self
    }

    /// This subject with the issuer account's signers and thresholds as read.
    pub fn with_control(mut self, control: ControlOutcome) -> Subject {
        self.issuer_control = control;
        self
    }
}
