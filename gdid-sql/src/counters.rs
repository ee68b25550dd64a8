//! The counter table, `gdid_counters`: one row per (authority, scope, sequence) holding the era
//! and the next counter to hand out, as `CounterState` in gdid-core. A reservation moves the row
//! forward in one atomic statement, committed before the block is returned:
//!
//! ```text
//! if next + size - 1 > COUNTER_MAX:  era = era + 1, next = size      (the block is era+1, 0..size)
//! else:                              next = next + size              (the block is next..next+size)
//! ```
//!
//! PostgreSQL and SQLite return the new row with `RETURNING`, read to the end of the statement
//! (SQLite gives the row before the statement completes, and commits at completion). MySQL has no `RETURNING` on
//! `UPDATE`: the same update captures the new era in a session variable and the new counter in
//! `LAST_INSERT_ID(expr)`, both under the row lock, and a second statement on the same connection
//! reads them back (no other session can change them). A missing row is created first (era 0,
//! next 1: counter 0 of era 0 is never issued) with an insert that ignores a concurrent one.
//!
//! The update only matches a row an authority could have written: an integer era of at least
//! 0 and an integer counter from 1 to 2^60. A corrupt row (a negative counter, a value above the
//! counter range, text in SQLite) is left as it is and reported as [`AuthorityError::Corrupt`],
//! saying which field holds what; moving it would turn it into valid-looking values that repeat
//! ids (a counter of -1 becomes 0, then 1; SQLite reads text as 0).

use gdid_core::generator::AuthorityError;
use sqlx::AssertSqlSafe;

use crate::statement::{create_table, sql, with_pool};
use crate::store::{Dialect, SqlStore};
use crate::stored::{described, integer_guard, integer_in};

pub(crate) async fn ensure_schema(store: &SqlStore) -> Result<(), sqlx::Error> {
    create_table(
        store,
        "gdid_counters",
        "authority SMALLINT NOT NULL, scope_name VARCHAR(80) NOT NULL, \
         sequence_name VARCHAR(80) NOT NULL, era BIGINT NOT NULL, next_counter BIGINT NOT NULL, \
         PRIMARY KEY (authority, scope_name, sequence_name)",
    )
    .await
}

/// The row of (authority, scope, sequence), as error messages name it.
pub(crate) fn row_name(authority: u8, scope: &str, sequence: &str) -> String {
    format!("the gdid_counters row (authority {authority}, scope {scope:?}, sequence {sequence:?})")
}

/// `error` with the row it is about, when it reports a corrupt row or a block read from one.
pub(crate) fn in_row(row: &str, error: AuthorityError) -> AuthorityError {
    match error {
        AuthorityError::Corrupt(reason) | AuthorityError::InvalidBlock(reason) => {
            AuthorityError::Corrupt(format!("{row}: {reason}"))
        }
        other => other,
    }
}

/// Moves the row forward by `size`: the new `(era, next_counter)`, or `None` when the row does
/// not exist yet.
///
/// # Errors
///
/// [`AuthorityError::Corrupt`] for a row that holds values no authority writes (it is left
/// as it is), or that cannot be decoded; [`AuthorityError::Store`] when the store fails.
pub(crate) async fn reserve(
    store: &SqlStore,
    authority: i16,
    scope: &str,
    sequence: &str,
    size: i64,
) -> Result<Option<(i64, i64)>, AuthorityError> {
    let dialect = store.dialect();
    // MySQL evaluates SET assignments left to right: `era` is computed from the old
    // `next_counter`, which is assigned after it. The others read old values throughout.
    let (era, next, returning) = if dialect == Dialect::MySql {
        (
            "(@gdid_era := IF(next_counter + ? - 1 > ?, era + 1, era))",
            "LAST_INSERT_ID(IF(next_counter + ? - 1 > ?, ?, next_counter + ?))",
            "",
        )
    } else {
        (
            "CASE WHEN next_counter + ? - 1 > ? THEN era + 1 ELSE era END",
            "CASE WHEN next_counter + ? - 1 > ? THEN ? ELSE next_counter + ? END",
            " RETURNING era, next_counter",
        )
    };
    let update = sql(
        dialect,
        &format!(
            "UPDATE gdid_counters SET era = {era}, next_counter = {next} \
             WHERE authority = ? AND scope_name = ? AND sequence_name = ? \
             AND era >= 0 AND next_counter >= {NEXT_MIN_SQL} AND next_counter <= {NEXT_MAX_SQL}{guard}{returning}",
            guard = integer_guard(dialect, &["era", "next_counter"]),
        ),
    );
    let reserved: Result<Option<(i64, i64)>, sqlx::Error> = with_pool!(store, pool => {
        let mut connection = pool.acquire().await.map_err(driver_error)?;
        let query = sqlx::query(AssertSqlSafe(update.0.clone()))
            .bind(size)
            .bind(COUNTER_MAX_SQL)
            .bind(size)
            .bind(COUNTER_MAX_SQL)
            .bind(size)
            .bind(size)
            .bind(authority)
            .bind(scope)
            .bind(sequence);
        if dialect == Dialect::MySql {
            match query.execute(&mut *connection).await {
                Ok(done) if done.rows_affected() == 0 => Ok(None),
                Ok(_) => sqlx::query_as(
                    "SELECT CAST(@gdid_era AS SIGNED), CAST(LAST_INSERT_ID() AS SIGNED)",
                )
                .fetch_one(&mut *connection)
                .await
                .map(Some),
                Err(e) => return Err(out_of_range_is_corrupt(e)),
            }
        } else {
            // Every row is read, so the statement runs to its end: in autocommit mode SQLite
            // commits there, and an error at the commit (the update rolled back) comes back
            // here instead of being lost with the statement while its row is handed out.
            query.fetch_all(&mut *connection).await.and_then(|rows| {
                rows.first()
                    .map(|row| {
                        let era = sqlx::Row::try_get(row, 0)?;
                        let next = sqlx::Row::try_get(row, 1)?;
                        Ok((era, next))
                    })
                    .transpose()
            })
        }
    });
    match reserved.map_err(driver_error)? {
        Some(state) => Ok(Some(state)),
        None => match stored_corruption(store, authority, scope, sequence).await? {
            Some(reason) => Err(AuthorityError::Corrupt(reason)),
            None => Ok(None),
        },
    }
}

/// What is wrong with the row of (authority, scope, sequence), read back after the update matched
/// nothing: `None` when there is no row (or a valid one, created since).
async fn stored_corruption(
    store: &SqlStore,
    authority: i16,
    scope: &str,
    sequence: &str,
) -> Result<Option<String>, AuthorityError> {
    let dialect = store.dialect();
    let q = sql(
        dialect,
        &format!(
            "SELECT {}, {} FROM gdid_counters \
             WHERE authority = ? AND scope_name = ? AND sequence_name = ?",
            described(dialect, "era"),
            described(dialect, "next_counter"),
        ),
    );
    let row: Option<(Option<String>, Option<String>)> = with_pool!(store, pool => {
        sqlx::query_as(AssertSqlSafe(q.0.clone()))
            .bind(authority)
            .bind(scope)
            .bind(sequence)
            .fetch_optional(pool)
            .await
    })
    .map_err(driver_error)?;
    Ok(row.and_then(|(era, next)| {
        integer_in("era", era.as_deref(), 0..=i64::MAX)
            .and_then(|_| integer_in("next_counter", next.as_deref(), NEXT_MIN_SQL..=NEXT_MAX_SQL))
            .err()
    }))
}

/// Where a new counter row starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowStart {
    /// Era 0, next counter 1: an authority's first block of the sequence.
    Fresh,
    /// At the highest era and next counter of the sequence's other rows: the one-at-a-time
    /// counter, whose values rows of other keys may have handed out before it was keyed 0.
    AfterSiblings,
}

/// Creates the row of (authority, scope, sequence) unless it exists.
pub(crate) async fn create_row(
    store: &SqlStore,
    authority: i16,
    scope: &str,
    sequence: &str,
    start: RowStart,
) -> Result<(), AuthorityError> {
    let (insert, ignore) = if store.dialect() == Dialect::MySql {
        ("INSERT IGNORE", "")
    } else {
        ("INSERT", " ON CONFLICT DO NOTHING")
    };
    let values = match start {
        RowStart::Fresh => "VALUES (?, ?, ?, 0, 1)",
        RowStart::AfterSiblings => {
            "SELECT ?, ?, ?, COALESCE(MAX(era), 0), COALESCE(MAX(next_counter), 1) \
             FROM gdid_counters WHERE scope_name = ? AND sequence_name = ?"
        }
    };
    let q = sql(
        store.dialect(),
        &format!(
            "{insert} INTO gdid_counters (authority, scope_name, sequence_name, era, next_counter) \
             {values}{ignore}"
        ),
    );
    with_pool!(store, pool => {
        let query = sqlx::query(AssertSqlSafe(q.0.clone()))
            .bind(authority)
            .bind(scope)
            .bind(sequence);
        let query = if start == RowStart::AfterSiblings {
            query.bind(scope).bind(sequence)
        } else {
            query
        };
        query.execute(pool).await.map(drop)
    })
    .map_err(driver_error)
}

/// On MySQL a value out of range in the update (1264, SQLSTATE 22003; `LAST_INSERT_ID` is
/// unsigned) means the row is corrupt, and the update did not happen. The update's conditions
/// keep negative counters out; this is the last line.
fn out_of_range_is_corrupt(error: sqlx::Error) -> AuthorityError {
    if let sqlx::Error::Database(e) = &error
        && e.code().as_deref() == Some("22003")
    {
        return AuthorityError::Corrupt(format!("the counter row holds a value out of range: {e}"));
    }
    driver_error(error)
}

use gdid_core::COUNTER_MAX;

/// `COUNTER_MAX` as SQL binds it (it fits in a BIGINT).
pub(crate) const COUNTER_MAX_SQL: i64 = (1 << 60) - 1;

/// The smallest `next_counter` an authority writes: a new row holds 1 and every update leaves the
/// end of a block of at least 1. A 0 would hand out counter 0 and then the counters from 1 again.
const NEXT_MIN_SQL: i64 = 1;

/// The largest `next_counter` an authority writes: `COUNTER_MAX + 1`, the era used up.
const NEXT_MAX_SQL: i64 = COUNTER_MAX_SQL + 1;

/// A size as SQL binds it.
pub(crate) fn size_sql(size: u64) -> Result<i64, AuthorityError> {
    if size == 0 || size > COUNTER_MAX {
        return Err(AuthorityError::InvalidSize(size));
    }
    i64::try_from(size).map_err(|_| AuthorityError::InvalidSize(size))
}

/// Sorts a driver error: a value of the wrong type in the table is a corrupt row, the rest is the
/// store failing.
pub(crate) fn driver_error(error: sqlx::Error) -> AuthorityError {
    match error {
        sqlx::Error::ColumnDecode { .. }
        | sqlx::Error::Decode(_)
        | sqlx::Error::ColumnNotFound(_) => AuthorityError::Corrupt(error.to_string()),
        other => AuthorityError::store(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sql_counter_max_is_counter_max() {
        assert_eq!(u64::try_from(COUNTER_MAX_SQL), Ok(COUNTER_MAX));
    }

    #[test]
    fn sizes_outside_the_counter_space_are_refused() {
        assert!(matches!(size_sql(0), Err(AuthorityError::InvalidSize(0))));
        assert_eq!(size_sql(7).unwrap(), 7);
    }
}
