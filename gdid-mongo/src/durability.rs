//! Write concern: every write that hands out ids is acknowledged only once it is durable.

use mongodb::options::{CollectionOptions, WriteConcern};
use mongodb::{Collection, Database};

/// Write concern `majority` with journal: a write acknowledged this way survives a fail-over,
/// so the ids it handed out are never handed out again.
pub(crate) fn durable() -> WriteConcern {
    let mut concern = WriteConcern::majority();
    concern.journal = Some(true);
    concern
}

/// `name` of `database`, writing with `concern`.
pub(crate) fn collection_with_concern<T: Send + Sync>(
    database: &Database,
    name: &str,
    concern: WriteConcern,
) -> Collection<T> {
    let options = CollectionOptions::builder().write_concern(concern).build();
    database.collection_with_options(name, options)
}
