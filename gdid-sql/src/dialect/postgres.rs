//! PostgreSQL: `UPDATE … RETURNING`, one round trip.

use gdid_core::generator::AuthorityError;
use sqlx::PgPool;

use super::{COUNTER_MAX_SQL, COUNTERS, driver_error};

pub(crate) async fn ensure_schema(pool: &PgPool) -> Result<(), sqlx::Error> {
    let ddl = format!(
        "CREATE TABLE IF NOT EXISTS {COUNTERS} (\
            authority SMALLINT NOT NULL, \
            scope_name VARCHAR(80) NOT NULL, \
            sequence_name VARCHAR(80) NOT NULL, \
            era BIGINT NOT NULL, \
            next_counter BIGINT NOT NULL, \
            PRIMARY KEY (authority, scope_name, sequence_name))"
    );
    match sqlx::query(sqlx::AssertSqlSafe(ddl)).execute(pool).await {
        Ok(_) => Ok(()),
        // Two processes creating the table at once: the loser sees the winner's table or type.
        Err(sqlx::Error::Database(e))
            if matches!(e.code().as_deref(), Some("42P07") | Some("23505")) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Moves the row forward by `size`; `None` when the row does not exist yet.
pub(crate) async fn reserve(
    pool: &PgPool,
    authority: i16,
    scope: &str,
    sequence: &str,
    size: i64,
) -> Result<Option<(i64, i64)>, AuthorityError> {
    let sql = format!(
        "UPDATE {COUNTERS} SET \
            era = CASE WHEN next_counter + $4 - 1 > $5 THEN era + 1 ELSE era END, \
            next_counter = CASE WHEN next_counter + $4 - 1 > $5 THEN $4 ELSE next_counter + $4 END \
         WHERE authority = $1 AND scope_name = $2 AND sequence_name = $3 \
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
    pool: &PgPool,
    authority: i16,
    scope: &str,
    sequence: &str,
) -> Result<(), AuthorityError> {
    let sql = format!(
        "INSERT INTO {COUNTERS} (authority, scope_name, sequence_name, era, next_counter) \
         VALUES ($1, $2, $3, 0, 1) ON CONFLICT DO NOTHING"
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
