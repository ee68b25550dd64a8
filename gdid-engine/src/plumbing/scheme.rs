//! The one list of store URL schemes: which kind of store a URL names, read from its scheme. The
//! `gdid` crate re-exports it as `StoreKind` and `Store::open` builds on it, and gdid-sql's
//! `SqlStore` opens the SQL schemes of it, so that a URL is read once per open and every crate
//! knows the same schemes.
//!
//! ```
//! use gdid_engine::plumbing::scheme::Scheme;
//!
//! assert_eq!(Scheme::split("mariadb://db/ids"), Some((Scheme::MySql, "db/ids")));
//! assert_eq!(Scheme::of("memory"), Some(Scheme::Memory));
//! assert!(Scheme::of("sqlite:ids.sqlite").is_some_and(Scheme::is_sql));
//! assert_eq!(Scheme::of("redis://h"), None);
//! ```

/// A kind of store, as the scheme of its URL names it. Every crate that opens stores matches on
/// all of them: a new kind is a change to each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `sqlite:PATH`.
    Sqlite,
    /// `mysql://…` or `mariadb://…`.
    MySql,
    /// `postgres://…` or `postgresql://…`.
    Postgres,
    /// `mongodb://…` or `mongodb+srv://…`.
    MongoDb,
    /// `memory:` or `memory:NAME` (or `memory`): in one process only.
    Memory,
    /// `http://…` or `https://…`: an authority served by `gdid serve`.
    Http,
}

/// Every scheme prefix and the store it names, in the order messages list them.
pub const SCHEMES: [(&str, Scheme); 10] = [
    ("sqlite:", Scheme::Sqlite),
    ("mysql://", Scheme::MySql),
    ("mariadb://", Scheme::MySql),
    ("postgres://", Scheme::Postgres),
    ("postgresql://", Scheme::Postgres),
    ("mongodb://", Scheme::MongoDb),
    ("mongodb+srv://", Scheme::MongoDb),
    ("memory:", Scheme::Memory),
    ("http://", Scheme::Http),
    ("https://", Scheme::Http),
];

/// `memory` alone: the same as `memory:` (the `gdid` command's spelling).
pub const MEMORY: &str = "memory";

impl Scheme {
    /// The kind of store `url` names (white space around it aside), or `None` for a scheme of
    /// none of [`SCHEMES`].
    pub fn of(url: &str) -> Option<Scheme> {
        Scheme::split(url).map(|(scheme, _)| scheme)
    }

    /// The kind of store `url` names and what follows its scheme prefix (white space around the
    /// URL aside), or `None` for a scheme of none of [`SCHEMES`].
    pub fn split(url: &str) -> Option<(Scheme, &str)> {
        let url = url.trim();
        if url == MEMORY {
            return Some((Scheme::Memory, ""));
        }
        SCHEMES
            .iter()
            .find_map(|&(prefix, scheme)| Some((scheme, url.strip_prefix(prefix)?)))
    }

    /// Whether it is a SQL store (SQLite, MySQL/MariaDB or PostgreSQL).
    pub fn is_sql(self) -> bool {
        matches!(self, Scheme::Sqlite | Scheme::MySql | Scheme::Postgres)
    }

    /// The Cargo feature that opens this kind of store, as the `gdid` crate and the backend
    /// crate (gdid-sql) both name it; none (`""`) for `memory:`.
    pub fn feature(self) -> &'static str {
        match self {
            Scheme::Memory => "",
            Scheme::Sqlite => "sqlite",
            Scheme::MySql => "mysql",
            Scheme::Postgres => "postgres",
            Scheme::MongoDb => "mongodb",
            Scheme::Http => "http",
        }
    }
}

/// The prefixes of [`SCHEMES`] whose store `which` keeps, as messages list them, in order:
/// `sqlite:PATH, mysql://, … or https://`.
///
/// ```
/// use gdid_engine::plumbing::scheme::{Scheme, listed};
///
/// assert_eq!(
///     listed(Scheme::is_sql),
///     "sqlite:PATH, mysql://, mariadb://, postgres:// or postgresql://"
/// );
/// ```
pub fn listed(which: impl Fn(Scheme) -> bool) -> String {
    let spelled: Vec<&str> = SCHEMES
        .iter()
        .filter(|(_, scheme)| which(*scheme))
        .map(|&(prefix, scheme)| {
            if scheme == Scheme::Sqlite {
                "sqlite:PATH"
            } else {
                prefix
            }
        })
        .collect();
    match spelled.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prefix_names_its_store_and_others_none() {
        for (prefix, scheme) in SCHEMES {
            assert_eq!(Scheme::split(&format!(" {prefix}x ")), Some((scheme, "x")));
        }
        for url in ["redis://h", "ids.sqlite", "", "memoryx", "MYSQL://h"] {
            assert_eq!(Scheme::of(url), None, "{url:?}");
        }
        assert_eq!(Scheme::split(" memory "), Some((Scheme::Memory, "")));
    }

    #[test]
    fn the_list_is_spelled_in_order() {
        assert_eq!(
            listed(|_| true),
            "sqlite:PATH, mysql://, mariadb://, postgres://, postgresql://, mongodb://, \
             mongodb+srv://, memory:, http:// or https://"
        );
        assert_eq!(
            listed(|scheme| scheme == Scheme::Http),
            "http:// or https://"
        );
        assert_eq!(listed(|_| false), "");
    }
}
