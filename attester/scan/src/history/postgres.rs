//! The history in PostgreSQL: the same tables, guarantees and answers as the SQLite store, for operators
//! whose `watch` workers and `serve` replicas share one database.
//!
//! The client is rust-postgres's synchronous one, which drives its connection on a runtime of its own and
//! so may not be called from a thread that runs Tokio tasks. Each store therefore owns one thread that
//! holds the connection; the store's methods hand it a job and wait for the answer, which blocks the
//! caller exactly as a SQLite call does, from any thread.
//!
//! Concurrency: two writers of the same asset are ordered by a per-asset advisory lock held for the
//! transaction (`record`); the spend budget is one atomic upsert that refuses past the limit
//! (`reserve_spend`); the append-only rule is a trigger, lifted only inside `prune`'s transaction.
use std::collections::BTreeMap;
use std::sync::mpsc;

use postgres::{Client, GenericClient, NoTls, Row};

use super::{
    fingerprint, index_columns, CorruptRow, LatestRow, Listed, Listing, Recheck, Recorded,
    StoredObservation,
};

/// The migrations, in order; each runs once, in one transaction, recorded in `assay_schema_migrations`.
/// Never edit one that has shipped: add the next.
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        r#"
CREATE TABLE observations (
    id            BIGSERIAL PRIMARY KEY,
    asset         TEXT COLLATE "C" NOT NULL,
    scanned_at    TEXT COLLATE "C" NOT NULL,
    report_json   TEXT NOT NULL,
    fingerprint   TEXT,
    evidence_hash TEXT COLLATE "C"
);
CREATE INDEX observations_by_asset ON observations (asset, id);
CREATE INDEX observations_by_time ON observations (scanned_at);
CREATE TABLE chain_readings (
    id         BIGSERIAL PRIMARY KEY,
    asset      TEXT COLLATE "C" NOT NULL,
    read_at    TEXT COLLATE "C" NOT NULL,
    entry_json TEXT NOT NULL
);
CREATE INDEX chain_readings_by_asset ON chain_readings (asset, id);
CREATE TABLE rechecks (
    observation_id     BIGINT PRIMARY KEY,
    asset              TEXT COLLATE "C" NOT NULL,
    first_rechecked_at TEXT COLLATE "C" NOT NULL,
    last_checked_at    TEXT COLLATE "C" NOT NULL,
    count              BIGINT NOT NULL
);
CREATE TABLE bundles (
    evidence_hash TEXT COLLATE "C" PRIMARY KEY,
    asset         TEXT COLLATE "C" NOT NULL,
    recorded_at   TEXT COLLATE "C" NOT NULL,
    bundle_json   TEXT NOT NULL
);
CREATE INDEX bundles_by_time ON bundles (recorded_at);
CREATE TABLE latest (
    asset          TEXT COLLATE "C" PRIMARY KEY,
    observation_id BIGINT NOT NULL,
    severity       TEXT COLLATE "C" NOT NULL,
    undetermined   BOOLEAN NOT NULL,
    checked_at     TEXT COLLATE "C" NOT NULL
);
CREATE INDEX latest_by_severity ON latest (severity, asset);
CREATE TABLE spend (
    account TEXT COLLATE "C" NOT NULL,
    day     BIGINT NOT NULL,
    stroops BIGINT NOT NULL,
    PRIMARY KEY (account, day)
);
CREATE FUNCTION assay_observations_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('assay.prune', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the observation history is append-only; only `assay history prune` removes rows';
END
$$;
CREATE TRIGGER observations_append_only BEFORE UPDATE OR DELETE ON observations
    FOR EACH ROW EXECUTE FUNCTION assay_observations_append_only();
"#,
    ),
    (
        2,
        r#"
CREATE TABLE watch_queue (
    scope           TEXT COLLATE "C" NOT NULL,
    asset           TEXT COLLATE "C" NOT NULL,
    due_at          TIMESTAMPTZ NOT NULL,
    leased_by       TEXT,
    lease_until     TIMESTAMPTZ,
    last_checked_at TIMESTAMPTZ,
    last_outcome    TEXT,
    failures        INTEGER NOT NULL DEFAULT 0,
    checks          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, asset)
);
CREATE INDEX watch_queue_by_due ON watch_queue (scope, due_at);
CREATE TABLE watch_ledger_seen (
    scope       TEXT COLLATE "C" NOT NULL,
    entry_key   TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT NOT NULL,
    PRIMARY KEY (scope, entry_key)
);
CREATE TABLE watch_workers (
    scope   TEXT COLLATE "C" NOT NULL,
    worker  TEXT NOT NULL,
    seen_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (scope, worker)
);
CREATE TABLE watch_leader (
    scope        TEXT COLLATE "C" PRIMARY KEY,
    worker       TEXT NOT NULL,
    since        TIMESTAMPTZ NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL
);
"#,
    ),
];

/// The newest migration this build knows.
pub const SCHEMA_VERSION: i64 = 2;

/// A worker seen within this many seconds counts as live (it says so every turn of its loop: 200 ms when
/// idle, once a pass when busy, and its pass renews its leases meanwhile).
pub(super) const LIVE_WORKER_SECS: f64 = 30.0;

/// The advisory-lock class of the per-asset write lock (the first key of `pg_advisory_xact_lock(int, int)`).
const ASSET_LOCK_CLASS: i32 = 0x4153_0001;
/// The advisory lock every migration holds, so workers started together migrate once.
const MIGRATION_LOCK: i64 = 0x4153_5341_5900_0001;

/// How long connecting may take before the database counts as down.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// A connection to the history in PostgreSQL, held by a thread of its own.
pub(super) struct PgStore {
    jobs: mpsc::Sender<Job>,
    /// Set when the connection was found closed: it is not handed out again.
    broken: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Idle connections by URL: a `watch` records every check through a fresh [`super::History`], and
/// reconnecting (and re-checking the schema) each time would cost more than the record.
static IDLE: std::sync::Mutex<Vec<(String, PgStore)>> = std::sync::Mutex::new(Vec::new());

/// Idle connections kept per process.
const MAX_IDLE: usize = 16;

/// An idle connection to `url`, else a new one.
pub(super) fn checkout(url: &str) -> Result<PgStore, String> {
    let reused = {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        idle.iter()
            .position(|(u, _)| u == url)
            .map(|at| idle.swap_remove(at).1)
    };
    match reused {
        Some(store) => Ok(store),
        None => PgStore::connect(url),
    }
}

/// Returns a connection for reuse, unless it was found closed.
pub(super) fn checkin(url: &str, store: PgStore) {
    if store.broken.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
    if idle.len() < MAX_IDLE {
        idle.push((url.to_string(), store));
    }
}

/// A PostgreSQL failure, as text with the server's detail when it sent one.
fn describe(err: &postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => err.to_string(),
    }
}

impl PgStore {
    /// Connects to `url` and brings the schema to [`SCHEMA_VERSION`]; a database of a newer schema is
    /// refused. Errors are text without the URL (the caller names the database, password removed).
    fn connect(url: &str) -> Result<PgStore, String> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e: postgres::Error| format!("not a PostgreSQL URL: {}", describe(&e)))?;
        // libpq's convention: a password not in the URL may come from PGPASSWORD.
        if config.get_password().is_none() {
            if let Some(password) = std::env::var_os("PGPASSWORD") {
                config.password(password.as_encoded_bytes());
            }
        }
        config.application_name("assay");
        config.connect_timeout(CONNECT_TIMEOUT);
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready, connected) = mpsc::channel::<Result<(), String>>();
        std::thread::Builder::new()
            .name("assay-history-postgres".into())
            .spawn(move || {
                let mut client = match config.connect(NoTls) {
                    Ok(client) => client,
                    Err(e) => {
                        let _ = ready.send(Err(format!("cannot connect: {}", describe(&e))));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                // The thread ends when the store (the last sender) is dropped.
                for job in inbox {
                    job(&mut client);
                }
            })
            .map_err(|e| format!("cannot start the connection's thread: {e}"))?;
        connected
            .recv()
            .map_err(|_| "the connection's thread ended before connecting".to_string())??;
        let store = PgStore {
            jobs,
            broken: Default::default(),
        };
        store.run(migrate)??;
        Ok(store)
    }

    /// A new connection, not an idle one, for tests of what connecting does.
    #[cfg(test)]
    pub(super) fn connect_for_test(url: &str) -> Result<PgStore, String> {
        PgStore::connect(url)
    }

    /// This connection, leaving in its place one that answers every job with "ended".
    pub(super) fn take(&mut self) -> PgStore {
        let (ended, _) = mpsc::channel();
        std::mem::replace(
            self,
            PgStore {
                jobs: ended,
                broken: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
            },
        )
    }

    /// Runs `job` on the connection's thread and waits for its answer.
    fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Client) -> T + Send + 'static,
    ) -> Result<T, String> {
        let (answer, answered) = mpsc::channel();
        self.jobs
            .send(Box::new(move |client: &mut Client| {
                let _ = answer.send(job(client));
            }))
            .map_err(|_| "the connection's thread has ended".to_string())?;
        answered
            .recv()
            .map_err(|_| "the connection's thread ended during a query".to_string())
    }

    /// Runs a job whose errors are PostgreSQL errors, as text.
    fn query<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Client) -> Result<T, postgres::Error> + Send + 'static,
    ) -> Result<T, String> {
        self.run(job)?.map_err(|e| {
            if e.is_closed() {
                self.broken
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            describe(&e)
        })
    }

    pub(super) fn append(&self, rows: Vec<(String, String, String)>) -> Result<(), String> {
        self.query(move |client| {
            let mut tx = client.transaction()?;
            for (asset, scanned_at, report) in &rows {
                let print = fingerprint(report);
                insert_observation(&mut tx, asset, scanned_at, report, &print, None)?;
            }
            tx.commit()
        })
    }

    pub(super) fn record(
        &self,
        asset: String,
        checked_at: String,
        report_json: String,
        bundle: Option<(String, String)>,
    ) -> Result<Recorded, String> {
        self.query(move |client| {
            let mut tx = client.transaction()?;
            // Two workers recording the same asset take turns: "is this the latest again?" and the
            // insert that follows are one step.
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[&ASSET_LOCK_CLASS, &asset],
            )?;
            let print = fingerprint(&report_json);
            let latest = tx.query_opt(
                "SELECT id, fingerprint FROM observations WHERE asset = $1 ORDER BY id DESC LIMIT 1",
                &[&asset],
            )?;
            let latest: Option<(i64, Option<String>)> =
                latest.map(|row| (row.get(0), row.get(1)));
            let recorded = match latest {
                Some((id, Some(previous))) if previous == print => {
                    tx.execute(
                        "INSERT INTO rechecks (observation_id, asset, first_rechecked_at, last_checked_at, count) \
                         VALUES ($1, $2, $3, $3, 1) ON CONFLICT (observation_id) DO UPDATE SET \
                         last_checked_at = excluded.last_checked_at, count = rechecks.count + 1",
                        &[&id, &asset, &checked_at],
                    )?;
                    tx.execute(
                        "UPDATE latest SET checked_at = $2 WHERE asset = $1",
                        &[&asset, &checked_at],
                    )?;
                    Recorded::Rechecked(id)
                }
                _ => Recorded::Observed(insert_observation(
                    &mut tx,
                    &asset,
                    &checked_at,
                    &report_json,
                    &print,
                    bundle.as_ref().map(|(hash, _)| hash.as_str()),
                )?),
            };
            if let Some((hash, bundle_json)) = &bundle {
                tx.execute(
                    "INSERT INTO bundles (evidence_hash, asset, recorded_at, bundle_json) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (evidence_hash) DO UPDATE SET \
                     recorded_at = GREATEST(bundles.recorded_at, excluded.recorded_at)",
                    &[hash, &asset, &checked_at, bundle_json],
                )?;
            }
            tx.commit()?;
            Ok(recorded)
        })
    }

    pub(super) fn append_chain_readings(
        &self,
        rows: Vec<(String, String, String)>,
    ) -> Result<(), String> {
        self.query(move |client| {
            let mut tx = client.transaction()?;
            let insert = tx.prepare(
                "INSERT INTO chain_readings (asset, read_at, entry_json) VALUES ($1, $2, $3)",
            )?;
            for (asset, read_at, entry) in &rows {
                tx.execute(&insert, &[asset, read_at, entry])?;
            }
            tx.commit()
        })
    }

    /// One statement: the day's row gains `cost` only while the total stays within `limit`, so any number
    /// of workers share one count without a lost update.
    pub(super) fn reserve_spend(
        &self,
        account: String,
        day: i64,
        cost: i64,
        limit: i64,
    ) -> Result<Result<i64, i64>, String> {
        self.query(move |client| {
            let mut tx = client.transaction()?;
            let counted = if cost <= limit {
                tx.query_opt(
                    "INSERT INTO spend (account, day, stroops) VALUES ($1, $2, $3) \
                     ON CONFLICT (account, day) DO UPDATE SET stroops = spend.stroops + excluded.stroops \
                     WHERE spend.stroops + excluded.stroops <= $4 RETURNING stroops",
                    &[&account, &day, &cost, &limit],
                )?
                .map(|row| row.get::<_, i64>(0))
            } else {
                None
            };
            let answer = match counted {
                Some(total) => Ok(total),
                None => Err(spent_on(&mut tx, &account, day)?),
            };
            tx.commit()?;
            Ok(answer)
        })
    }

    pub(super) fn spent(&self, account: String, day: i64) -> Result<i64, String> {
        self.query(move |client| spent_on(client, &account, day))
    }

    pub(super) fn latest_chain_reading(
        &self,
        asset: String,
    ) -> Result<Option<(String, String)>, String> {
        self.query(move |client| {
            Ok(client
                .query_opt(
                    "SELECT read_at, entry_json FROM chain_readings WHERE asset = $1 ORDER BY id DESC LIMIT 1",
                    &[&asset],
                )?
                .map(|row| (row.get(0), row.get(1))))
        })
    }

    pub(super) fn listing(&self, listing: Listing) -> Result<Listed, String> {
        self.query(move |client| {
            let rows = match &listing {
                Listing::Asset(asset) => client.query(
                    "SELECT id, asset, scanned_at, report_json FROM observations WHERE asset = $1 ORDER BY id",
                    &[asset],
                )?,
                Listing::Before {
                    asset,
                    before,
                    limit,
                } => client.query(
                    "SELECT id, asset, scanned_at, report_json FROM observations \
                     WHERE asset = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
                    &[asset, before, limit],
                )?,
                Listing::LatestPerAsset => client.query(
                    "SELECT o.id, o.asset, o.scanned_at, o.report_json FROM observations o \
                     JOIN (SELECT asset, MAX(id) AS id FROM observations GROUP BY asset) latest \
                     ON o.id = latest.id ORDER BY o.asset",
                    &[],
                )?,
            };
            let mut listed = Listed::default();
            for row in &rows {
                match stored_observation(row) {
                    Ok(observation) => listed.rows.push(observation),
                    Err(corrupt) => listed.corrupt.push(corrupt),
                }
            }
            Ok(listed)
        })
    }

    pub(super) fn recheck(&self, id: i64) -> Result<Option<Recheck>, String> {
        self.query(move |client| {
            Ok(client
                .query_opt(
                    "SELECT count, first_rechecked_at, last_checked_at FROM rechecks WHERE observation_id = $1",
                    &[&id],
                )?
                .map(|row| Recheck {
                    count: row.get(0),
                    first_rechecked_at: row.get(1),
                    last_checked_at: row.get(2),
                }))
        })
    }

    pub(super) fn latest_page(
        &self,
        severity: Option<String>,
        after: String,
        limit: i64,
    ) -> Result<(Vec<LatestRow>, Vec<CorruptRow>), String> {
        self.query(move |client| {
            let rows = client.query(
                "SELECT l.asset, l.severity, l.undetermined, l.checked_at, o.id, o.asset, o.scanned_at, o.report_json \
                 FROM latest l JOIN observations o ON o.id = l.observation_id \
                 WHERE ($1::text IS NULL OR l.severity = $1) AND l.asset > $2 ORDER BY l.asset LIMIT $3",
                &[&severity, &after, &limit],
            )?;
            let (mut good, mut corrupt) = (Vec::new(), Vec::new());
            for row in &rows {
                let id: i64 = row.get(4);
                let read = || -> Result<LatestRow, postgres::Error> {
                    Ok(LatestRow {
                        asset: row.try_get(0)?,
                        severity: row.try_get(1)?,
                        undetermined: row.try_get(2)?,
                        checked_at: row.try_get(3)?,
                        observation: StoredObservation {
                            id,
                            asset: row.try_get(5)?,
                            scanned_at: row.try_get(6)?,
                            report_json: row.try_get(7)?,
                        },
                    })
                };
                match read() {
                    Ok(row) => good.push(row),
                    Err(e) => corrupt.push(CorruptRow {
                        id,
                        reason: describe(&e),
                    }),
                }
            }
            Ok((good, corrupt))
        })
    }

    pub(super) fn severity_counts(&self) -> Result<Vec<(String, bool, i64)>, String> {
        self.query(|client| {
            Ok(client
                .query(
                    "SELECT severity, undetermined, COUNT(*) FROM latest GROUP BY severity, undetermined \
                     ORDER BY severity, undetermined",
                    &[],
                )?
                .iter()
                .map(|row| (row.get(0), row.get(1), row.get(2)))
                .collect())
        })
    }

    pub(super) fn bundle(&self, hash: String) -> Result<Option<(String, String, String)>, String> {
        self.query(move |client| {
            Ok(client
                .query_opt(
                    "SELECT asset, recorded_at, bundle_json FROM bundles WHERE evidence_hash = $1",
                    &[&hash],
                )?
                .map(|row| (row.get(0), row.get(1), row.get(2))))
        })
    }

    /// [`super::History::prune`] in PostgreSQL: the same rules, one transaction, the append-only trigger
    /// lifted for this transaction alone (`SET LOCAL`).
    pub(super) fn prune(&self, cutoff: String) -> Result<super::Pruned, String> {
        self.query(move |client| {
            let mut tx = client.transaction()?;
            // Readings and observations must not change between reading what chain holds and deleting.
            tx.batch_execute("LOCK TABLE chain_readings, observations, bundles IN SHARE ROW EXCLUSIVE MODE; SET LOCAL assay.prune = 'on'")?;
            let latest_readings = tx
                .query(
                    "SELECT asset, entry_json FROM chain_readings WHERE id IN (SELECT MAX(id) FROM chain_readings GROUP BY asset)",
                    &[],
                )?
                .iter()
                .map(|row| (row.get::<_, String>(0), row.get::<_, String>(1)))
                .collect::<Vec<_>>();
            let (held, unknown) = super::held_and_unknown(latest_readings);
            let observations = tx.execute(
                "DELETE FROM observations WHERE id NOT IN (SELECT observation_id FROM latest) \
                 AND COALESCE((SELECT last_checked_at FROM rechecks WHERE observation_id = observations.id), scanned_at) < $1 \
                 AND (evidence_hash IS NULL OR NOT evidence_hash = ANY($2)) \
                 AND NOT asset = ANY($3)",
                &[&cutoff, &held, &unknown],
            )?;
            let rechecks = tx.execute(
                "DELETE FROM rechecks WHERE observation_id NOT IN (SELECT id FROM observations)",
                &[],
            )?;
            let bundles = tx.execute(
                "DELETE FROM bundles WHERE recorded_at < $1 \
                 AND NOT evidence_hash = ANY($2) AND NOT asset = ANY($3) \
                 AND evidence_hash NOT IN (SELECT o.evidence_hash FROM latest l JOIN observations o \
                 ON o.id = l.observation_id WHERE o.evidence_hash IS NOT NULL)",
                &[&cutoff, &held, &unknown],
            )?;
            let chain_readings = tx.execute(
                "DELETE FROM chain_readings WHERE read_at < $1 \
                 AND id NOT IN (SELECT MAX(id) FROM chain_readings GROUP BY asset)",
                &[&cutoff],
            )?;
            tx.commit()?;
            let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            Ok(super::Pruned {
                observations: count(observations),
                rechecks: count(rechecks),
                bundles: count(bundles),
                chain_readings: count(chain_readings),
                kept_on_chain: held.len(),
            })
        })
    }

    pub(super) fn counts(&self) -> Result<BTreeMap<&'static str, i64>, String> {
        self.query(|client| {
            let mut counts = BTreeMap::new();
            for table in super::COUNTED_TABLES {
                let row = client.query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])?;
                counts.insert(table, row.get(0));
            }
            Ok(counts)
        })
    }

    /// Adds the assets the queue lacks for `scope`, due at once; returns how many were added.
    pub(super) fn queue_sync(&self, scope: String, assets: Vec<String>) -> Result<u64, String> {
        self.query(move |client| {
            let mut tx = client.transaction()?;
            let added = tx.execute(
                "INSERT INTO watch_queue (scope, asset, due_at) \
                 SELECT $1, a, clock_timestamp() FROM unnest($2::text[]) AS a \
                 ON CONFLICT (scope, asset) DO NOTHING",
                &[&scope, &assets],
            )?;
            tx.commit()?;
            Ok(added)
        })
    }

    /// Leases up to `limit` due assets of `scope` to `worker` for `lease_ms`: rows another worker holds
    /// (its transaction, or an unexpired lease) are skipped, never waited for.
    pub(super) fn queue_claim(
        &self,
        scope: String,
        worker: String,
        limit: i64,
        lease_ms: f64,
    ) -> Result<Vec<String>, String> {
        self.query(move |client| {
            let mut tx = client.transaction()?;
            let rows = tx.query(
                "UPDATE watch_queue q SET leased_by = $2, \
                     lease_until = clock_timestamp() + make_interval(secs => $4::float8 / 1000.0) \
                 FROM (SELECT asset FROM watch_queue \
                       WHERE scope = $1 AND due_at <= clock_timestamp() \
                       AND (lease_until IS NULL OR lease_until < clock_timestamp()) \
                       ORDER BY due_at, asset LIMIT $3 FOR UPDATE SKIP LOCKED) due \
                 WHERE q.scope = $1 AND q.asset = due.asset RETURNING q.asset",
                &[&scope, &worker, &limit, &lease_ms],
            )?;
            tx.commit()?;
            let mut claimed: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
            claimed.sort();
            Ok(claimed)
        })
    }

    /// Ends `worker`'s lease on `asset`: due again in `next_ms`. `false` when the lease was no longer
    /// the worker's (it expired and another took the asset): nothing is changed then.
    pub(super) fn queue_complete(
        &self,
        scope: String,
        worker: String,
        asset: String,
        next_ms: f64,
        outcome: String,
        failed: bool,
    ) -> Result<bool, String> {
        self.query(move |client| {
            let changed = client.execute(
                "UPDATE watch_queue SET leased_by = NULL, lease_until = NULL, \
                     due_at = clock_timestamp() + make_interval(secs => $4::float8 / 1000.0), \
                     last_checked_at = clock_timestamp(), last_outcome = $5, checks = checks + 1, \
                     failures = CASE WHEN $6 THEN failures + 1 ELSE 0 END \
                 WHERE scope = $1 AND asset = $2 AND leased_by = $3",
                &[&scope, &asset, &worker, &next_ms, &outcome, &failed],
            )?;
            Ok(changed == 1)
        })
    }

    /// Extends `worker`'s leases on `assets` to `lease_ms` from now; returns how many it still held.
    pub(super) fn queue_renew(
        &self,
        scope: String,
        worker: String,
        assets: Vec<String>,
        lease_ms: f64,
    ) -> Result<u64, String> {
        self.query(move |client| {
            client.execute(
                "UPDATE watch_queue SET lease_until = clock_timestamp() + make_interval(secs => $4::float8 / 1000.0) \
                 WHERE scope = $1 AND leased_by = $2 AND asset = ANY($3)",
                &[&scope, &worker, &assets, &lease_ms],
            )
        })
    }

    /// Makes `assets` of `scope` due now (a ledger change); returns how many rows changed.
    pub(super) fn queue_mark_due(&self, scope: String, assets: Vec<String>) -> Result<u64, String> {
        self.query(move |client| {
            client.execute(
                "UPDATE watch_queue SET due_at = LEAST(due_at, clock_timestamp()) \
                 WHERE scope = $1 AND asset = ANY($2)",
                &[&scope, &assets],
            )
        })
    }

    /// The queue of `scope` (every scope when `None`) as `(due, leased, failed, total, live workers)`.
    pub(super) fn queue_stats(&self, scope: Option<String>) -> Result<[i64; 5], String> {
        self.query(move |client| {
            let row = client.query_one(
                "SELECT \
                   COUNT(*) FILTER (WHERE due_at <= clock_timestamp() \
                       AND (lease_until IS NULL OR lease_until < clock_timestamp())), \
                   COUNT(*) FILTER (WHERE lease_until >= clock_timestamp()), \
                   COUNT(*) FILTER (WHERE failures > 0), \
                   COUNT(*), \
                   (SELECT COUNT(*) FROM watch_workers WHERE ($1::text IS NULL OR scope = $1) \
                       AND seen_at > clock_timestamp() - make_interval(secs => $2)) \
                 FROM watch_queue WHERE $1::text IS NULL OR scope = $1",
                &[&scope, &LIVE_WORKER_SECS],
            )?;
            Ok([row.get(0), row.get(1), row.get(2), row.get(3), row.get(4)])
        })
    }

    /// Records that `worker` of `scope` is alive; returns how many of `scope`'s workers were seen within
    /// [`LIVE_WORKER_SECS`] (itself included). Workers unseen for a day are forgotten.
    pub(super) fn worker_seen(&self, scope: String, worker: String) -> Result<i64, String> {
        self.query(move |client| {
            client.execute(
                "INSERT INTO watch_workers (scope, worker, seen_at) VALUES ($1, $2, clock_timestamp()) \
                 ON CONFLICT (scope, worker) DO UPDATE SET seen_at = excluded.seen_at",
                &[&scope, &worker],
            )?;
            client.execute(
                "DELETE FROM watch_workers WHERE seen_at < clock_timestamp() - interval '1 day'",
                &[],
            )?;
            Ok(client
                .query_one(
                    "SELECT COUNT(*) FROM watch_workers WHERE scope = $1 \
                     AND seen_at > clock_timestamp() - make_interval(secs => $2)",
                    &[&scope, &LIVE_WORKER_SECS],
                )?
                .get(0))
        })
    }

    /// The reaction baseline the leaders of `scope` saved.
    pub(super) fn ledger_baseline(
        &self,
        scope: String,
    ) -> Result<BTreeMap<String, String>, String> {
        self.query(move |client| {
            Ok(client
                .query(
                    "SELECT entry_key, fingerprint FROM watch_ledger_seen WHERE scope = $1",
                    &[&scope],
                )?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })
    }

    /// Saves entries of `scope`'s reaction baseline, in one transaction.
    pub(super) fn save_ledger_baseline(
        &self,
        scope: String,
        entries: Vec<(String, String)>,
    ) -> Result<(), String> {
        self.query(move |client| {
            let (keys, prints): (Vec<String>, Vec<String>) = entries.into_iter().unzip();
            client
                .execute(
                    "INSERT INTO watch_ledger_seen (scope, entry_key, fingerprint) \
                     SELECT $1, k, f FROM unnest($2::text[], $3::text[]) AS e(k, f) \
                     ON CONFLICT (scope, entry_key) DO UPDATE SET fingerprint = excluded.fingerprint",
                    &[&scope, &keys, &prints],
                )
                .map(drop)
        })
    }

    /// Every scope's leader as recorded `(scope, worker, seconds since its heartbeat)`.
    pub(super) fn leaders(&self) -> Result<Vec<(String, String, f64)>, String> {
        self.query(|client| {
            Ok(client
                .query(
                    "SELECT scope, worker, EXTRACT(EPOCH FROM clock_timestamp() - heartbeat_at)::float8 \
                     FROM watch_leader ORDER BY scope",
                    &[],
                )?
                .iter()
                .map(|row| (row.get(0), row.get(1), row.get(2)))
                .collect())
        })
    }

    /// Tries to take `key`'s session-level advisory lock on this connection (held until it is released
    /// or the connection closes: a worker killed with SIGKILL loses it with its socket).
    pub(super) fn try_lock(&self, key: i64) -> Result<bool, String> {
        self.query(move |client| {
            Ok(client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&key])?
                .get(0))
        })
    }

    /// Waits for `key`'s session-level advisory lock on this connection.
    pub(super) fn lock(&self, key: i64) -> Result<(), String> {
        self.query(move |client| {
            client
                .execute("SELECT pg_advisory_lock($1)", &[&key])
                .map(drop)
        })
    }

    /// Releases `key`'s session-level advisory lock.
    pub(super) fn unlock(&self, key: i64) -> Result<(), String> {
        self.query(move |client| {
            client
                .execute("SELECT pg_advisory_unlock($1)", &[&key])
                .map(drop)
        })
    }

    /// Records `worker` as `scope`'s leader (a heartbeat when it already is).
    pub(super) fn heartbeat(&self, scope: String, worker: String) -> Result<(), String> {
        self.query(move |client| {
            client
                .execute(
                    "INSERT INTO watch_leader (scope, worker, since, heartbeat_at) \
                     VALUES ($1, $2, clock_timestamp(), clock_timestamp()) \
                     ON CONFLICT (scope) DO UPDATE SET heartbeat_at = clock_timestamp(), \
                     since = CASE WHEN watch_leader.worker = excluded.worker THEN watch_leader.since \
                             ELSE excluded.since END, worker = excluded.worker",
                    &[&scope, &worker],
                )
                .map(drop)
        })
    }

    /// Runs statements with no parameters (`BEGIN`, `COMMIT`, `ROLLBACK`, a `setval`).
    pub(super) fn batch(&self, sql: String) -> Result<(), String> {
        self.query(move |client| client.batch_execute(&sql))
    }

    /// Whether the database already holds a history (any observation, reading or bundle).
    pub(super) fn holds_history(&self) -> Result<bool, String> {
        self.query(|client| {
            Ok(client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM observations) OR EXISTS (SELECT 1 FROM chain_readings) \
                     OR EXISTS (SELECT 1 FROM bundles)",
                    &[],
                )?
                .get(0))
        })
    }

    /// Inserts `rows` (as text, column by column) into `table`'s `columns`, each column cast to its type
    /// (`"id::bigint"`): the copy of a SQLite history, inside the caller's `BEGIN` … `COMMIT`.
    pub(super) fn insert_text_rows(
        &self,
        table: &'static str,
        columns: &'static [&'static str],
        rows: Vec<Vec<Option<String>>>,
    ) -> Result<u64, String> {
        self.query(move |client| {
            let names: Vec<&str> = columns
                .iter()
                .map(|c| c.split("::").next().unwrap_or(c))
                .collect();
            let casts: Vec<String> = columns
                .iter()
                .enumerate()
                .map(|(k, c)| match c.split_once("::") {
                    Some((name, ty)) => format!("c{k}::{ty} AS {name}"),
                    None => format!("c{k}"),
                })
                .collect();
            let params: Vec<String> = (1..=columns.len())
                .map(|k| format!("${k}::text[]"))
                .collect();
            let aliases: Vec<String> = (0..columns.len()).map(|k| format!("c{k}")).collect();
            let sql = format!(
                "INSERT INTO {table} ({}) SELECT {} FROM unnest({}) AS r({})",
                names.join(", "),
                casts.join(", "),
                params.join(", "),
                aliases.join(", ")
            );
            let by_column: Vec<Vec<Option<String>>> = (0..columns.len())
                .map(|k| rows.iter().map(|r| r.get(k).cloned().flatten()).collect())
                .collect();
            let values: Vec<&(dyn postgres::types::ToSql + Sync)> = by_column
                .iter()
                .map(|c| c as &(dyn postgres::types::ToSql + Sync))
                .collect();
            client.execute(sql.as_str(), &values)
        })
    }

    /// Runs one statement, for tests that prove the database refuses rewrites.
    pub(super) fn execute(&self, sql: String) -> Result<u64, String> {
        self.query(move |client| client.execute(sql.as_str(), &[]))
    }
}

/// Applies the migrations this database lacks, each in its own transaction, under one advisory lock.
fn migrate(client: &mut Client) -> Result<(), String> {
    let step = |client: &mut Client| -> Result<Result<(), String>, postgres::Error> {
        let mut tx = client.transaction()?;
        // First, so that processes started together create even the bookkeeping table once.
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS assay_schema_migrations (\
                 version BIGINT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        )?;
        let applied: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM assay_schema_migrations",
                &[],
            )?
            .get(0);
        if applied > SCHEMA_VERSION {
            return Ok(Err(format!(
                "schema version {applied} is newer than this assay understands ({SCHEMA_VERSION}); \
                 use the assay that wrote it, or a newer one"
            )));
        }
        for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > applied) {
            tx.batch_execute(sql)?;
            tx.execute(
                "INSERT INTO assay_schema_migrations (version) VALUES ($1)",
                &[version],
            )?;
        }
        tx.commit()?;
        Ok(Ok(()))
    };
    step(client)
        .map_err(|e| {
            format!(
                "cannot migrate the database to schema {SCHEMA_VERSION} (nothing was changed): {}",
                describe(&e)
            )
        })
        .and_then(|inner| inner)
}

fn spent_on(
    client: &mut impl GenericClient,
    account: &str,
    day: i64,
) -> Result<i64, postgres::Error> {
    Ok(client
        .query_opt(
            "SELECT stroops FROM spend WHERE account = $1 AND day = $2",
            &[&account, &day],
        )?
        .map_or(0, |row| row.get(0)))
}

fn insert_observation(
    tx: &mut postgres::Transaction<'_>,
    asset: &str,
    scanned_at: &str,
    report_json: &str,
    print: &str,
    hash: Option<&str>,
) -> Result<i64, postgres::Error> {
    let id: i64 = tx
        .query_one(
            "INSERT INTO observations (asset, scanned_at, report_json, fingerprint, evidence_hash) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
            &[&asset, &scanned_at, &report_json, &print, &hash],
        )?
        .get(0);
    let (severity, undetermined) = index_columns(report_json);
    tx.execute(
        "INSERT INTO latest (asset, observation_id, severity, undetermined, checked_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (asset) DO UPDATE SET observation_id = excluded.observation_id, \
         severity = excluded.severity, undetermined = excluded.undetermined, checked_at = excluded.checked_at",
        &[&asset, &id, &severity, &undetermined, &scanned_at],
    )?;
    Ok(id)
}

fn stored_observation(row: &Row) -> Result<StoredObservation, CorruptRow> {
    let id: i64 = row.get(0);
    let read = || -> Result<StoredObservation, postgres::Error> {
        Ok(StoredObservation {
            id,
            asset: row.try_get(1)?,
            scanned_at: row.try_get(2)?,
            report_json: row.try_get(3)?,
        })
    };
    read().map_err(|e| CorruptRow {
        id,
        reason: describe(&e),
    })
}
