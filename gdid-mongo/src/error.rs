//! Errors of setting up MongoDB authorities and strategies.

use std::fmt;

use gdid_engine::plumbing::redact;
use gdid_engine::{AuthorityError, ErrorKind};

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
    #[error("mongodb: {}", shown(.0))]
    Server(#[from] mongodb::error::Error),
    /// A name that breaks the naming rules.
    #[error(transparent)]
    Name(#[from] gdid_engine::InvalidName),
    /// A range layout that cannot work, or that disagrees with the documents already stored.
    /// Worded as the engine's [`InvalidConfig`](gdid_engine::ErrorDetail::InvalidConfig) that
    /// every backend reports it with: the reason names the sequence.
    #[error("invalid generator configuration: {reason}")]
    Layout {
        /// The sequence.
        sequence: String,
        /// What is wrong.
        reason: String,
    },
    /// The collection's authority number could not be read or recorded, or the collection is
    /// another authority than the one asked for ([`AuthorityError::Number`]).
    ///
    /// [`AuthorityError::Number`]: gdid_engine::AuthorityError::Number
    #[error("authority number: {0}")]
    Authority(#[from] AuthorityError),
}

/// MongoDB's write-conflict error code: two writers changed one document at once.
const WRITE_CONFLICT: i32 = 112;

impl Error {
    /// The kind of the error, in the vocabulary every store shares: the driver's errors sorted
    /// as every other store's are.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::AuthorityNumber(_) | Error::Name(_) | Error::Layout { .. } => ErrorKind::Config,
            Error::Server(error) => driver_kind(error),
            Error::Authority(error) => error.kind(),
        }
    }
}

/// The kind of a driver error: a document that cannot be decoded is corrupt; a duplicate key, a
/// write conflict or a transient transaction error a lost race; an invalid argument a
/// configuration; the rest the server failing or unreachable.
pub(crate) fn driver_kind(error: &mongodb::error::Error) -> ErrorKind {
    use mongodb::error::{ErrorKind as Driver, TRANSIENT_TRANSACTION_ERROR, WriteFailure};
    let write_conflict = match error.kind.as_ref() {
        Driver::Command(e) => e.code == WRITE_CONFLICT,
        Driver::Write(WriteFailure::WriteError(e)) => e.code == WRITE_CONFLICT,
        _ => false,
    };
    if write_conflict
        || crate::unique::is_duplicate_key(error)
        || error.contains_label(TRANSIENT_TRANSACTION_ERROR)
    {
        return ErrorKind::Conflict;
    }
    match error.kind.as_ref() {
        Driver::BsonDeserialization(_) => ErrorKind::Corrupt,
        Driver::InvalidArgument { .. } => ErrorKind::Config,
        _ => ErrorKind::Unavailable,
    }
}

/// A driver error as messages show it: what went wrong (the driver's error kind), redacted,
/// without the labels, source and server response the driver's own `Display` adds in `Debug`
/// form. [`source`](std::error::Error::source) is the driver's error, whole.
#[derive(Debug)]
pub(crate) struct Driver(pub(crate) mongodb::error::Error);

impl fmt::Display for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shown(&self.0))
    }
}

impl std::error::Error for Driver {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// The message of a driver error: its kind, redacted (see [`Driver`]). The driver formats the
/// errors it nests in a kind (a server selection timeout lists each server's last error) in its
/// own way; their labels, empty source and empty server response are left out too.
pub(crate) fn shown(error: &mongodb::error::Error) -> String {
    redact(&without_noise(&error.kind.to_string()))
}

/// `text` without the driver's `Kind: ` before a nested error and its
/// `, labels: {…}, source: None, server response: None` after it.
fn without_noise(text: &str) -> String {
    const LABELS: &str = ", labels: {";
    const EMPTY: &str = ", source: None, server response: None";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(LABELS) {
        let labels = &rest[at + LABELS.len()..];
        match labels.find('}') {
            Some(end) if labels[end + 1..].starts_with(EMPTY) => {
                out.push_str(&rest[..at]);
                rest = &labels[end + 1 + EMPTY.len()..];
            }
            _ => {
                out.push_str(&rest[..at + LABELS.len()]);
                rest = labels;
            }
        }
    }
    out.push_str(rest);
    out.replace("Kind: ", "")
}

/// Sorts a driver error into the engine's kinds ([`driver_kind`]): a corrupt document, a lost
/// race ([`AuthorityError::Conflict`], tried again by the engine's retry policy), or the server
/// failing.
pub(crate) fn driver_error(error: mongodb::error::Error) -> AuthorityError {
    AuthorityError::from_driver(driver_kind(&error), Driver(error))
}

#[cfg(test)]
mod tests {
    use super::without_noise;

    #[test]
    fn nested_driver_errors_lose_their_noise() {
        let text = "Server selection timeout: No available servers. Topology: { Type: Single, \
                    Servers: [ { Address: 127.0.0.1:1, Type: Unknown, Error: Kind: I/O error: \
                    Connection refused (os error 111), labels: {\"RetryableError\"}, source: \
                    None, server response: None } ] }";
        assert_eq!(
            without_noise(text),
            "Server selection timeout: No available servers. Topology: { Type: Single, \
             Servers: [ { Address: 127.0.0.1:1, Type: Unknown, Error: I/O error: Connection \
             refused (os error 111) } ] }"
        );
        let kept = "x, labels: {}, source: Some(y), server response: None";
        assert_eq!(without_noise(kept), kept);
    }
}
