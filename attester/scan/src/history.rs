//! The observation history: an append-only SQLite store of every report a scan produced.
//!
//! Rows are only ever inserted; triggers make the database itself refuse UPDATE and DELETE, so a
//! bug or a second tool cannot rewrite the past. Each row keeps the whole schema_version 1 report,
//! from which the core derives observations and the transitions between them.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

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

/// A history error, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("history {path}: {message}")]
pub struct HistoryError {
    pub path: String,
    pub message: String,
}

/// An open history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
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
/// same thing.
pub fn fingerprint(report_json: &str) -> String {
    use sha2::{Digest, Sha256};
    fn strip(value: &mut serde_json::Value) {
        match value {
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

    fn err(path: &Path, message: impl ToString) -> HistoryError {
        HistoryError {
            path: path.display().to_string(),
            message: message.to_string(),
        }
    }

    /// Opens (creating if needed) the history at `path`.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Self::err(path, e))?;
        }
        let conn = Connection::open(path).map_err(|e| Self::err(path, e))?;
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
            conn,
            path: path.to_path_buf(),
        };
        history.migrate()?;
        Ok(history)
    }

    /// Brings the store to [`SCHEMA_VERSION`] in one transaction: a store that fails half-way is left as
    /// it was. A store of a newer schema is refused.
    fn migrate(&mut self) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let tx = self
            .conn
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
    pub fn open_existing(path: &Path) -> Result<Option<History>, HistoryError> {
        if !path.exists() {
            return Ok(None);
        }
        let version: i64 = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("PRAGMA user_version", [], |row| row.get(0)))
            .map_err(|e| Self::err(path, e))?;
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
            .map_err(|e| Self::err(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| Self::err(path, e))?;
        Ok(Some(History {
            conn,
            path: path.to_path_buf(),
        }))
    }

    /// Appends observations in one transaction, each a new row even when unchanged (`assay scan`: every
    /// scan asked for is kept): all or nothing.
    pub fn append(&mut self, rows: &[(String, String, String)]) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| Self::err(&path, e))?;
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
        let e = |e: rusqlite::Error| Self::err(&path, e);
        let tx = self
            .conn
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
        let tx = self.conn.transaction().map_err(|e| Self::err(&path, e))?;
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
        let tx = self
            .conn
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
        let found: Result<i64, _> = self.conn.query_row(
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
        let no_table = self
            .conn
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
        match self.conn.query_row(
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
        self.listed(
            "SELECT id, asset, scanned_at, report_json FROM observations WHERE asset = ?1 ORDER BY id",
            params![asset],
        )
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
        let listed = self.listed(
            "SELECT id, asset, scanned_at, report_json FROM observations \
             WHERE asset = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
            params![asset, before.unwrap_or(i64::MAX), (limit + 1) as i64],
        )?;
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
        match self.conn.query_row(
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
        let mut query = self
            .conn
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
        let mut query = self
            .conn
            .prepare("SELECT severity, undetermined, COUNT(*) FROM latest GROUP BY severity, undetermined")
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
        match self.conn.query_row(
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
        let e = |e: rusqlite::Error| Self::err(&path, e);
        let tx = self
            .conn
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
        let mut counts = BTreeMap::new();
        for table in [
            "observations",
            "rechecks",
            "bundles",
            "chain_readings",
            "latest",
        ] {
            let n: i64 = self
                .conn
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
        self.listed(
            "SELECT o.id, o.asset, o.scanned_at, o.report_json FROM observations o \
             JOIN (SELECT asset, MAX(id) AS id FROM observations GROUP BY asset) latest \
             ON o.id = latest.id ORDER BY o.asset",
            [],
        )
    }

    /// Runs a `SELECT id, asset, scanned_at, report_json` query, keeping unreadable rows apart.
    fn listed(&self, sql: &str, params: impl rusqlite::Params) -> Result<Listed, HistoryError> {
        let mut query = self
            .conn
            .prepare(sql)
            .map_err(|e| Self::err(&self.path, e))?;
        let rows = query
            .query_map(params, |row| {
                let id: i64 = row.get(0)?;
                Ok(stored_observation(row).map_err(|e| CorruptRow {
                    id,
                    reason: e.to_string(),
                }))
            })
            .map_err(|e| Self::err(&self.path, e))?;
        let mut listed = Listed::default();
        for row in rows {
            match row.map_err(|e| Self::err(&self.path, e))? {
                Ok(row) => listed.rows.push(row),
                Err(corrupt) => listed.corrupt.push(corrupt),
            }
        }
        Ok(listed)
    }

    /// Direct access for tests that prove the store refuses rewrites.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

/// What the chain readings say prune must keep: the evidence hashes attestations on chain cite (each
/// asset's latest reading, when it is [`ChainReading::Attested`]; a revoked one cites nothing), and the
/// assets whose latest reading is not a [`ChainReading`] at all (what they cite is unknown, so all their
/// rows are kept: fail closed).
fn held_on_chain(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<(Vec<String>, Vec<String>)> {
    let mut query = tx.prepare(
        "SELECT asset, entry_json FROM chain_readings WHERE id IN (SELECT MAX(id) FROM chain_readings GROUP BY asset)",
    )?;
    let entries = query.query_map([], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
    })?;
    let (mut held, mut unknown) = (Vec::new(), Vec::new());
    for entry in entries {
        let (asset, entry) = entry?;
        match serde_json::from_str::<ChainReading>(&entry) {
            Ok(reading) => held.extend(reading.cites().map(str::to_ascii_lowercase)),
            Err(_) => unknown.push(asset),
        }
    }
    Ok((held, unknown))
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

    #[test]
    fn the_day_s_spend_is_shared_by_every_opening_and_refused_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        // A restart, a shard, a cron run: each its own opening of the same store.
        let open = || History::open(&path).unwrap();
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
        let read = History::open_existing(&path).unwrap().unwrap();
        assert_eq!(read.spent("GKEY", 20_000).unwrap(), 8);
    }

    #[test]
    fn appends_lists_and_refuses_rewrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/history.sqlite3");
        let mut history = History::open(&path).unwrap();
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
        let update = history
            .connection()
            .execute("UPDATE observations SET report_json = 'x'", []);
        assert!(update.unwrap_err().to_string().contains("append-only"));
        let delete = history.connection().execute("DELETE FROM observations", []);
        assert!(delete.unwrap_err().to_string().contains("append-only"));
        drop(history);
        let reopened = History::open_existing(&path).unwrap().unwrap();
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
        assert!(History::open_existing(&dir.path().join("none.sqlite3"))
            .unwrap()
            .is_none());
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
            .connection()
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
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite3");
        let mut h = History::open(&path).unwrap();
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
        let read_only = History::open_existing(&path).unwrap().unwrap();
        let (at, json) = read_only.latest_chain_reading("A-G").unwrap().unwrap();
        assert_eq!(at, "2026-01-02T00:00:00Z");
        assert_eq!(
            serde_json::from_str::<ChainReading>(&json).unwrap(),
            revoked
        );
        assert!(json.starts_with(r#"{"state":"revoked","#), "{json}");
        // A store written before the readings existed answers "none", not an error.
        let old = dir.path().join("old.sqlite3");
        rusqlite::Connection::open(&old)
            .unwrap()
            .execute_batch("CREATE TABLE observations (id INTEGER PRIMARY KEY, asset TEXT, scanned_at TEXT, report_json TEXT);")
            .unwrap();
        let old = History::open_existing(&old).unwrap().unwrap();
        assert_eq!(old.latest_chain_reading("A-G").unwrap(), None);
    }

    fn report(severity: &str, at: &str) -> String {
        serde_json::json!({"severity": severity, "undetermined": false, "scanned_at": at,
            "evidence": [{"claim": "c", "retrieved_at": at}]})
        .to_string()
    }

    #[test]
    fn an_unchanged_report_records_a_recheck_not_a_row() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.sqlite3")).unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.sqlite3")).unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.sqlite3")).unwrap();
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
        h.connection()
            .execute(
                "INSERT INTO chain_readings (asset, read_at, entry_json) VALUES ('B-G', '2026-01-01T00:00:00Z', ?1)",
                params![r#"{"state":"attested","evidence_hsh":"b"}"#],
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
        let refused = h.connection().execute("DELETE FROM observations", []);
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
