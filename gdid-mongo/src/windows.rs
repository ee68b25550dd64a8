//! Distributed hi-lo windows on MongoDB shards (separate databases or deployments): the claim
//! protocol and the client's walk over the shards are gdid-engine's
//! ([`gdid_engine::windows`]); this module holds the two collections of a shard and the
//! operations on them.
//!
//! ```text
//! gdid_windows:       { _id: "order:1000000", sequence: "order", start: Int64, end: Int64,
//!                       next_hi: Int64, open: bool, taken: Int64 }
//! gdid_window_claims: { _id: "order:1000000", sequence: "order", start: Int64, end: Int64 }
//!                     { _id: "identity", identity: "9f0c…" }
//! ```
//!
//! The document `identity` of the claims collection holds the shard's random identity, written
//! by the first agent that prepares it: it orders every agent's claims alike, whatever URL names
//! the database. No claim has that `_id` (a claim's `_id` is `sequence:start`, with a colon), and
//! none of the queries on claims, which all name a sequence, finds it.
//!
//! A client takes values with one `findOneAndUpdate` whose pipeline update moves `next_hi` to
//! `min(end, next_hi + n)` and records how far it moved in `taken`: it never passes the window's
//! end, whatever runs at the same time.

use bson::{Bson, Document, doc};
use gdid_engine::windows::{self, Window, WindowShard};
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::{Collection, Database, IndexModel};

use crate::cursor::stored_int;
use crate::durability::{collection_with_concern, durable};
use crate::unique::{is_duplicate_key, is_type_mismatch};

/// The window and claim collections of one shard database.
#[derive(Debug, Clone)]
pub struct MongoWindowShard {
    database: Database,
    windows: Collection<Document>,
    claims: Collection<Document>,
}

/// Why an operation on a shard failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WindowShardError {
    /// The driver or the server failed.
    #[error("{}", crate::error::shown(.0))]
    Driver(#[from] mongodb::error::Error),
    /// A window or claim document that cannot be right.
    #[error("corrupt document {id} in {collection}: {reason}")]
    Corrupt {
        /// The collection.
        collection: &'static str,
        /// The document's `_id`.
        id: String,
        /// What is wrong.
        reason: String,
    },
    /// A value above `i64::MAX` (BSON `Int64`).
    #[error("{0} does not fit an Int64")]
    OutOfRange(u64),
}

/// Keeps every MongoDB shard supplied with open windows that never overlap, even two agents at
/// once (see [`gdid_engine::windows`] for the protocol).
///
/// ```no_run
/// use gdid_mongo::{MongoWindowAgent, MongoWindowShard};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let eu = mongodb::Client::with_uri_str("mongodb://eu.example:27017").await?;
/// let us = mongodb::Client::with_uri_str("mongodb://us.example:27017").await?;
/// let mut agent = MongoWindowAgent::new(1_000_000, 2)?;
/// agent.add_shard("eu", MongoWindowShard::new(&eu.database("ids"))).await?;
/// agent.add_shard("us", MongoWindowShard::new(&us.database("ids"))).await?;
/// let report = agent.run_once(&["order"]).await?;
/// println!("opened {} windows", report.created.len());
/// # Ok(())
/// # }
/// ```
pub type MongoWindowAgent = windows::WindowAgent<MongoWindowShard>;

/// `u64` ids from the open windows of MongoDB shards, `batch` values per `findOneAndUpdate`.
pub type MongoWindowGenerator = windows::WindowGenerator<MongoWindowShard>;

const WINDOWS: &str = "gdid_windows";
const CLAIMS: &str = "gdid_window_claims";
/// The `_id` of the identity document in the claims collection: without the colon every claim
/// `_id` has.
const IDENTITY_ID: &str = "identity";

impl MongoWindowShard {
    /// The shard in `database`, writing with write concern `majority` and journal.
    pub fn new(database: &Database) -> Self {
        Self::with_write_concern(database, durable())
    }

    /// As [`new`](Self::new), with another write concern. A claim or a take acknowledged before
    /// it is durable can be lost in a fail-over, and its values handed out again: lower it only
    /// where that is acceptable.
    pub fn with_write_concern(database: &Database, concern: WriteConcern) -> Self {
        MongoWindowShard {
            database: database.clone(),
            windows: collection_with_concern(database, WINDOWS, concern.clone()),
            claims: collection_with_concern(database, CLAIMS, concern),
        }
    }
}

fn key(sequence: &str, start: i64) -> String {
    format!("{sequence}:{start}")
}

fn int64(value: u64) -> Result<i64, WindowShardError> {
    i64::try_from(value).map_err(|_| WindowShardError::OutOfRange(value))
}

/// A non-negative `Int64` field of `document`.
fn field(
    document: &Document,
    collection: &'static str,
    name: &str,
) -> Result<u64, WindowShardError> {
    // The engine's words for a stored integer (`StoredInt`), with the collection and `_id`
    // beside them in the error.
    let value = stored_int(document, name).within(&format!("{name:?}"), 0..=i64::MAX);
    value
        .map(i64::unsigned_abs)
        .map_err(|reason| WindowShardError::Corrupt {
            collection,
            id: document
                .get("_id")
                .map_or_else(|| "(no _id)".to_owned(), ToString::to_string),
            reason: reason.to_string(),
        })
}

fn window(document: &Document) -> Result<Window, WindowShardError> {
    let window = Window {
        start: field(document, WINDOWS, "start")?,
        end: field(document, WINDOWS, "end")?,
        next_hi: field(document, WINDOWS, "next_hi")?,
    };
    let broken = if window.start > window.end {
        "start is after end"
    } else if window.next_hi < window.start {
        "next_hi is before start"
    } else if window.next_hi > window.end {
        "next_hi is after end"
    } else {
        return Ok(window);
    };
    Err(WindowShardError::Corrupt {
        collection: WINDOWS,
        id: document
            .get("_id")
            .map_or_else(String::new, ToString::to_string),
        reason: format!(
            "{broken} (start {}, end {}, next_hi {}): expected start <= next_hi <= end",
            window.start, window.end, window.next_hi
        ),
    })
}

/// The first open window of `sequence` that is corrupt, as its error: why a take found no
/// window when one is marked open.
async fn first_corrupt_open(
    windows: &Collection<Document>,
    sequence: &str,
) -> Result<Option<WindowShardError>, WindowShardError> {
    let mut cursor = windows
        .find(doc! { "sequence": sequence, "open": true })
        .sort(doc! { "start": 1 })
        .await?;
    while cursor.advance().await? {
        if let Err(corrupt) = window(&cursor.deserialize_current()?) {
            return Ok(Some(corrupt));
        }
    }
    Ok(None)
}

impl WindowShard for MongoWindowShard {
    type Error = WindowShardError;

    fn is_corrupt(error: &WindowShardError) -> bool {
        matches!(error, WindowShardError::Corrupt { .. })
    }

    async fn prepare(&self) -> Result<(), WindowShardError> {
        let index = |keys: Document| IndexModel::builder().keys(keys).build();
        self.windows
            .create_indexes([
                index(doc! { "sequence": 1, "open": 1, "start": 1 }),
                index(doc! { "sequence": 1, "end": -1 }),
            ])
            .await?;
        self.claims
            .create_index(index(doc! { "sequence": 1, "end": -1 }))
            .await?;
        Ok(())
    }

    /// The document `identity` of the claims collection, inserted if absent, read back.
    async fn identity(&self, candidate: &str) -> Result<String, WindowShardError> {
        let record = doc! { "_id": IDENTITY_ID, "identity": candidate };
        match self.claims.insert_one(record).await {
            Ok(_) => {}
            Err(e) if is_duplicate_key(&e) => {}
            Err(e) => return Err(e.into()),
        }
        let stored = self.claims.find_one(doc! { "_id": IDENTITY_ID }).await?;
        match stored.as_ref().map(|d| d.get("identity")) {
            Some(Some(Bson::String(identity))) if !identity.is_empty() => Ok(identity.clone()),
            other => Err(WindowShardError::Corrupt {
                collection: CLAIMS,
                id: format!("{IDENTITY_ID:?}"),
                reason: format!("identity is {other:?}, expected a non-empty string"),
            }),
        }
    }

    async fn ping(&self) -> Result<(), WindowShardError> {
        self.database.run_command(doc! { "ping": 1 }).await?;
        Ok(())
    }

    async fn sequences(&self) -> Result<Vec<String>, WindowShardError> {
        let mut names = Vec::new();
        for collection in [&self.windows, &self.claims] {
            for name in collection.distinct("sequence", doc! {}).await? {
                if let Bson::String(name) = name {
                    names.push(name);
                }
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    async fn high_water(&self, sequence: &str) -> Result<u64, WindowShardError> {
        let mut high = 0;
        let integer = doc! { "$type": ["int", "long"] };
        for (collection, name) in [(&self.windows, WINDOWS), (&self.claims, CLAIMS)] {
            // BSON orders strings above numbers: an end that is not an integer is an error
            // naming its document, never the highest end.
            let not_integer = doc! { "sequence": sequence, "end": { "$not": integer.clone() } };
            if let Some(document) = collection.find_one(not_integer).await? {
                field(&document, name, "end")?;
            }
            let highest = collection
                .find_one(doc! { "sequence": sequence, "end": integer.clone() })
                .sort(doc! { "end": -1 })
                .await?;
            if let Some(document) = highest {
                high = high.max(field(&document, name, "end")?);
            }
        }
        Ok(high)
    }

    async fn prune(&self, sequence: &str, keep: u64) -> Result<u64, WindowShardError> {
        let used = doc! { "sequence": sequence, "open": false };
        let skip = keep;
        let cutoff = self
            .windows
            .find_one(used.clone())
            .sort(doc! { "start": -1 })
            .skip(skip)
            .await?;
        let Some(start) = cutoff.as_ref().and_then(|d| d.get("start")).cloned() else {
            return Ok(0);
        };
        let mut filter = used;
        filter.insert("start", doc! { "$lte": start });
        Ok(self.windows.delete_many(filter).await?.deleted_count)
    }

    async fn open_windows(&self, sequence: &str) -> Result<u64, WindowShardError> {
        Ok(self
            .windows
            .count_documents(doc! { "sequence": sequence, "open": true })
            .await?)
    }

    async fn windows(&self, sequence: &str) -> Result<Vec<Window>, WindowShardError> {
        let mut cursor = self
            .windows
            .find(doc! { "sequence": sequence })
            .sort(doc! { "start": 1 })
            .await?;
        let mut windows = Vec::new();
        while cursor.advance().await? {
            windows.push(window(&cursor.deserialize_current()?)?);
        }
        Ok(windows)
    }

    async fn claim(&self, sequence: &str, start: u64, end: u64) -> Result<bool, WindowShardError> {
        let (start, end) = (int64(start)?, int64(end)?);
        let claim = doc! {
            "_id": key(sequence, start), "sequence": sequence, "start": start, "end": end,
        };
        match self.claims.insert_one(claim).await {
            Ok(_) => Ok(true),
            Err(e) if is_duplicate_key(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    async fn open(&self, sequence: &str, start: u64, end: u64) -> Result<(), WindowShardError> {
        let (start, end) = (int64(start)?, int64(end)?);
        let window = doc! {
            "_id": key(sequence, start), "sequence": sequence, "start": start, "end": end,
            "next_hi": start, "open": true,
        };
        self.windows.insert_one(window).await?;
        Ok(())
    }

    async fn take(&self, sequence: &str, n: u64) -> Result<Option<(u64, u64)>, WindowShardError> {
        let n = int64(n)?;
        // `open` finds the window by index; the `$expr` makes sure it has values left and is not
        // corrupt (integer fields, start <= next_hi < end): a corrupt window is never taken from,
        // and is reported below.
        let integer = doc! { "$type": ["int", "long"] };
        let filter = doc! {
            "sequence": sequence, "open": true,
            "start": { "$type": ["int", "long"], "$gte": 0_i64 },
            "end": integer.clone(), "next_hi": integer,
            "$expr": { "$and": [
                { "$lte": ["$start", "$next_hi"] },
                { "$lt": ["$next_hi", "$end"] },
            ] },
        };
        // In the first stage every expression reads the window as it was: `taken` is how far
        // `next_hi` moves. The second stage reads the `next_hi` the first one set. The values
        // come from the document after the update, not a pre-image (which one MongoDB-compatible
        // server does not take atomically with the update).
        let moved = doc! { "$min": ["$end", { "$add": ["$next_hi", n] }] };
        let update = vec![
            doc! { "$set": {
                "taken": { "$subtract": [moved.clone(), "$next_hi"] },
                "next_hi": moved,
            }},
            doc! { "$set": { "open": { "$lt": ["$next_hi", "$end"] } } },
        ];
        let after = match self
            .windows
            .find_one_and_update(filter, update)
            .sort(doc! { "start": 1 })
            .return_document(ReturnDocument::After)
            .await
        {
            Ok(after) => after,
            // A server that evaluates `$add` before the type conditions fails on a field of the
            // wrong type: the window is corrupt, and the scan below says which.
            Err(e) if is_type_mismatch(&e) => None,
            Err(e) => return Err(e.into()),
        };
        let Some(after) = after else {
            return match first_corrupt_open(&self.windows, sequence).await? {
                Some(corrupt) => Err(corrupt),
                None => Ok(None),
            };
        };
        let window = window(&after)?;
        let taken = field(&after, WINDOWS, "taken")?;
        match window.next_hi.checked_sub(taken) {
            Some(first) if first >= window.start && (1..=n.unsigned_abs()).contains(&taken) => {
                Ok(Some((first, taken)))
            }
            _ => Err(WindowShardError::Corrupt {
                collection: WINDOWS,
                id: key(sequence, int64(window.start)?),
                reason: format!("took {taken} of {n} values up to {window:?}"),
            }),
        }
    }
}
