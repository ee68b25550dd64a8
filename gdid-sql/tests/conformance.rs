//! The conformance suite (`gdid_testkit::conformance`) on the three SQL stores: MariaDB
//! (`GDID_MYSQL_URL`), PostgreSQL (`GDID_POSTGRES_URL`) and a SQLite file. Without a URL a store's
//! tests are skipped with a message; with `CI=true` that is a failure.
//!
//! The SQL dialect of the suite is `common/adapter.rs` (the fault suite's Galera test runs it
//! too): how to reach an authority, a sharded counter and window shards, and how to write rows
//! behind their backs for the corrupt-data cases.

#[path = "common/adapter.rs"]
mod adapter;
mod common;

use adapter::{Sharded, Shards, Site, Sql};

/// The site of `store` (`SQLite`: a file in a new folder), or `None`: skipped.
fn site(label: &'static str) -> Option<Site> {
    let server = match label {
        "MariaDB" => gdid_testkit::server("GDID_MYSQL_URL")?,
        "PostgreSQL" => gdid_testkit::server("GDID_POSTGRES_URL")?,
        _ => gdid_testkit::sqlite_url("gdid-sql-conformance"),
    };
    Some(Site {
        label,
        server,
        prefix: "gdid_".into(),
        keep: None,
    })
}

/// The sharded counters of `store`'s site, or `None`: skipped.
async fn sharded(label: &'static str) -> Option<Sharded> {
    Some(Sharded::at(site(label)?).await)
}

#[cfg(feature = "sqlite")]
gdid_testkit::conformance!(sqlite {
    authority, counters, counter, numbers, processes, sequences => site("SQLite").map(Sql::at);
    sharded => sharded("SQLite").await;
    windows => site("SQLite").map(Shards::at);
});
#[cfg(feature = "mysql")]
gdid_testkit::conformance!(mariadb {
    authority, counters, counter, numbers, processes, sequences => site("MariaDB").map(Sql::at);
    sharded => sharded("MariaDB").await;
    windows => site("MariaDB").map(Shards::at);
});
#[cfg(feature = "postgres")]
gdid_testkit::conformance!(postgres {
    authority, counters, counter, numbers, processes, sequences => site("PostgreSQL").map(Sql::at);
    sharded => sharded("PostgreSQL").await;
    windows => site("PostgreSQL").map(Shards::at);
});
