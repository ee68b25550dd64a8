//! Reading what a query finds.

use bson::Document;
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
