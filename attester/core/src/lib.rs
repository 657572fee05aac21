//! Placeholder; the judgment core is built under its own issue.
