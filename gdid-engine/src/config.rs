//! How a [`BlockGenerator`](crate::BlockGenerator) behaves: the settings its builder
//! ([`BlockGeneratorBuilder`](crate::BlockGeneratorBuilder)) collects.

use std::time::Duration;

/// Which order ids come out in across threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdOrder {
    /// Each thread takes a slice of the current block and serves ids from it without touching
    /// shared memory: ids increase per thread (and per block), not across threads. The fast
    /// default.
    #[default]
    PerThread,
    /// One shared cursor per block: ids are issued in one increasing order across the process
    /// (while one authority serves). Each id costs an atomic operation on shared memory.
    Strict,
}

/// Which authority a generator asks first for a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Preference {
    /// In the order they were added (the default): the first that answers serves, the next
    /// ones are its failovers.
    #[default]
    Listed,
    /// The closest authority: the one that has answered fastest (its allocation time,
    /// smoothed over its recent answers), then the next fastest, and so on. Authorities not yet
    /// measured are asked first, once each; and one round in [`PROBE_EVERY`] asks first the
    /// authority asked least recently, so that one that got faster is found again.
    Fastest,
}

/// How often, in allocation rounds, [`Preference::Fastest`] asks the least recently asked
/// authority first.
pub const PROBE_EVERY: u64 = 8;

/// A generator sends at most one hedge ([`GeneratorConfig::hedge_margin`]) per this many blocks
/// allocated, in the long run (the first is sent at once).
pub const HEDGE_EVERY: u32 = 8;

/// The settings of a [`BlockGenerator`](super::BlockGenerator); see the builder methods for each.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    /// How long the ids in hand must last if the store goes down (default 60 s).
    pub cover: Duration,
    /// Fraction of a block left when the next one is fetched in the background (default 0.5);
    /// 0 turns prefetch off.
    pub low_water_mark: f64,
    /// Smallest block requested (default 16).
    pub min_block: u64,
    /// Largest block requested (default 2^31).
    pub max_block: u64,
    /// How long one authority gets to answer an allocation (default 3 s).
    pub allocation_timeout: Duration,
    /// When a request is also sent to the next authority (a hedge): once the authority asked
    /// has not answered within twice its usual latency (smoothed over its answers) plus this
    /// margin, or within 5 × this margin before it ever answered (default 20 ms; `None`: never,
    /// each authority waited for until the allocation timeout). The first block that comes is
    /// served; the other, when it comes, is kept for later or given back. At most one hedge is
    /// in flight per generator, and at most one is sent per [`HEDGE_EVERY`] blocks in the long
    /// run, so that a slow authority does not double the load on the next.
    pub hedge_margin: Option<Duration>,
    /// How long a caller waits for an id at most (default 10 s).
    pub request_timeout: Duration,
    /// First pause after a failure, for the failing authority and for prefetch retries; doubles
    /// up to `max_backoff` (default 100 ms).
    pub min_backoff: Duration,
    /// Longest pause after repeated failures (default 1 s): after an outage, the store is used
    /// again within this long of its coming back (plus one allocation timeout, if a request was
    /// left hanging on it).
    pub max_backoff: Duration,
    /// Id order across threads (default per thread).
    pub order: IdOrder,
    /// Which authority is asked first (default: the first added).
    pub preference: Preference,
    /// Most ids one thread takes from the shared block at a time in per-thread order (default 256).
    pub max_slice: u64,
    /// A warning is logged when the ids in hand last less than this at the recent rate (the
    /// store has not answered for a while); `None`: half the cover (the default).
    pub cover_warning: Option<Duration>,
    /// A warning is logged when the sequence's counter space lasts less than this at the recent
    /// rate (default 365 days).
    pub runway_warning: Duration,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            cover: Duration::from_secs(60),
            low_water_mark: 0.5,
            min_block: 16,
            max_block: 1 << 31,
            allocation_timeout: Duration::from_secs(3),
            hedge_margin: Some(Duration::from_millis(20)),
            request_timeout: Duration::from_secs(10),
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            order: IdOrder::PerThread,
            preference: Preference::Listed,
            max_slice: 256,
            cover_warning: None,
            runway_warning: Duration::from_secs(365 * 24 * 3600),
        }
    }
}

impl GeneratorConfig {
    /// The cover under which a warning is logged: [`cover_warning`](Self::cover_warning), or
    /// half the cover.
    pub fn cover_warning(&self) -> Duration {
        self.cover_warning.unwrap_or(self.cover / 2)
    }

    /// Checks the settings against each other.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if !(0.0..1.0).contains(&self.low_water_mark) {
            return Err(format!(
                "low_water_mark {} is not in 0.0..1.0",
                self.low_water_mark
            ));
        }
        if self.min_block == 0 || self.min_block > self.max_block {
            return Err(format!(
                "block sizes min {} and max {} must satisfy 1 <= min <= max",
                self.min_block, self.max_block
            ));
        }
        if self.max_block > gdid_core::COUNTER_MAX {
            return Err(format!("max block {} is above COUNTER_MAX", self.max_block));
        }
        if self.hedge_margin.is_some_and(|margin| margin.is_zero()) {
            return Err("a hedge margin must be above zero (None turns hedging off)".into());
        }
        if self.allocation_timeout.is_zero() || self.request_timeout.is_zero() {
            return Err("timeouts must be above zero".into());
        }
        if self.min_backoff > self.max_backoff {
            return Err("min_backoff must not exceed max_backoff".into());
        }
        if self.max_slice == 0 {
            return Err("max_slice must be at least 1".into());
        }
        Ok(())
    }
}
