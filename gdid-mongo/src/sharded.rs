//! [`MongoShardedCounter`]: N counter documents, each owning a fixed range of values (the
//! "COUNTER DOCUMENT NUMBER k" scheme with a `max`; see `gdid_core::generator::ranges`). This file
//! holds the two operations; the pick, the skipping and the splitting are gdid-core's.
//!
//! ```text
//! { _id: "account:3", sequence: "account", range: 3, next: Int64, max: Int64 }
//! ```

use bson::{Bson, Document, doc};
use gdid_core::generator::{
    Error, IdBatch, IdGenerator, NameKind, Pick, RangeLayout, RangeState, RangeStore,
    ShardedCounter, validate_name,
};
use mongodb::options::ReturnDocument;
use mongodb::{Collection, Database};

use crate::durability::{collection_with_concern, durable};
use crate::unique::is_duplicate_key;

/// The ranges of one sequence in a MongoDB collection.
#[derive(Debug)]
pub struct MongoRanges {
    collection: Collection<Document>,
    sequence: String,
}

fn int64(document: &Document, field: &str) -> Result<u64, Error> {
    match document.get(field) {
        Some(Bson::Int64(v)) if *v >= 0 => Ok(v.unsigned_abs()),
        Some(Bson::Int32(v)) if *v >= 0 => Ok(u64::from(v.unsigned_abs())),
        other => Err(Error::store(format!(
            "range document field {field:?} is {other:?}, expected a non-negative Int64: corrupt document"
        ))),
    }
}

impl RangeStore for MongoRanges {
    fn sequence(&self) -> &str {
        &self.sequence
    }

    async fn take(&self, range: u32, n: u64) -> Result<Option<u64>, Error> {
        let n = i64::try_from(n).map_err(|_| Error::InvalidCount {
            count: n,
            reason: "too many ids for one call",
        })?;
        // Only a range with n values left matches: the increment never passes `max`.
        let filter = doc! {
            "_id": format!("{}:{range}", self.sequence),
            "$expr": { "$lte": [ { "$add": ["$next", n - 1] }, "$max" ] },
        };
        let updated = self
            .collection
            .find_one_and_update(filter, doc! { "$inc": { "next": n } })
            .return_document(ReturnDocument::After)
            .await
            .map_err(Error::store)?;
        updated.map(|document| int64(&document, "next")).transpose()
    }

    async fn list(&self) -> Result<Vec<RangeState>, Error> {
        let mut cursor = self
            .collection
            .find(doc! { "sequence": &self.sequence })
            .sort(doc! { "range": 1 })
            .await
            .map_err(Error::store)?;
        let mut states = Vec::new();
        while cursor.advance().await.map_err(Error::store)? {
            let document = cursor.deserialize_current().map_err(Error::store)?;
            let range = u32::try_from(int64(&document, "range")?).map_err(Error::store)?;
            states.push(RangeState {
                range,
                next: int64(&document, "next")?,
                max: int64(&document, "max")?,
            });
        }
        Ok(states)
    }
}

/// A `u64` id generator over N counter documents, each owning a fixed range: fixed-digit ids,
/// writers spread over N documents, random or round-robin pick, used-up ranges skipped.
#[derive(Debug)]
pub struct MongoShardedCounter(ShardedCounter<MongoRanges>);

impl MongoShardedCounter {
    /// Creates the range documents of `layout` in `collection` if missing, after checking that
    /// documents already there have the same ranges (more ranges of the same size are added).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidName`] for a bad sequence name, [`Error::InvalidConfig`] when stored
    /// documents disagree with `layout` (going on could repeat ids), [`Error::Store`] when the
    /// server fails.
    pub async fn create(
        database: &Database,
        collection: &str,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<MongoShardedCounter, Error> {
        validate_name(NameKind::Sequence, sequence)?;
        let ranges = MongoRanges {
            collection: collection_with_concern(database, collection, durable()),
            sequence: sequence.to_owned(),
        };
        let first_missing = layout
            .check_stored(&ranges.list().await?)
            .map_err(|reason| Error::InvalidConfig {
                reason: format!("range layout of {sequence}: {reason}"),
            })?;
        for k in first_missing..layout.ranges() {
            let range = layout.range(k);
            let value = |v: u64| i64::try_from(v).unwrap_or(i64::MAX); // RangeLayout keeps values in i64
            let document = doc! {
                "_id": format!("{sequence}:{k}"), "sequence": sequence, "range": i64::from(k),
                "next": value(range.start), "max": value(range.end - 1),
            };
            match ranges.collection.insert_one(document).await {
                Ok(_) => {}
                Err(e) if is_duplicate_key(&e) => {} // created by a concurrent `create`
                Err(e) => return Err(Error::store(e)),
            }
        }
        Ok(MongoShardedCounter(ShardedCounter::new(
            ranges, layout, pick,
        )))
    }

    /// The layout.
    pub fn layout(&self) -> RangeLayout {
        self.0.layout()
    }
}

impl IdGenerator for MongoShardedCounter {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, Error> {
        self.0.next_id().await
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        self.0.next_ids(n).await
    }
}
