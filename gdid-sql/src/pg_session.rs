//! Every connection of a PostgreSQL store is set up before its first statement: its commits are
//! durable whatever the role or database says, and its names resolve to the store's one schema.
//!
//! - **Durable.** A role or database with `synchronous_commit = off` (or `local`) would
//!   acknowledge a reservation before it is on disk (or on a synchronous standby), and a crash
//!   (or a failover) could then issue its ids again. Each connection raises it to `on` for its
//!   session; a stronger value (`remote_apply`, `remote_write`) is kept. The connections are the
//!   store's own: the store runs nothing on them that lowers it again, and `with_pool!`, which
//!   lends them to a caller, says not to either.
//! - **One schema, never guessed.** The schema is the URL's `schema=NAME`; without one it is
//!   resolved once, on the store's first connection, from that role's `search_path`: the schema
//!   that holds the gdid tables, or, when none does, the one `CREATE TABLE` would use. Tables
//!   visible in two schemas of the path are refused, naming both: two roles with schemas of
//!   their own would otherwise each make tables of their own and issue the same ids; so are
//!   tables only in schemas the path does not reach, for the same reason (the URL then names the
//!   schema, to share them or to have a store of its own). Every
//!   connection's `search_path` is then `pg_catalog, "schema", pg_temp`: built-in functions and
//!   operators cannot be shadowed, and a temporary table cannot stand in for a gdid table; the
//!   DDL names the schema outright ([`crate::tables`]).
//! - **Tables of a trusted owner, running no code.** Before a store uses its tables, it refuses
//!   one owned by a role that is not a superuser, the database's owner or a role the store's
//!   role is a member of (whoever holds it could move the counters back), and one carrying a
//!   trigger, a rule or row security (code the table's owner chose, run with the store's
//!   privileges at every reservation).

use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions};
use sqlx::{ConnectOptions, Connection};
use tokio::sync::OnceCell;

use crate::tables::{quote_identifier, table_names};

/// The schema of a PostgreSQL store's gdid tables: asked for in its URL (`schema=NAME`), or
/// resolved on its first connection ([`SqlStore::connect`](crate::SqlStore::connect) says how).
/// Clones share what is resolved.
#[derive(Debug, Clone, Default)]
pub struct PgSchema {
    asked: Option<String>,
    resolved: Arc<OnceCell<String>>,
}

impl PgSchema {
    /// The URL without its `schema` parameter (which the driver does not know), and the schema
    /// it names, if any.
    ///
    /// # Errors
    ///
    /// `sqlx::Error::Configuration` for a URL that does not parse, or an empty schema name.
    pub(crate) fn from_url(url: &str) -> Result<(String, PgSchema), sqlx::Error> {
        let mut parsed =
            url::Url::parse(url).map_err(|e| sqlx::Error::Configuration(Box::new(e)))?;
        let mut asked = None;
        let kept: Vec<(String, String)> = parsed
            .query_pairs()
            .filter_map(|(key, value)| {
                if key == "schema" {
                    asked = Some(value.into_owned());
                    None
                } else {
                    Some((key.into_owned(), value.into_owned()))
                }
            })
            .collect();
        let Some(asked) = asked else {
            return Ok((url.to_owned(), PgSchema::default()));
        };
        if asked.is_empty() {
            return Err(sqlx::Error::Configuration(
                "the URL's schema= is empty: name the schema of the gdid tables".into(),
            ));
        }
        if kept.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(&kept);
        }
        let schema = PgSchema {
            asked: Some(asked),
            resolved: Arc::default(),
        };
        Ok((parsed.into(), schema))
    }

    /// The schema, once asked for or resolved.
    pub(crate) fn name(&self) -> Option<&str> {
        self.asked
            .as_deref()
            .or(self.resolved.get().map(String::as_str))
    }

    /// The schema: asked for, or resolved on `connection` (once per store).
    async fn resolve(&self, connection: &mut PgConnection) -> Result<String, sqlx::Error> {
        if let Some(asked) = &self.asked {
            return Ok(asked.clone());
        }
        self.resolved
            .get_or_try_init(|| resolve(connection))
            .await
            .cloned()
    }

    /// Opens one connection to `url` and settles the schema on it, when it is not named: a
    /// server that refuses connections or does not answer, or a schema that cannot be settled
    /// (tables in two schemas, say), is then the store's error at once, where the pool would try
    /// its connections again until its timeout and say only that it timed out.
    pub(crate) async fn settle(
        &self,
        url: &str,
        timeout: std::time::Duration,
    ) -> Result<(), sqlx::Error> {
        let options: PgConnectOptions = url.parse()?;
        self.settle_with(&options, timeout).await
    }

    /// As [`settle`](Self::settle), before the first statement of a store that connects on
    /// first use: with its pool's options.
    pub(crate) async fn settle_pool(&self, pool: &sqlx::PgPool) -> Result<(), sqlx::Error> {
        if self.name().is_some() {
            return Ok(());
        }
        let timeout = pool.options().get_acquire_timeout();
        self.settle_with(&pool.connect_options(), timeout).await
    }

    async fn settle_with(
        &self,
        options: &PgConnectOptions,
        timeout: std::time::Duration,
    ) -> Result<(), sqlx::Error> {
        let mut connection = tokio::time::timeout(timeout, options.connect())
            .await
            .map_err(|_| {
                sqlx::Error::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {timeout:?}"),
                ))
            })??;
        let resolved = self.resolve(&mut connection).await.map(drop);
        let _ = connection.close().await;
        resolved
    }

    /// Pool options whose every connection is set up as the module says, each waited for at
    /// most `timeout`.
    pub(crate) fn pool_options(&self, timeout: std::time::Duration) -> PgPoolOptions {
        let schema = self.clone();
        PgPoolOptions::new()
            .acquire_timeout(timeout)
            .after_connect(move |connection, _| {
                let schema = schema.clone();
                Box::pin(async move { set_up(connection, &schema).await })
            })
    }
}

/// Raises `synchronous_commit` and pins `search_path` on a new connection.
async fn set_up(connection: &mut PgConnection, schema: &PgSchema) -> Result<(), sqlx::Error> {
    let name = schema.resolve(connection).await?;
    let path = format!("pg_catalog, {}, pg_temp", quote_identifier(&name));
    sqlx::query(
        "SELECT pg_catalog.set_config('synchronous_commit', \
           CASE WHEN pg_catalog.current_setting('synchronous_commit') IN ('off', 'local') \
           THEN 'on' ELSE pg_catalog.current_setting('synchronous_commit') END, false), \
         pg_catalog.set_config('search_path', $1, false)",
    )
    .bind(path)
    .execute(&mut *connection)
    .await
    .map(drop)
}

/// The schema of the role's `search_path` that holds the gdid tables, or the one `CREATE TABLE`
/// would use when none does. One statement finds every schema holding them, on the path or
/// not: two would race with a store making the tables meanwhile.
async fn resolve(connection: &mut PgConnection) -> Result<String, sqlx::Error> {
    let names: Vec<&str> = table_names().collect();
    let holding: Vec<(String, bool)> = sqlx::query_as(
        "SELECT n.nspname::text, \
           pg_catalog.array_position(pg_catalog.current_schemas(false), n.nspname) IS NOT NULL \
         FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relname = ANY($1) AND c.relkind IN ('r', 'p') \
         AND n.nspname NOT LIKE 'pg\\_temp\\_%' \
         AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%' \
         GROUP BY n.nspname \
         ORDER BY pg_catalog.array_position(pg_catalog.current_schemas(false), n.nspname), 1",
    )
    .bind(&names)
    .fetch_all(&mut *connection)
    .await?;
    let (on_path, elsewhere): (Vec<_>, Vec<_>) =
        holding.into_iter().partition(|(_, on_path)| *on_path);
    let on_path: Vec<String> = on_path.into_iter().map(|(schema, _)| schema).collect();
    match on_path.as_slice() {
        [one] => Ok(one.clone()),
        [] if !elsewhere.is_empty() => Err(sqlx::Error::Configuration(Box::new(UnreachedSchema(
            elsewhere.into_iter().map(|(schema, _)| schema).collect(),
        )))),
        [] => {
            let current: Option<String> =
                sqlx::query_scalar("SELECT pg_catalog.current_schema()::text")
                    .fetch_one(&mut *connection)
                    .await?;
            current.ok_or_else(|| {
                sqlx::Error::Configuration(
                    "no schema of this role's search_path exists to make the gdid tables in: \
                     name one with schema= in the store's URL"
                        .into(),
                )
            })
        }
        several => Err(sqlx::Error::Configuration(Box::new(AmbiguousSchema(
            several.to_vec(),
        )))),
    }
}

/// The gdid tables are visible in more than one schema of the role's `search_path`.
#[derive(Debug, thiserror::Error)]
#[error(
    "the gdid tables are in more than one schema of this role's search_path ({}): a store is \
     one set of tables, so name the one to use with schema= in the store's URL",
    .0.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(" and ")
)]
pub struct AmbiguousSchema(pub Vec<String>);

/// The gdid tables are in schemas of the database that the role's `search_path` does not reach,
/// and the URL names none: making tables of its own would be a second store beside them, whose
/// ids the first store's could repeat.
#[derive(Debug, thiserror::Error)]
#[error(
    "the gdid tables of this database are in schema {}, which this role's search_path does not \
     reach: name the schema to use with schema= in the store's URL (that one to share its ids, \
     another for a store of this role's own)",
    .0.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(" and ")
)]
pub struct UnreachedSchema(pub Vec<String>);

/// A gdid table the store refuses to use: owned by a role it cannot trust, or running code of
/// its owner's choosing at every write.
#[derive(Debug, thiserror::Error)]
#[error("the gdid table {schema:?}.{table} {why}")]
pub struct UntrustedTable {
    /// The table's schema.
    pub schema: String,
    /// The table.
    pub table: String,
    why: String,
}

/// Refuses the gdid tables of `schema` on `pool` that the module's last point says it refuses.
pub(crate) async fn check_tables(
    pool: &sqlx::PgPool,
    schema: &str,
    tables: &[&str],
) -> Result<(), sqlx::Error> {
    let rows: Vec<(String, String, bool, bool, bool, bool)> = sqlx::query_as(
        "SELECT c.relname::text, o.rolname::text, \
           EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t \
                   WHERE t.tgrelid = c.oid AND NOT t.tgisinternal), \
           EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r \
                   WHERE r.ev_class = c.oid AND r.rulename OPERATOR(pg_catalog.<>) '_RETURN'), \
           c.relrowsecurity, \
           (o.rolsuper OR c.relowner OPERATOR(pg_catalog.=) d.datdba \
            OR pg_catalog.pg_has_role(c.relowner, 'MEMBER')) \
         FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace \
         JOIN pg_catalog.pg_roles o ON o.oid OPERATOR(pg_catalog.=) c.relowner \
         JOIN pg_catalog.pg_database d \
           ON d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database() \
         WHERE n.nspname OPERATOR(pg_catalog.=) $1 AND c.relname OPERATOR(pg_catalog.=) ANY($2)",
    )
    .bind(schema)
    .bind(tables)
    .fetch_all(pool)
    .await?;
    for (table, owner, trigger, rule, row_security, trusted) in rows {
        let why = if trigger || rule || row_security {
            let what = if trigger {
                "a trigger"
            } else if rule {
                "a rule"
            } else {
                "row security"
            };
            format!(
                "has {what}: code its owner chose would run with this store's privileges at \
                 every reservation. The gdid tables need none; remove it"
            )
        } else if !trusted {
            format!(
                "is owned by role {owner:?}, which is not a superuser, the database's owner or \
                 a role this store's role is a member of: whoever holds it could move the \
                 counters back and repeat ids. Have a trusted role own it (ALTER TABLE … OWNER \
                 TO …)"
            )
        } else {
            continue;
        };
        return Err(sqlx::Error::Configuration(Box::new(UntrustedTable {
            schema: schema.to_owned(),
            table,
            why,
        })));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_parameter_is_taken_out_of_the_url() {
        let (url, schema) =
            PgSchema::from_url("postgres://app:pw@db/ids?sslmode=disable&schema=My%20Ids").unwrap();
        assert_eq!(url, "postgres://app:pw@db/ids?sslmode=disable");
        assert_eq!(schema.name(), Some("My Ids"));
        let (url, schema) = PgSchema::from_url("postgres://db/ids?schema=gdid").unwrap();
        assert_eq!(url, "postgres://db/ids");
        assert_eq!(schema.name(), Some("gdid"));
    }

    #[test]
    fn a_url_without_a_schema_is_kept_as_it_is() {
        let (url, schema) = PgSchema::from_url("postgres://db/ids?sslmode=disable").unwrap();
        assert_eq!(url, "postgres://db/ids?sslmode=disable");
        assert_eq!(schema.name(), None);
    }

    #[test]
    fn an_empty_schema_is_refused() {
        let error = PgSchema::from_url("postgres://db/ids?schema=").unwrap_err();
        assert!(error.to_string().contains("schema= is empty"), "{error}");
    }
}
