//! [`MongoShardedCounter`]: N counter documents, each owning a fixed range of values (the
//! "COUNTER DOCUMENT NUMBER k" scheme with a `max`; see `gdid_engine::ShardedCounter`), and the
//! layout document of the sequence. This file holds the store operations; the creation of a
//! layout, the pick, the skipping, the splitting and every check of stored values are
//! gdid-engine's.
//!
//! ```text
//! { _id: "account:3", sequence: "account", range: 3, next: Int64, max: Int64 }
//! { _id: "account:layout", base: Int64, size: Int64, ranges: Int64 }
//! ```
//!
//! The layout document has no `sequence` field, so listing the ranges (by `sequence`) never sees
//! it, and its `_id` cannot be a range's (sequence names hold no `:`).

use std::ops::Range;

use bson::{Bson, Document, doc};
use gdid_engine::{
    Error, NameKind, Pick, RangeLayout, ShardedCounter,
    backend::{LAYOUT_FIELDS, RangeFields, RangeState, RangeStore, validate_name},
};
use mongodb::options::ReturnDocument;
use mongodb::{Collection, Database};

use crate::cursor::{find_all, stored_int};
use crate::durability::{collection_with_concern, durable};
use crate::error::Driver;
use crate::unique::{is_duplicate_key, is_type_mismatch};

/// The ranges of one sequence in a MongoDB collection.
#[derive(Debug)]
pub struct MongoRanges {
    collection: Collection<Document>,
    sequence: String,
}

/// An integer field of a stored range or layout document (the engine's one decoder; the engine
/// checks its range).
fn integer(document: &Document, field: &str) -> Result<i64, Error> {
    let value = stored_int(document, field);
    Ok(value.decode(
        &record_of(document),
        &format!("{field:?}"),
        i64::MIN..=i64::MAX,
    )?)
}

/// How messages name a range or layout document.
fn record_of(document: &Document) -> String {
    format!(
        "the range document {}",
        document.get("_id").unwrap_or(&Bson::Null)
    )
}

/// The fields of a range document.
const FIELDS: RangeFields = RangeFields {
    range: "\"range\"",
    next: "\"next\"",
    max: "\"max\"",
};

impl MongoRanges {
    /// The `_id` of the document of range `range`.
    fn range_id(&self, range: i64) -> String {
        format!("{}:{range}", self.sequence)
    }

    /// The `_id` of the layout document.
    fn layout_id(&self) -> String {
        format!("{}:layout", self.sequence)
    }

    /// A checked range document: integer fields that gdid-engine accepts, under the `_id` of its
    /// range (the one [`RangeStore::take`] updates).
    fn range_state(&self, document: &Document) -> Result<RangeState, Error> {
        let id = document.get("_id").unwrap_or(&Bson::Null);
        let range = integer(document, "range")?;
        let record = format!("the range document {id}");
        if id.as_str() != Some(self.range_id(range).as_str()) {
            return Err(Error::corrupt(format!(
                "{record}: field \"range\" is {range}, the document of range {range} has _id {:?}",
                self.range_id(range)
            )));
        }
        let (next, max) = (integer(document, "next")?, integer(document, "max")?);
        RangeState::from_stored(&record, &FIELDS, [range, next, max])
    }
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
    const FIELDS: RangeFields = FIELDS;

    fn sequence(&self) -> &str {
        &self.sequence
    }

    fn range_record(&self, range: i64) -> String {
        format!("the range document {:?}", self.range_id(range))
    }

    fn layout_record(&self) -> String {
        format!("the layout document {:?}", self.layout_id())
    }

    async fn take(&self, range: u32, n: u64) -> Result<Option<u64>, Error> {
        let n =
            i64::try_from(n).map_err(|_| Error::invalid_count(n, "too many ids for one call"))?;
        // Only a valid range with n values left matches: the increment never passes `max`. A
        // corrupt one is left to `list`, which the caller reads when no range matches.
        let id = self.range_id(i64::from(range));
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
            Err(e) => return Err(Error::store(Driver(e))),
        };
        updated
            .map(|document| {
                let next = stored_int(&document, "next");
                Ok(next.decode(&record_of(&document), FIELDS.next, 0..=i64::MAX)?)
            })
            .transpose()
    }

    async fn list(&self) -> Result<Vec<RangeState>, Error> {
        let find = self.collection.find(doc! { "sequence": &self.sequence });
        let documents = find_all(find.sort(doc! { "range": 1 }))
            .await
            .map_err(|e| Error::store(Driver(e)))?;
        documents
            .iter()
            .map(|document| self.range_state(document))
            .collect()
    }

    async fn read_layout(&self) -> Result<Option<RangeLayout>, Error> {
        let found = self
            .collection
            .find_one(doc! { "_id": self.layout_id() })
            .await
            .map_err(|e| Error::store(Driver(e)))?;
        let Some(document) = found else {
            return Ok(None);
        };
        let mut stored = [0; 3];
        for (value, field) in stored.iter_mut().zip(LAYOUT_FIELDS) {
            *value = integer(&document, field)?;
        }
        RangeLayout::from_stored(&self.layout_record(), stored).map(Some)
    }

    async fn insert_layout(&self, layout: RangeLayout) -> Result<(), Error> {
        let value = |v: u64| i64::try_from(v).unwrap_or(i64::MAX); // RangeLayout keeps values in i64
        let document = doc! {
            "_id": self.layout_id(), "base": value(layout.base()), "size": value(layout.size()),
            "ranges": i64::from(layout.ranges()),
        };
        self.insert_if_absent(document).await
    }

    async fn insert_range(&self, range: u32, values: Range<u64>) -> Result<(), Error> {
        let value = |v: u64| i64::try_from(v).unwrap_or(i64::MAX); // RangeLayout keeps values in i64
        let document = doc! {
            "_id": self.range_id(i64::from(range)), "sequence": &self.sequence,
            "range": i64::from(range), "next": value(values.start), "max": value(values.end - 1),
        };
        self.insert_if_absent(document).await
    }
}

impl MongoRanges {
    /// Inserts `document` unless a document of its `_id` exists.
    async fn insert_if_absent(&self, document: Document) -> Result<(), Error> {
        match self.collection.insert_one(document).await {
            Ok(_) => Ok(()),
            Err(e) if is_duplicate_key(&e) => Ok(()), // written by a concurrent creator
            Err(e) => Err(Error::store(Driver(e))),
        }
    }
}

/// A `u64` id generator over N counter documents, each owning a fixed range: fixed-digit ids,
/// writers spread over N documents, random or round-robin pick, used-up ranges skipped.
#[derive(Debug)]
pub struct MongoShardedCounter(ShardedCounter<MongoRanges>);

impl MongoShardedCounter {
    /// Creates the range documents of `layout` in `collection` if missing. The first layout created
    /// for a sequence is its layout for good: it is recorded (one insert of the layout document,
    /// which fails if it exists) before any range document is written, so processes racing to
    /// create layouts on a fresh sequence agree on one; those that asked for another get
    /// [`ErrorDetail::InvalidConfig`](gdid_engine::ErrorDetail::InvalidConfig), and nothing was
    /// written for them.
    ///
    /// # Errors
    ///
    /// [`ErrorDetail::InvalidName`](gdid_engine::ErrorDetail::InvalidName) for a bad sequence name,
    /// [`ErrorDetail::InvalidConfig`](gdid_engine::ErrorDetail::InvalidConfig) when the sequence
    /// has another layout (recorded, or range documents stored that disagree with `layout`: going
    /// on could repeat ids), [`ErrorDetail::Corrupt`](gdid_engine::ErrorDetail::Corrupt) for a
    /// stored document that cannot be right,
    /// [`ErrorDetail::Store`](gdid_engine::ErrorDetail::Store) when the server fails.
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
        ShardedCounter::create(ranges, layout, pick)
            .await
            .map(MongoShardedCounter)
    }

    /// The layout.
    pub fn layout(&self) -> RangeLayout {
        self.0.layout()
    }
}

gdid_engine::delegate_id_generator!(MongoShardedCounter => u64);
