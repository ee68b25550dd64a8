//! The kind of store a URL names: [`StoreKind`], the one list of store URL schemes
//! (`gdid_engine::plumbing::scheme::Scheme`, which gdid-sql opens its URLs by too), and
//! [`store_kind`](crate::store_kind), which reads it from a URL checked against this build's
//! features.
#![cfg(feature = "engine")]

use gdid_engine::plumbing::scheme::listed;

/// The kind of store a URL names, from its scheme: what [`Store::open`](crate::Store::open)
/// would open, found without opening it ([`store_kind`](crate::store_kind)). The engine's one list of schemes.
///
/// ```
/// use gdid::{StoreKind, store_kind};
///
/// assert_eq!(store_kind("memory:")?, StoreKind::Memory);
/// assert!(StoreKind::Sqlite.is_sql() && !StoreKind::MongoDb.is_sql());
/// assert!(store_kind("redis://127.0.0.1").is_err());
/// # Ok::<(), gdid::StoreError>(())
/// ```
pub use gdid_engine::plumbing::scheme::Scheme as StoreKind;

/// The schemes [`StoreError::UnsupportedScheme`](crate::StoreError::UnsupportedScheme) lists:
/// every prefix of the one list, in order.
pub(crate) fn expected_schemes() -> String {
    listed(|_| true)
}
