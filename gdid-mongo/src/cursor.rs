//! Reading what a query finds.

use bson::{Bson, Document};
use gdid_engine::backend::StoredInt;
use mongodb::Cursor;
use mongodb::error::Error;

/// Every document `find` (a `find` request, its options set) finds, in its order.
///
/// # Errors
///
/// The driver's: the request, a batch that cannot be read, a document that cannot be decoded.
pub(crate) async fn find_all(
    find: impl IntoFuture<Output = Result<Cursor<Document>, Error>>,
) -> Result<Vec<Document>, Error> {
    let mut cursor = find.await?;
    let mut documents = Vec::new();
    while cursor.advance().await? {
        documents.push(cursor.deserialize_current()?);
    }
    Ok(documents)
}

/// An integer field of a found document as the engine reads stored integers (and decodes them:
/// `StoredInt::decode`).
pub(crate) fn stored_int(document: &Document, field: &str) -> StoredInt {
    match document.get(field) {
        Some(Bson::Int64(v)) => StoredInt::Integer(*v),
        Some(Bson::Int32(v)) => StoredInt::Integer(i64::from(*v)),
        Some(other) => StoredInt::Other(format!("{other} (a {:?})", other.element_type())),
        None => StoredInt::Missing,
    }
}
