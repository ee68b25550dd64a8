//! The counter table, `gdid_counters`: one row per (authority, scope, sequence) holding the era
//! and the next counter to hand out, as `CounterState` in gdid-engine. A reservation moves the row
//! forward in one atomic statement, committed before the block is returned:
//!
//! ```text
//! if next + size - 1 > COUNTER_MAX:  era = era + 1, next = size      (the block is era+1, 0..size)
//! else:                              next = next + size              (the block is next..next+size)
//! ```
//!
//! PostgreSQL and SQLite return the new row with `RETURNING`, read to the end of the statement
//! (SQLite gives the row before the statement completes, and commits at completion). MySQL has no
//! `RETURNING` on `UPDATE`: the same update captures the new era in a session variable and the new
//! counter in `LAST_INSERT_ID(expr)`, both under the row lock, and a second statement on the same
//! connection reads them back (no other session can change them). A missing row is created first
//! (era 0, next 1: counter 0 of era 0 is never issued) with an insert that ignores a concurrent
//! one.
//!
//! These are the store side of [`CounterStore`](gdid_engine::backend::CounterStore) (implemented
//! by `SqlAuthority`); the rules (checking names and sizes, creating a missing row and trying
//! again, validating what the row holds) are gdid-engine's
//! [`reserve`](gdid_engine::backend::reserve).
//!
//! The update only matches a row an authority could have written and can still issue ids from:
//! an integer era from 0 to 2^32 - 1 (a row past it is exhausted, left as it is: its era going
//! up by one could overflow) and an integer counter from 1 to 2^60. A corrupt row (a negative
//! counter, a value above the counter range, text in SQLite) is left as it is and reported as
//! [`AuthorityError::Corrupt`], saying which field holds what; moving it would turn it into
//! valid-looking values that repeat ids (a counter of -1 becomes 0, then 1; SQLite reads text
//! as 0).

use gdid_engine::backend::lineage::{CLOCKS_APART_MAX_SECS, Lineage, seconds_now};
use gdid_engine::backend::numbering::COUNTER_KEY;
use gdid_engine::{
    AuthorityError,
    backend::{
        ADVANCED_ERA, Allocations, CounterFields, CounterKey, CounterStart, STORED_COUNTER_MAX,
        STORED_NEXT, StoredCounter, StoredInt, counter_values,
    },
};

use crate::error::driver_kind;
use crate::lineage::LineageSql;
use crate::statement::{sql, with_live_pool};
use crate::store::{Dialect, SqlStore};
use crate::stored::{described, integer_guard, stored_int};

/// The columns of what the last allocations left (`gdid_engine::backend::Allocations`):
/// milliseconds since the Unix epoch, and a size; `NULL` in a row of before they were kept.
const ALLOCATION_COLUMNS: [&str; 3] = ["allocated_at", "previous_at", "allocated_size"];

/// The condition on a row's key (`authority = ? AND scope_name = ? AND sequence_name = ?`),
/// exact on every dialect: MySQL/MariaDB compare `VARCHAR`s without case by default, so two
/// spellings would reach one row there and two rows elsewhere; a byte comparison is added
/// ([`bind_key`] binds the names twice), so a second spelling is refused by the engine's rule
/// of names and case on every store.
fn key_condition(dialect: Dialect) -> &'static str {
    if dialect == Dialect::MySql {
        "authority = ? AND scope_name = ? AND sequence_name = ? \
         AND BINARY scope_name = BINARY ? AND BINARY sequence_name = BINARY ?"
    } else {
        "authority = ? AND scope_name = ? AND sequence_name = ?"
    }
}

/// Binds `key` to a query's [`key_condition`].
macro_rules! bind_key {
    ($query:expr, $dialect:expr, $key:expr) => {{
        let key = $key;
        let query = $query
            .bind(i16::from(key.key))
            .bind(key.scope)
            .bind(key.sequence);
        if $dialect == Dialect::MySql {
            query.bind(key.scope).bind(key.sequence)
        } else {
            query
        }
    }};
}

/// The row of `key`, as error messages name it.
pub(crate) fn row_name(key: &CounterKey<'_>) -> String {
    let CounterKey {
        key,
        scope,
        sequence,
    } = key;
    named_row(key, scope, sequence)
}

/// The row of (`authority`, `scope`, `sequence`), as error messages name it.
fn named_row(authority: &dyn std::fmt::Display, scope: &str, sequence: &str) -> String {
    format!("the gdid_counters row (authority {authority}, scope {scope:?}, sequence {sequence:?})")
}

/// The store, and the lineage of its server when it keeps one: what the statements that move a
/// row, or judge its lineage, are run on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OnServer<'a> {
    pub(crate) store: &'a SqlStore,
    pub(crate) lineage: Option<&'a LineageSql>,
}

/// Moves the row of `key` forward by `size`: the new `(era, next_counter)`, or `None` when no
/// row an authority could have written matched (none, or a corrupt one, left as it is). With the
/// server's `lineage`, the same statement moves a row of another lineage to a new era (see
/// [`CounterStore::advance`](gdid_engine::backend::CounterStore::advance)).
///
/// # Errors
///
/// [`AuthorityError::Corrupt`] for a value the row cannot hold or that cannot be decoded;
/// the driver's errors as [`driver_error`] sorts them.
pub(crate) async fn advance(
    OnServer { store, lineage }: OnServer<'_>,
    key: &CounterKey<'_>,
    size: i64,
    at: Allocations,
) -> Result<Option<[StoredInt; 2]>, AuthorityError> {
    let dialect = store.dialect();
    let (mut era, mut next) = if dialect == Dialect::MySql {
        (
            "IF(next_counter + ? - 1 > ?, era + 1, era)".to_owned(),
            "IF(next_counter + ? - 1 > ?, ?, next_counter + ?)".to_owned(),
        )
    } else {
        (
            "CASE WHEN next_counter + ? - 1 > ? THEN era + 1 ELSE era END".to_owned(),
            "CASE WHEN next_counter + ? - 1 > ? THEN ? ELSE next_counter + ? END".to_owned(),
        )
    };
    // The fence: a row of another lineage goes to era max(era + 1, S, floor), next counter
    // `size` (the block is counters 0..size of the new era); its lineage and the time it
    // changed are recorded. A GDID row without a lineage on a store record of this server
    // starts at the store's floor era. Every assignment reads the row's old `lineage`, which is
    // assigned last (MySQL evaluates SET left to right). The condition's placeholder is this
    // process's clock (a fence is refused when the server's is far from it).
    let mut fencing = String::new();
    let mut condition = String::new();
    if let Some(lineage) = lineage {
        let (same, clock, floor) = (lineage.same_counter(), lineage.clock, lineage.floor());
        era = format!(
            "CASE WHEN {same} THEN GREATEST({era}, CASE WHEN lineage IS NULL \
             AND authority <> 0 THEN {floor} ELSE 0 END) \
             ELSE GREATEST(era + 1, {clock}, {floor}) END"
        );
        next = format!("CASE WHEN {same} THEN {next} ELSE ? END");
        fencing = format!(
            ", fenced_at = CASE WHEN {same} THEN fenced_at ELSE {clock} END, lineage = {}",
            lineage.identity
        );
        condition = format!(" AND ({same} OR {})", lineage.may_fence());
    }
    // MySQL has no RETURNING: the new era in a session variable, the new counter in
    // LAST_INSERT_ID, both read back on the same connection.
    let returning = if dialect == Dialect::MySql {
        era = format!("(@gdid_era := {era})");
        next = format!("LAST_INSERT_ID({next})");
        ""
    } else {
        " RETURNING era, next_counter"
    };
    let update = sql(
        dialect,
        &format!(
            "UPDATE gdid_counters SET era = {era}, next_counter = {next}{fencing}, \
             previous_at = allocated_at, allocated_at = ?, allocated_size = ? \
             WHERE {key} AND era >= {era_min} AND era <= {era_max} \
             AND next_counter >= {min} AND next_counter <= {max}{guard}{condition}{returning}",
            era_min = ADVANCED_ERA.start(),
            era_max = ADVANCED_ERA.end(),
            min = STORED_NEXT.start(),
            max = STORED_NEXT.end(),
            guard = integer_guard(dialect, &["era", "next_counter"]),
            key = key_condition(dialect),
        ),
    );
    let mut values = vec![
        size,
        STORED_COUNTER_MAX,
        size,
        STORED_COUNTER_MAX,
        size,
        size,
    ];
    if lineage.is_some() {
        values.push(size); // the fenced row's next counter
    }
    values.extend([at.at, size]);
    let reserved: Result<Option<(i64, i64)>, sqlx::Error> = with_live_pool!(store, pool => {
        let mut connection = pool.acquire().await.map_err(driver_error)?;
        let mut query = sqlx::query(store.statement(&update.0));
        for value in &values {
            query = query.bind(*value);
        }
        let mut query = bind_key!(query, dialect, key);
        if lineage.is_some() {
            query = query.bind(seconds_now()); // the clock a fence is checked against
        }
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
    Ok(reserved
        .map_err(driver_error)?
        .map(|(era, next)| [StoredInt::Integer(era), StoredInt::Integer(next)]))
}

/// Whether the row of `key` is of the lineage of the server (see
/// [`CounterStore::lineage`](gdid_engine::backend::CounterStore::lineage)): for a GDID row that
/// must move to a new era, also whether the server's clock is too far from this process's.
pub(crate) async fn lineage_of(
    OnServer { store, lineage }: OnServer<'_>,
    key: &CounterKey<'_>,
) -> Result<Lineage, AuthorityError> {
    let Some(lineage) = lineage else {
        return Ok(Lineage::Untracked);
    };
    let dialect = store.dialect();
    let q = sql(
        dialect,
        &format!(
            "SELECT CASE WHEN {same} THEN 1 ELSE 0 END, CASE WHEN {recent} THEN 1 ELSE 0 END, \
             {clock} FROM gdid_counters WHERE {key}",
            same = lineage.same_counter(),
            recent = lineage.recent_fence(),
            clock = lineage.clock,
            key = key_condition(dialect),
        ),
    );
    let row: Option<(i32, i32, i64)> = with_live_pool!(store, pool => {
        let query = sqlx::query_as(store.statement(&q.0));
        bind_key!(query, dialect, key).fetch_optional(pool).await
    })
    .map_err(driver_error)?;
    let here = seconds_now();
    Ok(match row {
        None | Some((1, _, _)) => Lineage::Same,
        Some((_, 0, server))
            if key.key != COUNTER_KEY && (server - here).abs() > CLOCKS_APART_MAX_SECS =>
        {
            Lineage::ClocksApart { server, here }
        }
        Some((_, recent, _)) => Lineage::Changed {
            recent: recent == 1,
        },
    })
}

/// The era and next counter of the row of `key`, whatever they hold, or `None` when there is
/// no row.
pub(crate) async fn read(
    store: &SqlStore,
    key: &CounterKey<'_>,
) -> Result<Option<[StoredInt; 2]>, AuthorityError> {
    let dialect = store.dialect();
    let q = sql(
        dialect,
        &format!(
            "SELECT {}, {} FROM gdid_counters WHERE {}",
            described(dialect, "era"),
            described(dialect, "next_counter"),
            key_condition(dialect),
        ),
    );
    let row: Option<(Option<String>, Option<String>)> = with_live_pool!(store, pool => {
        let query = sqlx::query_as(store.statement(&q.0));
        bind_key!(query, dialect, key).fetch_optional(pool).await
    })
    .map_err(driver_error)?;
    Ok(row.map(|(era, next)| [stored_int(era.as_deref()), stored_int(next.as_deref())]))
}

/// Creates the row of `key` as `start` says, unless it exists. After the siblings, every
/// sibling row is checked first: the new row starts at their highest values, and a corrupt one
/// says nothing about how far it went (skipping it could start the counter below values it
/// handed out), so it is the error, naming the row and the field.
pub(crate) async fn create_row(
    store: &SqlStore,
    key: &CounterKey<'_>,
    start: CounterStart,
) -> Result<(), AuthorityError> {
    if start == CounterStart::AfterSiblings {
        check_siblings(store, key).await?;
    }
    let (authority, scope, sequence) = (i16::from(key.key), key.scope, key.sequence);
    let (insert, ignore) = if store.dialect() == Dialect::MySql {
        ("INSERT IGNORE", "")
    } else {
        ("INSERT", " ON CONFLICT DO NOTHING")
    };
    let at;
    let values = match start {
        CounterStart::Fresh => "VALUES (?, ?, ?, 0, 1)",
        CounterStart::At { era, next } => {
            // Integers checked by the engine: written into the statement, not bound.
            at = format!("VALUES (?, ?, ?, {era}, {next})");
            at.as_str()
        }
        CounterStart::AfterSiblings => {
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
    with_live_pool!(store, pool => {
        let query = sqlx::query(store.statement(&q.0))
            .bind(authority)
            .bind(scope)
            .bind(sequence);
        let query = if start == CounterStart::AfterSiblings {
            query.bind(scope).bind(sequence)
        } else {
            query
        };
        query.execute(pool).await.map(drop)
    })
    .map_err(driver_error)
}

/// Raises the row of `key` to `era`, `next` when it holds valid values below them: whether a
/// row matched (see [`CounterStore::raise`]).
pub(crate) async fn raise(
    OnServer { store, lineage }: OnServer<'_>,
    key: &CounterKey<'_>,
    era: i64,
    next: i64,
) -> Result<bool, AuthorityError> {
    let matching = format!(
        "era >= {era_min} AND era <= {era_max} AND next_counter >= {min} \
         AND next_counter <= {max} AND (era < ? OR (era = ? AND next_counter < ?))",
        era_min = ADVANCED_ERA.start(),
        era_max = ADVANCED_ERA.end(),
        min = STORED_NEXT.start(),
        max = STORED_NEXT.end(),
    );
    // A u64 counter's floor is the operator's answer to a lineage change: it adopts the
    // server's lineage. A GDID row's lineage is the reserving statement's alone.
    let adopt = match lineage {
        Some(lineage) if key.key == COUNTER_KEY => {
            format!(", lineage = {}, fenced_at = NULL", lineage.identity)
        }
        _ => String::new(),
    };
    let set = format!("era = ?, next_counter = ?{adopt}");
    update_row(
        store,
        key,
        (&set, &[era, next]),
        (&matching, &[era, era, next]),
    )
    .await
}

/// Moves the row of `key` back from `from` to `to` while it holds exactly `era`, `from`: whether
/// a row matched (see [`CounterStore::lower`]).
pub(crate) async fn lower(
    OnServer { store, lineage }: OnServer<'_>,
    key: &CounterKey<'_>,
    era: i64,
    from: i64,
    to: i64,
) -> Result<bool, AuthorityError> {
    // Only on the lineage that reserved the block: a copy that missed later blocks must not
    // take back ids after them.
    let matching = match lineage {
        Some(lineage) => format!(
            "era = ? AND next_counter = ? AND lineage = {}",
            lineage.identity
        ),
        None => "era = ? AND next_counter = ?".to_owned(),
    };
    update_row(
        store,
        key,
        ("next_counter = ?", &[to]),
        (&matching, &[era, from]),
    )
    .await
}

/// Runs `UPDATE gdid_counters SET <set> WHERE <the row of key> AND <matching>`, a conditional
/// write of that row when its fields are integers, its placeholders bound to the values of `set`,
/// then the key's, then the values of `matching`: whether a row matched.
async fn update_row(
    store: &SqlStore,
    key: &CounterKey<'_>,
    set: (&str, &[i64]),
    matching: (&str, &[i64]),
) -> Result<bool, AuthorityError> {
    let dialect = store.dialect();
    let update = sql(
        dialect,
        &format!(
            "UPDATE gdid_counters SET {set} WHERE {key}{guard} AND {matching}",
            set = set.0,
            key = key_condition(dialect),
            guard = integer_guard(dialect, &["era", "next_counter"]),
            matching = matching.0,
        ),
    );
    let done = with_live_pool!(store, pool => {
        let mut query = sqlx::query(store.statement(&update.0));
        for value in set.1 {
            query = query.bind(*value);
        }
        let mut query = bind_key!(query, dialect, key);
        for value in matching.1 {
            query = query.bind(*value);
        }
        query.execute(pool).await.map(|done| done.rows_affected())
    })
    .map_err(driver_error)?;
    Ok(done > 0)
}

/// Every row, as stored, in the order of authority, scope and sequence.
pub(crate) async fn records(store: &SqlStore) -> Result<Vec<StoredCounter>, AuthorityError> {
    let dialect = store.dialect();
    let columns = ["authority", "era", "next_counter"]
        .into_iter()
        .chain(ALLOCATION_COLUMNS)
        .map(|column| described(dialect, column))
        .collect::<Vec<_>>()
        .join(", ");
    let q = format!(
        "SELECT scope_name, sequence_name, {columns} FROM gdid_counters \
         ORDER BY authority, scope_name, sequence_name"
    );
    type Row = (
        String,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = with_live_pool!(store, pool => {
        sqlx::query_as(store.statement(&q)).fetch_all(pool).await
    })
    .map_err(driver_error)?;
    Ok(rows
        .into_iter()
        .map(|(scope, sequence, key, era, next, at, before, size)| {
            let int = |value: Option<String>| stored_int(value.as_deref());
            StoredCounter {
                key: int(key),
                scope,
                sequence,
                values: [int(era), int(next)],
                allocations: [int(at), int(before), int(size)],
            }
        })
        .collect())
}

/// The (scope, sequence) of every row whose names equal `key`'s, case ignored.
pub(crate) async fn spellings(
    store: &SqlStore,
    key: &CounterKey<'_>,
) -> Result<Vec<(String, String)>, AuthorityError> {
    let q = sql(
        store.dialect(),
        "SELECT scope_name, sequence_name FROM gdid_counters \
         WHERE LOWER(scope_name) = LOWER(?) AND LOWER(sequence_name) = LOWER(?)",
    );
    with_live_pool!(store, pool => {
        sqlx::query_as(store.statement(&q.0))
            .bind(key.scope)
            .bind(key.sequence)
            .fetch_all(pool)
            .await
    })
    .map_err(driver_error)
}

/// How many sequences of `key`'s scope other than `key`'s have a row (of any authority): see
/// [`CounterStore::sequences_beside`](gdid_engine::backend::CounterStore::sequences_beside).
pub(crate) async fn sequences_beside(
    store: &SqlStore,
    key: &CounterKey<'_>,
) -> Result<u64, AuthorityError> {
    let q = sql(
        store.dialect(),
        "SELECT COUNT(DISTINCT sequence_name) FROM gdid_counters \
         WHERE scope_name = ? AND sequence_name <> ?",
    );
    let count: i64 = with_live_pool!(store, pool => {
        sqlx::query_scalar(store.statement(&q.0))
            .bind(key.scope)
            .bind(key.sequence)
            .fetch_one(pool)
            .await
    })
    .map_err(driver_error)?;
    Ok(u64::try_from(count).unwrap_or_default())
}

/// Checks the era and next counter of every other row of `key`'s scope and sequence.
///
/// # Errors
///
/// [`AuthorityError::Corrupt`] naming the first corrupt row and its field; the driver's errors.
async fn check_siblings(store: &SqlStore, key: &CounterKey<'_>) -> Result<(), AuthorityError> {
    let dialect = store.dialect();
    let q = sql(
        dialect,
        &format!(
            "SELECT {}, {}, {} FROM gdid_counters \
             WHERE scope_name = ? AND sequence_name = ? AND authority <> ?",
            described(dialect, "authority"),
            described(dialect, "era"),
            described(dialect, "next_counter"),
        ),
    );
    let rows: Vec<(Option<String>, Option<String>, Option<String>)> =
        with_live_pool!(store, pool => {
            sqlx::query_as(store.statement(&q.0))
                .bind(key.scope)
                .bind(key.sequence)
                .bind(i16::from(key.key))
                .fetch_all(pool)
                .await
        })
        .map_err(driver_error)?;
    for (authority, era, next) in rows {
        let authority = match stored_int(authority.as_deref()) {
            StoredInt::Integer(number) => number.to_string(),
            StoredInt::Other(what) => what,
            StoredInt::Missing => "NULL".to_owned(),
        };
        let row = named_row(&authority, key.scope, key.sequence);
        let values = [stored_int(era.as_deref()), stored_int(next.as_deref())];
        counter_values(&row, &FIELDS, values)?;
    }
    Ok(())
}

/// On MySQL a value out of range in the update (1264, SQLSTATE 22003; `LAST_INSERT_ID` is
/// unsigned) means the row is corrupt, and the update did not happen. The update's conditions
/// keep negative counters and exhausted eras out; this is the last line. The engine names the
/// row ([`in_record`](gdid_engine::backend::in_record)); this names the field.
fn out_of_range_is_corrupt(error: sqlx::Error) -> AuthorityError {
    if let sqlx::Error::Database(e) = &error
        && e.code().as_deref() == Some("22003")
    {
        return out_of_range(&e.to_string());
    }
    driver_error(error)
}

/// The corrupt row of MySQL's out-of-range `message`, naming the field the message names
/// (MySQL quotes the expression: ``'`db`.`gdid_counters`.`era` + 1'``).
fn out_of_range(message: &str) -> AuthorityError {
    let field = ["era", "next_counter"]
        .into_iter()
        .filter(|field| message.contains(&format!("`{field}`")))
        .collect::<Vec<_>>();
    let field = match field.as_slice() {
        [one] => format!("field {one}"),
        _ => "field era or next_counter".to_owned(),
    };
    AuthorityError::Corrupt(format!(
        "{field} is out of range when moved forward: {message}"
    ))
}

/// The columns of a counter row, as the engine names them in a corrupt row's error.
pub(crate) const FIELDS: CounterFields = CounterFields {
    era: "era",
    next: "next_counter",
};

/// Sorts a driver error into the engine's kinds ([`driver_kind`]): a corrupt row, a lost race
/// ([`AuthorityError::Conflict`], tried again by the engine's retry policy), or the store failing.
pub(crate) fn driver_error(error: sqlx::Error) -> AuthorityError {
    AuthorityError::from_driver(driver_kind(&error), error)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MySQL's out-of-range error names the field it is about; the message says which.
    #[test]
    fn an_out_of_range_field_is_named() {
        let message = "1690 (22003): BIGINT value is out of range in \
                       '`test`.`gdid_counters`.`era` + 1'";
        let error = out_of_range(message);
        assert!(
            matches!(&error, AuthorityError::Corrupt(m)
                if m.starts_with("field era is out of range when moved forward: 1690")),
            "{error}"
        );
        let error = out_of_range("1690 (22003): BIGINT UNSIGNED value is out of range");
        assert!(
            error
                .to_string()
                .contains("field era or next_counter is out of range"),
            "{error}"
        );
    }

    #[test]
    fn rows_are_named_with_their_key() {
        let key = CounterKey {
            key: 3,
            scope: "s",
            sequence: "q",
        };
        assert_eq!(
            row_name(&key),
            "the gdid_counters row (authority 3, scope \"s\", sequence \"q\")"
        );
    }
}
