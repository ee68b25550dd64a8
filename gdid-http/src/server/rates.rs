//! Requests a second for each token: beyond its rate, a token's request is answered 429
//! `rate_limited` with `Retry-After`, before anything is read or allocated, so one tenant's
//! flood leaves the store and the server's places to the others.

use std::num::NonZeroU32;

use axum::http::StatusCode;
use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};

use super::ApiError;
use super::tokens::Digest;

/// The rate of each token, if any (one limiter keyed by the tokens' digests: only tokens the
/// server accepts get an entry).
pub(crate) struct Rates(Option<RateLimiter<Digest, HashMapStateStore<Digest>, DefaultClock>>);

impl Rates {
    /// `per_second` requests a second for each token, in bursts of as many (0: no limit).
    pub(crate) fn new(per_second: u32) -> Self {
        Rates(NonZeroU32::new(per_second).map(|rate| RateLimiter::hashmap(Quota::per_second(rate))))
    }

    /// Whether `token` may send one more request now: else a 429 saying when it may.
    pub(crate) fn check(&self, token: &Digest) -> Result<(), ApiError> {
        let Some(limiter) = &self.0 else {
            return Ok(());
        };
        limiter.check_key(token).map_err(|not_until| {
            let wait = not_until.wait_time_from(limiter.clock().now());
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            ApiError {
                retry_after: Some(seconds.max(1)),
                ..ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    format!(
                        "the bearer token sent more requests than this server's rate allows: try \
                         again in {} ms",
                        wait.as_millis().max(1)
                    ),
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_token_has_its_own_rate() {
        let rates = Rates::new(3);
        let (one, two) = ([1; 32], [2; 32]);
        for _ in 0..3 {
            rates.check(&one).unwrap();
        }
        let refused = rates.check(&one).unwrap_err();
        assert_eq!(
            (refused.status, refused.code),
            (StatusCode::TOO_MANY_REQUESTS, "rate_limited")
        );
        assert_eq!(refused.retry_after, Some(1));
        rates.check(&two).unwrap();
    }

    #[test]
    fn no_rate_no_limit() {
        let rates = Rates::new(0);
        for _ in 0..10_000 {
            rates.check(&[0; 32]).unwrap();
        }
    }
}
