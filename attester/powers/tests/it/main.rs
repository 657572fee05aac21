//! Power discovery against real tokens deployed from their built WASM on the in-process local network.
mod common;
mod fixtures;
mod hostile;
mod power_fixtures;
mod third_party;
