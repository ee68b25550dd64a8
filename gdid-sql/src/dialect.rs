//! [`Dialect`]: which SQL a store speaks.

/// Which SQL dialect a store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// MySQL or MariaDB.
    MySql,
    /// PostgreSQL.
    Postgres,
    /// SQLite (a file).
    Sqlite,
}
