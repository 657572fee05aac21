//! `assay-cli`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-cli --test it attest_cli::`.

mod common;
/// The attester crate's local world helpers, shared with its own tests.
#[path = "../../../attest/tests/it/common/mod.rs"]
mod world;

mod attest_cli;
mod attest_sep41_cli;
mod attestation_cli;
mod ci_formats;
mod code_binding_cli;
mod database_cli;
mod demo;
mod docs_commands;
mod evidence_cli;
mod exposure_cli;
mod fixture_tokens;
mod history_cli;
mod integrator_ts;
mod latent_freeze_cli;
mod localnet_fork_cli;
mod modes_cli;
mod powers_cli;
mod quorum_cli;
mod release_profile;
mod rpc_facts_cli;
mod scan_cli;
mod scan_eval;
mod scan_faults;
mod scan_progress_cli;
mod secrets_cli;
mod sep41_cli;
mod sep41_fork;
mod serve_cli;
mod testkit_equivalence;
mod verify_store_cli;
mod watch_shard;
mod watch_signals;
mod watch_tokens_cli;
mod watch_workers;
