//! What is MongoDB's own about `MongoShardedCounter`, against the server of `GDID_MONGODB_URI`:
//! the layout document, and range numbers only BSON can hold. The behaviours every store shares
//! (ranges, batches, layouts refused or raced, corrupt ranges) are the conformance suite's
//! (`tests/conformance.rs`).

mod common;

use bson::{Bson, Document, doc};
use common::{database, fresh};
use gdid_engine::{ErrorDetail, IdGenerator};
use gdid_mongo::{MongoShardedCounter, Pick, RangeLayout};

/// The layout document records the first layout, and is not a range: listing the ranges by
/// `sequence` does not see it.
#[tokio::test]
async fn the_layout_document_records_the_first_layout() {
    let Some(db) = database().await else { return };
    let collection = fresh("ranges_layout");
    let three = RangeLayout::new(1, 5, 3).unwrap();
    let ids = MongoShardedCounter::create(&db, &collection, "seq", three, Pick::Random)
        .await
        .unwrap();
    let mut got: Vec<u64> = ids.next_ids(15).await.unwrap().iter().collect();
    got.sort_unstable();
    assert_eq!(got, (1..=15).collect::<Vec<u64>>());
    let documents = db.collection::<Document>(&collection);
    let layout_document = documents
        .find_one(doc! { "_id": "seq:layout" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        layout_document,
        doc! { "_id": "seq:layout", "base": 1_i64, "size": 5_i64, "ranges": 3_i64 }
    );
    let ranges = documents
        .count_documents(doc! { "sequence": "seq" })
        .await
        .unwrap();
    assert_eq!(ranges, 3);
}

/// Range numbers beyond what a SQL column holds (at and above `u32::MAX`), and a range document
/// whose number is not the one its `_id` says, are [`ErrorDetail::Corrupt`] naming the document and
/// the field, never a panic and never an id (the suite has the others).
#[tokio::test]
async fn a_range_number_only_bson_holds_is_an_error_naming_the_document() {
    let Some(db) = database().await else { return };
    let collection = fresh("ranges_bounds");
    let ranges = db.collection::<Document>(&collection);
    for (case, id, range) in [
        ("top", "4294967295", 4_294_967_295_i64),
        ("above-u32", "4294967296", 4_294_967_296),
        ("other-id", "1-copy", 99),
    ] {
        let sequence = format!("{case}-{}", fresh("s"));
        // Ranges of 2^33 values: range 4294967295 would start past u64::MAX.
        let layout = RangeLayout::new(0, 1 << 33, 3).unwrap();
        let ids =
            MongoShardedCounter::create(&db, &collection, &sequence, layout, Pick::RoundRobin)
                .await
                .unwrap();
        ranges
            .update_many(
                doc! { "sequence": &sequence },
                vec![doc! { "$set": { "next": { "$add": ["$max", 1_i64] } } }],
            )
            .await
            .unwrap();
        let document = doc! {
            "_id": format!("{sequence}:{id}"), "sequence": &sequence, "range": Bson::Int64(range),
            "next": 1_i64, "max": 5_i64,
        };
        ranges.insert_one(document).await.unwrap();
        for _ in 0..2 {
            let err = ids.next_id().await.unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(err.detail(), ErrorDetail::Corrupt(_)),
                "{case}: {message}"
            );
            assert!(
                message.contains(&format!("\"{sequence}:{id}\""))
                    && message.contains(&format!("field \"range\" is {range}")),
                "{case}: {message}"
            );
        }
    }
}
