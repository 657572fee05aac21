//! `assay-testkit`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Run one with `cargo test -p assay-testkit --test it conformant::`.

mod common;
mod conformant;
mod docs_blocks;
mod example_token;
