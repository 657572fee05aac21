//! A bound per source host (Horizon, StellarExpert, each home domain): at most `concurrency` requests in
//! flight to one host, requests started no faster than its rate limit, and a host that answered 429 or
//! 503 with `Retry-After` left alone until then. Each host has its own gate, so one slow, limited or
//! failing host delays only the requests sent to it; a host with limits of its own (an operator's
//! override for a source's published rate limit) uses those instead of the common ones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The longest pause a `Retry-After` can impose on a host: a server asking for more is retried after
/// this (its request then counts as a failure of the scan that needed it, and is backed off there).
pub const RETRY_AFTER_PAUSE_CAP: Duration = Duration::from_secs(60);

/// The slowest rate a host is held to: one request per 1,000 s. A slower rate is read as this one,
/// so the spacing between two requests always fits a `Duration` and an `Instant`.
pub const MIN_REQUESTS_PER_SEC: f64 = 0.001;

/// The bound applied to every host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLimits {
    /// Requests in flight to one host at once (at least 1).
    pub concurrency: usize,
    /// Requests started per second to one host; `None` for no rate limit.
    pub per_second: Option<f64>,
}

impl Default for HostLimits {
    /// Eight requests at once per host, no rate limit.
    fn default() -> Self {
        HostLimits {
            concurrency: 8,
            per_second: None,
        }
    }
}

impl HostLimits {
    fn spacing(&self) -> Duration {
        match self.per_second {
            Some(rate) if rate.is_finite() && rate > 0.0 => {
                Duration::from_secs_f64(1.0 / rate.max(MIN_REQUESTS_PER_SEC))
            }
            _ => Duration::ZERO,
        }
    }
}

struct Gate {
    /// The time between two request starts under the host's rate limit.
    spacing: Duration,
    in_flight: Arc<Semaphore>,
    /// The earliest instant the next request may start (rate spacing and `Retry-After`).
    next_start: Mutex<Instant>,
}

/// The gates of every host seen, created on first use.
pub struct HostGates {
    limits: HostLimits,
    /// Hosts with limits of their own, by lower-cased host (with its port when the URL names one).
    overrides: HashMap<String, HostLimits>,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
}

/// Held while a request to a host is in flight.
pub struct HostPermit {
    _permit: OwnedSemaphorePermit,
}

impl HostGates {
    /// Gates applying `limits` to each host.
    pub fn new(limits: HostLimits) -> HostGates {
        HostGates {
            limits,
            overrides: HashMap::new(),
            gates: Mutex::new(HashMap::new()),
        }
    }

    /// These gates with `overrides` applied to the hosts they name (as [`host_of`] writes a host:
    /// lower-cased, with its port when the URL names one) instead of the common limits.
    pub fn with_overrides(
        mut self,
        overrides: impl IntoIterator<Item = (String, HostLimits)>,
    ) -> HostGates {
        self.overrides = overrides
            .into_iter()
            .map(|(host, limits)| (host.to_ascii_lowercase(), limits))
            .collect();
        self
    }

    /// The limits applied to hosts without an override.
    pub fn limits(&self) -> HostLimits {
        self.limits
    }

    /// The limits applied to `host`.
    pub fn limits_of(&self, host: &str) -> HostLimits {
        self.overrides
            .get(&host.to_ascii_lowercase())
            .copied()
            .unwrap_or(self.limits)
    }

    fn gate(&self, host: &str) -> Arc<Gate> {
        self.gates
            .lock()
            .expect("host gates")
            .entry(host.to_ascii_lowercase())
            .or_insert_with(|| {
                let limits = self.limits_of(host);
                Arc::new(Gate {
                    spacing: limits.spacing(),
                    in_flight: Arc::new(Semaphore::new(limits.concurrency.max(1))),
                    next_start: Mutex::new(Instant::now()),
                })
            })
            .clone()
    }

    /// Waits for a slot on `host`: a free place among its requests in flight, then its turn under the
    /// rate limit and any `Retry-After` pause. Hold the permit until the answer is read.
    pub async fn acquire(&self, host: &str) -> HostPermit {
        self.acquire_before(host, None)
            .await
            .expect("an unbounded wait always ends with a slot")
    }

    /// [`HostGates::acquire`], bounded by `deadline`: `None` as soon as it is known that no slot can start
    /// by then (the host's turn, its rate spacing or its `Retry-After` pause falls after it), or when no
    /// request in flight finishes before it. A slot it gives up is not taken from the host's schedule.
    pub async fn acquire_before(
        &self,
        host: &str,
        deadline: Option<Instant>,
    ) -> Option<HostPermit> {
        let gate = self.gate(host);
        let acquire = gate.in_flight.clone().acquire_owned();
        let permit = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, acquire).await.ok()?,
            None => acquire.await,
        }
        .expect("host semaphore is never closed");
        let start = {
            let mut next = gate.next_start.lock().expect("host gate");
            let start = (*next).max(Instant::now());
            if deadline.is_some_and(|d| start > d) {
                return None;
            }
            *next = start + gate.spacing;
            start
        };
        tokio::time::sleep_until(start).await;
        Some(HostPermit { _permit: permit })
    }

    /// `host` asked to be left alone for `wait` (`Retry-After`): no request to it starts before then
    /// (bounded by [`RETRY_AFTER_PAUSE_CAP`]).
    pub fn pause(&self, host: &str, wait: Duration) {
        let gate = self.gate(host);
        let until = Instant::now() + wait.min(RETRY_AFTER_PAUSE_CAP);
        let mut next = gate.next_start.lock().expect("host gate");
        *next = (*next).max(until);
    }
}

/// The host (and port, when given) a URL is sent to, lower-cased; `None` for a URL without one.
pub fn host_of(url: &str) -> Option<String> {
    let uri: hyper::Uri = url.parse().ok()?;
    let host = uri.host()?.to_ascii_lowercase();
    Some(match uri.port_u16() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_of_keeps_host_and_port() {
        assert_eq!(
            host_of("https://Horizon.Example:8000/assets?x=1").as_deref(),
            Some("horizon.example:8000")
        );
        assert_eq!(
            host_of("https://a.example/.well-known/stellar.toml").as_deref(),
            Some("a.example")
        );
        assert_eq!(host_of("not a url"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_rate_limit_spaces_one_hosts_requests_and_leaves_the_others_alone() {
        let gates = Arc::new(HostGates::new(HostLimits {
            concurrency: 10,
            per_second: Some(10.0),
        }));
        let begin = Instant::now();
        let mut started = Vec::new();
        for _ in 0..5 {
            let _p = gates.acquire("slow.example").await;
            started.push(begin.elapsed());
        }
        // 10 per second: one every 100 ms.
        assert_eq!(started[4], Duration::from_millis(400));
        // Another host has its own turn: not queued behind slow.example.
        let t = Instant::now();
        let _p = gates.acquire("fast.example").await;
        assert_eq!(t.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_host_with_limits_of_its_own_uses_them_and_the_others_the_common_ones() {
        let gates = Arc::new(
            HostGates::new(HostLimits {
                concurrency: 4,
                per_second: None,
            })
            .with_overrides([(
                "Horizon.Example".to_string(),
                HostLimits {
                    concurrency: 1,
                    per_second: Some(2.0),
                },
            )]),
        );
        let begin = Instant::now();
        let mut started = Vec::new();
        for _ in 0..3 {
            let _p = gates.acquire("horizon.example").await;
            started.push(begin.elapsed());
        }
        // 2 per second: one every 500 ms.
        assert_eq!(started[2], Duration::from_millis(1000));
        // One in flight: a second request to it waits for the first.
        let held = gates.acquire("horizon.example").await;
        let waiting = tokio::spawn({
            let gates = gates.clone();
            async move {
                let _p = gates.acquire("horizon.example").await;
            }
        });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            !waiting.is_finished(),
            "the override's single slot is taken"
        );
        // Any other host: four at once, no spacing.
        let t = Instant::now();
        let mut others = Vec::new();
        for _ in 0..4 {
            others.push(gates.acquire("a.example").await);
        }
        assert_eq!(t.elapsed(), Duration::ZERO);
        drop(held);
        waiting.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_pauses_only_that_host_and_is_capped() {
        let gates = HostGates::new(HostLimits::default());
        gates.pause("limited.example", Duration::from_secs(7));
        let t = Instant::now();
        let _p = gates.acquire("other.example").await;
        assert_eq!(t.elapsed(), Duration::ZERO);
        let _p = gates.acquire("limited.example").await;
        assert_eq!(t.elapsed(), Duration::from_secs(7));
        gates.pause("limited.example", Duration::from_secs(3600));
        let t = Instant::now();
        let _p = gates.acquire("limited.example").await;
        assert_eq!(t.elapsed(), RETRY_AFTER_PAUSE_CAP);
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_past_the_deadline_gives_up_at_once_and_keeps_the_schedule() {
        let gates = HostGates::new(HostLimits {
            concurrency: 1,
            per_second: Some(1.0),
        });
        gates.pause("limited.example", Duration::from_secs(60));
        let t = Instant::now();
        let deadline = Some(t + Duration::from_secs(30));
        assert!(gates
            .acquire_before("limited.example", deadline)
            .await
            .is_none());
        // Known at once: no waiting until the deadline.
        assert_eq!(t.elapsed(), Duration::ZERO);
        // Within the deadline: a slot, after the pause.
        let p = gates
            .acquire_before("limited.example", Some(t + Duration::from_secs(61)))
            .await;
        assert!(p.is_some());
        assert_eq!(t.elapsed(), Duration::from_secs(60));
        // The one slot is held: a bounded wait for it ends at its deadline, with nothing.
        let t = Instant::now();
        assert!(gates
            .acquire_before("limited.example", Some(t + Duration::from_secs(5)))
            .await
            .is_none());
        assert_eq!(t.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn at_most_concurrency_requests_in_flight_per_host() {
        let gates = Arc::new(HostGates::new(HostLimits {
            concurrency: 2,
            per_second: None,
        }));
        let a = gates.acquire("h.example").await;
        let _b = gates.acquire("h.example").await;
        let waiting = tokio::spawn({
            let gates = gates.clone();
            async move {
                let _c = gates.acquire("h.example").await;
            }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!waiting.is_finished(), "a third request waits");
        let _other = gates.acquire("i.example").await;
        drop(a);
        waiting.await.unwrap();
    }

    #[test]
    fn a_rate_below_the_minimum_is_spaced_as_the_minimum() {
        let limits = |per_second| HostLimits {
            concurrency: 1,
            per_second: Some(per_second),
        };
        assert_eq!(limits(2.0).spacing(), Duration::from_millis(500));
        // Slower than one request per 1,000 s (or too slow for a Duration at all) is held at that.
        assert_eq!(limits(1e-300).spacing(), Duration::from_secs(1_000));
        assert_eq!(
            limits(MIN_REQUESTS_PER_SEC).spacing(),
            Duration::from_secs(1_000)
        );
        assert_eq!(limits(f64::NAN).spacing(), Duration::ZERO);
    }
}
