//! The authority number a counter collection records (one document), and the numbers its counter
//! documents use: the three operations of gdid-engine's
//! [`NumberRecord`](gdid_engine::backend::numbering::NumberRecord). The rules are gdid-engine's.
//!
//! ```text
//! { _id: "authority", number: Int32 }      beside the counter documents "3:shop:order", …
//! ```
//!
//! The counter documents' `_id`s start with a number and a colon, so `"authority"` is never one.

use bson::{Bson, Document, doc};
use gdid_engine::backend::STORED_AUTHORITY;
use gdid_engine::backend::numbering::{COUNTER_KEY, NumberRecord};
use gdid_engine::{AuthorityError, backend::BoxFuture};
use mongodb::{Collection, Database};

use crate::cursor::{find_all, stored_int};
use crate::durability::{collection_with_concern, durable};
use crate::error::Driver;

use crate::unique::{by_id, is_duplicate_key};

/// The `_id` of the record.
const RECORD_ID: &str = "authority";

/// Where a MongoDB counter collection keeps its authority number. Cheap to clone.
#[derive(Debug, Clone)]
pub struct MongoNumberRecord {
    collection: Collection<Document>,
    label: String,
}

impl MongoNumberRecord {
    /// The record of the counters in `collection` of `database`, written with write concern
    /// `majority` and journal; `label` names the store in messages.
    pub fn new(database: &Database, collection: &str, label: &str) -> Self {
        Self::of(
            collection_with_concern(database, collection, durable()),
            label,
        )
    }

    /// The record of the counters in `collection`, written with its write concern.
    pub(crate) fn of(collection: Collection<Document>, label: &str) -> Self {
        MongoNumberRecord {
            collection,
            label: label.to_owned(),
        }
    }

    fn number_in(&self, field: &str, document: &Document) -> Result<u8, AuthorityError> {
        let record = format!(
            "{}: the document {:?}",
            self.label,
            document.get("_id").unwrap_or(&Bson::Null).to_string()
        );
        stored_int(document, field).decode(&record, &format!("{field:?}"), STORED_AUTHORITY)
    }
}

impl NumberRecord for MongoNumberRecord {
    fn store(&self) -> String {
        self.label.clone()
    }

    fn recorded_number(&self) -> BoxFuture<'_, Result<Option<u8>, AuthorityError>> {
        Box::pin(async move {
            let record = self.collection.find_one(by_id(RECORD_ID)).await;
            record
                .map_err(|e| AuthorityError::store(Driver(e)))?
                .map(|document| self.number_in("number", &document))
                .transpose()
        })
    }

    fn record_number(&self, number: u8) -> BoxFuture<'_, Result<(), AuthorityError>> {
        let record = doc! { "_id": RECORD_ID, "number": i32::from(number) };
        Box::pin(async move {
            match self.collection.insert_one(record).await {
                Ok(_) => Ok(()),
                Err(e) if is_duplicate_key(&e) => Ok(()), // recorded already: read back
                Err(e) => Err(AuthorityError::store(Driver(e))),
            }
        })
    }

    fn numbers_in_counters(&self) -> BoxFuture<'_, Result<Vec<u8>, AuthorityError>> {
        let counters = doc! {
            "_id": { "$ne": RECORD_ID },
            "authority": { "$ne": i32::from(COUNTER_KEY) },
        };
        Box::pin(async move {
            let find = self.collection.find(counters);
            let documents = find_all(find.projection(doc! { "authority": 1 }))
                .await
                .map_err(|e| AuthorityError::store(Driver(e)))?;
            let mut found = Vec::new();
            for document in documents {
                let number = self.number_in("authority", &document)?;
                if !found.contains(&number) {
                    found.push(number);
                }
            }
            Ok(found)
        })
    }
}
