//! What is MongoDB's own about hi-lo windows, on the server of `GDID_MONGODB_URI`: window and
//! claim documents of types BSON has and SQL has not. The behaviours every store shares (the
//! agent, clients, shards down, orders and spellings, corrupt windows) are the conformance
//! suite's (`tests/conformance.rs`).

mod common;

use bson::doc;
use common::{client, fresh, uri};
use gdid_engine::windows::WindowShard;
use gdid_engine::{ErrorKind, IdGenerator};
use gdid_mongo::{
    AgentError, MongoWindowAgent, MongoWindowGenerator, MongoWindowShard, WindowShardError,
};

async fn agent(
    shards: &[(String, MongoWindowShard)],
    window_size: u64,
    min_open: u64,
) -> MongoWindowAgent {
    let mut agent = MongoWindowAgent::new(window_size, min_open).unwrap();
    for (label, shard) in shards {
        agent.add_shard(label, shard.clone()).await.unwrap();
    }
    agent
}

/// A corrupt window document is a typed error naming it, never values handed out.
#[tokio::test]
async fn a_corrupt_window_document_is_a_typed_error() {
    let Some(uri) = uri() else { return };
    let database = client(&uri).await.database(&fresh("wcorrupt"));
    let shard = MongoWindowShard::new(&database);
    database
        .collection("gdid_windows")
        .insert_one(doc! {
            "_id": "bad:0", "sequence": "bad", "start": 0_i64, "end": "lots",
            "next_hi": 0_i64, "open": true,
        })
        .await
        .unwrap();
    let agent = agent(&[("a".into(), shard.clone())], 10, 1).await;
    let err = agent.windows("bad").await.unwrap_err();
    assert!(
        matches!(
            &err,
            AgentError::Shard {
                source: WindowShardError::Corrupt { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("\"end\""), "{err}");
    let ids = MongoWindowGenerator::new(vec![("a".into(), shard)], "bad", 5).unwrap();
    let refused = ids.next_id().await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Corrupt, "{refused}");
}

/// A window end that is not an integer (BSON orders strings above numbers) is an error naming
/// the document, never the high-water mark.
#[tokio::test]
async fn a_text_window_end_is_an_error_naming_the_document() {
    let Some(uri) = uri() else { return };
    let database = client(&uri).await.database(&fresh("wtext"));
    let shard = MongoWindowShard::new(&database);
    let agent = agent(&[("x".to_owned(), shard.clone())], 10, 1).await;
    agent.run_once(&["text"]).await.unwrap();
    database
        .collection::<bson::Document>("gdid_window_claims")
        .update_one(doc! { "_id": "text:1" }, doc! { "$set": { "end": "zzz" } })
        .await
        .unwrap();
    let err = shard.high_water("text").await.unwrap_err();
    assert!(matches!(err, WindowShardError::Corrupt { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("\"text:1\"") && message.contains("gdid_window_claims"),
        "{message}"
    );
}

/// `prepare` indexes what the high-water query and the take read: by sequence and end on both
/// collections, by sequence, open and start on the windows, so that neither walks every window
/// or claim ever made.
#[tokio::test]
async fn the_window_collections_have_the_high_water_and_take_indexes() {
    let Some(uri) = uri() else { return };
    let database = client(&uri).await.database(&fresh("windex"));
    let shard = MongoWindowShard::new(&database);
    shard.prepare().await.unwrap();
    shard.prepare().await.unwrap(); // idempotent
    // Each index's keys as `field:direction,…`, whatever numeric type the server returns.
    let indexes = async |collection: &str| -> Vec<String> {
        let collection = database.collection::<bson::Document>(collection);
        let mut cursor = collection.list_indexes().await.unwrap();
        let mut indexes = Vec::new();
        while cursor.advance().await.unwrap() {
            let keys = cursor.deserialize_current().unwrap().keys;
            let keys = keys.iter().map(|(field, direction)| {
                let direction = direction.as_i32().map(f64::from).or(direction.as_f64());
                format!("{field}:{}", direction.unwrap_or(f64::NAN))
            });
            indexes.push(keys.collect::<Vec<_>>().join(","));
        }
        indexes
    };
    let windows = indexes("gdid_windows").await;
    for keys in ["sequence:1,end:-1", "sequence:1,open:1,start:1"] {
        assert!(
            windows.iter().any(|k| k == keys),
            "{keys} not in {windows:?}"
        );
    }
    let claims = indexes("gdid_window_claims").await;
    assert!(
        claims.iter().any(|k| k == "sequence:1,end:-1"),
        "{claims:?}"
    );
}
