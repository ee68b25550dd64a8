//! The conformance suite (`gdid_testkit::conformance`) on the three SQL stores: MariaDB
//! (`GDID_MYSQL_URL`), PostgreSQL (`GDID_POSTGRES_URL`) and a SQLite file. Without a URL a store's
//! tests are skipped with a message; with `CI=true` that is a failure.
//!
//! This file is the SQL dialect of the suite: how to reach an authority, a sharded counter and
//! window shards, and how to write rows behind their backs for the corrupt-data cases.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::execute;
use gdid_engine::{Pick, RangeLayout};
use gdid_sql::{Dialect, SqlAuthority, SqlShardedCounter, SqlStore};
use gdid_testkit::conformance::{Counters, GoingDown, Ranges, Setup, StoreUnderTest, Windows};

/// The server of `store` (`SQLite`: a file in a new folder), or `None`: skipped.
fn server(store: &str) -> Option<String> {
    match store {
        "MariaDB" => gdid_testkit::server("GDID_MYSQL_URL"),
        "PostgreSQL" => gdid_testkit::server("GDID_POSTGRES_URL"),
        _ => Some(gdid_testkit::sqlite_url("gdid-sql-conformance")),
    }
}

/// `CAST(x AS text)` in the store's dialect.
fn as_text(store: &SqlStore, column: &str) -> String {
    match store.dialect() {
        Dialect::MySql => format!("CAST({column} AS CHAR)"),
        _ => format!("CAST({column} AS TEXT)"),
    }
}

/// Rows of text of a `SELECT` of 3 columns cast to text, formatted.
async fn text_rows(store: &SqlStore, select: String) -> String {
    let select = sqlx::AssertSqlSafe(store.qualify(&select));
    let rows: Vec<(Option<String>, Option<String>, Option<String>)> =
        common::with_pool!(store, pool => sqlx::query_as(select).fetch_all(pool).await).unwrap();
    format!("{rows:?}")
}

/// Authorities and counters: one database per authority number (a store records its number).
#[derive(Debug, Clone)]
struct Sql {
    store: &'static str,
    server: String,
    places: Arc<Mutex<HashMap<u8, String>>>,
}

impl Sql {
    fn open(store: &'static str) -> Option<Sql> {
        Some(Sql {
            store,
            server: server(store)?,
            places: Arc::default(),
        })
    }
}

impl StoreUnderTest for Sql {
    type Authority = SqlAuthority;
    type Place = String;

    fn store(&self) -> &str {
        self.store
    }

    async fn place(&self, number: u8) -> String {
        if let Some(place) = self.places.lock().unwrap().get(&number) {
            return place.clone();
        }
        let url = gdid_testkit::database(&self.server, &format!("gdid_authority_{number}")).await;
        let mut places = self.places.lock().unwrap();
        places.entry(number).or_insert(url).clone()
    }

    async fn connect(&self, place: &String, number: u8) -> SqlAuthority {
        SqlAuthority::connect(place, number)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", self.store))
    }
}

impl Counters for Sql {
    async fn set_counter(
        &self,
        authority: &SqlAuthority,
        scope: &str,
        sequence: &str,
        era: i64,
        next: i64,
    ) {
        let update = format!(
            "UPDATE gdid_counters SET era = {era}, next_counter = {next} \
             WHERE scope_name = '{scope}' AND sequence_name = '{sequence}'"
        );
        execute(authority.store(), update).await;
    }

    fn counter_corruptions(&self) -> Vec<&'static str> {
        let mut cases = vec!["negative-next", "above-range", "negative-era"];
        if self.store == "SQLite" {
            // SQLite stores what it is given: text, a real.
            cases.extend(["text-next", "real-era"]);
        }
        cases
    }

    async fn corrupt_counter(
        &self,
        authority: &SqlAuthority,
        scope: &str,
        sequence: &str,
        case: &str,
    ) -> Vec<String> {
        let (field, value) = match case {
            "negative-next" => ("next_counter", "-1"),
            "above-range" => ("next_counter", "4611686018427387904"),
            "negative-era" => ("era", "-1"),
            "text-next" => ("next_counter", "'abc'"),
            "real-era" => ("era", "1.5"),
            other => panic!("no such corruption: {other}"),
        };
        let update = format!(
            "UPDATE gdid_counters SET {field} = {value} \
             WHERE scope_name = '{scope}' AND sequence_name = '{sequence}'"
        );
        execute(authority.store(), update).await;
        vec![format!("sequence {sequence:?}"), format!("{field} ")]
    }

    async fn counter_text(&self, authority: &SqlAuthority, scope: &str, sequence: &str) -> String {
        let store = authority.store();
        let select = format!(
            "SELECT {}, {}, {} FROM gdid_counters \
             WHERE scope_name = '{scope}' AND sequence_name = '{sequence}'",
            as_text(store, "authority"),
            as_text(store, "era"),
            as_text(store, "next_counter")
        );
        text_rows(store, select).await
    }

    async fn empty_place(&self) -> String {
        let url = gdid_testkit::database(&self.server, "gdid_numbering").await;
        // This database is this case's alone: start it afresh (the record of an earlier run goes).
        let store = SqlStore::connect(&url).await.unwrap();
        execute(&store, "DROP TABLE IF EXISTS gdid_authority".into()).await;
        execute(&store, "DROP TABLE IF EXISTS gdid_counters".into()).await;
        url
    }

    async fn open(&self, place: &String) -> SqlAuthority {
        SqlAuthority::open(place).await.unwrap()
    }

    async fn unchecked(&self, place: &String, number: u8) -> SqlAuthority {
        let store = SqlStore::connect(place).await.unwrap();
        SqlAuthority::new(store, number, "unchecked").unwrap()
    }

    async fn counters_of(&self, authority: &SqlAuthority, number: u8) -> u64 {
        let count = authority.store().qualify(&format!(
            "SELECT COUNT(*) FROM gdid_counters WHERE authority = {number}"
        ));
        let count: i64 = common::with_pool!(authority.store(), pool => {
            sqlx::query_scalar(sqlx::AssertSqlSafe(count)).fetch_one(pool).await
        })
        .unwrap();
        u64::try_from(count).unwrap()
    }

    async fn forget_number(&self, authority: &SqlAuthority, number: u8) {
        let store = authority.store();
        execute(store, "DROP TABLE gdid_authority".into()).await;
        execute(
            store,
            format!("UPDATE gdid_counters SET authority = {number}"),
        )
        .await;
    }

    async fn insert_counter(
        &self,
        authority: &SqlAuthority,
        number: u8,
        scope: &str,
        sequence: &str,
        next: i64,
    ) {
        let insert = format!(
            "INSERT INTO gdid_counters (authority, scope_name, sequence_name, era, next_counter) \
             VALUES ({number}, '{scope}', '{sequence}', 0, {next})"
        );
        execute(authority.store(), insert).await;
    }
}

/// Sharded counters in the `gdid_ranges` table of the store's `test` database (or file).
#[derive(Debug, Clone)]
struct Sharded {
    store: &'static str,
    url: String,
    connection: SqlStore,
}

impl Sharded {
    async fn open(store: &'static str) -> Option<Sharded> {
        let url = server(store)?;
        let connection = SqlStore::connect(&url).await.unwrap();
        Some(Sharded {
            store,
            url,
            connection,
        })
    }
}

impl Ranges for Sharded {
    type Counter = SqlShardedCounter;

    async fn reconnect(&self) -> Sharded {
        let connection = SqlStore::connect(&self.url).await.unwrap();
        Sharded {
            connection,
            ..self.clone()
        }
    }

    fn store(&self) -> &str {
        self.store
    }

    async fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<SqlShardedCounter, Setup> {
        SqlShardedCounter::create(self.connection.clone(), sequence, layout, pick)
            .await
            .map_err(|e| match e {
                gdid_sql::Error::Layout { .. } => Setup::Layout(e.to_string()),
                other => Setup::Other(other.to_string()),
            })
    }

    async fn stored_ranges(&self, sequence: &str) -> Vec<(i64, i64, i64)> {
        let integer = match self.connection.dialect() {
            Dialect::MySql => "SIGNED",
            _ => "BIGINT",
        };
        let select = sqlx::AssertSqlSafe(self.connection.qualify(&format!(
            "SELECT CAST(shard AS {integer}), next_value, max_value FROM gdid_ranges \
             WHERE sequence_name = '{sequence}' ORDER BY shard"
        )));
        common::with_pool!(&self.connection, pool => sqlx::query_as(select).fetch_all(pool).await)
            .unwrap()
    }

    async fn forget_layout(&self, sequence: &str, k: i64) {
        let store = &self.connection;
        let layout = format!("DELETE FROM gdid_range_layouts WHERE sequence_name = '{sequence}'");
        execute(store, layout).await;
        let range =
            format!("DELETE FROM gdid_ranges WHERE sequence_name = '{sequence}' AND shard = {k}");
        execute(store, range).await;
    }

    async fn add_stray_range(&self, sequence: &str, range: i64) -> Vec<String> {
        let store = &self.connection;
        let used_up = format!(
            "UPDATE gdid_ranges SET next_value = max_value + 1 WHERE sequence_name = '{sequence}'"
        );
        execute(store, used_up).await;
        let insert = format!(
            "INSERT INTO gdid_ranges (sequence_name, shard, next_value, max_value) \
             VALUES ('{sequence}', {range}, 1, 5)"
        );
        execute(store, insert).await;
        vec![
            format!("sequence {sequence:?}, shard {range}"),
            format!("field shard is {range}"),
        ]
    }

    fn range_corruptions(&self) -> Vec<&'static str> {
        let mut cases = vec!["negative", "beyond-end"];
        if self.store == "SQLite" {
            cases.push("text");
        }
        cases
    }

    async fn corrupt_range(&self, sequence: &str, case: &str) -> Vec<String> {
        let value = match case {
            "negative" => "-1",
            "beyond-end" => "max_value + 10",
            "text" => "'abc'",
            other => panic!("no such corruption: {other}"),
        };
        let update = format!(
            "UPDATE gdid_ranges SET next_value = {value} WHERE sequence_name = '{sequence}'"
        );
        execute(&self.connection, update).await;
        vec![format!("sequence {sequence:?}"), "next_value".to_owned()]
    }
}

/// Window shards: databases `gdid_windows_K` of the server, or files in a folder of the test's.
#[derive(Debug)]
struct Shards {
    store: &'static str,
    server: String,
}

impl Shards {
    fn open(store: &'static str) -> Option<Shards> {
        Some(Shards {
            store,
            server: server(store)?,
        })
    }

    /// The URL of shard `k`.
    async fn url(&self, k: usize) -> String {
        let name = format!("gdid_windows_{k}");
        if let Some(path) = self.server.strip_prefix("sqlite:") {
            let dir = std::path::Path::new(path).parent().unwrap();
            return format!("sqlite:{}", dir.join(format!("{name}.sqlite")).display());
        }
        gdid_testkit::database(&self.server, &name).await
    }
}

/// The same store under another URL: `postgresql://` for `postgres://`, `localhost` for
/// `127.0.0.1`, a `./` in a SQLite path.
fn respelled(url: &str) -> String {
    if let Some(path) = url.strip_prefix("sqlite:") {
        let path = std::path::Path::new(path);
        let (dir, file) = (path.parent().unwrap(), path.file_name().unwrap());
        return format!("sqlite:{}", dir.join(".").join(file).display());
    }
    url.replacen("postgres://", "postgresql://", 1)
        .replacen("127.0.0.1", "localhost", 1)
}

impl Windows for Shards {
    type Shard = SqlStore;

    fn store(&self) -> &str {
        self.store
    }

    async fn shards(&self, n: usize) -> Vec<(String, SqlStore)> {
        let mut shards = Vec::new();
        for k in 0..n {
            let url = self.url(k).await;
            shards.push((url.clone(), SqlStore::connect(&url).await.unwrap()));
        }
        shards
    }

    async fn respelled(&self, n: usize) -> Vec<(String, SqlStore)> {
        let mut shards = Vec::new();
        for k in 0..n {
            let url = respelled(&self.url(k).await);
            shards.push((url.clone(), SqlStore::connect(&url).await.unwrap()));
        }
        shards
    }

    async fn unreachable(&self) -> SqlStore {
        let url = match self.store {
            "PostgreSQL" => "postgres://postgres@127.0.0.1:1/test",
            "SQLite" => "sqlite:/nonexistent-dir/gdid/ids.sqlite",
            _ => "mysql://root@127.0.0.1:1/test",
        };
        SqlStore::connect_lazy(url).unwrap()
    }

    async fn going_down(&self) -> GoingDown<SqlStore> {
        let url = self.url(99).await;
        let store = SqlStore::connect(&url).await.unwrap();
        let closing = store.clone();
        GoingDown {
            shard: store,
            stop: Box::pin(async move { common::with_pool!(&closing, pool => pool.close().await) }),
        }
    }

    async fn start_after_end(&self, sequence: &str, case: usize) -> Vec<String> {
        // `window_end` first in the second: MySQL assigns left to right.
        let assignment = [
            "window_start = window_end + 100",
            "window_end = window_start + 5, window_start = window_start + 50",
        ][case];
        let store = SqlStore::connect(&self.url(0).await).await.unwrap();
        let update =
            format!("UPDATE gdid_windows SET {assignment} WHERE sequence_name = '{sequence}'");
        execute(&store, update).await;
        vec![
            "corrupt row".to_owned(),
            format!("sequence {sequence:?}"),
            "window_start is after window_end".to_owned(),
        ]
    }

    async fn windows_text(&self, sequence: &str) -> String {
        let store = SqlStore::connect(&self.url(0).await).await.unwrap();
        let select = format!(
            "SELECT {}, {}, {} FROM gdid_windows WHERE sequence_name = '{sequence}' \
             ORDER BY window_start",
            as_text(&store, "window_start"),
            as_text(&store, "window_end"),
            as_text(&store, "next_hi")
        );
        text_rows(&store, select).await
    }
}

#[cfg(feature = "sqlite")]
gdid_testkit::conformance!(sqlite {
    authority, counters, counter, numbers, processes, sequences => Sql::open("SQLite");
    sharded => Sharded::open("SQLite").await;
    windows => Shards::open("SQLite");
});
#[cfg(feature = "mysql")]
gdid_testkit::conformance!(mariadb {
    authority, counters, counter, numbers, processes, sequences => Sql::open("MariaDB");
    sharded => Sharded::open("MariaDB").await;
    windows => Shards::open("MariaDB");
});
#[cfg(feature = "postgres")]
gdid_testkit::conformance!(postgres {
    authority, counters, counter, numbers, processes, sequences => Sql::open("PostgreSQL");
    sharded => Sharded::open("PostgreSQL").await;
    windows => Shards::open("PostgreSQL");
});
