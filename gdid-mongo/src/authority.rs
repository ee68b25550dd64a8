//! [`MongoAuthority`]: a GDID authority whose counters are MongoDB documents.

use std::ops::RangeInclusive;

use bson::{Bson, Document, doc};
use gdid_core::AUTHORITY_MAX;
use gdid_core::generator::numbering::{NumberCheck, claim};
use gdid_core::generator::{Authority, AuthorityError, Block, NameKind, validate_name};
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::{Collection, Database};

use crate::durability::{collection_with_concern, durable};
use crate::error::Error;
use crate::numbering::MongoNumberRecord;
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
///
/// The collection's authority number is recorded in it (`{ _id: "authority", number }`) on first
/// use and checked before the first block of every authority made on it: a counter collection is
/// one authority, whatever number a caller passes later (see `gdid_core::generator::numbering`).
#[derive(Debug, Clone)]
pub struct MongoAuthority {
    collection: Collection<Document>,
    record: MongoNumberRecord,
    check: NumberCheck,
    label: String,
}

impl MongoAuthority {
    /// Authority `number` over `collection` of `database`, with write concern `majority` and
    /// journal. Nothing is sent yet: the number is checked against the collection's record (or
    /// recorded) before the first block, and a collection recorded as another number fails every
    /// allocation with [`AuthorityError::Number`].
    ///
    /// # Errors
    ///
    /// [`Error::AuthorityNumber`] for an authority number above 15.
    pub fn new(database: &Database, collection: &str, number: u8) -> Result<Self, Error> {
        Self::with_write_concern(database, collection, number, durable())
    }

    /// The authority of `collection` of `database`: the number recorded in it, or, on first use,
    /// the number its counters already use, or 1 (recorded before this returns). Write concern
    /// `majority` and journal.
    ///
    /// # Errors
    ///
    /// The server's error, or [`AuthorityError::Number`] / [`AuthorityError::Corrupt`] when the
    /// number cannot be settled.
    pub async fn open(database: &Database, collection: &str) -> Result<Self, AuthorityError> {
        let mut authority = Self::of(database, collection, 0, durable());
        let number = claim(&authority.record, None).await?;
        authority.check = NumberCheck::made(number);
        Ok(authority)
    }

    /// Checks the authority's number against the collection's record now (recording it on first
    /// use), rather than before the first block.
    ///
    /// # Errors
    ///
    /// [`AuthorityError::Number`] when the collection is another authority; the server's error.
    pub async fn check_number(&self) -> Result<(), AuthorityError> {
        self.check.ensure(&self.record).await
    }

    /// As [`new`](Self::new), with another write concern.
    ///
    /// # Errors
    ///
    /// [`Error::AuthorityNumber`] for an authority number above 15.
    pub fn with_write_concern(
        database: &Database,
        collection: &str,
        number: u8,
        concern: WriteConcern,
    ) -> Result<Self, Error> {
        if number > AUTHORITY_MAX {
            return Err(Error::AuthorityNumber(number));
        }
        Ok(Self::of(database, collection, number, concern))
    }

    /// Authority `number` (at most [`AUTHORITY_MAX`]) over `collection` of `database`.
    fn of(database: &Database, collection: &str, number: u8, concern: WriteConcern) -> Self {
        let label = format!("mongodb {}.{collection}", database.name());
        let collection = collection_with_concern(database, collection, concern);
        MongoAuthority {
            record: MongoNumberRecord::of(collection.clone(), &label),
            collection,
            check: NumberCheck::new(number),
            label,
        }
    }

    /// The collection of counter documents.
    pub fn collection(&self) -> &Collection<Document> {
        &self.collection
    }

    /// The `_id` of the counter document of (scope, sequence).
    pub fn counter_id(&self, scope: &str, sequence: &str) -> String {
        format!("{}:{scope}:{sequence}", self.check.number())
    }

    /// The `_id` of the one-at-a-time counter document of (scope, sequence) (see
    /// [`MongoCounter`](crate::MongoCounter)).
    pub fn counter_document_id(&self, scope: &str, sequence: &str) -> String {
        format!("{COUNTER_KEY}:{scope}:{sequence}")
    }

    /// Where the collection keeps its authority number.
    pub fn number_record(&self) -> &MongoNumberRecord {
        &self.record
    }

    /// Creates the counter document `id` unless it exists: at era 0, counter 1, or with
    /// `after_siblings` (the one-at-a-time counter, whose values documents of other keys may have
    /// handed out before it was keyed 0) at the highest era and counter of the sequence's other
    /// documents.
    async fn create(
        &self,
        id: &str,
        key: u8,
        (scope, sequence): (&str, &str),
        after_siblings: bool,
    ) -> Result<(), AuthorityError> {
        let (mut era, mut next) = (0_i64, 1_i64);
        if after_siblings {
            let mut siblings = self
                .collection
                .find(doc! { "scope": scope, "sequence": sequence, "_id": { "$ne": id } })
                .await
                .map_err(AuthorityError::store)?;
            while siblings.advance().await.map_err(AuthorityError::store)? {
                let sibling: Document = siblings
                    .deserialize_current()
                    .map_err(AuthorityError::store)?;
                let sibling_id = sibling.get_str("_id").unwrap_or("?").to_owned();
                let (sibling_era, sibling_next) = counter_state(&sibling_id, &sibling)?;
                era = era.max(sibling_era);
                next = next.max(sibling_next);
            }
        }
        let counter = doc! {
            "_id": id, "authority": i32::from(key), "scope": scope,
            "sequence": sequence, "era": era, "next": next,
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
        self.check.number()
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
        let number = self
            .check
            .before_block(&self.record, scope, sequence)
            .await?;
        self.reserve(number, scope, sequence, size, false).await
    }
}

impl MongoAuthority {
    /// Reserves `size` counters of the document keyed (`key`, scope, sequence): the block of
    /// authority `key`, or, with key [`COUNTER_KEY`], values of the collection's one-at-a-time
    /// counter; a missing document is created as [`create`](Self::create) says.
    pub(crate) async fn reserve(
        &self,
        key: u8,
        scope: &str,
        sequence: &str,
        size: u64,
        after_siblings: bool,
    ) -> Result<Block, AuthorityError> {
        validate_name(NameKind::Scope, scope)?;
        validate_name(NameKind::Sequence, sequence)?;
        let size_i64 = i64::try_from(size)
            .ok()
            .filter(|s| (1..=COUNTER_MAX).contains(s))
            .ok_or(AuthorityError::InvalidSize(size))?;
        let id = format!("{key}:{scope}:{sequence}");
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
                return Block::reserved_before(key, era, next, size)
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
                None => {
                    self.create(&id, key, (scope, sequence), after_siblings)
                        .await?
                }
            }
        }
        Err(AuthorityError::store(format!(
            "the counter document {id} was missing from {ATTEMPTS} replies in a row"
        )))
    }
}

/// The key of the one-at-a-time counters' documents, whatever the collection's authority number:
/// their values are the collection's, not an authority's (see [`MongoCounter`](crate::MongoCounter)).
pub(crate) const COUNTER_KEY: u8 = gdid_core::generator::numbering::COUNTER_KEY;
