//! What is MongoDB's own about hi-lo windows, on the server of `GDID_MONGODB_URI`: window and
//! claim documents of types BSON has and SQL has not. The behaviours every store shares (the
//! agent, clients, shards down, orders and spellings, corrupt windows) are the conformance
//! suite's (`tests/conformance.rs`).

mod common;

use bson::doc;
use common::{client, fresh, uri};
use gdid_core::generator::IdGenerator;
use gdid_core::generator::windows::WindowShard;
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
    assert!(ids.next_id().await.is_err());
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
