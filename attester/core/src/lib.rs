//! Assay's judgment core: the Subject model, parsers for raw source answers, the four checks, the engine,
//! the report, the evidence hash and attestation parameters. Pure: no crate that performs I/O is reachable
//! from here (a test keeps it so). The judgment reads no clock: instants come from callers, and
//! [`Timestamp::now`], the workspace's one clock, is for them.

pub mod asset;
pub mod attestation;
pub mod bundle;
pub mod checks;
pub mod contract;
pub mod control;
pub mod engine;
pub mod evidence;
pub mod exit;
pub mod failure;
pub mod finding;
pub mod hash;
pub mod model;
pub mod network;
pub mod parse;
pub mod powers;
pub mod redact;
pub mod replay;
pub mod report;
pub mod shard;
pub mod subject;
pub mod time;
pub mod token;
pub mod transitions;

pub use attestation::{attestation_params, Params, Refusal};
pub use control::WhoCanAct;
pub use engine::{evaluate, Engine, EngineError};
pub use evidence::Evidence;
pub use failure::{FailureCategory, FetchFailure};
pub use finding::{Check, Finding};
pub use hash::{evidence_hash, preimage, EvidenceVersion, PreimageInput, UnknownEvidenceVersion};
pub use model::{Accountability, Mechanics, Rating, Severity, State};
pub use report::{Freshness, Report, ReportError, DEFAULT_FRESHNESS_SECS};
pub use shard::{Shard, ShardError};
pub use subject::*;
pub use time::Timestamp;
pub use token::{Token, TokenParseError};
pub use transitions::{transition, Attribution, Observation, Transition, TransitionState};
