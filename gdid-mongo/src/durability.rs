//! Write concern: every write that hands out ids is acknowledged only once it is durable; and
//! [`durability`], what `gdid check` reports of a MongoDB store.

use bson::{Document, doc};
use gdid_engine::durability::{Durability, Setting, Verdict};
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

/// Whether the blocks of `database`'s server survive a crash and a failover: the write concern
/// this crate writes them with (`w: "majority", j: true`, whatever the URL or the server's
/// default says), and the server's role (`hello`).
///
/// # Errors
///
/// The driver's, when the server cannot be asked.
pub async fn durability(database: &Database) -> Result<Durability, mongodb::error::Error> {
    let hello = database.run_command(doc! { "hello": 1 }).await?;
    let version = database
        .run_command(doc! { "buildInfo": 1 })
        .await
        .ok()
        .and_then(|info| info.get_str("version").ok().map(str::to_owned));
    Ok(judge(&hello, version.as_deref()))
}

/// The report of a server that said `hello`.
fn judge(hello: &Document, version: Option<&str>) -> Durability {
    let set = hello.get_str("setName").ok();
    let router = hello.get_str("msg").ok() == Some("isdbgrid");
    let writable = hello.get_bool("isWritablePrimary").unwrap_or(false);
    let role = match (router, set) {
        (true, _) => "mongos (a sharded cluster's router)".to_owned(),
        (false, Some(set)) if writable => format!("primary of replica set {set:?}"),
        (false, Some(set)) => format!("member of replica set {set:?}, not the primary"),
        (false, None) => "standalone".to_owned(),
    };
    let mut settings = vec![Setting::new(
        "write concern",
        "w: majority, j: true",
        Verdict::Safe,
        if set.is_some() || router {
            "each block is acknowledged once a majority of the replica set has it in its \
             journal: an election never rolls it back"
        } else {
            "each block is acknowledged once it is in the journal; a standalone has no failover"
        },
    )];
    if !writable && !router {
        settings.push(Setting::new(
            "role",
            "not the primary",
            Verdict::Unknown,
            "this member takes no writes: blocks are reserved on the primary; connect to the \
             replica set (without directConnection) or to its primary",
        ));
    }
    let server = match version {
        Some(version) => format!("MongoDB {version}, {role}"),
        None => format!("MongoDB, {role}"),
    };
    Durability::new(server, settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_member_is_safe_with_the_majority_concern() {
        let primary = doc! { "setName": "rs0", "isWritablePrimary": true };
        let report = judge(&primary, Some("7.0.1"));
        assert!(report.is_safe(), "{report}");
        assert_eq!(
            report.server,
            "MongoDB 7.0.1, primary of replica set \"rs0\""
        );
        let standalone = judge(&doc! { "isWritablePrimary": true }, None);
        assert!(standalone.is_safe());
        assert_eq!(standalone.server, "MongoDB, standalone");
        assert!(judge(&doc! { "msg": "isdbgrid" }, None).is_safe());
    }

    #[test]
    fn a_secondary_cannot_be_judged_here() {
        let secondary = doc! { "setName": "rs0", "isWritablePrimary": false };
        assert_eq!(judge(&secondary, None).worst(), Verdict::Unknown);
    }
}
