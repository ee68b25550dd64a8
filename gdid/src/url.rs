//! Which kind of store a URL names, and whether this build can open it.

use crate::error::StoreError;
use gdid_core::generator::redact;

/// The kind of store a URL names, from its scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `sqlite:PATH`.
    Sqlite,
    /// `mysql://…` or `mariadb://…`.
    MySql,
    /// `postgres://…` or `postgresql://…`.
    Postgres,
    /// `mongodb://…` or `mongodb+srv://…`.
    MongoDb,
}

/// Every scheme prefix and the store it names: the one scheme list of the workspace.
const PREFIXES: [(&str, Scheme); 7] = [
    ("sqlite:", Scheme::Sqlite),
    ("mysql://", Scheme::MySql),
    ("mariadb://", Scheme::MySql),
    ("postgres://", Scheme::Postgres),
    ("postgresql://", Scheme::Postgres),
    ("mongodb://", Scheme::MongoDb),
    ("mongodb+srv://", Scheme::MongoDb),
];

impl Scheme {
    /// The scheme of `url`, checked against the features of this build.
    ///
    /// # Errors
    ///
    /// [`StoreError::UnsupportedScheme`], [`StoreError::FeatureDisabled`], or
    /// [`StoreError::InvalidUrl`] for `sqlite:` without a path.
    pub(crate) fn of(url: &str) -> Result<Scheme, StoreError> {
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
        if scheme == Scheme::Sqlite && url[prefix.len()..].trim().is_empty() {
            return Err(StoreError::InvalidUrl {
                url: redact(url),
                reason: "sqlite: needs a file path (sqlite:ids.sqlite)",
            });
        }
        Ok(scheme)
    }

    /// The `gdid` feature that opens this kind of store.
    pub(crate) fn feature(self) -> &'static str {
        match self {
            Scheme::Sqlite => "sqlite",
            Scheme::MySql => "mysql",
            Scheme::Postgres => "postgres",
            Scheme::MongoDb => "mongodb",
        }
    }

    /// Whether this build has that feature.
    fn enabled(self) -> bool {
        match self {
            Scheme::Sqlite => cfg!(feature = "sqlite"),
            Scheme::MySql => cfg!(feature = "mysql"),
            Scheme::Postgres => cfg!(feature = "postgres"),
            Scheme::MongoDb => cfg!(feature = "mongodb"),
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
            "http://u:hunter2@h",
            "ids.sqlite",
            "",
        ] {
            let error = Scheme::of(url).unwrap_err();
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
            match Scheme::of(&url) {
                Ok(found) => assert_eq!(found, scheme),
                Err(StoreError::FeatureDisabled { feature, url }) => {
                    assert_eq!(feature, scheme.feature());
                    assert!(!url.contains("hunter2"), "{url}");
                }
                Err(other) => panic!("{prefix}: {other:?}"),
            }
        }
    }
}
