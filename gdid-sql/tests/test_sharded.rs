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

/// Reopening a sequence with another layout is refused, and nothing is written: ranges of another
/// size (they would overlap), fewer ranges, and more ranges of the same size (a layout is fixed
/// by its first creator: a range beyond it is corrupt).
#[tokio::test]
async fn another_layout_for_the_same_sequence_is_refused() {
    for (dialect, url) in urls() {
        let sequence = fresh_scope("layout");
        let store = SqlStore::connect(&url).await.unwrap();
        let open =
            |layout| SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::RoundRobin);
        let three = RangeLayout::new(1, 5, 3).unwrap();
        let first = open(three).await.unwrap();
        assert_eq!(first.next_id().await.unwrap(), 1, "{dialect}");
        for other in [
            RangeLayout::new(1, 6, 4).unwrap(),
            RangeLayout::new(1, 5, 2).unwrap(),
            RangeLayout::new(1, 5, 4).unwrap(),
        ] {
            let err = open(other).await.unwrap_err();
            assert!(
                matches!(&err, SetupError::Layout { reason, .. } if reason.contains("refused")),
                "{dialect}: {err}"
            );
        }
        // The refused layouts wrote nothing: the rows are the original's, and it still opens.
        let mut expected = rows_of(three);
        expected[0].1 = 2;
        assert_eq!(stored_rows(&store, &sequence).await, expected, "{dialect}");
        let again = open(three).await.unwrap();
        let mut got: Vec<u64> = again.next_ids(14).await.unwrap().iter().collect();
        got.sort_unstable();
        assert_eq!(got, (2..=15).collect::<Vec<u64>>(), "{dialect}");
    }
}

/// A sequence whose rows were written before layouts were recorded (no `gdid_range_layouts`
/// row) opens with the layout its rows fit, which is then recorded; another is refused.
#[tokio::test]
async fn rows_without_a_layout_record_are_checked_then_recorded() {
    for (dialect, url) in urls() {
        let sequence = fresh_scope("legacy");
        let store = SqlStore::connect(&url).await.unwrap();
        let layout = RangeLayout::new(1, 5, 3).unwrap();
        SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::Random)
            .await
            .unwrap();
        execute(
            &store,
            format!("DELETE FROM gdid_range_layouts WHERE sequence_name = '{sequence}'"),
        )
        .await;
        execute(
            &store,
            format!("DELETE FROM gdid_ranges WHERE sequence_name = '{sequence}' AND shard = 2"),
        )
        .await;
        let other = RangeLayout::new(1, 6, 3).unwrap();
        let err = SqlShardedCounter::create(store.clone(), &sequence, other, Pick::Random)
            .await
            .unwrap_err();
        assert!(matches!(err, SetupError::Layout { .. }), "{dialect}: {err}");
        SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::Random)
            .await
            .unwrap();
        assert_eq!(
            stored_rows(&store, &sequence).await,
            rows_of(layout),
            "{dialect}"
        );
        let err = SqlShardedCounter::create(store.clone(), &sequence, other, Pick::Random)
            .await
            .unwrap_err();
        assert!(matches!(err, SetupError::Layout { .. }), "{dialect}: {err}");
    }
}

/// A row whose shard number is beyond the layout (or negative) is a typed error naming the row
/// and the field, never a panic and never an id: when a batch had to be split over the ranges,
/// the shard number used to index the used-up flags out of bounds.
#[tokio::test]
async fn a_shard_number_out_of_bounds_is_an_error_naming_the_row() {
    for (dialect, url) in urls() {
        let store = SqlStore::connect(&url).await.unwrap();
        for shard in [3_i64, 99, 2_147_483_647, -1] {
            let sequence = fresh_scope("shard_bounds");
            let layout = RangeLayout::new(1, 5, 3).unwrap();
            let ids = SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::RoundRobin)
                .await
                .unwrap();
            execute(
                &store,
                format!(
                    "UPDATE gdid_ranges SET next_value = max_value + 1 \
                     WHERE sequence_name = '{sequence}'"
                ),
            )
            .await;
            execute(
                &store,
                format!(
                    "INSERT INTO gdid_ranges (sequence_name, shard, next_value, max_value) \
                     VALUES ('{sequence}', {shard}, 1, 5)"
                ),
            )
            .await;
            for _ in 0..2 {
                let err = ids.next_id().await.unwrap_err();
                let message = err.to_string();
                assert!(
                    matches!(err, Error::Corrupt(_)),
                    "{dialect} {shard}: {message}"
                );
                assert!(
                    message.contains(&format!("sequence {sequence:?}, shard {shard}"))
                        && message.contains(&format!("field shard is {shard}")),
                    "{dialect} {shard}: {message}"
                );
            }
        }
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

/// The rows of `sequence` in `gdid_ranges`: `(shard, next_value, max_value)`, in shard order.
async fn stored_rows(store: &SqlStore, sequence: &str) -> Vec<(i64, i64, i64)> {
    let select = sqlx::AssertSqlSafe(format!(
        "SELECT CAST(shard AS BIGINT), next_value, max_value FROM gdid_ranges \
         WHERE sequence_name = '{sequence}' ORDER BY shard"
    ));
    let select = if store.dialect() == gdid_sql::Dialect::MySql {
        sqlx::AssertSqlSafe(select.0.replace("AS BIGINT", "AS SIGNED"))
    } else {
        select
    };
    gdid_sql::with_pool!(store, pool => sqlx::query_as(select).fetch_all(pool).await).unwrap()
}

/// The rows a fresh `layout` has: range k from its first value to its last.
fn rows_of(layout: RangeLayout) -> Vec<(i64, i64, i64)> {
    (0..layout.ranges())
        .map(|k| {
            let range = layout.range(k);
            let value = |v: u64| i64::try_from(v).unwrap();
            (i64::from(k), value(range.start), value(range.end - 1))
        })
        .collect()
}

/// Tasks on three connections race to create 8 and 3 ranges of 12-digit ids (three tasks each)
/// on one fresh sequence, 20 times: afterwards the rows are exactly those of one layout, every
/// task that asked for it succeeded and every other one got [`SetupError::Layout`]. The creation
/// used to list, check, then insert row by row: both layouts passed the check, and the rows were
/// a mix of both, with overlapping ranges.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_layouts_leave_exactly_one() {
    let eight = RangeLayout::decimal_digits(12, 8).unwrap();
    let three = RangeLayout::decimal_digits(12, 3).unwrap();
    for (dialect, url) in urls() {
        let mut stores = Vec::new();
        for _ in 0..3 {
            stores.push(SqlStore::connect(&url).await.unwrap());
        }
        for round in 0..20 {
            let sequence = fresh_scope("race");
            let tasks: Vec<_> = (0..6)
                .map(|task| {
                    let layout = if task % 2 == 0 { eight } else { three };
                    let store = stores[task % 3].clone();
                    let sequence = sequence.clone();
                    tokio::spawn(async move {
                        let created =
                            SqlShardedCounter::create(store, &sequence, layout, Pick::Random).await;
                        (layout, created.map(drop))
                    })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await.unwrap());
            }
            let rows = stored_rows(&stores[0], &sequence).await;
            let winner = [eight, three]
                .into_iter()
                .find(|layout| rows == rows_of(*layout))
                .unwrap_or_else(|| panic!("{dialect} round {round}: rows of no layout: {rows:?}"));
            for (layout, result) in results {
                if layout == winner {
                    assert!(result.is_ok(), "{dialect} round {round}: {result:?}");
                } else {
                    assert!(
                        matches!(result, Err(SetupError::Layout { .. })),
                        "{dialect} round {round}: {} ranges created beside {}: {result:?}",
                        layout.ranges(),
                        winner.ranges()
                    );
                }
            }
        }
    }
}
