//! Which kind of store a URL names, and whether this build can open it.
#![cfg(feature = "engine")]

use crate::error::StoreError;
use crate::scheme::{MEMORY, PREFIXES, StoreKind};
use gdid_engine::plumbing::redact;

impl StoreKind {
    /// The scheme of `url`, checked against the features of this build.
    ///
    /// # Errors
    ///
    /// [`StoreError::UnsupportedScheme`], [`StoreError::FeatureDisabled`], or
    /// [`StoreError::InvalidUrl`] for `sqlite:` without a path.
    pub fn of(url: &str) -> Result<StoreKind, StoreError> {
        let url = url.trim();
        if url == MEMORY {
            return Ok(StoreKind::Memory);
        }
        let (prefix, scheme) = PREFIXES
            .iter()
            .find(|(prefix, _)| url.starts_with(prefix))
            .copied()
            .ok_or_else(|| StoreError::UnsupportedScheme { url: redact(url) })?;
        if !scheme.enabled() {
            return Err(StoreError::FeatureDisabled {
                url: redact(url),
                feature: scheme.feature(),
            });
        }
        if scheme == StoreKind::Sqlite && url[prefix.len()..].trim().is_empty() {
            return Err(StoreError::InvalidUrl {
                url: redact(url),
                reason: "sqlite: needs a file path (sqlite:ids.sqlite)",
            });
        }
        Ok(scheme)
    }

    /// Whether it is a SQL store (SQLite, MySQL/MariaDB or PostgreSQL).
    pub fn is_sql(self) -> bool {
        matches!(
            self,
            StoreKind::Sqlite | StoreKind::MySql | StoreKind::Postgres
        )
    }

    /// The `gdid` feature that opens this kind of store (none for `memory:`).
    pub(crate) fn feature(self) -> &'static str {
        match self {
            StoreKind::Memory => "",
            StoreKind::Sqlite => "sqlite",
            StoreKind::MySql => "mysql",
            StoreKind::Postgres => "postgres",
            StoreKind::MongoDb => "mongodb",
            StoreKind::Http => "http",
        }
    }

    /// Whether this build has that feature.
    fn enabled(self) -> bool {
        match self {
            StoreKind::Sqlite => cfg!(feature = "sqlite"),
            StoreKind::MySql => cfg!(feature = "mysql"),
            StoreKind::Postgres => cfg!(feature = "postgres"),
            StoreKind::MongoDb => cfg!(feature = "mongodb"),
            StoreKind::Http => cfg!(feature = "http"),
            StoreKind::Memory => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_schemes_are_refused_without_their_password() {
        for url in [
            "redis://u:hunter2@h/x",
            "ftp://u:hunter2@h",
            "ids.sqlite",
            "",
            "memoryx",
        ] {
            let error = StoreKind::of(url).unwrap_err();
            assert!(
                matches!(error, StoreError::UnsupportedScheme { .. }),
                "{url}: {error:?}"
            );
            assert!(!error.to_string().contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn every_scheme_is_known_and_needs_its_feature() {
        for (prefix, scheme) in PREFIXES {
            let url = format!("{prefix}u:hunter2@h/db");
            match StoreKind::of(&url) {
                Ok(found) => assert_eq!(found, scheme),
                Err(StoreError::FeatureDisabled { feature, url }) => {
                    assert_eq!(feature, scheme.feature());
                    // A file path has no password to hide.
                    if scheme != StoreKind::Sqlite {
                        assert!(!url.contains("hunter2"), "{url}");
                    }
                }
                Err(other) => panic!("{prefix}: {other:?}"),
            }
        }
        for memory in ["memory", "memory:", "memory:tests", " memory "] {
            assert_eq!(
                StoreKind::of(memory).unwrap(),
                StoreKind::Memory,
                "{memory:?}"
            );
        }
    }

    #[test]
    fn the_refusal_lists_every_scheme_of_the_one_list() {
        let message = StoreKind::of("redis://127.0.0.1").unwrap_err().to_string();
        assert_eq!(
            message,
            "unsupported store URL \"redis://127.0.0.1\": expected sqlite:PATH, mysql://, \
             mariadb://, postgres://, postgresql://, mongodb://, mongodb+srv://, memory:, http:// \
             or https://"
        );
    }
}
