//! What the workspace's examples share: where their ids come from, read from the environment,
//! with a SQLite file as the default so that they run with no server at all; and, for the web
//! examples' tests, a plain HTTP/1.1 client ([`http_call`]).
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
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bson::doc;
use gdid::{Store, StoreError};
use mongodb::options::ClientOptions;
use mongodb::{Client, Database};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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

/// One HTTP/1.1 request to the server at `addr`, `body` sent as JSON: the reply's status and its
/// body, parsed as JSON (`null` when empty). Printed as it goes, one line a request. The web
/// examples' tests call their servers with it: a plain client on a TCP socket, so that they need
/// no HTTP client crate.
///
/// # Errors
///
/// When the server cannot be reached, or its reply is not HTTP with a JSON body.
pub async fn http_call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, Value), Box<dyn Error>> {
    let body = body.unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request.as_bytes()).await?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await?;
    let (head, text) = reply
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{method} {path}: a reply without a head: {reply:?}"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("{method} {path}: a reply without a status: {head:?}"))?;
    let json = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(text)
            .map_err(|e| format!("{method} {path} -> {status}: {e}: body {text:?}"))?
    };
    println!("{method} {path} -> {status} {json}");
    Ok((status, json))
}

/// `Ok` when `ok`; else the error "check failed: `what`".
///
/// # Errors
///
/// When `ok` is false.
pub fn expect(what: &str, ok: bool) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("check failed: {what}"))
    }
}

/// The web examples' test (`web_axum`, `web_actix`): both answer the same API the same
/// way. Orders are created with `customer_id` in the colon text and in hex, read back by either
/// form in the path; a bad id in the body or the path is a 400 whose message says what is wrong
/// with it; an unknown id is a 404.
///
/// # Errors
///
/// The first answer that is not the expected one.
pub async fn web_api_check(addr: SocketAddr) -> Result<(), Box<dyn Error>> {
    let id_of = |order: &Value, field: &str| -> Result<gdid::Gdid, Box<dyn Error>> {
        Ok(order[field].as_str().ok_or("no id")?.parse()?)
    };
    let body = r#"{"customer_id":"0:1:5","total_cents":1999}"#;
    let (status, first) = http_call(addr, "POST", "/orders", Some(body)).await?;
    expect("POST /orders is 201", status == 201)?;
    expect(
        "customer_id comes back as the colon text",
        first["customer_id"] == "0:1:5",
    )?;
    let body = r#"{"customer_id":"000000001000000000000005","total_cents":450}"#;
    let (status, second) = http_call(addr, "POST", "/orders", Some(body)).await?;
    expect(
        "a customer_id in hex is read, and written back as text",
        status == 201 && second["customer_id"] == "0:1:5",
    )?;
    let (first_id, second_id) = (id_of(&first, "id")?, id_of(&second, "id")?);
    expect("two orders, two ids", first_id != second_id)?;

    let (status, found) = http_call(addr, "GET", &format!("/orders/{first_id}"), None).await?;
    expect("GET by colon text", status == 200 && found == first)?;
    let (status, found) = http_call(addr, "GET", &format!("/orders/{second_id:x}"), None).await?;
    expect("GET by hex", status == 200 && found == second)?;

    let message = |reply: &Value| reply["error"].as_str().unwrap_or_default().to_owned();
    let (status, reply) = http_call(addr, "GET", "/orders/1:99:5", None).await?;
    expect(
        "a bad id in the path is 400 saying what is wrong",
        status == 400 && message(&reply).contains("authority segment"),
    )?;
    let body = r#"{"customer_id":"0:99:5","total_cents":1}"#;
    let (status, reply) = http_call(addr, "POST", "/orders", Some(body)).await?;
    expect(
        "a bad id in the body is 400 saying what is wrong",
        status == 400 && message(&reply).contains("authority segment"),
    )?;
    let (status, _) = http_call(addr, "GET", "/orders/0:1:999999999", None).await?;
    expect("an unknown id is 404", status == 404)?;
    Ok(())
}
