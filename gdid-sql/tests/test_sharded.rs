//! `SqlShardedCounter` on the real servers (see `common::urls`).

mod common;

use std::collections::HashSet;

use common::{execute, fresh_scope, urls};
use gdid_core::generator::{Error, IdGenerator};
use gdid_sql::{Error as SetupError, Pick, RangeLayout, SqlShardedCounter, SqlStore};

/// Ids of exactly 12 digits from 4 ranges, round robin: each id in the range of its turn.
#[tokio::test]
async fn twelve_digit_ids_stay_in_their_ranges() {
    for (dialect, url) in urls() {
        let store = SqlStore::connect(&url).await.unwrap();
        let layout = RangeLayout::decimal_digits(12, 4).unwrap();
        let ids =
            SqlShardedCounter::create(store, &fresh_scope("digits"), layout, Pick::RoundRobin)
                .await
                .unwrap();
        for turn in 0..8u32 {
            let id = ids.next_id().await.unwrap();
            assert_eq!(id.to_string().len(), 12, "{dialect}: {id}");
            assert!(
                layout.range(turn % 4).contains(&id),
                "{dialect}: {id} in turn {turn}"
            );
        }
    }
}

/// 3 ranges of 5 values, random pick: the 15 values come out exactly once, each from its range,
/// used-up ranges are skipped, and the 16th id is a typed error.
#[tokio::test]
async fn exhausted_ranges_are_skipped_until_all_are_used_up() {
    for (dialect, url) in urls() {
        let store = SqlStore::connect(&url).await.unwrap();
        let layout = RangeLayout::new(1, 5, 3).unwrap();
        let ids = SqlShardedCounter::create(store, &fresh_scope("exhaust"), layout, Pick::Random)
            .await
            .unwrap();
        let mut got = Vec::new();
        for _ in 0..15 {
            got.push(ids.next_id().await.unwrap());
        }
        got.sort_unstable();
        assert_eq!(got, (1..=15).collect::<Vec<u64>>(), "{dialect}");
        let err = ids.next_id().await.unwrap_err();
        assert!(matches!(err, Error::Exhausted(_)), "{dialect}: {err}");
    }
}

/// A batch no single range can hold is split over several ranges; nothing is issued twice.
#[tokio::test]
async fn batches_span_ranges_when_they_must() {
    for (dialect, url) in urls() {
        let store = SqlStore::connect(&url).await.unwrap();
        let layout = RangeLayout::new(100, 5, 3).unwrap();
        let ids = SqlShardedCounter::create(store, &fresh_scope("batch"), layout, Pick::RoundRobin)
            .await
            .unwrap();
        let first = ids.next_ids(4).await.unwrap();
        assert_eq!(first.runs().len(), 1, "{dialect}: 4 fit in one range");
        let rest = ids.next_ids(11).await.unwrap();
        assert!(rest.runs().len() >= 3, "{dialect}: {rest:?}");
        let mut all: Vec<u64> = first.iter().chain(rest.iter()).collect();
        all.sort_unstable();
        assert_eq!(all, (100..115).collect::<Vec<u64>>(), "{dialect}");
        for run in rest.runs() {
            let k = u32::try_from((run.first - 100) / 5).unwrap();
            assert!(
                run.first + run.len <= layout.range(k).end,
                "{dialect}: run past its range"
            );
        }
        assert!(
            matches!(ids.next_ids(1).await, Err(Error::Exhausted(_))),
            "{dialect}"
        );
    }
}

/// Two stores, 4 tasks each, taking ids at random from 8 ranges: all distinct.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_takers_never_get_the_same_id() {
    for (dialect, url) in urls() {
        let sequence = fresh_scope("concurrent");
        let layout = RangeLayout::decimal_digits(12, 8).unwrap();
        let mut tasks = Vec::new();
        for _store in 0..2 {
            let store = SqlStore::connect(&url).await.unwrap();
            let ids = std::sync::Arc::new(
                SqlShardedCounter::create(store, &sequence, layout, Pick::Random)
                    .await
                    .unwrap(),
            );
            for _ in 0..4 {
                let ids = ids.clone();
                tasks.push(tokio::spawn(async move {
                    let mut got = Vec::new();
                    for _ in 0..50 {
                        got.push(ids.next_id().await.unwrap());
                    }
                    got.extend(ids.next_ids(7).await.unwrap().iter());
                    got
                }));
            }
        }
        let mut seen = HashSet::new();
        for task in tasks {
            for id in task.await.unwrap() {
                assert!(seen.insert(id), "{dialect}: {id} issued twice");
            }
        }
        assert_eq!(seen.len(), 8 * 57, "{dialect}");
    }
}

/// Reopening a sequence with ranges of another size (they would overlap) or fewer ranges is
/// refused, and nothing is written; more ranges of the same size are added.
#[tokio::test]
async fn another_layout_for_the_same_sequence_is_refused() {
    for (dialect, url) in urls() {
        let sequence = fresh_scope("layout");
        let store = SqlStore::connect(&url).await.unwrap();
        let open =
            |layout| SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::RoundRobin);
        let three = open(RangeLayout::new(1, 5, 3).unwrap()).await.unwrap();
        assert_eq!(three.next_id().await.unwrap(), 1, "{dialect}");
        for other in [
            RangeLayout::new(1, 6, 4).unwrap(),
            RangeLayout::new(1, 5, 2).unwrap(),
        ] {
            let err = open(other).await.unwrap_err();
            assert!(matches!(err, SetupError::Layout { .. }), "{dialect}: {err}");
        }
        // The refused layouts wrote nothing: the original still opens, then grows by one range.
        open(RangeLayout::new(1, 5, 3).unwrap()).await.unwrap();
        let four = open(RangeLayout::new(1, 5, 4).unwrap()).await.unwrap();
        let mut got: Vec<u64> = four.next_ids(19).await.unwrap().iter().collect();
        got.sort_unstable();
        assert_eq!(got, (2..=20).collect::<Vec<u64>>(), "{dialect}");
    }
}

/// A corrupt range row is a typed error naming it and its field, never an id, however often it
/// is asked: a negative `next_value` used to be moved up to the range's first values (id 0 issued
/// again), and one beyond its end read as "exhausted".
#[tokio::test]
async fn a_corrupt_range_row_is_an_error_naming_it_never_an_id() {
    for (dialect, url) in urls() {
        let store = SqlStore::connect(&url).await.unwrap();
        let mut cases = vec![("negative", "-1"), ("beyond-end", "max_value + 10")];
        if dialect == "sqlite" {
            cases.push(("text", "'abc'"));
        }
        for (case, value) in cases {
            let sequence = fresh_scope(case);
            let layout = RangeLayout::new(0, 1_000, 1).unwrap();
            let ids = SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::Random)
                .await
                .unwrap();
            assert_eq!(ids.next_id().await.unwrap(), 0);
            execute(
                &store,
                format!(
                    "UPDATE gdid_ranges SET next_value = {value} \
                     WHERE sequence_name = '{sequence}'"
                ),
            )
            .await;
            for _ in 0..3 {
                let err = ids.next_id().await.unwrap_err();
                let message = err.to_string();
                assert!(
                    matches!(err, Error::Corrupt(_)),
                    "{dialect} {case}: {message}"
                );
                assert!(
                    message.contains(&format!("sequence {sequence:?}"))
                        && message.contains("next_value"),
                    "{dialect} {case}: {message}"
                );
            }
        }
    }
}
