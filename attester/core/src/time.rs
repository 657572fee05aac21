//! Whole-second UTC instants and their one wire format, `YYYY-MM-DDTHH:MM:SSZ`: the workspace's one date
//! formatter and its one clock ([`Timestamp::now`]).
//!
//! The judgment never reads the clock: every instant arrives from the caller (the scan records when a source
//! answered; the CLI passes "now" when it checks freshness). That keeps the judgment reproducible;
//! `attester/core/tests/it/imports.rs` checks that nothing else in the core calls [`Timestamp::now`].

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant in UTC, as whole seconds since the Unix epoch.
///
/// Serialises as RFC 3339 with whole seconds and a `Z` suffix (`2026-08-10T12:00:00Z`), the single time format
/// of report schema_version 1. Parsing is strict: exactly that shape, nothing else (no offsets, no fractions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// Earliest and latest instants accepted: years 0000 through 9999, the range the wire format can spell.
const MIN_SECS: i64 = -62_167_219_200; // 0000-01-01T00:00:00Z
const MAX_SECS: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z

/// Why a timestamp text was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid timestamp {text:?}: expected UTC RFC 3339 with whole seconds, e.g. 2026-08-10T12:00:00Z")]
pub struct TimestampError {
    text: String,
}

impl Timestamp {
    /// 1970-01-01T00:00:00Z.
    pub const EPOCH: Timestamp = Timestamp(0);

    /// The system clock's current instant, to the second. The one place the workspace reads the wall clock;
    /// front ends and I/O crates call it, the judgment takes instants as arguments.
    pub fn now() -> Timestamp {
        Timestamp::from_system_time(SystemTime::now())
    }

    /// The instant `at`, to the second; an instant before the epoch reads as the epoch and one past year
    /// 9999 as its last second.
    pub fn from_system_time(at: SystemTime) -> Timestamp {
        let secs = at
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        Timestamp::EPOCH.plus_seconds(secs)
    }

    /// The instant `secs` seconds after 1970-01-01T00:00:00Z, if the wire format can spell it.
    pub fn from_unix(secs: i64) -> Option<Timestamp> {
        (MIN_SECS..=MAX_SECS)
            .contains(&secs)
            .then_some(Timestamp(secs))
    }

    /// Seconds since the Unix epoch; 0 for an instant before it.
    pub fn unix_secs(self) -> u64 {
        u64::try_from(self.0).unwrap_or(0)
    }

    /// Seconds since the Unix epoch (negative before it).
    pub fn unix(self) -> i64 {
        self.0
    }

    /// `self - earlier` in seconds (negative when `earlier` is later).
    pub fn seconds_since(self, earlier: Timestamp) -> i64 {
        self.0 - earlier.0
    }

    /// This instant moved by `secs` seconds, clamped to the representable range.
    pub fn plus_seconds(self, secs: i64) -> Timestamp {
        Timestamp(self.0.saturating_add(secs).clamp(MIN_SECS, MAX_SECS))
    }
}

// Howard Hinnant's civil-from-days and days-from-civil, proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(86_400);
        let secs = self.0.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs % 3600 / 60,
            secs % 60
        )
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(text: &str) -> Result<Timestamp, TimestampError> {
        let err = || TimestampError {
            text: text.to_string(),
        };
        let b = text.as_bytes();
        if b.len() != 20
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
            || b[19] != b'Z'
        {
            return Err(err());
        }
        let num = |range: std::ops::Range<usize>| -> Result<u32, TimestampError> {
            let part = &b[range];
            if !part.iter().all(u8::is_ascii_digit) {
                return Err(err());
            }
            Ok(part
                .iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
        };
        let (y, mo, d) = (i64::from(num(0..4)?), num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo)
            || d == 0
            || d > days_in_month(y, mo)
            || h > 23
            || mi > 59
            || s > 59
        {
            return Err(err());
        }
        let secs = days_from_civil(y, mo, d) * 86_400 + i64::from(h * 3600 + mi * 60 + s);
        Timestamp::from_unix(secs).ok_or_else(err)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Formats a span of seconds the way Go's `time.Duration` prints it (`25h0m0s`, `1m30s`, `0s`, `-5s`), the
/// shape the earlier implementation's stale reasons used.
pub fn format_duration(secs: i64) -> String {
    if secs == 0 {
        return "0s".to_string();
    }
    let sign = if secs < 0 { "-" } else { "" };
    let abs = secs.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs % 3600 / 60, abs % 60);
    if h > 0 {
        format!("{sign}{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{sign}{m}m{s}s")
    } else {
        format!("{sign}{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_round_trip() {
        let t: Timestamp = "2026-08-15T05:27:31Z".parse().unwrap();
        assert_eq!(t.unix(), 1_786_771_651);
        assert_eq!(t.to_string(), "2026-08-15T05:27:31Z");
        assert_eq!(
            Timestamp::from_unix(0).unwrap().to_string(),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            "2024-02-29T23:59:59Z"
                .parse::<Timestamp>()
                .unwrap()
                .to_string(),
            "2024-02-29T23:59:59Z"
        );
    }

    #[test]
    fn system_times_convert_to_the_second_and_clamp() {
        use std::time::Duration;
        let at = UNIX_EPOCH + Duration::from_millis(1_786_771_651_900);
        assert_eq!(
            Timestamp::from_system_time(at).to_string(),
            "2026-08-15T05:27:31Z"
        );
        assert_eq!(
            Timestamp::from_system_time(UNIX_EPOCH - Duration::from_secs(5)),
            Timestamp::EPOCH
        );
        let far = UNIX_EPOCH + Duration::from_secs(400_000_000_000);
        assert_eq!(
            Timestamp::from_system_time(far).to_string(),
            "9999-12-31T23:59:59Z"
        );
        assert!(Timestamp::now() > "2020-01-01T00:00:00Z".parse().unwrap());
    }

    #[test]
    fn rejects_other_shapes() {
        for bad in [
            "2026-08-15T05:27:31.5Z",
            "2026-08-15T05:27:31+00:00",
            "2026-08-15 05:27:31Z",
            "2025-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-08-15T24:00:00Z",
            "2026-08-15T05:27:31z",
            "",
        ] {
            assert!(bad.parse::<Timestamp>().is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn durations_print_like_go() {
        assert_eq!(format_duration(90_000), "25h0m0s");
        assert_eq!(format_duration(90), "1m30s");
        assert_eq!(format_duration(5), "5s");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(-5), "-5s");
    }
}
