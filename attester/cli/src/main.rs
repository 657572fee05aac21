//! `assay`: results on stdout, diagnostics on stderr, documented exit codes.
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "assay", version, about = "What can this asset's issuer do to my balance, and who stands behind that power?")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the version.
    Version,
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => println!("assay {}", env!("CARGO_PKG_VERSION")),
    }
}
