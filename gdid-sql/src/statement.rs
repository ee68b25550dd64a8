//! Writing a statement once for the three dialects: `?` placeholders (numbered for PostgreSQL)
//! and a macro that runs the same code on whichever pool a store holds.

use sqlx::AssertSqlSafe;

use crate::store::{Dialect, SqlStore};

/// Runs `$body` with `$pool` bound to the store's pool, whatever its dialect.
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            SqlStore::MySql($pool) => $body,
            SqlStore::Postgres($pool) => $body,
            SqlStore::Sqlite($pool) => $body,
        }
    };
}
pub(crate) use with_pool;

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
/// (`42P07`, or `23505` on its type), which is success here.
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
    match with_pool!(store, pool => sqlx::query(AssertSqlSafe(ddl)).execute(pool).await.map(drop)) {
        Ok(()) => Ok(()),
        Err(sqlx::Error::Database(e))
            if matches!(e.code().as_deref(), Some("42P07") | Some("23505")) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}
