//! Failover between authorities: one allocation round over them in preference order, the checks
//! a block passes before anything is served from it, and the back-off of a failing authority.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tokio::time::Instant;
use tracing::{info, warn};

use super::super::authority::Block;
use super::super::config::{GeneratorConfig, PROBE_EVERY, Preference};
use super::super::error::{AuthorityError, Recourse};
use super::super::generator_error::{AuthorityFailure, Error, ErrorDetail, FailureCause};
use super::request::{Outcome, Request};
use super::{Health, Inner, State};
use gdid_core::{COUNTER_MAX, Gdid};

impl Inner {
    /// One pass over the authorities in preference order (skipping those backing off or still
    /// answering an earlier request, unless all are): the first valid block, or every
    /// authority's cause. A request not answered within its authority's usual latency is hedged:
    /// the next authority is asked as well, and the first block that comes is served (the other
    /// request lives on in its task: [`request`](super::request)).
    pub(super) async fn allocate_round(
        self: &Arc<Self>,
        size: u64,
    ) -> Result<Block, Vec<AuthorityFailure>> {
        let candidates = self.candidates();
        let mut failures = Vec::new();
        let mut untried = candidates.iter().copied();
        // The requests of this round not answered yet: the one asked, and at most one hedge.
        let mut out: Vec<Request> = Vec::with_capacity(2);
        loop {
            if out.is_empty() {
                match untried.next() {
                    Some(i) => out.push(self.ask(i, size)),
                    None => break,
                }
            }
            let hedge_at = match untried.clone().next() {
                Some(_) if out.len() == 1 => self.hedge_at(&out[0]),
                _ => None,
            };
            let (k, outcome) = match answer_or_hedge(&mut out, hedge_at).await {
                Some(answer) => answer,
                None => {
                    if let Some(next) = untried.next() {
                        self.hedged(out[0].i, next);
                        out.push(self.ask(next, size));
                    }
                    continue;
                }
            };
            let request = out.swap_remove(k);
            let i = request.i;
            let took = request.asked.elapsed();
            let cause = match outcome.and_then(|block| self.accept(i, block, size, request.floor)) {
                Ok(block) => {
                    self.measured(i, took, request.recovering);
                    self.runway.allocation(i, took, true);
                    self.lock_state().earn_hedge();
                    return Ok(block); // a request still out answers to its task
                }
                Err(cause) => cause,
            };
            let stop = cause.recourse() == Recourse::Stop;
            self.runway.allocation(i, took, false);
            if !stop && (untried.clone().next().is_some() || !out.is_empty()) {
                self.runway.failover(i);
            }
            self.record_failure(i, &cause);
            failures.push(AuthorityFailure {
                authority: self.authorities[i].number(),
                label: self.authorities[i].label(),
                cause,
            });
            if stop {
                return Err(failures);
            }
        }
        // Authorities skipped (backing off, or still answering) are reported with their last
        // cause.
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

    /// The authorities a round asks, in order: those ready (not backing off, no request of an
    /// earlier round still out), or every one when none is.
    fn candidates(&self) -> Vec<usize> {
        let now = Instant::now();
        let mut st = self.lock_state();
        st.last_round_started = Some(now);
        let ready: Vec<usize> = (0..self.authorities.len())
            .filter(|&i| {
                let health = &st.health[i];
                health.backoff_until.is_none_or(|t| t <= now) && health.requests_out == 0
            })
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
    }

    /// When `request` is to be hedged: `None` when hedging is off, a hedge of this generator is
    /// still out, or the hedges of the recent blocks are spent.
    fn hedge_at(&self, request: &Request) -> Option<Instant> {
        let margin = self.config.hedge_margin?;
        let st = self.lock_state();
        let others_out = (st.health.iter().map(|h| h.requests_out).sum::<u32>()).saturating_sub(1);
        if others_out > 0 || st.hedge_credit < 1.0 {
            return None;
        }
        let usual = st.health[request.i].usual_latency;
        Some(request.asked + usual.map_or(margin * 5, |latency| latency * 2 + margin))
    }

    /// Authority `slow` did not answer in time: `next` is asked as well.
    fn hedged(&self, slow: usize, next: usize) {
        let mut st = self.lock_state();
        st.hedge_credit -= 1.0;
        st.hedges += 1;
        drop(st);
        self.runway.hedge(slow);
        info!(
            authority = self.authorities[slow].number(),
            next = self.authorities[next].number(),
            "no answer within the authority's usual latency: the next is asked as well"
        );
    }

    /// Authority `i` answered with a block in `took`: its latency estimate.
    pub(super) fn measured(&self, i: usize, took: Duration, recovering: bool) {
        // After failures, the first answer starts the estimate afresh: the timeouts counted
        // against it were the outage, not the distance.
        let health = &mut self.lock_state().health[i];
        health.latency = match health.latency {
            Some(seen) if !recovering => Some(smoothed(seen, took)),
            _ => Some(took),
        };
        health.usual_latency = Some(
            health
                .usual_latency
                .map_or(took, |seen| smoothed(seen, took)),
        );
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
    /// ends early on a refusal whose recourse is [`Recourse::Stop`] (a name the store spells
    /// otherwise, a size): a name or a size is then the error itself, so that callers fix the
    /// request instead of waiting out what looks like an outage.
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
            scope: self.scope.to_string(),
            sequence: self.sequence.to_string(),
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
            scope: self.scope.to_string(),
            sequence: self.sequence.to_string(),
            waited,
            causes,
        }
        .into()
    }
}

/// The first of `out` to answer (its index and answer), or `None` when `hedge_at` comes first.
async fn answer_or_hedge(
    out: &mut [Request],
    hedge_at: Option<Instant>,
) -> Option<(usize, Outcome)> {
    let mut hedge = hedge_at.map(|at| Box::pin(tokio::time::sleep_until(at)));
    poll_fn(|cx| {
        for (k, request) in out.iter_mut().enumerate() {
            if let Poll::Ready(outcome) = Pin::new(&mut *request).poll(cx) {
                return Poll::Ready(Some((k, outcome)));
            }
        }
        match hedge.as_mut().map(|sleep| sleep.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(None),
            _ => Poll::Pending,
        }
    })
    .await
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
