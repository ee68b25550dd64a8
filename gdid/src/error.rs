//! [`StoreError`]: why [`Store::open`](crate::Store::open) or one of the strategies of a store
//! could not be set up.

use gdid_core::generator::AuthorityError;

/// The error of a driver or of a backend crate, kept as the source of a [`StoreError`].
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A store could not be opened, or a strategy could not be set up on it. Every URL held here is
/// redacted (`gdid_core::generator::redact`): no password is ever printed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The URL's scheme is none of `sqlite:`, `mysql://`, `mariadb://`, `postgres://`,
    /// `postgresql://`, `mongodb://`, `mongodb+srv://`.
    #[error(
        "unsupported store URL {url:?}: expected sqlite:PATH, mysql://, mariadb://, postgres://, \
         postgresql://, mongodb:// or mongodb+srv://"
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
        /// The driver's error.
        #[source]
        source: Source,
    },
    /// The store's tables or collections could not be created.
    #[error("cannot create the gdid schema in {url}: {source}")]
    Schema {
        /// The URL, redacted.
        url: String,
        /// The driver's error.
        #[source]
        source: Source,
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
        /// The backend's error.
        #[source]
        source: Source,
    },
}
