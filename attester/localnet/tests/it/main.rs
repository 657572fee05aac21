//! `assay-localnet`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-localnet --test it deploy_invoke::`.

mod common;

mod chain_client;
mod deploy_invoke;
mod fork;
mod http_bounds;
mod interop_js;
mod ledger_close;
mod refusals;
mod sac_classic;
mod sandbox_clock;
