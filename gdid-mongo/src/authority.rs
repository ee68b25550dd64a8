//! [`MongoAuthority`]: a GDID authority whose counters are MongoDB documents.

use bson::{Bson, Document, doc};
use gdid_core::AUTHORITY_MAX;
use gdid_core::generator::{Authority, AuthorityError, Block, NameKind, validate_name};
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::{Collection, Database};

use crate::durability::{collection_with_concern, durable};
use crate::unique::{by_id, is_duplicate_key};

/// `COUNTER_MAX` as BSON `Int64`.
const COUNTER_MAX: i64 = (1 << 60) - 1;

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

/// An `Int64` field of a counter document, or why the document is corrupt.
fn int64(document: &Document, field: &str) -> Result<i64, AuthorityError> {
    match document.get(field) {
        Some(Bson::Int64(v)) => Ok(*v),
        Some(Bson::Int32(v)) => Ok(i64::from(*v)),
        Some(other) => Err(AuthorityError::Corrupt(format!(
            "field {field:?} of the counter document is a {:?}, expected Int64",
            other.element_type()
        ))),
        None => Err(AuthorityError::Corrupt(format!(
            "the counter document has no field {field:?}"
        ))),
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
            let updated = self
                .collection
                .find_one_and_update(by_id(&id), update.clone())
                .return_document(ReturnDocument::After)
                .await
                .map_err(|e| match e.kind.as_ref() {
                    // A field of the wrong type makes $add fail on the server (code 14).
                    mongodb::error::ErrorKind::Command(c) if c.code == 14 => {
                        AuthorityError::Corrupt(format!("the counter document {id}: {}", c.message))
                    }
                    _ => AuthorityError::store(e),
                })?;
            match updated {
                Some(document) => {
                    let (era, next) = (int64(&document, "era")?, int64(&document, "next")?);
                    return Block::reserved_before(self.number, era, next, size);
                }
                None => self.create(&id, scope, sequence).await?,
            }
        }
        Err(AuthorityError::store(format!(
            "the counter document {id} was missing from {ATTEMPTS} replies in a row"
        )))
    }
}
