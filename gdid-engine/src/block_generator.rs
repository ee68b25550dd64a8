//! [`BlockGenerator`]: serves GDIDs from blocks reserved at authorities, without making callers
//! wait on the store.
//!
//! - **Fast path**: a thread serves ids from its slice of the current block ([`Slot`]).
//! - **Slice refill**: one compare-and-swap on the shared [`Segment`]; the take that passes the
//!   low-water mark starts a background prefetch.
//! - **Block refill**: single flight. At most one allocation is in flight per generator, run as a
//!   spawned task so that a caller giving up cannot cancel it (and waste its block); callers that
//!   need a block wait for that one. A prefetched block waits in `pending` until the current one
//!   is used up, so no block is dropped.
//! - **Failover**: authorities are tried in order; a failing one is skipped for a back-off that
//!   doubles with each failure, and probed again after it. A failed prefetch is retried with
//!   back-off for as long as the generator still serves ids.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::{Instrument, info_span};

use super::authority::{Block, DynAuthority};
use super::config::{GeneratorConfig, IdOrder};
use super::generator_error::{Error, FailureCause};
use super::id_generator::{IdBatch, IdGenerator};
use super::per_thread::{Current, Key, PerThread};
use super::segment::{Segment, Slot};
use super::sizing::RateEstimator;
use super::sync::{Mutex, MutexGuard};
use gdid_core::Gdid;

pub use builder::BlockGeneratorBuilder;

mod builder;
mod close;
mod failover;
mod handoff;
mod refill;
mod request;
mod runway;
mod stats;

pub use stats::{AuthorityStats, Stats};

/// Serves GDIDs of one (scope, sequence) from blocks reserved at up to 16 authorities.
///
/// Cheap to clone: clones share the blocks. Needs a tokio runtime (allocations run as tasks).
///
/// ```
/// use gdid_engine::{BlockGenerator, MemoryAuthority};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), gdid_engine::Error> {
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
    /// `inner.slots.key()`, carried here so that the fast path finds this thread's slot without
    /// reading `inner`: a thread serving thousands of generators in turn touches its own slots,
    /// not their lines.
    key: Key,
}

struct Inner {
    /// Shared with the tasks of requests for blocks (cloned per request, not copied).
    scope: Arc<str>,
    sequence: Arc<str>,
    authorities: Vec<Arc<dyn DynAuthority>>,
    config: GeneratorConfig,
    current: Current<Segment>,
    slots: PerThread<Slot>,
    state: Mutex<State>,
    /// A block was installed or an allocation round failed.
    changed: Notify,
    /// A caller needs a block now: cut the allocator's back-off short.
    wake_allocator: Notify,
    /// Metrics and warnings.
    runway: runway::Runway,
}

/// Everything the slow paths share, behind one short-held lock.
struct State {
    pending: Option<Block>,
    in_flight: bool,
    /// [`BlockGenerator::close`] was called: no more allocations.
    closed: bool,
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
    /// Allocation rounds started (`Preference::Fastest` probes every `PROBE_EVERY`th).
    rounds: u64,
    allocations: u64,
    dedicated_allocations: u64,
    /// Hedges that may be sent now ([`HEDGE_EVERY`](crate::HEDGE_EVERY)): one per hedge, an
    /// eighth earned per block, at most one in hand.
    hedge_credit: f64,
    /// Hedges sent.
    hedges: u64,
    /// Ids of late blocks that could be neither kept nor given back.
    hedged_ids_wasted: u64,
}

impl State {
    /// A block came: an eighth of a hedge earned, up to one.
    fn earn_hedge(&mut self) {
        self.hedge_credit =
            (self.hedge_credit + 1.0 / f64::from(crate::config::HEDGE_EVERY)).min(1.0);
    }
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
    /// How long its allocations take, smoothed (`Preference::Fastest`); `None` before the first.
    latency: Option<Duration>,
    /// How long its answers with a block take, smoothed (failures left out): when a request
    /// to it is hedged.
    usual_latency: Option<Duration>,
    /// When it was last asked for a block.
    last_asked: Option<Instant>,
    /// Its requests not answered yet (a hung one lives on until the allocation timeout).
    requests_out: u32,
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
        let numbers: Vec<u8> = builder.authorities.iter().map(|a| a.number()).collect();
        let runway = runway::Runway::new(&builder.scope, &builder.sequence, &numbers);
        let slots = PerThread::new();
        BlockGenerator {
            key: slots.key(),
            inner: Arc::new(Inner {
                scope: builder.scope.into(),
                sequence: builder.sequence.into(),
                authorities: builder.authorities,
                config: builder.config,
                current: Current::new(Segment::empty()),
                slots,
                state: Mutex::new(State {
                    pending: None,
                    in_flight: false,
                    closed: false,
                    demand_until: None,
                    last_round_started: None,
                    last_failure: None,
                    health,
                    rate: RateEstimator::default(),
                    consumed_before_current: 0,
                    block_size: min_block,
                    rounds: 0,
                    allocations: 0,
                    dedicated_allocations: 0,
                    hedge_credit: 1.0,
                    hedges: 0,
                    hedged_ids_wasted: 0,
                }),
                changed: Notify::new(),
                wake_allocator: Notify::new(),
                runway,
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
    /// [`ErrorDetail::Unavailable`](crate::ErrorDetail::Unavailable) (every authority tried failed,
    /// each cause named) or [`ErrorDetail::Timeout`](crate::ErrorDetail::Timeout).
    #[inline]
    pub fn next_id(&self) -> impl std::future::Future<Output = Result<Gdid, Error>> + Send + '_ {
        // A future of its own (handoff.rs): small enough to inline into the caller.
        handoff::NextId::new(self)
    }

    /// One new id from what is in hand, synchronously: `None` when none is (the current block
    /// is used up), when the caller should `next_id().await` instead. Never waits and never
    /// allocates itself, but like `next_id` it starts the background prefetch at the low-water
    /// mark (on the current tokio runtime, if there is one).
    ///
    /// ```
    /// use gdid_engine::{BlockGenerator, MemoryAuthority};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), gdid_engine::Error> {
    /// let ids = BlockGenerator::builder("shop", "order")
    ///     .authority(MemoryAuthority::new(1))
    ///     .build()?;
    /// assert_eq!(ids.try_next_id(), None); // no block yet
    /// let first = ids.next_id().await?;
    /// let second = ids.try_next_id().expect("the block is in hand");
    /// assert!(first < second);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Option<Gdid> {
        self.inner.try_next_id_keyed(self.key)
    }

    /// `n` new ids, as runs of consecutive ids (several runs when the ids span blocks).
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id);
    /// [`ErrorDetail::InvalidCount`](crate::ErrorDetail::InvalidCount) for `n` = 0 or above 2^60.
    /// Ids already taken for a call that fails are not used (a gap).
    pub async fn next_ids(&self, n: u64) -> Result<IdBatch<Gdid>, Error> {
        check_count(n)?;
        let inner = &self.inner;
        let mut batch = IdBatch::gdids();
        let mut left = n;
        if inner.config.order == IdOrder::PerThread {
            // `get_or`, not `get`: a thread without a slot may be given one with ids left (that
            // of a thread that exited), to serve before newer ids, or its ids would not increase.
            if let Some(taken) = inner.slots.get_or(Slot::default).take_many(left) {
                left -= taken.len();
                batch.push_run(taken.first(), taken.len());
            }
        }
        let deadline = Instant::now() + inner.config.request_timeout;
        while left > 0 {
            match inner.take_up_to(left) {
                Some(taken) => {
                    left -= taken.len();
                    batch.push_run(taken.first(), taken.len());
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
    /// As [`next_id`](Self::next_id);
    /// [`ErrorDetail::InvalidCount`](crate::ErrorDetail::InvalidCount) for `n` = 0 or above 2^60.
    pub async fn next_block(&self, n: u64) -> Result<Block, Error> {
        check_count(n)?;
        let inner = &self.inner;
        if let Some(taken) = inner.current.load().take_exact(n) {
            return taken
                .to_block()
                .map_err(|e| Error::corrupt(format!("ids taken from the current block: {e}")));
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

    #[inline]
    fn next_id(&self) -> impl std::future::Future<Output = Result<Gdid, Error>> + Send {
        BlockGenerator::next_id(self)
    }

    fn next_ids(
        &self,
        n: u64,
    ) -> impl std::future::Future<Output = Result<IdBatch<Gdid>, Error>> + Send {
        BlockGenerator::next_ids(self, n)
    }

    fn close(&self) -> impl std::future::Future<Output = Result<u64, Error>> + Send {
        BlockGenerator::close(self)
    }
}

/// A call takes what one block can hold: the one block-size rule ([`Block::check_size`]).
fn check_count(n: u64) -> Result<(), Error> {
    Block::check_size(n).map(drop).map_err(Error::from)
}

impl Inner {
    fn lock_state(&self) -> MutexGuard<'_, State> {
        // Every critical section leaves the state consistent before anything can panic in it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
