//! `assay attest`, `assay verify`, `assay watch`: argument structs and logic live in assay-attest.
pub use assay_attest::cmd::{attest, verify, watch};
