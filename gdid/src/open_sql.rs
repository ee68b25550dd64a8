//! Opening a MySQL/MariaDB, PostgreSQL or SQLite store (gdid-sql).

use gdid_sql::{Error, SqlAuthority, SqlStore};

use crate::error::StoreError;

/// Connects to `url`, creates the schema and settles the store's authority number.
pub(crate) async fn open(url: &str, label: &str) -> Result<SqlAuthority, StoreError> {
    let store = SqlStore::connect(url).await.map_err(|error| match error {
        Error::Connect { source, .. } => StoreError::Connect {
            url: label.to_owned(),
            source: source.into(),
        },
        other => StoreError::Connect {
            url: label.to_owned(),
            source: other.into(),
        },
    })?;
    SqlAuthority::of_store(store, label)
        .await
        .map_err(|error| match error {
            Error::Authority(source) => StoreError::Authority {
                url: label.to_owned(),
                source,
            },
            Error::Schema(source) => StoreError::Schema {
                url: label.to_owned(),
                source: source.into(),
            },
            other => StoreError::Schema {
                url: label.to_owned(),
                source: other.into(),
            },
        })
}
