//! `--store URL`: which store keeps the counters. The `gdid` crate knows every scheme
//! (`gdid::StoreKind`) and opens every store (`gdid::Store`); this module only names the default
//! and checks a URL when the command line is read.

/// The store of the CLI when none is given: a SQLite file in the current folder, created on first
/// use.
pub(crate) const DEFAULT_STORE: &str = "sqlite:gdid.sqlite";

/// A `--store` value, checked: a URL of a kind the `gdid` crate opens (`memory` is `memory:`).
///
/// # Errors
///
/// The `gdid` crate's error, without the URL's password.
pub(crate) fn parse(url: &str) -> Result<String, gdid::StoreError> {
    gdid::StoreKind::of(url)?;
    Ok(url.trim().to_owned())
}

/// The `--store` value parser: [`parse`], whose error names the URL without its password (clap's
/// own error for a value repeats the value as given, password and all).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StoreUrl;

impl clap::builder::TypedValueParser for StoreUrl {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let refused = |message: String| {
            let arg = arg.map_or_else(|| "--store".to_owned(), ToString::to_string);
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for '{arg}': {message}\n"),
            )
            .with_cmd(cmd)
        };
        let url = value
            .to_str()
            .ok_or_else(|| refused("a store URL is UTF-8".to_owned()))?;
        parse(url).map_err(|e| refused(e.to_string()))
    }
}

/// `url` without its password.
pub(crate) fn label(url: &str) -> String {
    gdid::redact(url.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scheme_is_recognised_and_others_are_refused() {
        for url in [
            "sqlite:gdid.sqlite",
            "mysql://root@127.0.0.1/test",
            "mariadb://root@127.0.0.1/test",
            "postgres://p@h/test",
            "postgresql://p@h/test",
            "mongodb://127.0.0.1:27017",
            "memory",
            "memory:",
            "memory:name",
            "http://127.0.0.1:7070",
            "https://ids.internal:8443",
        ] {
            assert_eq!(parse(url).unwrap(), url);
        }
        for bad in ["sqlite:", "redis://h", "gdid.sqlite", "", "ftp://u:pw@h/x"] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(!err.contains("pw"), "{err}");
        }
    }

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            label("postgres://u:hunter2@h/db?password=hunter2"),
            "postgres://u:***@h/db?password=***"
        );
        let bad = parse("redis://u:hunter2@h").unwrap_err();
        assert!(!bad.to_string().contains("hunter2"), "{bad}");
    }
}
