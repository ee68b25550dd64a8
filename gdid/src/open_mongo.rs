//! Opening a MongoDB store (gdid-mongo).

use std::time::Duration;

use gdid_core::generator::redact;
use gdid_mongo::MongoAuthority;
use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

use crate::error::StoreError;

/// The database used when the URL names none.
pub(crate) const DEFAULT_DATABASE: &str = "gdid";
/// The collection of counter documents (and of the store's authority number).
pub(crate) const COUNTERS: &str = "gdid_counters";
/// The collection of the sharded counters' ranges.
pub(crate) const RANGES: &str = "gdid_ranges";
/// How long a server is looked for when the URL does not say (`serverSelectionTimeoutMS`).
const SERVER_TIMEOUT: Duration = Duration::from_secs(5);

/// A MongoDB database and its authority.
#[derive(Debug, Clone)]
pub(crate) struct MongoStore {
    pub(crate) database: Database,
    pub(crate) authority: MongoAuthority,
}

impl MongoStore {
    /// Connects to `url`, pings the server, and settles the authority number of the counters
    /// collection, in the database the URL names or else `default_database`.
    pub(crate) async fn open(
        url: &str,
        label: &str,
        default_database: &str,
    ) -> Result<MongoStore, StoreError> {
        let connect = |error: mongodb::error::Error| StoreError::Connect {
            url: label.to_owned(),
            // The driver may quote the URI: its message is redacted too.
            source: redact(&error.to_string()).into(),
        };
        let mut options = ClientOptions::parse(url).await.map_err(connect)?;
        options
            .server_selection_timeout
            .get_or_insert(SERVER_TIMEOUT);
        let name = options
            .default_database
            .clone()
            .unwrap_or_else(|| default_database.to_owned());
        let database = Client::with_options(options)
            .map_err(connect)?
            .database(&name);
        database
            .run_command(bson::doc! { "ping": 1 })
            .await
            .map_err(connect)?;
        let authority = MongoAuthority::open(&database, COUNTERS)
            .await
            .map_err(|source| StoreError::Authority {
                url: label.to_owned(),
                source,
            })?;
        Ok(MongoStore {
            database,
            authority,
        })
    }
}
