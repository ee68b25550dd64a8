//! A MongoDB store (gdid-mongo), a [`Driver`] of the [`Database`](crate::database::Database)
//! backend.

use std::time::Duration;

use gdid_engine::backend::numbering::NumberRecord;
use gdid_engine::durability::Durability;
use gdid_engine::plumbing::redact;
use gdid_engine::{Pick, RangeLayout, backend::BoxFuture};
use gdid_mongo::{MongoAuthority, MongoNumberRecord, MongoShardedCounter, MongoWindowShard};
use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

use crate::database::Driver;
use crate::error::{Redacted, Sorted, StoreError};

/// The database used when the URL names none.
pub(crate) const DEFAULT_DATABASE: &str = "gdid";
/// The collection of counter documents (and of the store's authority number).
pub(crate) const COUNTERS: &str = "gdid_counters";
/// The collection of the sharded counters' ranges.
const RANGES: &str = "gdid_ranges";
/// How long a server is looked for when the URL does not say (`serverSelectionTimeoutMS`).
const SERVER_TIMEOUT: Duration = Duration::from_secs(5);

/// A MongoDB database, its counter collection and the collection's number record.
#[derive(Debug)]
pub(crate) struct MongoBackend {
    database: Database,
    counters: String,
    record: MongoNumberRecord,
}

impl MongoBackend {
    /// A client of `url` for the database the URL names or else `default_database`, the
    /// counters in collection `counters`; unless `lazy`, the server is pinged.
    pub(crate) async fn open(
        url: &str,
        label: &str,
        default_database: &str,
        counters: &str,
        lazy: bool,
    ) -> Result<MongoBackend, StoreError> {
        let connect = |error: mongodb::error::Error| {
            // The driver may quote the URI: its message is redacted too, its kind kept.
            let redacted = redacted(error);
            StoreError::Connect {
                url: label.to_owned(),
                kind: redacted.kind,
                source: redacted.source,
            }
        };
        let mut options = ClientOptions::parse(url).await.map_err(connect)?;
        options
            .server_selection_timeout
            .get_or_insert(SERVER_TIMEOUT);
        let name = options
            .default_database
            .clone()
            .unwrap_or_else(|| default_database.to_owned());
        let database = Client::with_options(options)
            .map_err(connect)?
            .database(&name);
        if !lazy {
            database
                .run_command(bson::doc! { "ping": 1 })
                .await
                .map_err(connect)?;
        }
        Ok(MongoBackend {
            record: MongoNumberRecord::new(&database, counters, label),
            counters: counters.to_owned(),
            database,
        })
    }
}

impl Driver for MongoBackend {
    type Authority = MongoAuthority;
    type Sharded = MongoShardedCounter;
    type Shard = MongoWindowShard;

    fn record(&self) -> &dyn NumberRecord {
        &self.record
    }

    /// The collection as authority `number`.
    fn numbered(&self, number: u8) -> Result<MongoAuthority, impl std::error::Error> {
        MongoAuthority::new(&self.database, &self.counters, number)
    }

    async fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<MongoShardedCounter, Sorted> {
        Ok(MongoShardedCounter::create(&self.database, RANGES, sequence, layout, pick).await?)
    }

    /// MongoDB's ranges need no move after a failover: their writes survive an election.
    fn skip_ranges<'a>(
        &'a self,
        _sequence: &'a str,
        _by: u64,
    ) -> BoxFuture<'a, Result<u64, Sorted>> {
        let why = "its writes survive a failover (w: majority, j: true), and this store does \
                   not skip ranges";
        Box::pin(std::future::ready(Err(Sorted::config(why))))
    }

    fn durability(&self) -> BoxFuture<'_, Result<Durability, Sorted>> {
        Box::pin(async move {
            let report = gdid_mongo::durability(&self.database).await;
            // The driver may quote the URI: its message is redacted, its kind kept.
            report.map_err(redacted)
        })
    }

    fn shard(&self) -> (String, MongoWindowShard) {
        (self.record.store(), MongoWindowShard::new(&self.database))
    }

    fn is_duplicate_key(error: &(dyn std::error::Error + 'static)) -> bool {
        error
            .downcast_ref::<mongodb::error::Error>()
            .is_some_and(gdid_mongo::is_duplicate_key)
    }
}

/// The driver's `error`, its message redacted (it may quote the URI), its kind kept.
fn redacted(error: mongodb::error::Error) -> Sorted {
    let message = redact(&error.to_string());
    Sorted::new(
        gdid_mongo::Error::Server(error).kind(),
        Redacted { message },
    )
}
