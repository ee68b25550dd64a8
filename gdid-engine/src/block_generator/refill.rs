//! Refills: a caller waiting for a block, the background prefetch started at the low-water mark,
//! the single-flight allocation task, and the hand-over of its block (installed at once when the
//! current one is used up, kept pending otherwise).

use std::sync::{Arc, Weak};

use tokio::time::Instant;
use tracing::{Instrument, debug, info_span, warn};

use super::super::authority::Block;
use super::super::generator_error::{AuthorityFailure, Error, ErrorDetail};
use super::super::sizing::{RATE_PROBE, block_size};
use super::failover::backoff;
use super::{Inner, State};
use gdid_core::Gdid;

impl Inner {
    /// [`try_next_id`](Self::try_next_id) after each wait for a block, until the deadline.
    pub(super) async fn next_id_slow(self: &Arc<Self>) -> Result<Gdid, Error> {
        let deadline = Instant::now() + self.config.request_timeout;
        loop {
            self.wait_for_block(deadline).await?;
            // The task may resume on another thread, or on this one after other tasks: what it
            // finds in that thread's slice is served first (never overwritten).
            if let Some(id) = self.try_next_id() {
                return Ok(id);
            }
        }
    }

    /// Returns once the current segment may have ids again (a block was installed, or a round
    /// ended); at `deadline`, the error of the latest failed round of this request, or a timeout.
    pub(super) async fn wait_for_block(self: &Arc<Self>, deadline: Instant) -> Result<(), Error> {
        let request_started = deadline - self.config.request_timeout;
        let mut notified = std::pin::pin!(self.changed.notified());
        {
            let mut st = self.lock_state();
            if self.ready_or_install_pending(&mut st) {
                return Ok(());
            }
            if st.closed {
                return Err(ErrorDetail::Closed {
                    scope: self.scope.to_string(),
                    sequence: self.sequence.to_string(),
                }
                .into());
            }
            // A refusal that no wait changes (the caller's to fix, or every authority's last
            // answer lasting), met during this request: said at once.
            if let Some((at, error)) = &st.last_failure
                && *at >= request_started
                && is_final(error)
            {
                return Err(error.clone());
            }
            // Registered under the lock: a change made after it is not missed.
            notified.as_mut().enable();
            st.demand_until = Some(st.demand_until.map_or(deadline, |d| d.max(deadline)));
            if !st.in_flight {
                st.in_flight = true;
                self.spawn_allocation(&mut st);
                if let Some(error) = &st.last_failure {
                    if !st.in_flight {
                        return Err(error.1.clone()); // could not even start
                    }
                }
            } else if st
                .last_round_started
                .is_none_or(|started| started < request_started)
            {
                // Nothing was tried for this request yet: cut the allocator's back-off short.
                self.wake_allocator.notify_one();
            }
        }
        // Another caller's allocation is under way; waiting for it needs tokio's timer.
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(no_runtime());
        }
        if tokio::time::timeout_at(deadline, notified).await.is_ok() {
            return Ok(());
        }
        let st = self.lock_state();
        match &st.last_failure {
            Some((at, error)) if *at >= request_started => Err(error.clone()),
            _ => Err(self.timeout_error(&st, deadline - request_started)),
        }
    }

    pub(super) fn start_prefetch(self: &Arc<Self>) {
        let mut st = self.lock_state();
        if st.in_flight || st.pending.is_some() || st.closed {
            return;
        }
        st.in_flight = true;
        debug!(scope = %self.scope, sequence = %self.sequence, "low-water mark passed: prefetching");
        self.spawn_allocation(&mut st);
    }

    /// Runs the allocation loop as a task. The caller holds the state lock and set `in_flight`.
    pub(super) fn spawn_allocation(self: &Arc<Self>, st: &mut State) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let span =
                    info_span!("gdid.allocate", scope = %self.scope, sequence = %self.sequence);
                // The guard lives in the task from the start: dropping the task, even unpolled
                // (its runtime shut down first), releases `in_flight`.
                let guard = InFlight {
                    generator: Arc::downgrade(self),
                    finished: false,
                };
                runtime.spawn(allocation_loop(guard).instrument(span));
            }
            Err(_) => {
                st.in_flight = false;
                st.last_failure = Some((Instant::now(), no_runtime()));
            }
        }
    }

    /// The size of the next block, from the rate observed since the previous allocation.
    pub(super) fn next_block_size(&self) -> u64 {
        let mut st = self.lock_state();
        let consumed = st.consumed_before_current + self.current.load().taken();
        let rate = st.rate.observe(Instant::now(), consumed);
        let c = &self.config;
        let size = rate.map_or(c.min_block, |r| {
            block_size(r, c.cover, c.low_water_mark, c.min_block, c.max_block)
        });
        st.block_size = size;
        self.runway.block_size(size);
        size
    }
}

/// Allocates until a block is had, or until nobody is served any more: a round that fails while
/// the generator still has ids in hand (a prefetch) is retried after a back-off, which a caller
/// in need cuts short.
async fn allocation_loop(mut guard: InFlight) {
    let mut failed_rounds = 0;
    loop {
        let Some(inner) = guard.generator.upgrade() else {
            return;
        };
        if inner.lock_state().closed {
            return; // the guard releases `in_flight`
        }
        let size = inner.next_block_size();
        let outcome = inner.allocate_round(size).await;
        let allocated = outcome.is_ok();
        if !inner.finish_round(outcome) {
            guard.finished = true;
            if allocated && inner.lock_state().rate.is_young() {
                inner.spawn_rate_probe();
            }
            return;
        }
        failed_rounds += 1;
        let pause = backoff(&inner.config, failed_rounds);
        warn!(?pause, "prefetch failed: retrying");
        let wake = inner.wake_allocator.notified();
        let _ = tokio::time::timeout(pause, wake).await;
    }
}

/// Releases `in_flight` when an allocation task is dropped unfinished (its runtime shut down), so
/// that the next caller can start another allocation.
struct InFlight {
    generator: Weak<Inner>,
    finished: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if let Some(inner) = self.generator.upgrade() {
            inner.lock_state().in_flight = false;
            inner.changed.notify_waiters();
        }
    }
}

impl Inner {
    /// Records the outcome of an allocation round and wakes the waiters; returns whether to try
    /// again: the round failed while ids are still served (a prefetch) or callers still wait.
    pub(super) fn finish_round(&self, outcome: Result<Block, Vec<AuthorityFailure>>) -> bool {
        let mut st = self.lock_state();
        let now = Instant::now();
        let retry = match outcome {
            Ok(block) => {
                st.allocations += 1;
                if self.current.load().is_used_up() {
                    self.install(block, &mut st);
                } else {
                    st.pending = Some(block);
                }
                let rate = st.rate.rate();
                self.runway.space(&block, rate, self.config.runway_warning);
                false
            }
            Err(causes) => {
                let error = self.unavailable(causes);
                let final_refusal = is_final(&error);
                st.last_failure = Some((now, error));
                let still_serving = !self.current.load().is_used_up();
                let callers_wait = st.demand_until.is_some_and(|until| until > now);
                (still_serving || callers_wait) && !st.closed && !final_refusal
            }
        };
        let in_hand = self.current.load().remaining() + st.pending.map_or(0, |b| b.len());
        self.runway
            .cover(in_hand, st.rate.rate(), self.config.cover_warning());
        if !retry {
            st.demand_until = None;
        }
        st.in_flight = retry;
        drop(st);
        self.changed.notify_waiters();
        retry
    }
}

impl Inner {
    /// Checks the rate again [`RATE_PROBE`] after a block sized from a short measurement came,
    /// in a task of its own (nothing on the callers' path).
    fn spawn_rate_probe(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let generator = Arc::downgrade(self);
        runtime.spawn(async move {
            tokio::time::sleep(RATE_PROBE).await;
            if let Some(inner) = generator.upgrade() {
                inner.probe_rate();
            }
        });
    }

    /// The young generator's check: when the ids in hand last less than the cover at the rate
    /// measured since the block came (its size was measured over a few milliseconds), the next
    /// block is fetched now, sized for that rate, instead of at the low-water mark.
    fn probe_rate(self: &Arc<Self>) {
        let short = {
            let st = self.lock_state();
            if st.closed || st.in_flight || st.pending.is_some() {
                return;
            }
            let current = self.current.load();
            // Served, not taken: a thread's slice (up to 256 ids) counts as taken at once, which
            // over 100 ms at 1,000 ids/s would read as twice the rate.
            let in_slots: u64 = self.slots.iter().map(|slot| slot.unused()).sum();
            let consumed = (st.consumed_before_current + current.taken()).saturating_sub(in_slots);
            st.rate
                .since_last(Instant::now(), consumed)
                .filter(|rate| *rate > 0.0)
                .is_some_and(|rate| {
                    (current.remaining() as f64) < rate * self.config.cover.as_secs_f64()
                })
        };
        if short {
            debug!(scope = %self.scope, sequence = %self.sequence,
                "the rate outgrew the young generator's block: prefetching");
            self.start_prefetch();
        }
    }
}

/// The error of a caller outside any tokio runtime that would have to wait for a block.
fn no_runtime() -> Error {
    Error::invalid_config("a BlockGenerator needs a tokio runtime to allocate blocks")
}

/// Whether `error` is a refusal that no wait changes: the caller's to fix
/// ([`Recourse::Stop`](crate::Recourse::Stop)), or every authority's last answer was lasting
/// ([`Recourse::Repair`](crate::Recourse::Repair)).
fn is_final(error: &Error) -> bool {
    error.recourse().is_lasting()
}
