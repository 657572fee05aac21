//! Retry policy for StellarExpert: 429, 5xx and transport errors, a bounded number of attempts,
//! full-jitter backoff, and the server's `Retry-After` honoured up to a bound.
use std::time::{Duration, SystemTime};

use hyper::header::{HeaderMap, RETRY_AFTER};

/// Attempts in total (the first try included).
pub const ATTEMPTS: u32 = 3;
/// First backoff ceiling; doubles per attempt up to `BACKOFF_CAP`.
pub const BACKOFF_BASE: Duration = Duration::from_millis(250);
/// Largest jittered backoff.
pub const BACKOFF_CAP: Duration = Duration::from_millis(500);
/// Longest wait taken from `Retry-After`: a server asking for more is not waited for beyond this.
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(2);

/// Whether a status is worth another attempt.
pub fn retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// `Retry-After` as a delay: delta-seconds or an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The wait before attempt `attempt + 1` (`attempt` counts from 0).
pub fn backoff(attempt: u32, server_asked: Option<Duration>) -> Duration {
    if let Some(asked) = server_asked {
        // Honour the server, bounded; a little jitter keeps parallel tasks from retrying in lockstep.
        return asked.min(RETRY_AFTER_CAP) + jitter(Duration::from_millis(50));
    }
    let ceiling = BACKOFF_BASE
        .saturating_mul(1 << attempt.min(8))
        .min(BACKOFF_CAP);
    jitter(ceiling)
}

fn jitter(ceiling: Duration) -> Duration {
    let millis = ceiling.as_millis() as u64;
    Duration::from_millis(if millis == 0 {
        0
    } else {
        fastrand::u64(0..=millis)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn backoff_is_bounded() {
        for attempt in 0..10 {
            assert!(backoff(attempt, None) <= BACKOFF_CAP);
        }
        let long = backoff(0, Some(Duration::from_secs(3600)));
        assert!(long >= RETRY_AFTER_CAP && long <= RETRY_AFTER_CAP + Duration::from_millis(50));
        assert!(backoff(0, Some(Duration::from_secs(1))) >= Duration::from_secs(1));
    }

    #[test]
    fn parses_retry_after() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
        assert!(retryable_status(429) && retryable_status(503) && !retryable_status(404));
    }
}
