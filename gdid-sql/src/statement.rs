//! Writing a statement once for the three dialects: `?` placeholders (numbered for PostgreSQL)
//! and a macro that runs the same code on whichever pool a store holds.

use sqlx::AssertSqlSafe;

use crate::dialect::Dialect;

/// Runs `$body` with `$pool` bound to a [`SqlStore`](crate::SqlStore)'s pool, whatever its
/// dialect: one piece of sqlx code for MySQL/MariaDB, PostgreSQL and SQLite (it is compiled once
/// per pool type). With the three drivers only (the default features): a match written in
/// another crate cannot ask which of this crate's features are on.
///
/// The connections are the store's own, set up for its tables. On PostgreSQL each one resolves
/// names with `search_path = pg_catalog, pg_temp` (so that no function or operator another role
/// made can run in it) and commits with `synchronous_commit` at least `on`. So:
///
/// - name every table with its schema: the gdid tables through
///   [`SqlStore::qualify`](crate::SqlStore::qualify), tables of your own outright
///   (`public.orders`): an unqualified name is looked for in `pg_catalog` alone, and an
///   unqualified `CREATE TABLE` is refused there;
/// - leave the session alone: a `SET` stays with its connection when the pool takes it back,
///   and `synchronous_commit = off` there would let the store's later reservations on that
///   connection be acknowledged before they are durable, as a `search_path` there would let
///   names resolve to another role's objects.
///
/// For statements of your application, a pool of your own is the simpler choice.
///
/// ```no_run
/// use gdid_sql::{SqlStore, with_pool};
///
/// # async fn count(store: &SqlStore) -> Result<i64, sqlx::Error> {
/// let text = store.qualify("SELECT COUNT(*) FROM gdid_counters");
/// let rows: i64 = with_pool!(store, pool => {
///     sqlx::query_scalar(sqlx::AssertSqlSafe(text)).fetch_one(pool).await
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
            $crate::SqlStore::Postgres($pool, _) => $body,
            $crate::SqlStore::Sqlite($pool) => $body,
        }
    };
}

/// As [`with_pool!`](crate::with_pool), for the statements of this crate, with whichever drivers
/// are built in: a MySQL or PostgreSQL pool with no connection first checks that its server
/// takes one ([`reachable`](crate::reachable)), so that a server that refuses connections is the
/// error at once, where the pool would try again until its timeout; a PostgreSQL store that
/// connects on first use settles its schema then, for the same reason. `$body` is then not run: it
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
            $crate::SqlStore::Postgres($pool, schema) => match $crate::reachable($pool).await {
                Ok(()) => match schema.settle_pool($pool).await {
                    Ok(()) => $body,
                    Err(refused) => Err(refused.into()),
                },
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
