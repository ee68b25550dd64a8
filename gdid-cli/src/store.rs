//! `--store URL`: which store keeps the counters. The `gdid` crate knows every scheme
//! (`gdid::StoreKind`) and opens every store (`gdid::Store`); this module names the default,
//! checks a URL when the command line is read, and finds the URLs given elsewhere than argv
//! (`--store-file`, `GDID_STORE`), so that no password needs the command line.

use std::path::Path;

/// The store of the CLI when none is given: a SQLite file in the current folder, created on first
/// use by the commands that issue.
pub(crate) const DEFAULT_STORE: &str = "sqlite:gdid.sqlite";

/// The environment variable that gives the store URLs when neither `--store` nor `--store-file`
/// does: one URL, or several separated by whitespace (a URL holds none).
pub(crate) const STORE_ENV: &str = "GDID_STORE";

/// The store URLs of a command: `given` (`--store`, each checked already), else those of
/// `file` (`--store-file`: one URL a line; blank lines and lines starting with `#` skipped),
/// else those of [`STORE_ENV`] (set and not blank: separated by whitespace), else
/// [`DEFAULT_STORE`].
///
/// # Errors
///
/// A message naming where a URL that is refused was read (never its password), a file that
/// cannot be read, or a file that holds no URL.
pub(crate) fn urls(given: &[String], file: Option<&Path>) -> Result<Vec<String>, String> {
    if !given.is_empty() {
        return Ok(given.to_vec());
    }
    if let Some(file) = file {
        let shown = file.display();
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("--store-file {shown}: cannot read it: {e}"))?;
        let mut urls = Vec::new();
        for (number, line) in (1..).zip(text.lines()) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            urls.push(
                parse(line).map_err(|e| format!("--store-file {shown}, line {number}: {e}"))?,
            );
        }
        if urls.is_empty() {
            return Err(format!(
                "--store-file {shown} holds no store URL (one a line; `#` starts a comment)"
            ));
        }
        return Ok(urls);
    }
    match std::env::var(STORE_ENV) {
        Ok(value) if !value.trim().is_empty() => value
            .split_whitespace()
            .map(|url| parse(url).map_err(|e| format!("{STORE_ENV}: {e}")))
            .collect(),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{STORE_ENV}: a store URL is UTF-8")),
        _ => Ok(vec![DEFAULT_STORE.to_owned()]),
    }
}

/// The one store URL of a command that takes one, found as [`urls`] finds them.
///
/// # Errors
///
/// As [`urls`]; several URLs from `--store-file` or [`STORE_ENV`].
pub(crate) fn one(given: Option<&String>, file: Option<&Path>) -> Result<String, String> {
    let mut urls = urls(given.map(std::slice::from_ref).unwrap_or_default(), file)?;
    match urls.len() {
        1 => Ok(urls.remove(0)),
        n => {
            let from = if file.is_some() {
                "--store-file"
            } else {
                STORE_ENV
            };
            Err(format!(
                "{n} store URLs in {from}: this command takes one store"
            ))
        }
    }
}

/// A `--store` value, checked: a URL of a kind the `gdid` crate opens (`memory` is `memory:`).
///
/// # Errors
///
/// The `gdid` crate's error, without the URL's password.
pub(crate) fn parse(url: &str) -> Result<String, gdid::StoreError> {
    gdid::store_kind(url)?;
    Ok(url.trim().to_owned())
}

/// `--store URL` or `--store-file FILE` of a command that takes one store.
#[derive(Debug, clap::Args)]
pub(crate) struct OneStore {
    /// The store (sqlite:PATH, mysql://…, postgres://…, mongodb://…). Without --store: the URL
    /// of --store-file, else of the GDID_STORE environment variable, else sqlite:gdid.sqlite.
    #[arg(long = "store", value_name = "URL", value_parser = StoreUrl)]
    store: Option<String>,
    /// A file that holds the store URL (`#` starts a comment), instead of --store: no password
    /// in the command line.
    #[arg(long, value_name = "FILE", conflicts_with = "store")]
    store_file: Option<std::path::PathBuf>,
}

impl OneStore {
    /// Settles the store: --store's, --store-file's, GDID_STORE's, or the default.
    ///
    /// # Errors
    ///
    /// As [`one`].
    pub(crate) fn resolve(&mut self) -> Result<(), String> {
        self.store = Some(one(self.store.as_ref(), self.store_file.as_deref())?);
        Ok(())
    }

    /// The URL, once [`resolve`](Self::resolve)d (the default before).
    pub(crate) fn url(&self) -> &str {
        self.store.as_deref().unwrap_or(DEFAULT_STORE)
    }
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
    fn a_store_file_has_one_url_a_line_and_comments() {
        let dir = std::env::temp_dir().join(format!("gdid-store-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("stores");
        std::fs::write(&file, "# the primary\n  postgres://u:pw@h/db  \n\nmemory\n").unwrap();
        assert_eq!(
            urls(&[], Some(&file)).unwrap(),
            ["postgres://u:pw@h/db", "memory"]
        );
        assert_eq!(
            one(None, Some(&file)).unwrap_err(),
            "2 store URLs in --store-file: this command takes one store"
        );
        std::fs::write(&file, "# nothing\n").unwrap();
        assert!(
            urls(&[], Some(&file))
                .unwrap_err()
                .contains("holds no store URL")
        );
        std::fs::write(&file, "memory\nredis://u:hunter2@h\n").unwrap();
        let refused = urls(&[], Some(&file)).unwrap_err();
        assert!(refused.contains("line 2"), "{refused}");
        assert!(!refused.contains("hunter2"), "{refused}");
        let given = ["memory".to_owned()];
        assert_eq!(urls(&given, Some(&file)).unwrap(), ["memory"]);
        std::fs::remove_dir_all(&dir).ok();
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
