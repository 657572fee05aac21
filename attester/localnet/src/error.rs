//! The local network's error type.

use std::time::Duration;

use crate::host::HostSetupError;
use crate::source::ForkError;

#[derive(Debug, thiserror::Error)]
pub enum LocalNetError {
    #[error("cannot bind 127.0.0.1:{port}: {source} (choose another --port, or 0 for a free one)")]
    Bind { port: u16, source: std::io::Error },
    #[error("cannot build the genesis ledger: {0}")]
    Genesis(HostSetupError),
    #[error("cannot build the genesis ledger: cannot start the ledger thread: {0}")]
    LedgerThread(std::io::Error),
    #[error("the node did not answer getHealth within {0:?}")]
    NotReady(Duration),
    #[error("ledger_close_ms must be at least 1")]
    BadInterval,
    #[error("invalid ledger entry: {0}")]
    InvalidEntry(String),
    /// A contract code entry that does not load.
    #[error("invalid ledger entry: {0}")]
    InvalidCode(HostSetupError),
    #[error("{0}")]
    Friendbot(String),
    /// Fork mode: the upstream or the cache file is unusable when the network starts.
    #[error("{0}")]
    Fork(String),
    /// Fork mode: `--fork-ledger` names a ledger this fork cannot serve (ahead of the upstream,
    /// behind it without a cache recorded there, or not the cache's): the operator's input.
    #[error("{0}")]
    ForkLedger(String),
    /// Fork mode: the upstream or the cache file failed while running.
    #[error(transparent)]
    Upstream(#[from] ForkError),
    /// A call run with [`LocalNet::invoke_authorized_as`](crate::LocalNet::invoke_authorized_as) failed or asked for more authorization.
    #[error("{0}")]
    Invoke(String),
}
