//! [`Generator`]: any id generator, called without async; [`BlockGeneratorBuilder`].

use std::fmt;
use std::sync::Arc;

use gdid_engine::{Error, IdBatch, IdGenerator};

use super::runtime::{InRuntime, Runtime};

/// An id generator called without async: each call waits for its ids on the calling thread,
/// while the store's runtime goes on with the background work (a [`gdid::BlockGenerator`]'s
/// prefetch of the next block) between calls. Cheap to clone; share it among threads.
///
/// A GDID generator serves each thread from a slice of its block, as in async code: ids
/// increase per thread (and, with `IdOrder::Strict`, across threads).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = gdid::blocking::Store::open("memory:")?;
/// let orders = store.block_generator("shop", "orders").build()?;
/// let first = orders.next_id()?;
/// let batch = orders.next_ids(100)?;
/// assert!(batch.iter().all(|id| id > first));
/// # Ok(())
/// # }
/// ```
///
/// [`gdid::BlockGenerator`]: crate::BlockGenerator
pub struct Generator<G = crate::BlockGenerator> {
    ids: InRuntime<G>,
}

/// A blocking GDID generator: [`Store::block_generator`](super::Store::block_generator).
pub type BlockGenerator = Generator<crate::BlockGenerator>;

impl<G: IdGenerator> Generator<G> {
    pub(crate) fn new(ids: G, runtime: Arc<Runtime>) -> Self {
        Generator {
            ids: InRuntime::new(ids, runtime),
        }
    }

    /// One new id.
    ///
    /// # Errors
    ///
    /// As the generator's async `next_id` (for a GDID generator: no block could be had within
    /// the request timeout).
    ///
    /// # Panics
    ///
    /// On a thread of a blocking store's runtime (see [`Store::block_on`]).
    ///
    /// [`Store::block_on`]: super::Store::block_on
    pub fn next_id(&self) -> Result<G::Id, Error> {
        self.ids.runtime().block_on(self.ids.get().next_id())
    }

    /// `n` new ids, as runs of consecutive ids.
    ///
    /// # Errors
    ///
    /// As the generator's async `next_ids`.
    ///
    /// # Panics
    ///
    /// As [`next_id`](Self::next_id).
    pub fn next_ids(&self, n: u64) -> Result<IdBatch<G::Id>, Error> {
        self.ids.runtime().block_on(self.ids.get().next_ids(n))
    }

    /// Stops the generator, giving the ids it reserved and did not serve back to the store
    /// (see `gdid::BlockGenerator::close`): how many went back. Call it before the store is
    /// dropped: dropping a generator gives its ids back in a task of the store's runtime, which
    /// does not run once that runtime is shut down.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::blocking::Store::open("memory:")?;
    /// let first = store.block_generator("shop", "orders").build()?;
    /// assert_eq!(first.next_id()?.to_string(), "0:1:1");
    /// first.close()?;
    /// let second = store.block_generator("shop", "orders").build()?;
    /// assert_eq!(second.next_id()?.to_string(), "0:1:2"); // nothing lost
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As the generator's async `close` (a store that could not take the ids back: they are
    /// lost, never repeated).
    ///
    /// # Panics
    ///
    /// As [`next_id`](Self::next_id).
    pub fn close(&self) -> Result<u64, Error> {
        self.ids.runtime().block_on(self.ids.get().close())
    }

    /// The async generator: its statistics, its settings, or to call it from async code (on
    /// any runtime: its background work stays on this store's).
    pub fn get_ref(&self) -> &G {
        self.ids.get()
    }
}

impl<G: Clone> Clone for Generator<G> {
    fn clone(&self) -> Self {
        Generator {
            ids: self.ids.clone(),
        }
    }
}

impl<G: fmt::Debug> fmt::Debug for Generator<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Generator").field(self.ids.get()).finish()
    }
}

/// A blocking GDID generator to tune, then [`build`](Self::build):
/// [`Store::block_generator`](super::Store::block_generator).
///
/// ```
/// use std::time::Duration;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = gdid::blocking::Store::open("memory:")?;
/// let orders = store
///     .block_generator("shop", "orders")
///     .configure(|ids| ids.block_size(100, 10_000).request_timeout(Duration::from_secs(5)))
///     .build()?;
/// assert_eq!(orders.get_ref().config().min_block, 100);
/// # Ok(())
/// # }
/// ```
pub struct BlockGeneratorBuilder {
    builder: crate::BlockGeneratorBuilder,
    runtime: Arc<Runtime>,
}

impl BlockGeneratorBuilder {
    pub(crate) fn new(builder: crate::BlockGeneratorBuilder, runtime: Arc<Runtime>) -> Self {
        BlockGeneratorBuilder { builder, runtime }
    }

    /// Tunes the generator with the async builder's methods (block sizes, timeouts, order,
    /// more authorities).
    pub fn configure(
        mut self,
        tune: impl FnOnce(crate::BlockGeneratorBuilder) -> crate::BlockGeneratorBuilder,
    ) -> Self {
        self.builder = tune(self.builder);
        self
    }

    /// The generator.
    ///
    /// # Errors
    ///
    /// As `gdid::BlockGeneratorBuilder::build`:
    /// [`ErrorDetail::InvalidConfig`](gdid_engine::ErrorDetail::InvalidConfig) for bad settings.
    pub fn build(self) -> Result<BlockGenerator, Error> {
        let ids = self.runtime.enter(|| self.builder.build())?;
        Ok(Generator::new(ids, self.runtime))
    }
}

impl fmt::Debug for BlockGeneratorBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockGeneratorBuilder")
            .field("builder", &self.builder)
            .finish_non_exhaustive()
    }
}
