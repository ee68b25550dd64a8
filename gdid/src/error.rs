//! [`StoreError`]: why [`Store::open`](crate::Store::open) or one of the strategies of a store
//! could not be set up.
#![cfg(feature = "engine")]

use gdid_engine::windows::AgentError;
use gdid_engine::{AuthorityError, ErrorKind, Recourse};

use crate::shard::ShardError;

pub(crate) use gdid_engine::backend::DriverError;

/// A store could not be opened, or a strategy could not be set up on it. Every URL held here is
/// redacted (`gdid_engine::plumbing::redact`): no password is ever printed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The URL's scheme is none of those of [`StoreKind`](crate::StoreKind); the message lists
    /// them.
    #[error(
        "unsupported store URL {url:?}: expected {expected}",
        expected = crate::scheme::expected_schemes()
    )]
    UnsupportedScheme {
        /// The URL, redacted.
        url: String,
    },
    /// The URL's scheme is known, but the crate was built without the feature that opens it.
    #[error("store URL {url:?} needs the `gdid` crate's feature {feature:?}")]
    FeatureDisabled {
        /// The URL, redacted.
        url: String,
        /// The feature to enable (`sqlite`, `mysql`, `postgres` or `mongodb`).
        feature: &'static str,
    },
    /// The URL has a known scheme but cannot name a store (`sqlite:` without a path).
    #[error("invalid store URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL, redacted.
        url: String,
        /// What is missing or wrong.
        reason: &'static str,
    },
    /// The store's server could not be reached, or its file opened.
    #[error("cannot connect to {url}: {source}")]
    Connect {
        /// The URL, redacted.
        url: String,
        /// The kind the driver's crate sorted its error into.
        kind: ErrorKind,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// The store's tables or collections could not be created.
    #[error("cannot create the gdid schema in {url}: {source}")]
    Schema {
        /// The URL, redacted.
        url: String,
        /// The kind the driver's crate sorted its error into.
        kind: ErrorKind,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// The store's authority number could not be read, settled or recorded.
    #[error("the authority number of {url}: {source}")]
    Authority {
        /// The URL, redacted.
        url: String,
        /// Why.
        #[source]
        source: AuthorityError,
    },
    /// The authority number asked for ([`OpenOptions::authority`](crate::OpenOptions::authority))
    /// is above 15.
    #[error("authority number {number} for {url}: expected 0 to 15")]
    AuthorityNumber {
        /// The URL, redacted.
        url: String,
        /// The number asked for.
        number: u8,
    },
    /// The stores opened together ([`OpenOptions::open_all`](crate::OpenOptions::open_all))
    /// cannot be given their authority numbers: a store is recorded as another number than
    /// asked, two would share one, one with no record is listed with one that cannot be read
    /// ([`AuthorityError::Number`]), or a record cannot be read or written.
    #[error("the authority numbers of {}: {source}", urls.join(", "))]
    Numbers {
        /// The URLs, redacted, in the order given.
        urls: Vec<String>,
        /// Why.
        #[source]
        source: AuthorityError,
    },
    /// [`OpenOptions::authorities`](crate::OpenOptions::authorities) gives another count of
    /// numbers than of stores.
    #[error("{numbers} authority number(s) for {stores} store(s): give one per store, or none")]
    AuthorityCount {
        /// The numbers given.
        numbers: usize,
        /// The stores given.
        stores: usize,
    },
    /// The store is opened [`unnumbered`](crate::OpenOptions::unnumbered), and what was asked
    /// needs an authority number: an [`authority`](crate::OpenOptions::authority) given as well,
    /// or a GDID floor to raise ([`Store::raise_floor`](crate::Store::raise_floor)).
    #[error("{url} is opened unnumbered: {what}")]
    Unnumbered {
        /// The URL, redacted.
        url: String,
        /// What needs the number.
        what: &'static str,
    },
    /// [`OpenOptions::open_all`](crate::OpenOptions::open_all) was given no URL.
    #[error("no store given: give one URL or more")]
    NoStores,
    /// The store cannot keep what the strategy needs: a `memory:` store keeps GDID blocks and
    /// one-at-a-time counters only.
    #[error("the {strategy} needs a database store: {url} keeps GDID blocks and counters only")]
    Unsupported {
        /// The strategy (`sharded counter`, `hi-lo window shard`).
        strategy: &'static str,
        /// The URL, redacted.
        url: String,
    },
    /// A sequence of the store could not be read or its floor raised: a bad name, a floor below
    /// the stored counter ([`AuthorityError::FloorBelow`]), a corrupt record, the store failing.
    #[error("the sequences of {url}: {source}")]
    Sequences {
        /// The URL, redacted.
        url: String,
        /// Why.
        #[source]
        source: AuthorityError,
    },
    /// The store's server could not be asked for its settings ([`Store::check`]).
    ///
    /// [`Store::check`]: crate::Store::check
    #[error("cannot read the settings of {url}: {source}")]
    Check {
        /// The URL, redacted.
        url: String,
        /// The kind the driver's crate sorted its error into.
        kind: ErrorKind,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// A window agent could not be set up: a window size of 0, a shard that cannot be prepared,
    /// one store given twice.
    #[error(transparent)]
    Agent(#[from] AgentError<ShardError>),
    /// A strategy could not be set up on the store: a bad name, a sharded layout that disagrees
    /// with the one stored, a window batch of 0…
    #[error("cannot set up the {strategy} of {sequence:?} on {url}: {source}")]
    Strategy {
        /// Which strategy (`sharded counter`, `window generator`, …).
        strategy: &'static str,
        /// The sequence.
        sequence: String,
        /// The URL, redacted.
        url: String,
        /// The kind the backend's crate sorted its error into.
        kind: ErrorKind,
        /// The backend's error.
        #[source]
        source: DriverError,
    },
}

impl StoreError {
    /// The kind of the error, in the one vocabulary of every store
    /// ([`ErrorKind`](gdid_engine::ErrorKind)): a URL, a feature, a number, a setting or
    /// a strategy the store cannot keep is [`ErrorKind::Config`] (a URL the driver cannot use,
    /// `postgres://h:notaport/db` say, too); a driver's or backend's error is sorted as its crate
    /// sorts it (a store that cannot be reached is [`ErrorKind::Unavailable`]).
    ///
    /// ```
    /// use gdid::engine::ErrorKind;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let refused = gdid::Store::open("redis://127.0.0.1").await.unwrap_err();
    /// assert_eq!(refused.kind(), ErrorKind::Config);
    /// # }
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            StoreError::Connect { kind, .. }
            | StoreError::Schema { kind, .. }
            | StoreError::Strategy { kind, .. }
            | StoreError::Check { kind, .. } => *kind,
            StoreError::Authority { source, .. }
            | StoreError::Numbers { source, .. }
            | StoreError::Sequences { source, .. } => source.kind(),
            StoreError::Agent(AgentError::Config(_)) => ErrorKind::Config,
            StoreError::Agent(AgentError::Exhausted(_)) => ErrorKind::Exhausted,
            StoreError::Agent(_) => ErrorKind::Unavailable,
            _ => ErrorKind::Config,
        }
    }

    /// What to do about it: its kind's [`recourse`](ErrorKind::recourse) (try again, another
    /// store, an operator's repair, or a fix of the call).
    pub fn recourse(&self) -> Recourse {
        self.kind().recourse()
    }
}

/// A driver's or backend's error and the kind its crate sorted it into, taken where its type is
/// known: how an error reaches a [`StoreError`], so that no code asks an error's type to decide.
#[derive(Debug)]
pub(crate) struct Sorted {
    /// The kind.
    pub(crate) kind: ErrorKind,
    /// The error.
    pub(crate) source: DriverError,
}

impl Sorted {
    /// `source`, of `kind`.
    pub(crate) fn new(kind: ErrorKind, source: impl Into<DriverError>) -> Self {
        Sorted {
            kind,
            source: source.into(),
        }
    }

    /// A reason the store cannot do what was asked: the caller's to change.
    pub(crate) fn config(reason: impl Into<String>) -> Self {
        Sorted::new(ErrorKind::Config, reason.into())
    }
}

impl From<AuthorityError> for Sorted {
    fn from(error: AuthorityError) -> Self {
        Sorted::new(error.kind(), error)
    }
}

impl From<gdid_engine::Error> for Sorted {
    fn from(error: gdid_engine::Error) -> Self {
        Sorted::new(error.kind(), error)
    }
}

impl From<gdid_engine::InvalidName> for Sorted {
    fn from(error: gdid_engine::InvalidName) -> Self {
        Sorted::new(ErrorKind::Config, error)
    }
}

impl From<ShardError> for Sorted {
    fn from(error: ShardError) -> Self {
        Sorted::new(error.kind(), error)
    }
}

#[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
impl From<gdid_sql::Error> for Sorted {
    fn from(error: gdid_sql::Error) -> Self {
        Sorted::new(error.kind(), error)
    }
}

#[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
impl From<sqlx::Error> for Sorted {
    fn from(error: sqlx::Error) -> Self {
        Sorted::new(gdid_sql::driver_kind(&error), error)
    }
}

#[cfg(feature = "mongodb")]
impl From<gdid_mongo::Error> for Sorted {
    fn from(error: gdid_mongo::Error) -> Self {
        Sorted::new(error.kind(), error)
    }
}

/// A driver's error whose message had to be redacted (it may quote the URL).
#[derive(Debug)]
#[cfg_attr(not(feature = "mongodb"), allow(dead_code))] // made by MongoDB stores only
pub(crate) struct Redacted {
    /// The message, redacted.
    pub(crate) message: String,
}

impl std::fmt::Display for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Redacted {}
