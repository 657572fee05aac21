//! HTTP(S) transport with Assay's fetch policy.
pub mod client;
pub mod connect;
pub mod mapping;
pub mod policy;

pub use client::{
    FailureKind, FetchError, FetchOptions, Fetched, HttpClient, NetConfig, RedirectPolicy,
};
