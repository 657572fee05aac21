//! `assay-core`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-core --test it checks::`.

mod common;

mod bundle;
mod checks;
mod contract;
mod eval;
mod imports;
mod invariants;
mod props;
mod report_attestation;
mod sac_admin;
mod vectors;
