//! The one list of store URL schemes, and the kind of store each names.
#![cfg(feature = "engine")]

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

/// Every scheme prefix and the store it names: the one scheme list of the workspace.
pub(crate) const PREFIXES: [(&str, StoreKind); 10] = [
    ("sqlite:", StoreKind::Sqlite),
    ("mysql://", StoreKind::MySql),
    ("mariadb://", StoreKind::MySql),
    ("postgres://", StoreKind::Postgres),
    ("postgresql://", StoreKind::Postgres),
    ("mongodb://", StoreKind::MongoDb),
    ("mongodb+srv://", StoreKind::MongoDb),
    ("memory:", StoreKind::Memory),
    ("http://", StoreKind::Http),
    ("https://", StoreKind::Http),
];

/// The schemes [`StoreError::UnsupportedScheme`] lists: every prefix of [`PREFIXES`], in order.
pub(crate) fn expected_schemes() -> String {
    let spelled: Vec<&str> = PREFIXES
        .iter()
        .map(|(prefix, _)| {
            if *prefix == "sqlite:" {
                "sqlite:PATH"
            } else {
                prefix
            }
        })
        .collect();
    match spelled.split_last() {
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `memory` alone: the same as `memory:` (the `gdid` command's spelling).
pub(crate) const MEMORY: &str = "memory";
