//! Which kind of store a URL names, and whether this build can open it.
#![cfg(feature = "engine")]

use crate::error::StoreError;
use crate::scheme::StoreKind;
use gdid_engine::plumbing::redact;
use gdid_engine::plumbing::scheme::Scheme;

/// The kind of store `url` names, checked against the features of this build.
///
/// # Errors
///
/// [`StoreError::UnsupportedScheme`], [`StoreError::FeatureDisabled`], or
/// [`StoreError::InvalidUrl`] for `sqlite:` without a path.
pub fn store_kind(url: &str) -> Result<StoreKind, StoreError> {
    scheme_of(url).map(|(scheme, _)| scheme)
}

/// The scheme of `url` ([`Scheme::split`], the one list), checked against the features of this
/// build, and what follows it: how every open reads a URL, once.
pub(crate) fn scheme_of(url: &str) -> Result<(Scheme, &str), StoreError> {
    let url = url.trim();
    let (scheme, rest) =
        Scheme::split(url).ok_or_else(|| StoreError::UnsupportedScheme { url: redact(url) })?;
    if !enabled(scheme) {
        return Err(feature_off(url, scheme));
    }
    if scheme == Scheme::Sqlite && rest.trim().is_empty() {
        return Err(StoreError::InvalidUrl {
            url: redact(url),
            reason: "sqlite: needs a file path (sqlite:ids.sqlite)",
        });
    }
    Ok((scheme, rest))
}

/// The one error of a store whose feature this build was made without.
pub(crate) fn feature_off(url: &str, scheme: Scheme) -> StoreError {
    StoreError::FeatureDisabled {
        url: redact(url.trim()),
        feature: scheme.feature(),
    }
}

/// Whether this build has the feature that opens `scheme`.
fn enabled(scheme: Scheme) -> bool {
    match scheme {
        Scheme::Sqlite => cfg!(feature = "sqlite"),
        Scheme::MySql => cfg!(feature = "mysql"),
        Scheme::Postgres => cfg!(feature = "postgres"),
        Scheme::MongoDb => cfg!(feature = "mongodb"),
        Scheme::Http => cfg!(feature = "http"),
        Scheme::Memory => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gdid_engine::plumbing::scheme::SCHEMES;

    #[test]
    fn unknown_schemes_are_refused_without_their_password() {
        for url in [
            "redis://u:hunter2@h/x",
            "ftp://u:hunter2@h",
            "ids.sqlite",
            "",
            "memoryx",
        ] {
            let error = store_kind(url).unwrap_err();
            assert!(
                matches!(error, StoreError::UnsupportedScheme { .. }),
                "{url}: {error:?}"
            );
            assert!(!error.to_string().contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn every_scheme_is_known_and_needs_its_feature() {
        for (prefix, scheme) in SCHEMES {
            let url = format!("{prefix}u:hunter2@h/db");
            match store_kind(&url) {
                Ok(found) => assert_eq!(found, scheme),
                Err(StoreError::FeatureDisabled { feature, url }) => {
                    assert_eq!(feature, scheme.feature());
                    // A file path has no password to hide.
                    if scheme != Scheme::Sqlite {
                        assert!(!url.contains("hunter2"), "{url}");
                    }
                }
                Err(other) => panic!("{prefix}: {other:?}"),
            }
        }
        for memory in ["memory", "memory:", "memory:tests", " memory "] {
            assert_eq!(store_kind(memory).unwrap(), StoreKind::Memory, "{memory:?}");
        }
    }

    #[test]
    fn the_refusal_lists_every_scheme_of_the_one_list() {
        let message = store_kind("redis://127.0.0.1").unwrap_err().to_string();
        assert_eq!(
            message,
            "unsupported store URL \"redis://127.0.0.1\": expected sqlite:PATH, mysql://, \
             mariadb://, postgres://, postgresql://, mongodb://, mongodb+srv://, memory:, http:// \
             or https://"
        );
    }
}
