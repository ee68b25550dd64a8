//! The store matrix: every kind of store the tests run against, and a place of a test's own on
//! each, so that a test written once runs on all of them
//! ([`on_every_store!`](crate::on_every_store)).

use crate::{database, mongodb_database, server, sqlite_url};

/// A kind of store the tests run against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreServer {
    /// A new SQLite file.
    Sqlite,
    /// The MariaDB server of `GDID_MYSQL_URL`.
    MariaDb,
    /// The PostgreSQL server of `GDID_POSTGRES_URL`.
    Postgres,
    /// The MongoDB server of `GDID_MONGODB_URI`.
    MongoDb,
}

impl StoreServer {
    /// Every kind, SQLite first.
    pub const ALL: [StoreServer; 4] = [
        StoreServer::Sqlite,
        StoreServer::MariaDb,
        StoreServer::Postgres,
        StoreServer::MongoDb,
    ];

    /// The URL of a store of the test `name`'s own on this server: a new SQLite file, or the
    /// database `name` (letters, digits and `_`) on the server; `None` when the server is not
    /// configured (see [`server`]: with `CI=true` that panics instead).
    ///
    /// # Panics
    ///
    /// As [`server`] and [`database`].
    pub async fn url(self, name: &str) -> Option<String> {
        match self {
            StoreServer::Sqlite => Some(sqlite_url(name)),
            StoreServer::MariaDb => Some(database(&server("GDID_MYSQL_URL")?, name).await),
            StoreServer::Postgres => Some(database(&server("GDID_POSTGRES_URL")?, name).await),
            StoreServer::MongoDb => Some(mongodb_database(&server("GDID_MONGODB_URI")?, name)),
        }
    }

    /// [`url`](Self::url) for a test without a runtime (made on one of its own, gone before
    /// this returns).
    ///
    /// # Panics
    ///
    /// As [`url`](Self::url).
    pub fn url_blocking(self, name: &str) -> Option<String> {
        tokio::runtime::Runtime::new()
            .expect("a runtime")
            .block_on(self.url(name))
    }
}

/// The URL of a store of the test `name`'s own on every configured server, SQLite first
/// ([`StoreServer::url`]), for a test without a runtime.
pub fn every_store(name: &str) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    StoreServer::ALL
        .into_iter()
        .filter_map(|kind| runtime.block_on(kind.url(name)))
        .collect()
}

/// One test per store of `check(url)`: `async` for `#[tokio::test]`s of an `async fn check`,
/// `blocking` for plain `#[test]`s. Each line names a [`StoreServer`] and the test, with any
/// attributes (a `cfg` of the calling crate's features, say); a server that is not configured
/// skips its test, or fails it under `CI=true`.
///
/// ```text
/// gdid_testkit::on_every_store!(async two_runs_differ("gdid_front_door"):
///     Sqlite => example_on_sqlite,
///     #[cfg(feature = "mysql")] MariaDb => example_on_mariadb,
/// );
/// ```
///
/// Four test names alone are the four stores, each under the calling crate's feature of its
/// driver (`sqlite`, `mysql`, `postgres`, `mongodb`):
///
/// ```text
/// gdid_testkit::on_every_store!(async two_runs_differ("gdid_front_door"):
///     example_on_sqlite, example_on_mariadb, example_on_postgres, example_on_mongodb);
/// ```
#[macro_export]
macro_rules! on_every_store {
    ($kind:tt $check:ident($name:literal):
        $sqlite:ident, $mariadb:ident, $postgres:ident, $mongodb:ident $(,)?) => {
        $crate::on_every_store!($kind $check($name):
            #[cfg(feature = "sqlite")] Sqlite => $sqlite,
            #[cfg(feature = "mysql")] MariaDb => $mariadb,
            #[cfg(feature = "postgres")] Postgres => $postgres,
            #[cfg(feature = "mongodb")] MongoDb => $mongodb,
        );
    };
    (async $check:ident($name:literal): $($(#[$meta:meta])* $server:ident => $test:ident),+ $(,)?) => {
        $(
            $(#[$meta])*
            #[tokio::test]
            async fn $test() {
                if let Some(url) = $crate::StoreServer::$server.url($name).await {
                    $check(&url).await;
                }
            }
        )+
    };
    (blocking $check:ident($name:literal): $($(#[$meta:meta])* $server:ident => $test:ident),+ $(,)?) => {
        $(
            $(#[$meta])*
            #[test]
            fn $test() {
                if let Some(url) = $crate::StoreServer::$server.url_blocking($name) {
                    $check(&url);
                }
            }
        )+
    };
}
