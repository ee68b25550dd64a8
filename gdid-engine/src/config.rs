//! How a [`BlockGenerator`](super::BlockGenerator) behaves, and its builder.

use std::sync::Arc;
use std::time::Duration;

use super::authority::{Authority, DynAuthority};
use super::generator_error::Error;

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

/// Builds a [`BlockGenerator`](super::BlockGenerator): the scope and sequence, the authorities in
/// preference order, and the settings. The same settings build a
/// [`GdidProvider`](super::GdidProvider) (as [`GdidProviderBuilder`](super::GdidProviderBuilder),
/// whose scope and sequence are those of each generator it makes).
pub struct BlockGeneratorBuilder<T = super::BlockGenerator> {
    pub(crate) scope: String,
    pub(crate) sequence: String,
    pub(crate) authorities: Vec<Arc<dyn DynAuthority>>,
    pub(crate) config: GeneratorConfig,
    built: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for BlockGeneratorBuilder<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockGeneratorBuilder")
            .field("scope", &self.scope)
            .field("sequence", &self.sequence)
            .field(
                "authorities",
                &self
                    .authorities
                    .iter()
                    .map(|a| (a.number(), a.label()))
                    .collect::<Vec<_>>(),
            )
            .field("config", &self.config)
            .finish()
    }
}

impl<T> BlockGeneratorBuilder<T> {
    pub(crate) fn new(scope: &str, sequence: &str) -> Self {
        BlockGeneratorBuilder {
            scope: scope.to_owned(),
            sequence: sequence.to_owned(),
            authorities: Vec::new(),
            config: GeneratorConfig::default(),
            built: std::marker::PhantomData,
        }
    }

    /// Adds an authority; authorities are tried in the order they are added.
    pub fn authority(mut self, authority: impl Authority) -> Self {
        self.authorities.push(Arc::new(authority));
        self
    }

    /// Adds an authority already shared (by several generators, say).
    pub fn shared_authority(mut self, authority: Arc<dyn DynAuthority>) -> Self {
        self.authorities.push(authority);
        self
    }

    /// Replaces every setting.
    pub fn config(mut self, config: GeneratorConfig) -> Self {
        self.config = config;
        self
    }

    /// How long the ids in hand must last if the store goes down.
    pub fn cover(self, cover: Duration) -> Self {
        self.with(|c| c.cover = cover)
    }

    /// Logs a warning when the ids in hand last less than `cover` at the recent rate (default:
    /// half the configured cover).
    pub fn cover_warning(self, cover: Duration) -> Self {
        self.with(|c| c.cover_warning = Some(cover))
    }

    /// Logs a warning when the sequence's counter space lasts less than `left` at the recent
    /// rate (default 365 days).
    pub fn runway_warning(self, left: Duration) -> Self {
        self.with(|c| c.runway_warning = left)
    }

    /// Bounds of the dynamic block size.
    pub fn block_size(self, min: u64, max: u64) -> Self {
        self.with(|c| (c.min_block, c.max_block) = (min, max))
    }

    /// Lowers the largest block to at most `max` (and the smallest with it, if above): for an
    /// authority that takes no larger block, such as a server started with `--max-block`.
    pub fn block_size_at_most(self, max: u64) -> Self {
        self.with(|c| {
            c.max_block = c.max_block.min(max);
            c.min_block = c.min_block.min(c.max_block);
        })
    }

    /// Always requests blocks of `size` ids (no dynamic sizing).
    pub fn fixed_block_size(self, size: u64) -> Self {
        self.block_size(size, size)
    }

    /// Fraction of a block left when the next one is fetched in the background.
    pub fn low_water_mark(self, fraction: f64) -> Self {
        self.with(|c| c.low_water_mark = fraction)
    }

    /// No background prefetch: a block is fetched when the previous one is used up.
    pub fn no_prefetch(self) -> Self {
        self.low_water_mark(0.0)
    }

    /// How long one authority gets to answer an allocation.
    pub fn allocation_timeout(self, timeout: Duration) -> Self {
        self.with(|c| c.allocation_timeout = timeout)
    }

    /// How long a caller waits for an id at most.
    pub fn request_timeout(self, timeout: Duration) -> Self {
        self.with(|c| c.request_timeout = timeout)
    }

    /// Pauses after failures: the first, and the longest.
    pub fn backoff(self, min: Duration, max: Duration) -> Self {
        self.with(|c| (c.min_backoff, c.max_backoff) = (min, max))
    }

    /// Id order across threads.
    pub fn order(self, order: IdOrder) -> Self {
        self.with(|c| c.order = order)
    }

    /// Asks the authority that answers fastest first, then the next fastest, still probing the
    /// others ([`Preference::Fastest`]): for authorities at different distances, such as
    /// servers in other data centres.
    pub fn prefer_fastest(self) -> Self {
        self.with(|c| c.preference = Preference::Fastest)
    }

    /// The builder with one setting changed by `set`.
    fn with(mut self, set: impl FnOnce(&mut GeneratorConfig)) -> Self {
        set(&mut self.config);
        self
    }
}

impl BlockGeneratorBuilder {
    /// Checks everything and builds the generator. Allocation starts with the first id.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidName`] for a bad scope or sequence; [`Error::InvalidConfig`] for no
    /// authority, more than 16, two with the same number, or settings that contradict each other.
    pub fn build(self) -> Result<super::BlockGenerator, Error> {
        use super::authority::validate_names;

        validate_names(&self.scope, &self.sequence)?;
        let invalid = |reason: String| Err(Error::InvalidConfig { reason });
        if self.authorities.is_empty() {
            return invalid("no authority: add at least one".into());
        }
        if self.authorities.len() > 16 {
            return invalid(format!(
                "{} authorities: at most 16",
                self.authorities.len()
            ));
        }
        let mut seen = [false; 16];
        for authority in &self.authorities {
            let number = usize::from(authority.number());
            if number >= seen.len() {
                return invalid(format!("authority number {number} is above 15"));
            }
            if std::mem::replace(&mut seen[number], true) {
                return invalid(format!("authority number {number} is given twice"));
            }
        }
        if let Err(reason) = self.config.validate() {
            return invalid(reason);
        }
        Ok(super::BlockGenerator::from_builder(self))
    }
}
