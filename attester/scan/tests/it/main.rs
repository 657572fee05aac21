//! `assay-scan`'s integration tests as one test binary (one link, not one per file; docs/architecture.md).
//! Each module was a test file of its own; run one with `cargo test -p assay-scan --test it parser_fuzz::`.

mod blocklist_key;
mod host_bound;
mod ledger_rpc;
mod parser_fuzz;
mod redirects_and_ssrf;
mod replay;
mod scan_budget;
mod task_panics;
