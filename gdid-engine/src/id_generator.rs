//! The one trait every strategy implements, its object-safe companion, and batches of ids.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use super::authority::BoxFuture;
use super::generator_error::Error;
use gdid_core::Gdid;

/// A source of unique ids: GDID blocks, ObjectIds, counters, random ids, UUIDs...
///
/// Use it generically (`G: IdGenerator`) or, to choose the strategy at run time, as a
/// [`SharedIdGenerator`] (`Arc<dyn DynIdGenerator<Id>>`), which implements `IdGenerator` too.
///
/// ```
/// use gdid_engine::{IdGenerator, SharedIdGenerator, BlockGenerator, MemoryAuthority};
/// use std::sync::Arc;
///
/// async fn new_order_id<G: IdGenerator>(ids: &G) -> Result<G::Id, gdid_engine::Error> {
///     ids.next_id().await
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let gdids = BlockGenerator::builder("shop", "order")
///     .authority(MemoryAuthority::new(1))
///     .build()?;
/// let chosen: SharedIdGenerator<gdid_core::Gdid> = Arc::new(gdids);
/// let id = new_order_id(&chosen).await?;
/// assert_eq!(id.to_string(), "0:1:1");
/// # Ok(())
/// # }
/// ```
pub trait IdGenerator: Send + Sync {
    /// The id type.
    type Id: Send + 'static;

    /// One new id.
    fn next_id(&self) -> impl Future<Output = Result<Self::Id, Error>> + Send;

    /// `n` new ids, as runs of consecutive ids in the order they were issued.
    fn next_ids(&self, n: u64) -> impl Future<Output = Result<IdBatch<Self::Id>, Error>> + Send;

    /// Stops the generator, giving what it reserved and did not serve back to its store where
    /// the strategy can ([`BlockGenerator::close`](super::BlockGenerator::close)); how many ids
    /// went back. The default holds nothing: `Ok(0)`.
    fn close(&self) -> impl Future<Output = Result<u64, Error>> + Send {
        std::future::ready(Ok(0))
    }
}

/// The object-safe companion of [`IdGenerator`], implemented for every generator.
pub trait DynIdGenerator<Id>: Send + Sync {
    /// See [`IdGenerator::next_id`].
    fn next_id_boxed(&self) -> BoxFuture<'_, Result<Id, Error>>;
    /// See [`IdGenerator::next_ids`].
    fn next_ids_boxed(&self, n: u64) -> BoxFuture<'_, Result<IdBatch<Id>, Error>>;
    /// See [`IdGenerator::close`].
    fn close_boxed(&self) -> BoxFuture<'_, Result<u64, Error>>;
}

/// A generator chosen at run time.
pub type SharedIdGenerator<Id> = Arc<dyn DynIdGenerator<Id>>;

impl<G: IdGenerator> DynIdGenerator<G::Id> for G {
    fn next_id_boxed(&self) -> BoxFuture<'_, Result<G::Id, Error>> {
        Box::pin(self.next_id())
    }

    fn next_ids_boxed(&self, n: u64) -> BoxFuture<'_, Result<IdBatch<G::Id>, Error>> {
        Box::pin(self.next_ids(n))
    }

    fn close_boxed(&self) -> BoxFuture<'_, Result<u64, Error>> {
        Box::pin(self.close())
    }
}

impl<Id: Send + 'static> IdGenerator for dyn DynIdGenerator<Id> + '_ {
    type Id = Id;

    fn next_id(&self) -> impl Future<Output = Result<Id, Error>> + Send {
        self.next_id_boxed()
    }

    fn next_ids(&self, n: u64) -> impl Future<Output = Result<IdBatch<Id>, Error>> + Send {
        self.next_ids_boxed(n)
    }

    fn close(&self) -> impl Future<Output = Result<u64, Error>> + Send {
        self.close_boxed()
    }
}

/// `IdGenerator` for pointers to a generator (`Arc<G>`, `&G`): every call goes to the generator.
macro_rules! impl_id_generator_for_pointers {
    ($($pointer:ty),*) => {$(
        impl<G: IdGenerator + ?Sized> IdGenerator for $pointer {
            type Id = G::Id;

            fn next_id(&self) -> impl Future<Output = Result<G::Id, Error>> + Send {
                (**self).next_id()
            }

            fn next_ids(
                &self,
                n: u64,
            ) -> impl Future<Output = Result<IdBatch<G::Id>, Error>> + Send {
                (**self).next_ids(n)
            }

            fn close(&self) -> impl Future<Output = Result<u64, Error>> + Send {
                (**self).close()
            }
        }
    )*};
}

impl_id_generator_for_pointers!(Arc<G>, &G);

/// Consecutive ids: `first` and the `len - 1` that follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRun<Id> {
    /// The first id of the run.
    pub first: Id,
    /// How many ids, at least 1.
    pub len: u64,
}

/// The ids of one [`IdGenerator::next_ids`] call: runs of consecutive ids, in issue order.
///
/// ```
/// use gdid_engine::IdBatch;
///
/// let mut batch = IdBatch::consecutive_u64();
/// batch.push_run(10, 3);
/// batch.push_run(100, 2);
/// assert_eq!(batch.len(), 5);
/// assert_eq!(batch.iter().collect::<Vec<_>>(), [10, 11, 12, 100, 101]);
/// ```
#[derive(Clone)]
pub struct IdBatch<Id> {
    runs: Vec<IdRun<Id>>,
    nth: fn(&Id, u64) -> Id,
}

impl<Id> IdBatch<Id> {
    /// An empty batch whose runs step with `nth(first, k)` = the `k`-th id after `first`.
    pub fn with_step(nth: fn(&Id, u64) -> Id) -> Self {
        IdBatch {
            runs: Vec::new(),
            nth,
        }
    }

    /// Appends a run of `len` consecutive ids starting at `first`; a `len` of 0 is ignored.
    pub fn push_run(&mut self, first: Id, len: u64) {
        if len > 0 {
            self.runs.push(IdRun { first, len });
        }
    }

    /// The runs, in issue order.
    pub fn runs(&self) -> &[IdRun<Id>] {
        &self.runs
    }

    /// How many ids in all.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|run| run.len).sum()
    }

    /// Whether the batch holds no id.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Every id, in issue order.
    pub fn iter(&self) -> impl Iterator<Item = Id> + '_ {
        self.runs
            .iter()
            .flat_map(move |run| (0..run.len).map(move |k| (self.nth)(&run.first, k)))
    }
}

impl<Id: Clone> IdBatch<Id> {
    /// A batch of ids that are not consecutive to each other (UUIDs, ObjectIds): one run each.
    pub fn singles(ids: impl IntoIterator<Item = Id>) -> Self {
        let mut batch = IdBatch::with_step(clone_first::<Id>);
        batch
            .runs
            .extend(ids.into_iter().map(|first| IdRun { first, len: 1 }));
        batch
    }
}

fn clone_first<Id: Clone>(first: &Id, _: u64) -> Id {
    first.clone()
}

impl IdBatch<Gdid> {
    /// An empty batch of GDIDs (a run stays inside one block, so inside one era and authority).
    pub fn gdids() -> Self {
        IdBatch::with_step(|first, k| Gdid::from_raw(first.era(), first.id64() + k))
    }
}

impl IdBatch<u64> {
    /// An empty batch of integer ids.
    pub fn consecutive_u64() -> Self {
        IdBatch::with_step(|first, k| first + k)
    }

    /// An empty batch of integer ids for a request of `n` ids.
    ///
    /// # Errors
    ///
    /// [`ErrorDetail::InvalidCount`](crate::ErrorDetail::InvalidCount) for `n` 0.
    pub(crate) fn for_count(n: u64) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::invalid_count(0, "ask for at least one id"));
        }
        Ok(IdBatch::consecutive_u64())
    }
}

impl<Id: fmt::Debug> fmt::Debug for IdBatch<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdBatch").field("runs", &self.runs).finish()
    }
}

impl<Id: PartialEq> PartialEq for IdBatch<Id> {
    fn eq(&self, other: &Self) -> bool {
        self.runs == other.runs
    }
}

/// Implements [`IdGenerator`] for a newtype over one of the engine's generators
/// (`struct Outer(Inner)`), by delegation to field 0: how a backend gives the engine's generic
/// strategies (`ShardedCounter`, …) a name and constructors of its own,
/// without repeating the forwarding.
#[macro_export]
#[doc(hidden)]
macro_rules! delegate_id_generator {
    ($outer:ty => $id:ty) => {
        impl $crate::IdGenerator for $outer {
            type Id = $id;

            async fn next_id(&self) -> ::std::result::Result<$id, $crate::Error> {
                $crate::IdGenerator::next_id(&self.0).await
            }

            async fn next_ids(
                &self,
                n: u64,
            ) -> ::std::result::Result<$crate::IdBatch<$id>, $crate::Error> {
                $crate::IdGenerator::next_ids(&self.0, n).await
            }
        }
    };
}
