//! What the workspace's tests share (a dev-dependency only), and the conformance suite every
//! backend runs ([`conformance`](mod@conformance)).
//!
//! Database tests read the server's address from an environment variable that
//! `scripts/services.sh` sets (`GDID_MYSQL_URL`, `GDID_POSTGRES_URL`, `GDID_MONGODB_URI`). When it
//! is unset the test says it is skipped; with `CI=true` a missing server is a failure instead.
//!
//! Each test that gets a store here is tallied (see [`ran`]), so that `scripts/test` can say how
//! many tests ran against each store and how many were skipped for want of one.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

pub mod conformance;
pub mod processes;
mod sql;
mod stores;
pub mod tls;
pub use sql::database;
pub use stores::{StoreServer, every_store};

/// The value of the environment variable `name`: `None` (with a line saying the test is skipped)
/// when it is unset or empty.
///
/// # Panics
///
/// When it is unset and `CI=true`: in CI every server is required.
pub fn server(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => {
            ran(store_of(name));
            Some(value)
        }
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{name} is not set and CI=true: the server is required")
        }
        _ => {
            eprintln!("skipped: {name} is not set (scripts/services.sh sets it)");
            tally("skipped", store_of(name));
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
    ran("SQLite");
    format!("sqlite:{}", dir.join("ids.sqlite").display())
}

/// `uri` with its database set to `name`, in place of the one it names if any; its options
/// kept.
///
/// ```
/// use gdid_testkit::mongodb_database;
///
/// let uri = "mongodb://127.0.0.1:27018/?directConnection=true";
/// assert_eq!(mongodb_database(uri, "t1"), "mongodb://127.0.0.1:27018/t1?directConnection=true");
/// assert_eq!(mongodb_database("mongodb://h:1/old", "t2"), "mongodb://h:1/t2?");
/// ```
pub fn mongodb_database(uri: &str, name: &str) -> String {
    let (base, query) = uri.split_once('?').unwrap_or((uri, ""));
    let hosts = base.find("://").map_or(0, |scheme| scheme + 3);
    let server = base[hosts..]
        .find('/')
        .map_or(base, |path| &base[..hosts + path]);
    format!("{server}/{name}?{query}")
}

/// Notes that the running test runs against `store` (`SQLite`, `MariaDB`, `PostgreSQL`,
/// `MongoDB`): a line in the file `GDID_TEST_TALLY` names, when it is set. [`server`] and
/// [`sqlite_url`] call it; a test that finds its store another way calls it itself.
///
/// A line is `ran`, the store, the test binary and the test (its thread's name, which the test
/// harness sets): `scripts/test` counts each test once per store.
///
/// # Examples
///
/// ```no_run
/// // Not run as a doc test: under scripts/test it would count as a test of SQLite.
/// gdid_testkit::ran("SQLite"); // nothing happens unless GDID_TEST_TALLY is set
/// ```
pub fn ran(store: &str) {
    tally("ran", store);
}

/// Says that the running test is skipped because `store` is not available here (`why`), and
/// tallies it as skipped (see [`ran`]).
///
/// # Panics
///
/// When `CI=true`: in CI every store is required.
///
/// # Examples
///
/// ```no_run
/// // Not run as a doc test: under scripts/test it would count as a skipped test of MariaDB.
/// if std::env::var("CI").as_deref() != Ok("true") {
///     gdid_testkit::unavailable("MariaDB", "mariadbd is not installed"); // prints "skipped: …"
/// }
/// ```
pub fn unavailable(store: &str, why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{store} is not available ({why}) and CI=true: it is required");
    }
    eprintln!("skipped: {store} is not available ({why})");
    tally("skipped", store);
}

/// The store a server variable names, for the tally.
fn store_of(variable: &str) -> &str {
    match variable {
        "GDID_MYSQL_URL" => "MariaDB",
        "GDID_POSTGRES_URL" => "PostgreSQL",
        "GDID_MONGODB_URI" => "MongoDB",
        other => other,
    }
}

/// Appends `outcome store binary test` (tab-separated) to the file `GDID_TEST_TALLY` names. One
/// write of one short line in append mode: lines of tests running at once do not mix.
fn tally(outcome: &str, store: &str) {
    // A worker process of a test (see `processes`) is not a test of its own.
    if std::env::var_os("GDID_WORKER_START").is_some() {
        return;
    }
    let Some(path) = std::env::var_os("GDID_TEST_TALLY").filter(|p| !p.is_empty()) else {
        return;
    };
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    let line = format!("{outcome}\t{store}\t{binary}\t{test}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "gdid-testkit: cannot tally in {}: {e}",
            path.to_string_lossy()
        );
    }
}
