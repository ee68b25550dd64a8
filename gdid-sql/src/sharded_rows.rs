//! The `gdid_ranges` table of the sharded counter and its layout record in
//! `gdid_range_layouts`, every statement written once.
//!
//! ```sql
//! CREATE TABLE gdid_range_layouts (
//!     sequence_name VARCHAR(80) NOT NULL PRIMARY KEY,  -- one layout per sequence, for good
//!     base BIGINT NOT NULL, size BIGINT NOT NULL, ranges BIGINT NOT NULL
//! );
//! ```
//!
//! A take only matches a row whose values are non-negative integers, so a corrupt row is never
//! moved toward valid-looking values; [`list`] reads the values back as text for the checks that
//! say which field holds what.

use sqlx::AssertSqlSafe;

use crate::lineage::LineageSql;
use crate::statement::{sql, with_live_pool};
use crate::store::{Dialect, SqlStore};
use crate::stored::{described, integer_guard};
use crate::{schema, tables};

pub(crate) async fn ensure_schema(store: &SqlStore) -> Result<(), sqlx::Error> {
    schema::ensure(
        store,
        &[&tables::RANGE_LAYOUTS, &tables::RANGES, &tables::AUTHORITY],
    )
    .await
}

/// `INSERT … VALUES (…)` that does nothing when the key exists, on any dialect.
fn insert_if_absent(dialect: Dialect, table_and_values: &str) -> AssertSqlSafe<String> {
    let (insert, ignore) = if dialect == Dialect::MySql {
        ("INSERT IGNORE", "")
    } else {
        ("INSERT", " ON CONFLICT DO NOTHING")
    };
    sql(
        dialect,
        &format!("{insert} INTO {table_and_values}{ignore}"),
    )
}

/// Writes the layout record of `sequence` unless it has one.
pub(crate) async fn insert_layout(
    store: &SqlStore,
    sequence: &str,
    values: [i64; 3],
) -> Result<(), sqlx::Error> {
    let into = "gdid_range_layouts (sequence_name, base, size, ranges)";
    insert_row(store, into, sequence, values).await
}

/// Inserts (`sequence`, `values`) into `into` (a table and its four columns) unless the key
/// exists.
async fn insert_row(
    store: &SqlStore,
    into: &str,
    sequence: &str,
    [a, b, c]: [i64; 3],
) -> Result<(), sqlx::Error> {
    let q = insert_if_absent(store.dialect(), &format!("{into} VALUES (?, ?, ?, ?)"));
    with_live_pool!(store, pool => sqlx::query(store.statement(&q.0))
        .bind(sequence)
        .bind(a)
        .bind(b)
        .bind(c)
        .execute(pool)
        .await
        .map(drop))
}

/// The layout record of `sequence` as `(base, size, ranges)`, each [`described`].
pub(crate) async fn layout(
    store: &SqlStore,
    sequence: &str,
) -> Result<Option<[Option<String>; 3]>, sqlx::Error> {
    let columns = ["base", "size", "ranges"];
    let rows = described_rows(store, "gdid_range_layouts", columns, sequence, "").await?;
    Ok(rows.into_iter().next())
}

/// Creates the row of a range unless it exists.
pub(crate) async fn insert(
    store: &SqlStore,
    sequence: &str,
    range: i32,
    first: i64,
    max: i64,
) -> Result<(), sqlx::Error> {
    let into = "gdid_ranges (sequence_name, shard, next_value, max_value, lineage)";
    let q = insert_if_absent(
        store.dialect(),
        &format!("{into} VALUES (?, ?, ?, ?, NULL)"),
    );
    with_live_pool!(store, pool => sqlx::query(store.statement(&q.0))
        .bind(sequence)
        .bind(range)
        .bind(first)
        .bind(max)
        .execute(pool)
        .await
        .map(drop))
}

/// A row of `gdid_ranges` as [`list`] reads it: `shard` (the column of the range number),
/// `next_value` and `max_value`, each [`described`].
pub(crate) type DescribedRange = [Option<String>; 3];

/// Every range of `sequence`, in range order.
pub(crate) async fn list(
    store: &SqlStore,
    sequence: &str,
) -> Result<Vec<DescribedRange>, sqlx::Error> {
    let columns = ["shard", "next_value", "max_value"];
    described_rows(store, "gdid_ranges", columns, sequence, " ORDER BY shard").await
}

/// The rows of `table` for `sequence`, `columns` each [`described`], `order` appended.
async fn described_rows(
    store: &SqlStore,
    table: &str,
    columns: [&str; 3],
    sequence: &str,
    order: &str,
) -> Result<Vec<[Option<String>; 3]>, sqlx::Error> {
    let dialect = store.dialect();
    let [a, b, c] = columns.map(|column| described(dialect, column));
    let q = sql(
        dialect,
        &format!("SELECT {a}, {b}, {c} FROM {table} WHERE sequence_name = ?{order}"),
    );
    let rows: Vec<(Option<String>, Option<String>, Option<String>)> = with_live_pool!(store, pool => {
        sqlx::query_as(store.statement(&q.0)).bind(sequence).fetch_all(pool).await
    })?;
    Ok(rows.into_iter().map(|(a, b, c)| [a, b, c]).collect())
}

/// Takes exactly `n` values from the range, or none when fewer are left, the row is corrupt
/// ([`list`] tells) or, with the server's `lineage`, the row was last moved on another server
/// ([`same_lineage`] tells): the new `next_value`. The row takes the server's lineage.
/// One statement (`RETURNING`, read to its end: the commit comes before the value); on MySQL, `LAST_INSERT_ID(expr)` read back on the same
/// connection.
pub(crate) async fn take(
    store: &SqlStore,
    lineage: Option<&LineageSql>,
    sequence: &str,
    range: i32,
    n: i64,
) -> Result<Option<i64>, sqlx::Error> {
    let dialect = store.dialect();
    let (set, returning) = if dialect == Dialect::MySql {
        ("LAST_INSERT_ID(next_value + ?)", "")
    } else {
        ("next_value + ?", " RETURNING next_value")
    };
    // A u64 has no era to move to: a row of another lineage is not moved at all.
    let (adopt, same) = match lineage {
        Some(lineage) => (
            format!(", lineage = {}", lineage.identity),
            format!(" AND {}", lineage.same()),
        ),
        None => (String::new(), String::new()),
    };
    let update = sql(
        dialect,
        &format!(
            "UPDATE gdid_ranges SET next_value = {set}{adopt} \
             WHERE sequence_name = ? AND shard = ? AND next_value + ? - 1 <= max_value \
             AND next_value >= 0 AND max_value >= 0{guard}{same}{returning}",
            guard = integer_guard(dialect, &["next_value", "max_value"]),
        ),
    );
    with_live_pool!(store, pool => {
        let mut connection = pool.acquire().await?;
        let query = sqlx::query(store.statement(&update.0))
            .bind(n)
            .bind(sequence)
            .bind(range)
            .bind(n);
        if dialect != Dialect::MySql {
            // Every row is read, so the statement runs to its end, where SQLite commits: an
            // error at the commit comes back instead of the values of an update rolled back.
            let rows = query.fetch_all(&mut *connection).await?;
            return rows.first().map(|row| sqlx::Row::try_get(row, 0)).transpose();
        }
        if query.execute(&mut *connection).await?.rows_affected() == 0 {
            return Ok(None);
        }
        sqlx::query_scalar("SELECT CAST(LAST_INSERT_ID() AS SIGNED)")
            .fetch_one(&mut *connection)
            .await
            .map(Some)
    })
}

/// Whether the range row of (`sequence`, `range`) is of the server's `lineage` (or there is no
/// such row): asked only to explain why [`take`] matched nothing.
pub(crate) async fn same_lineage(
    store: &SqlStore,
    lineage: &LineageSql,
    sequence: &str,
    range: i32,
) -> Result<bool, sqlx::Error> {
    let q = sql(
        store.dialect(),
        &format!(
            "SELECT CASE WHEN {} THEN 1 ELSE 0 END FROM gdid_ranges \
             WHERE sequence_name = ? AND shard = ?",
            lineage.same()
        ),
    );
    let same: Option<i32> = with_live_pool!(store, pool => {
        sqlx::query_scalar(store.statement(&q.0))
            .bind(sequence)
            .bind(range)
            .fetch_optional(pool)
            .await
    })?;
    Ok(same.is_none_or(|same| same == 1))
}

/// Moves every range of `sequence` forward by `by` values (at most to its end), in one
/// statement, and gives each the server's lineage: the operator's answer to a failover or a
/// restore that may have lost values a range issued. Safe while generators run (every value
/// taken before is below, every value after above). How many ranges moved.
pub(crate) async fn skip(
    store: &SqlStore,
    lineage: Option<&LineageSql>,
    sequence: &str,
    by: i64,
) -> Result<u64, sqlx::Error> {
    let dialect = store.dialect();
    let adopt = lineage.map_or_else(String::new, |l| format!(", lineage = {}", l.identity));
    let update = sql(
        dialect,
        &format!(
            "UPDATE gdid_ranges SET next_value = CASE WHEN next_value > max_value + 1 - ? \
             THEN max_value + 1 ELSE next_value + ? END{adopt} \
             WHERE sequence_name = ? AND next_value >= 0 AND max_value >= 0{guard}",
            guard = integer_guard(dialect, &["next_value", "max_value"]),
        ),
    );
    with_live_pool!(store, pool => {
        sqlx::query(store.statement(&update.0))
            .bind(by)
            .bind(by)
            .bind(sequence)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
    })
}
