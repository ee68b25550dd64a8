//! Sharded counters: fixed ranges, used-up ranges skipped, batches split, one layout per
//! sequence whatever the race, corrupt ranges named.

use std::collections::HashSet;
use std::sync::Arc;

use gdid_engine::{Error, ErrorDetail, IdGenerator, Pick, RangeLayout};

use super::{Ranges, Setup, assert_fails_naming, fresh};

/// The sharded counter of `sequence` with `layout`, created or opened.
async fn created<B: Ranges>(
    backend: &B,
    sequence: &str,
    layout: RangeLayout,
    pick: Pick,
) -> B::Counter {
    let created = backend.sharded(sequence, layout, pick).await;
    created.unwrap_or_else(|e| panic!("{}: {sequence} {layout}: {e:?}", backend.store()))
}

/// Whether `error` says the stored data cannot be right.
fn is_corrupt(error: &Error) -> bool {
    matches!(error.detail(), ErrorDetail::Corrupt(_))
}

/// The ranges a fresh `layout` has: range k from its first value to its last.
fn ranges_of(layout: RangeLayout) -> Vec<(i64, i64, i64)> {
    (0..layout.ranges())
        .map(|k| {
            let range = layout.range(k);
            let value = |v: u64| i64::try_from(v).unwrap();
            (i64::from(k), value(range.start), value(range.end - 1))
        })
        .collect()
}

/// Ids of exactly 12 digits from 4 ranges, round robin: each id in the range of its turn.
pub async fn twelve_digit_ids_stay_in_their_ranges<B: Ranges>(backend: &B) {
    let store = backend.store();
    let layout = RangeLayout::decimal_digits(12, 4).unwrap();
    let ids = created(backend, &fresh("digits"), layout, Pick::RoundRobin).await;
    for turn in 0..8u32 {
        let id = ids.next_id().await.unwrap();
        assert_eq!(id.to_string().len(), 12, "{store}: {id}");
        assert!(
            layout.range(turn % 4).contains(&id),
            "{store}: {id} in turn {turn}"
        );
    }
}

/// 3 ranges of 5 values, random pick: the 15 values come out exactly once (a batch of 4, then
/// one by one), used-up ranges are skipped, and the 16th id is [`ErrorDetail::Exhausted`].
pub async fn exhausted_ranges_are_skipped_until_all_are_used_up<B: Ranges>(backend: &B) {
    let store = backend.store();
    let layout = RangeLayout::new(1, 5, 3).unwrap();
    let ids = created(backend, &fresh("exhaust"), layout, Pick::Random).await;
    let mut got: Vec<u64> = ids.next_ids(4).await.unwrap().iter().collect();
    for _ in 0..11 {
        got.push(ids.next_id().await.unwrap());
    }
    got.sort_unstable();
    assert_eq!(got, (1..=15).collect::<Vec<u64>>(), "{store}");
    let err = ids.next_id().await.unwrap_err();
    assert!(
        matches!(err.detail(), ErrorDetail::Exhausted(_)),
        "{store}: {err}"
    );
}

/// A batch no single range can hold is split over several ranges, each run within its range;
/// nothing is issued twice, and once all is used up a batch is [`ErrorDetail::Exhausted`].
pub async fn batches_span_ranges_when_they_must<B: Ranges>(backend: &B) {
    let store = backend.store();
    let layout = RangeLayout::new(100, 5, 3).unwrap();
    let ids = created(backend, &fresh("batch"), layout, Pick::RoundRobin).await;
    let first = ids.next_ids(4).await.unwrap();
    assert_eq!(first.runs().len(), 1, "{store}: 4 fit in one range");
    let rest = ids.next_ids(11).await.unwrap();
    assert!(rest.runs().len() >= 3, "{store}: {rest:?}");
    let mut all: Vec<u64> = first.iter().chain(rest.iter()).collect();
    all.sort_unstable();
    assert_eq!(all, (100..115).collect::<Vec<u64>>(), "{store}");
    for run in rest.runs() {
        let k = u32::try_from((run.first - 100) / 5).unwrap();
        assert!(
            run.first + run.len <= layout.range(k).end,
            "{store}: run past its range"
        );
    }
    assert!(
        matches!(
            ids.next_ids(1).await.map_err(Error::into_detail),
            Err(ErrorDetail::Exhausted(_))
        ),
        "{store}"
    );
}

/// Two connections, 4 tasks each, taking ids and batches at random from 8 ranges: all distinct.
pub async fn concurrent_takers_never_get_the_same_id<B: Ranges>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("concurrent");
    let layout = RangeLayout::decimal_digits(12, 8).unwrap();
    let mut tasks = Vec::new();
    for _connection in 0..2 {
        let ids = Arc::new(
            backend
                .reconnect()
                .await
                .sharded(&sequence, layout, Pick::Random)
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
            assert!(seen.insert(id), "{store}: {id} issued twice");
        }
    }
    assert_eq!(seen.len(), 8 * 57, "{store}");
}

/// Reopening a sequence with another layout is refused ([`Setup::Layout`], in the same words on
/// every backend) and writes nothing:
/// ranges of another size (they would overlap), fewer ranges, and more ranges of the same size (a
/// layout is fixed by its first creator). The original still opens and goes on.
pub async fn another_layout_for_the_same_sequence_is_refused<B: Ranges>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("layout");
    let three = RangeLayout::new(1, 5, 3).unwrap();
    let first = created(backend, &sequence, three, Pick::RoundRobin).await;
    assert_eq!(first.next_id().await.unwrap(), 1, "{store}");
    for other in [
        RangeLayout::new(1, 6, 4).unwrap(),
        RangeLayout::new(1, 5, 2).unwrap(),
        RangeLayout::new(1, 5, 4).unwrap(),
        RangeLayout::new(1, 6, 3).unwrap(),
    ] {
        let refused = backend.sharded(&sequence, other, Pick::RoundRobin).await;
        let Err(Setup::Layout(message)) = &refused else {
            panic!("{store} {other}: {:?}", refused.map(drop));
        };
        // The same words on every backend, saying "range layout" once.
        assert_eq!(
            message,
            &format!(
                "invalid generator configuration: {other} refused as the range layout of \
                 {sequence:?}: the sequence was created with {three}, which is its layout for \
                 good; going on could repeat ids"
            ),
            "{store}"
        );
    }
    let mut expected = ranges_of(three);
    expected[0].1 = 2;
    assert_eq!(
        backend.stored_ranges(&sequence).await,
        expected,
        "{store}: the refused layouts wrote nothing"
    );
    let again = created(backend, &sequence, three, Pick::RoundRobin).await;
    let mut got: Vec<u64> = again.next_ids(14).await.unwrap().iter().collect();
    got.sort_unstable();
    assert_eq!(got, (2..=15).collect::<Vec<u64>>(), "{store}");
}

/// A sequence whose ranges were written before layouts were recorded (no layout record, and a
/// range missing) opens with the layout its ranges fit, which is then recorded with the missing
/// range; another layout is refused before and after.
pub async fn ranges_without_a_layout_record_are_checked_then_recorded<B: Ranges>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("legacy");
    let layout = RangeLayout::new(1, 5, 3).unwrap();
    created(backend, &sequence, layout, Pick::Random).await;
    backend.forget_layout(&sequence, 2).await;
    let other = RangeLayout::new(1, 6, 3).unwrap();
    let refused = backend.sharded(&sequence, other, Pick::Random).await;
    assert!(
        matches!(refused, Err(Setup::Layout(_))),
        "{store}: {:?}",
        refused.map(drop)
    );
    created(backend, &sequence, layout, Pick::Random).await;
    assert_eq!(
        backend.stored_ranges(&sequence).await,
        ranges_of(layout),
        "{store}"
    );
    let refused = backend.sharded(&sequence, other, Pick::Random).await;
    assert!(
        matches!(refused, Err(Setup::Layout(_))),
        "{store}: {:?}",
        refused.map(drop)
    );
}

/// A stored range whose number is beyond the layout (or negative) is [`ErrorDetail::Corrupt`]
/// naming it and the field, never a panic and never an id: when a batch had to be split over the
/// ranges, the number used to index the used-up flags out of bounds, or compute a range past
/// `u64::MAX` (ranges of 2^33 values here).
pub async fn a_range_number_out_of_bounds_is_an_error_naming_it<B: Ranges>(backend: &B) {
    let store = backend.store();
    for range in [3_i64, 99, 2_147_483_647, -1] {
        let sequence = fresh("range_bounds");
        let layout = RangeLayout::new(0, 1 << 33, 3).unwrap();
        let ids = created(backend, &sequence, layout, Pick::RoundRobin).await;
        let names = backend.add_stray_range(&sequence, range).await;
        let what = format!("{store} range {range}");
        assert_fails_naming(&what, 2, &names, is_corrupt, || ids.next_id()).await;
    }
}

/// A corrupt range (a negative `next`, one beyond its end, and what else the store can hold) is
/// [`ErrorDetail::Corrupt`] naming it and its field, never an id, however often it is asked: a
/// negative `next` used to be moved up to the range's first values (id 0 issued again), and one
/// beyond its end read as "exhausted".
pub async fn a_corrupt_range_is_an_error_naming_it_never_an_id<B: Ranges>(backend: &B) {
    let store = backend.store();
    let cases = backend.range_corruptions();
    assert!(cases.len() >= 2, "{store}: {cases:?}");
    for case in cases {
        let sequence = fresh(case);
        let layout = RangeLayout::new(0, 1_000, 1).unwrap();
        let ids = created(backend, &sequence, layout, Pick::Random).await;
        assert_eq!(ids.next_id().await.unwrap(), 0, "{store}");
        let names = backend.corrupt_range(&sequence, case).await;
        let what = format!("{store} {case}");
        assert_fails_naming(&what, 3, &names, is_corrupt, || ids.next_id()).await;
    }
}

/// Tasks on three connections race to create 8 and 3 ranges of 12-digit ids (three tasks each)
/// on one fresh sequence, 20 times: afterwards the ranges are exactly those of one layout, every
/// task that asked for it succeeded and every other one got [`Setup::Layout`]. The creation used
/// to list, check, then insert range by range: both layouts passed the check, and the ranges
/// were a mix of both, overlapping.
pub async fn racing_layouts_leave_exactly_one<B: Ranges>(backend: &B) {
    let store = backend.store();
    let eight = RangeLayout::decimal_digits(12, 8).unwrap();
    let three = RangeLayout::decimal_digits(12, 3).unwrap();
    let mut connections = Vec::new();
    for _ in 0..3 {
        connections.push(backend.reconnect().await);
    }
    for round in 0..20 {
        let sequence = fresh("race");
        let tasks: Vec<_> = (0..6)
            .map(|task| {
                let layout = if task % 2 == 0 { eight } else { three };
                let connection = connections[task % 3].clone();
                let sequence = sequence.clone();
                tokio::spawn(async move {
                    let created = connection.sharded(&sequence, layout, Pick::Random).await;
                    (layout, created.map(drop))
                })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap());
        }
        let ranges = backend.stored_ranges(&sequence).await;
        let winner = [eight, three]
            .into_iter()
            .find(|layout| ranges == ranges_of(*layout))
            .unwrap_or_else(|| panic!("{store} round {round}: ranges of no layout: {ranges:?}"));
        for (layout, result) in results {
            if layout == winner {
                assert!(result.is_ok(), "{store} round {round}: {result:?}");
            } else {
                // Refused because the other layout is recorded: not a corrupt-data error, which
                // a backend may report as a layout error too.
                let refused = matches!(&result, Err(Setup::Layout(reason))
                    if reason.contains("refused as the range layout")
                        && reason.contains("which is its layout for good"));
                assert!(
                    refused,
                    "{store} round {round}: {} ranges created beside {}: {result:?}",
                    layout.ranges(),
                    winner.ranges()
                );
            }
        }
    }
}
