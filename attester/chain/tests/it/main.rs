//! `assay-chain`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-chain --test it scripted_rpc::`.

mod keep_alive;
mod scripted_rpc;
mod xdr_answers;
