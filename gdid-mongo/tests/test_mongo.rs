//! The MongoDB strategies against the server of `GDID_MONGODB_URI` (the project's test server,
//! or a genuine MongoDB): nothing here relies on a quirk of either. Without the variable the tests
//! say they are skipped; with `CI=true` that is a failure.

mod common;

use std::collections::HashSet;

use bson::spec::BinarySubtype;
use bson::{Bson, Document, doc};
use common::{database, fresh};
use gdid_core::generator::{Authority, AuthorityError, Block, BlockGenerator, IdGenerator};
use gdid_core::{COUNTER_MAX, Gdid};
use gdid_mongo::{
    ClaimError, MongoAuthority, MongoCounter, MongoShardedCounter, ObjectIdGenerator, Pick,
    ProxyCollection, RangeLayout, ensure_unique_index, is_duplicate_key,
};
use mongodb::Client;
use serde::{Deserialize, Serialize};

/// 2 clients × 4 tasks allocate blocks: they tile the counter exactly, and the stored counter is
/// exactly one past the last.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_blocks_are_disjoint_and_nothing_is_lost() {
    let Some(db) = database().await else { return };
    let collection = fresh("concurrent");
    let mut tasks = Vec::new();
    for client in 0..2u64 {
        let db = Client::with_uri_str(std::env::var("GDID_MONGODB_URI").unwrap())
            .await
            .unwrap()
            .database(db.name());
        let authority = MongoAuthority::new(&db, &collection, 2).unwrap();
        for task in 0..4u64 {
            let authority = authority.clone();
            tasks.push(tokio::spawn(async move {
                let mut blocks = Vec::new();
                for i in 0..25u64 {
                    let size = 1 + (client * 31 + task * 7 + i * 13) % 500;
                    blocks.push(authority.allocate("shop", "order", size).await.unwrap());
                }
                blocks
            }));
        }
    }
    let mut blocks: Vec<Block> = Vec::new();
    for task in tasks {
        blocks.extend(task.await.unwrap());
    }
    blocks.sort_by_key(|b| b.start());
    let mut expected = 1;
    for block in &blocks {
        assert_eq!(block.start(), expected, "gap or overlap at {block}");
        expected = block.end();
    }
    let authority = MongoAuthority::new(&db, &collection, 2).unwrap();
    let stored = authority
        .collection()
        .find_one(doc! { "_id": authority.counter_id("shop", "order") })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get_i64("next").unwrap(),
        i64::try_from(expected).unwrap()
    );
}

/// Many callers on a counter document that does not exist yet: all succeed, nothing overlaps.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_first_use_race_on_a_missing_counter_document() {
    let Some(db) = database().await else { return };
    let authority = MongoAuthority::new(&db, &fresh("first_use"), 1).unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let authority = authority.clone();
            tokio::spawn(async move { authority.allocate("s", "q", 10).await.unwrap() })
        })
        .collect();
    let mut starts = Vec::new();
    for task in tasks {
        starts.push(task.await.unwrap().start());
    }
    starts.sort_unstable();
    assert_eq!(starts, (0..16).map(|i| 1 + 10 * i).collect::<Vec<u64>>());
}

#[tokio::test]
async fn a_restart_never_repeats_and_the_era_rolls_over() {
    let Some(db) = database().await else { return };
    let collection = fresh("restart");
    let mut seen = HashSet::new();
    for _run in 0..3 {
        let ids = BlockGenerator::builder("app", "restart")
            .authority(MongoAuthority::new(&db, &collection, 1).unwrap())
            .build()
            .unwrap();
        for _ in 0..300 {
            assert!(seen.insert(ids.next_id().await.unwrap()));
        }
    }
    let authority = MongoAuthority::new(&db, &collection, 1).unwrap();
    authority
        .collection()
        .update_one(
            doc! { "_id": authority.counter_id("app", "restart") },
            doc! { "$set": { "era": 7_i64, "next": i64::try_from(COUNTER_MAX - 5).unwrap() } },
        )
        .await
        .unwrap();
    let last = authority.allocate("app", "restart", 6).await.unwrap();
    assert_eq!((last.era(), last.last().counter()), (7, COUNTER_MAX));
    let rolled = authority.allocate("app", "restart", 10).await.unwrap();
    assert_eq!((rolled.era(), rolled.start()), (8, 0));
}

/// Documents no authority writes give a typed error, never a block.
#[tokio::test]
async fn corrupt_counter_documents_are_typed_errors() {
    let Some(db) = database().await else { return };
    let authority = MongoAuthority::new(&db, &fresh("corrupt"), 1).unwrap();
    for (sequence, set) in [
        ("negative", doc! { "next": -40_i64 }),
        ("missing", doc! { "era": Bson::Null }),
    ] {
        authority.allocate("s", sequence, 1).await.unwrap();
        authority
            .collection()
            .update_one(
                doc! { "_id": authority.counter_id("s", sequence) },
                doc! { "$set": set },
            )
            .await
            .unwrap();
        let err = authority.allocate("s", sequence, 5).await.unwrap_err();
        assert!(
            matches!(err, AuthorityError::Corrupt(_)),
            "{sequence}: {err}"
        );
    }
    let err = authority.allocate("bad name", "q", 1).await.unwrap_err();
    assert!(matches!(err, AuthorityError::InvalidName(_)), "{err}");
}

/// A corrupt counter document is left as it is and named, field and all, however often it is
/// asked: the update used to move it toward valid-looking values (a counter of -1 became 0, then
/// 1, and id 1 was issued again), and the errors named neither the document nor, for a string,
/// the field.
#[tokio::test]
async fn a_corrupt_counter_document_stays_corrupt_and_names_its_field() {
    let Some(db) = database().await else { return };
    let authority = MongoAuthority::new(&db, &fresh("corrupt_again"), 1).unwrap();
    for (sequence, field, value) in [
        ("negative", "next", Bson::Int64(-1)),
        ("above-range", "next", Bson::Int64(1 << 62)),
        ("string", "next", Bson::String("abc".into())),
        ("double", "next", Bson::Double(5.5)),
        ("negative-era", "era", Bson::Int64(-1)),
    ] {
        authority.allocate("s", sequence, 1).await.unwrap();
        let id = authority.counter_id("s", sequence);
        authority
            .collection()
            .update_one(
                doc! { "_id": &id },
                doc! { "$set": { field: value.clone() } },
            )
            .await
            .unwrap();
        for _ in 0..3 {
            let err = authority.allocate("s", sequence, 1).await.unwrap_err();
            let message = err.to_string();
            assert!(matches!(err, AuthorityError::Corrupt(_)), "{message}");
            assert!(
                message.contains(&format!("{id:?}")) && message.contains(&format!("{field:?}")),
                "{sequence}: {message}"
            );
        }
        let stored = authority
            .collection()
            .find_one(doc! { "_id": &id })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.get(field), Some(&value), "{sequence}: moved");
    }
    authority.allocate("s", "unset", 1).await.unwrap();
    let id = authority.counter_id("s", "unset");
    authority
        .collection()
        .update_one(doc! { "_id": &id }, doc! { "$unset": { "next": "" } })
        .await
        .unwrap();
    let message = authority
        .allocate("s", "unset", 1)
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains("\"next\" is missing"), "{message}");
}

/// A corrupt range document is a typed error naming it and its field, never an id: a missing
/// `next` used to be created by `$inc` (id 0 issued again), a negative one moved up to the
/// range's first values, a string one failed with the server's bare "$add only supports numeric
/// or date types", and one beyond its end read as "exhausted".
#[tokio::test]
async fn a_corrupt_range_document_is_an_error_naming_it_never_an_id() {
    let Some(db) = database().await else { return };
    let collection = fresh("ranges_corrupt");
    let set = |value: Bson| doc! { "$set": { "next": value } };
    for (sequence, update) in [
        ("missing", doc! { "$unset": { "next": "" } }),
        ("negative", set(Bson::Int64(-1))),
        ("string", set(Bson::String("abc".into()))),
        ("beyond-end", set(Bson::Int64(1_010))),
    ] {
        let layout = RangeLayout::new(0, 1_000, 1).unwrap();
        let ids = MongoShardedCounter::create(&db, &collection, sequence, layout, Pick::Random)
            .await
            .unwrap();
        assert_eq!(ids.next_id().await.unwrap(), 0);
        let id = format!("{sequence}:0");
        db.collection::<Document>(&collection)
            .update_one(doc! { "_id": &id }, update)
            .await
            .unwrap();
        for _ in 0..3 {
            let err = ids.next_id().await.unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(err, gdid_core::generator::Error::Corrupt(_)),
                "{sequence}: {message}"
            );
            assert!(
                message.contains(&format!("{id:?}")) && message.contains("\"next\""),
                "{sequence}: {message}"
            );
        }
    }
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_one_at_a_time_counter_is_continuous_and_object_ids_unique() {
    let Some(db) = database().await else { return };
    let counter = MongoCounter::new(
        MongoAuthority::new(&db, &fresh("counter"), 0).unwrap(),
        "s",
        "n",
    );
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                for _ in 0..50 {
                    got.push(counter.next_id().await.unwrap());
                }
                got
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all.sort_unstable();
    assert_eq!(all, (1..=200).collect::<Vec<u64>>());
    let oids = ObjectIdGenerator.next_ids(1_000).await.unwrap();
    assert_eq!(oids.iter().collect::<HashSet<_>>().len(), 1_000);
}

/// 3 ranges of 5, random pick: the 15 values exactly once, used-up ranges skipped, then a typed
/// error; batches no single range can hold are split; 12-digit ids stay in their ranges.
#[tokio::test]
async fn sharded_counter_documents_skip_used_up_ranges_and_stay_in_bounds() {
    let Some(db) = database().await else { return };
    let collection = fresh("ranges");
    let small = MongoShardedCounter::create(
        &db,
        &collection,
        "small",
        RangeLayout::new(1, 5, 3).unwrap(),
        Pick::Random,
    )
    .await
    .unwrap();
    let mut got: Vec<u64> = small.next_ids(4).await.unwrap().iter().collect();
    for _ in 0..11 {
        got.push(small.next_id().await.unwrap());
    }
    got.sort_unstable();
    assert_eq!(got, (1..=15).collect::<Vec<u64>>());
    assert!(matches!(
        small.next_id().await,
        Err(gdid_core::generator::Error::Exhausted(_))
    ));

    let split = MongoShardedCounter::create(
        &db,
        &collection,
        "split",
        RangeLayout::new(100, 5, 3).unwrap(),
        Pick::RoundRobin,
    )
    .await
    .unwrap();
    split.next_ids(4).await.unwrap();
    let rest = split.next_ids(11).await.unwrap();
    assert!(rest.runs().len() >= 3, "{rest:?}");

    let layout = RangeLayout::decimal_digits(12, 4).unwrap();
    let digits = MongoShardedCounter::create(&db, &collection, "digits", layout, Pick::RoundRobin)
        .await
        .unwrap();
    for turn in 0..8u32 {
        let id = digits.next_id().await.unwrap();
        assert_eq!(id.to_string().len(), 12);
        assert!(layout.range(turn % 4).contains(&id), "{id}");
    }
    let refused = MongoShardedCounter::create(
        &db,
        &collection,
        "small",
        RangeLayout::new(1, 6, 3).unwrap(),
        Pick::Random,
    )
    .await;
    assert!(matches!(
        refused,
        Err(gdid_core::generator::Error::InvalidConfig { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_takers_of_sharded_counter_documents_never_share_an_id() {
    let Some(db) = database().await else { return };
    let collection = fresh("ranges_concurrent");
    let ids = std::sync::Arc::new(
        MongoShardedCounter::create(
            &db,
            &collection,
            "acct",
            RangeLayout::decimal_digits(12, 8).unwrap(),
            Pick::Random,
        )
        .await
        .unwrap(),
    );
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let ids = ids.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                for _ in 0..40 {
                    got.push(ids.next_id().await.unwrap());
                }
                got
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(seen.insert(id), "{id} issued twice");
        }
    }
    assert_eq!(seen.len(), 320);
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
