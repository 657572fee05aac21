//! `assay-attest`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-attest --test it archival::`.

mod common;

mod archival;
mod code_binding_e2e;
mod faults;
mod hardening;
mod localnet_e2e;
mod operator_scale;
mod reaction;
mod revocation_e2e;
mod runbook_config;
mod sep41_e2e;
mod submit_iff_attestable;
mod token_e2e;
