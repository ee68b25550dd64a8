//! [`Store`]: any store opened from its URL, and every strategy it hands out.
// A build without any store feature opens nothing: what it would do with a store goes unused.
#![cfg_attr(
    not(any(
        feature = "sqlite",
        feature = "mysql",
        feature = "postgres",
        feature = "mongodb"
    )),
    allow(unused_imports, unused_variables, unreachable_code, dead_code)
)]

use std::sync::Arc;

use gdid_core::generator::{
    BlockGenerator, BlockGeneratorBuilder, DynAuthority, Pick, RangeLayout, SharedIdGenerator,
    redact,
};

use crate::error::StoreError;
use crate::url::Scheme;

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
#[derive(Debug, Clone)]
pub struct Store {
    label: String,
    backend: Backend,
}

/// The store's own kind, with its authority.
#[derive(Debug, Clone)]
enum Backend {
    #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
    Sql(gdid_sql::SqlAuthority),
    #[cfg(feature = "mongodb")]
    Mongo(crate::open_mongo::MongoStore),
    /// A build without any store feature: [`Store::open`] refuses every URL.
    #[cfg(not(any(
        feature = "sqlite",
        feature = "mysql",
        feature = "postgres",
        feature = "mongodb"
    )))]
    None(std::convert::Infallible),
}

impl Store {
    /// Opens the store of `url`: `sqlite:PATH` (the file is created), `mysql://…` or
    /// `mariadb://…`, `postgres://…` or `postgresql://…`, `mongodb://…` or `mongodb+srv://…`
    /// (database `gdid` unless the URL names one; the server is pinged). Creates the schema and
    /// settles the store's authority number: the one recorded in it, or the one its counters
    /// already use, or 1 (recorded before this returns).
    ///
    /// # Errors
    ///
    /// [`StoreError::UnsupportedScheme`], [`StoreError::FeatureDisabled`] (naming the feature to
    /// enable), [`StoreError::InvalidUrl`], [`StoreError::Connect`], [`StoreError::Schema`],
    /// [`StoreError::Authority`]. No message holds the URL's password.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::options().open(url).await
    }

    /// How to open a store, when the defaults of [`open`](Self::open) do not fit:
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), gdid::StoreError> {
    /// let store = gdid::Store::options()
    ///     .default_mongodb_database("billing") // when the URL names none; "gdid" otherwise
    ///     .open("mongodb://127.0.0.1:27017")
    ///     .await?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    pub fn options() -> OpenOptions {
        OpenOptions::default()
    }

    /// The store's URL without its password.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The store's authority, to share among generators or to add to another store's generator
    /// as its failover (`BlockGeneratorBuilder::shared_authority`).
    pub fn authority(&self) -> Arc<dyn DynAuthority> {
        match &self.backend {
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Backend::Sql(authority) => Arc::new(authority.clone()),
            #[cfg(feature = "mongodb")]
            Backend::Mongo(mongo) => Arc::new(mongo.authority.clone()),
            #[cfg(not(any(
                feature = "sqlite",
                feature = "mysql",
                feature = "postgres",
                feature = "mongodb"
            )))]
            Backend::None(never) => match *never {},
        }
    }

    /// The authority number recorded in the store (0 to 15).
    pub fn authority_number(&self) -> u8 {
        use gdid_core::generator::Authority;
        match &self.backend {
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Backend::Sql(authority) => Authority::number(authority),
            #[cfg(feature = "mongodb")]
            Backend::Mongo(mongo) => Authority::number(&mongo.authority),
            #[cfg(not(any(
                feature = "sqlite",
                feature = "mysql",
                feature = "postgres",
                feature = "mongodb"
            )))]
            Backend::None(never) => match *never {},
        }
    }

    /// A GDID generator of (`scope`, `sequence`) with this store as its authority; add other
    /// stores' authorities for failover, tune it, then `.build()?`.
    pub fn block_generator(&self, scope: &str, sequence: &str) -> BlockGeneratorBuilder {
        let builder = BlockGenerator::builder(scope, sequence);
        match &self.backend {
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Backend::Sql(authority) => builder.authority(authority.clone()),
            #[cfg(feature = "mongodb")]
            Backend::Mongo(mongo) => builder.authority(mongo.authority.clone()),
            #[cfg(not(any(
                feature = "sqlite",
                feature = "mysql",
                feature = "postgres",
                feature = "mongodb"
            )))]
            Backend::None(never) => match *never {},
        }
    }

    /// The one-at-a-time counter of (`scope`, `sequence`): `u64` ids 1, 2, 3, … with one round
    /// trip to the store each.
    pub fn one_at_a_time(&self, scope: &str, sequence: &str) -> SharedIdGenerator<u64> {
        match &self.backend {
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Backend::Sql(authority) => std::sync::Arc::new(gdid_sql::SqlCounter::new(
                authority.clone(),
                scope,
                sequence,
            )),
            #[cfg(feature = "mongodb")]
            Backend::Mongo(mongo) => std::sync::Arc::new(gdid_mongo::MongoCounter::new(
                mongo.authority.clone(),
                scope,
                sequence,
            )),
            #[cfg(not(any(
                feature = "sqlite",
                feature = "mysql",
                feature = "postgres",
                feature = "mongodb"
            )))]
            Backend::None(never) => match *never {},
        }
    }

    /// The sharded counter of `sequence`: `u64` ids from the fixed ranges of `layout`, one
    /// picked per id by `pick`. The first layout created for a sequence is its layout for good.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name, a layout other than the stored one, or
    /// a store that fails.
    pub async fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<SharedIdGenerator<u64>, StoreError> {
        let failed =
            |source: crate::error::Source| self.strategy_error("sharded counter", sequence, source);
        match &self.backend {
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Backend::Sql(authority) => gdid_sql::SqlShardedCounter::create(
                authority.store().clone(),
                sequence,
                layout,
                pick,
            )
            .await
            .map(|ids| std::sync::Arc::new(ids) as SharedIdGenerator<u64>)
            .map_err(|e| failed(e.into())),
            #[cfg(feature = "mongodb")]
            Backend::Mongo(mongo) => gdid_mongo::MongoShardedCounter::create(
                &mongo.database,
                crate::open_mongo::RANGES,
                sequence,
                layout,
                pick,
            )
            .await
            .map(|ids| std::sync::Arc::new(ids) as SharedIdGenerator<u64>)
            .map_err(|e| failed(e.into())),
            #[cfg(not(any(
                feature = "sqlite",
                feature = "mysql",
                feature = "postgres",
                feature = "mongodb"
            )))]
            Backend::None(never) => match *never {},
        }
    }

    /// `u64` ids of `sequence` from the open windows of this store as the one shard, `batch`
    /// values per round trip. A window agent (`gdid_sql::WindowAgent`,
    /// `gdid_mongo::MongoWindowAgent`) opens the windows.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name or a `batch` of 0.
    pub fn window_generator(
        &self,
        sequence: &str,
        batch: u64,
    ) -> Result<SharedIdGenerator<u64>, StoreError> {
        let failed = |source: crate::error::Source| {
            self.strategy_error("window generator", sequence, source)
        };
        let shard = self.label.clone();
        match &self.backend {
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Backend::Sql(authority) => gdid_sql::SqlWindowGenerator::new(
                vec![(shard, authority.store().clone())],
                sequence,
                batch,
            )
            .map(|ids| std::sync::Arc::new(ids) as SharedIdGenerator<u64>)
            .map_err(|e| failed(e.into())),
            #[cfg(feature = "mongodb")]
            Backend::Mongo(mongo) => gdid_mongo::MongoWindowGenerator::new(
                vec![(shard, gdid_mongo::MongoWindowShard::new(&mongo.database))],
                sequence,
                batch,
            )
            .map(|ids| std::sync::Arc::new(ids) as SharedIdGenerator<u64>)
            .map_err(|e| failed(e.into())),
            #[cfg(not(any(
                feature = "sqlite",
                feature = "mysql",
                feature = "postgres",
                feature = "mongodb"
            )))]
            Backend::None(never) => match *never {},
        }
    }

    fn strategy_error(
        &self,
        strategy: &'static str,
        sequence: &str,
        source: crate::error::Source,
    ) -> StoreError {
        StoreError::Strategy {
            strategy,
            sequence: sequence.to_owned(),
            url: self.label.clone(),
            source,
        }
    }
}

/// How [`Store::options`] opens a store.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    default_mongodb_database: Option<String>,
}

impl OpenOptions {
    /// The MongoDB database used when the URL names none (`gdid` unless set).
    pub fn default_mongodb_database(mut self, name: &str) -> Self {
        self.default_mongodb_database = Some(name.to_owned());
        self
    }

    /// Opens the store of `url`, as [`Store::open`] does.
    ///
    /// # Errors
    ///
    /// As [`Store::open`].
    pub async fn open(&self, url: &str) -> Result<Store, StoreError> {
        let url = url.trim();
        let label = redact(url);
        let backend = match Scheme::of(url)? {
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Scheme::Sqlite | Scheme::MySql | Scheme::Postgres => {
                Backend::Sql(crate::open_sql::open(url, &label).await?)
            }
            #[cfg(feature = "mongodb")]
            Scheme::MongoDb => {
                let database = self
                    .default_mongodb_database
                    .as_deref()
                    .unwrap_or(crate::open_mongo::DEFAULT_DATABASE);
                Backend::Mongo(crate::open_mongo::MongoStore::open(url, &label, database).await?)
            }
            #[allow(unreachable_patterns)] // only schemes of enabled features get here
            scheme => {
                return Err(StoreError::FeatureDisabled {
                    url: label,
                    feature: scheme.feature(),
                });
            }
        };
        Ok(Store { label, backend })
    }
}
