//! `assay-localnet`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-localnet --test it deploy_invoke::`.

mod common;

mod deploy_invoke;
mod http_bounds;
mod interop_js;
mod refusals;
mod sac_classic;
