//! The observation history: an append-only SQLite store of every report a scan produced.
//!
//! Rows are only ever inserted; triggers make the database itself refuse UPDATE and DELETE, so a
//! bug or a second tool cannot rewrite the past. Each row keeps the whole schema_version 1 report,
//! from which the core derives observations and the transitions between them.
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

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS observations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    asset       TEXT NOT NULL,
    scanned_at  TEXT NOT NULL,
    report_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS observations_by_asset ON observations (asset, id);
CREATE TRIGGER IF NOT EXISTS observations_no_update BEFORE UPDATE ON observations
BEGIN SELECT RAISE(ABORT, 'the observation history is append-only'); END;
CREATE TRIGGER IF NOT EXISTS observations_no_delete BEFORE DELETE ON observations
BEGIN SELECT RAISE(ABORT, 'the observation history is append-only'); END;
CREATE TABLE IF NOT EXISTS chain_readings (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    asset      TEXT NOT NULL,
    read_at    TEXT NOT NULL,
    entry_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chain_readings_by_asset ON chain_readings (asset, id);
PRAGMA user_version = 1;
";

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
        conn.execute_batch(SCHEMA).map_err(|e| Self::err(path, e))?;
        Ok(History {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing history read-only; `Ok(None)` when the file does not exist.
    pub fn open_existing(path: &Path) -> Result<Option<History>, HistoryError> {
        if !path.exists() {
            return Ok(None);
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

    /// Appends observations in one transaction: all or nothing.
    pub fn append(&mut self, rows: &[(String, String, String)]) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| Self::err(&path, e))?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO observations (asset, scanned_at, report_json) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| Self::err(&path, e))?;
            for (asset, scanned_at, report) in rows {
                insert
                    .execute(params![asset, scanned_at, report])
                    .map_err(|e| Self::err(&path, e))?;
            }
        }
        tx.commit().map_err(|e| Self::err(&path, e))
    }

    /// Appends what `watch` read from (or wrote to) the registry for assets: `(asset, read_at, entry_json)`,
    /// in one transaction.
    pub fn append_chain_readings(
        &mut self,
        rows: &[(String, String, String)],
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
                insert
                    .execute(params![asset, read_at, entry])
                    .map_err(|e| Self::err(&path, e))?;
            }
        }
        tx.commit().map_err(|e| Self::err(&path, e))
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
        let row = |asset: &str, at: &str, entry: &str| (asset.into(), at.into(), entry.into());
        h.append_chain_readings(&[
            row("A-G", "2026-01-01T00:00:00Z", r#"{"state":"attested"}"#),
            row("B-G", "2026-01-01T00:00:00Z", r#"{"state":"attested"}"#),
        ])
        .unwrap();
        h.append_chain_readings(&[row("A-G", "2026-01-02T00:00:00Z", r#"{"state":"revoked"}"#)])
            .unwrap();
        let read_only = History::open_existing(&path).unwrap().unwrap();
        assert_eq!(
            read_only.latest_chain_reading("A-G").unwrap(),
            Some((
                "2026-01-02T00:00:00Z".into(),
                r#"{"state":"revoked"}"#.into()
            ))
        );
        // A store written before the readings existed answers "none", not an error.
        let old = dir.path().join("old.sqlite3");
        rusqlite::Connection::open(&old)
            .unwrap()
            .execute_batch("CREATE TABLE observations (id INTEGER PRIMARY KEY, asset TEXT, scanned_at TEXT, report_json TEXT);")
            .unwrap();
        let old = History::open_existing(&old).unwrap().unwrap();
        assert_eq!(old.latest_chain_reading("A-G").unwrap(), None);
    }
}
