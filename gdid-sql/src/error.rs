//! Errors of setting up SQL stores.

use gdid_engine::ErrorKind;

/// A store could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not `mysql://`, `mariadb://`, `postgres://`, `postgresql://` or `sqlite:`.
    #[error(
        "unsupported store URL {url:?}: expected {}",
        gdid_engine::plumbing::scheme::listed(gdid_engine::plumbing::scheme::Scheme::is_sql)
    )]
    UnsupportedUrl {
        /// The URL, without password.
        url: String,
    },
    /// The URL's driver was left out of this build: gdid-sql's feature `feature` is off.
    #[error("store URL {url:?} needs gdid-sql's feature {feature:?}")]
    DriverDisabled {
        /// The URL, without password.
        url: String,
        /// The feature: `mysql`, `postgres` or `sqlite`.
        feature: &'static str,
    },
    /// The database could not be reached or opened.
    #[error("cannot connect to {url}: {source}")]
    Connect {
        /// The URL, without password.
        url: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// Creating the tables failed.
    #[error("cannot create the gdid tables: {0}")]
    Schema(#[source] sqlx::Error),
    /// A range layout that cannot work, or that disagrees with the rows already stored.
    /// Worded as the engine's [`InvalidConfig`](gdid_engine::ErrorDetail::InvalidConfig) that
    /// every backend reports it with: the reason names the sequence.
    #[error("invalid generator configuration: {reason}")]
    Layout {
        /// The sequence.
        sequence: String,
        /// What is wrong.
        reason: String,
    },
    /// A name that breaks the naming rules.
    #[error(transparent)]
    Name(#[from] gdid_engine::InvalidName),
    /// An authority number above 15.
    #[error("authority number {0} is above 15")]
    AuthorityNumber(u8),
    /// The store's authority number could not be read or recorded, or the store is another
    /// authority than the one asked for ([`AuthorityError::Number`]).
    ///
    /// [`AuthorityError::Number`]: gdid_engine::AuthorityError::Number
    #[error("authority number: {0}")]
    Authority(#[from] gdid_engine::AuthorityError),
}

impl Error {
    /// The kind of the error, in the vocabulary every store shares: the driver's errors sorted
    /// as every other store's are.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::UnsupportedUrl { .. }
            | Error::DriverDisabled { .. }
            | Error::Layout { .. }
            | Error::Name(_)
            | Error::AuthorityNumber(_) => ErrorKind::Config,
            Error::Connect { source, .. } | Error::Schema(source) => driver_kind(source),
            Error::Authority(error) => error.kind(),
        }
    }
}

/// The kind of a driver error: a value of the wrong type in a table is a corrupt row; a
/// duplicate key, a deadlock or a serialization failure (SQLSTATE 40001, 40P01) a lost race; a
/// URL or option that cannot work a configuration; the rest the store failing.
pub fn driver_kind(error: &sqlx::Error) -> ErrorKind {
    match error {
        sqlx::Error::ColumnDecode { .. }
        | sqlx::Error::Decode(_)
        | sqlx::Error::ColumnNotFound(_) => ErrorKind::Corrupt,
        sqlx::Error::Database(e)
            if e.is_unique_violation()
                || matches!(e.code().as_deref(), Some("40001" | "40P01")) =>
        {
            ErrorKind::Conflict
        }
        sqlx::Error::Configuration(_) => ErrorKind::Config,
        _ => ErrorKind::Unavailable,
    }
}

/// Whether `error` is a lost race the server rolled back (a deadlock, a serialization failure,
/// a Galera certification conflict), which the engine's retry policy tries again.
pub(crate) fn is_lost_race(error: &sqlx::Error) -> bool {
    driver_kind(error) == ErrorKind::Conflict && !is_duplicate_key(error)
}

/// Whether `error` is a duplicate-key error: a unique or primary-key violation on MySQL/MariaDB
/// (1062 and its kin), PostgreSQL (23505) or SQLite (`SQLITE_CONSTRAINT_UNIQUE`,
/// `SQLITE_CONSTRAINT_PRIMARYKEY`). The test `gdid_random::insert_with_retry` takes.
pub fn is_duplicate_key(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(e) if e.is_unique_violation())
}
