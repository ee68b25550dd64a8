//! Failover between authorities: one allocation round over them in preference order, the checks
//! a block passes before anything is served from it, and the back-off of a failing authority.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tracing::{info, warn};

use super::super::authority::Block;
use super::super::config::GeneratorConfig;
use super::super::error::{AuthorityFailure, Error, FailureCause};
use super::{Inner, State};
use crate::{COUNTER_MAX, Gdid};

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
            if ready.is_empty() {
                (0..self.authorities.len()).collect()
            } else {
                ready
            }
        };
        let mut failures = Vec::new();
        for &i in &candidates {
            let authority = &self.authorities[i];
            // Blocks answered to requests sent after this point must start at or after it, in
            // whatever order concurrent requests are answered.
            let floor = self.lock_state().health[i].next_expected;
            let asked = Instant::now();
            let answer = tokio::time::timeout(
                self.config.allocation_timeout,
                authority.allocate_boxed(&self.scope, &self.sequence, size),
            )
            .await;
            let cause = match answer {
                Ok(Ok(block)) => match self.accept(i, block, size, floor) {
                    Ok(block) => {
                        self.runway.allocation(i, asked.elapsed(), true);
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
            Err(FailureCause::Error(Arc::new(
                super::super::error::AuthorityError::InvalidBlock(reason),
            )))
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

    pub(super) fn unavailable(&self, causes: Vec<AuthorityFailure>) -> Error {
        Error::Unavailable {
            scope: self.scope.clone(),
            sequence: self.sequence.clone(),
            causes,
        }
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
        Error::Timeout {
            scope: self.scope.clone(),
            sequence: self.sequence.clone(),
            waited,
            causes,
        }
    }
}

/// The pause after `failures` consecutive failures: `min_backoff × 2^(failures-1)`, capped.
pub(super) fn backoff(config: &GeneratorConfig, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(30);
    config
        .min_backoff
        .saturating_mul(1 << doublings)
        .min(config.max_backoff)
}
