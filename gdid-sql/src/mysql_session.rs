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

use sqlx::mysql::{MySqlConnection, MySqlPoolOptions};

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
