//! A real PostgreSQL server for tests: the one `scripts/test.sh` started (`ASSAY_TEST_DATABASE_URL`), or a
//! private cluster of this test's own (`scripts/postgres.sh`), stopped when the handle drops. Each
//! [`PostgresServer::fresh_database`] is a new, empty database, so tests sharing a server never meet.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming a running server's URL (its `postgres` database, a superuser).
pub const TEST_DATABASE_URL: &str = "ASSAY_TEST_DATABASE_URL";

/// A running PostgreSQL server.
pub struct PostgresServer {
    admin_url: String,
    /// The private cluster this handle started and stops; `None` for the server of `scripts/test.sh`.
    private: Option<tempfile::TempDir>,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh")
}

impl PostgresServer {
    /// The server of `scripts/test.sh`, or a private one. Panics (this is test support) with what to do
    /// when PostgreSQL is not installed.
    pub fn start() -> PostgresServer {
        if let Ok(url) = std::env::var(TEST_DATABASE_URL) {
            return PostgresServer {
                admin_url: url,
                private: None,
            };
        }
        // Under /tmp: a unix socket's path may not exceed 107 bytes.
        let dir = tempfile::Builder::new()
            .prefix("assay-pg")
            .tempdir_in("/tmp")
            .expect("a temporary directory for PostgreSQL");
        // With this process's id: a test killed before its handle drops leaves no server running.
        let out = Command::new(script())
            .arg("start")
            .arg(dir.path())
            .arg(std::process::id().to_string())
            .output()
            .expect("scripts/postgres.sh runs");
        assert!(
            out.status.success(),
            "cannot start PostgreSQL for this test ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        PostgresServer {
            admin_url: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            private: Some(dir),
        }
    }

    /// A new, empty database on the server, as a URL.
    pub fn fresh_database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "assay_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            fastrand::u32(..)
        );
        let admin_url = self.admin_url.clone();
        let create = format!("CREATE DATABASE {name}");
        // The synchronous client may not run on a thread that drives Tokio tasks.
        std::thread::spawn(move || {
            let mut admin = postgres::Client::connect(&admin_url, postgres::NoTls)
                .expect("connect to the test server");
            admin
                .batch_execute(&create)
                .expect("create a test database");
        })
        .join()
        .expect("the database is created");
        let mut url = url::Url::parse(&self.admin_url).expect("the server's URL");
        url.set_path(&format!("/{name}"));
        url.to_string()
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        if let Some(dir) = &self.private {
            let _ = Command::new(script()).arg("stop").arg(dir.path()).status();
        }
    }
}
