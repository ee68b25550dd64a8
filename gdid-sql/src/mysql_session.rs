//! Every connection of a MySQL/MariaDB store runs its statements as they were written, whatever
//! the server's global settings: its session's `sql_mode` and `autocommit` are set before its
//! first statement.
//!
//! - **`sql_mode`.** A global `NO_BACKSLASH_ESCAPES` or `ANSI_QUOTES` changes how a statement's
//!   literals and quotes read, and a mode without `STRICT_TRANS_TABLES` stores a value out of a
//!   column's range clipped, with a warning, where the store counts on an error. The session's
//!   mode is [`SQL_MODE`], in every server version gdid supports.
//! - **`autocommit`.** With a global `autocommit = 0`, a reservation would run in a transaction
//!   that is never committed: acknowledged, then rolled back when the connection closes, and its
//!   ids issued again. The session's is 1.
//!
//! The connections are the store's own; `with_pool!`, which lends them, says to leave them so.
//!
//! A store also refuses a relation of a gdid table's name that is not a table
//! ([`check_tables`]): `CREATE TABLE IF NOT EXISTS` skips a view, whose definer's privileges and
//! query would then stand in for the table at every reservation.

use sqlx::mysql::{MySqlConnection, MySqlPool, MySqlPoolOptions};

/// The `sql_mode` of a store's sessions: the modes MariaDB and MySQL have by default that the
/// statements rely on, and `PIPES_AS_CONCAT`, which the driver sets.
pub const SQL_MODE: &str =
    "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,PIPES_AS_CONCAT";

/// The options of a pool whose every connection is set up as the module says, each waited for at
/// most `timeout`.
pub(crate) fn pool_options(timeout: std::time::Duration) -> MySqlPoolOptions {
    MySqlPoolOptions::new()
        .acquire_timeout(timeout)
        .after_connect(|connection, _| Box::pin(set_up(connection)))
}

async fn set_up(connection: &mut MySqlConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SET SESSION sql_mode = ?, SESSION autocommit = 1")
        .bind(SQL_MODE)
        .execute(connection)
        .await
        .map(drop)
}

/// Refuses a relation of the current database named as one of `tables` that is not a base
/// table (a view, a sequence), as the module says.
pub(crate) async fn check_tables(pool: &MySqlPool, tables: &[&str]) -> Result<(), sqlx::Error> {
    let names = tables.iter().map(|_| "?").collect::<Vec<_>>().join(", ");
    let statement = format!(
        "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ({names}) \
         AND TABLE_TYPE <> 'BASE TABLE'"
    );
    let mut query = sqlx::query_as::<_, (String, String)>(sqlx::AssertSqlSafe(statement));
    for table in tables {
        query = query.bind(*table);
    }
    match query.fetch_optional(pool).await? {
        None => Ok(()),
        Some((table, kind)) => Err(sqlx::Error::Configuration(
            format!(
                "the gdid table {table} is not a table ({kind}): another user made it first, and \
                 its definer's query would stand in for the table at every reservation. Drop \
                 it, and let `gdid schema apply` make the table"
            )
            .into(),
        )),
    }
}
