//! The window tables of one shard, and every statement on them, written once for the three
//! dialects (`?` placeholders, numbered for PostgreSQL); only the lock clause and the transaction
//! start differ.
//!
//! A window row that breaks `window_start <= next_hi <= window_end` is corrupt: no value is taken
//! from it, and reading it, or finding no open window while it is there, is an error naming it
//! (`sqlx::Error::Decode`, the shard's error type).

use gdid_engine::AuthorityError;
use gdid_engine::backend::{StoredInt, retry};
use gdid_engine::windows::{VALUE_MAX, Window, WindowShard};

use crate::error::{is_duplicate_key, is_lost_race};
use crate::lineage::LineageSql;
use crate::statement::{sql, with_live_pool};
use crate::store::{Dialect, SqlStore};
use crate::stored::{described, integer_guard, stored_int};
use crate::{schema, tables};

/// Field `field` of `record` as a window value, 0 or more ([`StoredInt::decode`], the engine's
/// one decoder), or the shard's error for a corrupt value (`sqlx::Error::Decode`).
fn window_value(record: &str, field: &str, value: StoredInt) -> Result<u64, sqlx::Error> {
    value
        .decode(record, field, 0..=i64::MAX)
        .map_err(|error| sqlx::Error::Decode(corrupt_row(error).into()))
}

/// A corrupt row's error as the window statements say it: `corrupt row: ` and what is wrong.
fn corrupt_row(error: AuthorityError) -> String {
    match error {
        AuthorityError::Corrupt(reason) => format!("corrupt row: {reason}"),
        other => format!("corrupt row: {other}"),
    }
}

/// How messages name the window row of (`sequence`, `start`) of `table`.
fn window_row(table: &str, sequence: &str, start: &str) -> String {
    format!("the {table} row (sequence {sequence:?}, window_start {start})")
}

/// A window row as it is stored, checked: non-negative, and `start <= next_hi <= end`.
fn checked_window(
    sequence: &str,
    (start, end, next_hi): (i64, i64, i64),
) -> Result<Window, sqlx::Error> {
    let record = window_row("gdid_windows", sequence, &start.to_string());
    let window = Window {
        start: window_value(&record, "window_start", start.into())?,
        end: window_value(&record, "window_end", end.into())?,
        next_hi: window_value(&record, "next_hi", next_hi.into())?,
    };
    let reason = if window.start > window.end {
        "window_start is after window_end"
    } else if window.next_hi < window.start {
        "next_hi is before window_start"
    } else if window.next_hi > window.end {
        "next_hi is after window_end"
    } else {
        return Ok(window);
    };
    Err(sqlx::Error::Decode(
        format!(
            "corrupt row: {record}: {reason} (window_start {start}, window_end {end}, next_hi \
             {next_hi})"
        )
        .into(),
    ))
}

/// The first window or claim row of `sequence` holding a value that is not a non-negative
/// integer (on SQLite, which stores any type in any column, text or a real too), as the error
/// naming it. Run before any statement compares or orders window ends: SQLite orders text above
/// every integer, so a text end would otherwise be the highest one.
async fn first_non_integer(store: &SqlStore, sequence: &str) -> Result<(), sqlx::Error> {
    let dialect = store.dialect();
    let bad = |columns: &[&str]| {
        let typed = match dialect {
            Dialect::Sqlite => columns
                .iter()
                .map(|c| format!(" OR typeof({c}) != 'integer'"))
                .collect::<String>(),
            Dialect::MySql | Dialect::Postgres => String::new(),
        };
        let negative = columns
            .iter()
            .map(|c| format!("{c} < 0"))
            .collect::<Vec<_>>()
            .join(" OR ");
        format!("({negative}{typed})")
    };
    let d = |column| described(dialect, column);
    let text = format!(
        "SELECT 'gdid_windows', {start}, {start}, {end}, {next} FROM gdid_windows \
         WHERE sequence_name = ? AND {bad_window} \
         UNION ALL SELECT 'gdid_window_claims', {start}, {start}, {end}, 'integer 0' \
         FROM gdid_window_claims WHERE sequence_name = ? AND {bad_claim}",
        start = d("window_start"),
        end = d("window_end"),
        next = d("next_hi"),
        bad_window = bad(&["window_start", "window_end", "next_hi"]),
        bad_claim = bad(&["window_start", "window_end"]),
    );
    let q = sql(dialect, &text);
    type Row = (
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let row: Option<Row> = with_live_pool!(store, pool => sqlx::query_as(store.statement(&q.0))
        .bind(sequence)
        .bind(sequence)
        .fetch_optional(pool)
        .await)?;
    let Some((table, key, start, end, next)) = row else {
        return Ok(());
    };
    let key = key.as_deref().unwrap_or("NULL");
    let key = key.split_once(' ').map_or(key, |(_, value)| value);
    let record = window_row(&table, sequence, key);
    for (field, value) in [
        ("window_start", start),
        ("window_end", end),
        ("next_hi", next),
    ] {
        window_value(&record, field, stored_int(value.as_deref()))?;
    }
    Err(sqlx::Error::Decode(
        format!("corrupt row: {record}: a value that is not a non-negative integer").into(),
    ))
}

fn to_i64(value: u64) -> Result<i64, sqlx::Error> {
    i64::try_from(value)
        .map_err(|_| sqlx::Error::Encode(format!("{value} does not fit a BIGINT").into()))
}

impl WindowShard for SqlStore {
    type Error = sqlx::Error;

    /// A row that does not decode, or holds a window that cannot be right.
    fn is_corrupt(error: &sqlx::Error) -> bool {
        matches!(
            error,
            sqlx::Error::Decode(_) | sqlx::Error::ColumnDecode { .. }
        )
    }

    fn is_switched(error: &sqlx::Error) -> bool {
        matches!(error, sqlx::Error::Configuration(inner) if inner.is::<SwitchedWindows>())
    }

    /// Every open window is closed, of this server's lineage or another's: after a restore the
    /// server's own windows may be behind values they handed out too. Closing loses values, never
    /// repeats one.
    async fn skip(&self, sequence: &str, by: u64) -> Result<Option<u64>, sqlx::Error> {
        let lineage = LineageSql::of(self).await?;
        skip(self, lineage.as_ref(), sequence, to_i64(by)?)
            .await
            .map(Some)
    }

    async fn prepare(&self) -> Result<(), sqlx::Error> {
        schema::ensure(
            self,
            &[
                &tables::WINDOWS,
                &tables::WINDOW_CLAIMS,
                &tables::WINDOW_STORE,
                &tables::AUTHORITY,
            ],
        )
        .await
    }

    /// Two statements: the start of the newest used-up window past the `keep` latest, then the
    /// used-up windows up to it (a used-up window never opens again, so the two need no lock).
    async fn prune(&self, sequence: &str, keep: u64) -> Result<u64, sqlx::Error> {
        retry::run_driver(
            retry::ATTEMPTS,
            || self.prune_once(sequence, keep),
            is_lost_race,
        )
        .await
    }

    /// The one row of `gdid_window_store` (id 1), inserted if absent, read back.
    async fn identity(&self, candidate: &str) -> Result<String, sqlx::Error> {
        retry::run_driver(
            retry::ATTEMPTS,
            || self.identity_once(candidate),
            is_lost_race,
        )
        .await
    }

    async fn ping(&self) -> Result<(), sqlx::Error> {
        with_live_pool!(self, pool => sqlx::query("SELECT 1").execute(pool).await.map(drop))
    }

    async fn sequences(&self) -> Result<Vec<String>, sqlx::Error> {
        let text = "SELECT sequence_name FROM gdid_windows \
                    UNION SELECT sequence_name FROM gdid_window_claims";
        with_live_pool!(self, pool => sqlx::query_scalar(self.statement(text)).fetch_all(pool).await)
    }

    async fn high_water(&self, sequence: &str) -> Result<u64, sqlx::Error> {
        first_non_integer(self, sequence).await?;
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
        let high: i64 = with_live_pool!(self, pool => sqlx::query_scalar(self.statement(&q.0))
            .bind(sequence)
            .bind(sequence)
            .fetch_one(pool)
            .await)?;
        window_value("the highest window end", "window_end", high.into())
    }

    async fn open_windows(&self, sequence: &str) -> Result<u64, sqlx::Error> {
        let q = sql(
            self.dialect(),
            "SELECT COUNT(*) FROM gdid_windows WHERE sequence_name = ? AND next_hi < window_end",
        );
        let count: i64 = with_live_pool!(self, pool => sqlx::query_scalar(self.statement(&q.0))
            .bind(sequence)
            .fetch_one(pool)
            .await)?;
        window_value("the count of open windows", "COUNT(*)", count.into())
    }

    async fn windows(&self, sequence: &str) -> Result<Vec<Window>, sqlx::Error> {
        first_non_integer(self, sequence).await?;
        let q = sql(
            self.dialect(),
            "SELECT window_start, window_end, next_hi FROM gdid_windows \
             WHERE sequence_name = ? ORDER BY window_start",
        );
        let rows: Vec<(i64, i64, i64)> = with_live_pool!(self, pool => sqlx::query_as(self.statement(&q.0))
            .bind(sequence)
            .fetch_all(pool)
            .await)?;
        rows.into_iter()
            .map(|row| checked_window(sequence, row))
            .collect()
    }

    async fn claim(&self, sequence: &str, start: u64, end: u64) -> Result<bool, sqlx::Error> {
        retry::run_driver(
            retry::ATTEMPTS,
            || self.claim_once(sequence, start, end),
            is_lost_race,
        )
        .await
    }

    /// The window keeps the lineage of the server that opens it.
    async fn open(&self, sequence: &str, start: u64, end: u64) -> Result<(), sqlx::Error> {
        retry::run_driver(
            retry::ATTEMPTS,
            || self.open_once(sequence, start, end),
            is_lost_race,
        )
        .await
    }

    /// Skips a window another client holds (`FOR UPDATE SKIP LOCKED`); if that leaves none,
    /// waits for it instead: "every open window is busy" is not "no open window". With none
    /// open, a corrupt window of the sequence is reported rather than "no open window".
    async fn take(&self, sequence: &str, n: u64) -> Result<Option<(u64, u64)>, sqlx::Error> {
        retry::run_driver(
            retry::ATTEMPTS,
            || self.take_once(sequence, n),
            is_lost_race,
        )
        .await
    }
}

/// The statements of [`WindowShard`] that write, each tried once: the trait's methods run them
/// under the one retry policy ([`retry::run_driver`]), so that a lost race the server rolled
/// back (a deadlock, a Galera certification conflict) is tried again.
impl SqlStore {
    async fn prune_once(&self, sequence: &str, keep: u64) -> Result<u64, sqlx::Error> {
        let dialect = self.dialect();
        let used = format!(
            "sequence_name = ? AND next_hi >= window_end{}",
            integer_guard(dialect, &["window_start", "window_end", "next_hi"])
        );
        let cutoff = sql(
            dialect,
            &format!(
                "SELECT window_start FROM gdid_windows WHERE {used} \
                 ORDER BY window_start DESC LIMIT 1 OFFSET ?"
            ),
        );
        let keep = to_i64(keep)?;
        let start: Option<i64> = with_live_pool!(self, pool => sqlx::query_scalar(self.statement(&cutoff.0))
            .bind(sequence)
            .bind(keep)
            .fetch_optional(pool)
            .await)?;
        let Some(start) = start else {
            return Ok(0);
        };
        let delete = sql(
            dialect,
            &format!("DELETE FROM gdid_windows WHERE {used} AND window_start <= ?"),
        );
        with_live_pool!(self, pool => sqlx::query(self.statement(&delete.0))
            .bind(sequence)
            .bind(start)
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))
    }

    async fn identity_once(&self, candidate: &str) -> Result<String, sqlx::Error> {
        let insert = sql(
            self.dialect(),
            "INSERT INTO gdid_window_store (id, identity) VALUES (1, ?)",
        );
        let inserted = with_live_pool!(self, pool => sqlx::query(self.statement(&insert.0))
            .bind(candidate)
            .execute(pool)
            .await
            .map(drop));
        match inserted {
            Ok(()) => {}
            Err(e) if is_duplicate_key(&e) => {}
            Err(e) => return Err(e),
        }
        let select = "SELECT identity FROM gdid_window_store WHERE id = 1";
        let stored: Result<Option<String>, sqlx::Error> = with_live_pool!(self, pool => sqlx::query_scalar(self.statement(select)).fetch_one(pool).await);
        let reason = match stored {
            Ok(Some(identity)) if !identity.is_empty() => return Ok(identity),
            Ok(Some(_)) => "identity is empty".to_owned(),
            Ok(None) => "identity is NULL".to_owned(),
            Err(sqlx::Error::ColumnDecode { source, .. }) => format!("identity: {source}"),
            Err(e) => return Err(e),
        };
        Err(sqlx::Error::Decode(
            format!("corrupt row: the gdid_window_store row (id 1): {reason}, expected a text")
                .into(),
        ))
    }

    async fn claim_once(&self, sequence: &str, start: u64, end: u64) -> Result<bool, sqlx::Error> {
        let q = sql(
            self.dialect(),
            "INSERT INTO gdid_window_claims (sequence_name, window_start, window_end) \
             VALUES (?, ?, ?)",
        );
        let (start, end) = (to_i64(start)?, to_i64(end)?);
        let inserted = with_live_pool!(self, pool => sqlx::query(self.statement(&q.0))
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

    async fn open_once(&self, sequence: &str, start: u64, end: u64) -> Result<(), sqlx::Error> {
        let lineage = LineageSql::of(self).await?;
        let identity = lineage.map_or("NULL", |l| l.identity);
        let q = sql(
            self.dialect(),
            &format!(
                "INSERT INTO gdid_windows (sequence_name, window_start, window_end, next_hi, \
                 lineage) VALUES (?, ?, ?, ?, {identity})"
            ),
        );
        let (start, end) = (to_i64(start)?, to_i64(end)?);
        with_live_pool!(self, pool => sqlx::query(self.statement(&q.0))
            .bind(sequence)
            .bind(start)
            .bind(end)
            .bind(start)
            .execute(pool)
            .await
            .map(drop))
    }

    async fn take_once(&self, sequence: &str, n: u64) -> Result<Option<(u64, u64)>, sqlx::Error> {
        let n = to_i64(n)?;
        let lineage = LineageSql::of(self).await?;
        let lineage = lineage.as_ref();
        if let Some(taken) = take(self, lineage, sequence, n, true).await? {
            return Ok(Some(taken));
        }
        if let Some(taken) = take(self, lineage, sequence, n, false).await? {
            return Ok(Some(taken));
        }
        if let Some(lineage) = lineage {
            let foreign = open_elsewhere(self, lineage, sequence).await?;
            if foreign > 0 {
                return Err(sqlx::Error::Configuration(Box::new(SwitchedWindows {
                    sequence: sequence.to_owned(),
                    windows: foreign,
                })));
            }
        }
        first_non_integer(self, sequence).await?;
        match first_malformed(self, sequence).await? {
            Some(row) => checked_window(sequence, row).map(|_| None),
            None => Ok(None),
        }
    }
}

/// The first window row of `sequence` that breaks `window_start <= next_hi <= window_end`.
async fn first_malformed(
    store: &SqlStore,
    sequence: &str,
) -> Result<Option<(i64, i64, i64)>, sqlx::Error> {
    let q = sql(
        store.dialect(),
        "SELECT window_start, window_end, next_hi FROM gdid_windows WHERE sequence_name = ? \
         AND (window_start > window_end OR next_hi < window_start OR next_hi > window_end) \
         ORDER BY window_start LIMIT 1",
    );
    with_live_pool!(store, pool => sqlx::query_as(store.statement(&q.0))
        .bind(sequence)
        .fetch_optional(pool)
        .await)
}

/// Takes up to `n` values from the first open window of `sequence`, in one transaction that
/// locks the window row, never passing `window_end`: `(first, count)`, or `None` when no window
/// is open. With `skip_locked`, a window another transaction holds is passed over (the next
/// open one is used); without it, the transaction waits for it.
///
/// With the server's `lineage`, only a window of its lineage is taken from, and it keeps it.
async fn take(
    store: &SqlStore,
    lineage: Option<&LineageSql>,
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
             WHERE sequence_name = ? AND next_hi < window_end{guard}{same} \
             ORDER BY window_start LIMIT 1{lock}",
            guard = integer_guard(dialect, &["window_start", "window_end", "next_hi"]),
            same = lineage.map_or_else(String::new, |l| format!(" AND {}", l.same())),
        ),
    );
    let adopt = lineage.map_or_else(String::new, |l| format!(", lineage = {}", l.identity));
    let update = sql(
        dialect,
        &format!(
            "UPDATE gdid_windows SET next_hi = ?{adopt} \
             WHERE sequence_name = ? AND window_start = ?"
        ),
    );
    with_live_pool!(store, pool => {
        let mut tx = pool.begin_with(begin).await?;
        let row: Option<(i64, i64, i64)> = sqlx::query_as(store.statement(&select.0))
            .bind(sequence)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(None);
        };
        let window = match checked_window(sequence, row) {
            Ok(window) => window,
            Err(corrupt) => {
                tx.rollback().await?;
                return Err(corrupt);
            }
        };
        let (start, next) = (row.0, row.2);
        let count = (window.end - window.next_hi).min(n.unsigned_abs());
        let new_next = next + to_i64(count)?;
        sqlx::query(store.statement(&update.0))
            .bind(new_next)
            .bind(sequence)
            .bind(start)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some((window.next_hi, count)))
    })
}

/// The open windows of a sequence on a shard whose server is not the one that last moved them
/// ([`WindowShard::is_switched`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "{windows} open window(s) of {sequence} were last moved on another database server (a \
     failover or a restore): none is taken from until gdid sequences skip-windows"
)]
struct SwitchedWindows {
    sequence: String,
    windows: i64,
}

/// How many open windows of `sequence` are of another lineage than the server's.
async fn open_elsewhere(
    store: &SqlStore,
    lineage: &LineageSql,
    sequence: &str,
) -> Result<i64, sqlx::Error> {
    let q = sql(
        store.dialect(),
        &format!(
            "SELECT COUNT(*) FROM gdid_windows WHERE sequence_name = ? \
             AND next_hi < window_end AND NOT {}",
            lineage.same()
        ),
    );
    with_live_pool!(store, pool => sqlx::query_scalar(store.statement(&q.0))
        .bind(sequence)
        .fetch_one(pool)
        .await)
}

/// [`WindowShard::skip`]: closes every open window of `sequence` (giving it the server's
/// `lineage`, if it keeps one), then claims `by` values at the shard's high-water mark (a claim of
/// that start made meanwhile by an agent moves the mark: tried again from there). How many
/// windows closed.
async fn skip(
    store: &SqlStore,
    lineage: Option<&LineageSql>,
    sequence: &str,
    by: i64,
) -> Result<u64, sqlx::Error> {
    let adopt = lineage.map_or_else(String::new, |l| format!(", lineage = {}", l.identity));
    let close = sql(
        store.dialect(),
        &format!(
            "UPDATE gdid_windows SET next_hi = window_end{adopt} \
             WHERE sequence_name = ? AND next_hi < window_end"
        ),
    );
    let closed = with_live_pool!(store, pool => sqlx::query(store.statement(&close.0))
        .bind(sequence)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
    for _ in 0..8 {
        let start = store.high_water(sequence).await?;
        let end = start
            .checked_add(by.unsigned_abs())
            .filter(|end| *end <= VALUE_MAX);
        let end = end.ok_or_else(|| {
            sqlx::Error::Encode(format!("skipping {by} values past {start} passes 2^63").into())
        })?;
        if store.claim(sequence, start, end).await? {
            return Ok(closed);
        }
    }
    Err(sqlx::Error::Protocol(format!(
        "agents kept claiming windows of {sequence} at the high-water mark: try again"
    )))
}
