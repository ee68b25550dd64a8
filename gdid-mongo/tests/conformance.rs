//! The conformance suite (`gdid_testkit::conformance`) on the server of `GDID_MONGODB_URI` (the
//! project's test server, or a genuine MongoDB). Without the variable the tests say they are
//! skipped; with `CI=true` that is a failure.
//!
//! This file is the MongoDB dialect of the suite: how to reach an authority, a sharded counter
//! and window shards, and how to write documents behind their backs for the corrupt-data cases.

mod common;

use bson::{Bson, Document, doc};
use common::{Relay, client, fresh, uri};
use gdid_engine::{ErrorDetail, Pick, RangeLayout};
use gdid_mongo::{MongoAuthority, MongoShardedCounter, MongoWindowShard};
use gdid_testkit::conformance::{Counters, GoingDown, Ranges, Setup, StoreUnderTest, Windows};
use mongodb::{Collection, Cursor, Database};

/// The database the authorities and sharded counters are in.
const DATABASE: &str = "gdid_test";

/// Every document of `cursor`.
async fn all(mut cursor: Cursor<Document>) -> Vec<Document> {
    let mut documents = Vec::new();
    while cursor.advance().await.unwrap() {
        documents.push(cursor.deserialize_current().unwrap());
    }
    documents
}

/// Authorities and counters: a collection per authority number (a collection records its
/// number), named after the test.
#[derive(Debug, Clone)]
struct Mongo {
    uri: String,
    prefix: String,
}

impl Mongo {
    fn open() -> Option<Mongo> {
        Some(Mongo {
            uri: uri()?,
            prefix: fresh("counters"),
        })
    }

    /// The database, through a client of its own.
    async fn database(&self) -> Database {
        client(&self.uri).await.database(DATABASE)
    }
}

impl StoreUnderTest for Mongo {
    type Authority = MongoAuthority;
    type Place = String;

    fn store(&self) -> &str {
        "MongoDB"
    }

    async fn place(&self, number: u8) -> String {
        format!("{}_{number}", self.prefix)
    }

    async fn connect(&self, place: &String, number: u8) -> MongoAuthority {
        MongoAuthority::new(&self.database().await, place, number).unwrap()
    }
}

impl Counters for Mongo {
    async fn set_counter(
        &self,
        authority: &MongoAuthority,
        scope: &str,
        sequence: &str,
        era: i64,
        next: i64,
    ) {
        authority
            .collection()
            .update_one(
                doc! { "_id": authority.counter_id(scope, sequence) },
                doc! { "$set": { "era": era, "next": next } },
            )
            .await
            .unwrap();
    }

    fn counter_corruptions(&self) -> Vec<&'static str> {
        vec![
            "negative-next",
            "above-range",
            "string-next",
            "double-next",
            "negative-era",
            "null-era",
            "missing-next",
        ]
    }

    async fn corrupt_counter(
        &self,
        authority: &MongoAuthority,
        scope: &str,
        sequence: &str,
        case: &str,
    ) -> Vec<String> {
        let id = authority.counter_id(scope, sequence);
        let (field, update) = match case {
            "negative-next" => ("next", doc! { "$set": { "next": -1_i64 } }),
            "above-range" => ("next", doc! { "$set": { "next": 1_i64 << 62 } }),
            "string-next" => ("next", doc! { "$set": { "next": "abc" } }),
            "double-next" => ("next", doc! { "$set": { "next": 5.5 } }),
            "negative-era" => ("era", doc! { "$set": { "era": -1_i64 } }),
            "null-era" => ("era", doc! { "$set": { "era": Bson::Null } }),
            "missing-next" => ("next", doc! { "$unset": { "next": "" } }),
            other => panic!("no such corruption: {other}"),
        };
        authority
            .collection()
            .update_one(doc! { "_id": &id }, update)
            .await
            .unwrap();
        let mut names = vec![format!("{id:?}"), format!("{field:?}")];
        if case == "missing-next" {
            names.push("\"next\" is missing".to_owned());
        }
        names
    }

    async fn counter_text(
        &self,
        authority: &MongoAuthority,
        scope: &str,
        sequence: &str,
    ) -> String {
        let stored = authority
            .collection()
            .find_one(doc! { "_id": authority.counter_id(scope, sequence) })
            .await
            .unwrap();
        format!("{stored:?}")
    }

    async fn empty_place(&self) -> String {
        fresh("numbers")
    }

    async fn open(&self, place: &String) -> MongoAuthority {
        MongoAuthority::open(&self.database().await, place)
            .await
            .unwrap()
    }

    async fn unchecked(&self, place: &String, number: u8) -> MongoAuthority {
        MongoAuthority::new(&self.database().await, place, number).unwrap()
    }

    async fn counters_of(&self, authority: &MongoAuthority, number: u8) -> u64 {
        authority
            .collection()
            .count_documents(doc! { "authority": i32::from(number) })
            .await
            .unwrap()
    }

    /// The record goes, and each counter document becomes one an authority `number` wrote
    /// (`_id` and `authority`).
    async fn forget_number(&self, authority: &MongoAuthority, number: u8) {
        let counters = authority.collection();
        counters
            .delete_one(doc! { "_id": "authority" })
            .await
            .unwrap();
        for mut document in all(counters.find(doc! {}).await.unwrap()).await {
            let id = document.get_str("_id").unwrap().to_owned();
            let (_, key) = id.split_once(':').unwrap();
            document.insert("_id", format!("{number}:{key}"));
            document.insert("authority", i32::from(number));
            counters.insert_one(document).await.unwrap();
            counters.delete_one(doc! { "_id": id }).await.unwrap();
        }
    }

    async fn insert_counter(
        &self,
        authority: &MongoAuthority,
        number: u8,
        scope: &str,
        sequence: &str,
        next: i64,
    ) {
        authority
            .collection()
            .insert_one(doc! {
                "_id": format!("{number}:{scope}:{sequence}"), "authority": i32::from(number),
                "scope": scope, "sequence": sequence, "era": 0_i64, "next": next,
            })
            .await
            .unwrap();
    }
}

/// Sharded counters in a collection named after the test.
#[derive(Debug, Clone)]
struct Sharded {
    uri: String,
    database: Database,
    collection: String,
}

impl Sharded {
    async fn open() -> Option<Sharded> {
        let uri = uri()?;
        let database = client(&uri).await.database(DATABASE);
        Some(Sharded {
            uri,
            database,
            collection: fresh("ranges"),
        })
    }

    fn ranges(&self) -> Collection<Document> {
        self.database.collection(&self.collection)
    }
}

impl Ranges for Sharded {
    type Counter = MongoShardedCounter;

    fn store(&self) -> &str {
        "MongoDB"
    }

    async fn reconnect(&self) -> Sharded {
        Sharded {
            database: client(&self.uri).await.database(DATABASE),
            ..self.clone()
        }
    }

    async fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<MongoShardedCounter, Setup> {
        MongoShardedCounter::create(&self.database, &self.collection, sequence, layout, pick)
            .await
            .map_err(|e| match e.detail() {
                ErrorDetail::InvalidConfig { .. } => Setup::Layout(e.to_string()),
                _ => Setup::Other(e.to_string()),
            })
    }

    async fn stored_ranges(&self, sequence: &str) -> Vec<(i64, i64, i64)> {
        let ranges = self.ranges();
        let find = ranges.find(doc! { "sequence": sequence });
        let documents = all(find.sort(doc! { "range": 1 }).await.unwrap()).await;
        let field = |document: &Document, name: &str| document.get_i64(name).unwrap();
        documents
            .iter()
            .map(|d| (field(d, "range"), field(d, "next"), field(d, "max")))
            .collect()
    }

    async fn forget_layout(&self, sequence: &str, k: i64) {
        for id in [format!("{sequence}:layout"), format!("{sequence}:{k}")] {
            self.ranges().delete_one(doc! { "_id": id }).await.unwrap();
        }
    }

    async fn add_stray_range(&self, sequence: &str, range: i64) -> Vec<String> {
        let ranges = self.ranges();
        ranges
            .update_many(
                doc! { "sequence": sequence },
                vec![doc! { "$set": { "next": { "$add": ["$max", 1_i64] } } }],
            )
            .await
            .unwrap();
        let id = format!("{sequence}:{range}");
        ranges
            .insert_one(doc! {
                "_id": &id, "sequence": sequence, "range": range, "next": 1_i64, "max": 5_i64,
            })
            .await
            .unwrap();
        vec![format!("{id:?}"), format!("field \"range\" is {range}")]
    }

    fn range_corruptions(&self) -> Vec<&'static str> {
        vec!["negative", "beyond-end", "missing", "string"]
    }

    async fn corrupt_range(&self, sequence: &str, case: &str) -> Vec<String> {
        let set = |value: Bson| doc! { "$set": { "next": value } };
        let update = match case {
            "negative" => set(Bson::Int64(-1)),
            "beyond-end" => set(Bson::Int64(1_010)),
            "missing" => doc! { "$unset": { "next": "" } },
            "string" => set(Bson::String("abc".into())),
            other => panic!("no such corruption: {other}"),
        };
        let id = format!("{sequence}:0");
        self.ranges()
            .update_one(doc! { "_id": &id }, update)
            .await
            .unwrap();
        vec![format!("{id:?}"), "\"next\"".to_owned()]
    }
}

/// Window shards: databases of the server named after the test, each through a client of its
/// own (as separate deployments would be; the protocol does not tell the difference).
#[derive(Debug)]
struct Shards {
    uri: String,
    prefix: String,
}

impl Shards {
    fn open() -> Option<Shards> {
        Some(Shards {
            uri: uri()?,
            prefix: fresh("windows"),
        })
    }

    /// The database of shard `k` reached through `uri`, labelled by both.
    async fn shard(&self, uri: &str, k: usize) -> (String, MongoWindowShard) {
        let name = format!("{}_{k}", self.prefix);
        let database = client(uri).await.database(&name);
        (format!("{uri} {name}"), MongoWindowShard::new(&database))
    }

    /// The windows of the first shard.
    async fn windows(&self) -> Collection<Document> {
        let name = format!("{}_0", self.prefix);
        client(&self.uri)
            .await
            .database(&name)
            .collection("gdid_windows")
    }
}

impl Windows for Shards {
    type Shard = MongoWindowShard;

    fn store(&self) -> &str {
        "MongoDB"
    }

    async fn shards(&self, n: usize) -> Vec<(String, MongoWindowShard)> {
        let mut shards = Vec::new();
        for k in 0..n {
            shards.push(self.shard(&self.uri, k).await);
        }
        shards
    }

    /// `localhost` for `127.0.0.1`.
    async fn respelled(&self, n: usize) -> Vec<(String, MongoWindowShard)> {
        let other = self.uri.replacen("127.0.0.1", "localhost", 1);
        let mut shards = Vec::new();
        for k in 0..n {
            shards.push(self.shard(&other, k).await);
        }
        shards
    }

    async fn unreachable(&self) -> MongoWindowShard {
        let uri = "mongodb://127.0.0.1:1/?directConnection=true&serverSelectionTimeoutMS=300";
        MongoWindowShard::new(&client(uri).await.database("ids"))
    }

    /// A database reached through a relay that stops.
    async fn going_down(&self) -> GoingDown<MongoWindowShard> {
        let relay = Relay::start(&self.uri).await;
        let database = client(&relay.uri).await.database(&fresh("wdown"));
        GoingDown {
            shard: MongoWindowShard::new(&database),
            stop: Box::pin(relay.stop()),
        }
    }

    async fn start_after_end(&self, sequence: &str, case: usize) -> Vec<String> {
        let stage = if case == 0 {
            doc! { "start": { "$add": ["$end", 100_i64] } }
        } else {
            doc! { "end": { "$add": ["$start", 5_i64] }, "start": { "$add": ["$start", 50_i64] } }
        };
        self.windows()
            .await
            .update_one(doc! { "sequence": sequence }, vec![doc! { "$set": stage }])
            .await
            .unwrap();
        vec![
            "corrupt document".to_owned(),
            format!("{sequence}:"),
            "start is after end".to_owned(),
        ]
    }

    async fn windows_text(&self, sequence: &str) -> String {
        let windows = self.windows().await;
        let find = windows.find(doc! { "sequence": sequence });
        format!(
            "{:?}",
            all(find.sort(doc! { "start": 1 }).await.unwrap()).await
        )
    }
}

gdid_testkit::conformance!(mongo {
    authority, counters, counter, numbers, processes, sequences => Mongo::open();
    sharded => Sharded::open().await;
    windows => Shards::open();
});
