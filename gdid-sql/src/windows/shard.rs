//! The window tables of one shard, and every statement on them, written once for the three
//! dialects (`?` placeholders, numbered for PostgreSQL); only the lock clause, the transaction
//! start and the duplicate-key codes differ.

use sqlx::AssertSqlSafe;

use crate::statement::{create_table, sql, with_pool};
use crate::store::{Dialect, SqlStore};

/// An open or used window: `start..end`, handed out up to `next_hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First value of the window.
    pub start: u64,
    /// One past the last value.
    pub end: u64,
    /// The next value to hand out (`end` when the window is used up).
    pub next_hi: u64,
}

fn to_u64(value: i64, what: &str) -> Result<u64, sqlx::Error> {
    u64::try_from(value).map_err(|_| {
        sqlx::Error::Decode(format!("{what} is negative ({value}): corrupt window row").into())
    })
}

/// Creates the window and claim tables if missing.
pub(crate) async fn ensure_schema(store: &SqlStore) -> Result<(), sqlx::Error> {
    create_table(
        store,
        "gdid_windows",
        "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
         window_end BIGINT NOT NULL, next_hi BIGINT NOT NULL, \
         PRIMARY KEY (sequence_name, window_start)",
    )
    .await?;
    create_table(
        store,
        "gdid_window_claims",
        "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
         window_end BIGINT NOT NULL, PRIMARY KEY (sequence_name, window_start)",
    )
    .await
}

/// Answers a trivial query: the shard is reachable.
pub(crate) async fn ping(store: &SqlStore) -> Result<(), sqlx::Error> {
    with_pool!(store, pool => sqlx::query("SELECT 1").execute(pool).await.map(drop))
}

/// Every sequence with a window or a claim on this shard.
pub(crate) async fn sequences(store: &SqlStore) -> Result<Vec<String>, sqlx::Error> {
    let text = "SELECT sequence_name FROM gdid_windows \
                UNION SELECT sequence_name FROM gdid_window_claims";
    with_pool!(store, pool => sqlx::query_scalar(text).fetch_all(pool).await)
}

/// The highest window end this shard knows of for `sequence`, windows and claims alike.
pub(crate) async fn high_water(store: &SqlStore, sequence: &str) -> Result<u64, sqlx::Error> {
    let q = sql(
        store.dialect(),
        "SELECT CAST(COALESCE(MAX(e), 0) AS BIGINT) FROM (\
            SELECT MAX(window_end) AS e FROM gdid_windows WHERE sequence_name = ? \
            UNION ALL SELECT MAX(window_end) AS e FROM gdid_window_claims WHERE sequence_name = ?) h",
    );
    let q = if store.dialect() == Dialect::MySql {
        AssertSqlSafe(q.0.replace("AS BIGINT", "AS SIGNED"))
    } else {
        q
    };
    let high: i64 = with_pool!(store, pool => sqlx::query_scalar(AssertSqlSafe(q.0.clone()))
        .bind(sequence)
        .bind(sequence)
        .fetch_one(pool)
        .await)?;
    to_u64(high, "window end")
}

/// How many windows of `sequence` still have values to hand out.
pub(crate) async fn open_windows(store: &SqlStore, sequence: &str) -> Result<u64, sqlx::Error> {
    let q = sql(
        store.dialect(),
        "SELECT COUNT(*) FROM gdid_windows WHERE sequence_name = ? AND next_hi < window_end",
    );
    let count: i64 = with_pool!(store, pool => sqlx::query_scalar(AssertSqlSafe(q.0.clone())).bind(sequence).fetch_one(pool).await)?;
    to_u64(count, "count")
}

/// Every window of `sequence` on this shard.
pub(crate) async fn windows(store: &SqlStore, sequence: &str) -> Result<Vec<Window>, sqlx::Error> {
    let q = sql(
        store.dialect(),
        "SELECT window_start, window_end, next_hi FROM gdid_windows \
         WHERE sequence_name = ? ORDER BY window_start",
    );
    let rows: Vec<(i64, i64, i64)> = with_pool!(store, pool => sqlx::query_as(AssertSqlSafe(q.0.clone())).bind(sequence).fetch_all(pool).await)?;
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

/// Records the claim of `start..end`; `false` when another agent claimed `start` first.
pub(crate) async fn claim(
    store: &SqlStore,
    sequence: &str,
    start: i64,
    end: i64,
) -> Result<bool, sqlx::Error> {
    let q = sql(
        store.dialect(),
        "INSERT INTO gdid_window_claims (sequence_name, window_start, window_end) VALUES (?, ?, ?)",
    );
    let inserted = with_pool!(store, pool => sqlx::query(AssertSqlSafe(q.0.clone()))
        .bind(sequence)
        .bind(start)
        .bind(end)
        .execute(pool)
        .await
        .map(drop));
    match inserted {
        Ok(()) => Ok(true),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Opens the window `start..end` (after its claim succeeded everywhere).
pub(crate) async fn insert_window(
    store: &SqlStore,
    sequence: &str,
    start: i64,
    end: i64,
) -> Result<(), sqlx::Error> {
    let q = sql(
        store.dialect(),
        "INSERT INTO gdid_windows (sequence_name, window_start, window_end, next_hi) \
         VALUES (?, ?, ?, ?)",
    );
    with_pool!(store, pool => sqlx::query(AssertSqlSafe(q.0.clone()))
        .bind(sequence)
        .bind(start)
        .bind(end)
        .bind(start)
        .execute(pool)
        .await
        .map(drop))
}

/// Takes up to `n` values from the first open window of `sequence`, in one transaction that
/// locks the window row, never passing `window_end`: `(first, count)`, or `None` when no window
/// is open. With `skip_locked`, a window another transaction holds is passed over (the next
/// open one is used); without it, the transaction waits for it.
pub(crate) async fn take(
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
        let (_, end_u, next_u) = (to_u64(start, "window_start")?, to_u64(end, "window_end")?, to_u64(next, "next_hi")?);
        let count = (end_u - next_u).min(u64::try_from(n).unwrap_or(0));
        let new_next = next + i64::try_from(count).unwrap_or(0);
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
