//! `assay-sep41`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-sep41 --test it offline::`.

mod offline;
mod premises;
