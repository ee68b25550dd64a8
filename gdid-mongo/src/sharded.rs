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
use crate::unique::{is_duplicate_key, is_type_mismatch};

/// The ranges of one sequence in a MongoDB collection.
#[derive(Debug)]
pub struct MongoRanges {
    collection: Collection<Document>,
    sequence: String,
}

/// The error for the range document `id` holding what `reason` says.
fn corrupt(id: &Bson, reason: &str) -> Error {
    Error::Corrupt(format!("the range document {id}: {reason}"))
}

/// A non-negative integer field of a range document, or why the document is corrupt.
fn int64(document: &Document, field: &str) -> Result<u64, Error> {
    let value = match document.get(field) {
        Some(Bson::Int64(v)) => u64::try_from(*v).ok(),
        Some(Bson::Int32(v)) => u64::try_from(*v).ok(),
        _ => None,
    };
    value.ok_or_else(|| {
        let found = document.get(field).map_or_else(
            || "missing".to_owned(),
            |v| format!("{v} (a {:?})", v.element_type()),
        );
        corrupt(
            document.get("_id").unwrap_or(&Bson::Null),
            &format!("field {field:?} is {found}, expected a non-negative Int64"),
        )
    })
}

/// A checked range document: integer fields, and `next` at most one past `max`.
fn range_state(document: &Document) -> Result<RangeState, Error> {
    let id = document.get("_id").unwrap_or(&Bson::Null);
    let range = int64(document, "range")?;
    let range = u32::try_from(range)
        .map_err(|_| corrupt(id, &format!("field \"range\" is {range}, above u32::MAX")))?;
    let (next, max) = (int64(document, "next")?, int64(document, "max")?);
    if next > max.saturating_add(1) {
        return Err(corrupt(
            id,
            &format!("field \"next\" is {next}, beyond the end of its range (max {max})"),
        ));
    }
    Ok(RangeState { range, next, max })
}

/// The filter of range document `id` when its fields are non-negative integers: a corrupt
/// document is never updated (`$inc` would move a negative counter toward valid-looking values,
/// and create a missing one), [`RangeStore::list`] reports it.
fn valid_range(id: &str) -> Document {
    let integer = ["int", "long"];
    doc! {
        "_id": id,
        "next": { "$type": integer.as_slice(), "$gte": 0_i64 },
        "max": { "$type": integer.as_slice(), "$gte": 0_i64 },
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
        // Only a valid range with n values left matches: the increment never passes `max`. A
        // corrupt one is left to `list`, which the caller reads when no range matches.
        let id = format!("{}:{range}", self.sequence);
        let mut filter = valid_range(&id);
        filter.insert(
            "$expr",
            doc! { "$lte": [ { "$add": ["$next", n - 1] }, "$max" ] },
        );
        let updated = match self
            .collection
            .find_one_and_update(filter, doc! { "$inc": { "next": n } })
            .return_document(ReturnDocument::After)
            .await
        {
            Ok(updated) => updated,
            // A server that evaluates `$add` before the type conditions fails on a field of the
            // wrong type: the document is corrupt, and `list` says which field.
            Err(e) if is_type_mismatch(&e) => None,
            Err(e) => return Err(Error::store(e)),
        };
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
            states.push(range_state(&document)?);
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
