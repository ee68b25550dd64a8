//! SQLite: `UPDATE … RETURNING` (SQLite 3.35+, bundled), one statement.

use gdid_core::generator::AuthorityError;
use sqlx::SqlitePool;

use super::{COUNTER_MAX_SQL, COUNTERS, driver_error};

pub(crate) async fn ensure_schema(pool: &SqlitePool) -> Result<(), sqlx::Error> {
    let ddl = format!(
        "CREATE TABLE IF NOT EXISTS {COUNTERS} (\
            authority INTEGER NOT NULL, \
            scope_name TEXT NOT NULL, \
            sequence_name TEXT NOT NULL, \
            era INTEGER NOT NULL, \
            next_counter INTEGER NOT NULL, \
            PRIMARY KEY (authority, scope_name, sequence_name))"
    );
    sqlx::query(sqlx::AssertSqlSafe(ddl))
        .execute(pool)
        .await
        .map(drop)
}

/// Moves the row forward by `size`; `None` when the row does not exist yet.
pub(crate) async fn reserve(
    pool: &SqlitePool,
    authority: i16,
    scope: &str,
    sequence: &str,
    size: i64,
) -> Result<Option<(i64, i64)>, AuthorityError> {
    let sql = format!(
        "UPDATE {COUNTERS} SET \
            era = CASE WHEN next_counter + ?4 - 1 > ?5 THEN era + 1 ELSE era END, \
            next_counter = CASE WHEN next_counter + ?4 - 1 > ?5 THEN ?4 ELSE next_counter + ?4 END \
         WHERE authority = ?1 AND scope_name = ?2 AND sequence_name = ?3 \
         RETURNING era, next_counter"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(authority)
        .bind(scope)
        .bind(sequence)
        .bind(size)
        .bind(COUNTER_MAX_SQL)
        .fetch_optional(pool)
        .await
        .map_err(driver_error)
}

pub(crate) async fn create_row(
    pool: &SqlitePool,
    authority: i16,
    scope: &str,
    sequence: &str,
) -> Result<(), AuthorityError> {
    let sql = format!(
        "INSERT INTO {COUNTERS} (authority, scope_name, sequence_name, era, next_counter) \
         VALUES (?1, ?2, ?3, 0, 1) ON CONFLICT DO NOTHING"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(authority)
        .bind(scope)
        .bind(sequence)
        .execute(pool)
        .await
        .map(drop)
        .map_err(driver_error)
}
