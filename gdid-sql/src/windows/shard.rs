//! The window tables of one shard, and every statement on them, written once for the three
//! dialects (`?` placeholders, numbered for PostgreSQL); only the lock clause and the transaction
//! start differ.

use gdid_core::generator::windows::{Window, WindowShard};
use sqlx::AssertSqlSafe;

use crate::error::is_duplicate_key;
use crate::statement::{create_table, sql, with_pool};
use crate::store::{Dialect, SqlStore};

fn to_u64(value: i64, what: &str) -> Result<u64, sqlx::Error> {
    u64::try_from(value).map_err(|_| {
        sqlx::Error::Decode(format!("{what} is negative ({value}): corrupt window row").into())
    })
}

fn to_i64(value: u64) -> Result<i64, sqlx::Error> {
    i64::try_from(value)
        .map_err(|_| sqlx::Error::Encode(format!("{value} does not fit a BIGINT").into()))
}

impl WindowShard for SqlStore {
    type Error = sqlx::Error;

    async fn prepare(&self) -> Result<(), sqlx::Error> {
        create_table(
            self,
            "gdid_windows",
            "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
             window_end BIGINT NOT NULL, next_hi BIGINT NOT NULL, \
             PRIMARY KEY (sequence_name, window_start)",
        )
        .await?;
        create_table(
            self,
            "gdid_window_claims",
            "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
             window_end BIGINT NOT NULL, PRIMARY KEY (sequence_name, window_start)",
        )
        .await
    }

    async fn ping(&self) -> Result<(), sqlx::Error> {
        with_pool!(self, pool => sqlx::query("SELECT 1").execute(pool).await.map(drop))
    }

    async fn sequences(&self) -> Result<Vec<String>, sqlx::Error> {
        let text = "SELECT sequence_name FROM gdid_windows \
                    UNION SELECT sequence_name FROM gdid_window_claims";
        with_pool!(self, pool => sqlx::query_scalar(text).fetch_all(pool).await)
    }

    async fn high_water(&self, sequence: &str) -> Result<u64, sqlx::Error> {
        let bigint = match self.dialect() {
            Dialect::MySql => "SIGNED",
            Dialect::Postgres | Dialect::Sqlite => "BIGINT",
        };
        let q = sql(
            self.dialect(),
            &format!(
                "SELECT CAST(COALESCE(MAX(e), 0) AS {bigint}) FROM (\
                 SELECT MAX(window_end) AS e FROM gdid_windows WHERE sequence_name = ? \
                 UNION ALL SELECT MAX(window_end) AS e FROM gdid_window_claims \
                 WHERE sequence_name = ?) h"
            ),
        );
        let high: i64 = with_pool!(self, pool => sqlx::query_scalar(AssertSqlSafe(q.0.clone()))
            .bind(sequence)
            .bind(sequence)
            .fetch_one(pool)
            .await)?;
        to_u64(high, "window end")
    }

    async fn open_windows(&self, sequence: &str) -> Result<u64, sqlx::Error> {
        let q = sql(
            self.dialect(),
            "SELECT COUNT(*) FROM gdid_windows WHERE sequence_name = ? AND next_hi < window_end",
        );
        let count: i64 = with_pool!(self, pool => sqlx::query_scalar(AssertSqlSafe(q.0.clone()))
            .bind(sequence)
            .fetch_one(pool)
            .await)?;
        to_u64(count, "count")
    }

    async fn windows(&self, sequence: &str) -> Result<Vec<Window>, sqlx::Error> {
        let q = sql(
            self.dialect(),
            "SELECT window_start, window_end, next_hi FROM gdid_windows \
             WHERE sequence_name = ? ORDER BY window_start",
        );
        let rows: Vec<(i64, i64, i64)> = with_pool!(self, pool => sqlx::query_as(AssertSqlSafe(q.0.clone()))
            .bind(sequence)
            .fetch_all(pool)
            .await)?;
        rows.into_iter()
            .map(|(start, end, next)| {
                Ok(Window {
                    start: to_u64(start, "window_start")?,
                    end: to_u64(end, "window_end")?,
                    next_hi: to_u64(next, "next_hi")?,
                })
            })
            .collect()
    }

    async fn claim(&self, sequence: &str, start: u64, end: u64) -> Result<bool, sqlx::Error> {
        let q = sql(
            self.dialect(),
            "INSERT INTO gdid_window_claims (sequence_name, window_start, window_end) \
             VALUES (?, ?, ?)",
        );
        let (start, end) = (to_i64(start)?, to_i64(end)?);
        let inserted = with_pool!(self, pool => sqlx::query(AssertSqlSafe(q.0.clone()))
            .bind(sequence)
            .bind(start)
            .bind(end)
            .execute(pool)
            .await
            .map(drop));
        match inserted {
            Ok(()) => Ok(true),
            Err(e) if is_duplicate_key(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn open(&self, sequence: &str, start: u64, end: u64) -> Result<(), sqlx::Error> {
        let q = sql(
            self.dialect(),
            "INSERT INTO gdid_windows (sequence_name, window_start, window_end, next_hi) \
             VALUES (?, ?, ?, ?)",
        );
        let (start, end) = (to_i64(start)?, to_i64(end)?);
        with_pool!(self, pool => sqlx::query(AssertSqlSafe(q.0.clone()))
            .bind(sequence)
            .bind(start)
            .bind(end)
            .bind(start)
            .execute(pool)
            .await
            .map(drop))
    }

    /// Skips a window another client holds (`FOR UPDATE SKIP LOCKED`); if that leaves none,
    /// waits for it instead: "every open window is busy" is not "no open window".
    async fn take(&self, sequence: &str, n: u64) -> Result<Option<(u64, u64)>, sqlx::Error> {
        let n = to_i64(n)?;
        match take(self, sequence, n, true).await? {
            Some(taken) => Ok(Some(taken)),
            None => take(self, sequence, n, false).await,
        }
    }
}

/// Takes up to `n` values from the first open window of `sequence`, in one transaction that
/// locks the window row, never passing `window_end`: `(first, count)`, or `None` when no window
/// is open. With `skip_locked`, a window another transaction holds is passed over (the next
/// open one is used); without it, the transaction waits for it.
async fn take(
    store: &SqlStore,
    sequence: &str,
    n: i64,
    skip_locked: bool,
) -> Result<Option<(u64, u64)>, sqlx::Error> {
    let dialect = store.dialect();
    // SQLite has no row locks: BEGIN IMMEDIATE takes the database's write lock up front.
    let (begin, lock) = match (dialect, skip_locked) {
        (Dialect::Sqlite, _) => ("BEGIN IMMEDIATE", ""),
        (_, true) => ("BEGIN", " FOR UPDATE SKIP LOCKED"),
        (_, false) => ("BEGIN", " FOR UPDATE"),
    };
    let select = sql(
        dialect,
        &format!(
            "SELECT window_start, window_end, next_hi FROM gdid_windows \
             WHERE sequence_name = ? AND next_hi < window_end \
             ORDER BY window_start LIMIT 1{lock}"
        ),
    );
    let update = sql(
        dialect,
        "UPDATE gdid_windows SET next_hi = ? WHERE sequence_name = ? AND window_start = ?",
    );
    with_pool!(store, pool => {
        let mut tx = pool.begin_with(begin).await?;
        let row: Option<(i64, i64, i64)> = sqlx::query_as(AssertSqlSafe(select.0.clone()))
            .bind(sequence)
            .fetch_optional(&mut *tx)
            .await?;
        let Some((start, end, next)) = row else {
            tx.rollback().await?;
            return Ok(None);
        };
        let (end_u, next_u) = (to_u64(end, "window_end")?, to_u64(next, "next_hi")?);
        let count = (end_u - next_u).min(n.unsigned_abs());
        let new_next = next + to_i64(count)?;
        sqlx::query(AssertSqlSafe(update.0.clone()))
            .bind(new_next)
            .bind(sequence)
            .bind(start)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some((next_u, count)))
    })
}
