//! [`MongoAuthority`]: a GDID authority whose counters are MongoDB documents.

use bson::{Document, RawDocument, doc};
use gdid_core::AUTHORITY_MAX;
#[cfg(doc)]
use gdid_engine::Authority;
use gdid_engine::backend::numbering::{COUNTER_KEY, NumberCheck, claim};
use gdid_engine::{
    AuthorityError,
    backend::{
        ADVANCED_ERA, Allocations, CounterFields, CounterKey, CounterStart, CounterStore,
        Numbering, STORED_COUNTER_MAX, STORED_NEXT, StoredCounter, StoredInt, counter_values,
    },
};
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::{Collection, Database};

use crate::cursor::stored_int;
use crate::durability::{collection_with_concern, durable};
use crate::error::{Error, driver_error};
use crate::numbering::MongoNumberRecord;
use crate::unique::{by_id, is_type_mismatch};

/// How a counter document names its fields, in messages.
const FIELDS: CounterFields = CounterFields {
    era: "\"era\"",
    next: "\"next\"",
};

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
/// one authority, whatever number a caller passes later (see `gdid_engine::backend::numbering`).
#[derive(Debug, Clone)]
pub struct MongoAuthority {
    collection: Collection<Document>,
    numbering: Numbering<MongoNumberRecord>,
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

    /// Authority `number` over `collection` of `database` (as [`new`](Self::new)), its number
    /// checked against the collection's record now, and recorded there on first use: a
    /// collection that is another authority is refused before anything is reserved.
    ///
    /// # Errors
    ///
    /// [`Error::AuthorityNumber`] above 15; [`Error::Authority`] with
    /// [`AuthorityError::Number`] when the collection is another authority, or with the
    /// server's error.
    pub async fn connect(database: &Database, collection: &str, number: u8) -> Result<Self, Error> {
        let authority = Self::new(database, collection, number)?;
        authority.check_number().await?;
        Ok(authority)
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
        let MongoAuthority {
            collection,
            numbering,
        } = Self::of(database, collection, 0, durable());
        let number = claim(numbering.record(), None).await?;
        Ok(MongoAuthority {
            collection,
            numbering: numbering.with_check(NumberCheck::made(number)),
        })
    }

    /// Checks the authority's number against the collection's record now (recording it on first
    /// use), rather than before the first block.
    ///
    /// # Errors
    ///
    /// [`AuthorityError::Number`] when the collection is another authority; the server's error.
    pub async fn check_number(&self) -> Result<(), AuthorityError> {
        let numbering = &self.numbering;
        numbering.check().ensure(numbering.record()).await
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
            numbering: Numbering::new(
                MongoNumberRecord::of(collection.clone(), &label),
                NumberCheck::new(number),
                &label,
            ),
            collection,
        }
    }

    /// The collection of counter documents.
    pub fn collection(&self) -> &Collection<Document> {
        &self.collection
    }

    /// The `_id` of the counter document of (scope, sequence).
    pub fn counter_id(&self, scope: &str, sequence: &str) -> String {
        format!("{}:{scope}:{sequence}", self.numbering.check().number())
    }

    /// The `_id` of the one-at-a-time counter document of (scope, sequence) (see
    /// [`MongoCounter`](crate::MongoCounter)).
    pub fn counter_document_id(&self, scope: &str, sequence: &str) -> String {
        format!("{COUNTER_KEY}:{scope}:{sequence}")
    }

    /// Where the collection keeps its authority number.
    pub fn number_record(&self) -> &MongoNumberRecord {
        self.numbering.record()
    }

    /// The conditional write `update` of the counter document `filter` matches: whether one
    /// matched. A server that fails on a field of the wrong type found a corrupt document, which
    /// is no match either.
    async fn update_matched(
        &self,
        filter: Document,
        update: Document,
    ) -> Result<bool, AuthorityError> {
        match self.collection.update_one(filter, update).await {
            Ok(done) => Ok(done.matched_count > 0),
            Err(e) if is_type_mismatch(&e) => Ok(false),
            Err(e) => Err(driver_error(e)),
        }
    }
}

/// The `_id` of the counter document of `key`.
fn document_id(key: &CounterKey<'_>) -> String {
    format!("{}:{}:{}", key.key, key.scope, key.sequence)
}

/// The filter of the counter document `id` when it holds what an authority writes and can still
/// issue ids from: an integer era from [`ADVANCED_ERA`] (one past it is exhausted, left as it
/// is: `$add` past `i64::MAX` would turn it into a double) and an integer counter from
/// [`STORED_NEXT`]. A corrupt document is
/// never updated: the update would move it toward valid-looking values that repeat ids (a counter
/// of -1 becomes 0, then 1; `$add` turns a missing counter into null, a string into an error).
fn valid_counter(id: &str) -> Document {
    let integer = ["int", "long"];
    doc! {
        "_id": id,
        "era": {
            "$type": integer.as_slice(),
            "$gte": ADVANCED_ERA.start(),
            "$lte": ADVANCED_ERA.end(),
        },
        "next": {
            "$type": integer.as_slice(),
            "$gte": STORED_NEXT.start(),
            "$lte": STORED_NEXT.end(),
        },
    }
}

/// The era and next counter of a counter document, as stored.
fn stored_state(document: &Document) -> [StoredInt; 2] {
    [stored_int(document, "era"), stored_int(document, "next")]
}

/// `name` (letters, digits, `_`, `.`, `-`: a checked scope or sequence) as a regular expression
/// that matches it alone.
fn escape(name: &str) -> String {
    name.chars()
        .flat_map(|c| {
            (!c.is_ascii_alphanumeric())
                .then_some('\\')
                .into_iter()
                .chain([c])
        })
        .collect()
}

/// A sibling counter document as its name in messages and its decoded content. The `_id` is
/// read from the raw document first: one that cannot be decoded is named, as every other
/// corrupt document is.
fn sibling_document(raw: &RawDocument) -> Result<(String, Document), AuthorityError> {
    let record = format!(
        "the counter document {:?}",
        raw.get_str("_id").unwrap_or("?")
    );
    match Document::try_from(raw) {
        Ok(document) => Ok((record, document)),
        Err(e) => Err(AuthorityError::Corrupt(format!(
            "{record}: cannot be decoded: {e}"
        ))),
    }
}

/// The store side of the authority: one request each; the rules are gdid-engine's
/// ([`reserve`](gdid_engine::backend::reserve)), which make it an [`Authority`] and a
/// [`CounterRow`](gdid_engine::backend::CounterRow).
impl CounterStore for MongoAuthority {
    const FIELDS: CounterFields = FIELDS;

    type Record = MongoNumberRecord;

    fn numbering(&self) -> &Numbering<MongoNumberRecord> {
        &self.numbering
    }

    fn record_name(&self, key: &CounterKey<'_>) -> String {
        format!("the counter document {:?}", document_id(key))
    }

    async fn advance(
        &self,
        key: &CounterKey<'_>,
        size: i64,
        at: Allocations,
    ) -> Result<Option<[StoredInt; 2]>, AuthorityError> {
        // In a $set stage every expression reads the document as it was: the era and the counter
        // move together, atomically, and the allocation before this one is the one stored.
        let passes = doc! { "$gt": [ { "$add": ["$next", size - 1] }, STORED_COUNTER_MAX ] };
        let update = vec![doc! { "$set": {
            "era": { "$cond": [ passes.clone(), { "$add": ["$era", 1_i64] }, "$era" ] },
            "next": { "$cond": [ passes, size, { "$add": ["$next", size] } ] },
            "previous_at": "$allocated_at",
            "allocated_at": at.at,
            "allocated_size": size,
        }}];
        match self
            .collection
            .find_one_and_update(valid_counter(&document_id(key)), update)
            .return_document(ReturnDocument::After)
            .await
        {
            Ok(updated) => Ok(updated.as_ref().map(stored_state)),
            // A server that evaluates `$add` before the type conditions fails on a field of the
            // wrong type: the document is corrupt, and the read that follows says which field.
            Err(e) if is_type_mismatch(&e) => Ok(None),
            Err(e) => Err(driver_error(e)),
        }
    }

    async fn raise(
        &self,
        key: &CounterKey<'_>,
        era: i64,
        next: i64,
    ) -> Result<bool, AuthorityError> {
        let mut filter = valid_counter(&document_id(key));
        filter.insert(
            "$or",
            vec![
                doc! { "era": { "$lt": era } },
                doc! { "era": era, "next": { "$lt": next } },
            ],
        );
        let update = doc! { "$set": { "era": era, "next": next } };
        self.update_matched(filter, update).await
    }

    async fn lower(
        &self,
        key: &CounterKey<'_>,
        era: i64,
        from: i64,
        to: i64,
    ) -> Result<bool, AuthorityError> {
        // Integers only (`{next: 5}` alone would match a corrupt 5.0 and make it look valid).
        let filter = doc! {
            "$and": [valid_counter(&document_id(key)), { "era": era, "next": from }],
        };
        let update = doc! { "$set": { "next": to } };
        self.update_matched(filter, update).await
    }

    async fn records(&self) -> Result<Vec<StoredCounter>, AuthorityError> {
        let mut found = self
            .collection
            .find(doc! { "scope": { "$exists": true }, "sequence": { "$exists": true } })
            .sort(doc! { "authority": 1, "scope": 1, "sequence": 1 })
            .await
            .map_err(driver_error)?;
        let mut records = Vec::new();
        while found.advance().await.map_err(driver_error)? {
            let (record, document) = sibling_document(found.current())?;
            let name = |field: &str| {
                document.get_str(field).map(str::to_owned).map_err(|_| {
                    AuthorityError::Corrupt(format!("{record}: field {field:?} is not a string"))
                })
            };
            records.push(StoredCounter {
                key: stored_int(&document, "authority"),
                scope: name("scope")?,
                sequence: name("sequence")?,
                values: stored_state(&document),
                allocations: ["allocated_at", "previous_at", "allocated_size"]
                    .map(|field| stored_int(&document, field)),
            });
        }
        Ok(records)
    }

    async fn spellings(
        &self,
        key: &CounterKey<'_>,
    ) -> Result<Vec<(String, String)>, AuthorityError> {
        let exactly =
            |name: &str| doc! { "$regex": format!("^{}$", escape(name)), "$options": "i" };
        let filter = doc! { "scope": exactly(key.scope), "sequence": exactly(key.sequence) };
        let mut found = self.collection.find(filter).await.map_err(driver_error)?;
        let mut spellings = Vec::new();
        while found.advance().await.map_err(driver_error)? {
            let (_, document) = sibling_document(found.current())?;
            if let (Ok(scope), Ok(sequence)) =
                (document.get_str("scope"), document.get_str("sequence"))
            {
                spellings.push((scope.to_owned(), sequence.to_owned()));
            }
        }
        Ok(spellings)
    }

    async fn read(&self, key: &CounterKey<'_>) -> Result<Option<[StoredInt; 2]>, AuthorityError> {
        let stored = self
            .collection
            .find_one(by_id(&document_id(key)))
            .await
            .map_err(driver_error)?;
        Ok(stored.as_ref().map(stored_state))
    }

    /// At era 0, counter 1, or after the sequence's other documents (the one-at-a-time counter,
    /// whose values documents of other keys may have handed out before it was keyed 0).
    async fn insert_if_absent(
        &self,
        key: &CounterKey<'_>,
        start: CounterStart,
    ) -> Result<(), AuthorityError> {
        let id = document_id(key);
        let (scope, sequence) = (key.scope, key.sequence);
        let (mut era, mut next) = match start {
            CounterStart::At { era, next } => (era, next),
            _ => (0_i64, 1_i64),
        };
        if start == CounterStart::AfterSiblings {
            let mut siblings = self
                .collection
                .find(doc! { "scope": scope, "sequence": sequence, "_id": { "$ne": &id } })
                .await
                .map_err(driver_error)?;
            while siblings.advance().await.map_err(driver_error)? {
                let (record, sibling) = sibling_document(siblings.current())?;
                let (sibling_era, sibling_next) =
                    counter_values(&record, &FIELDS, stored_state(&sibling))?;
                era = era.max(sibling_era);
                next = next.max(sibling_next);
            }
        }
        let counter = doc! {
            "_id": id, "authority": i32::from(key.key), "scope": scope,
            "sequence": sequence, "era": era, "next": next,
        };
        match self
            .collection
            .insert_one(counter)
            .await
            .map_err(driver_error)
        {
            Ok(_) | Err(AuthorityError::Conflict(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sibling document the server hands back but that cannot be decoded (a string of invalid
    /// UTF-8) is named in the error, with what the decoder found.
    #[test]
    fn an_undecodable_sibling_document_is_named() {
        let sibling = doc! { "_id": "2:s:q", "era": 0_i64, "next": 10_i64, "note": "@@" };
        let mut bytes = sibling.to_vec().unwrap();
        let at = bytes.windows(2).position(|w| w == b"@@").unwrap();
        bytes[at..at + 2].copy_from_slice(&[0xff, 0xfe]);
        let raw = RawDocument::from_bytes(&bytes).unwrap();
        match sibling_document(raw) {
            Err(AuthorityError::Corrupt(message)) => assert!(
                message.starts_with("the counter document \"2:s:q\": cannot be decoded: "),
                "{message}"
            ),
            other => panic!("an undecodable sibling gave {other:?}"),
        }
    }
}
