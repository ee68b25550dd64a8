//! MySQL/MariaDB: no `RETURNING` on `UPDATE`. The update captures the new era in a session
//! variable and the new counter in `LAST_INSERT_ID(expr)`, both set under the row lock by the same
//! statement; a second statement on the same connection reads them back. Two round trips, no
//! transaction, and no other session can change what they read.

use gdid_core::generator::AuthorityError;
use sqlx::MySqlPool;

use super::{COUNTER_MAX_SQL, COUNTERS, driver_error};

pub(crate) async fn ensure_schema(pool: &MySqlPool) -> Result<(), sqlx::Error> {
    let ddl = format!(
        "CREATE TABLE IF NOT EXISTS {COUNTERS} (\
            authority SMALLINT NOT NULL, \
            scope_name VARCHAR(80) NOT NULL, \
            sequence_name VARCHAR(80) NOT NULL, \
            era BIGINT NOT NULL, \
            next_counter BIGINT NOT NULL, \
            PRIMARY KEY (authority, scope_name, sequence_name)) ENGINE=InnoDB"
    );
    sqlx::query(sqlx::AssertSqlSafe(ddl))
        .execute(pool)
        .await
        .map(drop)
}

/// Moves the row forward by `size`; `None` when the row does not exist yet.
pub(crate) async fn reserve(
    pool: &MySqlPool,
    authority: i16,
    scope: &str,
    sequence: &str,
    size: i64,
) -> Result<Option<(i64, i64)>, AuthorityError> {
    let mut connection = pool.acquire().await.map_err(driver_error)?;
    // MySQL evaluates SET assignments left to right: `era` is computed from the old
    // `next_counter`, which is assigned after it.
    let update = format!(
        "UPDATE {COUNTERS} SET \
            era = (@gdid_era := IF(next_counter + ? - 1 > ?, era + 1, era)), \
            next_counter = LAST_INSERT_ID(IF(next_counter + ? - 1 > ?, ?, next_counter + ?)) \
         WHERE authority = ? AND scope_name = ? AND sequence_name = ?"
    );
    let updated = sqlx::query(sqlx::AssertSqlSafe(update))
        .bind(size)
        .bind(COUNTER_MAX_SQL)
        .bind(size)
        .bind(COUNTER_MAX_SQL)
        .bind(size)
        .bind(size)
        .bind(authority)
        .bind(scope)
        .bind(sequence)
        .execute(&mut *connection)
        .await
        .map_err(out_of_range_is_corrupt)?;
    if updated.rows_affected() == 0 {
        return Ok(None);
    }
    let row: (i64, i64) =
        sqlx::query_as("SELECT CAST(@gdid_era AS SIGNED), CAST(LAST_INSERT_ID() AS SIGNED)")
            .fetch_one(&mut *connection)
            .await
            .map_err(driver_error)?;
    Ok(Some(row))
}

/// A negative counter in the row makes `LAST_INSERT_ID` (unsigned) fail with 1264 "out of range":
/// the row is corrupt, the update did not happen.
fn out_of_range_is_corrupt(error: sqlx::Error) -> AuthorityError {
    if let sqlx::Error::Database(e) = &error
        && e.code().as_deref() == Some("22003")
    {
        return AuthorityError::Corrupt(format!("the counter row holds a value out of range: {e}"));
    }
    driver_error(error)
}

pub(crate) async fn create_row(
    pool: &MySqlPool,
    authority: i16,
    scope: &str,
    sequence: &str,
) -> Result<(), AuthorityError> {
    let sql = format!(
        "INSERT IGNORE INTO {COUNTERS} (authority, scope_name, sequence_name, era, next_counter) \
         VALUES (?, ?, ?, 0, 1)"
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
