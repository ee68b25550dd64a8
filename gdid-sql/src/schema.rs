//! What a store does with the gdid tables ([`crate::tables`]): makes them current when they are
//! missing or of before some columns, and leaves them alone when they are current, so that an
//! application role with only `SELECT, INSERT, UPDATE` on them (and `DELETE` where a strategy
//! needs it) opens the store. Opening first probes: a table that answers a `SELECT` of all its
//! columns is current and is not touched. A missing privilege is [`SchemaRefused`], naming the
//! table and `gdid schema`; a PostgreSQL store then checks the tables it will use
//! ([`crate::pg_session`]).

use sqlx::AssertSqlSafe;

use gdid_engine::backend::retry;

use crate::error::{Error, is_lost_race};
use crate::statement::with_live_pool;
use crate::store::SqlStore;
use crate::tables::{ALL, Schema, Table, column_names, qualified, statements};

impl SqlStore {
    /// The DDL of every gdid table in this store's dialect and schema, current version: what a
    /// DBA reads and applies (`gdid schema print`) before an application role with only
    /// `SELECT, INSERT, UPDATE` on the tables opens the store. See [`Schema`].
    ///
    /// # Errors
    ///
    /// As [`schema`](Self::schema), for a PostgreSQL store.
    pub async fn schema_sql(&self) -> Result<Schema, Error> {
        let schema = self.schema().await.map_err(Error::Schema)?;
        Ok(Schema::of(self.dialect(), schema.as_deref()))
    }

    /// Makes every gdid table current in this store (`gdid schema apply`): each statement of
    /// [`schema_sql`](Self::schema_sql), idempotent, then each table checked as a store opening
    /// it checks it.
    ///
    /// # Errors
    ///
    /// [`Error::Schema`] with the driver's error.
    pub async fn apply_schema(&self) -> Result<(), Error> {
        ensure(self, &ALL).await.map_err(Error::Schema)
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
    // Before any DDL: a schema or a table the store does not trust gets nothing of it.
    check_trust(store, tables).await?;
    for table in tables {
        // On Galera a DDL statement runs on every node at once, and two stores making the
        // tables on two nodes meet as a deadlock (1213): tried again, as any lost race.
        retry::run_driver(
            retry::DDL_ATTEMPTS,
            || ensure_table(store, table),
            is_lost_race,
        )
        .await
        .map_err(|error| refused(table, error))?;
    }
    // After: what another role may have made first under a gdid name meanwhile.
    check_trust(store, tables).await
}

/// Refuses what the store cannot trust: on PostgreSQL the schema of `tables`, those of them that
/// exist and their indexes (`pg_session::check_tables`); on MySQL/MariaDB a relation of a
/// table's name that is not a table (`mysql_session::check_tables`).
async fn check_trust(store: &SqlStore, tables: &[&Table]) -> Result<(), sqlx::Error> {
    let names = || -> Vec<&str> { tables.iter().map(|table| table.name).collect() };
    match store {
        #[cfg(feature = "postgres")]
        SqlStore::Postgres(pool, settings) => {
            let Some(schema) = store.schema().await? else {
                return Ok(());
            };
            let indexes: Vec<(&str, &str)> = tables
                .iter()
                .flat_map(|table| table.indexes.iter().map(|(index, _)| (*index, table.name)))
                .collect();
            crate::pg_session::check_tables(pool, &schema, settings.owner(), &names(), &indexes)
                .await
        }
        #[cfg(feature = "mysql")]
        SqlStore::MySql(pool) => {
            // A server that refuses connections is the error at once, not at the pool's timeout.
            crate::store::reachable(pool).await?;
            crate::mysql_session::check_tables(pool, &names()).await
        }
        #[allow(unreachable_patterns)]
        _ => {
            let _ = names;
            Ok(())
        }
    }
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

/// Whether `table` answers a `SELECT` of `columns` (no row read). `Ok(false)` when it does not
/// exist or lacks a column; a missing privilege is the error.
async fn probe(store: &SqlStore, table: &str, columns: &[&str]) -> Result<bool, sqlx::Error> {
    let probe = format!("SELECT {} FROM {table} WHERE 1 = 0", columns.join(", "));
    let probed = with_live_pool!(store, pool => {
        sqlx::query(store.statement(&probe)).fetch_all(pool).await.map(drop)
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

impl SqlStore {
    /// Whether the store holds the gdid counter table (`gdid_counters`): `false` for a database
    /// (or PostgreSQL schema) where no store was ever opened, for a caller that creates nothing
    /// and reads what is there.
    ///
    /// # Errors
    ///
    /// The driver's error when the database cannot be asked, or the table cannot be read (a
    /// missing privilege).
    pub async fn has_counters(&self) -> Result<bool, sqlx::Error> {
        probe(self, crate::tables::COUNTERS.name, &["scope_name"]).await
    }
}
