//! Uniqueness: the unique index a strategy needs, and duplicate-key errors as a typed case; and
//! the other server error the strategies act on, a type mismatch.

use bson::{Document, doc};
use mongodb::error::{Error, ErrorKind, WriteFailure};
use mongodb::options::IndexOptions;
use mongodb::{Collection, IndexModel};

/// MongoDB's duplicate-key error code.
pub const DUPLICATE_KEY: i32 = 11000;

/// Whether `error` is a duplicate-key error (code 11000): from a single write, a command, or any
/// of the writes of an `insert_many` or a bulk write.
pub fn is_duplicate_key(error: &Error) -> bool {
    match error.kind.as_ref() {
        ErrorKind::Write(WriteFailure::WriteError(e)) => e.code == DUPLICATE_KEY,
        ErrorKind::Command(e) => e.code == DUPLICATE_KEY,
        ErrorKind::InsertMany(e) => e
            .write_errors
            .iter()
            .flatten()
            .any(|e| e.code == DUPLICATE_KEY),
        ErrorKind::BulkWrite(e) => e.write_errors.values().any(|e| e.code == DUPLICATE_KEY),
        _ => false,
    }
}

/// MongoDB's type-mismatch error code: an operator given a value of the wrong type (`$add` of a
/// string, say).
const TYPE_MISMATCH: i32 = 14;

/// Whether `error` is a type mismatch (code 14): a field of a document holds the wrong type for
/// the operators of the filter or update.
pub(crate) fn is_type_mismatch(error: &Error) -> bool {
    match error.kind.as_ref() {
        ErrorKind::Command(e) => e.code == TYPE_MISMATCH,
        ErrorKind::Write(WriteFailure::WriteError(e)) => e.code == TYPE_MISMATCH,
        _ => false,
    }
}

/// Creates a unique ascending index on `field` (idempotent); returns its name.
///
/// # Errors
///
/// The driver's error, e.g. when existing documents already hold duplicates.
pub async fn ensure_unique_index<T: Send + Sync>(
    collection: &Collection<T>,
    field: &str,
) -> Result<String, Error> {
    let mut keys = Document::new();
    keys.insert(field, 1);
    let index = IndexModel::builder()
        .keys(keys)
        .options(IndexOptions::builder().unique(true).build())
        .build();
    Ok(collection.create_index(index).await?.index_name)
}

/// The filter of a counter document, by its `_id`.
pub(crate) fn by_id(id: &str) -> Document {
    doc! { "_id": id }
}
