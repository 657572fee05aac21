//! Why an attester operation gave no answer. The variant says whose move it is: the caller's input, a
//! source, or the chain; the binary turns it into the exit code of the README's table.

/// An attester operation's failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttestError {
    /// The input names nothing this can judge or write (an asset argument, a config value, a flag that
    /// does not apply): the message names it and the fix.
    #[error("{0}")]
    Input(String),
    /// A source of the scan (Horizon, a stellar.toml, StellarExpert) or the scan itself failed.
    #[error("{0}")]
    Source(String),
    /// stellar-rpc or the registry could not be read, or answered something that is not a registry's.
    #[error("{0}")]
    Chain(String),
    /// Something on this machine failed: a file, the async runtime.
    #[error("{0}")]
    Local(String),
    /// A report could not be derived from facts that were read: a defect of this program.
    #[error("internal: {0}")]
    Internal(String),
}

/// Why an evidence bundle's recorded fork run (the SEP-41 suite's or power discovery's) could not be
/// replayed offline.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// No temporary directory for the snapshot.
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// The snapshot could not be written to its temporary file.
    #[error("cannot write the snapshot to {}: {source}", .path.display())]
    WriteSnapshot {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Power discovery could not run from the snapshot.
    #[error(transparent)]
    Discovery(#[from] assay_powers::DiscoveryError),
}

/// Written into JSON logs as its message.
impl serde::Serialize for AttestError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A source-fetch option that is not usable is the caller's to fix.
impl From<assay_scan::options::OptionError> for AttestError {
    fn from(error: assay_scan::options::OptionError) -> Self {
        AttestError::Input(error.to_string())
    }
}

/// An extra root certificate rustls refuses is the caller's `--cacert` to fix; a TLS provider without
/// a usable protocol is this machine's.
impl From<assay_scan::net::client::ClientError> for AttestError {
    fn from(error: assay_scan::net::client::ClientError) -> Self {
        use assay_scan::net::client::ClientError;
        match error {
            ClientError::ExtraRoot(_) => AttestError::Input(error.to_string()),
            ClientError::Tls(_) => AttestError::Local(error.to_string()),
        }
    }
}

/// The engine could not derive a report: a defect, never the caller's input.
impl From<assay_core::EngineError> for AttestError {
    fn from(error: assay_core::EngineError) -> Self {
        AttestError::Internal(error.to_string())
    }
}

impl AttestError {
    /// Whether the caller's input is what must change.
    pub fn is_input(&self) -> bool {
        matches!(self, AttestError::Input(_))
    }
}
