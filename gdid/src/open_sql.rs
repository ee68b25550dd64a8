//! A MySQL/MariaDB, PostgreSQL or SQLite store (gdid-sql), a [`Driver`] of the
//! [`Database`](crate::database::Database) backend.

use gdid_engine::backend::numbering::NumberRecord;
use gdid_engine::durability::Durability;
use gdid_engine::plumbing::scheme::Scheme;
use gdid_engine::{AuthorityError, Pick, RangeLayout, backend::BoxFuture};
use gdid_sql::{Error, SqlAuthority, SqlNumberRecord, SqlShardedCounter, SqlStore};

use crate::database::Driver;
use crate::error::{Sorted, StoreError};

/// A SQL store and its number record.
#[derive(Debug)]
pub(crate) struct SqlBackend {
    store: SqlStore,
    record: SqlNumberRecord,
    label: String,
    /// Whether it was opened creating nothing: its tables may be missing.
    created_nothing: bool,
}

impl SqlBackend {
    /// Connects to `url`, a URL of `scheme` (read once, by the caller), and creates the schema; `lazy`: a store that connects on first use,
    /// whose schema is created when it can be (a failover store that may be down now);
    /// `create`: unless set, nothing is created (no SQLite file, no table; an eager store);
    /// `max_connections`: the pool's bound (an eager store's).
    pub(crate) async fn open(
        scheme: Scheme,
        url: &str,
        label: &str,
        lazy: bool,
        create: bool,
        max_connections: Option<u32>,
    ) -> Result<Self, StoreError> {
        let connect = |error: Error| StoreError::Connect {
            url: label.to_owned(),
            kind: error.kind(),
            source: match error {
                Error::Connect { source, .. } => source.into(),
                other => other.into(),
            },
        };
        let store = if lazy {
            SqlStore::connect_lazy_as(scheme, url).map_err(connect)?
        } else if !create {
            let store = SqlStore::connect_existing_as(scheme, url, max_connections)
                .await
                .map_err(connect)?;
            return Ok(SqlBackend {
                record: SqlNumberRecord::new(store.clone(), label),
                store,
                label: label.to_owned(),
                created_nothing: true,
            });
        } else {
            SqlStore::connect_as(scheme, url, max_connections)
                .await
                .map_err(connect)?
        };
        let record = SqlNumberRecord::new(store.clone(), label);
        let schema = record.ensure_schema().await;
        if !lazy {
            schema.map_err(|source| StoreError::Schema {
                url: label.to_owned(),
                kind: gdid_sql::driver_kind(&source),
                source: source.into(),
            })?;
        }
        Ok(SqlBackend {
            store,
            record,
            label: label.to_owned(),
            created_nothing: false,
        })
    }
}

impl Driver for SqlBackend {
    type Authority = SqlAuthority;
    type Sharded = SqlShardedCounter;
    type Shard = SqlStore;

    fn record(&self) -> &dyn NumberRecord {
        &self.record
    }

    /// The store as authority `number`.
    fn numbered(&self, number: u8) -> Result<SqlAuthority, impl std::error::Error> {
        SqlAuthority::new(self.store.clone(), number, &self.label)
    }

    async fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<SqlShardedCounter, Sorted> {
        Ok(SqlShardedCounter::create(self.store.clone(), sequence, layout, pick).await?)
    }

    fn skip_ranges<'a>(&'a self, sequence: &'a str, by: u64) -> BoxFuture<'a, Result<u64, Sorted>> {
        Box::pin(async move { Ok(SqlShardedCounter::skip(&self.store, sequence, by).await?) })
    }

    fn durability(&self) -> BoxFuture<'_, Result<Durability, Sorted>> {
        Box::pin(async move { Ok(self.store.durability().await?) })
    }

    /// A store opened creating nothing may lack its tables; any other made them.
    fn has_counters(&self) -> BoxFuture<'_, Result<bool, AuthorityError>> {
        Box::pin(async move {
            if !self.created_nothing {
                return Ok(true);
            }
            self.store
                .has_counters()
                .await
                .map_err(|e| AuthorityError::from_driver(gdid_sql::driver_kind(&e), e))
        })
    }

    fn shard(&self) -> (String, SqlStore) {
        (self.label.clone(), self.store.clone())
    }

    fn is_duplicate_key(error: &(dyn std::error::Error + 'static)) -> bool {
        error
            .downcast_ref::<sqlx::Error>()
            .is_some_and(gdid_sql::is_duplicate_key)
    }
}
