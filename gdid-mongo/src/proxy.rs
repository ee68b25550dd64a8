//! [`ProxyCollection`]: uniqueness where a unique index cannot be used.
//!
//! On a sharded collection MongoDB enforces a unique index only when the index starts with the
//! shard key, so an id field that is not the shard key cannot be made unique there. The proxy
//! collection is a small unsharded collection keyed by the id: inserting `{ _id: id }` claims
//! the id (the `_id` index is unique), and only the claimant writes the document.

use bson::{Bson, DateTime, doc};
use mongodb::error::{Error, ErrorKind, WriteFailure};
use mongodb::options::WriteConcern;
use mongodb::results::InsertOneResult;
use mongodb::{Collection, Database};
use serde::Serialize;

use crate::durability::{collection_with_concern, durable};
use crate::unique::is_duplicate_key;

/// Why a claim or a claimed insert failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClaimError {
    /// Another writer holds the id: pick another one.
    #[error("id {0} is claimed already")]
    Taken(Bson),
    /// The claim could not be written.
    #[error("claiming id {id}: {}", crate::error::shown(.source))]
    Claim {
        /// The id.
        id: Bson,
        /// The driver's error.
        #[source]
        source: Error,
    },
    /// The document could not be written after its id was claimed. `released` says whether the
    /// claim was released: it is only when the server rejected the write; when the outcome is
    /// unknown (a network error, a timeout) the claim stays, so the id is never used twice.
    #[error(
        "writing the document of id {id} (claim released: {released}): {}",
        crate::error::shown(.source)
    )]
    Write {
        /// The id.
        id: Bson,
        /// Whether the claim was released.
        released: bool,
        /// The driver's error.
        #[source]
        source: Error,
    },
}

impl ClaimError {
    /// Whether another writer holds the id (the case to retry with a new one).
    pub fn is_taken(&self) -> bool {
        matches!(self, ClaimError::Taken(_))
    }
}

/// A collection of claimed ids, `{ _id: id, claimed_at: Date }`.
///
/// ```no_run
/// use bson::{Bson, doc};
/// use gdid_mongo::ProxyCollection;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:27017").await?;
/// let db = client.database("shop");
/// let proxy = ProxyCollection::new(&db, "order_ids");
/// let orders = db.collection("orders"); // sharded by customer, not by id
/// let id = Bson::Int64(4_711);
/// match proxy.insert_claimed(&orders, id.clone(), &doc! { "_id": id, "customer": 7 }).await {
///     Ok(_) => println!("stored"),
///     Err(e) if e.is_taken() => println!("4711 is taken: draw another id"),
///     Err(e) => return Err(e.into()),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ProxyCollection {
    claims: Collection<bson::Document>,
}

impl ProxyCollection {
    /// The proxy collection `name` of `database` (keep it unsharded), written with write concern
    /// `majority` and journal.
    pub fn new(database: &Database, name: &str) -> Self {
        Self::with_write_concern(database, name, durable())
    }

    /// As [`new`](Self::new), with another write concern.
    pub fn with_write_concern(database: &Database, name: &str, concern: WriteConcern) -> Self {
        ProxyCollection {
            claims: collection_with_concern(database, name, concern),
        }
    }

    /// The collection of claims.
    pub fn collection(&self) -> &Collection<bson::Document> {
        &self.claims
    }

    /// Claims `id`.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Taken`] when it is claimed already, [`ClaimError::Claim`] when the claim
    /// cannot be written.
    pub async fn claim(&self, id: impl Into<Bson>) -> Result<(), ClaimError> {
        let id = id.into();
        let claim = doc! { "_id": id.clone(), "claimed_at": DateTime::now() };
        match self.claims.insert_one(claim).await {
            Ok(_) => Ok(()),
            Err(e) if is_duplicate_key(&e) => Err(ClaimError::Taken(id)),
            Err(source) => Err(ClaimError::Claim { id, source }),
        }
    }

    /// Releases the claim of `id` (when the document it was for will not be written).
    ///
    /// # Errors
    ///
    /// The driver's error.
    pub async fn release(&self, id: impl Into<Bson>) -> Result<(), Error> {
        self.claims
            .delete_one(doc! { "_id": id.into() })
            .await
            .map(drop)
    }

    /// Claims `id`, then inserts `document` into `target`; releases the claim when the server
    /// rejects the insert.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Taken`] when the id is claimed already; [`ClaimError::Claim`] or
    /// [`ClaimError::Write`] when a write fails.
    pub async fn insert_claimed<T: Serialize + Send + Sync>(
        &self,
        target: &Collection<T>,
        id: Bson,
        document: &T,
    ) -> Result<InsertOneResult, ClaimError> {
        self.claim(id.clone()).await?;
        match target.insert_one(document).await {
            Ok(result) => Ok(result),
            Err(source) => {
                let released =
                    rejected_by_server(&source) && self.release(id.clone()).await.is_ok();
                Err(ClaimError::Write {
                    id,
                    released,
                    source,
                })
            }
        }
    }
}

/// Whether the server answered that it did not apply the write: a write error (a validation
/// failure, a duplicate key on another unique index). Any other outcome is unknown: the
/// connection broke, the time ran out, the write concern was not met after the write was done.
fn rejected_by_server(error: &Error) -> bool {
    matches!(
        error.kind.as_ref(),
        ErrorKind::Write(WriteFailure::WriteError(_))
    )
}
