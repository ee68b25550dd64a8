//! Distributed hi-lo windows with three databases of the test server as three shards (on a real
//! deployment they would be separate deployments; the protocol does not tell the difference).

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use bson::doc;
use common::{Relay, client, fresh, uri};
use gdid_core::generator::windows::WindowShard;
use gdid_core::generator::{Error, IdGenerator};
use gdid_mongo::{
    AgentError, MongoWindowAgent, MongoWindowGenerator, MongoWindowShard, Window, WindowShardError,
};

/// Three shards in fresh databases, each with its own client (as separate deployments would be).
async fn shards(uri: &str, name: &str) -> Vec<(String, MongoWindowShard)> {
    let prefix = fresh(name);
    let mut shards = Vec::new();
    for label in ["a", "b", "c"] {
        let database = client(uri).await.database(&format!("{prefix}_{label}"));
        shards.push((label.to_owned(), MongoWindowShard::new(&database)));
    }
    shards
}

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

/// No two windows of a sequence, on any shards, share a value.
fn assert_disjoint(windows: &[(String, Window)]) {
    let mut sorted: Vec<&(String, Window)> = windows.iter().collect();
    sorted.sort_by_key(|(_, w)| w.start);
    for pair in sorted.windows(2) {
        assert!(
            pair[0].1.end <= pair[1].1.start,
            "overlap: {:?} on {} and {:?} on {}",
            pair[0].1,
            pair[0].0,
            pair[1].1,
            pair[1].0
        );
    }
}

/// The agent opens windows on every shard; clients use them up without passing a window's end;
/// with none open the error says so; the next run refills.
#[tokio::test]
async fn clients_use_the_windows_the_agent_opens() {
    let Some(uri) = uri() else { return };
    let shards = shards(&uri, "wclients").await;
    let agent = agent(&shards, 100, 2).await;
    let report = agent.run_once(&["order"]).await.unwrap();
    assert_eq!(report.created.len(), 6);
    let windows = agent.windows("order").await.unwrap();
    assert_eq!(windows.len(), 6);
    assert_disjoint(&windows);

    // 30 does not divide 100: batches are cut short at window ends.
    let ids = MongoWindowGenerator::new(shards.clone(), "order", 30).unwrap();
    let mut seen = HashSet::new();
    for _ in 0..600 {
        let id = ids.next_id().await.unwrap();
        assert!(seen.insert(id), "{id} issued twice");
        assert!(
            windows.iter().any(|(_, w)| (w.start..w.end).contains(&id)),
            "{id} outside every window"
        );
    }
    let err = ids.next_id().await.unwrap_err();
    assert!(matches!(err, Error::Exhausted(_)), "{err}");
    assert!(err.to_string().contains("no open window"), "{err}");
    for (_, window) in agent.windows("order").await.unwrap() {
        assert_eq!(window.next_hi, window.end, "{window:?} is used up exactly");
    }

    let report = agent.run_once(&["order"]).await.unwrap();
    assert_eq!(report.created.len(), 6);
    let id = ids.next_id().await.unwrap();
    assert!(id >= 600 && !seen.contains(&id), "{id}");
}

/// 2 clients × 4 tasks on one shard: every batch lies inside one window, no value twice, and the
/// windows are used up exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_takes_never_cross_a_window_end() {
    let Some(uri) = uri() else { return };
    let name = fresh("wtake");
    let shard = MongoWindowShard::new(&client(&uri).await.database(&name));
    let agent = agent(&[("a".into(), shard)], 50, 4).await;
    agent.run_once(&["take"]).await.unwrap();
    let windows = agent.windows("take").await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let database = client(&uri).await.database(&name);
        let generator = Arc::new(
            MongoWindowGenerator::new(
                vec![("a".into(), MongoWindowShard::new(&database))],
                "take",
                5,
            )
            .unwrap(),
        );
        for _ in 0..4 {
            let ids = Arc::clone(&generator);
            tasks.push(tokio::spawn(async move {
                let mut runs = Vec::new();
                loop {
                    // 5 divides the window size: no batch is cut short at a window's end, so
                    // none is lost to the exhaustion at the end (a failed batch is a gap).
                    match ids.next_ids(5).await {
                        Ok(batch) => runs.extend(batch.runs().iter().map(|r| (r.first, r.len))),
                        Err(Error::Exhausted(_)) => return runs,
                        Err(e) => panic!("{e}"),
                    }
                }
            }));
        }
    }
    let mut values = HashSet::new();
    for task in tasks {
        for (first, len) in task.await.unwrap() {
            for v in first..first + len {
                assert!(
                    windows.iter().any(|(_, w)| (w.start..w.end).contains(&v)),
                    "{v} outside every window"
                );
                assert!(values.insert(v), "{v} issued twice");
            }
        }
    }
    assert_eq!(values.len(), 200, "every value of the 4 windows, once");
}

/// Two agents at once (each with its own clients), again and again: never an overlapping window.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_agents_at_once_never_create_overlapping_windows() {
    let Some(uri) = uri() else { return };
    let shards = shards(&uri, "wagents").await;
    let first = Arc::new(agent(&shards, 10, 1).await);
    for round in 1..=12u64 {
        // The second agent uses another window size: claims must still chain.
        let second = agent(&shards, 7, round).await;
        let first = Arc::clone(&first);
        let a = tokio::spawn(async move { first.run_once(&["agents"]).await });
        let b = tokio::spawn(async move { second.run_once(&["agents"]).await });
        a.await.unwrap().unwrap();
        b.await.unwrap().unwrap();
    }
    let windows = first.windows("agents").await.unwrap();
    assert!(windows.len() >= 12 * 3, "{}", windows.len());
    assert_disjoint(&windows);
}

/// A shard that does not answer stops the agent before it writes anything.
#[tokio::test]
async fn the_agent_refuses_to_run_with_a_shard_down() {
    let Some(uri) = uri() else { return };
    let shards = shards(&uri, "wdown").await;
    let down = mongodb::Client::with_uri_str(
        "mongodb://127.0.0.1:1/?directConnection=true&serverSelectionTimeoutMS=300",
    )
    .await
    .unwrap()
    .database("ids");
    let mut with_down = agent(&shards, 10, 1).await;
    let err = with_down
        .add_shard("zz-down", MongoWindowShard::new(&down))
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::ShardUnreachable { .. }), "{err}");

    // A shard that goes down after it was added.
    let relay = Relay::start(&uri).await;
    let mut with_going_down = agent(&shards[..1], 10, 1).await;
    let going_down = client(&relay.uri).await.database(&fresh("wdown_b"));
    with_going_down
        .add_shard("b", MongoWindowShard::new(&going_down))
        .await
        .unwrap();
    relay.stop().await;
    let err = with_going_down.run_once(&["down"]).await.unwrap_err();
    assert!(
        matches!(&err, AgentError::ShardUnreachable { shard, .. } if shard == "b"),
        "{err}"
    );
    // Nothing written: no claim (a window is opened only after its claims, so an empty
    // window list alone would prove nothing).
    let (label, up) = &shards[0];
    assert_eq!(up.high_water("down").await.unwrap(), 0, "claims on {label}");
    assert!(
        up.windows("down").await.unwrap().is_empty(),
        "windows on {label}"
    );
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

/// A window document with its start after its end is an error naming it, never an id, and is not
/// touched: one whose end was moved below its start used to read as "no open window", and one
/// whose start was moved past its end had its values taken (lost) on every call.
#[tokio::test]
async fn a_window_document_with_start_after_end_is_an_error_naming_it() {
    let Some(uri) = uri() else { return };
    let database = client(&uri).await.database(&fresh("wstart_after_end"));
    let shard = MongoWindowShard::new(&database);
    let windows = database.collection::<bson::Document>("gdid_windows");
    for (sequence, stage) in [
        (
            "start-past-end",
            doc! { "start": { "$add": ["$end", 100_i64] } },
        ),
        (
            "end-below-start",
            doc! { "end": { "$add": ["$start", 5_i64] }, "start": { "$add": ["$start", 50_i64] } },
        ),
    ] {
        let agent = agent(&[("a".into(), shard.clone())], 100, 1).await;
        agent.run_once(&[sequence]).await.unwrap();
        let shards = || vec![("a".to_owned(), shard.clone())];
        MongoWindowGenerator::new(shards(), sequence, 10)
            .unwrap()
            .next_id()
            .await
            .unwrap();
        windows
            .update_one(doc! { "sequence": sequence }, vec![doc! { "$set": stage }])
            .await
            .unwrap();
        let before = windows
            .find_one(doc! { "sequence": sequence })
            .await
            .unwrap();
        let ids = MongoWindowGenerator::new(shards(), sequence, 10).unwrap();
        for _ in 0..3 {
            let err = ids.next_id().await.unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(err, gdid_core::generator::Error::Corrupt(_)),
                "{sequence}: {message}"
            );
            assert!(
                message.contains("corrupt document")
                    && message.contains(&format!("{sequence}:"))
                    && message.contains("start is after end"),
                "{sequence}: {message}"
            );
        }
        let after = windows
            .find_one(doc! { "sequence": sequence })
            .await
            .unwrap();
        assert_eq!(after, before, "{sequence}: the corrupt window was updated");
    }
}

/// The same server under another URL (`localhost` for `127.0.0.1`).
fn respelled(uri: &str) -> String {
    uri.replacen("127.0.0.1", "localhost", 1)
}

/// An agent over the databases `names`, each reached through a client of its own on `uri` and
/// labelled by URI and name (as `gdid agent` labels a store by its URL).
async fn agent_over(
    uri: &str,
    names: &[String],
    window_size: u64,
    min_open: u64,
) -> MongoWindowAgent {
    let mut agent = MongoWindowAgent::new(window_size, min_open).unwrap();
    for name in names {
        let database = client(uri).await.database(name);
        let label = format!("{uri} {name}");
        agent
            .add_shard(&label, MongoWindowShard::new(&database))
            .await
            .unwrap();
    }
    agent
}

/// Two agents given the same two databases in opposite orders, under other URIs and with other
/// window sizes, racing round after round: they used to claim in two orders (labels sorted),
/// which can open overlapping windows or make both lose forever. Now no `Contended`, no error,
/// no two windows overlap, and the first window starts at 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agents_given_the_shards_in_opposite_orders_and_spellings_never_overlap() {
    let Some(uri) = uri() else { return };
    let prefix = fresh("worders");
    let names = [format!("{prefix}_x"), format!("{prefix}_y")];
    let reversed = [names[1].clone(), names[0].clone()];
    let other = respelled(&uri);
    let rounds = 12;
    for round in 1..=rounds {
        let p = agent_over(&uri, &names, 7, round).await;
        let q = agent_over(&other, &reversed, 13, round).await;
        let runs =
            [p, q].map(|agent| tokio::spawn(async move { agent.run_once(&["orders"]).await }));
        for run in runs {
            let report = run.await.unwrap();
            assert!(report.is_ok(), "round {round}: {}", report.unwrap_err());
        }
    }
    let windows = agent_over(&uri, &names, 7, 1)
        .await
        .windows("orders")
        .await
        .unwrap();
    assert!(windows.len() as u64 >= rounds * 2, "{}", windows.len());
    assert_disjoint(&windows);
    let first = windows.iter().map(|(_, w)| w.start).min();
    assert_eq!(first, Some(1), "no window holds 0");
}

/// One database given twice, under two URIs, is refused: it would take claims twice, in an order
/// no other agent shares.
#[tokio::test]
async fn one_database_under_two_uris_is_refused() {
    let Some(uri) = uri() else { return };
    let name = fresh("wtwice");
    let mut agent = agent_over(&uri, std::slice::from_ref(&name), 10, 1).await;
    let again = client(&respelled(&uri)).await.database(&name);
    let err = agent
        .add_shard("again", MongoWindowShard::new(&again))
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::Config(_)), "{err}");
    assert!(err.to_string().contains("are one store"), "{err}");
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
