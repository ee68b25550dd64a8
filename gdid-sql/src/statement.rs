//! Writing a statement once for the three dialects: `?` placeholders (numbered for PostgreSQL)
//! and a macro that runs the same code on whichever pool a store holds.

use sqlx::AssertSqlSafe;

use crate::store::{Dialect, SqlStore};

/// Runs `$body` with `$pool` bound to a [`SqlStore`]'s pool, whatever its dialect: one piece of
/// sqlx code for MySQL/MariaDB, PostgreSQL and SQLite (it is compiled once per pool type). With
/// the three drivers only (the default features): a match written in another crate cannot ask
/// which of this crate's features are on.
///
/// ```no_run
/// use gdid_sql::{SqlStore, with_pool};
///
/// # async fn count(store: &SqlStore) -> Result<i64, sqlx::Error> {
/// let rows: i64 = with_pool!(store, pool => {
///     sqlx::query_scalar("SELECT COUNT(*) FROM gdid_counters").fetch_one(pool).await
/// })?;
/// # Ok(rows)
/// # }
/// ```
#[cfg(all(feature = "mysql", feature = "postgres", feature = "sqlite"))]
#[macro_export]
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            $crate::SqlStore::MySql($pool) => $body,
            $crate::SqlStore::Postgres($pool) => $body,
            $crate::SqlStore::Sqlite($pool) => $body,
        }
    };
}

/// As [`with_pool!`](crate::with_pool), for the statements of this crate, with whichever drivers
/// are built in: a MySQL or PostgreSQL pool with no connection first checks that its server
/// takes one ([`reachable`](crate::reachable)), so that a server that refuses connections is the
/// error at once, where the pool would try again until its timeout. `$body` is then not run: it
/// is a `Result` whose error type converts from `sqlx::Error`.
macro_rules! with_live_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            #[cfg(feature = "mysql")]
            $crate::SqlStore::MySql($pool) => match $crate::reachable($pool).await {
                Ok(()) => $body,
                Err(refused) => Err(refused.into()),
            },
            #[cfg(feature = "postgres")]
            $crate::SqlStore::Postgres($pool) => match $crate::reachable($pool).await {
                Ok(()) => $body,
                Err(refused) => Err(refused.into()),
            },
            #[cfg(feature = "sqlite")]
            $crate::SqlStore::Sqlite($pool) => $body,
        }
    };
}
pub(crate) use with_live_pool;

/// Rewrites `?` placeholders as `$1, $2, …` for PostgreSQL.
pub(crate) fn sql(dialect: Dialect, text: &str) -> AssertSqlSafe<String> {
    if dialect != Dialect::Postgres {
        return AssertSqlSafe(text.to_owned());
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut n = 0;
    for c in text.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    AssertSqlSafe(out)
}

/// `CREATE TABLE IF NOT EXISTS name (columns)` on any dialect (InnoDB on MySQL). Idempotent, and
/// safe from many processes at once: PostgreSQL can still fail the loser of a creation race
/// (`42P07`; `23505` or `42710`, "type … already exists", on the table's row type), which is
/// success here.
pub(crate) async fn create_table(
    store: &SqlStore,
    name: &str,
    columns: &str,
) -> Result<(), sqlx::Error> {
    let engine = if store.dialect() == Dialect::MySql {
        " ENGINE=InnoDB"
    } else {
        ""
    };
    let ddl = format!("CREATE TABLE IF NOT EXISTS {name} ({columns}){engine}");
    match with_live_pool!(store, pool => sqlx::query(AssertSqlSafe(ddl)).execute(pool).await.map(drop))
    {
        Ok(()) => Ok(()),
        Err(sqlx::Error::Database(e))
            if matches!(e.code().as_deref(), Some("42P07" | "23505" | "42710")) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Creates `tables` (name, columns) in order, each as [`create_table`] does.
pub(crate) async fn create_tables(
    store: &SqlStore,
    tables: &[(&str, &str)],
) -> Result<(), sqlx::Error> {
    for (name, columns) in tables {
        create_table(store, name, columns).await?;
    }
    Ok(())
}

/// Adds `columns` (name, SQL type; each `NULL`able) to `table`, made before they were kept.
/// Idempotent and safe from many processes at once: a table that has them is only read (no
/// `ALTER`, no lock), and a column another process added meanwhile is success.
pub(crate) async fn add_columns(
    store: &SqlStore,
    table: &str,
    columns: &[(&str, &str)],
) -> Result<(), sqlx::Error> {
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let probe = format!("SELECT {} FROM {table} WHERE 1 = 0", names.join(", "));
    let probed = with_live_pool!(store, pool => {
        sqlx::query(AssertSqlSafe(probe)).fetch_all(pool).await.map(drop)
    });
    if probed.is_ok() {
        return Ok(());
    }
    for (column, kind) in columns {
        let alter = format!("ALTER TABLE {table} ADD COLUMN {column} {kind} NULL");
        let added = with_live_pool!(store, pool => {
            sqlx::query(AssertSqlSafe(alter)).execute(pool).await.map(drop)
        });
        match added {
            Err(sqlx::Error::Database(e)) if is_duplicate_column(e.as_ref()) => {}
            other => other?,
        }
    }
    Ok(())
}

/// A column that exists already: MySQL/MariaDB 1060, PostgreSQL 42701, SQLite's message.
fn is_duplicate_column(error: &dyn sqlx::error::DatabaseError) -> bool {
    matches!(error.code().as_deref(), Some("42S21" | "42701"))
        || error.message().contains("duplicate column")
        || error.message().contains("Duplicate column")
}
