//! The exit codes of the `assay` binary: one table, each number meaning one thing in every command.
//!
//! Every command exits with one of these; a command documents in its `--help` which of them it can
//! return and what they mean for it, never a new meaning for a number. When several apply to one run
//! (several assets), the command's help states which wins.

/// The command did what was asked, and the answer is complete and affirmative.
pub const OK: u8 = 0;
/// The command could not do its work (a source or the network failed, an input could not be read, a
/// transaction failed or was rejected, a server could not start). Nothing is claimed about the subject.
pub const ERROR: u8 = 1;
/// The command ran but the answer is incomplete: something the verdict depends on could not be
/// determined (a source did not answer, a SEP-41 premise was missing). Never a verdict either way.
pub const UNDETERMINED: u8 = 2;
/// A determined negative answer: a report not attestable (refused), a SEP-41 check that FAILED or a
/// required member not implemented, an on-chain verdict that differs from a fresh scan, a quorum not
/// met, a demo step whose outcome differed from the stated one.
pub const NEGATIVE: u8 = 3;
/// Nothing is recorded for the subject: no registry entry, no observation in the history.
pub const ABSENT: u8 = 4;
/// What is recorded agrees but is older than the allowed age.
pub const STALE: u8 = 5;
/// A transaction was sent and its outcome is unknown: check the printed hash before sending again.
pub const OUTCOME_UNKNOWN: u8 = 6;
/// A write was confirmed on chain but reading it back failed: it is written; check it, do not resend.
pub const WRITTEN_UNCONFIRMED: u8 = 7;
/// A usage error: a malformed argument, option, file or configuration (sysexits' EX_USAGE).
pub const USAGE: u8 = 64;

/// The table every command's `--help` and the README show.
pub const TABLE: &str = "  0   ok: done, and the answer is complete and affirmative
  1   error: could not run (a source, the network, a file or a transaction failed)
  2   undetermined: ran, but something the answer depends on could not be determined
  3   negative: a determined \"no\" (refused, FAIL, mismatch, quorum not met)
  4   absent: nothing recorded for the subject (no registry entry, no history)
  5   stale: recorded and agreeing, but older than the allowed age
  6   outcome unknown: a transaction was sent and its outcome is unknown
  7   written, unconfirmed: confirmed on chain but not read back; do not resend
  64  usage error: a malformed argument, option, file or configuration";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_distinct_and_in_the_table() {
        let codes = [
            OK,
            ERROR,
            UNDETERMINED,
            NEGATIVE,
            ABSENT,
            STALE,
            OUTCOME_UNKNOWN,
            WRITTEN_UNCONFIRMED,
            USAGE,
        ];
        let mut seen = std::collections::BTreeSet::new();
        for code in codes {
            assert!(seen.insert(code), "{code} used twice");
            assert!(
                TABLE
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} "))),
                "{code} missing from the table"
            );
        }
        assert_eq!(TABLE.lines().count(), codes.len());
    }

    #[test]
    fn every_line_of_the_table_is_indented_alike() {
        // Two spaces, the code in a column of four, the meaning from the seventh character on.
        for line in TABLE.lines() {
            assert!(line.starts_with("  "), "{line:?}");
            assert!(line[2..6].trim_end().parse::<u8>().is_ok(), "{line:?}");
            assert!(!line[6..].starts_with(' '), "{line:?}");
        }
    }
}
