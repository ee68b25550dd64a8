//! `MongoShardedCounter`'s layouts against the server of `GDID_MONGODB_URI`: created once,
//! atomically, whatever the race; a stored range number out of bounds is a typed error.

mod common;

use bson::{Bson, Document, doc};
use common::{database, fresh};
use gdid_core::generator::{Error, IdGenerator};
use gdid_mongo::{MongoShardedCounter, Pick, RangeLayout};
use mongodb::{Client, Database};

/// The range documents of `sequence`: `(range, next, max)` in range order.
async fn stored_ranges(db: &Database, collection: &str, sequence: &str) -> Vec<(i64, i64, i64)> {
    let mut cursor = db
        .collection::<Document>(collection)
        .find(doc! { "sequence": sequence })
        .sort(doc! { "range": 1 })
        .await
        .unwrap();
    let mut ranges = Vec::new();
    while cursor.advance().await.unwrap() {
        let document = cursor.deserialize_current().unwrap();
        let field = |name: &str| document.get_i64(name).unwrap();
        ranges.push((field("range"), field("next"), field("max")));
    }
    ranges
}

/// The range documents a fresh `layout` has: range k from its first value to its last.
fn ranges_of(layout: RangeLayout) -> Vec<(i64, i64, i64)> {
    (0..layout.ranges())
        .map(|k| {
            let range = layout.range(k);
            let value = |v: u64| i64::try_from(v).unwrap();
            (i64::from(k), value(range.start), value(range.end - 1))
        })
        .collect()
}

/// Tasks on three clients race to create 8 and 3 ranges of 12-digit ids (three tasks each) on
/// one fresh sequence, 20 times: afterwards the documents are exactly those of one layout, every
/// task that asked for it succeeded and every other one got [`Error::InvalidConfig`]. The
/// creation used to list, check, then insert document by document: both layouts passed the
/// check, and the documents were a mix of both, with overlapping ranges.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_layouts_leave_exactly_one() {
    let Some(uri) = common::uri() else { return };
    let eight = RangeLayout::decimal_digits(12, 8).unwrap();
    let three = RangeLayout::decimal_digits(12, 3).unwrap();
    let collection = fresh("ranges_race");
    let mut databases = Vec::new();
    for _ in 0..3 {
        let client = Client::with_uri_str(&uri).await.unwrap();
        databases.push(client.database("gdid_test"));
    }
    for round in 0..20 {
        let sequence = fresh("race");
        let tasks: Vec<_> = (0..6)
            .map(|task| {
                let layout = if task % 2 == 0 { eight } else { three };
                let db = databases[task % 3].clone();
                let (collection, sequence) = (collection.clone(), sequence.clone());
                tokio::spawn(async move {
                    let created = MongoShardedCounter::create(
                        &db,
                        &collection,
                        &sequence,
                        layout,
                        Pick::Random,
                    )
                    .await;
                    (layout, created.map(drop))
                })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap());
        }
        let ranges = stored_ranges(&databases[0], &collection, &sequence).await;
        let winner = [eight, three]
            .into_iter()
            .find(|layout| ranges == ranges_of(*layout))
            .unwrap_or_else(|| panic!("round {round}: ranges of no layout: {ranges:?}"));
        for (layout, result) in results {
            if layout == winner {
                assert!(result.is_ok(), "round {round}: {result:?}");
            } else {
                assert!(
                    matches!(result, Err(Error::InvalidConfig { .. })),
                    "round {round}: {} ranges created beside {}: {result:?}",
                    layout.ranges(),
                    winner.ranges()
                );
            }
        }
    }
}

/// The layout document is not a range: listing by `sequence` does not see it, a layout that
/// grows is refused (a layout is fixed by its first creator), and documents written before
/// layouts were recorded are checked, then recorded.
#[tokio::test]
async fn the_layout_document_fixes_the_layout() {
    let Some(db) = database().await else { return };
    let collection = fresh("ranges_layout");
    let three = RangeLayout::new(1, 5, 3).unwrap();
    let open = |layout| MongoShardedCounter::create(&db, &collection, "seq", layout, Pick::Random);
    let ids = open(three).await.unwrap();
    let mut got: Vec<u64> = ids.next_ids(15).await.unwrap().iter().collect();
    got.sort_unstable();
    assert_eq!(got, (1..=15).collect::<Vec<u64>>());
    for other in [
        RangeLayout::new(1, 5, 4).unwrap(),
        RangeLayout::new(1, 5, 2).unwrap(),
        RangeLayout::new(1, 6, 3).unwrap(),
    ] {
        let refused = open(other).await;
        assert!(
            matches!(&refused, Err(Error::InvalidConfig { reason }) if reason.contains("refused")),
            "{other}: {refused:?}"
        );
    }
    let layout_document = db
        .collection::<Document>(&collection)
        .find_one(doc! { "_id": "seq:layout" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        layout_document,
        doc! { "_id": "seq:layout", "base": 1_i64, "size": 5_i64, "ranges": 3_i64 }
    );

    // Documents without a layout document: the layout they fit is recorded, another refused.
    let legacy = fresh("legacy");
    let create =
        |layout| MongoShardedCounter::create(&db, &collection, &legacy, layout, Pick::Random);
    create(three).await.unwrap();
    db.collection::<Document>(&collection)
        .delete_one(doc! { "_id": format!("{legacy}:layout") })
        .await
        .unwrap();
    let other = RangeLayout::new(1, 6, 3).unwrap();
    assert!(matches!(
        create(other).await,
        Err(Error::InvalidConfig { .. })
    ));
    create(three).await.unwrap();
    assert!(matches!(
        create(other).await,
        Err(Error::InvalidConfig { .. })
    ));
}

/// A range document whose range number is beyond the layout, negative, or not the one its `_id`
/// says, is a typed error naming the document and the field, never a panic and never an id: when
/// a batch had to be split over the ranges, the number used to index the used-up flags out of
/// bounds (the take, by `_id`, found nothing) or compute a range past `u64::MAX`.
#[tokio::test]
async fn a_range_number_out_of_bounds_is_an_error_naming_the_document() {
    let Some(db) = database().await else { return };
    let collection = fresh("ranges_bounds");
    let ranges = db.collection::<Document>(&collection);
    for (case, id, range) in [
        ("beyond", "3", Bson::Int64(3)),
        ("far", "99", Bson::Int64(99)),
        ("top", "4294967295", Bson::Int64(4_294_967_295)),
        ("above-u32", "4294967296", Bson::Int64(4_294_967_296)),
        ("negative", "-1", Bson::Int64(-1)),
        ("other-id", "1-copy", Bson::Int64(99)),
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
            "_id": format!("{sequence}:{id}"), "sequence": &sequence, "range": range.clone(),
            "next": 1_i64, "max": 5_i64,
        };
        ranges.insert_one(document).await.unwrap();
        for _ in 0..2 {
            let err = ids.next_id().await.unwrap_err();
            let message = err.to_string();
            assert!(matches!(err, Error::Corrupt(_)), "{case}: {message}");
            assert!(
                message.contains(&format!("\"{sequence}:{id}\""))
                    && message.contains(&format!("field \"range\" is {range}")),
                "{case}: {message}"
            );
        }
    }
}
