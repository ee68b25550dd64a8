//! Failover between authorities: one allocation round over them in preference order, the checks
//! a block passes before anything is served from it, and the back-off of a failing authority.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tracing::{info, warn};

use super::super::authority::Block;
use super::super::config::{GeneratorConfig, PROBE_EVERY, Preference};
use super::super::error::AuthorityError;
use super::super::generator_error::{AuthorityFailure, Error, ErrorDetail, FailureCause};
use super::{Health, Inner, State};
use gdid_core::{COUNTER_MAX, Gdid};

impl Inner {
    /// One pass over the authorities in preference order (skipping those backing off, unless all
    /// are): the first valid block, or every authority's cause.
    pub(super) async fn allocate_round(&self, size: u64) -> Result<Block, Vec<AuthorityFailure>> {
        let now = Instant::now();
        let candidates: Vec<usize> = {
            let mut st = self.lock_state();
            st.last_round_started = Some(now);
            let ready: Vec<usize> = (0..self.authorities.len())
                .filter(|&i| st.health[i].backoff_until.is_none_or(|t| t <= now))
                .collect();
            let mut candidates = if ready.is_empty() {
                (0..self.authorities.len()).collect()
            } else {
                ready
            };
            if self.config.preference == Preference::Fastest {
                st.rounds += 1;
                fastest_first(&mut candidates, &st.health, st.rounds);
            }
            candidates
        };
        let mut failures = Vec::new();
        for &i in &candidates {
            let authority = &self.authorities[i];
            // Blocks answered to requests sent after this point must start at or after it, in
            // whatever order concurrent requests are answered.
            let asked = Instant::now();
            let (floor, recovering) = {
                let mut st = self.lock_state();
                st.health[i].last_asked = Some(asked);
                (
                    st.health[i].next_expected,
                    st.health[i].consecutive_failures > 0,
                )
            };
            let answer = tokio::time::timeout(
                self.config.allocation_timeout,
                authority.allocate_boxed(&self.scope, &self.sequence, size),
            )
            .await;
            let cause = match answer {
                Ok(Ok(block)) => match self.accept(i, block, size, floor) {
                    Ok(block) => {
                        let took = asked.elapsed();
                        {
                            // After failures, the first answer starts the estimate afresh: the
                            // timeouts counted against it were the outage, not the distance.
                            let latency = &mut self.lock_state().health[i].latency;
                            *latency = match *latency {
                                Some(seen) if !recovering => Some(smoothed(seen, took)),
                                _ => Some(took),
                            };
                        }
                        self.runway.allocation(i, took, true);
                        return Ok(block);
                    }
                    Err(cause) => cause,
                },
                Ok(Err(error)) => FailureCause::Error(Arc::new(error)),
                Err(_) => FailureCause::TimedOut(self.config.allocation_timeout),
            };
            let fatal = matches!(&cause, FailureCause::Error(e) if !e.is_retryable());
            self.runway.allocation(i, asked.elapsed(), false);
            if !fatal && candidates.last() != Some(&i) {
                self.runway.failover(i);
            }
            self.record_failure(i, &cause);
            failures.push(AuthorityFailure {
                authority: authority.number(),
                label: authority.label(),
                cause,
            });
            if fatal {
                return Err(failures);
            }
        }
        // Authorities skipped while backing off are reported with their last cause.
        let st = self.lock_state();
        for (i, authority) in self.authorities.iter().enumerate() {
            if !candidates.contains(&i) {
                if let Some(cause) = &st.health[i].last_cause {
                    failures.push(AuthorityFailure {
                        authority: authority.number(),
                        label: authority.label(),
                        cause: cause.clone(),
                    });
                }
            }
        }
        Err(failures)
    }

    /// Checks a block before anything is served from it; `floor` is where the authority's blocks
    /// ended when the request was sent.
    pub(super) fn accept(
        &self,
        i: usize,
        block: Block,
        size: u64,
        floor: Option<(u32, u64)>,
    ) -> Result<Block, FailureCause> {
        let number = self.authorities[i].number();
        let invalid = |reason: String| {
            Err(FailureCause::Error(Arc::new(AuthorityError::InvalidBlock(
                reason,
            ))))
        };
        let checked = match Block::new(block.era(), block.authority(), block.start(), block.len()) {
            Ok(b) => b,
            Err(e) => return Err(FailureCause::Error(Arc::new(e))),
        };
        if checked.authority() != number {
            return invalid(format!(
                "block {checked} carries authority {} but came from authority {number}",
                checked.authority()
            ));
        }
        if checked.len() != size {
            return invalid(format!(
                "block {checked} holds {} ids, {size} were asked for",
                checked.len()
            ));
        }
        if let Some((era, counter)) = floor {
            if (checked.era(), checked.start()) < (era, counter) {
                let cause = FailureCause::WentBackwards {
                    block: checked,
                    previous_end: Gdid::from_raw(
                        era,
                        (u64::from(number) << 60) | counter.min(COUNTER_MAX),
                    ),
                };
                warn!(authority = number, %checked, "authority counter went backwards: block refused");
                return Err(cause);
            }
        }
        let mut st = self.lock_state();
        let health = &mut st.health[i];
        let end = (checked.era(), checked.end());
        health.next_expected = Some(health.next_expected.map_or(end, |seen| seen.max(end)));
        health.consecutive_failures = 0;
        health.backoff_until = None;
        info!(authority = number, block = %checked, "block allocated");
        Ok(checked)
    }

    pub(super) fn record_failure(&self, i: usize, cause: &FailureCause) {
        let mut st = self.lock_state();
        let health = &mut st.health[i];
        health.failures += 1;
        health.consecutive_failures = health.consecutive_failures.saturating_add(1);
        // For `Preference::Fastest`, a failure counts as an answer that took the whole
        // allocation timeout, however fast it came: an authority that fails is not the closest.
        let timeout = self.config.allocation_timeout;
        health.latency = Some(
            health
                .latency
                .map_or(timeout, |seen| smoothed(seen, timeout)),
        );
        let pause = backoff(&self.config, health.consecutive_failures);
        health.backoff_until = Some(Instant::now() + pause);
        health.last_cause = Some(cause.clone());
        warn!(
            authority = self.authorities[i].number(),
            %cause,
            backoff = ?pause,
            "authority failed: failing over"
        );
    }

    /// The error of a round whose authorities all failed, `causes` in the order asked. A round
    /// ends early on a refusal that no authority and no wait will change (a name the store
    /// spells otherwise, a size): that refusal is the error, so that callers fix the request
    /// instead of waiting out what looks like an outage.
    pub(super) fn unavailable(&self, causes: Vec<AuthorityFailure>) -> Error {
        if let Some(FailureCause::Error(refused)) = causes.last().map(|failure| &failure.cause) {
            match &**refused {
                AuthorityError::InvalidName(name) => return Error::from(name.clone()),
                AuthorityError::InvalidSize(count) => {
                    return Error::from(AuthorityError::InvalidSize(*count));
                }
                _ => {}
            }
        }
        ErrorDetail::Unavailable {
            scope: self.scope.clone(),
            sequence: self.sequence.clone(),
            causes,
        }
        .into()
    }

    pub(super) fn timeout_error(&self, st: &State, waited: Duration) -> Error {
        let causes = self
            .authorities
            .iter()
            .zip(&st.health)
            .filter_map(|(a, h)| {
                h.last_cause.clone().map(|cause| AuthorityFailure {
                    authority: a.number(),
                    label: a.label(),
                    cause,
                })
            })
            .collect();
        ErrorDetail::Timeout {
            scope: self.scope.clone(),
            sequence: self.sequence.clone(),
            waited,
            causes,
        }
        .into()
    }
}

/// Orders `candidates` fastest first ([`Preference::Fastest`]): never measured, then by smoothed
/// latency; every [`PROBE_EVERY`]th round, the one asked least recently goes first instead.
fn fastest_first(candidates: &mut [usize], health: &[Health], round: u64) {
    candidates.sort_by_key(|&i| (health[i].latency.is_some(), health[i].latency));
    if round % PROBE_EVERY == 0 {
        if let Some(stalest) =
            (0..candidates.len()).min_by_key(|&k| health[candidates[k]].last_asked)
        {
            candidates[..=stalest].rotate_right(1);
        }
    }
}

/// The latency after one more answer: an exponentially weighted mean, the last answer weighing a
/// quarter.
fn smoothed(seen: Duration, took: Duration) -> Duration {
    seen.mul_f64(0.75) + took.mul_f64(0.25)
}

/// The pause after `failures` consecutive failures: `min_backoff × 2^(failures-1)`, capped.
pub(super) fn backoff(config: &GeneratorConfig, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(30);
    config
        .min_backoff
        .saturating_mul(1 << doublings)
        .min(config.max_backoff)
}
