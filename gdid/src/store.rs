//! [`Store`]: any store opened from its URL, and every strategy it hands out. How to open one, or
//! several as one generator's authorities, is [`OpenOptions`](crate::OpenOptions) (`options.rs`,
//! with `Store::open`).
#![cfg(feature = "engine")]

use std::sync::Arc;

use gdid_engine::windows::WindowShard;
use gdid_engine::{
    BlockGenerator, BlockGeneratorBuilder, Coalescing, DynAuthority, Pick, RangeLayout,
    SharedIdGenerator,
};

use crate::backend::Backend;
use crate::error::{Sorted, StoreError};
use crate::shard::StoreShard;

/// One store opened from its URL: the pool or client, its schema, and the authority number
/// recorded in it (none when opened [`unnumbered`](crate::OpenOptions::unnumbered)). Cheap to
/// clone.
///
/// ```no_run
/// use gdid::{Gdid, IdGenerator};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = gdid::Store::open("sqlite:ids.sqlite").await?;
/// let orders = store.block_generator("shop", "orders").build()?;
/// let id: Gdid = orders.next_id().await?;
/// println!("{} issued order {id}", store.label());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Store {
    label: String,
    backend: Arc<dyn Backend>,
    authority: Option<Arc<dyn DynAuthority>>,
}

impl Store {
    /// The store's URL without its password.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The store's authority, to share among generators or to add to another store's generator
    /// as its failover (`BlockGeneratorBuilder::shared_authority`); `None` for a store opened
    /// [`unnumbered`](crate::OpenOptions::unnumbered).
    pub fn authority(&self) -> Option<Arc<dyn DynAuthority>> {
        self.authority.clone()
    }

    /// The authority number recorded in the store (0 to 15); `None` for a store opened
    /// [`unnumbered`](crate::OpenOptions::unnumbered).
    pub fn authority_number(&self) -> Option<u8> {
        self.authority.as_ref().map(|authority| authority.number())
    }

    /// Whether the store answers and still records this store's authority number (any or none,
    /// when opened [`unnumbered`](crate::OpenOptions::unnumbered)): one read of its number
    /// record (what `gdid serve` answers `GET /v1/ready` with).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), gdid::StoreError> {
    /// let store = gdid::Store::open("memory:").await?;
    /// store.ready().await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Authority`]: the store did not answer, or records another number (or none).
    pub async fn ready(&self) -> Result<(), StoreError> {
        let failed = |source| StoreError::Authority {
            url: self.label.clone(),
            source,
        };
        let number = self.authority_number();
        match self.backend.record().recorded_number().await {
            Ok(recorded) if number.is_none() || recorded == number => Ok(()),
            Ok(recorded) => Err(failed(gdid_engine::AuthorityError::Corrupt(format!(
                "the store records authority {recorded:?}, not {number:?} as when it was opened"
            )))),
            Err(error) => Err(failed(error)),
        }
    }

    /// A GDID generator of (`scope`, `sequence`) with this store as its authority; add other
    /// stores' authorities for failover, tune it, then `.build()?`. A store opened
    /// [`unnumbered`](crate::OpenOptions::unnumbered) is no authority: its builder starts with
    /// none, and `build` fails unless others are added.
    pub fn block_generator(&self, scope: &str, sequence: &str) -> BlockGeneratorBuilder {
        let builder = BlockGenerator::builder(scope, sequence);
        match self.authority() {
            Some(authority) => self.fit(builder.shared_authority(authority)),
            None => builder,
        }
    }

    /// `builder` asking for no block larger than this store takes (an authority server's
    /// `--max-block`).
    pub(crate) fn fit(&self, builder: BlockGeneratorBuilder) -> BlockGeneratorBuilder {
        match self.backend.max_block() {
            Some(max) => builder.block_size_at_most(max),
            None => builder,
        }
    }

    /// The one-at-a-time counter of (`scope`, `sequence`): `u64` ids 1, 2, 3, … with one round
    /// trip to the store each. The counter is the store's, whatever its authority number (a
    /// store opened [`unnumbered`](crate::OpenOptions::unnumbered) reaches the same one).
    pub fn one_at_a_time(&self, scope: &str, sequence: &str) -> SharedIdGenerator<u64> {
        self.backend.one_at_a_time(scope, sequence)
    }

    /// The sharded counter of `sequence`: `u64` ids from the fixed ranges of `layout`, one
    /// picked per id by `pick`. The first layout created for a sequence is its layout for good.
    /// Its ids carry no authority number (open the store
    /// [`unnumbered`](crate::OpenOptions::unnumbered) to use it for them alone).
    ///
    /// ```no_run
    /// use gdid::{Pick, RangeLayout};
    ///
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::options().unnumbered().open("sqlite:ids.sqlite").await?;
    /// let layout = RangeLayout::decimal_digits(12, 8)?; // 8 ranges of 12-digit numbers
    /// let accounts = store.sharded("accounts", layout, Pick::Random).await?;
    /// # let _ = accounts;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name, a layout other than the stored one, or
    /// a store that fails; [`StoreError::Unsupported`] on a `memory:` store.
    pub async fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<SharedIdGenerator<u64>, StoreError> {
        let created = self.backend.sharded(sequence, layout, pick);
        self.run("sharded counter", sequence, created).await
    }

    /// Moves every range of the sharded counter of `sequence` forward by `by` values (each at most
    /// to its end), in one statement: the answer to
    /// [`ErrorDetail::Switched`](crate::ErrorDetail::Switched) from a sharded counter after a
    /// failover to a replica or a restore, which may have lost values the ranges issued (a `u64`
    /// has no era to move to). Choose `by` at least the values one range may have issued since the
    /// copy's last update. Safe while generators run. How many ranges moved.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name, a `by` of 0 or past 2^62, or a store
    /// that fails; [`StoreError::Unsupported`] for a store whose ranges need no such move
    /// (MongoDB: its writes survive an election) or that keeps none.
    pub async fn skip_ranges(&self, sequence: &str, by: u64) -> Result<u64, StoreError> {
        let skipped = self.backend.skip_ranges(sequence, by);
        self.run("range skip", sequence, skipped).await
    }

    /// The `work` of `strategy` on `sequence`, when this kind of store does it (`None`: it
    /// does not).
    async fn run<T>(
        &self,
        strategy: &'static str,
        sequence: &str,
        work: Option<impl Future<Output = Result<T, Sorted>>>,
    ) -> Result<T, StoreError> {
        let Some(work) = work else {
            return Err(StoreError::Unsupported {
                strategy,
                url: self.label.clone(),
            });
        };
        work.await
            .map_err(|source| strategy_error(strategy, sequence, &self.label, source))
    }

    /// This store as a shard of hi-lo windows, to give a window agent or generator of your own.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unsupported`] on a `memory:` store.
    pub fn window_shard(&self) -> Result<StoreShard, StoreError> {
        self.backend.shard().ok_or_else(|| StoreError::Unsupported {
            strategy: "hi-lo window shard",
            url: self.label.clone(),
        })
    }

    /// Deletes the used-up hi-lo windows of `sequence` on this store but the `keep` latest
    /// (`WindowShard::prune`): open windows and claims (the high-water mark) are kept, so
    /// nothing is ever issued twice, and a long-running shard does not slow down. The shard's
    /// tables and indexes are created first if missing. How many windows were deleted.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name or a store that fails;
    /// [`StoreError::Unsupported`] on a `memory:` store.
    pub async fn prune_windows(&self, sequence: &str, keep: u64) -> Result<u64, StoreError> {
        const STRATEGY: &str = "window pruning";
        let shard = self.prepared_shard(sequence, STRATEGY).await?;
        WindowShard::prune(&shard, sequence, keep)
            .await
            .map_err(|e| window_error(STRATEGY, sequence, &shard, e))
    }

    /// Closes the open windows of `sequence` on this SQL store and claims the `by` values above its
    /// high-water mark: the answer to [`ErrorDetail::Switched`](crate::ErrorDetail::Switched) from
    /// a window generator after a failover to a replica, and to a restore of the store from a
    /// backup (a `u64` has no era to move to). Choose `by` at least the values its windows held
    /// since the copy's last update. Safe while generators and agents run; the agent then opens
    /// windows past the skipped values. How many windows were closed.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name, a store that fails, or a store whose
    /// windows need no such move after a failover (MongoDB: its writes survive an election);
    /// [`StoreError::Unsupported`] for a store that keeps no windows.
    pub async fn skip_windows(&self, sequence: &str, by: u64) -> Result<u64, StoreError> {
        const STRATEGY: &str = "window skip";
        let shard = self.prepared_shard(sequence, STRATEGY).await?;
        WindowShard::skip(&shard, sequence, by)
            .await
            .map_err(|e| window_error(STRATEGY, sequence, &shard, e))?
            .ok_or_else(|| {
                let why = "its writes survive a failover (MongoDB: w: majority, j: true), and \
                           this store does not skip windows";
                strategy_error(STRATEGY, sequence, shard.label(), Sorted::config(why))
            })
    }

    /// This store as a shard of hi-lo windows, its tables made, for `strategy` on `sequence`
    /// (whose name is checked first).
    async fn prepared_shard(
        &self,
        sequence: &str,
        strategy: &'static str,
    ) -> Result<StoreShard, StoreError> {
        let shard = self.window_shard()?;
        let named = gdid_engine::backend::validate_name(gdid_engine::NameKind::Sequence, sequence);
        named.map_err(|e| strategy_error(strategy, sequence, shard.label(), e.into()))?;
        let prepared = WindowShard::prepare(&shard).await;
        prepared.map_err(|e| window_error(strategy, sequence, &shard, e))?;
        Ok(shard)
    }
}

impl Store {
    /// Whether `error` (or an error it comes from) is this kind of store's duplicate key: a
    /// unique index refused an insert (MySQL/MariaDB 1062, PostgreSQL 23505, SQLite's unique
    /// constraints, MongoDB 11000). Never for a `memory:` store.
    ///
    /// ```no_run
    /// # async fn insert(store: &gdid::Store, error: sqlx::Error) {
    /// if store.is_duplicate_key(&error) {
    ///     // taken: draw another id
    /// }
    /// # }
    /// ```
    pub fn is_duplicate_key(&self, error: &(dyn std::error::Error + 'static)) -> bool {
        self.backend.is_duplicate_key(error)
    }

    /// Random ids inserted with retry, on this store's tables: calls `insert(id)` with a new id
    /// from `ids` (a `gdid::random::RandomIdGenerator`, say) until it succeeds, at most
    /// `attempts` times; an error that is this store's duplicate key
    /// ([`is_duplicate_key`](Self::is_duplicate_key)) means "taken, draw again", any other is
    /// returned at once. Returns the id stored and what `insert` returned.
    ///
    /// ```no_run
    /// use gdid::random::{IdRange, RandomIdGenerator};
    ///
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::open("sqlite:shop.sqlite").await?;
    /// let pool = sqlx::SqlitePool::connect("sqlite:shop.sqlite").await?; // the service's own
    /// let ids = RandomIdGenerator::new(IdRange::decimal_digits(9)?);
    /// let (id, _) = store
    ///     .insert_with_retry(&ids, 10, |id: u64| {
    ///         sqlx::query("INSERT INTO accounts (id) VALUES (?)")
    ///             .bind(i64::try_from(id).unwrap())
    ///             .execute(&pool)
    ///     })
    ///     .await?;
    /// println!("account {id}");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// `gdid::random::RetryError`: `Exhausted` with every id tried, `Insert` for any other
    /// insert error, `Generator` when `ids` fails.
    #[cfg(feature = "random")]
    pub async fn insert_with_retry<G, T, E, F, Fut>(
        &self,
        ids: &G,
        attempts: usize,
        insert: F,
    ) -> Result<(G::Id, T), gdid_random::RetryError<G::Id, E>>
    where
        G: gdid_engine::IdGenerator + ?Sized,
        G::Id: Clone + std::fmt::Debug,
        E: std::error::Error + 'static,
        F: FnMut(G::Id) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        gdid_random::insert_with_retry(ids, attempts, insert, |error: &E| {
            self.is_duplicate_key(error)
        })
        .await
    }
}

/// A [`StoreError::Strategy`].
pub(crate) fn strategy_error(
    strategy: &'static str,
    sequence: &str,
    url: &str,
    failed: Sorted,
) -> StoreError {
    StoreError::Strategy {
        strategy,
        sequence: sequence.to_owned(),
        url: url.to_owned(),
        kind: failed.kind,
        source: failed.source,
    }
}

/// A shard's `error` during `strategy` on `sequence`, as the store's error.
fn window_error(
    strategy: &'static str,
    sequence: &str,
    shard: &StoreShard,
    error: crate::ShardError,
) -> StoreError {
    strategy_error(strategy, sequence, shard.label(), error.into())
}

impl Store {
    /// The store's backend.
    pub(crate) fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// The store of `backend` as authority `number`, its concurrent allocations of one sequence
    /// coalesced into one write ([`Coalescing`]: group commit).
    pub(crate) fn numbered(label: String, backend: Arc<dyn Backend>, number: u8) -> Store {
        Store {
            authority: Some(Arc::new(Coalescing::new(backend.authority(number)))),
            label,
            backend,
        }
    }

    /// The store of `backend`, no authority.
    pub(crate) fn unnumbered(label: String, backend: Arc<dyn Backend>) -> Store {
        Store {
            authority: None,
            label,
            backend,
        }
    }
}
