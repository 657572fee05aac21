//! The observation history: an append-only SQLite store of every report a scan produced.
//!
//! Rows are only ever inserted; triggers make the database itself refuse UPDATE and DELETE, so a
//! bug or a second tool cannot rewrite the past. Each row keeps the whole schema_version 1 report,
//! from which the core derives observations and the transitions between them.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

mod postgres;

/// Where a history lives: a SQLite file (the default, nothing to install) or a PostgreSQL database that
/// many `watch` workers and `serve` replicas share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Database {
    Sqlite(PathBuf),
    Postgres(PostgresUrl),
}

impl Database {
    /// A `postgres://` or `postgresql://` URL names a PostgreSQL database; anything else is a file path.
    pub fn parse(given: &str) -> Database {
        let lower = given.get(..13).unwrap_or(given).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Database::Postgres(PostgresUrl(given.to_string()))
        } else {
            Database::Sqlite(PathBuf::from(given))
        }
    }
}

/// The environment variable naming the PostgreSQL database. It may carry the password; `--database` may
/// not, since argv is visible to every user of the machine.
pub const DATABASE_URL_ENV: &str = "ASSAY_DATABASE_URL";

impl Database {
    /// Where the history is, from what the operator gave: `--database` (`flag`, a PostgreSQL URL without
    /// a password), else `ASSAY_DATABASE_URL`, else a config file's `database` (`configured`); else the
    /// file `file` (`--history`, `ASSAY_HISTORY`, a config's `history`), else the default file. A database
    /// URL and a file both given is refused rather than one silently ignored. `Ok(None)`: no file given and
    /// no data directory to default to.
    pub fn resolve(
        flag: Option<&str>,
        configured: Option<&str>,
        file: Option<&Path>,
    ) -> Result<Option<Database>, String> {
        let env = std::env::var(DATABASE_URL_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty());
        let (given, source) = match (flag, env, configured) {
            (Some(flag), _, _) => (flag.to_string(), "--database"),
            (None, Some(env), _) => (env, DATABASE_URL_ENV),
            (None, None, Some(configured)) => (configured.to_string(), "the config's `database`"),
            (None, None, None) => {
                return Ok(file
                    .map(Path::to_path_buf)
                    .or_else(History::default_path)
                    .map(Database::Sqlite))
            }
        };
        let Database::Postgres(url) = Database::parse(given.trim()) else {
            return Err(format!(
                "{source} takes a PostgreSQL URL (postgres://USER@HOST:PORT/DB); a SQLite file is given with --history PATH"
            ));
        };
        if source == "--database" && url.has_password() {
            return Err(format!(
                "--database {url}: the URL carries a password, and argv is visible to every user of the machine; \
                 give the URL in {DATABASE_URL_ENV}, or the password in PGPASSWORD"
            ));
        }
        if let Some(file) = file {
            return Err(format!(
                "both {source} ({url}) and a history file ({}) are given: give one (unset ASSAY_HISTORY, or \
                 drop `history` from the config, to use the database)",
                file.display()
            ));
        }
        Ok(Some(Database::Postgres(url)))
    }
}

impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::Sqlite(path) => write!(f, "{}", path.display()),
            Database::Postgres(url) => write!(f, "{url}"),
        }
    }
}

/// A PostgreSQL URL. It may carry a password, so it displays (and debug-prints) without one, and without
/// its query (where `password=` may also be).
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

impl PostgresUrl {
    /// The URL as given, password and all: only for connecting.
    fn secret(&self) -> &str {
        &self.0
    }

    /// Whether the URL carries a password (in its user part or its query).
    pub fn has_password(&self) -> bool {
        match url::Url::parse(&self.0) {
            Ok(url) => url.password().is_some() || url.query_pairs().any(|(k, _)| k == "password"),
            // Unparsable: assume the worst, so it is neither echoed nor accepted from argv.
            Err(_) => true,
        }
    }
}

impl std::fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match url::Url::parse(&self.0) {
            Ok(mut url) => {
                let _ = url.set_password(None);
                url.set_query(None);
                url.set_fragment(None);
                write!(f, "{url}")
            }
            Err(_) => f.write_str("postgres://(an unparsable URL)"),
        }
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgresUrl({self})")
    }
}

/// One stored observation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredObservation {
    pub id: i64,
    pub asset: String,
    pub scanned_at: String,
    /// The report exactly as it was emitted (JSON).
    pub report_json: String,
}

/// A stored row that cannot be read as an observation: reported and skipped, never silently dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorruptRow {
    pub id: i64,
    pub reason: String,
}

/// An asset's readable observations, oldest first, and the rows that could not be read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listed {
    pub rows: Vec<StoredObservation>,
    pub corrupt: Vec<CorruptRow>,
}

/// How long a reader or writer waits for another process's lock before giving up.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A history error, naming the file (or the database, without its password).
#[derive(Debug, thiserror::Error)]
#[error("history {path}: {message}")]
pub struct HistoryError {
    pub path: String,
    pub message: String,
}

/// An open history: a SQLite file, or a PostgreSQL database that many processes share.
pub struct History {
    store: Store,
    /// Where it is, for errors: the file's path, or the database's URL without its password.
    path: String,
}

enum Store {
    Sqlite(Connection),
    /// The connection (back to the idle ones when the history drops) and its URL.
    Postgres(postgres::PgStore, PostgresUrl),
}

impl Drop for History {
    fn drop(&mut self) {
        if let Store::Postgres(store, url) = &mut self.store {
            postgres::checkin(url.secret(), store.take());
        }
    }
}

/// A work queue's size: assets due and not leased, leased (being checked), whose last check failed, all;
/// and the workers seen lately.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueStats {
    pub due: i64,
    pub leased: i64,
    pub failing: i64,
    pub total: i64,
    pub workers: i64,
}

/// A named lock many processes contend for ([`History::try_lock`], [`History::lock`]).
pub struct HeldLock {
    store: postgres::PgStore,
    url: PostgresUrl,
    key: i64,
}

impl HeldLock {
    fn new(url: &PostgresUrl, name: &str) -> Result<HeldLock, String> {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("assay lock {name}").as_bytes());
        let mut key = [0u8; 8];
        key.copy_from_slice(&digest[..8]);
        Ok(HeldLock {
            store: postgres::checkout(url.secret())?,
            url: url.clone(),
            key: i64::from_be_bytes(key),
        })
    }

    /// Whether the lock is still held: its connection answers (a database restart ends every lock).
    pub fn is_held(&self) -> bool {
        self.store.execute("SELECT 1".to_string()).is_ok()
    }

    /// Gives back a connection whose lock was never taken.
    fn release_unheld(mut self) {
        postgres::checkin(self.url.secret(), self.store.take());
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        // Released, the connection is reused; if the release fails the connection is closed instead,
        // which releases the lock too.
        let store = self.store.take();
        if store.unlock(self.key).is_ok() {
            postgres::checkin(self.url.secret(), store);
        }
    }
}

/// What [`History::copy_to`] copies: each table and its columns, `name::type` where PostgreSQL's column
/// is not text (the values travel as text and are cast there).
const COPIED_TABLES: [(&str, &[&str]); 6] = [
    (
        "observations",
        &[
            "id::bigint",
            "asset",
            "scanned_at",
            "report_json",
            "fingerprint",
            "evidence_hash",
        ],
    ),
    (
        "chain_readings",
        &["id::bigint", "asset", "read_at", "entry_json"],
    ),
    (
        "rechecks",
        &[
            "observation_id::bigint",
            "asset",
            "first_rechecked_at",
            "last_checked_at",
            "count::bigint",
        ],
    ),
    (
        "bundles",
        &["evidence_hash", "asset", "recorded_at", "bundle_json"],
    ),
    (
        "latest",
        &[
            "asset",
            "observation_id::bigint",
            "severity",
            "undetermined::boolean",
            "checked_at",
        ],
    ),
    ("spend", &["account", "day::bigint", "stroops::bigint"]),
];

/// The tables [`History::counts`] counts.
const COUNTED_TABLES: [&str; 5] = [
    "observations",
    "rechecks",
    "bundles",
    "chain_readings",
    "latest",
];

/// What a listing of observations asks for: the same question to either backend.
enum Listing {
    /// Every observation of an asset, oldest first.
    Asset(String),
    /// At most `limit` observations of `asset` older than `before`, newest first.
    Before {
        asset: String,
        before: i64,
        limit: i64,
    },
    /// Each asset's newest observation, by asset.
    LatestPerAsset,
}

/// The schema version this build writes (`PRAGMA user_version`). 1: observations and chain readings;
/// 2: evidence bundles, re-checks of an unchanged report, the per-asset index `latest`, and pruning.
pub const SCHEMA_VERSION: i64 = 2;

/// Version 1's tables, as every store has them (created on a new file, kept on an old one).
const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS observations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    asset       TEXT NOT NULL,
    scanned_at  TEXT NOT NULL,
    report_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS observations_by_asset ON observations (asset, id);
CREATE TABLE IF NOT EXISTS chain_readings (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    asset      TEXT NOT NULL,
    read_at    TEXT NOT NULL,
    entry_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chain_readings_by_asset ON chain_readings (asset, id);
";

/// Version 2, applied to a version 1 store in the same transaction as the version bump.
const MIGRATE_TO_V2: &str = "
ALTER TABLE observations ADD COLUMN fingerprint TEXT;
ALTER TABLE observations ADD COLUMN evidence_hash TEXT;
CREATE INDEX observations_by_time ON observations (scanned_at);
CREATE TABLE rechecks (
    observation_id     INTEGER PRIMARY KEY,
    asset              TEXT NOT NULL,
    first_rechecked_at TEXT NOT NULL,
    last_checked_at    TEXT NOT NULL,
    count              INTEGER NOT NULL
);
CREATE TABLE bundles (
    evidence_hash TEXT PRIMARY KEY,
    asset         TEXT NOT NULL,
    recorded_at   TEXT NOT NULL,
    bundle_json   TEXT NOT NULL
);
CREATE INDEX bundles_by_time ON bundles (recorded_at);
CREATE TABLE latest (
    asset          TEXT PRIMARY KEY,
    observation_id INTEGER NOT NULL,
    severity       TEXT NOT NULL,
    undetermined   INTEGER NOT NULL,
    checked_at     TEXT NOT NULL
);
CREATE INDEX latest_by_severity ON latest (severity, asset);
INSERT INTO latest (asset, observation_id, severity, undetermined, checked_at)
    SELECT o.asset, o.id, COALESCE(json_extract(o.report_json, '$.severity'), 'unknown'),
           COALESCE(json_extract(o.report_json, '$.undetermined'), 1), o.scanned_at
    FROM observations o JOIN (SELECT asset, MAX(id) AS id FROM observations GROUP BY asset) m ON o.id = m.id
    WHERE json_valid(o.report_json);
CREATE TABLE prune_permit (granted INTEGER);
DROP TRIGGER IF EXISTS observations_no_update;
DROP TRIGGER IF EXISTS observations_no_delete;
CREATE TRIGGER observations_no_update BEFORE UPDATE ON observations
BEGIN SELECT RAISE(ABORT, 'the observation history is append-only'); END;
CREATE TRIGGER observations_no_delete BEFORE DELETE ON observations
WHEN NOT EXISTS (SELECT 1 FROM prune_permit)
BEGIN SELECT RAISE(ABORT, 'the observation history is append-only; only `assay history prune` removes rows'); END;
PRAGMA user_version = 2;
";

/// The spend ledger ([`History::reserve_spend`]): stroops counted per signing account and UTC day.
const SPEND_TABLE: &str = "
CREATE TABLE IF NOT EXISTS spend (
    account TEXT NOT NULL,
    day     INTEGER NOT NULL,
    stroops INTEGER NOT NULL,
    PRIMARY KEY (account, day)
);
";

/// What the history keeps about the registry's entry for an asset: the one record every writer (`watch`'s
/// read-backs, its writes and revocations, `attest`'s writes) appends and `history prune` reads, so a
/// misspelt key cannot make prune forget a bundle an attestation on chain cites.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ChainReading {
    /// The registry holds an attestation citing `evidence_hash` (read back, or written).
    Attested {
        /// The severity written.
        severity: u32,
        /// The mechanics bits written.
        flags: u32,
        /// The evidence hash the attestation cites, lowercase hex.
        evidence_hash: String,
        /// When the registry says it was attested (a read-back), Unix seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attested_at: Option<u64>,
        /// The transaction that wrote it (a write).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tx_hash: Option<String>,
        /// The ledger it landed in (a write).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ledger: Option<u32>,
    },
    /// The attestation was revoked: it cites nothing.
    Revoked {
        /// The watch rule that revoked it.
        rule: String,
        /// The revoking transaction.
        tx_hash: String,
        /// The ledger it landed in.
        ledger: u32,
    },
}

impl ChainReading {
    /// The evidence hash an attestation on chain cites, per this reading.
    pub fn cites(&self) -> Option<&str> {
        match self {
            ChainReading::Attested { evidence_hash, .. } => Some(evidence_hash),
            ChainReading::Revoked { .. } => None,
        }
    }
}

/// What [`History::record`] did with a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// The report differs from the asset's latest: a new observation (its id).
    Observed(i64),
    /// The report is the asset's latest again: only the re-check and its time were recorded (the
    /// observation's id).
    Rechecked(i64),
}

/// How often an observation was found unchanged, and when last.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Recheck {
    /// Unchanged checks after the observation.
    pub count: i64,
    pub first_rechecked_at: String,
    /// When the report was last found unchanged: the time its freshness is proven to.
    pub last_checked_at: String,
}

/// One page of an asset's observations, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// The page's readable observations, newest first, each with its re-checks.
    pub rows: Vec<(StoredObservation, Option<Recheck>)>,
    /// Rows that could not be read.
    pub corrupt: Vec<CorruptRow>,
    /// The observation just older than the page (for the transition into the page's oldest row).
    pub older: Option<StoredObservation>,
    /// The id to ask `before` for the next (older) page; `None` on the last page.
    pub next_before: Option<i64>,
}

/// One asset in the per-asset index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatestRow {
    pub asset: String,
    pub severity: String,
    pub undetermined: bool,
    /// When the asset was last checked (scanned, or re-checked unchanged).
    pub checked_at: String,
    /// Its latest observation.
    pub observation: StoredObservation,
}

/// What [`History::prune`] removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pruned {
    pub observations: usize,
    pub rechecks: usize,
    pub bundles: usize,
    pub chain_readings: usize,
    /// Evidence hashes kept because an attestation on chain (the latest registry reading of an asset) holds them.
    pub kept_on_chain: usize,
}

/// A report's content without the times it was produced at: two checks whose fingerprints agree saw the
/// same thing. The times are the `*_at` and window fields, and the ledger a finding says it read at ("at
/// ledger 135"), which is a time too: two checks a few ledgers apart that read the same flags saw the same
/// thing, and a worker that re-checks what a dead one had just recorded records a re-check, not a second
/// observation.
pub fn fingerprint(report_json: &str) -> String {
    use sha2::{Digest, Sha256};
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(text) if text.contains("at ledger ") => {
                *text = without_ledger_numbers(text);
            }
            serde_json::Value::Object(map) => {
                for key in [
                    "scanned_at",
                    "retrieved_at",
                    "observation_window_start",
                    "observation_window_end",
                ] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let canonical = match serde_json::from_str::<serde_json::Value>(report_json) {
        Ok(mut value) => {
            strip(&mut value);
            value.to_string()
        }
        // Not JSON: never equal to anything but the same bytes.
        Err(_) => report_json.to_string(),
    };
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

/// `text` with the number after each "at ledger " replaced by `N`.
fn without_ledger_numbers(text: &str) -> String {
    const MARK: &str = "at ledger ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let (before, after) = rest.split_at(at + MARK.len());
        out.push_str(before);
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out.push('N');
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// The `latest` index's columns of a report: its severity name and whether it is undetermined.
fn index_columns(report_json: &str) -> (String, bool) {
    let value: serde_json::Value = serde_json::from_str(report_json).unwrap_or_default();
    (
        value["severity"].as_str().unwrap_or("unknown").to_string(),
        value["undetermined"].as_bool().unwrap_or(true),
    )
}

impl History {
    /// The default path: `<data dir>/assay/history.sqlite3` (e.g. `~/.local/share/assay/` on Linux).
    pub fn default_path() -> Option<PathBuf> {
        dirs::data_dir().map(|d| d.join("assay").join("history.sqlite3"))
    }

    fn err(path: &str, message: impl ToString) -> HistoryError {
        HistoryError {
            path: path.to_string(),
            message: message.to_string(),
        }
    }

    /// Opens (creating if needed) the history at `path`.
    pub fn open(file: &Path) -> Result<History, HistoryError> {
        let path = file.display().to_string();
        let path = path.as_str();
        if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Self::err(path, e))?;
        }
        let conn = Connection::open(file).map_err(|e| Self::err(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| Self::err(path, e))?;
        // Write-ahead logging: `assay history` reads while `watch` appends, without "database is locked".
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(|e| Self::err(path, e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Self::err(
                path,
                format!("cannot use write-ahead logging (journal mode stays {mode}); put the history on a local file system"),
            ));
        }
        // In WAL mode NORMAL loses no committed transaction to a crash of this process, and never corrupts
        // the file; only a power loss may drop the last commits.
        conn.execute_batch("PRAGMA synchronous = NORMAL")
            .map_err(|e| Self::err(path, e))?;
        let mut history = History {
            store: Store::Sqlite(conn),
            path: path.to_string(),
        };
        history.migrate()?;
        Ok(history)
    }

    /// Opens (creating or migrating if needed) the history in `database`.
    pub fn connect(database: &Database) -> Result<History, HistoryError> {
        match database {
            Database::Sqlite(file) => History::open(file),
            Database::Postgres(url) => {
                let path = url.to_string();
                let store = postgres::checkout(url.secret()).map_err(|e| Self::err(&path, e))?;
                Ok(History {
                    store: Store::Postgres(store, url.clone()),
                    path,
                })
            }
        }
    }

    /// Opens the history in `database` to read it: [`History::open_existing`] for a file (`Ok(None)` when
    /// there is none); a PostgreSQL database is connected to (and migrated) as by [`History::connect`].
    pub fn connect_existing(database: &Database) -> Result<Option<History>, HistoryError> {
        match database {
            Database::Sqlite(file) => History::open_existing(file),
            Database::Postgres(_) => History::connect(database).map(Some),
        }
    }

    /// Brings the store to [`SCHEMA_VERSION`] in one transaction: a store that fails half-way is left as
    /// it was. A store of a newer schema is refused.
    fn migrate(&mut self) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let Store::Sqlite(conn) = &mut self.store else {
            return Ok(());
        };
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| Self::err(&path, e))?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(|e| Self::err(&path, e))?;
        if version > SCHEMA_VERSION {
            return Err(Self::err(
                &path,
                format!(
                    "schema version {version} is newer than this assay understands ({SCHEMA_VERSION}); \
                     use the assay that wrote it, or a newer one"
                ),
            ));
        }
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        tx.execute_batch(SCHEMA_V1)
            .and_then(|()| tx.execute_batch(MIGRATE_TO_V2))
            .map_err(|e| {
                Self::err(
                    &path,
                    format!("cannot migrate the store from schema {version} to {SCHEMA_VERSION} (nothing was changed): {e}"),
                )
            })?;
        tx.commit().map_err(|e| Self::err(&path, e))
    }

    /// Opens an existing history read-only; `Ok(None)` when the file does not exist. A store of an older
    /// schema is migrated first (which needs write access: without it, the error names the fix).
    pub fn open_existing(file: &Path) -> Result<Option<History>, HistoryError> {
        let name = file.display().to_string();
        let (path, name) = (file, name.as_str());
        if !path.exists() {
            return Ok(None);
        }
        let version: i64 = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("PRAGMA user_version", [], |row| row.get(0)))
            .map_err(|e| Self::err(name, e))?;
        if version < SCHEMA_VERSION {
            History::open(path).map_err(|e| HistoryError {
                message: format!(
                    "{} (the store is schema {version}: open it once with write access to migrate it, e.g. \
                     by the `assay watch` that writes it, or `assay history prune --keep-days N --history {}`)",
                    e.message,
                    path.display()
                ),
                ..e
            })?;
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| Self::err(name, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| Self::err(name, e))?;
        Ok(Some(History {
            store: Store::Sqlite(conn),
            path: name.to_string(),
        }))
    }

    /// Appends observations in one transaction, each a new row even when unchanged (`assay scan`: every
    /// scan asked for is kept): all or nothing.
    pub fn append(&mut self, rows: &[(String, String, String)]) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let conn = match &mut self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg.append(rows.to_vec()).map_err(|e| Self::err(&path, e))
            }
        };
        let tx = conn.transaction().map_err(|e| Self::err(&path, e))?;
        for (asset, scanned_at, report) in rows {
            insert_observation(&tx, asset, scanned_at, report, None)
                .map_err(|e| Self::err(&path, e))?;
        }
        tx.commit().map_err(|e| Self::err(&path, e))
    }

    /// Records one check of `asset` (what `watch` and `attest` do): a new observation when the report
    /// differs from the asset's latest (times aside, [`fingerprint`]), otherwise only that it was
    /// re-checked, and when. `bundle` is the report's evidence bundle `(evidence_hash, bundle JSON)`, kept
    /// once per hash. One transaction: all or nothing.
    pub fn record(
        &mut self,
        asset: &str,
        checked_at: &str,
        report_json: &str,
        bundle: Option<(&str, &str)>,
    ) -> Result<Recorded, HistoryError> {
        let path = self.path.clone();
        let conn = match &mut self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg
                    .record(
                        asset.to_string(),
                        checked_at.to_string(),
                        report_json.to_string(),
                        bundle.map(|(hash, json)| (hash.to_string(), json.to_string())),
                    )
                    .map_err(|e| Self::err(&path, e))
            }
        };
        let e = |e: rusqlite::Error| Self::err(&path, e);
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        let print = fingerprint(report_json);
        let latest: Option<(i64, Option<String>)> = tx
            .query_row(
                "SELECT id, fingerprint FROM observations WHERE asset = ?1 ORDER BY id DESC LIMIT 1",
                params![asset],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map(Some)
            .or_else(|err| match err {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                other => Err(other),
            })
            .map_err(e)?;
        let recorded = match latest {
            Some((id, Some(previous))) if previous == print => {
                tx.execute(
                    "INSERT INTO rechecks (observation_id, asset, first_rechecked_at, last_checked_at, count) \
                     VALUES (?1, ?2, ?3, ?3, 1) ON CONFLICT (observation_id) DO UPDATE SET \
                     last_checked_at = excluded.last_checked_at, count = count + 1",
                    params![id, asset, checked_at],
                )
                .map_err(e)?;
                tx.execute(
                    "UPDATE latest SET checked_at = ?2 WHERE asset = ?1",
                    params![asset, checked_at],
                )
                .map_err(e)?;
                Recorded::Rechecked(id)
            }
            _ => Recorded::Observed(
                insert_observation(
                    &tx,
                    asset,
                    checked_at,
                    report_json,
                    Some((&print, bundle.map(|(hash, _)| hash))),
                )
                .map_err(e)?,
            ),
        };
        if let Some((hash, bundle_json)) = bundle {
            tx.execute(
                "INSERT INTO bundles (evidence_hash, asset, recorded_at, bundle_json) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (evidence_hash) DO UPDATE SET recorded_at = MAX(recorded_at, excluded.recorded_at)",
                params![hash, asset, checked_at, bundle_json],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(recorded)
    }

    /// Appends what `watch` read from (or wrote to) the registry for assets: `(asset, read_at, entry_json)`,
    /// in one transaction.
    pub fn append_chain_readings(
        &mut self,
        rows: &[(String, String, ChainReading)],
    ) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let conn = match &mut self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                let rows = rows
                    .iter()
                    .map(|(asset, read_at, entry)| {
                        serde_json::to_string(entry).map(|e| (asset.clone(), read_at.clone(), e))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| Self::err(&path, e))?;
                return pg
                    .append_chain_readings(rows)
                    .map_err(|e| Self::err(&path, e));
            }
        };
        let tx = conn.transaction().map_err(|e| Self::err(&path, e))?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO chain_readings (asset, read_at, entry_json) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| Self::err(&path, e))?;
            for (asset, read_at, entry) in rows {
                let entry = serde_json::to_string(entry).map_err(|e| Self::err(&path, e))?;
                insert
                    .execute(params![asset, read_at, entry])
                    .map_err(|e| Self::err(&path, e))?;
            }
        }
        tx.commit().map_err(|e| Self::err(&path, e))
    }

    /// Counts `cost` stroops against `account`'s spend on UTC `day` (days since 1970-01-01) if the day's
    /// total stays within `limit`, in one immediate transaction: every process writing with the same key to
    /// this store (a restart, a shard, each `watch --once` from cron) shares one count. `Ok(Ok(total))` is
    /// the day's total with the cost counted; `Ok(Err(total))` refuses it, with the day's total so far.
    ///
    /// The table is created on first use (stores of schema 2 gain it without a migration; an older assay
    /// ignores it).
    pub fn reserve_spend(
        &mut self,
        account: &str,
        day: u64,
        cost: u64,
        limit: u64,
    ) -> Result<Result<u64, u64>, HistoryError> {
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| Self::err(&path, e);
        let day = i64::try_from(day).map_err(|_| Self::err(&path, "day out of range"))?;
        let conn = match &mut self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                let as_u64 = |n: i64| u64::try_from(n).unwrap_or(u64::MAX);
                return pg
                    .reserve_spend(account.to_string(), day, as_i64(cost), as_i64(limit))
                    .map(|answer| answer.map(as_u64).map_err(as_u64))
                    .map_err(|e| Self::err(&path, e));
            }
        };
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(fail)?;
        tx.execute_batch(SPEND_TABLE).map_err(fail)?;
        let spent: i64 = tx
            .query_row(
                "SELECT COALESCE((SELECT stroops FROM spend WHERE account = ?1 AND day = ?2), 0)",
                params![account, day],
                |row| row.get(0),
            )
            .map_err(fail)?;
        let spent = u64::try_from(spent).unwrap_or(u64::MAX);
        let total = spent.saturating_add(cost);
        if total > limit {
            return Ok(Err(spent));
        }
        let stored = i64::try_from(total).map_err(|_| Self::err(&path, "spend out of range"))?;
        tx.execute(
            "INSERT INTO spend (account, day, stroops) VALUES (?1, ?2, ?3)
             ON CONFLICT (account, day) DO UPDATE SET stroops = excluded.stroops",
            params![account, day, stored],
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(Ok(total))
    }

    /// What `account` has counted on UTC `day` ([`History::reserve_spend`]); 0 when nothing is recorded.
    pub fn spent(&self, account: &str, day: u64) -> Result<u64, HistoryError> {
        let day = i64::try_from(day).map_err(|_| Self::err(&self.path, "day out of range"))?;
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg
                    .spent(account.to_string(), day)
                    .map(|n| u64::try_from(n).unwrap_or(u64::MAX))
                    .map_err(|e| Self::err(&self.path, e))
            }
        };
        let found: Result<i64, _> = conn.query_row(
            "SELECT stroops FROM spend WHERE account = ?1 AND day = ?2",
            params![account, day],
            |row| row.get(0),
        );
        match found {
            Ok(n) => Ok(u64::try_from(n).unwrap_or(u64::MAX)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(0),
            Err(e) if e.to_string().contains("no such table") => Ok(0),
            Err(e) => Err(Self::err(&self.path, e)),
        }
    }

    /// The latest registry reading recorded for `asset` as `(read_at, entry_json)`; `None` when there is
    /// none, or the store predates the readings.
    pub fn latest_chain_reading(
        &self,
        asset: &str,
    ) -> Result<Option<(String, String)>, HistoryError> {
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg
                    .latest_chain_reading(asset.to_string())
                    .map_err(|e| Self::err(&self.path, e))
            }
        };
        let no_table = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'chain_readings'",
                [],
                |row| row.get::<_, i64>(0),
            )
            .map_err(|e| Self::err(&self.path, e))?
            == 0;
        if no_table {
            return Ok(None);
        }
        match conn.query_row(
            "SELECT read_at, entry_json FROM chain_readings WHERE asset = ?1 ORDER BY id DESC LIMIT 1",
            params![asset],
            |row| Ok((row.get(0)?, row.get(1)?)),
        ) {
            Ok(found) => Ok(Some(found)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(Self::err(&self.path, e)),
        }
    }

    /// Every observation of `asset`, oldest first. A row whose columns cannot be read (wrong type,
    /// not UTF-8) is listed in `corrupt` instead of failing the whole listing.
    pub fn list(&self, asset: &str) -> Result<Listed, HistoryError> {
        self.listing(Listing::Asset(asset.to_string()))
    }

    /// One page of `asset`'s observations, newest first: at most `limit` rows older than observation
    /// `before` (the newest when `None`), through the `(asset, id)` index, so a page costs the same
    /// however long the asset's history is.
    pub fn page(
        &self,
        asset: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page, HistoryError> {
        let limit = limit.max(1);
        let listed = self.listing(Listing::Before {
            asset: asset.to_string(),
            before: before.unwrap_or(i64::MAX),
            limit: i64::try_from(limit + 1).unwrap_or(i64::MAX),
        })?;
        let mut rows = listed.rows;
        let mut corrupt = listed.corrupt;
        // The extra row (readable or not) only says there is an older page.
        let fetched = rows.len() + corrupt.len();
        let mut older = None;
        if fetched > limit {
            let last_id = rows.last().map_or(i64::MIN, |r| r.id);
            let last_corrupt = corrupt.last().map_or(i64::MIN, |c| c.id);
            if last_id < last_corrupt {
                corrupt.pop();
            } else {
                older = rows.pop();
            }
        }
        let oldest_on_page = rows
            .iter()
            .map(|r| r.id)
            .chain(corrupt.iter().map(|c| c.id))
            .min();
        let next_before = (fetched > limit).then_some(oldest_on_page).flatten();
        let mut with_rechecks = Vec::with_capacity(rows.len());
        for row in rows {
            let recheck = self.recheck(row.id)?;
            with_rechecks.push((row, recheck));
        }
        Ok(Page {
            rows: with_rechecks,
            corrupt,
            older,
            next_before,
        })
    }

    /// The re-checks of observation `id`, if it was ever found unchanged.
    pub fn recheck(&self, id: i64) -> Result<Option<Recheck>, HistoryError> {
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => return pg.recheck(id).map_err(|e| Self::err(&self.path, e)),
        };
        match conn.query_row(
            "SELECT count, first_rechecked_at, last_checked_at FROM rechecks WHERE observation_id = ?1",
            params![id],
            |row| {
                Ok(Recheck {
                    count: row.get(0)?,
                    first_rechecked_at: row.get(1)?,
                    last_checked_at: row.get(2)?,
                })
            },
        ) {
            Ok(found) => Ok(Some(found)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(Self::err(&self.path, e)),
        }
    }

    /// One page of the per-asset index, ordered by asset: at most `limit` assets after `after`, of
    /// severity `severity` when given (through the `latest` index: cost by page, not by store size).
    pub fn latest_page(
        &self,
        severity: Option<&str>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<LatestRow>, Vec<CorruptRow>), HistoryError> {
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg
                    .latest_page(
                        severity.map(str::to_string),
                        after.unwrap_or("").to_string(),
                        i64::try_from(limit).unwrap_or(i64::MAX),
                    )
                    .map_err(|e| Self::err(&self.path, e))
            }
        };
        let mut query = conn
            .prepare(
                "SELECT l.asset, l.severity, l.undetermined, l.checked_at, o.id, o.asset, o.scanned_at, o.report_json \
                 FROM latest l JOIN observations o ON o.id = l.observation_id \
                 WHERE (?1 IS NULL OR l.severity = ?1) AND l.asset > ?2 ORDER BY l.asset LIMIT ?3",
            )
            .map_err(|e| Self::err(&self.path, e))?;
        let rows = query
            .query_map(
                params![severity, after.unwrap_or(""), limit as i64],
                |row| {
                    let id: i64 = row.get(4)?;
                    let read = || -> rusqlite::Result<LatestRow> {
                        Ok(LatestRow {
                            asset: row.get(0)?,
                            severity: row.get(1)?,
                            undetermined: row.get(2)?,
                            checked_at: row.get(3)?,
                            observation: StoredObservation {
                                id,
                                asset: row.get(5)?,
                                scanned_at: row.get(6)?,
                                report_json: row.get(7)?,
                            },
                        })
                    };
                    Ok(read().map_err(|e| CorruptRow {
                        id,
                        reason: e.to_string(),
                    }))
                },
            )
            .map_err(|e| Self::err(&self.path, e))?;
        let (mut good, mut corrupt) = (Vec::new(), Vec::new());
        for row in rows {
            match row.map_err(|e| Self::err(&self.path, e))? {
                Ok(row) => good.push(row),
                Err(c) => corrupt.push(c),
            }
        }
        Ok((good, corrupt))
    }

    /// Assets by `(severity, undetermined)` of their latest report, from the index alone.
    pub fn severity_counts(&self) -> Result<Vec<(String, bool, i64)>, HistoryError> {
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg.severity_counts().map_err(|e| Self::err(&self.path, e))
            }
        };
        let mut query = conn
            .prepare(
                "SELECT severity, undetermined, COUNT(*) FROM latest GROUP BY severity, undetermined \
                 ORDER BY severity, undetermined",
            )
            .map_err(|e| Self::err(&self.path, e))?;
        let rows = query
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .map_err(|e| Self::err(&self.path, e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| Self::err(&self.path, e))
    }

    /// The evidence bundle (JSON) recorded under `evidence_hash`, with its asset and when it was last
    /// recorded.
    pub fn bundle(
        &self,
        evidence_hash: &str,
    ) -> Result<Option<(String, String, String)>, HistoryError> {
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg
                    .bundle(evidence_hash.to_ascii_lowercase())
                    .map_err(|e| Self::err(&self.path, e))
            }
        };
        match conn.query_row(
            "SELECT asset, recorded_at, bundle_json FROM bundles WHERE evidence_hash = ?1",
            params![evidence_hash.to_ascii_lowercase()],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        ) {
            Ok(found) => Ok(Some(found)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(Self::err(&self.path, e)),
        }
    }

    /// Drops what is older than `cutoff` (an RFC 3339 UTC time) and that no one needs: observations
    /// (last checked before the cutoff) other than each asset's latest, their re-checks, registry
    /// readings other than each asset's latest, and bundles no attestation on chain holds. A bundle (and
    /// its observations) whose hash the latest registry reading of an asset holds is kept whatever its
    /// age. One transaction: all or nothing.
    pub fn prune(&mut self, cutoff: &str) -> Result<Pruned, HistoryError> {
        let path = self.path.clone();
        let conn = match &mut self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg
                    .prune(cutoff.to_string())
                    .map_err(|e| Self::err(&path, e))
            }
        };
        let e = |e: rusqlite::Error| Self::err(&path, e);
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        let (held, unknown) = held_on_chain(&tx).map_err(e)?;
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS held (evidence_hash TEXT PRIMARY KEY); DELETE FROM held; \
             CREATE TEMP TABLE IF NOT EXISTS unknown_reading (asset TEXT PRIMARY KEY); DELETE FROM unknown_reading;",
        )
        .map_err(e)?;
        for hash in &held {
            tx.execute("INSERT OR IGNORE INTO held VALUES (?1)", params![hash])
                .map_err(e)?;
        }
        for asset in &unknown {
            tx.execute(
                "INSERT OR IGNORE INTO unknown_reading VALUES (?1)",
                params![asset],
            )
            .map_err(e)?;
        }
        tx.execute("INSERT INTO prune_permit (granted) VALUES (1)", [])
            .map_err(e)?;
        let observations = tx
            .execute(
                "DELETE FROM observations WHERE id NOT IN (SELECT observation_id FROM latest) \
                 AND COALESCE((SELECT last_checked_at FROM rechecks WHERE observation_id = observations.id), scanned_at) < ?1 \
                 AND (evidence_hash IS NULL OR evidence_hash NOT IN (SELECT evidence_hash FROM held)) \
                 AND asset NOT IN (SELECT asset FROM unknown_reading)",
                params![cutoff],
            )
            .map_err(e)?;
        let rechecks = tx
            .execute(
                "DELETE FROM rechecks WHERE observation_id NOT IN (SELECT id FROM observations)",
                [],
            )
            .map_err(e)?;
        let bundles = tx
            .execute(
                "DELETE FROM bundles WHERE recorded_at < ?1 \
                 AND evidence_hash NOT IN (SELECT evidence_hash FROM held) \
                 AND asset NOT IN (SELECT asset FROM unknown_reading) \
                 AND evidence_hash NOT IN (SELECT o.evidence_hash FROM latest l JOIN observations o ON o.id = l.observation_id WHERE o.evidence_hash IS NOT NULL)",
                params![cutoff],
            )
            .map_err(e)?;
        let chain_readings = tx
            .execute(
                "DELETE FROM chain_readings WHERE read_at < ?1 \
                 AND id NOT IN (SELECT MAX(id) FROM chain_readings GROUP BY asset)",
                params![cutoff],
            )
            .map_err(e)?;
        tx.execute("DELETE FROM prune_permit", []).map_err(e)?;
        tx.execute_batch("DROP TABLE held; DROP TABLE unknown_reading;")
            .map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(Pruned {
            observations,
            rechecks,
            bundles,
            chain_readings,
            kept_on_chain: held.len(),
        })
    }

    /// Rows in each table, for the size of the store.
    pub fn counts(&self) -> Result<BTreeMap<&'static str, i64>, HistoryError> {
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => return pg.counts().map_err(|e| Self::err(&self.path, e)),
        };
        let mut counts = BTreeMap::new();
        for table in COUNTED_TABLES {
            let n: i64 = conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| {
                    row.get(0)
                })
                .map_err(|e| Self::err(&self.path, e))?;
            counts.insert(table, n);
        }
        Ok(counts)
    }

    /// The newest observation of every asset, ordered by asset; unreadable rows as in [`History::list`].
    pub fn latest_per_asset(&self) -> Result<Listed, HistoryError> {
        self.listing(Listing::LatestPerAsset)
    }

    /// Answers a listing, keeping unreadable rows apart.
    fn listing(&self, listing: Listing) -> Result<Listed, HistoryError> {
        let conn = match &self.store {
            Store::Sqlite(conn) => conn,
            Store::Postgres(pg, _) => {
                return pg.listing(listing).map_err(|e| Self::err(&self.path, e))
            }
        };
        let path = &self.path;
        match &listing {
            Listing::Asset(asset) => sqlite_listed(
                conn,
                path,
                "SELECT id, asset, scanned_at, report_json FROM observations WHERE asset = ?1 ORDER BY id",
                params![asset],
            ),
            Listing::Before {
                asset,
                before,
                limit,
            } => sqlite_listed(
                conn,
                path,
                "SELECT id, asset, scanned_at, report_json FROM observations \
                 WHERE asset = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
                params![asset, before, limit],
            ),
            Listing::LatestPerAsset => sqlite_listed(
                conn,
                path,
                "SELECT o.id, o.asset, o.scanned_at, o.report_json FROM observations o \
                 JOIN (SELECT asset, MAX(id) AS id FROM observations GROUP BY asset) latest \
                 ON o.id = latest.id ORDER BY o.asset",
                [],
            ),
        }
    }

    /// Runs one statement on the store, for tests that prove it refuses rewrites; `Ok` is the rows changed.
    pub fn execute_for_test(&self, sql: &str) -> Result<u64, HistoryError> {
        match &self.store {
            Store::Sqlite(conn) => conn
                .execute(sql, [])
                .map(|n| n as u64)
                .map_err(|e| Self::err(&self.path, e)),
            Store::Postgres(pg, _) => pg
                .execute(sql.to_string())
                .map_err(|e| Self::err(&self.path, e)),
        }
    }

    /// The SQLite connection (`None` for PostgreSQL), for tests that reach under the store.
    pub fn connection(&self) -> Option<&Connection> {
        match &self.store {
            Store::Sqlite(conn) => Some(conn),
            Store::Postgres(..) => None,
        }
    }

    /// The PostgreSQL connection, or the error that says the work queue needs one.
    fn shared(&self) -> Result<(&postgres::PgStore, &PostgresUrl), HistoryError> {
        match &self.store {
            Store::Postgres(pg, url) => Ok((pg, url)),
            Store::Sqlite(_) => Err(Self::err(
                &self.path,
                "the work queue and its leases need PostgreSQL (--database or ASSAY_DATABASE_URL); \
                 a SQLite history serves one process",
            )),
        }
    }

    /// Adds to `scope`'s work queue the assets it lacks, due at once; returns how many were added.
    pub fn queue_sync(&self, scope: &str, assets: &[String]) -> Result<u64, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.queue_sync(scope.to_string(), assets.to_vec())
            .map_err(|e| Self::err(&self.path, e))
    }

    /// Leases to `worker`, for `lease`, up to `limit` of `scope`'s due assets that no one else holds
    /// (`SELECT … FOR UPDATE SKIP LOCKED`: workers never wait on each other's rows). Sorted by name.
    pub fn queue_claim(
        &self,
        scope: &str,
        worker: &str,
        limit: usize,
        lease: std::time::Duration,
    ) -> Result<Vec<String>, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.queue_claim(
            scope.to_string(),
            worker.to_string(),
            i64::try_from(limit).unwrap_or(i64::MAX),
            lease.as_secs_f64() * 1000.0,
        )
        .map_err(|e| Self::err(&self.path, e))
    }

    /// Ends `worker`'s lease on `asset`, due again after `next`, with its outcome. `Ok(false)`: the lease
    /// had expired and another worker holds the asset now (nothing was changed).
    pub fn queue_complete(
        &self,
        scope: &str,
        worker: &str,
        asset: &str,
        next: std::time::Duration,
        outcome: &str,
        failed: bool,
    ) -> Result<bool, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.queue_complete(
            scope.to_string(),
            worker.to_string(),
            asset.to_string(),
            next.as_secs_f64() * 1000.0,
            outcome.to_string(),
            failed,
        )
        .map_err(|e| Self::err(&self.path, e))
    }

    /// Extends `worker`'s leases on `assets` to `lease` from now (a pass that outlasts a third of its
    /// lease keeps its assets); returns how many it still held.
    pub fn queue_renew(
        &self,
        scope: &str,
        worker: &str,
        assets: &[String],
        lease: std::time::Duration,
    ) -> Result<u64, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.queue_renew(
            scope.to_string(),
            worker.to_string(),
            assets.to_vec(),
            lease.as_secs_f64() * 1000.0,
        )
        .map_err(|e| Self::err(&self.path, e))
    }

    /// Makes `assets` of `scope` due now (the leader saw their ledger entries change).
    pub fn queue_mark_due(&self, scope: &str, assets: &[String]) -> Result<u64, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.queue_mark_due(scope.to_string(), assets.to_vec())
            .map_err(|e| Self::err(&self.path, e))
    }

    /// The work queue (of `scope`, else of every scope): due, leased, failed and all assets.
    pub fn queue_stats(&self, scope: Option<&str>) -> Result<QueueStats, HistoryError> {
        let (pg, _) = self.shared()?;
        let [due, leased, failing, total, workers] = pg
            .queue_stats(scope.map(str::to_string))
            .map_err(|e| Self::err(&self.path, e))?;
        Ok(QueueStats {
            due,
            leased,
            failing,
            total,
            workers,
        })
    }

    /// Says that `worker` of `scope` is alive; returns how many of its workers are (itself included).
    pub fn worker_seen(&self, scope: &str, worker: &str) -> Result<i64, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.worker_seen(scope.to_string(), worker.to_string())
            .map_err(|e| Self::err(&self.path, e))
    }

    /// The reaction baseline `scope`'s leaders saved (ledger entry key → fingerprint).
    pub fn ledger_baseline(&self, scope: &str) -> Result<BTreeMap<String, String>, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.ledger_baseline(scope.to_string())
            .map_err(|e| Self::err(&self.path, e))
    }

    /// Saves entries `(key, fingerprint)` of `scope`'s reaction baseline.
    pub fn save_ledger_baseline(
        &self,
        scope: &str,
        entries: &[(String, String)],
    ) -> Result<(), HistoryError> {
        let (pg, _) = self.shared()?;
        pg.save_ledger_baseline(scope.to_string(), entries.to_vec())
            .map_err(|e| Self::err(&self.path, e))
    }

    /// Each scope's recorded leader: `(scope, worker, seconds since its last heartbeat)`.
    pub fn leaders(&self) -> Result<Vec<(String, String, f64)>, HistoryError> {
        let (pg, _) = self.shared()?;
        pg.leaders().map_err(|e| Self::err(&self.path, e))
    }

    /// Records `worker` as `scope`'s leader, or refreshes its heartbeat.
    pub fn leader_heartbeat(&self, scope: &str, worker: &str) -> Result<(), HistoryError> {
        let (pg, _) = self.shared()?;
        pg.heartbeat(scope.to_string(), worker.to_string())
            .map_err(|e| Self::err(&self.path, e))
    }

    /// Takes the lock named `name` if no one holds it: a session-level advisory lock on a connection of
    /// its own, held until the [`HeldLock`] drops or the process dies (its socket closes).
    pub fn try_lock(&self, name: &str) -> Result<Option<HeldLock>, HistoryError> {
        let (_, url) = self.shared()?;
        let held = HeldLock::new(url, name).map_err(|e| Self::err(&self.path, e))?;
        match held.store.try_lock(held.key) {
            Ok(true) => Ok(Some(held)),
            Ok(false) => {
                held.release_unheld();
                Ok(None)
            }
            Err(e) => Err(Self::err(&self.path, e)),
        }
    }

    /// Waits for the lock named `name` (as [`History::try_lock`]).
    pub fn lock(&self, name: &str) -> Result<HeldLock, HistoryError> {
        let (_, url) = self.shared()?;
        let held = HeldLock::new(url, name).map_err(|e| Self::err(&self.path, e))?;
        held.store
            .lock(held.key)
            .map_err(|e| Self::err(&self.path, e))?;
        Ok(held)
    }

    /// Copies this SQLite history, whole, into the empty PostgreSQL history `target`: every observation
    /// (with its id), re-check, bundle, registry reading, the per-asset index and the spend ledger, in
    /// one transaction, so a copy that fails leaves the database as it was. `progress` hears each table's
    /// rows as they go. Returns the rows copied per table.
    pub fn copy_to(
        &self,
        target: &History,
        mut progress: impl FnMut(&str, u64, u64),
    ) -> Result<BTreeMap<&'static str, u64>, HistoryError> {
        let Store::Sqlite(conn) = &self.store else {
            return Err(Self::err(
                &self.path,
                "the copy reads a SQLite history; this is PostgreSQL",
            ));
        };
        let (pg, _) = target.shared()?;
        let to = |e: String| Self::err(&target.path, e);
        if pg.holds_history().map_err(to)? {
            return Err(Self::err(
                &target.path,
                "the database already holds a history: copy into an empty one (nothing was copied)",
            ));
        }
        pg.batch("BEGIN".into()).map_err(to)?;
        let copied = self.copy_tables(conn, pg, &target.path, &mut progress);
        match copied {
            Ok(counts) => {
                pg.batch(
                    "SELECT setval(pg_get_serial_sequence('observations', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM observations; \
                     SELECT setval(pg_get_serial_sequence('chain_readings', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM chain_readings; \
                     COMMIT"
                        .into(),
                )
                .map_err(to)?;
                Ok(counts)
            }
            Err(e) => {
                let _ = pg.batch("ROLLBACK".into());
                Err(e)
            }
        }
    }

    fn copy_tables(
        &self,
        conn: &Connection,
        pg: &postgres::PgStore,
        target: &str,
        progress: &mut impl FnMut(&str, u64, u64),
    ) -> Result<BTreeMap<&'static str, u64>, HistoryError> {
        const ROWS_PER_INSERT: usize = 2_000;
        let from = |e: rusqlite::Error| Self::err(&self.path, e);
        let mut counts = BTreeMap::new();
        for (table, columns) in COPIED_TABLES {
            let present: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    params![table],
                    |row| row.get(0),
                )
                .map_err(from)?;
            if present == 0 {
                continue;
            }
            let total: i64 = conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| {
                    row.get(0)
                })
                .map_err(from)?;
            let total = u64::try_from(total).unwrap_or(0);
            let selected: Vec<String> = columns
                .iter()
                .map(|c| match c.split_once("::") {
                    Some((name, _)) => format!("CAST({name} AS TEXT)"),
                    None => (*c).to_string(),
                })
                .collect();
            let mut query = conn
                .prepare(&format!(
                    "SELECT rowid, {} FROM {table} ORDER BY rowid",
                    selected.join(", ")
                ))
                .map_err(from)?;
            let mut rows = query.query([]).map_err(from)?;
            let mut chunk = Vec::with_capacity(ROWS_PER_INSERT);
            let mut done = 0u64;
            let mut insert = |chunk: Vec<Vec<Option<String>>>, done: &mut u64| {
                *done += pg.insert_text_rows(table, columns, chunk).map_err(|e| {
                    Self::err(target, format!("copying {table}: {e} (nothing was copied)"))
                })?;
                progress(table, *done, total);
                Ok::<(), HistoryError>(())
            };
            while let Some(row) = rows.next().map_err(from)? {
                let rowid: i64 = row.get(0).map_err(from)?;
                let values = (1..=columns.len())
                    .map(|k| row.get::<_, Option<String>>(k))
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(|e| {
                        Self::err(
                            &self.path,
                            format!(
                                "{table} row {rowid} cannot be read ({e}): nothing was copied; prune it \
                                 (`assay history prune`) or repair the file first"
                            ),
                        )
                    })?;
                chunk.push(values);
                if chunk.len() >= ROWS_PER_INSERT {
                    insert(std::mem::take(&mut chunk), &mut done)?;
                }
            }
            if !chunk.is_empty() {
                insert(chunk, &mut done)?;
            }
            counts.insert(table, done);
        }
        Ok(counts)
    }

    /// Whether the history is in PostgreSQL (shared by many processes) rather than a SQLite file.
    pub fn is_shared(&self) -> bool {
        matches!(self.store, Store::Postgres(..))
    }
}

/// Runs a `SELECT id, asset, scanned_at, report_json` query on SQLite, keeping unreadable rows apart.
fn sqlite_listed(
    conn: &Connection,
    path: &str,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Listed, HistoryError> {
    let mut query = conn.prepare(sql).map_err(|e| History::err(path, e))?;
    let rows = query
        .query_map(params, |row| {
            let id: i64 = row.get(0)?;
            Ok(stored_observation(row).map_err(|e| CorruptRow {
                id,
                reason: e.to_string(),
            }))
        })
        .map_err(|e| History::err(path, e))?;
    let mut listed = Listed::default();
    for row in rows {
        match row.map_err(|e| History::err(path, e))? {
            Ok(row) => listed.rows.push(row),
            Err(corrupt) => listed.corrupt.push(corrupt),
        }
    }
    Ok(listed)
}

/// What the chain readings say prune must keep: the evidence hashes attestations on chain cite (each
/// asset's latest reading, when it is [`ChainReading::Attested`]; a revoked one cites nothing), and the
/// assets whose latest reading is not a [`ChainReading`] at all (what they cite is unknown, so all their
/// rows are kept: fail closed).
fn held_on_chain(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<(Vec<String>, Vec<String>)> {
    let mut query = tx.prepare(
        "SELECT asset, entry_json FROM chain_readings WHERE id IN (SELECT MAX(id) FROM chain_readings GROUP BY asset)",
    )?;
    let entries = query
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(held_and_unknown(entries))
}

/// Sorts each asset's latest registry reading `(asset, entry_json)` into the evidence hashes it cites and
/// the assets whose reading cannot be read (all their rows are kept).
fn held_and_unknown(latest_readings: Vec<(String, String)>) -> (Vec<String>, Vec<String>) {
    let (mut held, mut unknown) = (Vec::new(), Vec::new());
    for (asset, entry) in latest_readings {
        match serde_json::from_str::<ChainReading>(&entry) {
            Ok(reading) => held.extend(reading.cites().map(str::to_ascii_lowercase)),
            Err(_) => unknown.push(asset),
        }
    }
    (held, unknown)
}

/// Inserts one observation and points the asset's `latest` index at it; `marks` are its fingerprint and
/// evidence hash (a raw append has neither).
fn insert_observation(
    tx: &rusqlite::Transaction<'_>,
    asset: &str,
    scanned_at: &str,
    report_json: &str,
    marks: Option<(&str, Option<&str>)>,
) -> rusqlite::Result<i64> {
    let (print, hash) = match marks {
        Some((print, hash)) => (Some(print.to_string()), hash),
        None => (Some(fingerprint(report_json)), None),
    };
    tx.execute(
        "INSERT INTO observations (asset, scanned_at, report_json, fingerprint, evidence_hash) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![asset, scanned_at, report_json, print, hash],
    )?;
    let id = tx.last_insert_rowid();
    let (severity, undetermined) = index_columns(report_json);
    tx.execute(
        "INSERT INTO latest (asset, observation_id, severity, undetermined, checked_at) \
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (asset) DO UPDATE SET observation_id = excluded.observation_id, \
         severity = excluded.severity, undetermined = excluded.undetermined, checked_at = excluded.checked_at",
        params![asset, id, severity, undetermined, scanned_at],
    )?;
    Ok(id)
}

/// One `SELECT id, asset, scanned_at, report_json` row.
fn stored_observation(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredObservation> {
    Ok(StoredObservation {
        id: row.get(0)?,
        asset: row.get(1)?,
        scanned_at: row.get(2)?,
        report_json: row.get(3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testsupport::postgres::PostgresServer;

    /// A new, empty store of each backend (a SQLite file, a PostgreSQL database): the tests below run on
    /// both, so the backends cannot drift apart in what they answer.
    struct Stores {
        databases: Vec<Database>,
        _dir: tempfile::TempDir,
        _server: PostgresServer,
    }

    fn stores() -> Stores {
        let dir = tempfile::tempdir().unwrap();
        let server = PostgresServer::start();
        Stores {
            databases: vec![
                Database::Sqlite(dir.path().join("sub/history.sqlite3")),
                Database::parse(&server.fresh_database()),
            ],
            _dir: dir,
            _server: server,
        }
    }

    #[test]
    fn the_ledger_a_finding_read_at_is_a_time_not_content() {
        let at = |ledger: &str, flags: &str| {
            serde_json::json!({"scanned_at": "t", "findings": [{"reasoning": format!(
                "The issuer account was read through stellar-rpc (http://127.0.0.1:1/rpc) at ledger {ledger}, \
                 and Horizon's record beside it; flags {flags}.")}]})
            .to_string()
        };
        assert_eq!(fingerprint(&at("135", "R")), fingerprint(&at("310", "R")));
        assert_ne!(fingerprint(&at("135", "R")), fingerprint(&at("135", "RC")));
        assert_eq!(
            without_ledger_numbers("at ledger 7, at ledger 12; at ledger x; ledger 9"),
            "at ledger N, at ledger N; at ledger x; ledger 9"
        );
    }

    #[test]
    fn many_processes_share_one_spend_count_and_one_observation_per_change() {
        let server = PostgresServer::start();
        let database = Database::parse(&server.fresh_database());
        // 16 writers at once, each its own connection, each asking for 3 of a 100 limit: 33 fit.
        let granted = std::thread::scope(|s| {
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    let database = &database;
                    s.spawn(move || {
                        let mut h = History::connect(database).unwrap();
                        (0..4)
                            .filter(|_| h.reserve_spend("GKEY", 20_000, 3, 100).unwrap().is_ok())
                            .count()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .sum::<usize>()
        });
        assert_eq!(granted, 33);
        let h = History::connect(&database).unwrap();
        assert_eq!(h.spent("GKEY", 20_000).unwrap(), 99);
        // 8 workers record the same report of one asset at once: one observation, 7 re-checks.
        std::thread::scope(|s| {
            for _ in 0..8 {
                let database = &database;
                s.spawn(move || {
                    History::connect(database)
                        .unwrap()
                        .record("A-G", "2026-01-01T00:00:00Z", &report("high", "t"), None)
                        .unwrap()
                });
            }
        });
        let h = History::connect(&database).unwrap();
        assert_eq!(h.list("A-G").unwrap().rows.len(), 1);
        let id = h.list("A-G").unwrap().rows[0].id;
        assert_eq!(h.recheck(id).unwrap().map(|r| r.count), Some(7));
    }

    #[test]
    fn the_queue_leases_each_due_asset_to_one_worker_and_takes_back_an_expired_lease() {
        let server = PostgresServer::start();
        let database = Database::parse(&server.fresh_database());
        let h = History::connect(&database).unwrap();
        let assets: Vec<String> = (0..300).map(|n| format!("A{n:03}-G")).collect();
        assert_eq!(h.queue_sync("net/REG", &assets).unwrap(), 300);
        // Syncing again adds nothing; another scope is another queue.
        assert_eq!(h.queue_sync("net/REG", &assets).unwrap(), 0);
        assert_eq!(h.queue_sync("net/OTHER", &assets[..5]).unwrap(), 5);
        let long = std::time::Duration::from_secs(600);
        // Four workers claim at once, 10 at a time, until nothing is due: every asset exactly once.
        let claimed: Vec<Vec<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|w| {
                    let database = &database;
                    s.spawn(move || {
                        let h = History::connect(database).unwrap();
                        let mut mine = Vec::new();
                        loop {
                            let got = h
                                .queue_claim("net/REG", &format!("w{w}"), 10, long)
                                .unwrap();
                            if got.is_empty() {
                                break mine;
                            }
                            mine.extend(got);
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all: Vec<String> = claimed.concat();
        all.sort();
        assert_eq!(all, assets);
        assert!(
            claimed.iter().all(|c| !c.is_empty()),
            "every worker got work"
        );
        let stats = h.queue_stats(Some("net/REG")).unwrap();
        assert_eq!((stats.due, stats.leased, stats.total), (0, 300, 300));
        // A worker that dies holds its lease until it expires; then another takes the asset, and the
        // dead worker's late completion changes nothing.
        let other = "net/OTHER";
        let short = std::time::Duration::from_millis(300);
        assert_eq!(h.queue_claim(other, "dead", 2, short).unwrap().len(), 2);
        assert_eq!(h.queue_claim(other, "live", 10, long).unwrap().len(), 3);
        assert!(h.queue_claim(other, "live", 10, long).unwrap().is_empty());
        std::thread::sleep(std::time::Duration::from_millis(400));
        let retaken = h.queue_claim(other, "live", 10, long).unwrap();
        assert_eq!(retaken, ["A000-G", "A001-G"]);
        let hour = std::time::Duration::from_secs(3600);
        assert!(!h
            .queue_complete(other, "dead", "A000-G", hour, "written", false)
            .unwrap());
        assert!(h
            .queue_complete(other, "live", "A000-G", hour, "written", false)
            .unwrap());
        assert!(h
            .queue_complete(other, "live", "A001-G", hour, "failed", true)
            .unwrap());
        let stats = h.queue_stats(Some(other)).unwrap();
        assert_eq!((stats.due, stats.leased, stats.failing), (0, 3, 1));
        // A ledger change makes a completed asset due at once.
        assert_eq!(h.queue_mark_due(other, &["A000-G".to_string()]).unwrap(), 1);
        assert_eq!(h.queue_claim(other, "live", 10, long).unwrap(), ["A000-G"]);
        // The queue needs PostgreSQL: a SQLite history says so.
        let dir = tempfile::tempdir().unwrap();
        let sqlite = History::open(&dir.path().join("h.sqlite3")).unwrap();
        let err = sqlite.queue_claim(other, "w", 1, long).unwrap_err();
        assert!(err.to_string().contains("need PostgreSQL"), "{err}");
    }

    #[test]
    fn a_named_lock_has_one_holder_until_it_drops() {
        let server = PostgresServer::start();
        let database = Database::parse(&server.fresh_database());
        let (a, b) = (
            History::connect(&database).unwrap(),
            History::connect(&database).unwrap(),
        );
        let held = a
            .try_lock("leader net/REG")
            .unwrap()
            .expect("free at first");
        assert!(held.is_held());
        assert!(b.try_lock("leader net/REG").unwrap().is_none());
        assert!(b.try_lock("leader net/OTHER").unwrap().is_some());
        drop(held);
        assert!(b.try_lock("leader net/REG").unwrap().is_some());
        a.leader_heartbeat("net/REG", "w1").unwrap();
        a.leader_heartbeat("net/REG", "w2").unwrap();
        let leaders = a.leaders().unwrap();
        assert_eq!(leaders.len(), 1);
        assert_eq!(
            (leaders[0].0.as_str(), leaders[0].1.as_str()),
            ("net/REG", "w2")
        );
    }

    #[test]
    fn a_database_url_is_never_shown_with_its_password_and_never_taken_from_argv_with_one() {
        let url =
            Database::parse("postgres://assay:hunter2@db.example:5433/assay?password=hunter3");
        let Database::Postgres(pg) = &url else {
            panic!("a postgres URL: {url:?}");
        };
        assert!(pg.has_password());
        for shown in [url.to_string(), format!("{url:?}")] {
            assert!(!shown.contains("hunter"), "{shown}");
            assert!(shown.contains("db.example:5433/assay"), "{shown}");
        }
        let err =
            Database::resolve(Some("postgres://assay:hunter2@db/assay"), None, None).unwrap_err();
        assert!(
            !err.contains("hunter2") && err.contains("ASSAY_DATABASE_URL"),
            "{err}"
        );
        let err = Database::resolve(Some("/tmp/h.sqlite3"), None, None).unwrap_err();
        assert!(err.contains("--history PATH"), "{err}");
        let both = Database::resolve(Some("postgres://db/assay"), None, Some(Path::new("/tmp/h")));
        assert!(both.unwrap_err().contains("give one"));
        assert_eq!(
            Database::resolve(Some("postgresql://assay@db/assay"), None, None).unwrap(),
            Some(Database::parse("postgresql://assay@db/assay"))
        );
        assert_eq!(
            Database::resolve(None, None, Some(Path::new("/tmp/h.sqlite3"))).unwrap(),
            Some(Database::Sqlite("/tmp/h.sqlite3".into()))
        );
        // A refused connection names the database without its password.
        let err = History::connect(&Database::parse("postgres://u:hunter2@127.0.0.1:1/x"))
            .err()
            .unwrap();
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(err.to_string().contains("cannot connect"), "{err}");
    }

    #[test]
    fn a_newer_database_schema_is_refused() {
        let server = PostgresServer::start();
        let database = Database::parse(&server.fresh_database());
        let h = History::connect(&database).unwrap();
        h.execute_for_test("INSERT INTO assay_schema_migrations (version) VALUES (99)")
            .unwrap();
        drop(h);
        // Reusing an idle connection skips the schema check: a new process is what meets a newer schema.
        let Database::Postgres(url) = &database else {
            unreachable!()
        };
        let err = postgres::PgStore::connect_for_test(url.secret())
            .err()
            .unwrap();
        assert!(err.contains("schema version 99 is newer"), "{err}");
    }

    #[test]
    fn the_day_s_spend_is_shared_by_every_opening_and_refused_past_the_limit() {
        let stores = stores();
        for database in &stores.databases {
            the_day_s_spend_is_shared(database);
        }
    }

    fn the_day_s_spend_is_shared(database: &Database) {
        // A restart, a shard, a cron run: each its own opening of the same store.
        let open = || History::connect(database).unwrap();
        assert_eq!(open().spent("GKEY", 20_000).unwrap(), 0);
        assert_eq!(open().reserve_spend("GKEY", 20_000, 4, 10).unwrap(), Ok(4));
        assert_eq!(open().reserve_spend("GKEY", 20_000, 4, 10).unwrap(), Ok(8));
        assert_eq!(open().reserve_spend("GKEY", 20_000, 4, 10).unwrap(), Err(8));
        assert_eq!(open().spent("GKEY", 20_000).unwrap(), 8);
        // Another key, and the next UTC day, count apart.
        assert_eq!(
            open().reserve_spend("GOTHER", 20_000, 4, 10).unwrap(),
            Ok(4)
        );
        assert_eq!(open().reserve_spend("GKEY", 20_001, 4, 10).unwrap(), Ok(4));
        // A read-only opening sees the count.
        let read = History::connect_existing(database).unwrap().unwrap();
        assert_eq!(read.spent("GKEY", 20_000).unwrap(), 8);
    }

    #[test]
    fn appends_lists_and_refuses_rewrites() {
        let stores = stores();
        for database in &stores.databases {
            appends_lists_and_refuses_rewrites_in(database);
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(History::open_existing(&dir.path().join("none.sqlite3"))
            .unwrap()
            .is_none());
    }

    fn appends_lists_and_refuses_rewrites_in(database: &Database) {
        let mut history = History::connect(database).unwrap();
        history
            .append(&[
                (
                    "A-G1".into(),
                    "2026-01-01T00:00:00Z".into(),
                    "{\"n\":1}".into(),
                ),
                (
                    "B-G2".into(),
                    "2026-01-01T00:00:01Z".into(),
                    "{\"n\":2}".into(),
                ),
                (
                    "A-G1".into(),
                    "2026-01-02T00:00:00Z".into(),
                    "{\"n\":3}".into(),
                ),
            ])
            .unwrap();
        let rows = history.list("A-G1").unwrap().rows;
        assert_eq!(
            rows.iter()
                .map(|r| r.report_json.as_str())
                .collect::<Vec<_>>(),
            ["{\"n\":1}", "{\"n\":3}"]
        );
        let update = history.execute_for_test("UPDATE observations SET report_json = 'x'");
        assert!(update.unwrap_err().to_string().contains("append-only"));
        let delete = history.execute_for_test("DELETE FROM observations");
        assert!(delete.unwrap_err().to_string().contains("append-only"));
        drop(history);
        let reopened = History::connect_existing(database).unwrap().unwrap();
        assert_eq!(reopened.list("A-G1").unwrap().rows.len(), 2);
        let latest = reopened.latest_per_asset().unwrap();
        assert!(latest.corrupt.is_empty());
        assert_eq!(
            latest
                .rows
                .iter()
                .map(|r| (r.asset.as_str(), r.report_json.as_str()))
                .collect::<Vec<_>>(),
            [("A-G1", "{\"n\":3}"), ("B-G2", "{\"n\":2}")]
        );
    }

    #[test]
    fn latest_per_asset_keeps_an_unreadable_row_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let mut history = History::open(&path).unwrap();
        history
            .append(&[("A-G1".into(), "2026-01-01T00:00:00Z".into(), "{}".into())])
            .unwrap();
        // A report that is not text: the row cannot be read as a String.
        history
            .connection().unwrap()
            .execute(
                "INSERT INTO observations (asset, scanned_at, report_json) VALUES ('B-G2', 't', x'ff00')",
                [],
            )
            .unwrap();
        let latest = history.latest_per_asset().unwrap();
        assert_eq!(latest.rows.len(), 1);
        assert_eq!(latest.rows[0].asset, "A-G1");
        assert_eq!(latest.corrupt.len(), 1);
        assert_eq!(latest.corrupt[0].id, 2);
    }

    #[test]
    fn chain_readings_keep_the_latest_per_asset() {
        let stores = stores();
        for database in &stores.databases {
            chain_readings_keep_the_latest_per_asset_in(database);
        }
        // A store written before the readings existed answers "none", not an error.
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.sqlite3");
        rusqlite::Connection::open(&old)
            .unwrap()
            .execute_batch("CREATE TABLE observations (id INTEGER PRIMARY KEY, asset TEXT, scanned_at TEXT, report_json TEXT);")
            .unwrap();
        let old = History::open_existing(&old).unwrap().unwrap();
        assert_eq!(old.latest_chain_reading("A-G").unwrap(), None);
    }

    fn chain_readings_keep_the_latest_per_asset_in(database: &Database) {
        let mut h = History::connect(database).unwrap();
        assert_eq!(h.latest_chain_reading("A-G").unwrap(), None);
        let row = |asset: &str, at: &str, entry: ChainReading| (asset.into(), at.into(), entry);
        let attested = ChainReading::Attested {
            severity: 0,
            flags: 0,
            evidence_hash: "ab".repeat(32),
            attested_at: Some(1),
            tx_hash: None,
            ledger: None,
        };
        let revoked = ChainReading::Revoked {
            rule: "rule".into(),
            tx_hash: "cd".repeat(32),
            ledger: 9,
        };
        h.append_chain_readings(&[
            row("A-G", "2026-01-01T00:00:00Z", attested.clone()),
            row("B-G", "2026-01-01T00:00:00Z", attested),
        ])
        .unwrap();
        h.append_chain_readings(&[row("A-G", "2026-01-02T00:00:00Z", revoked.clone())])
            .unwrap();
        let read_only = History::connect_existing(database).unwrap().unwrap();
        let (at, json) = read_only.latest_chain_reading("A-G").unwrap().unwrap();
        assert_eq!(at, "2026-01-02T00:00:00Z");
        assert_eq!(
            serde_json::from_str::<ChainReading>(&json).unwrap(),
            revoked
        );
        assert!(json.starts_with(r#"{"state":"revoked","#), "{json}");
    }

    fn report(severity: &str, at: &str) -> String {
        serde_json::json!({"severity": severity, "undetermined": false, "scanned_at": at,
            "evidence": [{"claim": "c", "retrieved_at": at}]})
        .to_string()
    }

    #[test]
    fn an_unchanged_report_records_a_recheck_not_a_row() {
        let stores = stores();
        for database in &stores.databases {
            an_unchanged_report_records_a_recheck_in(database);
        }
    }

    fn an_unchanged_report_records_a_recheck_in(database: &Database) {
        let mut h = History::connect(database).unwrap();
        let first = h
            .record(
                "A-G",
                "2026-01-01T00:00:00Z",
                &report("high", "2026-01-01T00:00:00Z"),
                Some(("ab", "{}")),
            )
            .unwrap();
        let Recorded::Observed(id) = first else {
            panic!("{first:?}")
        };
        for day in 2..=9 {
            let at = format!("2026-01-0{day}T00:00:00Z");
            assert_eq!(
                h.record("A-G", &at, &report("high", &at), Some(("ab", "{}")))
                    .unwrap(),
                Recorded::Rechecked(id)
            );
        }
        let counts = h.counts().unwrap();
        assert_eq!(
            (
                counts["observations"],
                counts["rechecks"],
                counts["bundles"]
            ),
            (1, 1, 1)
        );
        assert_eq!(
            h.recheck(id).unwrap(),
            Some(Recheck {
                count: 8,
                first_rechecked_at: "2026-01-02T00:00:00Z".into(),
                last_checked_at: "2026-01-09T00:00:00Z".into()
            })
        );
        // A changed report is a new observation.
        let changed = h
            .record(
                "A-G",
                "2026-01-10T00:00:00Z",
                &report("medium", "2026-01-10T00:00:00Z"),
                Some(("cd", "{}")),
            )
            .unwrap();
        assert!(matches!(changed, Recorded::Observed(n) if n > id));
        let (rows, corrupt) = h.latest_page(Some("medium"), None, 10).unwrap();
        assert!(corrupt.is_empty());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].checked_at, "2026-01-10T00:00:00Z");
        assert!(h.latest_page(Some("high"), None, 10).unwrap().0.is_empty());
        assert_eq!(
            h.bundle("AB").unwrap().map(|b| b.0),
            Some("A-G".to_string())
        );
    }

    #[test]
    fn pages_walk_an_assets_history_newest_first() {
        let stores = stores();
        for database in &stores.databases {
            pages_walk_newest_first_in(database);
        }
    }

    fn pages_walk_newest_first_in(database: &Database) {
        let mut h = History::connect(database).unwrap();
        for n in 0..7 {
            let at = format!("2026-01-01T00:00:0{n}Z");
            h.record("A-G", &at, &report(&format!("s{n}"), &at), None)
                .unwrap();
            h.record("B-G", &at, &report(&format!("s{n}"), &at), None)
                .unwrap();
        }
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let page = h.page("A-G", before, 3).unwrap();
            assert!(page.rows.len() <= 3);
            seen.extend(page.rows.iter().map(|(r, _)| r.scanned_at.clone()));
            match page.next_before {
                Some(id) => {
                    assert!(page.older.is_some(), "a next page has an older row");
                    before = Some(id)
                }
                None => break,
            }
        }
        let expected: Vec<String> = (0..7)
            .rev()
            .map(|n| format!("2026-01-01T00:00:0{n}Z"))
            .collect();
        assert_eq!(seen, expected);
        let (first, _) = h.latest_page(None, None, 1).unwrap();
        let (second, _) = h.latest_page(None, Some(&first[0].asset), 1).unwrap();
        assert_eq!(
            (first[0].asset.as_str(), second[0].asset.as_str()),
            ("A-G", "B-G")
        );
    }

    #[test]
    fn prune_keeps_the_latest_and_what_the_chain_holds() {
        let stores = stores();
        for database in &stores.databases {
            prune_keeps_the_latest_in(database);
        }
    }

    fn prune_keeps_the_latest_in(database: &Database) {
        let mut h = History::connect(database).unwrap();
        // A-G: attested under hash "old" (still on chain), then changed twice; B-G: one old observation.
        for (asset, at, severity, hash) in [
            ("A-G", "2026-01-01T00:00:00Z", "high", "old"),
            ("A-G", "2026-01-02T00:00:00Z", "medium", "mid"),
            ("A-G", "2026-03-01T00:00:00Z", "low", "new"),
            ("B-G", "2026-01-01T00:00:00Z", "clear", "b"),
            ("B-G", "2026-03-01T00:00:00Z", "low", "b2"),
        ] {
            h.record(asset, at, &report(severity, "x"), Some((hash, "{}")))
                .unwrap();
        }
        let reading = |at: &str, hash: &str| {
            let entry = ChainReading::Attested {
                severity: 3,
                flags: 0,
                evidence_hash: hash.into(),
                attested_at: None,
                tx_hash: Some("t".into()),
                ledger: Some(1),
            };
            ("A-G".to_string(), at.to_string(), entry)
        };
        h.append_chain_readings(&[
            reading("2026-01-01T00:00:00Z", "mid"),
            reading("2026-01-03T00:00:00Z", "old"),
        ])
        .unwrap();
        // B-G's reading was written by hand with a misspelt key: what it cites is unknown, so none of
        // B-G's rows go (fail closed), though "b" is old and not its latest.
        h.execute_for_test(
            r#"INSERT INTO chain_readings (asset, read_at, entry_json) VALUES ('B-G', '2026-01-01T00:00:00Z', '{"state":"attested","evidence_hsh":"b"}')"#,
        )
        .unwrap();
        let pruned = h.prune("2026-02-01T00:00:00Z").unwrap();
        assert_eq!(
            pruned,
            Pruned {
                observations: 1,
                rechecks: 0,
                bundles: 1,
                chain_readings: 1,
                kept_on_chain: 1
            }
        );
        for kept in ["old", "new", "b", "b2"] {
            assert!(h.bundle(kept).unwrap().is_some(), "{kept} kept");
        }
        assert!(h.bundle("mid").unwrap().is_none());
        assert_eq!(h.list("A-G").unwrap().rows.len(), 2);
        assert_eq!(h.list("B-G").unwrap().rows.len(), 2);
        // Outside a prune, deleting is still refused.
        let refused = h.execute_for_test("DELETE FROM observations");
        assert!(refused.unwrap_err().to_string().contains("append-only"));
    }

    #[test]
    fn a_version_1_store_is_migrated_whole_and_a_newer_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite3");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(SCHEMA_V1).unwrap();
            conn.execute_batch(
                "CREATE TRIGGER observations_no_delete BEFORE DELETE ON observations \
                 BEGIN SELECT RAISE(ABORT, 'the observation history is append-only'); END; PRAGMA user_version = 1;",
            )
            .unwrap();
            conn.execute(
                "INSERT INTO observations (asset, scanned_at, report_json) VALUES ('A-G', 't', ?1)",
                params![report("high", "t")],
            )
            .unwrap();
        }
        let h = History::open_existing(&path).unwrap().unwrap();
        let (rows, _) = h.latest_page(Some("high"), None, 5).unwrap();
        assert_eq!(rows.len(), 1, "the index is built from the old rows");
        drop(h);
        let newer = dir.path().join("v9.sqlite3");
        Connection::open(&newer)
            .unwrap()
            .execute_batch("PRAGMA user_version = 9;")
            .unwrap();
        let err = History::open(&newer).err().unwrap();
        assert!(
            err.to_string().contains("schema version 9 is newer"),
            "{err}"
        );
    }
}
