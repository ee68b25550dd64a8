//! Tokens the server does not accept, counted per client host: after a burst of them, a host's
//! requests are refused 429 `rate_limited` before their token is read, one more allowed a
//! second, so that guessing tokens is slow. A host is an IPv4 address or an IPv6 /64
//! ([`super::listen`]'s key). Valid tokens are never counted, and a connection that has shown
//! one is never refused this way: a host's clients that hold a token are not slowed by a guesser
//! on another host, nor on their own connections.
//!
//! The memory is bounded: at most [`MAX_HOSTS`] hosts are remembered, those that may try again
//! dropped first when more arrive. Hosts are known under [`Server::serve`](super::Server::serve)
//! only: the router served otherwise does not slow anyone.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;

use super::ApiError;

/// Tokens a host may send that the server does not accept, one after another, before it waits.
pub(crate) const BURST: u32 = 20;

/// After the burst, one more a second.
const INTERVAL: Duration = Duration::from_secs(1);

/// The most hosts remembered at once (about 64 bytes each).
pub(crate) const MAX_HOSTS: usize = 65_536;

/// The hosts that sent tokens the server does not accept, each with the instant its count is
/// back to nothing (a GCRA: each failure adds [`INTERVAL`], time takes it away).
pub(crate) struct Failures {
    hosts: Mutex<HashMap<IpAddr, Instant>>,
    burst: u32,
    interval: Duration,
    max_hosts: usize,
}

impl Failures {
    /// [`BURST`] failures, then one a second, for at most [`MAX_HOSTS`] hosts.
    pub(crate) fn new() -> Self {
        Failures::with(BURST, INTERVAL, MAX_HOSTS)
    }

    fn with(burst: u32, interval: Duration, max_hosts: usize) -> Self {
        Failures {
            hosts: Mutex::new(HashMap::new()),
            burst: burst.max(1),
            interval,
            max_hosts: max_hosts.max(1),
        }
    }

    /// Whether `host` may have its token read now: else a 429 saying when it may.
    pub(crate) fn check(&self, host: IpAddr) -> Result<(), ApiError> {
        let now = Instant::now();
        let hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(clear_at) = hosts.get(&host) else {
            return Ok(());
        };
        // One more failure must stay within the burst.
        let owed = clear_at.saturating_duration_since(now) + self.interval;
        let Some(wait) = owed.checked_sub(self.interval * self.burst) else {
            return Ok(());
        };
        if wait.is_zero() {
            return Ok(());
        }
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        Err(ApiError {
            retry_after: Some(seconds.max(1)),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "this client's address sent more than {} tokens this server does not accept: \
                     its requests are not read for {} ms",
                    self.burst,
                    wait.as_millis().max(1)
                ),
            )
        })
    }

    /// `host` sent a token the server does not accept.
    pub(crate) fn record(&self, host: IpAddr) {
        let now = Instant::now();
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        if !hosts.contains_key(&host) && hosts.len() >= self.max_hosts {
            // Those whose count is back to nothing first, then any one.
            hosts.retain(|_, clear_at| *clear_at > now);
            if hosts.len() >= self.max_hosts {
                let any = hosts.keys().next().copied();
                if let Some(any) = any {
                    hosts.remove(&any);
                }
            }
        }
        let clear_at = hosts.entry(host).or_insert(now);
        *clear_at = (*clear_at).max(now) + self.interval;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.hosts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(last: u8) -> IpAddr {
        IpAddr::from([192, 0, 2, last])
    }

    #[test]
    fn a_burst_then_one_an_interval() {
        let failures = Failures::with(3, Duration::from_millis(200), 10);
        for _ in 0..3 {
            failures.check(host(1)).unwrap();
            failures.record(host(1));
        }
        let refused = failures.check(host(1)).unwrap_err();
        assert_eq!(
            (refused.status, refused.code, refused.retry_after),
            (StatusCode::TOO_MANY_REQUESTS, "rate_limited", Some(1))
        );
        // Another host is not concerned.
        failures.check(host(2)).unwrap();
        std::thread::sleep(Duration::from_millis(210));
        failures.check(host(1)).unwrap();
        failures.record(host(1));
        failures.check(host(1)).unwrap_err();
    }

    #[test]
    fn the_hosts_remembered_are_bounded() {
        let failures = Failures::with(2, Duration::from_millis(100), 4);
        for last in 0..100 {
            failures.record(host(last));
            failures.record(host(last));
        }
        assert!(failures.len() <= 4, "{}", failures.len());
        // Those that may try again go first.
        std::thread::sleep(Duration::from_millis(250));
        failures.record(host(200));
        assert_eq!(failures.len(), 1);
    }
}
