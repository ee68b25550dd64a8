//! [`authority`]: a GDID authority on any store the suite drives, from its URL.

use std::sync::Arc;

use gdid_core::generator::DynAuthority;
use gdid_mongo::MongoAuthority;
use gdid_sql::SqlAuthority;

use crate::scenarios::SetupError;

/// The MongoDB database the suite keeps its counters in.
pub const MONGO_DATABASE: &str = "gdid_faults";

/// Authority `number` on the server of `url`: `mongodb://…` (counters in
/// [`MONGO_DATABASE`]`.counters_N`), a MariaDB or PostgreSQL server (database
/// `gdid_faults_authority_N`, created if missing), or a SQLite file.
///
/// A store records its authority number, so each number has a store of its own on a server: the
/// scenarios can use one server as authority 1 in one and as authority 2 in another.
///
/// # Errors
///
/// When the store cannot be reached or set up.
pub async fn authority(url: &str, number: u8) -> Result<Arc<dyn DynAuthority>, SetupError> {
    if url.starts_with("mongodb://") {
        let client = mongodb::Client::with_uri_str(url).await?;
        let database = client.database(MONGO_DATABASE);
        let authority = MongoAuthority::new(&database, &format!("counters_{number}"), number)?;
        authority.check_number().await?;
        Ok(Arc::new(authority))
    } else if url.starts_with("sqlite:") {
        Ok(Arc::new(SqlAuthority::connect(url, number).await?))
    } else {
        let url = gdid_testkit::database(url, &format!("gdid_faults_authority_{number}")).await;
        Ok(Arc::new(SqlAuthority::connect(&url, number).await?))
    }
}
