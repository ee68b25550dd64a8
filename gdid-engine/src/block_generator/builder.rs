//! [`BlockGeneratorBuilder`]: the scope and sequence, the authorities and the settings of a
//! generator (or of a provider's generators), checked when it is built.

use std::sync::Arc;
use std::time::Duration;

use crate::authority::{Authority, DynAuthority};
use crate::block_generator::BlockGenerator;
use crate::config::{GeneratorConfig, IdOrder, Preference};
use crate::generator_error::Error;

/// Builds a [`BlockGenerator`](BlockGenerator): the scope and sequence, the authorities in
/// preference order, and the settings. The same settings build a
/// [`GdidProvider`](crate::GdidProvider) (as [`GdidProviderBuilder`](crate::GdidProviderBuilder),
/// whose scope and sequence are those of each generator it makes).
pub struct BlockGeneratorBuilder<T = BlockGenerator> {
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

    /// Asks the next authority as well when the one asked has not answered within twice its
    /// usual latency plus `margin` (default 20 ms), so that a hung authority does not stall the
    /// callers for the allocation timeout; `None` turns hedging off
    /// ([`GeneratorConfig::hedge_margin`]).
    pub fn hedge_margin(self, margin: Option<Duration>) -> Self {
        self.with(|c| c.hedge_margin = margin)
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
    /// [`ErrorDetail::InvalidName`](crate::ErrorDetail::InvalidName) for a bad scope or sequence;
    /// [`ErrorDetail::InvalidConfig`](crate::ErrorDetail::InvalidConfig) for no authority, more
    /// than 16, two with the same number, or settings that contradict each other.
    pub fn build(self) -> Result<BlockGenerator, Error> {
        use crate::authority::validate_names;

        validate_names(&self.scope, &self.sequence)?;
        let invalid = |reason: String| Err(Error::invalid_config(reason));
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
        Ok(BlockGenerator::from_builder(self))
    }
}
