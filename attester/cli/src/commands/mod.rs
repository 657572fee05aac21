//! One module per subcommand: its clap arguments and its front end (read the arguments, call the
//! libraries' typed functions, render the result, choose the exit code). Arguments several commands
//! share (network, sources, signer, the SEP-41 parties, `--output`) are in [`shared`].

pub mod attest;
pub mod attestation;
mod ci_formats;
#[cfg(feature = "demo")]
pub mod demo;
pub mod evidence;
pub mod exposure;
pub mod history;
pub mod localnet;
pub mod scan;
mod scan_progress;
mod scan_text;
pub mod sep41;
pub mod serve;
mod serve_page;
pub mod shared;
pub mod verify;
pub mod watch;

use std::fmt::Display;

use assay_core::exit;

/// Why a command stopped without its answer. `main` renders it, once and redacted, as
/// `assay <command>: <message>` on stderr, and exits with [`CommandError::exit_code`].
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// A malformed argument, option, file or configuration; the message names it and the fix.
    #[error("{0}")]
    Usage(String),
    /// The command could not do its work (a source, the network, a file or a transaction failed).
    #[error("{0}")]
    Failed(String),
}

impl CommandError {
    /// A usage error.
    pub fn usage(message: impl Display) -> Self {
        CommandError::Usage(message.to_string())
    }

    /// A failure to run.
    pub fn failed(message: impl Display) -> Self {
        CommandError::Failed(message.to_string())
    }

    /// The exit code of the README's table this error stands for.
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Usage(_) => exit::USAGE,
            CommandError::Failed(_) => exit::ERROR,
        }
    }
}

/// What a command returns: the exit code of a run that gave its answer (a verdict code of the README's
/// table), or why it could not.
pub type CommandResult = Result<u8, CommandError>;

/// A usage error as a command's result, for `return usage(…)`.
pub fn usage(message: impl Display) -> CommandResult {
    Err(CommandError::usage(message))
}

/// A failure to run as a command's result, for `return failed(…)`.
pub fn failed(message: impl Display) -> CommandResult {
    Err(CommandError::failed(message))
}

/// A source-fetch option the caller must change.
impl From<assay_scan::options::OptionError> for CommandError {
    fn from(error: assay_scan::options::OptionError) -> Self {
        CommandError::Usage(error.to_string())
    }
}

/// The signal handlers could not be installed: this machine's failure, not the caller's.
impl From<crate::signals::InstallError> for CommandError {
    fn from(error: crate::signals::InstallError) -> Self {
        CommandError::Failed(error.to_string())
    }
}

/// An attester operation's failure: the caller's input is a usage error, a source or the chain a failure.
impl From<assay_attest::AttestError> for CommandError {
    fn from(error: assay_attest::AttestError) -> Self {
        if error.is_input() {
            CommandError::Usage(error.to_string())
        } else {
            CommandError::Failed(error.to_string())
        }
    }
}
