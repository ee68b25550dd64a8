//! What the workspace's two examples share: where their ids come from, read from the
//! environment, with a SQLite file as the default so that they run with no server at all.
//!
//! - `GDID_ID_STORE`: the store whose counters issue the GDIDs, `sqlite:PATH`, `mysql://…`,
//!   `mariadb://…`, `postgres://…` or `mongodb://…`; when unset, [`default_id_store`], a SQLite
//!   file;
//! - `GDID_MONGODB_URI`: a MongoDB server for `order_service`'s records;
//! - `GDID_MYSQL_URL`: a MySQL/MariaDB database for `order_service`'s records (with neither set,
//!   they go to a SQLite file).
//!
//! ```sh
//! cargo run -p gdid-examples --example order_service
//! cargo run -p gdid-examples --example swap_strategies
//! ```

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bson::doc;
use gdid::{Store, StoreError};
use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

/// `url` without its password, fit to be printed.
pub use gdid::redact;

/// Names the store whose counters issue the examples' GDIDs.
pub const ID_STORE_VAR: &str = "GDID_ID_STORE";
/// Names a MongoDB server for `order_service`'s records (the tests read it too).
pub const MONGODB_VAR: &str = "GDID_MONGODB_URI";
/// Names a MySQL/MariaDB database for `order_service`'s records (the tests read it too).
pub const MYSQL_VAR: &str = "GDID_MYSQL_URL";

/// The MongoDB database of the examples: their counters and their records.
pub const MONGODB_DATABASE: &str = "gdid_examples";
/// The table (or collection) of the counters in every id store, as `gdid::Store` names it.
const COUNTERS: &str = "gdid_counters";

/// How long an unreachable MongoDB server is waited for, unless its URI says otherwise.
const MONGODB_SERVER_TIMEOUT: Duration = Duration::from_secs(5);

/// The value of the environment variable `name`; `None` when it is unset or empty.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// The folder of the examples' SQLite files: `gdid-examples` in the system's temporary folder,
/// created on first use.
///
/// # Errors
///
/// When the folder cannot be created.
pub fn data_dir() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join("gdid-examples");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The SQLite file both examples issue ids from when `GDID_ID_STORE` is unset: `ids.sqlite` in
/// [`data_dir`]. It keeps the counters, so each run goes on where the previous one stopped.
///
/// # Errors
///
/// When the folder cannot be created.
pub fn default_id_store() -> std::io::Result<String> {
    Ok(format!(
        "sqlite:{}",
        data_dir()?.join("ids.sqlite").display()
    ))
}

/// The store that issues the GDIDs: `GDID_ID_STORE`, or else [`default_id_store`].
///
/// # Errors
///
/// When the default is used and its folder cannot be created.
pub fn id_store() -> std::io::Result<String> {
    match env_var(ID_STORE_VAR) {
        Some(url) => Ok(url),
        None => default_id_store(),
    }
}

/// The store of `url`, opened by [`gdid::Store`] with the authority number recorded in it (1 for
/// a fresh one; a store is one authority whatever the program that opens it): its schema is
/// created if missing; for `mongodb://…` the counters are in the database
/// [`MONGODB_DATABASE`] unless the URI names another.
///
/// # Errors
///
/// When the store cannot be reached or its schema cannot be created, or the URL names no store
/// (`gdid::StoreError`, without the URL's password).
pub async fn open_id_store(url: &str) -> Result<Store, StoreError> {
    Store::options()
        .default_mongodb_database(MONGODB_DATABASE)
        .open(url)
        .await
}

/// The store's authority in words: `authority N`, or `no authority` for a store opened
/// unnumbered.
pub fn authority_of(store: &Store) -> String {
    store
        .authority_number()
        .map_or_else(|| "no authority".to_owned(), |n| format!("authority {n}"))
}

/// The store in words, without password: its URL, and where its counters are.
pub fn describe_id_store(store: &Store) -> String {
    format!("{}, counters {COUNTERS}", store.label())
}

/// The database [`MONGODB_DATABASE`] on the server of `uri`, pinged so that a server that cannot
/// be reached is reported now (after 5 s unless the URI sets `serverSelectionTimeoutMS`), not at
/// the first id.
///
/// # Errors
///
/// When the URI is malformed or the server does not answer; the message names the server.
pub async fn connect_mongodb(uri: &str) -> Result<Database, Box<dyn Error>> {
    let database = async {
        let mut options = ClientOptions::parse(uri).await?;
        options
            .server_selection_timeout
            .get_or_insert(MONGODB_SERVER_TIMEOUT);
        let database = Client::with_options(options)?.database(MONGODB_DATABASE);
        database.run_command(doc! { "ping": 1 }).await?;
        Ok::<_, mongodb::error::Error>(database)
    };
    database
        .await
        .map_err(|e| format!("cannot connect to MongoDB at {}: {e}", redact(uri)).into())
}

/// The exit status of an example: 0, or 1 with the error on stderr in words (`main` returning the
/// error would print its `Debug` form instead).
pub fn exit_status(example: &str, result: Result<(), Box<dyn Error>>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{example}: {error}");
            ExitCode::FAILURE
        }
    }
}
