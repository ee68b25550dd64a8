//! The gdid tables, defined once: what a store creates when they are missing, what
//! [`SqlStore::schema_sql`] prints for a DBA to read and apply, and the check that a store whose
//! tables exist and are current runs no DDL at all (an application role with only `SELECT,
//! INSERT, UPDATE` on them, and `DELETE` where a strategy needs it, opens it).
//!
//! Each table is made by `CREATE TABLE IF NOT EXISTS` with every column it has today; the
//! columns added since a table was first made are added to a table made before them; the
//! indexes are made with their table. Opening first probes: a table that answers a `SELECT` of
//! all its columns is current and is not touched.

use std::fmt;

use sqlx::AssertSqlSafe;

use crate::statement::with_live_pool;
use crate::store::{Dialect, SqlStore};

/// One gdid table: its name, every column and key it has today, the columns added since it was
/// first made (each `NULL`able; added to a table of before them), and its indexes.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) name: &'static str,
    /// Columns and key, as in `CREATE TABLE name (…)`.
    pub(crate) columns: &'static str,
    /// Name and SQL type of each column added since the table was first made.
    pub(crate) added: &'static [(&'static str, &'static str)],
    /// Name and columns of each index.
    pub(crate) indexes: &'static [(&'static str, &'static str)],
    /// What the table is for, as the printed DDL says it.
    purpose: &'static str,
}

/// The counters of the block generator and the one-at-a-time counters: one row per (authority,
/// scope, sequence).
pub(crate) const COUNTERS: Table = Table {
    name: "gdid_counters",
    columns: "authority SMALLINT NOT NULL, scope_name VARCHAR(80) NOT NULL, \
              sequence_name VARCHAR(80) NOT NULL, era BIGINT NOT NULL, \
              next_counter BIGINT NOT NULL, allocated_at BIGINT NULL, \
              previous_at BIGINT NULL, allocated_size BIGINT NULL, \
              lineage VARCHAR(200) NULL, fenced_at BIGINT NULL, \
              PRIMARY KEY (authority, scope_name, sequence_name)",
    added: &[
        ("allocated_at", "BIGINT"),
        ("previous_at", "BIGINT"),
        ("allocated_size", "BIGINT"),
        ("lineage", "VARCHAR(200)"),
        ("fenced_at", "BIGINT"),
    ],
    indexes: &[],
    purpose: "block generators and one-at-a-time counters: one row per authority, scope and sequence",
};

/// The store's authority number: one row.
pub(crate) const AUTHORITY: Table = Table {
    name: "gdid_authority",
    columns: "id SMALLINT NOT NULL PRIMARY KEY, authority SMALLINT NOT NULL",
    added: &[],
    indexes: &[],
    purpose: "the store's authority number (one row)",
};

/// The layout of each sharded counter.
pub(crate) const RANGE_LAYOUTS: Table = Table {
    name: "gdid_range_layouts",
    columns: "sequence_name VARCHAR(80) NOT NULL PRIMARY KEY, \
              base BIGINT NOT NULL, size BIGINT NOT NULL, ranges BIGINT NOT NULL",
    added: &[],
    indexes: &[],
    purpose: "sharded counters: the layout of each sequence",
};

/// The ranges of each sharded counter.
pub(crate) const RANGES: Table = Table {
    name: "gdid_ranges",
    columns: "sequence_name VARCHAR(80) NOT NULL, shard INTEGER NOT NULL, \
              next_value BIGINT NOT NULL, max_value BIGINT NOT NULL, \
              lineage VARCHAR(200) NULL, PRIMARY KEY (sequence_name, shard)",
    added: &[("lineage", "VARCHAR(200)")],
    indexes: &[],
    purpose: "sharded counters: one row per range",
};

/// The hi-lo windows a shard has opened.
pub(crate) const WINDOWS: Table = Table {
    name: "gdid_windows",
    columns: "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
              window_end BIGINT NOT NULL, next_hi BIGINT NOT NULL, \
              lineage VARCHAR(200) NULL, PRIMARY KEY (sequence_name, window_start)",
    added: &[("lineage", "VARCHAR(200)")],
    indexes: &[("gdid_windows_end", "sequence_name, window_end")],
    purpose: "hi-lo windows: the windows this shard opened",
};

/// The windows an agent has claimed on a shard.
pub(crate) const WINDOW_CLAIMS: Table = Table {
    name: "gdid_window_claims",
    columns: "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
              window_end BIGINT NOT NULL, PRIMARY KEY (sequence_name, window_start)",
    added: &[],
    indexes: &[("gdid_window_claims_end", "sequence_name, window_end")],
    purpose: "hi-lo windows: the windows claimed on this shard",
};

/// The shard's identity among an agent's shards.
pub(crate) const WINDOW_STORE: Table = Table {
    name: "gdid_window_store",
    columns: "id SMALLINT NOT NULL PRIMARY KEY, identity VARCHAR(40) NOT NULL",
    added: &[],
    indexes: &[],
    purpose: "hi-lo windows: this shard's identity (one row)",
};

/// Every gdid table, in the order they are made.
pub(crate) const ALL: [&Table; 7] = [
    &COUNTERS,
    &AUTHORITY,
    &RANGE_LAYOUTS,
    &RANGES,
    &WINDOWS,
    &WINDOW_CLAIMS,
    &WINDOW_STORE,
];

/// The names of every gdid table.
#[cfg(feature = "postgres")]
pub(crate) fn table_names() -> impl Iterator<Item = &'static str> {
    ALL.iter().map(|table| table.name)
}

/// The statements that make `table` on `dialect`, each idempotent: the table, then its indexes
/// (MySQL/MariaDB, which has no `CREATE INDEX IF NOT EXISTS` in every version, has them inside
/// the `CREATE TABLE`). `schema` qualifies the names (PostgreSQL).
fn statements(dialect: Dialect, schema: Option<&str>, table: &Table) -> Vec<String> {
    let name = qualified(schema, table.name);
    if dialect == Dialect::MySql {
        let indexes: String = table
            .indexes
            .iter()
            .map(|(index, columns)| format!(", INDEX {index} ({columns})"))
            .collect();
        return vec![format!(
            "CREATE TABLE IF NOT EXISTS {name} ({}{indexes}) ENGINE=InnoDB",
            table.columns
        )];
    }
    let mut statements = vec![format!(
        "CREATE TABLE IF NOT EXISTS {name} ({})",
        table.columns
    )];
    for (index, columns) in table.indexes {
        statements.push(format!(
            "CREATE INDEX IF NOT EXISTS {index} ON {name} ({columns})"
        ));
    }
    statements
}

/// `name`, in `schema` when there is one (both quoted as identifiers).
fn qualified(schema: Option<&str>, name: &str) -> String {
    match schema {
        Some(schema) => format!("{}.{name}", quote_identifier(schema)),
        None => name.to_owned(),
    }
}

/// `name` as a PostgreSQL identifier: in double quotes, each double quote doubled.
pub(crate) fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The DDL of the gdid tables: [`Display`](fmt::Display) prints it as a DDL script (statements
/// ending in `;`, a comment before each table), [`statements`](Self::statements) gives each
/// statement to run.
#[derive(Debug, Clone)]
pub struct Schema {
    tables: Vec<(&'static str, Vec<String>)>,
}

impl Schema {
    /// The DDL of every gdid table on `dialect`; `schema`, the PostgreSQL schema the names are
    /// qualified with. [`SqlStore::schema_sql`] gives the one of a store.
    ///
    /// ```
    /// use gdid_sql::{Dialect, Schema};
    ///
    /// let ddl = Schema::of(Dialect::Postgres, Some("ids")).to_string();
    /// assert!(ddl.contains("CREATE TABLE IF NOT EXISTS \"ids\".gdid_counters ("));
    /// ```
    pub fn of(dialect: Dialect, schema: Option<&str>) -> Schema {
        Schema {
            tables: ALL
                .iter()
                .map(|table| (table.purpose, statements(dialect, schema, table)))
                .collect(),
        }
    }

    /// Every statement, in order, each idempotent.
    pub fn statements(&self) -> impl Iterator<Item = &str> {
        self.tables
            .iter()
            .flat_map(|(_, statements)| statements.iter().map(String::as_str))
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (purpose, statements)) in self.tables.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "-- {purpose}")?;
            for statement in statements {
                writeln!(f, "{statement};")?;
            }
        }
        Ok(())
    }
}

/// Makes `tables` current in `store`, each as the module says: a table that answers the probe
/// of all its columns is left alone (no DDL); a missing one is created with its indexes; one of
/// before some columns gets them.
///
/// # Errors
///
/// The driver's error; a missing privilege is [`SchemaRefused`] (in
/// `sqlx::Error::Configuration`), naming it and `gdid schema`.
pub(crate) async fn ensure(store: &SqlStore, tables: &[&Table]) -> Result<(), sqlx::Error> {
    for table in tables {
        ensure_table(store, table)
            .await
            .map_err(|error| refused(table, error))?;
    }
    #[cfg(feature = "postgres")]
    if let SqlStore::Postgres(pool, _) = store
        && let Some(schema) = store.schema().await?
    {
        let names: Vec<&str> = tables.iter().map(|table| table.name).collect();
        crate::pg_session::check_tables(pool, &schema, &names).await?;
    }
    Ok(())
}

async fn ensure_table(store: &SqlStore, table: &Table) -> Result<(), sqlx::Error> {
    if probe(store, table.name, &column_names(table.columns)).await? {
        return Ok(());
    }
    let schema = store.schema().await?;
    for statement in statements(store.dialect(), schema.as_deref(), table) {
        execute_ddl(store, statement).await?;
    }
    add_columns(store, schema.as_deref(), table).await
}

/// The column names of a `CREATE TABLE` column list (its key clause left out).
fn column_names(columns: &str) -> Vec<&str> {
    let columns = columns.split(", PRIMARY KEY").next().unwrap_or(columns);
    columns
        .split(',')
        .filter_map(|column| column.split_whitespace().next())
        .collect()
}

/// Whether `table` answers a `SELECT` of `columns` (no row read). `Ok(false)` when it does not
/// exist or lacks a column; a missing privilege is the error.
async fn probe(store: &SqlStore, table: &str, columns: &[&str]) -> Result<bool, sqlx::Error> {
    let probe = format!("SELECT {} FROM {table} WHERE 1 = 0", columns.join(", "));
    let probed = with_live_pool!(store, pool => {
        sqlx::query(AssertSqlSafe(probe)).fetch_all(pool).await.map(drop)
    });
    match probed {
        Ok(()) => Ok(true),
        Err(sqlx::Error::Database(e)) if is_privilege(e.as_ref()) => Err(sqlx::Error::Database(e)),
        Err(sqlx::Error::Database(_)) => Ok(false),
        Err(other) => Err(other),
    }
}

/// Runs one DDL statement; the loser of a creation race on PostgreSQL (`42P07`; `23505` or
/// `42710`, "type … already exists", on the table's row type) has succeeded.
async fn execute_ddl(store: &SqlStore, ddl: String) -> Result<(), sqlx::Error> {
    match with_live_pool!(store, pool => sqlx::query(AssertSqlSafe(ddl)).execute(pool).await.map(drop))
    {
        Err(sqlx::Error::Database(e))
            if matches!(e.code().as_deref(), Some("42P07" | "23505" | "42710")) =>
        {
            Ok(())
        }
        other => other,
    }
}

/// Adds the columns of `table` made since it was first made, to a table of before them.
/// Idempotent and safe from many processes at once: a column another process added meanwhile is
/// success.
async fn add_columns(
    store: &SqlStore,
    schema: Option<&str>,
    table: &Table,
) -> Result<(), sqlx::Error> {
    for (column, kind) in table.added {
        if probe(store, table.name, &[column]).await? {
            continue;
        }
        let alter = format!(
            "ALTER TABLE {} ADD COLUMN {column} {kind} NULL",
            qualified(schema, table.name)
        );
        match with_live_pool!(store, pool => {
            sqlx::query(AssertSqlSafe(alter)).execute(pool).await.map(drop)
        }) {
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

/// A privilege the role lacks: PostgreSQL 42501; MySQL/MariaDB 42000 with errors 1142
/// (command denied on a table), 1044 (on a database) or 1227 (needs a privilege).
fn is_privilege(error: &dyn sqlx::error::DatabaseError) -> bool {
    if error.code().as_deref() == Some("42501") {
        return true;
    }
    let message = error.message();
    message.contains("command denied") || message.contains("Access denied")
}

/// `error` of making `table`, a missing privilege turned into [`SchemaRefused`].
fn refused(table: &Table, error: sqlx::Error) -> sqlx::Error {
    match &error {
        sqlx::Error::Database(e) if is_privilege(e.as_ref()) => {
            sqlx::Error::Configuration(Box::new(SchemaRefused {
                table: table.name,
                reason: e.message().to_owned(),
            }))
        }
        _ => error,
    }
}

/// The store's role lacks a privilege the gdid tables need: to read or write them, or, when one
/// is missing or not current, to create or alter it.
#[derive(Debug, thiserror::Error)]
#[error(
    "the role of this store may not use or create the gdid table {table}: {reason}. A DBA \
     creates the tables once with `gdid schema apply --store URL` (or applies the DDL of \
     `gdid schema print --store URL`) and grants the store's role {grants} on them",
    grants = GRANTS
)]
pub struct SchemaRefused {
    /// The table.
    pub table: &'static str,
    /// The server's words.
    pub reason: String,
}

/// The privileges an application role needs on the gdid tables, as the message says them.
const GRANTS: &str = "SELECT, INSERT, UPDATE (and DELETE on gdid_windows, \
                      for pruning hi-lo windows)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_leave_out_the_key() {
        assert_eq!(
            column_names(COUNTERS.columns),
            [
                "authority",
                "scope_name",
                "sequence_name",
                "era",
                "next_counter",
                "allocated_at",
                "previous_at",
                "allocated_size",
                "lineage",
                "fenced_at"
            ]
        );
        assert_eq!(column_names(RANGE_LAYOUTS.columns)[0], "sequence_name");
    }

    #[test]
    fn every_added_column_is_a_column() {
        for table in ALL {
            let columns = column_names(table.columns);
            for (added, _) in table.added {
                assert!(columns.contains(added), "{}: {added}", table.name);
            }
        }
    }

    #[test]
    fn postgres_names_are_qualified_and_quoted() {
        let ddl = Schema::of(Dialect::Postgres, Some("my \"ids\"")).to_string();
        assert!(ddl.contains("CREATE TABLE IF NOT EXISTS \"my \"\"ids\"\"\".gdid_counters ("));
        assert!(ddl.contains(
            "CREATE INDEX IF NOT EXISTS gdid_windows_end ON \"my \"\"ids\"\"\".gdid_windows"
        ));
    }

    #[test]
    fn mysql_indexes_are_inside_the_table() {
        let ddl = Schema::of(Dialect::MySql, None);
        assert_eq!(ddl.statements().count(), ALL.len());
        assert!(
            ddl.to_string()
                .contains(", INDEX gdid_windows_end (sequence_name, window_end)) ENGINE=InnoDB;")
        );
    }
}
