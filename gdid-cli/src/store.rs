//! `--store URL`: which database keeps the counters, and connecting to it.

use std::fmt;
use std::str::FromStr;

use gdid_core::generator::redact;
use gdid_sql::SqlStore;

/// The store of the CLI when none is given: a SQLite file in the current folder, created on first
/// use.
pub const DEFAULT_STORE: &str = "sqlite:gdid.sqlite";

/// The MongoDB database used when the URL names none.
const DEFAULT_MONGO_DATABASE: &str = "gdid";

/// A store as named on the command line.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// `sqlite:PATH`, `mysql://…` (or `mariadb://…`), `postgres://…` (or `postgresql://…`).
    Sql(String),
    /// `mongodb://…` or `mongodb+srv://…`.
    Mongo(String),
    /// `memory`: an in-process authority (ids start again with every run).
    Memory,
}

/// A `--store` value that names no store this command knows.
#[derive(Debug, thiserror::Error)]
#[error(
    "unsupported store {0:?}: expected sqlite:PATH, mysql://…, postgres://…, mongodb://… or memory"
)]
pub struct BadStoreUrl(String);

impl FromStr for StoreUrl {
    type Err = BadStoreUrl;

    fn from_str(url: &str) -> Result<Self, Self::Err> {
        let url = url.trim();
        let sql_schemes = ["mysql://", "mariadb://", "postgres://", "postgresql://"];
        if url == "memory" {
            Ok(StoreUrl::Memory)
        } else if url
            .strip_prefix("sqlite:")
            .is_some_and(|path| !path.is_empty())
            || sql_schemes.iter().any(|scheme| url.starts_with(scheme))
        {
            Ok(StoreUrl::Sql(url.to_owned()))
        } else if url.starts_with("mongodb://") || url.starts_with("mongodb+srv://") {
            Ok(StoreUrl::Mongo(url.to_owned()))
        } else {
            Err(BadStoreUrl(redact(url)))
        }
    }
}

impl fmt::Display for StoreUrl {
    /// The URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sql(url) | StoreUrl::Mongo(url) => f.write_str(&redact(url)),
            StoreUrl::Memory => f.write_str("memory"),
        }
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreUrl({self})")
    }
}

/// A connected store.
#[derive(Debug, Clone)]
pub enum Store {
    /// MySQL/MariaDB, PostgreSQL or SQLite.
    Sql(SqlStore),
    /// A MongoDB database.
    Mongo(mongodb::Database),
    /// In-process.
    Memory,
}

/// A store that could not be reached.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(String);

impl StoreUrl {
    /// A store that connects on first use, so that it can be set up while its server is down (a
    /// failover authority).
    pub async fn open_lazy(&self) -> Result<Store, Unreachable> {
        let unreachable = |reason: String| Unreachable(format!("cannot open {self}: {reason}"));
        match self {
            StoreUrl::Sql(url) => SqlStore::connect_lazy(url)
                .map(Store::Sql)
                .map_err(|e| Unreachable(e.to_string())),
            StoreUrl::Mongo(url) => {
                let (client, name) = mongo_client(url).await.map_err(unreachable)?;
                Ok(Store::Mongo(client.database(&name)))
            }
            StoreUrl::Memory => Ok(Store::Memory),
        }
    }

    /// Connects (for MongoDB: checks the server answers, so that a wrong address fails here and
    /// not at the first id).
    pub async fn connect(&self) -> Result<Store, Unreachable> {
        let unreachable =
            |reason: String| Unreachable(format!("cannot connect to {self}: {reason}"));
        match self {
            // gdid-sql's error names the URL (without its password) already.
            StoreUrl::Sql(url) => SqlStore::connect(url)
                .await
                .map(Store::Sql)
                .map_err(|e| Unreachable(e.to_string())),
            StoreUrl::Mongo(url) => {
                let (client, name) = mongo_client(url).await.map_err(unreachable)?;
                let database = client.database(&name);
                database
                    .run_command(bson::doc! { "ping": 1 })
                    .await
                    .map_err(|e| unreachable(e.to_string()))?;
                Ok(Store::Mongo(database))
            }
            StoreUrl::Memory => Ok(Store::Memory),
        }
    }
}

/// A client of `url` (nothing is sent yet) and the database it names, or `gdid`.
async fn mongo_client(url: &str) -> Result<(mongodb::Client, String), String> {
    let mut options = mongodb::options::ClientOptions::parse(url)
        .await
        .map_err(|e| e.to_string())?;
    options.server_selection_timeout = Some(std::time::Duration::from_secs(5));
    let name = options
        .default_database
        .clone()
        .unwrap_or_else(|| DEFAULT_MONGO_DATABASE.to_owned());
    let client = mongodb::Client::with_options(options).map_err(|e| e.to_string())?;
    Ok((client, name))
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
        ] {
            assert!(matches!(url.parse(), Ok(StoreUrl::Sql(_))), "{url}");
        }
        assert!(matches!(
            "mongodb://127.0.0.1:27017".parse(),
            Ok(StoreUrl::Mongo(_))
        ));
        assert_eq!("memory".parse::<StoreUrl>().unwrap(), StoreUrl::Memory);
        for bad in ["sqlite:", "redis://h", "gdid.sqlite", "", "http://u:pw@h/x"] {
            let err = bad.parse::<StoreUrl>().unwrap_err().to_string();
            assert!(!err.contains("pw"), "{err}");
        }
    }

    #[test]
    fn passwords_never_show() {
        let url: StoreUrl = "postgres://u:hunter2@h/db?password=hunter2"
            .parse()
            .unwrap();
        assert_eq!(url.to_string(), "postgres://u:***@h/db?password=***");
        assert!(!format!("{url:?}").contains("hunter2"));
        let bad = "redis://u:hunter2@h".parse::<StoreUrl>().unwrap_err();
        assert!(!bad.to_string().contains("hunter2"), "{bad}");
    }
}
