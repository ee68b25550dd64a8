//! [`authority`]: a GDID authority on any store the suite drives, opened from its URL by
//! `gdid::Store`.

use std::sync::Arc;

use gdid::{Store, StoreError};
use gdid_engine::DynAuthority;

use crate::error::SetupError;
use crate::url::ServerUrl;

/// Authority `number` on the store of `url`: on a server, its database
/// `gdid_faults_authority_N` (created if missing); a SQLite file is the store itself.
///
/// A store records its authority number, so each number has a store of its own on a server: the
/// scenarios can use one server as authority 1 in one and as authority 2 in another.
///
/// # Errors
///
/// When the store cannot be reached or set up, or has recorded another number.
pub async fn authority(url: &str, number: u8) -> Result<Arc<dyn DynAuthority>, SetupError> {
    let store = open(url, number).await?;
    Ok(store
        .authority()
        .expect("a store opened with a number is an authority"))
}

/// The store of authority `number` on `url`, as [`authority`] says.
///
/// # Errors
///
/// As [`authority`].
pub async fn open(url: &str, number: u8) -> Result<Store, SetupError> {
    let options = Store::options().authority(number);
    let Some(server) = ServerUrl::parse(url) else {
        return Ok(options.open(url).await?);
    };
    let name = format!("gdid_faults_authority_{number}");
    match options.open(&server.with_database(&name)).await {
        // A SQL server has no such database yet (MongoDB makes one on its first write): it is
        // created from the database of `url`.
        Err(StoreError::Connect { source, .. }) => {
            let url = url.to_owned();
            // gdid-testkit panics when it cannot create it: that is an error here.
            let created = tokio::spawn(async move { gdid_testkit::database(&url, &name).await })
                .await
                .map_err(|_| format!("{source}; the database could not be created either"))?;
            Ok(options.open(&created).await?)
        }
        opened => Ok(opened?),
    }
}
