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
}

impl AttestError {
    /// Whether the caller's input is what must change.
    pub fn is_input(&self) -> bool {
        matches!(self, AttestError::Input(_))
    }
}
