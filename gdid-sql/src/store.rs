//! [`SqlStore`]: a connection pool to one MySQL/MariaDB, PostgreSQL or SQLite database.

#[cfg(feature = "sqlite")]
use std::str::FromStr;
use std::time::Duration;

#[cfg(feature = "mysql")]
use sqlx::mysql::MySqlPool;
#[cfg(feature = "postgres")]
use sqlx::postgres::PgPool;
#[cfg(feature = "sqlite")]
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions, Connection};

use gdid_engine::plumbing::redact;
use gdid_engine::plumbing::scheme::Scheme;

pub(crate) use crate::dialect::Dialect;
use crate::error::Error;
#[cfg(feature = "mysql")]
use crate::mysql_session;
#[cfg(feature = "postgres")]
pub(crate) use crate::pg_session::PgSchema;

/// A pool of connections to one database. Cheap to clone. Each variant is there with its
/// driver's feature (`mysql`, `postgres`, `sqlite`; all three by default).
#[derive(Debug, Clone)]
pub enum SqlStore {
    /// MySQL or MariaDB.
    #[cfg(feature = "mysql")]
    MySql(MySqlPool),
    /// PostgreSQL, and the schema of its gdid tables (every connection of the pool is set up
    /// for it: see [`SqlStore::connect`]).
    #[cfg(feature = "postgres")]
    Postgres(PgPool, PgSchema),
    /// SQLite.
    #[cfg(feature = "sqlite")]
    Sqlite(SqlitePool),
}

impl SqlStore {
    /// Connects to `url`: `mysql://…` or `mariadb://…`, `postgres://…` or `postgresql://…`,
    /// `sqlite:PATH` (the file is created if missing, in WAL mode).
    ///
    /// On PostgreSQL the gdid tables are in one schema: the URL's `schema=NAME`
    /// (`postgres://app@db/ids?schema=gdid`), or, without one, the schema of the role's
    /// `search_path` that holds them, resolved once (the one `CREATE TABLE` would use when none
    /// does); tables visible in two schemas of the path are refused, naming both. Each
    /// connection's commits are durable whatever the role's `synchronous_commit` says.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedUrl`] for another scheme, [`Error::Connect`] when the database cannot
    /// be reached or the schema cannot be settled (the message names the URL without its
    /// password).
    pub async fn connect(url: &str) -> Result<SqlStore, Error> {
        Self::connect_sized(url, None).await
    }

    /// As [`connect`](Self::connect), with a pool of at most `max_connections` connections to
    /// a MySQL/MariaDB or PostgreSQL server (sqlx's default, 10, when `None`): one for a
    /// process that reserves blocks rarely and must hold little, such as a database's own
    /// backend.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn connect_sized(url: &str, max_connections: Option<u32>) -> Result<SqlStore, Error> {
        Self::connect_as(Driver::scheme(url)?, url, max_connections).await
    }

    /// As [`connect_sized`](Self::connect_sized), for a URL whose scheme the caller read already
    /// from the one list of schemes ([`Scheme::of`]): a URL is read once per open.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect); [`Error::UnsupportedUrl`] for a scheme of another kind of
    /// store than SQL.
    pub async fn connect_as(
        scheme: Scheme,
        url: &str,
        max_connections: Option<u32>,
    ) -> Result<SqlStore, Error> {
        Self::connect_with(scheme, url, max_connections, true).await
    }

    /// As [`connect`](Self::connect), but creates nothing: a SQLite file that does not exist is
    /// [`Error::Connect`] naming its path (a configuration error: no retry helps), and an
    /// existing one is left in its journal mode. No statement is run but the connection's own
    /// set-up: for a caller that only reads (`gdid check`, `gdid sequences list`, `gdid schema
    /// print`).
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn connect_existing(url: &str) -> Result<SqlStore, Error> {
        Self::connect_with(Driver::scheme(url)?, url, None, false).await
    }

    /// As [`connect_existing`](Self::connect_existing), for a URL whose scheme the caller read
    /// already ([`Scheme::of`]), with a pool of at most `max_connections`.
    ///
    /// # Errors
    ///
    /// As [`connect_existing`](Self::connect_existing).
    pub async fn connect_existing_as(
        scheme: Scheme,
        url: &str,
        max_connections: Option<u32>,
    ) -> Result<SqlStore, Error> {
        Self::connect_with(scheme, url, max_connections, false).await
    }

    /// Connects; `create`: a missing SQLite file is created, and a file is put in WAL mode.
    async fn connect_with(
        scheme: Scheme,
        url: &str,
        max_connections: Option<u32>,
        create: bool,
    ) -> Result<SqlStore, Error> {
        #[cfg(not(feature = "sqlite"))]
        let _ = create; // only a SQLite file is created by connecting
        #[cfg(not(any(feature = "mysql", feature = "postgres")))]
        let _ = max_connections; // a SQLite file's pool is sized for its one writer
        let store = match Driver::of(scheme, url)? {
            #[cfg(feature = "mysql")]
            Driver::MySql => {
                let url = mysql_url(url);
                server_pool(
                    &url,
                    sized(mysql_session::pool_options(TIMEOUT), max_connections),
                )
                .await
                .map(SqlStore::MySql)
            }
            #[cfg(feature = "postgres")]
            Driver::Postgres => {
                let (options, schema) = PgSchema::from_url(url).map_err(connect_error(url))?;
                let settings = sized(PgSchema::pool_options(TIMEOUT), max_connections);
                // The first connection, which settles the schema, shows the server answers.
                let pool = match schema.settle(TIMEOUT).await {
                    Ok(()) => settings.connect_with(options).await,
                    Err(e) => Err(e),
                };
                pool.map(|pool| SqlStore::Postgres(pool, schema))
            }
            #[cfg(feature = "sqlite")]
            Driver::Sqlite => {
                let options = sqlite_options(url).map_err(connect_error(url))?;
                if create {
                    let pool = sqlite_pool(TIMEOUT).connect_with(options).await;
                    pool.map(SqlStore::Sqlite)
                } else {
                    let options = existing_file(options).map_err(connect_error(url))?;
                    let pool = SqlitePoolOptions::new()
                        .acquire_timeout(TIMEOUT)
                        .connect_with(options)
                        .await;
                    pool.map(SqlStore::Sqlite)
                }
            }
        };
        store.map_err(connect_error(url))
    }

    /// A store for `url` that connects on first use: it can be set up while the database is
    /// down (an agent's shard list, say).
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedUrl`] or [`Error::Connect`] for a URL that cannot be parsed.
    pub fn connect_lazy(url: &str) -> Result<SqlStore, Error> {
        Self::connect_lazy_as(Driver::scheme(url)?, url)
    }

    /// As [`connect_lazy`](Self::connect_lazy), for a URL whose scheme the caller read already
    /// ([`Scheme::of`]).
    ///
    /// # Errors
    ///
    /// As [`connect_lazy`](Self::connect_lazy).
    pub fn connect_lazy_as(scheme: Scheme, url: &str) -> Result<SqlStore, Error> {
        let store = match Driver::of(scheme, url)? {
            #[cfg(feature = "mysql")]
            Driver::MySql => mysql_session::pool_options(TIMEOUT)
                .connect_lazy(&mysql_url(url))
                .map(SqlStore::MySql),
            #[cfg(feature = "postgres")]
            Driver::Postgres => {
                let (options, schema) = PgSchema::from_url(url).map_err(connect_error(url))?;
                let pool = PgSchema::pool_options(TIMEOUT).connect_lazy_with(options);
                Ok(SqlStore::Postgres(pool, schema))
            }
            #[cfg(feature = "sqlite")]
            Driver::Sqlite => {
                let options = sqlite_options(url).map_err(connect_error(url))?;
                Ok(SqlStore::Sqlite(
                    sqlite_pool(TIMEOUT).connect_lazy_with(options),
                ))
            }
        };
        store.map_err(connect_error(url))
    }

    /// `text` as this store runs it: on PostgreSQL, each gdid table it names qualified with the
    /// store's schema, the text built once per store ([`PgSchema::statement`]); as it is on
    /// MySQL/MariaDB and SQLite. For the bodies of `with_live_pool!`, where the schema is
    /// settled.
    pub(crate) fn statement(&self, text: &str) -> sqlx::AssertSqlSafe<std::sync::Arc<str>> {
        match self {
            #[cfg(feature = "postgres")]
            SqlStore::Postgres(_, schema) => schema.statement(text),
            #[allow(unreachable_patterns)]
            _ => sqlx::AssertSqlSafe(std::sync::Arc::from(text)),
        }
    }

    /// `text` with each gdid table it names qualified with this store's schema (PostgreSQL), as
    /// statements run through [`with_pool!`](crate::with_pool) need: those connections resolve
    /// names with `search_path = pg_catalog, pg_temp`. The text is returned as it is on
    /// MySQL/MariaDB and SQLite, and on PostgreSQL before the schema is settled (a store from
    /// [`connect_lazy`](Self::connect_lazy) settles it on its first statement, or on
    /// [`schema`](Self::schema)).
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
    pub fn qualify(&self, text: &str) -> String {
        self.statement(text).0.to_string()
    }

    /// The most sequences one scope may hold records of: the PostgreSQL URL's
    /// `max_sequences_per_scope=N`; `None` (no bound) elsewhere and without it.
    pub(crate) fn max_sequences_per_scope(&self) -> Option<u64> {
        match self {
            #[cfg(feature = "postgres")]
            SqlStore::Postgres(_, schema) => schema.max_sequences_per_scope(),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        match self {
            #[cfg(feature = "mysql")]
            SqlStore::MySql(_) => Dialect::MySql,
            #[cfg(feature = "postgres")]
            SqlStore::Postgres(..) => Dialect::Postgres,
            #[cfg(feature = "sqlite")]
            SqlStore::Sqlite(_) => Dialect::Sqlite,
        }
    }
}

impl SqlStore {
    /// The PostgreSQL schema of the gdid tables (resolved on the first connection, made here if
    /// there is none yet); `None` on MySQL/MariaDB (the URL's database) and SQLite.
    ///
    /// # Errors
    ///
    /// The driver's error when no connection can be made, or the schema cannot be settled.
    pub async fn schema(&self) -> Result<Option<String>, sqlx::Error> {
        match self {
            #[cfg(feature = "postgres")]
            SqlStore::Postgres(pool, schema) => {
                reachable(pool).await?;
                schema.settle_pool(pool).await?;
                Ok(schema.name().map(str::to_owned))
            }
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }
}

/// The driver a URL needs, among those built in.
enum Driver {
    #[cfg(feature = "mysql")]
    MySql,
    #[cfg(feature = "postgres")]
    Postgres,
    #[cfg(feature = "sqlite")]
    Sqlite,
}

impl Driver {
    /// The SQL scheme of `url` in the one list of schemes: [`Error::UnsupportedUrl`] for none,
    /// or another kind of store.
    fn scheme(url: &str) -> Result<Scheme, Error> {
        Scheme::of(url)
            .filter(|scheme| scheme.is_sql())
            .ok_or_else(|| Error::UnsupportedUrl { url: redact(url) })
    }

    /// The driver of `scheme`, the scheme of `url`: [`Error::UnsupportedUrl`] for another kind
    /// of store than SQL, [`Error::DriverDisabled`] for one whose feature is off.
    fn of(scheme: Scheme, url: &str) -> Result<Driver, Error> {
        match scheme {
            #[cfg(feature = "mysql")]
            Scheme::MySql => Ok(Driver::MySql),
            #[cfg(feature = "postgres")]
            Scheme::Postgres => Ok(Driver::Postgres),
            #[cfg(feature = "sqlite")]
            Scheme::Sqlite => Ok(Driver::Sqlite),
            #[allow(unreachable_patterns)] // the SQL schemes of the features left out
            sql if sql.is_sql() => Err(Error::DriverDisabled {
                url: redact(url),
                feature: sql.feature(),
            }),
            _ => Err(Error::UnsupportedUrl { url: redact(url) }),
        }
    }
}

/// A MySQL/MariaDB URL as sqlx reads it: `mariadb://` spelled `mysql://`.
#[cfg(feature = "mysql")]
fn mysql_url(url: &str) -> String {
    match url.trim().strip_prefix("mariadb://") {
        Some(rest) => format!("mysql://{rest}"),
        None => url.trim().to_owned(),
    }
}

#[cfg(feature = "sqlite")]
/// A SQLite file: created if missing, a generous busy timeout. The write-ahead log is switched on
/// by [`sqlite_pool`], not here.
fn sqlite_options(url: &str) -> Result<SqliteConnectOptions, sqlx::Error> {
    Ok(SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .busy_timeout(SQLITE_BUSY_TIMEOUT))
}

#[cfg(feature = "sqlite")]
/// `options` for a file that must exist already: a missing one is refused, naming its path.
fn existing_file(options: SqliteConnectOptions) -> Result<SqliteConnectOptions, sqlx::Error> {
    let file = options.get_filename();
    // sqlx names a database in memory `file:sqlx-in-memory-N`: no file to look for.
    let in_memory = file.to_str().is_some_and(|name| name.starts_with("file:"));
    if !in_memory && !file.exists() {
        return Err(sqlx::Error::Configuration(
            format!(
                "no SQLite file at {} (a store opened to be read is not created)",
                file.display()
            )
            .into(),
        ));
    }
    Ok(options.create_if_missing(false))
}

#[cfg(feature = "sqlite")]
/// `SQLITE_BUSY`, also in its extended forms (`SQLITE_BUSY_RECOVERY`, …).
fn is_sqlite_busy(error: &dyn sqlx::error::DatabaseError) -> bool {
    error
        .code()
        .and_then(|code| code.parse::<i32>().ok())
        .is_some_and(|code| code & 0xff == 5)
}

#[cfg(feature = "sqlite")]
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(feature = "sqlite")]
/// A pool whose connections put the file in write-ahead-log mode. `PRAGMA journal_mode = WAL`
/// can fail at once with "database is locked" while another connection opens the same file (the
/// busy timeout does not cover it), so a connection that finds the file not yet in WAL mode sets
/// it, retrying on `SQLITE_BUSY` for up to the busy timeout.
fn sqlite_pool(acquire_timeout: Duration) -> SqlitePoolOptions {
    SqlitePoolOptions::new()
        .acquire_timeout(acquire_timeout)
        .after_connect(|connection, _| {
            Box::pin(async move {
                let started = std::time::Instant::now();
                loop {
                    let mode: Result<String, sqlx::Error> =
                        sqlx::query_scalar("PRAGMA journal_mode")
                            .fetch_one(&mut *connection)
                            .await;
                    let result = match mode {
                        Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
                        Ok(_) => sqlx::query_scalar::<_, String>("PRAGMA journal_mode = WAL")
                            .fetch_one(&mut *connection)
                            .await
                            .map(drop),
                        Err(e) => Err(e),
                    };
                    match result {
                        Err(sqlx::Error::Database(e))
                            if is_sqlite_busy(e.as_ref())
                                && started.elapsed() < SQLITE_BUSY_TIMEOUT =>
                        {
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                        other => return other,
                    }
                }
            })
        })
}

/// How long a connection is waited for.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the server of `pool` takes a connection, asked only when the pool holds none (a lazy
/// store's first use, or after every connection was closed): one connection is opened and
/// closed, so that a server that refuses connections is the error at once (the pool would try
/// again until its timeout), and one that does not answer is within the pool's own timeout.
/// Every statement of this crate asks it first.
///
/// # Errors
///
/// The connection's error; `sqlx::Error::PoolTimedOut` when the server did not answer within the
/// pool's timeout.
pub async fn reachable<DB>(pool: &sqlx::Pool<DB>) -> Result<(), sqlx::Error>
where
    DB: sqlx::Database,
{
    if pool.size() > 0 || pool.is_closed() {
        return Ok(());
    }
    let timeout = pool.options().get_acquire_timeout();
    connect_once(&*pool.connect_options(), timeout)
        .await
        .unwrap_or(Err(sqlx::Error::PoolTimedOut))
}

/// Opens one connection with `options` and closes it (the pool opens its own; a failure to close
/// this one politely changes nothing). `None` when no answer came within `timeout`.
async fn connect_once<O>(options: &O, timeout: Duration) -> Option<Result<(), sqlx::Error>>
where
    O: ConnectOptions,
    O::Connection: Sized,
{
    let connected = tokio::time::timeout(timeout, options.connect())
        .await
        .ok()?;
    Some(match connected {
        Ok(connection) => {
            let _ = connection.close().await;
            Ok(())
        }
        Err(e) => Err(e),
    })
}

#[cfg(feature = "mysql")]
/// A pool of the MySQL/MariaDB server of `url`, once one connection showed that the server
/// answers ([`first_connection`]; a PostgreSQL store's first connection also settles its schema).
async fn server_pool<DB: sqlx::Database>(
    url: &str,
    options: sqlx::pool::PoolOptions<DB>,
) -> Result<sqlx::Pool<DB>, sqlx::Error> {
    first_connection::<<DB::Connection as sqlx::Connection>::Options>(url).await?;
    options.connect(url).await
}

#[cfg(feature = "mysql")]
/// Opens one connection to `url` and closes it: a server that refuses connections (or cannot be
/// reached, or refuses the credentials) is the error, at once. The pool would try again until
/// its timeout and say only "pool timed out", hiding the cause.
async fn first_connection<O>(url: &str) -> Result<(), sqlx::Error>
where
    O: ConnectOptions,
    O::Connection: Sized,
{
    let options = O::from_str(url)?;
    connect_once(&options, TIMEOUT).await.unwrap_or_else(|| {
        Err(sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {TIMEOUT:?}"),
        )))
    })
}

/// A connection failure to `url`, the URL without its password.
fn connect_error(url: &str) -> impl Fn(sqlx::Error) -> Error + '_ {
    move |source| Error::Connect {
        url: redact(url),
        source,
    }
}

#[cfg(any(feature = "mysql", feature = "postgres"))]
/// `options` with at most `max_connections`, when given.
fn sized<DB: sqlx::Database>(
    options: sqlx::pool::PoolOptions<DB>,
    max_connections: Option<u32>,
) -> sqlx::pool::PoolOptions<DB> {
    match max_connections {
        Some(max) => options.max_connections(max),
        None => options,
    }
}
