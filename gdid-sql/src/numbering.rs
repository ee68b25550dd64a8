//! The authority number a SQL store records (`gdid_authority`, one row), and the numbers its
//! counters use: the three operations of gdid-engine's
//! [`NumberRecord`](gdid_engine::backend::numbering::NumberRecord). The rules are gdid-engine's.
//!
//! ```sql
//! CREATE TABLE gdid_authority (
//!     id        SMALLINT NOT NULL PRIMARY KEY,  -- always 1: one number per store
//!     authority SMALLINT NOT NULL
//! );
//! ```

use std::sync::Arc;

use gdid_engine::AuthorityError;
use gdid_engine::backend::numbering::{COUNTER_KEY, NumberRecord};
use gdid_engine::backend::{ADVANCED_ERA, BoxFuture, STORED_AUTHORITY};
use tokio::sync::OnceCell;

use crate::counters::driver_error;
use crate::lineage::LineageSql;
use crate::statement::{sql, with_live_pool};
use crate::store::{Dialect, SqlStore};
use crate::stored::{described, stored_int};
use crate::{schema, tables};

/// Where a SQL store keeps its authority number. Cheap to clone (clones share what they know of
/// the schema).
#[derive(Debug, Clone)]
pub struct SqlNumberRecord {
    store: SqlStore,
    label: String,
    /// Set once the tables are known to exist: they are created once per record, not at every
    /// read.
    schema: Arc<OnceCell<()>>,
}

impl SqlNumberRecord {
    /// The record of `store`; `label` names the store in messages.
    pub fn new(store: SqlStore, label: &str) -> Self {
        SqlNumberRecord {
            store,
            label: label.to_owned(),
            schema: Arc::default(),
        }
    }

    /// Creates the record's table and the counter table (whose numbers it reads) if they are
    /// missing; once per record (and its clones). Idempotent, and safe from many processes at
    /// once.
    ///
    /// # Errors
    ///
    /// The driver's error.
    pub async fn ensure_schema(&self) -> Result<(), sqlx::Error> {
        self.schema
            .get_or_try_init(|| {
                schema::ensure(&self.store, &[&tables::COUNTERS, &tables::AUTHORITY])
            })
            .await
            .map(drop)
    }

    /// The authority numbers `column_query` (a `SELECT` of one [`described`] column) reads,
    /// each checked; `place` names the rows in errors.
    async fn numbers(&self, column_query: String, place: &str) -> Result<Vec<u8>, AuthorityError> {
        let values: Vec<Option<String>> = with_live_pool!(&self.store, pool => {
            sqlx::query_scalar(self.store.statement(&column_query)).fetch_all(pool).await
        })
        .map_err(driver_error)?;
        values
            .iter()
            .map(|value| stored_int(value.as_deref()).decode(place, "authority", STORED_AUTHORITY))
            .collect()
    }

    async fn record(&self, number: u8) -> Result<(), AuthorityError> {
        let (insert, ignore) = if self.store.dialect() == Dialect::MySql {
            ("INSERT IGNORE", "")
        } else {
            ("INSERT", " ON CONFLICT DO NOTHING")
        };
        let q = sql(
            self.store.dialect(),
            &format!("{insert} INTO gdid_authority (id, authority) VALUES (1, ?){ignore}"),
        );
        with_live_pool!(&self.store, pool => {
            sqlx::query(self.store.statement(&q.0)).bind(i16::from(number)).execute(pool).await.map(drop)
        })
        .map_err(driver_error)
    }
}

impl NumberRecord for SqlNumberRecord {
    fn store(&self) -> String {
        self.label.clone()
    }

    fn recorded_number(&self) -> BoxFuture<'_, Result<Option<u8>, AuthorityError>> {
        let column = described(self.store.dialect(), "authority");
        let query = format!("SELECT {column} FROM gdid_authority WHERE id = 1");
        Box::pin(async move {
            // An authority made on a schema of before the record (without `ensure_schema`)
            // creates its table here, at its first check.
            self.ensure_schema().await.map_err(driver_error)?;
            let numbers = self.numbers(query, "the gdid_authority row").await?;
            Ok(numbers.first().copied())
        })
    }

    fn record_number(&self, number: u8) -> BoxFuture<'_, Result<(), AuthorityError>> {
        Box::pin(self.record(number))
    }

    fn switched(&self) -> BoxFuture<'_, Result<bool, AuthorityError>> {
        Box::pin(async move {
            let Some(lineage) = LineageSql::of(&self.store).await.map_err(driver_error)? else {
                return Ok(false);
            };
            let query = format!("SELECT CASE WHEN {} THEN 1 ELSE 0 END", lineage.switched);
            let switched: i32 = with_live_pool!(&self.store, pool => {
                sqlx::query_scalar(self.store.statement(&query)).fetch_one(pool).await
            })
            .map_err(driver_error)?;
            Ok(switched == 1)
        })
    }

    fn floor_era(&self) -> BoxFuture<'_, Result<i64, AuthorityError>> {
        let column = described(self.store.dialect(), "floor_era");
        let query =
            format!("SELECT {column} FROM gdid_authority WHERE id = 1 AND floor_era IS NOT NULL");
        Box::pin(async move {
            self.ensure_schema().await.map_err(driver_error)?;
            let value: Option<Option<String>> = with_live_pool!(&self.store, pool => {
                sqlx::query_scalar(self.store.statement(&query)).fetch_optional(pool).await
            })
            .map_err(driver_error)?;
            let Some(Some(value)) = value else {
                return Ok(0);
            };
            stored_int(Some(&value)).decode("the gdid_authority row", "floor_era", ADVANCED_ERA)
        })
    }

    fn raise_floor_era(&self, era: i64) -> BoxFuture<'_, Result<bool, AuthorityError>> {
        let q = sql(
            self.store.dialect(),
            "UPDATE gdid_authority SET floor_era = ? WHERE id = 1 AND COALESCE(floor_era, 0) < ?",
        );
        Box::pin(async move {
            self.ensure_schema().await.map_err(driver_error)?;
            with_live_pool!(&self.store, pool => {
                sqlx::query(self.store.statement(&q.0)).bind(era).bind(era).execute(pool).await.map(drop)
            })
            .map_err(driver_error)?;
            Ok(true)
        })
    }

    fn numbers_in_counters(&self) -> BoxFuture<'_, Result<Vec<u8>, AuthorityError>> {
        let column = described(self.store.dialect(), "authority");
        let query =
            format!("SELECT DISTINCT {column} FROM gdid_counters WHERE authority <> {COUNTER_KEY}");
        Box::pin(self.numbers(query, "a gdid_counters row"))
    }
}
