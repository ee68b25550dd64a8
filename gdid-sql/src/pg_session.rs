//! Every connection of a PostgreSQL store is set up before its first statement: its commits are
//! durable whatever the role or database says, and every name it uses resolves in `pg_catalog`
//! or names its schema outright.
//!
//! - **Durable.** A role or database with `synchronous_commit = off` (or `local`) would
//!   acknowledge a reservation before it is on disk (or on a synchronous standby), and a crash
//!   (or a failover) could then issue its ids again. Each connection raises it to `on` for its
//!   session; a stronger value (`remote_apply`, `remote_write`) is kept. The connections are the
//!   store's own: the store runs nothing on them that lowers it again, and `with_pool!`, which
//!   lends them to a caller, says not to either.
//! - **No name another role chose.** Every connection starts with `search_path = pg_catalog,
//!   pg_temp`, given in the startup packet, so that it holds from the first statement, the
//!   driver's own included, and outranks a role's or a database's `search_path`. PostgreSQL never
//!   looks for functions or operators in `pg_temp`, so every function and operator a statement
//!   uses is `pg_catalog`'s: a role with `CREATE` on the store's schema (or on `public`) cannot
//!   plant one that a gdid statement would call. That matters because operator resolution
//!   prefers an exact match in any schema of the path over one that needs a cast: with the
//!   store's schema on the path, an `=(varchar, text)` there would win over `pg_catalog`'s
//!   `=(text, text)` and run as whoever issues. The gdid tables are named with their schema in
//!   every statement ([`PgSchema::statement`]).
//! - **One schema, never guessed.** The schema is the URL's `schema=NAME`; without one it is
//!   resolved once, on a connection of its own that keeps the role's `search_path`: the schema of
//!   that path that holds the gdid tables, or, when none does, the one `CREATE TABLE` would use.
//!   Its one query names every operator with its schema (`OPERATOR(pg_catalog.=)`), as the path
//!   may put another schema before `pg_catalog`. Tables visible in two schemas of the path are
//!   refused, naming both: two roles with schemas of their own would otherwise each make tables
//!   of their own and issue the same ids; so are tables only in schemas the path does not reach,
//!   for the same reason (the URL then names the schema, to share them or to have a store of its
//!   own).
//! - **Tables of a trusted owner, running no code.** Before a store uses its tables, it refuses
//!   a schema or table owned by a role other than a superuser, the database's owner, the store's
//!   own role and the role the URL's `owner=` names (whoever owns them could move the counters
//!   back; membership in such a role is not enough, as a DBA grants roles for other reasons), a
//!   relation of another kind where a table belongs, and a table carrying a
//!   trigger, a rule or row security (code the table's owner chose, run with the store's
//!   privileges at every reservation).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions};
use sqlx::{AssertSqlSafe, ConnectOptions, Connection};
use tokio::sync::OnceCell;

use crate::tables::{qualify_tables, table_names};

/// The `search_path` of every connection of a store: `pg_catalog`'s functions and operators
/// alone, and no table but a temporary one without its schema.
pub const SEARCH_PATH: &str = "pg_catalog, pg_temp";

/// The most statement texts a store keeps qualified ([`PgSchema::statement`]): more than the
/// crate has kinds of statement, so that a text that varies with its values (none does today)
/// cannot grow the map without bound.
const KEPT_STATEMENTS: usize = 512;

/// The schema of a PostgreSQL store's gdid tables: asked for in its URL (`schema=NAME`), or
/// resolved on its first connection ([`SqlStore::connect`](crate::SqlStore::connect) says how).
/// Clones share what is resolved.
#[derive(Debug, Clone, Default)]
pub struct PgSchema {
    asked: Option<String>,
    resolved: Arc<OnceCell<String>>,
    /// The URL's options as they are, with the role's own `search_path`: the schema is resolved
    /// on a connection of these.
    unpinned: Option<Arc<PgConnectOptions>>,
    /// Each statement text the store ran, with its tables qualified: built once per store.
    statements: Arc<Mutex<HashMap<String, Arc<str>>>>,
    /// The role the URL's `owner=ROLE` trusts to own the gdid tables and their schema, besides
    /// superusers, the database's owner and the store's own role.
    owner: Option<String>,
    /// The URL's `max_sequences_per_scope=N`: the most sequences one scope may hold records of
    /// (`gdid_engine::backend::CounterStore::max_sequences_per_scope`).
    max_sequences_per_scope: Option<u64>,
}

impl PgSchema {
    /// The options of the store's connections for `url` (its `search_path` pinned to
    /// [`SEARCH_PATH`]), and the schema its `schema` parameter names, if any, with the role its
    /// `owner` parameter trusts and the bound its `max_sequences_per_scope` sets (parameters of
    /// gdid's, which the driver does not know).
    ///
    /// # Errors
    ///
    /// `sqlx::Error::Configuration` for a URL that does not parse, an empty schema or owner, or a
    /// bound that is not a positive integer.
    pub(crate) fn from_url(url: &str) -> Result<(PgConnectOptions, PgSchema), sqlx::Error> {
        let mut parsed =
            url::Url::parse(url).map_err(|e| sqlx::Error::Configuration(Box::new(e)))?;
        let (mut asked, mut owner, mut bound) = (None, None, None);
        let kept: Vec<(String, String)> = parsed
            .query_pairs()
            .filter_map(|(key, value)| {
                let ours = match key.as_ref() {
                    "schema" => &mut asked,
                    "owner" => &mut owner,
                    "max_sequences_per_scope" => &mut bound,
                    _ => return Some((key.into_owned(), value.into_owned())),
                };
                *ours = Some(value.into_owned());
                None
            })
            .collect();
        for (parameter, value) in [("schema", &asked), ("owner", &owner)] {
            if value.as_deref() == Some("") {
                return Err(sqlx::Error::Configuration(
                    format!("the URL's {parameter}= is empty: name a {parameter}, or leave it out")
                        .into(),
                ));
            }
        }
        let max_sequences_per_scope = bound
            .map(|bound| match bound.parse::<u64>() {
                Ok(most) if most > 0 => Ok(most),
                _ => Err(sqlx::Error::Configuration(
                    format!(
                        "the URL's max_sequences_per_scope={bound:?} is not a positive integer: \
                         give the most sequences one scope may hold, or leave it out for no bound"
                    )
                    .into(),
                )),
            })
            .transpose()?;
        if kept.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(&kept);
        }
        let unpinned: PgConnectOptions = parsed.as_str().parse()?;
        let pinned = unpinned
            .clone()
            .options([("search_path", SEARCH_PATH.replace(' ', ""))]);
        let schema = PgSchema {
            asked,
            owner,
            max_sequences_per_scope,
            unpinned: Some(Arc::new(unpinned)),
            ..PgSchema::default()
        };
        Ok((pinned, schema))
    }

    /// The role the URL's `owner=` trusts, if any.
    pub(crate) fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// The URL's `max_sequences_per_scope=`, if any.
    pub(crate) fn max_sequences_per_scope(&self) -> Option<u64> {
        self.max_sequences_per_scope
    }

    /// `text` as the store runs it: each gdid table it names qualified with the store's schema
    /// ([`SqlStore::connect`](crate::SqlStore::connect)), built the first time the store runs it
    /// and kept. Called once the schema is settled (in the body of `with_live_pool!`); before,
    /// the text is left as it is, and its tables are then not found.
    pub(crate) fn statement(&self, text: &str) -> AssertSqlSafe<Arc<str>> {
        let Some(schema) = self.name() else {
            return AssertSqlSafe(Arc::from(text));
        };
        let mut kept = self.statements.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(statement) = kept.get(text) {
            return AssertSqlSafe(Arc::clone(statement));
        }
        let statement: Arc<str> = Arc::from(qualify_tables(text, schema));
        if kept.len() < KEPT_STATEMENTS {
            kept.insert(text.to_owned(), Arc::clone(&statement));
        }
        AssertSqlSafe(statement)
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

    /// Opens one connection and settles the schema on it, when it is not named: a server that
    /// refuses connections or does not answer, or a schema that cannot be settled (tables in two
    /// schemas, say), is then the store's error at once, where the pool would try its
    /// connections again until its timeout and say only that it timed out.
    pub(crate) async fn settle(&self, timeout: std::time::Duration) -> Result<(), sqlx::Error> {
        let Some(options) = &self.unpinned else {
            return Ok(());
        };
        self.settle_with(options, timeout).await
    }

    /// As [`settle`](Self::settle), before the first statement of a store that connects on
    /// first use: with its pool's timeout.
    pub(crate) async fn settle_pool(&self, pool: &sqlx::PgPool) -> Result<(), sqlx::Error> {
        if self.name().is_some() {
            return Ok(());
        }
        self.settle(pool.options().get_acquire_timeout()).await
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
    pub(crate) fn pool_options(timeout: std::time::Duration) -> PgPoolOptions {
        PgPoolOptions::new()
            .acquire_timeout(timeout)
            .after_connect(|connection, _| Box::pin(set_up(connection)))
    }
}

/// Raises `synchronous_commit` on a new connection, and sets its `search_path` again (its
/// startup packet pinned it already).
async fn set_up(connection: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query(
        "SELECT pg_catalog.set_config('synchronous_commit', \
           CASE WHEN pg_catalog.current_setting('synchronous_commit') \
             OPERATOR(pg_catalog.=) ANY ('{off,local}'::pg_catalog.text[]) \
           THEN 'on' ELSE pg_catalog.current_setting('synchronous_commit') END, false), \
         pg_catalog.set_config('search_path', $1, false)",
    )
    .bind(SEARCH_PATH)
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
        "SELECT n.nspname::pg_catalog.text, \
           pg_catalog.array_position(pg_catalog.current_schemas(false), n.nspname) IS NOT NULL \
         FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace \
         WHERE c.relname OPERATOR(pg_catalog.=) ANY($1::pg_catalog.text[]) \
         AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog.\"char\"[]) \
         AND n.nspname OPERATOR(pg_catalog.!~~) 'pg\\_temp\\_%' \
         AND n.nspname OPERATOR(pg_catalog.!~~) 'pg\\_toast\\_temp\\_%' \
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
                sqlx::query_scalar("SELECT pg_catalog.current_schema()::pg_catalog.text")
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

/// A gdid table, an index of one, or the schema holding them, that the store refuses to use:
/// owned by a role it cannot trust, of the wrong kind, or running code of its owner's choosing
/// at every write.
#[derive(Debug, thiserror::Error)]
#[error("the gdid {what} {schema:?}{name} {why}")]
pub struct UntrustedTable {
    /// The schema.
    pub schema: String,
    /// The table or index (empty when the schema is refused).
    pub table: String,
    what: &'static str,
    name: String,
    why: String,
}

impl UntrustedTable {
    fn refused(schema: &str, what: &'static str, table: &str, why: String) -> sqlx::Error {
        let name = if table.is_empty() {
            String::new()
        } else {
            format!(".{table}")
        };
        sqlx::Error::Configuration(Box::new(UntrustedTable {
            schema: schema.to_owned(),
            table: table.to_owned(),
            what,
            name,
            why,
        }))
    }
}

/// Whether the owner `o` of a catalog row (an alias of `pg_roles`) is trusted, in SQL: a
/// superuser, the database's owner (`d`, an alias of `pg_database`; `pg_database_owner`, the owner
/// of `public` since PostgreSQL 15, stands for it), the store's own role, or the role the URL's
/// `owner=` names (`$2`). Membership is not enough: a role the store's role was granted for
/// another reason could otherwise move the counters back.
const TRUSTED_OWNER: &str = "(o.rolsuper \
     OR o.oid OPERATOR(pg_catalog.=) d.datdba \
     OR o.rolname OPERATOR(pg_catalog.=) 'pg_database_owner'::pg_catalog.name \
     OR o.rolname OPERATOR(pg_catalog.=) pg_catalog.current_user() \
     OR o.rolname OPERATOR(pg_catalog.=) $2::pg_catalog.name)";

/// Refuses the gdid tables `tables` of `schema` on `pool` (and the schema, and their indexes
/// `indexes`, each `(index, table)`), as the module's last point says. `owner`: the role the
/// URL's `owner=` names, trusted besides.
pub(crate) async fn check_tables(
    pool: &sqlx::PgPool,
    schema: &str,
    owner: Option<&str>,
    tables: &[&str],
    indexes: &[(&str, &str)],
) -> Result<(), sqlx::Error> {
    let owner = owner.unwrap_or_default();
    let schema_owner: Option<(String, bool)> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT o.rolname::pg_catalog.text, {TRUSTED_OWNER} \
         FROM pg_catalog.pg_namespace n \
         JOIN pg_catalog.pg_roles o ON o.oid OPERATOR(pg_catalog.=) n.nspowner \
         JOIN pg_catalog.pg_database d \
           ON d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database() \
         WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name"
    )))
    .bind(schema)
    .bind(owner)
    .fetch_optional(pool)
    .await?;
    if let Some((role, false)) = schema_owner {
        return Err(UntrustedTable::refused(
            schema,
            "schema",
            "",
            format!(
                "is owned by role {role:?}, which is not a superuser, the database's owner, \
                 this store's role or the role named by owner= in the store's URL: whoever \
                 owns it could drop the gdid tables, and the next store to open would make \
                 empty ones and issue every id again. Have a trusted role own it (ALTER SCHEMA \
                 … OWNER TO …), or name its owner with owner= in the URL if you trust that role"
            ),
        ));
    }
    let rows: Vec<(String, String, String, bool, bool, bool, bool)> =
        sqlx::query_as(AssertSqlSafe(format!(
            "SELECT c.relname::pg_catalog.text, o.rolname::pg_catalog.text, \
               c.relkind::pg_catalog.text, \
               EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t \
                       WHERE t.tgrelid OPERATOR(pg_catalog.=) c.oid AND NOT t.tgisinternal), \
               EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r \
                       WHERE r.ev_class OPERATOR(pg_catalog.=) c.oid \
                       AND r.rulename OPERATOR(pg_catalog.<>) '_RETURN'::pg_catalog.name), \
               c.relrowsecurity, {TRUSTED_OWNER} \
             FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace \
             JOIN pg_catalog.pg_roles o ON o.oid OPERATOR(pg_catalog.=) c.relowner \
             JOIN pg_catalog.pg_database d \
               ON d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database() \
             WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name \
             AND c.relname OPERATOR(pg_catalog.=) ANY($3::pg_catalog.name[])"
        )))
        .bind(schema)
        .bind(owner)
        .bind(tables)
        .fetch_all(pool)
        .await?;
    for (table, owner, kind, trigger, rule, row_security, trusted) in rows {
        let why = if kind != "r" && kind != "p" {
            format!(
                "is not a table (pg_class.relkind {kind:?}): a view or another kind of \
                 relation could run code of its owner's choosing. Drop it, and let the store \
                 make the table"
            )
        } else if trigger || rule || row_security {
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
                "is owned by role {owner:?}, which is not a superuser, the database's owner, \
                 this store's role or the role named by owner= in the store's URL: whoever \
                 holds it could move the counters back and repeat ids. Have a trusted role own \
                 it (ALTER TABLE … OWNER TO …)"
            )
        } else {
            continue;
        };
        return Err(UntrustedTable::refused(schema, "table", &table, why));
    }
    check_expressions(pool, schema, tables).await?;
    check_indexes(pool, schema, indexes).await
}

/// Refuses a gdid table of `schema` (one of `tables`) whose column default, constraint, index or
/// column type calls a function or operator, or is of a type, outside `pg_catalog`, or that
/// references another table: such code was chosen by whoever owns it (a role with `CREATE` on
/// some schema, say), not by the table's trusted owner, and it would run at every reservation,
/// whatever the `search_path` (a stored expression names its functions by their identity).
/// The gdid tables have none: what they use is built in, and PostgreSQL records no dependency
/// on a built-in object, so any dependency recorded of these kinds is another role's.
async fn check_expressions(
    pool: &sqlx::PgPool,
    schema: &str,
    tables: &[&str],
) -> Result<(), sqlx::Error> {
    let found: Option<(String, String, String)> = sqlx::query_as(
        "WITH t AS ( \
           SELECT c.oid, c.relname FROM pg_catalog.pg_class c \
           JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace \
           WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name \
           AND c.relname OPERATOR(pg_catalog.=) ANY($2::pg_catalog.name[])), \
         parts (relname, what, classid, objid) AS ( \
           SELECT t.relname, 'a column', 'pg_catalog.pg_class'::pg_catalog.regclass, t.oid \
           FROM t \
           UNION ALL SELECT t.relname, 'a column default', \
             'pg_catalog.pg_attrdef'::pg_catalog.regclass, a.oid \
           FROM t JOIN pg_catalog.pg_attrdef a ON a.adrelid OPERATOR(pg_catalog.=) t.oid \
           UNION ALL SELECT t.relname, 'a constraint', \
             'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid \
           FROM t JOIN pg_catalog.pg_constraint k ON k.conrelid OPERATOR(pg_catalog.=) t.oid \
           UNION ALL SELECT t.relname, 'an index', 'pg_catalog.pg_class'::pg_catalog.regclass, \
             i.indexrelid \
           FROM t JOIN pg_catalog.pg_index i ON i.indrelid OPERATOR(pg_catalog.=) t.oid) \
         SELECT parts.relname::pg_catalog.text, parts.what, \
           pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0) \
         FROM parts JOIN pg_catalog.pg_depend d \
           ON d.classid OPERATOR(pg_catalog.=) parts.classid \
           AND d.objid OPERATOR(pg_catalog.=) parts.objid \
         WHERE d.deptype OPERATOR(pg_catalog.=) 'n'::pg_catalog.\"char\" \
         AND (d.refclassid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.pg_proc', \
               'pg_catalog.pg_operator', 'pg_catalog.pg_type']::pg_catalog.regclass[]) \
           OR (d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass \
               AND d.refobjid OPERATOR(pg_catalog.<>) ALL (SELECT t.oid FROM t))) \
         LIMIT 1",
    )
    .bind(schema)
    .bind(tables)
    .fetch_optional(pool)
    .await?;
    match found {
        None => Ok(()),
        Some((table, what, object)) => Err(UntrustedTable::refused(
            schema,
            "table",
            &table,
            format!(
                "has {what} that uses {object}, which is not built in: code its owner chose \
                 would run with this store's privileges at every reservation. The gdid tables \
                 use nothing of the kind; make the table again with `gdid schema apply` (or \
                 remove what uses it)"
            ),
        )),
    }
}

/// Refuses an index of `schema` named as one of `indexes` (`(index, table)`) that is not an
/// index of that table: `CREATE INDEX IF NOT EXISTS` skips a relation of the index's name, so one
/// another role made first would stand in for the store's (an index of another table, or a
/// table, whose expressions could be anything).
async fn check_indexes(
    pool: &sqlx::PgPool,
    schema: &str,
    indexes: &[(&str, &str)],
) -> Result<(), sqlx::Error> {
    let names: Vec<&str> = indexes.iter().map(|(index, _)| *index).collect();
    let found: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT c.relname::pg_catalog.text, t.relname::pg_catalog.text \
         FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace \
         LEFT JOIN pg_catalog.pg_index i ON i.indexrelid OPERATOR(pg_catalog.=) c.oid \
         LEFT JOIN pg_catalog.pg_class t ON t.oid OPERATOR(pg_catalog.=) i.indrelid \
         WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name \
         AND c.relname OPERATOR(pg_catalog.=) ANY($2::pg_catalog.name[])",
    )
    .bind(schema)
    .bind(&names)
    .fetch_all(pool)
    .await?;
    for (index, on) in found {
        let Some((_, table)) = indexes.iter().find(|(name, _)| *name == index) else {
            continue;
        };
        if on.as_deref() != Some(*table) {
            let what = on.map_or("is not an index".to_owned(), |other| {
                format!("is an index of {other:?}")
            });
            return Err(UntrustedTable::refused(
                schema,
                "index",
                &index,
                format!(
                    "{what}, not of the gdid table {table}: another role made it first, and \
                     the store's own was never made. Drop it, and open the store again"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdid_parameters_are_taken_out_of_the_url_and_the_path_is_pinned() {
        let (options, schema) = PgSchema::from_url(
            "postgres://app:pw@db/ids?sslmode=disable&schema=My%20Ids&owner=ids_admin",
        )
        .unwrap();
        assert_eq!(options.get_database(), Some("ids"));
        assert_eq!(schema.name(), Some("My Ids"));
        assert_eq!(schema.owner(), Some("ids_admin"));
        assert_eq!(
            options.get_options(),
            Some("-c search_path=pg_catalog,pg_temp")
        );
        let (_, schema) = PgSchema::from_url("postgres://db/ids?schema=gdid").unwrap();
        assert_eq!(schema.name(), Some("gdid"));
        assert_eq!(schema.owner(), None);
    }

    #[test]
    fn a_url_without_a_schema_leaves_it_to_be_resolved() {
        let (options, schema) = PgSchema::from_url("postgres://db/ids?sslmode=disable").unwrap();
        assert_eq!(options.get_database(), Some("ids"));
        assert_eq!(schema.name(), None);
    }

    #[test]
    fn an_empty_schema_or_owner_is_refused() {
        let error = PgSchema::from_url("postgres://db/ids?schema=").unwrap_err();
        assert!(error.to_string().contains("schema= is empty"), "{error}");
        let error = PgSchema::from_url("postgres://db/ids?owner=").unwrap_err();
        assert!(error.to_string().contains("owner= is empty"), "{error}");
    }

    #[test]
    fn the_bound_on_sequences_is_a_positive_integer_kept_from_the_driver() {
        let (options, schema) =
            PgSchema::from_url("postgres://db/ids?max_sequences_per_scope=500&sslmode=disable")
                .unwrap();
        assert_eq!(schema.max_sequences_per_scope(), Some(500));
        assert_eq!(options.get_database(), Some("ids"));
        let (_, schema) = PgSchema::from_url("postgres://db/ids").unwrap();
        assert_eq!(schema.max_sequences_per_scope(), None);
        for bound in ["0", "-1", "ten", ""] {
            let url = format!("postgres://db/ids?max_sequences_per_scope={bound}");
            let error = PgSchema::from_url(&url).unwrap_err();
            assert!(
                error.to_string().contains("is not a positive integer"),
                "{bound}: {error}"
            );
        }
    }
}
