//! [`Store`]: any store opened from its URL, and every strategy it hands out. How to open one, or
//! several as one generator's authorities, is [`OpenOptions`](crate::OpenOptions) (`options.rs`,
//! with `Store::open`).
use std::sync::Arc;

use gdid_engine::windows::{WindowAgent, WindowGenerator};
use gdid_engine::{
    BlockGenerator, BlockGeneratorBuilder, DynAuthority, Pick, RangeLayout, SharedIdGenerator,
};

use crate::backend::Backend;
use crate::error::{DriverError, StoreError};
use crate::shard::StoreShard;

/// One store opened from its URL: the pool or client, its schema, and the authority number
/// recorded in it. Cheap to clone.
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
#[derive(Clone)]
pub struct Store {
    label: String,
    number: u8,
    backend: Arc<dyn Backend>,
    authority: Arc<dyn DynAuthority>,
}

impl Store {
    /// The store's URL without its password.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The store's authority, to share among generators or to add to another store's generator
    /// as its failover (`BlockGeneratorBuilder::shared_authority`).
    pub fn authority(&self) -> Arc<dyn DynAuthority> {
        self.authority.clone()
    }

    /// The authority number recorded in the store (0 to 15).
    pub fn authority_number(&self) -> u8 {
        self.number
    }

    /// Whether the store answers and still records this store's authority number: one read of
    /// its number record (what `gdid serve` answers `GET /v1/ready` with).
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
        match self.backend.record().recorded_number().await {
            Ok(Some(number)) if number == self.number => Ok(()),
            Ok(recorded) => Err(failed(gdid_engine::AuthorityError::Corrupt(format!(
                "the store records authority {recorded:?}, not {} as when it was opened",
                self.number
            )))),
            Err(error) => Err(failed(error)),
        }
    }

    /// A GDID generator of (`scope`, `sequence`) with this store as its authority; add other
    /// stores' authorities for failover, tune it, then `.build()?`.
    pub fn block_generator(&self, scope: &str, sequence: &str) -> BlockGeneratorBuilder {
        let builder = BlockGenerator::builder(scope, sequence).shared_authority(self.authority());
        self.fit(builder)
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
    /// trip to the store each. The counter is the store's, whatever its authority number
    /// ([`OpenOptions::one_at_a_time`](crate::OpenOptions::one_at_a_time) reaches the same one
    /// without settling a number).
    pub fn one_at_a_time(&self, scope: &str, sequence: &str) -> SharedIdGenerator<u64> {
        self.backend.one_at_a_time(scope, sequence)
    }

    /// The sharded counter of `sequence`: `u64` ids from the fixed ranges of `layout`, one
    /// picked per id by `pick`. The first layout created for a sequence is its layout for good.
    /// Its ids carry no authority number
    /// ([`OpenOptions::sharded`](crate::OpenOptions::sharded) opens a store for it without
    /// settling one).
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
        sharded(&*self.backend, &self.label, sequence, layout, pick).await
    }

    /// Moves every range of the sharded counter of `sequence` forward by `by` values (each at
    /// most to its end), in one statement: the answer to [`Error::Switched`](crate::Error) from
    /// a sharded counter after a failover to a replica or a restore, which may have lost values
    /// the ranges issued (a `u64` has no era to move to). Choose `by` at least the values one
    /// range may have issued since the copy's last update. Safe while generators run. How many
    /// ranges moved.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name, a `by` of 0 or past 2^62, or a store
    /// that fails; [`StoreError::Unsupported`] for a store whose ranges need no such move
    /// (MongoDB: its writes survive an election) or that keeps none.
    pub async fn skip_ranges(&self, sequence: &str, by: u64) -> Result<u64, StoreError> {
        const STRATEGY: &str = "range skip";
        let Some(skipped) = self.backend.skip_ranges(sequence, by) else {
            return Err(StoreError::Unsupported {
                strategy: STRATEGY,
                url: self.label.clone(),
            });
        };
        skipped
            .await
            .map_err(|source| strategy_error(STRATEGY, sequence, &self.label, source))
    }

    /// `u64` ids of `sequence` from the open windows of this store as the one shard, `batch`
    /// values per round trip. A window agent ([`window_agent`](Self::window_agent)) opens the
    /// windows.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name or a `batch` of 0;
    /// [`StoreError::Unsupported`] on a `memory:` store.
    pub fn window_generator(
        &self,
        sequence: &str,
        batch: u64,
    ) -> Result<SharedIdGenerator<u64>, StoreError> {
        window_generator(vec![self.window_shard()?], sequence, batch)
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

    /// A window agent with this store as its one shard (prepared): each
    /// [`run_once`](WindowAgent::run_once) keeps `min_open_windows` windows of `window_size`
    /// values open for every sequence. For several shards, see
    /// [`OpenOptions::window_agent`](crate::OpenOptions::window_agent).
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::open("sqlite:ids.sqlite").await?;
    /// let agent = store.window_agent(100_000, 2).await?;
    /// agent.run_once(&["orders"]).await?;
    /// let orders = store.window_generator("orders", 100)?;
    /// # let _ = orders;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Agent`] for a window size of 0 or a store that cannot be prepared;
    /// [`StoreError::Unsupported`] on a `memory:` store.
    pub async fn window_agent(
        &self,
        window_size: u64,
        min_open_windows: u64,
    ) -> Result<WindowAgent<StoreShard>, StoreError> {
        let mut agent = WindowAgent::new(window_size, min_open_windows)?;
        let shard = self.window_shard()?;
        agent.add_shard(&self.label, shard).await?;
        Ok(agent)
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("label", &self.label)
            .field("number", &self.number)
            .field("backend", &self.backend)
            .finish_non_exhaustive()
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
    source: DriverError,
) -> StoreError {
    StoreError::Strategy {
        strategy,
        sequence: sequence.to_owned(),
        url: url.to_owned(),
        source,
    }
}

/// The sharded counter of `sequence` on the store of `backend` (labelled `label`).
pub(crate) async fn sharded(
    backend: &dyn Backend,
    label: &str,
    sequence: &str,
    layout: RangeLayout,
    pick: Pick,
) -> Result<SharedIdGenerator<u64>, StoreError> {
    const STRATEGY: &str = "sharded counter";
    let Some(created) = backend.sharded(sequence, layout, pick) else {
        return Err(StoreError::Unsupported {
            strategy: STRATEGY,
            url: label.to_owned(),
        });
    };
    created
        .await
        .map_err(|source| strategy_error(STRATEGY, sequence, label, source))
}

/// `u64` ids of `sequence` from the windows of `shards`, in order.
pub(crate) fn window_generator(
    shards: Vec<StoreShard>,
    sequence: &str,
    batch: u64,
) -> Result<SharedIdGenerator<u64>, StoreError> {
    let url = shards
        .iter()
        .map(StoreShard::label)
        .collect::<Vec<_>>()
        .join(", ");
    let shards = shards
        .into_iter()
        .map(|shard| (shard.label().to_owned(), shard))
        .collect();
    WindowGenerator::new(shards, sequence, batch)
        .map(|ids| Arc::new(ids) as SharedIdGenerator<u64>)
        .map_err(|e| strategy_error("window generator", sequence, &url, e.into()))
}

impl Store {
    /// The store's backend.
    pub(crate) fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// The store of `backend` as authority `number`.
    pub(crate) fn numbered(label: String, backend: Arc<dyn Backend>, number: u8) -> Store {
        Store {
            authority: backend.authority(number),
            label,
            number,
            backend,
        }
    }
}
