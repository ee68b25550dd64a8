//! Counter documents an authority did not write as they are (as gdid-sql's test_eras and
//! test_siblings):
//! - a document whose era is past the last one (`u32::MAX`) is exhausted, whatever the era holds:
//!   at `i64::MAX` the rollover must not overflow (`$add` would make the era a double), and the
//!   document is left as it is;
//! - the one-at-a-time counter's document (key 0) starts after the sequence's other documents (a
//!   counter made before it was keyed 0 handed out values from an authority's document): a
//!   corrupt sibling says nothing about how far it went, so the counter refuses to start, naming
//!   it and its field, and never starts below the values it handed out.

mod common;

use bson::doc;
use gdid_engine::{
    Authority, AuthorityError, Error, IdGenerator, OneAtATime, backend::STORED_COUNTER_MAX,
};
use gdid_mongo::MongoAuthority;

/// Authority 1 on a fresh collection, and a fresh scope; `None` when no server is configured.
async fn fresh_authority(name: &str) -> Option<(MongoAuthority, String)> {
    let database = common::database().await?;
    let authority = MongoAuthority::new(&database, &common::fresh(name), 1).unwrap();
    Some((authority, common::fresh(name)))
}

/// Sets `fields` of the counter document `id` behind the authority's back.
async fn set(authority: &MongoAuthority, id: &str, fields: bson::Document) {
    let updated = authority
        .collection()
        .update_one(doc! { "_id": id }, doc! { "$set": fields })
        .await
        .unwrap();
    assert_eq!(updated.modified_count, 1, "{id}");
}

#[tokio::test]
async fn an_era_past_the_last_is_exhausted_even_at_the_largest_stored_integer() {
    let Some((authority, scope)) = fresh_authority("eras").await else {
        return;
    };
    let id = authority.counter_id(&scope, "ids");
    for (era, next) in [
        (i64::MAX, STORED_COUNTER_MAX + 1), // the next block rolls the era over
        (i64::MAX, 1),
        (i64::from(u32::MAX) + 1, STORED_COUNTER_MAX + 1),
    ] {
        authority.allocate(&scope, "ids", 1).await.unwrap();
        set(&authority, &id, doc! { "era": era, "next": next }).await;
        for _ in 0..2 {
            match authority.allocate(&scope, "ids", 1).await {
                Err(AuthorityError::Exhausted) => {}
                other => panic!("era {era}, next {next} gave {other:?}"),
            }
        }
        let stored = authority
            .collection()
            .find_one(doc! { "_id": &id })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.get("era"), Some(&bson::Bson::Int64(era)), "{stored}");
        assert_eq!(
            stored.get("next"),
            Some(&bson::Bson::Int64(next)),
            "{stored}"
        );
        set(&authority, &id, doc! { "era": 0_i64, "next": 1_i64 }).await;
    }
}

#[tokio::test]
async fn a_corrupt_sibling_document_is_named_not_skipped_when_the_counter_is_created() {
    let Some((authority, scope)) = fresh_authority("siblings").await else {
        return;
    };
    // A counter of before the key 0 handed out 1 to 50 from the authority's document…
    authority.allocate(&scope, "legacy", 50).await.unwrap();
    // …another authority's document of the sequence is at 10…
    let other = doc! {
        "_id": format!("2:{scope}:legacy"), "authority": 2, "scope": &scope,
        "sequence": "legacy", "era": 0_i64, "next": 10_i64,
    };
    authority.collection().insert_one(other).await.unwrap();
    // …and the authority's document is corrupted.
    let id = authority.counter_id(&scope, "legacy");
    set(&authority, &id, doc! { "next": -1_i64 }).await;
    let counter = OneAtATime::new(authority.clone(), &scope, "legacy");
    match counter.next_id().await {
        Err(Error::Corrupt(message)) => assert!(
            message.contains(&format!("{id:?}")) && message.contains("\"next\""),
            "{message}"
        ),
        other => panic!("a corrupt sibling document gave {other:?}"),
    }
}
