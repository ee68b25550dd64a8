//! What is MongoDB's own about authority numbers, on the server of `GDID_MONGODB_URI`: the number
//! is checked against the collection's record by `check_number` (and `connect`), and one above 15
//! is refused before anything is sent. That a counter collection is one authority (its number
//! recorded on first use, another refused before any block, a collection of before the record
//! keeping the number its counters use) is the conformance suite's (`tests/conformance.rs`).

mod common;

use common::{database, fresh};
use gdid_engine::backend::numbering::NumberConflict;
use gdid_engine::{Authority, AuthorityError};
use gdid_mongo::MongoAuthority;

/// `check_number` says whether the authority's number is the collection's, without reserving.
#[tokio::test]
async fn check_number_says_whether_the_number_is_the_collections() {
    let Some(db) = database().await else { return };
    let name = fresh("check_number");
    let first = MongoAuthority::open(&db, &name).await.unwrap();
    first.allocate("s", "q", 10).await.unwrap();
    let other = MongoAuthority::new(&db, &name, 2).unwrap();
    let refused = other.check_number().await.unwrap_err();
    assert!(
        matches!(
            refused,
            AuthorityError::Number(NumberConflict::Recorded {
                recorded: 1,
                asked: 2,
                ..
            })
        ),
        "{refused:?}"
    );
    MongoAuthority::new(&db, &name, 1)
        .unwrap()
        .check_number()
        .await
        .unwrap();
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

/// `connect` checks the number at once: a collection recorded as another authority is refused
/// before anything is reserved, and the same number is accepted.
#[tokio::test]
async fn connect_refuses_a_number_the_collection_has_recorded_otherwise() {
    let Some(db) = database().await else { return };
    let name = fresh("connect_number");
    MongoAuthority::connect(&db, &name, 3).await.unwrap();
    let err = MongoAuthority::connect(&db, &name, 4).await.unwrap_err();
    assert!(
        matches!(err, gdid_mongo::Error::Authority(AuthorityError::Number(_))),
        "{err}"
    );
    MongoAuthority::connect(&db, &name, 3).await.unwrap();
    assert!(matches!(
        MongoAuthority::connect(&db, &name, 16).await,
        Err(gdid_mongo::Error::AuthorityNumber(16))
    ));
}
