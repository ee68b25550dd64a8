//! The kind of store a URL names: [`StoreKind`], over the one list of store URL schemes
//! (`gdid_engine::plumbing::scheme`), which gdid-sql opens its URLs by too.
#![cfg(feature = "engine")]

use gdid_engine::plumbing::scheme::{Scheme, listed};

/// The kind of store a URL names, from its scheme: what [`Store::open`](crate::Store::open)
/// would open, found without opening it.
///
/// ```
/// use gdid::StoreKind;
///
/// assert_eq!(StoreKind::of("memory:")?, StoreKind::Memory);
/// assert!(StoreKind::Sqlite.is_sql() && !StoreKind::MongoDb.is_sql());
/// assert!(StoreKind::of("redis://127.0.0.1").is_err());
/// # Ok::<(), gdid::StoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreKind {
    /// `sqlite:PATH`.
    Sqlite,
    /// `mysql://…` or `mariadb://…`.
    MySql,
    /// `postgres://…` or `postgresql://…`.
    Postgres,
    /// `mongodb://…` or `mongodb+srv://…`.
    MongoDb,
    /// `memory:` or `memory:NAME` (or `memory`): in this process only, for tests and examples.
    Memory,
    /// `http://…` or `https://…`: an authority served by `gdid serve`; GDIDs only.
    Http,
}

impl StoreKind {
    /// The kind of store `scheme` names.
    pub(crate) fn of_scheme(scheme: Scheme) -> StoreKind {
        match scheme {
            Scheme::Sqlite => StoreKind::Sqlite,
            Scheme::MySql => StoreKind::MySql,
            Scheme::Postgres => StoreKind::Postgres,
            Scheme::MongoDb => StoreKind::MongoDb,
            Scheme::Memory => StoreKind::Memory,
            Scheme::Http => StoreKind::Http,
        }
    }
}

/// The schemes [`StoreError::UnsupportedScheme`](crate::StoreError::UnsupportedScheme) lists:
/// every prefix of the one list, in order.
pub(crate) fn expected_schemes() -> String {
    listed(|_| true)
}
