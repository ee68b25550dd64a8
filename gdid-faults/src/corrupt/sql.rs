//! The corrupt-row cases on MySQL/MariaDB, PostgreSQL and SQLite.
//!
//! Every column the library writes is `BIGINT NOT NULL`, so "a missing field" (`NULL`) cannot be
//! stored on any of the three: that case is left out. MariaDB and PostgreSQL cannot store text
//! in a `BIGINT` either: there "the wrong type" is the nearest they can express, a value above
//! the 60-bit counter range; SQLite stores the text as it is.

use gdid_engine::{Authority, IdGenerator, Pick, RangeLayout};
use gdid_sql::{Dialect, SqlAuthority, SqlCounter, SqlShardedCounter, SqlStore, redact};
use gdid_testkit::fresh;

use super::{Answer, CaseOutcome, Place, Via, ask, ask_via, run_case};
use crate::error::SetupError;

/// The scope of every counter row the cases write.
const SCOPE: &str = "faults";

/// A value above the 60-bit counter range (`2^62`): the nearest to "the wrong type" a `BIGINT`
/// column can hold.
const ABOVE_COUNTER_RANGE: i64 = 1 << 62;

/// Runs the cases on the store of `url`.
pub(super) async fn cases(url: &str) -> Result<Vec<CaseOutcome>, SetupError> {
    let store = SqlStore::connect(url).await?;
    let authority = SqlAuthority::new(store.clone(), 1, &redact(url))?;
    authority.ensure_schema().await?;
    let sqlite = store.dialect() == Dialect::Sqlite;
    let wrong_type = if sqlite {
        "'abc'".to_owned()
    } else {
        ABOVE_COUNTER_RANGE.to_string()
    };
    let not_an_integer = if sqlite { "1.5" } else { &wrong_type };
    let mut outcomes = Vec::new();
    let counter_cases = [
        (
            "wrong type: authority counter",
            "next_counter",
            wrong_type.as_str(),
            Via::Authority,
        ),
        (
            "negative: authority counter",
            "next_counter",
            "-1",
            Via::Authority,
        ),
        (
            "zero: authority counter (no authority writes 0)",
            "next_counter",
            "0",
            Via::Authority,
        ),
        (
            "negative: era, through a BlockGenerator",
            "era",
            "-1",
            Via::BlockGenerator,
        ),
        (
            "wrong type: one-at-a-time counter",
            "next_counter",
            not_an_integer,
            Via::Counter,
        ),
        ("negative: one-at-a-time era", "era", "-1", Via::Counter),
    ];
    for (case, field, value, via) in counter_cases {
        let sequence = fresh("corrupt");
        let corrupted = format!("gdid_counters row ({SCOPE}, {sequence}): {field} = {value}");
        let task = counter_case(authority.clone(), sequence, field, value.to_owned(), via);
        outcomes.push(run_case(case, corrupted, task).await?);
    }
    let mut range_cases = vec![
        (
            "range overrun: sharded counter, current beyond its end",
            "max_value + 10",
        ),
        ("negative: sharded counter's current value", "-1"),
    ];
    if sqlite {
        // Any value of a range fits a BIGINT: elsewhere there is no nearest "wrong type".
        range_cases.push(("wrong type: sharded counter's current value", "'abc'"));
    }
    for (case, value) in range_cases {
        let sequence = fresh("corrupt");
        let corrupted = format!("gdid_ranges row ({sequence}, 0): next_value = {value}");
        let task = range_case(store.clone(), sequence, value);
        outcomes.push(run_case(case, corrupted, task).await?);
    }
    let window_cases = [
        (
            "start > end: window start moved past its end",
            "window_start",
            "window_end + 100",
        ),
        // `window_end` first: MySQL assigns left to right, and the others from the old row.
        (
            "start > end: window end moved below its start",
            "window_end",
            "window_start + 5, window_start = window_start + 50",
        ),
    ];
    for (case, field, assignment) in window_cases {
        let sequence = fresh("corrupt");
        let corrupted = format!("gdid_windows row of {sequence}: {field} = {assignment}");
        let task = window_case(store.clone(), sequence, field, assignment);
        outcomes.push(run_case(case, corrupted, task).await?);
    }
    Ok(outcomes)
}

/// A counter row of `sequence` with `field` set to `value`.
async fn counter_case(
    authority: SqlAuthority,
    sequence: String,
    field: &'static str,
    value: String,
    via: Via,
) -> Result<Vec<Answer>, SetupError> {
    // The row the path asked through reads: the authority's, or the one-at-a-time counter's.
    if via == Via::Counter {
        SqlCounter::new(authority.clone(), SCOPE, &sequence)
            .next_id()
            .await?;
    } else {
        authority.allocate(SCOPE, &sequence, 1).await?;
    }
    execute(
        authority.store(),
        format!(
            "UPDATE gdid_counters SET {field} = {value} \
             WHERE scope_name = '{SCOPE}' AND sequence_name = '{sequence}'"
        ),
    )
    .await?;
    let place = Place::new(&sequence, field);
    ask_via(via, &place, (SCOPE, &sequence), authority, SqlCounter::new).await
}

/// The one range of a sharded counter of `sequence`, its `next_value` set to `value`.
async fn range_case(
    store: SqlStore,
    sequence: String,
    value: &'static str,
) -> Result<Vec<Answer>, SetupError> {
    let layout = RangeLayout::new(0, 1_000, 1)?;
    let ids = SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::RoundRobin).await?;
    ids.next_id().await?;
    execute(
        &store,
        format!("UPDATE gdid_ranges SET next_value = {value} WHERE sequence_name = '{sequence}'"),
    )
    .await?;
    let place = Place::new(sequence, "next_value");
    Ok(ask(&place, || ids.next_id()).await)
}

/// The one window of `sequence`, its `field` set to `assignment`.
async fn window_case(
    store: SqlStore,
    sequence: String,
    field: &'static str,
    assignment: &'static str,
) -> Result<Vec<Answer>, SetupError> {
    let corrupt = execute(
        &store,
        format!(
            "UPDATE gdid_windows SET {field} = {assignment} WHERE sequence_name = '{sequence}'"
        ),
    );
    let place = Place::new(&sequence, field);
    super::window_case(store.clone(), &sequence, corrupt, place).await
}

/// Runs raw SQL (the values are the cases' own, formatted in), the gdid tables it names
/// qualified with the store's schema.
async fn execute(store: &SqlStore, sql: String) -> Result<(), SetupError> {
    let sql = sqlx::AssertSqlSafe(store.qualify(&sql));
    gdid_sql::with_pool!(store, pool => sqlx::query(sql).execute(pool).await.map(drop))?;
    Ok(())
}
