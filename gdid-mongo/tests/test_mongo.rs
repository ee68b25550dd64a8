//! What is MongoDB's own, against the server of `GDID_MONGODB_URI` (the project's test server,
//! or a genuine MongoDB): duplicate keys, `Gdid` `_id`s in BSON, `ObjectIdGenerator` and the proxy
//! collection. The behaviours every store shares (authorities, counters, sharded counters,
//! windows) are the conformance suite's (`tests/conformance.rs`). Without the variable the tests
//! say they are skipped; with `CI=true` that is a failure.

mod common;

use std::collections::HashSet;

use bson::spec::BinarySubtype;
use bson::{Bson, Document, doc};
use common::{database, fresh};
use gdid_core::Gdid;
use gdid_engine::IdGenerator;
use gdid_mongo::{
    ClaimError, ObjectIdGenerator, ProxyCollection, ensure_unique_index, is_duplicate_key,
};
use mongodb::Client;
use serde::{Deserialize, Serialize};

#[tokio::test]
async fn duplicate_keys_are_a_typed_case() {
    let Some(db) = database().await else { return };
    let accounts = db.collection::<Document>(&fresh("accounts"));
    ensure_unique_index(&accounts, "number").await.unwrap();
    accounts.insert_one(doc! { "number": 42 }).await.unwrap();
    let err = accounts
        .insert_one(doc! { "number": 42 })
        .await
        .unwrap_err();
    assert!(is_duplicate_key(&err), "{err}");
    let err = accounts
        .insert_many([doc! { "number": 7 }, doc! { "number": 42 }])
        .await
        .unwrap_err();
    assert!(is_duplicate_key(&err), "{err}");
    // Another error (no server answers) is not taken for a duplicate key.
    let nowhere = Client::with_uri_str(
        "mongodb://127.0.0.1:1/?directConnection=true&serverSelectionTimeoutMS=300",
    )
    .await
    .unwrap();
    let err = nowhere
        .database(db.name())
        .collection::<Document>(accounts.name())
        .insert_one(doc! { "number": 42 })
        .await
        .unwrap_err();
    assert!(!is_duplicate_key(&err), "{err}");
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Order {
    #[serde(rename = "_id", with = "gdid_core::bson::binary")]
    id: Gdid,
    total_cents: i64,
}

/// A domain type with a `Gdid` `_id`: inserted, found by id, sorted by id in `Ord` order, and
/// stored as Binary subtype 0x80.
#[tokio::test]
async fn a_gdid_id_round_trips_and_sorts_in_ord_order() {
    let Some(db) = database().await else { return };
    let orders = db.collection::<Order>(&fresh("orders"));
    let mut ids: Vec<Gdid> = (0..200u64)
        .map(|i| {
            let era = u32::try_from(i % 3).unwrap();
            let authority = u8::try_from(i % 16).unwrap();
            Gdid::from_parts(era, authority, (i * 7_919) % 1_000 + (i % 5) * (1 << 40)).unwrap()
        })
        .collect();
    ids.sort_by_key(|id| id.to_bytes()[11]); // insert in a scrambled order
    ids.dedup();
    let docs: Vec<Order> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| Order {
            id: *id,
            total_cents: i64::try_from(n).unwrap(),
        })
        .collect();
    orders.insert_many(&docs).await.unwrap();
    let probe = &docs[docs.len() / 2];
    let found = orders
        .find_one(doc! { "_id": Bson::from(probe.id) })
        .await
        .unwrap();
    assert_eq!(found.as_ref(), Some(probe));
    let mut cursor = orders.find(doc! {}).sort(doc! { "_id": 1 }).await.unwrap();
    let mut read = Vec::new();
    while cursor.advance().await.unwrap() {
        read.push(cursor.deserialize_current().unwrap().id);
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(read, sorted, "sorting on _id must be Gdid order");
    let raw = db
        .collection::<Document>(orders.name())
        .find_one(doc! {})
        .await
        .unwrap()
        .unwrap();
    let Some(Bson::Binary(binary)) = raw.get("_id") else {
        panic!("_id is not a Binary: {raw}")
    };
    assert_eq!(binary.subtype, BinarySubtype::UserDefined(0x80));
}

/// 1,000 object ids in one batch, all distinct (no server needed).
#[tokio::test]
async fn object_ids_are_unique() {
    let oids = ObjectIdGenerator.next_ids(1_000).await.unwrap();
    assert_eq!(oids.iter().collect::<HashSet<_>>().len(), 1_000);
}

/// The proxy collection: of 8 writers racing for one id exactly one writes its document; a write
/// the server rejects releases the claim, so the id can be used again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_proxy_collection_claim_lets_one_writer_through() {
    let Some(db) = database().await else { return };
    let proxy = ProxyCollection::new(&db, &fresh("proxy"));
    let target: mongodb::Collection<Document> = db.collection(&fresh("proxied"));
    let tasks: Vec<_> = (0..8)
        .map(|writer| {
            let (proxy, target) = (proxy.clone(), target.clone());
            tokio::spawn(async move {
                let document = doc! { "_id": 42_i64, "writer": writer };
                proxy
                    .insert_claimed(&target, Bson::Int64(42), &document)
                    .await
            })
        })
        .collect();
    let mut stored = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => stored += 1,
            Err(e) => assert!(e.is_taken(), "{e}"),
        }
    }
    assert_eq!(stored, 1);
    assert_eq!(target.count_documents(doc! {}).await.unwrap(), 1);

    // The server rejects the document (a duplicate on another unique index): the claim of 7 is
    // released and 7 can be claimed again.
    ensure_unique_index(&target, "email").await.unwrap();
    target
        .insert_one(doc! { "_id": 1_i64, "email": "a@example.com" })
        .await
        .unwrap();
    let rejected = doc! { "_id": 7_i64, "email": "a@example.com" };
    let err = proxy
        .insert_claimed(&target, Bson::Int64(7), &rejected)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClaimError::Write { released: true, .. }),
        "{err}"
    );
    proxy.claim(7_i64).await.unwrap();
    assert!(proxy.claim(7_i64).await.unwrap_err().is_taken());
}
