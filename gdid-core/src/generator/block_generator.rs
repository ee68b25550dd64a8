//! [`BlockGenerator`]: serves GDIDs from blocks reserved at authorities, without making callers
//! wait on the store.
//!
//! - **Fast path**: a thread serves ids from its slice of the current block ([`Slot`]).
//! - **Slice refill**: one compare-and-swap on the shared [`Segment`]; the claim that passes the
//!   low-water mark starts a background prefetch.
//! - **Block refill**: single flight. At most one allocation is in flight per generator, run as a
//!   spawned task so that a caller giving up cannot cancel it (and waste its block); callers that
//!   need a block wait for that one. A prefetched block waits in `pending` until the current one
//!   is used up, so no block is dropped.
//! - **Failover**: authorities are tried in order; a failing one is skipped for a back-off that
//!   doubles with each failure, and probed again after it. A failed prefetch is retried with
//!   back-off for as long as the generator still serves ids.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use thread_local::ThreadLocal;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::{Instrument, debug, info, info_span, warn};

use super::authority::{Block, DynAuthority};
use super::config::{BlockGeneratorBuilder, GeneratorConfig, IdOrder};
use super::error::{AuthorityFailure, Error, FailureCause};
use super::id_generator::{IdBatch, IdGenerator};
use super::segment::{Claim, Segment, Slot};
use super::sizing::{RateEstimator, block_size};
use crate::{COUNTER_MAX, Gdid};

/// Serves GDIDs of one (scope, sequence) from blocks reserved at up to 16 authorities.
///
/// Cheap to clone: clones share the blocks. Needs a tokio runtime (allocations run as tasks).
///
/// ```
/// use gdid_core::generator::{BlockGenerator, MemoryAuthority};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), gdid_core::generator::Error> {
/// let ids = BlockGenerator::builder("shop", "order")
///     .authority(MemoryAuthority::new(1))
///     .authority(MemoryAuthority::new(2)) // used when authority 1 fails
///     .build()?;
/// let a = ids.next_id().await?;
/// let b = ids.next_id().await?;
/// assert!(a < b);
/// let batch = ids.next_ids(1000).await?;
/// assert_eq!(batch.len(), 1000);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BlockGenerator {
    inner: Arc<Inner>,
}

struct Inner {
    scope: String,
    sequence: String,
    authorities: Vec<Arc<dyn DynAuthority>>,
    config: GeneratorConfig,
    current: ArcSwap<Segment>,
    slots: ThreadLocal<Slot>,
    state: Mutex<State>,
    /// A block was installed or an allocation round failed.
    changed: Notify,
    /// A caller needs a block now: cut the allocator's back-off short.
    wake_allocator: Notify,
}

/// Everything the slow paths share, behind one short-held lock.
struct State {
    pending: Option<Block>,
    in_flight: bool,
    /// Until when callers wait for a block: the allocator keeps retrying until then.
    demand_until: Option<Instant>,
    /// When the latest allocation round started.
    last_round_started: Option<Instant>,
    /// The latest failed round, and when it ended.
    last_failure: Option<(Instant, Error)>,
    health: Vec<Health>,
    rate: RateEstimator,
    /// Counters of the segments that were used up and replaced.
    consumed_before_current: u64,
    block_size: u64,
    allocations: u64,
    dedicated_allocations: u64,
}

/// What the generator knows of one authority.
#[derive(Default)]
struct Health {
    failures: u64,
    consecutive_failures: u32,
    backoff_until: Option<Instant>,
    last_cause: Option<FailureCause>,
    /// The id after the last block it gave: a new block must not start before it.
    next_expected: Option<(u32, u64)>,
}

impl BlockGenerator {
    /// Starts building a generator of (scope, sequence) ids.
    pub fn builder(scope: &str, sequence: &str) -> BlockGeneratorBuilder {
        BlockGeneratorBuilder::new(scope, sequence)
    }

    pub(crate) fn from_builder(builder: BlockGeneratorBuilder) -> Self {
        let health = builder
            .authorities
            .iter()
            .map(|_| Health::default())
            .collect();
        let min_block = builder.config.min_block;
        BlockGenerator {
            inner: Arc::new(Inner {
                scope: builder.scope,
                sequence: builder.sequence,
                authorities: builder.authorities,
                config: builder.config,
                current: ArcSwap::from_pointee(Segment::empty()),
                slots: ThreadLocal::new(),
                state: Mutex::new(State {
                    pending: None,
                    in_flight: false,
                    demand_until: None,
                    last_round_started: None,
                    last_failure: None,
                    health,
                    rate: RateEstimator::default(),
                    consumed_before_current: 0,
                    block_size: min_block,
                    allocations: 0,
                    dedicated_allocations: 0,
                }),
                changed: Notify::new(),
                wake_allocator: Notify::new(),
            }),
        }
    }

    /// The scope.
    pub fn scope(&self) -> &str {
        &self.inner.scope
    }

    /// The sequence.
    pub fn sequence(&self) -> &str {
        &self.inner.sequence
    }

    /// The settings.
    pub fn config(&self) -> &GeneratorConfig {
        &self.inner.config
    }

    /// One new id. From memory in the steady state; waits for a block only when none is in hand.
    ///
    /// # Errors
    ///
    /// When no block is in hand and none can be had within the request timeout:
    /// [`Error::Unavailable`] (every authority tried failed, each cause named) or
    /// [`Error::Timeout`].
    #[inline]
    pub async fn next_id(&self) -> Result<Gdid, Error> {
        if self.inner.config.order == IdOrder::PerThread {
            if let Some(id) = self.inner.slots.get().and_then(Slot::take) {
                return Ok(id);
            }
        }
        self.inner.next_id_slow().await
    }

    /// `n` new ids, as runs of consecutive ids (several runs when the ids span blocks).
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id); [`Error::InvalidCount`] for `n` = 0 or above 2^60. Ids
    /// already taken for a call that fails are not used (a gap).
    pub async fn next_ids(&self, n: u64) -> Result<IdBatch<Gdid>, Error> {
        check_count(n)?;
        let inner = &self.inner;
        let mut batch = IdBatch::gdids();
        let mut left = n;
        if inner.config.order == IdOrder::PerThread {
            if let Some(claim) = inner.slots.get().and_then(|slot| slot.take_many(left)) {
                left -= claim.len();
                batch.push_run(claim.first(), claim.len());
            }
        }
        let deadline = Instant::now() + inner.config.request_timeout;
        while left > 0 {
            match inner.claim(left) {
                Some(claim) => {
                    left -= claim.len();
                    batch.push_run(claim.first(), claim.len());
                }
                None => inner.wait_for_block(deadline).await?,
            }
        }
        Ok(batch)
    }

    /// Exactly `n` consecutive ids, as one block: from the current block when it has `n` left,
    /// otherwise from an allocation of its own (which leaves the cached blocks alone).
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id); [`Error::InvalidCount`] for `n` = 0 or above 2^60.
    pub async fn next_block(&self, n: u64) -> Result<Block, Error> {
        check_count(n)?;
        let inner = &self.inner;
        if let Some(claim) = inner.current.load().claim_exact(n) {
            return Ok(claim.to_block());
        }
        let started = Instant::now();
        let round = inner
            .allocate_round(n)
            .instrument(info_span!("gdid.dedicated_block", scope = %inner.scope, sequence = %inner.sequence, size = n));
        match tokio::time::timeout(inner.config.request_timeout, round).await {
            Ok(Ok(block)) => {
                inner.lock_state().dedicated_allocations += 1;
                Ok(block)
            }
            Ok(Err(causes)) => Err(inner.unavailable(causes)),
            Err(_) => Err(inner.timeout_error(&inner.lock_state(), started.elapsed())),
        }
    }

    /// A snapshot of what the generator has done and holds.
    pub fn stats(&self) -> Stats {
        let inner = &self.inner;
        let current = inner.current.load();
        let in_slots: u64 = inner.slots.iter().map(Slot::unused).sum();
        let st = inner.lock_state();
        let claimed = st.consumed_before_current + current.claimed();
        let pending = st.pending.map_or(0, |b| b.len);
        let in_hand = current.remaining() + pending + in_slots;
        let rate = st.rate.rate();
        Stats {
            issued: claimed.saturating_sub(in_slots),
            allocations: st.allocations,
            dedicated_allocations: st.dedicated_allocations,
            authorities: inner
                .authorities
                .iter()
                .zip(&st.health)
                .map(|(a, h)| AuthorityStats {
                    authority: a.number(),
                    label: a.label(),
                    failures: h.failures,
                    backing_off: h.backoff_until.is_some_and(|t| t > Instant::now()),
                })
                .collect(),
            block_size: st.block_size,
            ids_in_hand: in_hand,
            rate,
            cover_left: rate
                .filter(|r| *r > 0.0)
                .map(|r| Duration::from_secs_f64(in_hand as f64 / r)),
        }
    }
}

impl std::fmt::Debug for BlockGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockGenerator")
            .field("scope", &self.inner.scope)
            .field("sequence", &self.inner.sequence)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl IdGenerator for BlockGenerator {
    type Id = Gdid;

    fn next_id(&self) -> impl std::future::Future<Output = Result<Gdid, Error>> + Send {
        BlockGenerator::next_id(self)
    }

    fn next_ids(
        &self,
        n: u64,
    ) -> impl std::future::Future<Output = Result<IdBatch<Gdid>, Error>> + Send {
        BlockGenerator::next_ids(self, n)
    }
}

fn check_count(n: u64) -> Result<(), Error> {
    if n == 0 {
        return Err(Error::InvalidCount {
            count: n,
            reason: "ask for at least one id",
        });
    }
    if n > COUNTER_MAX + 1 {
        return Err(Error::InvalidCount {
            count: n,
            reason: "at most 2^60 ids in one call",
        });
    }
    Ok(())
}

impl Inner {
    fn lock_state(&self) -> MutexGuard<'_, State> {
        // Every critical section leaves the state consistent before anything can panic in it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims up to `want` ids from the current segment, starting a prefetch when the claim
    /// passes the low-water mark.
    fn claim(self: &Arc<Self>, want: u64) -> Option<Claim> {
        let segment = self.current.load();
        let claim = segment.claim(want)?;
        if segment.crossed_low_water(&claim) {
            self.start_prefetch();
        }
        Some(claim)
    }

    async fn next_id_slow(self: &Arc<Self>) -> Result<Gdid, Error> {
        let deadline = Instant::now() + self.config.request_timeout;
        loop {
            match self.config.order {
                IdOrder::PerThread => {
                    let slice = self.current.load().slice;
                    if let Some(claim) = self.claim(slice) {
                        // No await between the claim and the fill: the task cannot move to
                        // another thread in between.
                        let slot = self.slots.get_or(Slot::default);
                        slot.fill(&claim);
                        return Ok(slot.take().unwrap_or_else(|| claim.first()));
                    }
                }
                IdOrder::Strict => {
                    if let Some(claim) = self.claim(1) {
                        return Ok(claim.first());
                    }
                }
            }
            self.wait_for_block(deadline).await?;
        }
    }

    /// Returns once the current segment may have ids again (a block was installed, or a round
    /// ended); at `deadline`, the error of the latest failed round of this request, or a timeout.
    async fn wait_for_block(self: &Arc<Self>, deadline: Instant) -> Result<(), Error> {
        let request_started = deadline - self.config.request_timeout;
        let mut notified = std::pin::pin!(self.changed.notified());
        {
            let mut st = self.lock_state();
            if !self.current.load().is_used_up() {
                return Ok(());
            }
            if let Some(block) = st.pending.take() {
                self.install(block, &mut st);
                return Ok(());
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
        if tokio::time::timeout_at(deadline, notified).await.is_ok() {
            return Ok(());
        }
        let st = self.lock_state();
        match &st.last_failure {
            Some((at, error)) if *at >= request_started => Err(error.clone()),
            _ => Err(self.timeout_error(&st, deadline - request_started)),
        }
    }

    /// Makes `block` the current segment. The caller holds the state lock and has checked that
    /// the current segment is used up.
    fn install(&self, block: Block, st: &mut State) {
        let old = self
            .current
            .swap(Arc::new(Segment::new(block, &self.config)));
        st.consumed_before_current += old.claimed();
        // The rate is measured while there are ids to take: from now.
        st.rate.restart(Instant::now(), st.consumed_before_current);
        debug!(scope = %self.scope, sequence = %self.sequence, %block, "block installed");
    }

    fn start_prefetch(self: &Arc<Self>) {
        let mut st = self.lock_state();
        if st.in_flight || st.pending.is_some() {
            return;
        }
        st.in_flight = true;
        debug!(scope = %self.scope, sequence = %self.sequence, "low-water mark passed: prefetching");
        self.spawn_allocation(&mut st);
    }

    /// Runs the allocation loop as a task. The caller holds the state lock and set `in_flight`.
    fn spawn_allocation(self: &Arc<Self>, st: &mut State) {
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
                st.last_failure = Some((
                    Instant::now(),
                    Error::InvalidConfig {
                        reason: "a BlockGenerator needs a tokio runtime to allocate blocks".into(),
                    },
                ));
            }
        }
    }

    /// The size of the next block, from the rate observed since the previous allocation.
    fn next_block_size(&self) -> u64 {
        let mut st = self.lock_state();
        let consumed = st.consumed_before_current + self.current.load().claimed();
        let rate = st.rate.observe(Instant::now(), consumed);
        let c = &self.config;
        let size = rate.map_or(c.min_block, |r| {
            block_size(r, c.cover, c.low_water_mark, c.min_block, c.max_block)
        });
        st.block_size = size;
        size
    }

    /// One pass over the authorities in preference order (skipping those backing off, unless all
    /// are): the first valid block, or every authority's cause.
    async fn allocate_round(&self, size: u64) -> Result<Block, Vec<AuthorityFailure>> {
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
            let answer = tokio::time::timeout(
                self.config.allocation_timeout,
                authority.allocate_boxed(&self.scope, &self.sequence, size),
            )
            .await;
            let cause = match answer {
                Ok(Ok(block)) => match self.accept(i, block, size, floor) {
                    Ok(block) => return Ok(block),
                    Err(cause) => cause,
                },
                Ok(Err(error)) => FailureCause::Error(Arc::new(error)),
                Err(_) => FailureCause::TimedOut(self.config.allocation_timeout),
            };
            let fatal = matches!(&cause, FailureCause::Error(e) if !e.is_retryable());
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
    fn accept(
        &self,
        i: usize,
        block: Block,
        size: u64,
        floor: Option<(u32, u64)>,
    ) -> Result<Block, FailureCause> {
        let number = self.authorities[i].number();
        let invalid = |reason: String| {
            Err(FailureCause::Error(Arc::new(
                super::error::AuthorityError::InvalidBlock(reason),
            )))
        };
        let checked = match Block::new(block.era, block.authority, block.start, block.len) {
            Ok(b) => b,
            Err(e) => return Err(FailureCause::Error(Arc::new(e))),
        };
        if checked.authority != number {
            return invalid(format!(
                "block {checked} carries authority {} but came from authority {number}",
                checked.authority
            ));
        }
        if checked.len != size {
            return invalid(format!(
                "block {checked} holds {} ids, {size} were asked for",
                checked.len
            ));
        }
        if let Some((era, counter)) = floor {
            if (checked.era, checked.start) < (era, counter) {
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
        let end = (checked.era, checked.end());
        health.next_expected = Some(health.next_expected.map_or(end, |seen| seen.max(end)));
        health.consecutive_failures = 0;
        health.backoff_until = None;
        info!(authority = number, block = %checked, "block allocated");
        Ok(checked)
    }

    fn record_failure(&self, i: usize, cause: &FailureCause) {
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

    fn unavailable(&self, causes: Vec<AuthorityFailure>) -> Error {
        Error::Unavailable {
            scope: self.scope.clone(),
            sequence: self.sequence.clone(),
            causes,
        }
    }

    fn timeout_error(&self, st: &State, waited: Duration) -> Error {
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
fn backoff(config: &GeneratorConfig, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(30);
    config
        .min_backoff
        .saturating_mul(1 << doublings)
        .min(config.max_backoff)
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
        let size = inner.next_block_size();
        let outcome = inner.allocate_round(size).await;
        if !inner.finish_round(outcome) {
            guard.finished = true;
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
    fn finish_round(&self, outcome: Result<Block, Vec<AuthorityFailure>>) -> bool {
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
                false
            }
            Err(causes) => {
                st.last_failure = Some((now, self.unavailable(causes)));
                let still_serving = !self.current.load().is_used_up();
                let callers_wait = st.demand_until.is_some_and(|until| until > now);
                still_serving || callers_wait
            }
        };
        if !retry {
            st.demand_until = None;
        }
        st.in_flight = retry;
        drop(st);
        self.changed.notify_waiters();
        retry
    }
}

/// A snapshot of a generator, from [`BlockGenerator::stats`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Ids handed to callers (approximate while threads are serving).
    pub issued: u64,
    /// Blocks allocated for the cache.
    pub allocations: u64,
    /// Blocks allocated for [`BlockGenerator::next_block`] calls the cache could not serve.
    pub dedicated_allocations: u64,
    /// Per authority, in preference order.
    pub authorities: Vec<AuthorityStats>,
    /// The size of the latest block requested.
    pub block_size: u64,
    /// Ids reserved and not handed out yet: the current block, the prefetched one, the threads'
    /// slices.
    pub ids_in_hand: u64,
    /// The consumption rate measured between allocations, ids per second.
    pub rate: Option<f64>,
    /// How long the ids in hand last at that rate: the outage the generator rides out now.
    pub cover_left: Option<Duration>,
}

/// Per-authority figures in [`Stats`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorityStats {
    /// The authority number.
    pub authority: u8,
    /// Its label.
    pub label: String,
    /// Failed allocations so far.
    pub failures: u64,
    /// Whether it is being skipped now after failures.
    pub backing_off: bool,
}
