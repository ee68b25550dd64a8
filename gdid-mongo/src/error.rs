//! Errors of setting up MongoDB authorities and strategies.

/// A MongoDB authority or strategy could not be set up.
///
/// ```
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:27017").await?;
/// let database = client.database("app");
/// let error = gdid_mongo::MongoAuthority::new(&database, "gdid_counters", 16).unwrap_err();
/// assert!(matches!(error, gdid_mongo::Error::AuthorityNumber(16)));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An authority number above 15.
    #[error("authority number {0} is above 15")]
    AuthorityNumber(u8),
    /// The driver or the server failed.
    #[error("mongodb: {0}")]
    Server(#[from] mongodb::error::Error),
    /// A name that breaks the naming rules.
    #[error(transparent)]
    Name(#[from] gdid_core::generator::InvalidName),
    /// A range layout that cannot work, or that disagrees with the documents already stored.
    #[error("invalid range layout for {sequence:?}: {reason}")]
    Layout {
        /// The sequence.
        sequence: String,
        /// What is wrong.
        reason: String,
    },
    /// The collection's authority number could not be read or recorded, or the collection is
    /// another authority than the one asked for ([`AuthorityError::Number`]).
    ///
    /// [`AuthorityError::Number`]: gdid_core::generator::AuthorityError::Number
    #[error("authority number: {0}")]
    Authority(#[from] gdid_core::generator::AuthorityError),
}
