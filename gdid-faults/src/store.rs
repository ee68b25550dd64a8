//! [`authority`]: a GDID authority on any store the suite drives, from its URL.

use std::sync::Arc;

use gdid_core::generator::DynAuthority;
use gdid_mongo::MongoAuthority;
use gdid_sql::SqlAuthority;

use crate::scenarios::SetupError;

/// The MongoDB database the suite keeps its counters in.
pub const MONGO_DATABASE: &str = "gdid_faults";

/// Authority `number` on the store of `url`: `mongodb://…` (counters in
/// [`MONGO_DATABASE`]`.counters`), or any URL [`SqlAuthority::connect`] takes.
///
/// # Errors
///
/// When the store cannot be reached or set up.
pub async fn authority(url: &str, number: u8) -> Result<Arc<dyn DynAuthority>, SetupError> {
    if url.starts_with("mongodb://") {
        let client = mongodb::Client::with_uri_str(url).await?;
        let database = client.database(MONGO_DATABASE);
        Ok(Arc::new(MongoAuthority::new(
            &database, "counters", number,
        )?))
    } else {
        Ok(Arc::new(SqlAuthority::connect(url, number).await?))
    }
}
