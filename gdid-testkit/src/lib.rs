//! What the workspace's tests share (a dev-dependency only).
//!
//! Database tests read the server's address from an environment variable that
//! `scripts/services.sh` sets (`GDID_MYSQL_URL`, `GDID_POSTGRES_URL`, `GDID_MONGODB_URI`). When it
//! is unset the test says it is skipped; with `CI=true` a missing server is a failure instead.

use std::time::{SystemTime, UNIX_EPOCH};

/// The value of the environment variable `name`: `None` (with a line saying the test is skipped)
/// when it is unset or empty.
///
/// # Panics
///
/// When it is unset and `CI=true`: in CI every server is required.
pub fn server(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => Some(value),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{name} is not set and CI=true: the server is required")
        }
        _ => {
            eprintln!("skipped: {name} is not set (scripts/services.sh sets it)");
            None
        }
    }
}

/// `name` made unique to this process and moment, for tables, collections and scopes that no
/// earlier run has used.
pub fn fresh(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |t| t.as_nanos());
    format!("{name}_{}_{nanos}", std::process::id())
}

/// A `sqlite:` URL of a file in a new temporary folder named after `test`.
///
/// # Panics
///
/// When the folder cannot be created.
pub fn sqlite_url(test: &str) -> String {
    let dir = std::env::temp_dir().join(fresh(test));
    std::fs::create_dir_all(&dir).expect("creating a temporary folder");
    format!("sqlite:{}", dir.join("ids.sqlite").display())
}
