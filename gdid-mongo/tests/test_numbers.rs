//! A counter collection is one authority (hole 1 of the uniqueness issue), on the server of
//! `GDID_MONGODB_URI`: the number is recorded in the collection on first use, another number is
//! refused before any block, and a collection of before the record keeps the number its counter
//! documents use.

mod common;

use bson::{Document, doc};
use common::{database, fresh};
use gdid_core::generator::numbering::NumberConflict;
use gdid_core::generator::{Authority, AuthorityError, IdGenerator};
use gdid_mongo::{MongoAuthority, MongoCounter};

#[tokio::test]
async fn authority_numbers_belong_to_the_collection_not_to_the_caller() {
    let Some(db) = database().await else { return };
    let name = fresh("numbers");
    let first = MongoAuthority::open(&db, &name).await.unwrap();
    assert_eq!(first.number(), 1, "a fresh collection is authority 1");
    assert_eq!(first.allocate("s", "q", 10).await.unwrap().authority(), 1);
    assert_eq!(MongoAuthority::open(&db, &name).await.unwrap().number(), 1);

    let other = MongoAuthority::new(&db, &name, 2).unwrap();
    for _ in 0..2 {
        let refused = other.allocate("s", "q", 10).await.unwrap_err();
        assert!(
            matches!(
                refused,
                AuthorityError::Number(NumberConflict::Recorded {
                    recorded: 1,
                    asked: 2,
                    ..
                })
            ),
            "{refused}"
        );
    }
    let counters = db.collection::<Document>(&name);
    let of_two = counters
        .count_documents(doc! { "authority": 2 })
        .await
        .unwrap();
    assert_eq!(of_two, 0, "authority 2 reserved nothing");
    assert!(other.check_number().await.is_err());
    MongoAuthority::new(&db, &name, 1)
        .unwrap()
        .check_number()
        .await
        .unwrap();

    // A collection of before the record: its counter documents say which authority it was.
    counters
        .delete_one(doc! { "_id": "authority" })
        .await
        .unwrap();
    counters
        .update_many(doc! {}, doc! { "$set": { "authority": 6 } })
        .await
        .unwrap();
    let old = MongoAuthority::open(&db, &name).await.unwrap();
    assert_eq!(old.number(), 6, "the number its counters use");
}

/// The one-at-a-time counter is the collection's, whatever the number of the authority it is
/// made from.
#[tokio::test]
async fn the_one_at_a_time_counter_does_not_depend_on_the_authority_number() {
    let Some(db) = database().await else { return };
    let name = fresh("counter_key");
    let one = MongoCounter::new(MongoAuthority::new(&db, &name, 1).unwrap(), "s", "n");
    assert_eq!(one.next_id().await.unwrap(), 1);
    let three = MongoCounter::new(MongoAuthority::new(&db, &name, 3).unwrap(), "s", "n");
    assert_eq!(three.next_id().await.unwrap(), 2);

    // A counter of before the key 0, made from authority 1, that handed out 1 to 50: it goes on
    // at 51, never at 1.
    db.collection::<Document>(&name)
        .insert_one(doc! {
            "_id": "1:s:legacy", "authority": 1, "scope": "s", "sequence": "legacy",
            "era": 0_i64, "next": 51_i64,
        })
        .await
        .unwrap();
    let legacy = MongoCounter::new(MongoAuthority::new(&db, &name, 1).unwrap(), "s", "legacy");
    assert_eq!(legacy.next_id().await.unwrap(), 51);
}

/// An authority number above 15 is refused with a typed error naming the number, by both
/// constructors, before anything is sent (no server needed: the client connects lazily).
#[tokio::test]
async fn an_authority_number_above_15_is_a_typed_error() {
    let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:1")
        .await
        .unwrap();
    let db = client.database("gdid_never_used");
    let error = MongoAuthority::new(&db, "counters", 16).unwrap_err();
    assert!(
        matches!(error, gdid_mongo::Error::AuthorityNumber(16)),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "authority number 16 is above 15");
    let error = MongoAuthority::with_write_concern(
        &db,
        "counters",
        255,
        mongodb::options::WriteConcern::majority(),
    )
    .unwrap_err();
    assert!(
        matches!(error, gdid_mongo::Error::AuthorityNumber(255)),
        "{error:?}"
    );
    assert!(MongoAuthority::new(&db, "counters", 15).is_ok());
}
