//! One module per subcommand: its clap arguments and its front end (read the arguments, call the
//! libraries' typed functions, render the result, choose the exit code). Arguments several commands
//! share (network, sources, signer, the SEP-41 parties, `--output`) are in [`shared`].

pub mod attest;
pub mod attestation;
#[cfg(feature = "demo")]
pub mod demo;
pub mod history;
pub mod localnet;
pub mod scan;
mod scan_text;
pub mod sep41;
pub mod serve;
mod serve_page;
pub mod shared;
pub mod verify;
pub mod watch;
