//! The SQL dialect of the conformance suite (`gdid_testkit::conformance`): how to reach an
//! authority, a sharded counter and window shards on a SQL server, and how to write rows behind
//! their backs for the corrupt-data cases. gdid-sql's `conformance.rs` runs it on each server;
//! the fault suite's Galera test includes this file (`#[path]`) to run it through each node of
//! a cluster: it is written once.
//!
//! The file that includes it provides, in its crate's `common` module, raw SQL on a store for
//! set-up: `execute`, `text_rows` (three text columns, formatted), `count`, `ranges` and
//! `close`.

use std::any::Any;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use gdid_engine::{Pick, RangeLayout};
use gdid_sql::{Dialect, SqlAuthority, SqlShardedCounter, SqlStore};
use gdid_testkit::conformance::{Counters, GoingDown, Ranges, Setup, StoreUnderTest, Windows};

use crate::common::{close, count, execute, ranges, text_rows};

/// Where a run's databases are: a server, the start of each database name, and what must live
/// as long as they are used.
#[derive(Clone)]
pub(crate) struct Site {
    /// The store's name in the suite's messages: `MariaDB`, `PostgreSQL`, `SQLite`.
    pub label: &'static str,
    /// The server's URL (a SQLite file: the folder of its file is the server's).
    pub server: String,
    /// The start of each database's name: `gdid_`, or `g1_` for a Galera cluster's node 1.
    pub prefix: String,
    /// Held while the site is used (a shared cluster's read guard), or nothing.
    #[allow(dead_code)] // held, never read
    pub keep: Option<Arc<dyn Any + Send + Sync>>,
}

impl Site {
    /// The URL of database `name` (its prefix added) on the server, made if missing.
    async fn database(&self, name: &str) -> String {
        gdid_testkit::database(&self.server, &format!("{}{name}", self.prefix)).await
    }

    /// Whether the server is SQLite, which stores what it is given (text, a real).
    fn is_sqlite(&self) -> bool {
        self.server.starts_with("sqlite:")
    }

    /// `store`, connected, or a failed test that names the site.
    async fn connect(&self, url: &str) -> SqlStore {
        SqlStore::connect(url)
            .await
            .unwrap_or_else(|e| panic!("{}: {url}: {e}", self.label))
    }
}

/// `CAST(x AS text)` in the store's dialect.
fn as_text(store: &SqlStore, column: &str) -> String {
    match store.dialect() {
        Dialect::MySql => format!("CAST({column} AS CHAR)"),
        _ => format!("CAST({column} AS TEXT)"),
    }
}

/// Authorities and counters: one database per authority number (a store records its number).
#[derive(Clone)]
pub(crate) struct Sql {
    site: Site,
    places: Arc<Mutex<HashMap<u8, String>>>,
}

impl Sql {
    /// Authorities and counters on `site`.
    pub(crate) fn at(site: Site) -> Sql {
        Sql {
            site,
            places: Arc::default(),
        }
    }
}

impl StoreUnderTest for Sql {
    type Authority = SqlAuthority;
    type Place = String;

    fn store(&self) -> &str {
        self.site.label
    }

    async fn place(&self, number: u8) -> String {
        if let Some(place) = self.places.lock().unwrap().get(&number) {
            return place.clone();
        }
        let url = self.site.database(&format!("authority_{number}")).await;
        let mut places = self.places.lock().unwrap();
        places.entry(number).or_insert(url).clone()
    }

    async fn connect(&self, place: &String, number: u8) -> SqlAuthority {
        SqlAuthority::connect(place, number)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", self.site.label))
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
        if self.site.is_sqlite() {
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
        let url = self.site.database("numbering").await;
        // This database is this case's alone: start it afresh (the record of an earlier run goes).
        let store = self.site.connect(&url).await;
        execute(&store, "DROP TABLE IF EXISTS gdid_authority".into()).await;
        execute(&store, "DROP TABLE IF EXISTS gdid_counters".into()).await;
        url
    }

    async fn open(&self, place: &String) -> SqlAuthority {
        SqlAuthority::open(place)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", self.site.label))
    }

    async fn unchecked(&self, place: &String, number: u8) -> SqlAuthority {
        let store = self.site.connect(place).await;
        SqlAuthority::new(store, number, "unchecked").unwrap()
    }

    async fn counters_of(&self, authority: &SqlAuthority, number: u8) -> u64 {
        let select = format!("SELECT COUNT(*) FROM gdid_counters WHERE authority = {number}");
        u64::try_from(count(authority.store(), select).await).unwrap()
    }

    async fn forget_number(&self, authority: &SqlAuthority, number: u8) {
        let store = authority.store();
        execute(store, "DROP TABLE gdid_authority".into()).await;
        let update = format!("UPDATE gdid_counters SET authority = {number}");
        execute(store, update).await;
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

/// Sharded counters in the `gdid_ranges` table of the site's database `sharded`.
#[derive(Clone)]
pub(crate) struct Sharded {
    site: Site,
    url: String,
    connection: SqlStore,
}

impl Sharded {
    /// Sharded counters on `site`.
    pub(crate) async fn at(site: Site) -> Sharded {
        let url = site.database("sharded").await;
        let connection = site.connect(&url).await;
        Sharded {
            site,
            url,
            connection,
        }
    }
}

impl Ranges for Sharded {
    type Counter = SqlShardedCounter;

    async fn reconnect(&self) -> Sharded {
        Sharded {
            connection: self.site.connect(&self.url).await,
            ..self.clone()
        }
    }

    fn store(&self) -> &str {
        self.site.label
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
        let select = format!(
            "SELECT CAST(shard AS {integer}), next_value, max_value FROM gdid_ranges \
             WHERE sequence_name = '{sequence}' ORDER BY shard"
        );
        ranges(&self.connection, select).await
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
        if self.site.is_sqlite() {
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

/// Window shards: the site's databases `windows_K`, or files beside the site's SQLite file.
pub(crate) struct Shards {
    site: Site,
}

impl Shards {
    /// Window shards on `site`.
    pub(crate) fn at(site: Site) -> Shards {
        Shards { site }
    }

    /// The URL of shard `k`: the same at every call.
    async fn url(&self, k: usize) -> String {
        let name = format!("windows_{k}");
        if let Some(path) = self.site.server.strip_prefix("sqlite:") {
            let dir = Path::new(path).parent().unwrap();
            let file = format!("{}{name}.sqlite", self.site.prefix);
            return format!("sqlite:{}", dir.join(file).display());
        }
        self.site.database(&name).await
    }

    /// Shards `0..n`, each URL as `spell` writes it.
    async fn connected(&self, n: usize, spell: fn(&str) -> String) -> Vec<(String, SqlStore)> {
        let mut shards = Vec::new();
        for k in 0..n {
            let url = spell(&self.url(k).await);
            shards.push((url.clone(), self.site.connect(&url).await));
        }
        shards
    }
}

/// The same store under another URL: `postgresql://` for `postgres://`, `localhost` for
/// `127.0.0.1`, a `./` in a SQLite path.
fn respelled(url: &str) -> String {
    if let Some(path) = url.strip_prefix("sqlite:") {
        let path = Path::new(path);
        let (dir, file) = (path.parent().unwrap(), path.file_name().unwrap());
        return format!("sqlite:{}", dir.join(".").join(file).display());
    }
    url.replacen("postgres://", "postgresql://", 1)
        .replacen("127.0.0.1", "localhost", 1)
}

impl Windows for Shards {
    type Shard = SqlStore;

    fn store(&self) -> &str {
        self.site.label
    }

    async fn shards(&self, n: usize) -> Vec<(String, SqlStore)> {
        self.connected(n, str::to_owned).await
    }

    async fn respelled(&self, n: usize) -> Vec<(String, SqlStore)> {
        self.connected(n, respelled).await
    }

    async fn unreachable(&self) -> SqlStore {
        let server = &self.site.server;
        let url = if server.starts_with("postgres") {
            "postgres://postgres@127.0.0.1:1/test"
        } else if self.site.is_sqlite() {
            "sqlite:/nonexistent-dir/gdid/ids.sqlite"
        } else {
            "mysql://root@127.0.0.1:1/test"
        };
        SqlStore::connect_lazy(url).unwrap()
    }

    async fn going_down(&self) -> GoingDown<SqlStore> {
        let store = self.site.connect(&self.url(99).await).await;
        let closing = store.clone();
        GoingDown {
            shard: store,
            stop: Box::pin(async move { close(&closing).await }),
        }
    }

    async fn start_after_end(&self, sequence: &str, case: usize) -> Vec<String> {
        // `window_end` first in the second: MySQL assigns left to right.
        let assignment = [
            "window_start = window_end + 100",
            "window_end = window_start + 5, window_start = window_start + 50",
        ][case];
        let store = self.site.connect(&self.url(0).await).await;
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
        let store = self.site.connect(&self.url(0).await).await;
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
