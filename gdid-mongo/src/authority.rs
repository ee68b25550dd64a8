//! [`MongoAuthority`]: a GDID authority whose counters are MongoDB documents.

use std::ops::RangeInclusive;

use bson::{Bson, Document, doc};
use gdid_core::AUTHORITY_MAX;
use gdid_core::generator::{Authority, AuthorityError, Block, NameKind, validate_name};
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::{Collection, Database};

use crate::durability::{collection_with_concern, durable};
use crate::unique::{by_id, is_duplicate_key, is_type_mismatch};

/// `COUNTER_MAX` as BSON `Int64`.
const COUNTER_MAX: i64 = (1 << 60) - 1;

/// The smallest `next` an authority writes: a new document holds 1 and every update leaves the
/// end of a block of at least 1. A 0 would hand out counter 0 and then the counters from 1 again.
const NEXT_MIN: i64 = 1;

/// The largest `next` an authority writes: `COUNTER_MAX + 1`, the era used up.
const NEXT_MAX: i64 = COUNTER_MAX + 1;

/// How many times a reservation is tried when the counter document is missing from the reply
/// (first use, or a server that loses the document under a racing first insert).
const ATTEMPTS: usize = 5;

/// A GDID authority backed by one counter document per (authority, scope, sequence) in a
/// collection of the caller's choice:
///
/// ```text
/// { _id: "3:shop:order", authority: 3, scope: "shop", sequence: "order",
///   era: Int64, next: Int64 }
/// ```
///
/// A block is one `findOneAndUpdate` with an aggregation-pipeline update, so the era rollover is
/// atomic; it is acknowledged with write concern `majority` and journal by default before the
/// block is returned. The counter document is created (an insert that ignores a concurrent one)
/// before it is updated, never by an upsert.
#[derive(Debug, Clone)]
pub struct MongoAuthority {
    collection: Collection<Document>,
    number: u8,
    label: String,
}

impl MongoAuthority {
    /// Authority `number` over `collection` of `database`, with write concern `majority` and
    /// journal.
    ///
    /// # Errors
    ///
    /// A message for an authority number above 15.
    pub fn new(database: &Database, collection: &str, number: u8) -> Result<Self, String> {
        Self::with_write_concern(database, collection, number, durable())
    }

    /// As [`new`](Self::new), with another write concern.
    ///
    /// # Errors
    ///
    /// A message for an authority number above 15.
    pub fn with_write_concern(
        database: &Database,
        collection: &str,
        number: u8,
        concern: WriteConcern,
    ) -> Result<Self, String> {
        if number > AUTHORITY_MAX {
            return Err(format!("authority number {number} is above 15"));
        }
        Ok(MongoAuthority {
            collection: collection_with_concern(database, collection, concern),
            number,
            label: format!("mongodb {}.{collection}", database.name()),
        })
    }

    /// The collection of counter documents.
    pub fn collection(&self) -> &Collection<Document> {
        &self.collection
    }

    /// The `_id` of the counter document of (scope, sequence).
    pub fn counter_id(&self, scope: &str, sequence: &str) -> String {
        format!("{}:{scope}:{sequence}", self.number)
    }

    async fn create(&self, id: &str, scope: &str, sequence: &str) -> Result<(), AuthorityError> {
        let counter = doc! {
            "_id": id, "authority": i32::from(self.number), "scope": scope,
            "sequence": sequence, "era": 0_i64, "next": 1_i64,
        };
        match self.collection.insert_one(counter).await {
            Ok(_) => Ok(()),
            Err(e) if is_duplicate_key(&e) => Ok(()),
            Err(e) => Err(AuthorityError::store(e)),
        }
    }
}

/// The filter of the counter document `id` when it holds what an authority writes: an integer
/// era of at least 0 and an integer counter from [`NEXT_MIN`] to [`NEXT_MAX`]. A corrupt document is never updated:
/// the update would move it toward valid-looking values that repeat ids (a counter of -1 becomes
/// 0, then 1; `$add` turns a missing counter into null, a string into an error).
fn valid_counter(id: &str) -> Document {
    let integer = ["int", "long"];
    doc! {
        "_id": id,
        "era": { "$type": integer.as_slice(), "$gte": 0_i64 },
        "next": { "$type": integer.as_slice(), "$gte": NEXT_MIN, "$lte": NEXT_MAX },
    }
}

/// An integer field of the counter document `id` within `range`, or why the document is corrupt.
fn int64(
    id: &str,
    document: &Document,
    field: &str,
    range: RangeInclusive<i64>,
) -> Result<i64, AuthorityError> {
    let corrupt = |reason: String| {
        AuthorityError::Corrupt(format!(
            "the counter document {id:?}: field {field:?} {reason}"
        ))
    };
    let value = match document.get(field) {
        Some(Bson::Int64(v)) => *v,
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(other) => {
            return Err(corrupt(format!(
                "is {other} (a {:?}), expected Int64",
                other.element_type()
            )));
        }
        None => return Err(corrupt("is missing".to_owned())),
    };
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(corrupt(format!(
            "is {value}, expected {} to {}",
            range.start(),
            range.end()
        )))
    }
}

/// The era and counter of the counter document `id`, checked.
fn counter_state(id: &str, document: &Document) -> Result<(i64, i64), AuthorityError> {
    Ok((
        int64(id, document, "era", 0..=i64::MAX)?,
        int64(id, document, "next", NEXT_MIN..=NEXT_MAX)?,
    ))
}

/// `error` with the counter document it is about, when it reports a corrupt document or a block
/// read from one.
fn in_document(id: &str, error: AuthorityError) -> AuthorityError {
    match error {
        AuthorityError::Corrupt(reason) | AuthorityError::InvalidBlock(reason) => {
            AuthorityError::Corrupt(format!("the counter document {id:?}: {reason}"))
        }
        other => other,
    }
}

impl Authority for MongoAuthority {
    fn number(&self) -> u8 {
        self.number
    }

    fn label(&self) -> String {
        self.label.clone()
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        validate_name(NameKind::Scope, scope)?;
        validate_name(NameKind::Sequence, sequence)?;
        let size_i64 = i64::try_from(size)
            .ok()
            .filter(|s| (1..=COUNTER_MAX).contains(s))
            .ok_or(AuthorityError::InvalidSize(size))?;
        let id = self.counter_id(scope, sequence);
        // In a $set stage every expression reads the document as it was: the era and the counter
        // move together, atomically.
        let passes = doc! { "$gt": [ { "$add": ["$next", size_i64 - 1] }, COUNTER_MAX ] };
        let update = vec![doc! { "$set": {
            "era": { "$cond": [ passes.clone(), { "$add": ["$era", 1_i64] }, "$era" ] },
            "next": { "$cond": [ passes, size_i64, { "$add": ["$next", size_i64] } ] },
        }}];
        for _ in 0..ATTEMPTS {
            let updated = match self
                .collection
                .find_one_and_update(valid_counter(&id), update.clone())
                .return_document(ReturnDocument::After)
                .await
            {
                Ok(updated) => updated,
                // A server that evaluates `$add` before the type conditions fails on a field of
                // the wrong type: the document is corrupt, and the read below says which field.
                Err(e) if is_type_mismatch(&e) => None,
                Err(e) => return Err(AuthorityError::store(e)),
            };
            if let Some(document) = updated {
                let (era, next) = counter_state(&id, &document)?;
                return Block::reserved_before(self.number, era, next, size)
                    .map_err(|e| in_document(&id, e));
            }
            // No valid document: none yet, or a corrupt one (the error), or one created since.
            let stored = self
                .collection
                .find_one(by_id(&id))
                .await
                .map_err(AuthorityError::store)?;
            match stored {
                Some(document) => {
                    counter_state(&id, &document)?;
                }
                None => self.create(&id, scope, sequence).await?,
            }
        }
        Err(AuthorityError::store(format!(
            "the counter document {id} was missing from {ATTEMPTS} replies in a row"
        )))
    }
}
