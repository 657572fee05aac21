//! Placeholder until the SEP-41 integration lands.
