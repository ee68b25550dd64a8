//! The generators through their public API: strictly increasing across a clock that steps back,
//! unique across threads, batches through `IdGenerator`.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gdid_engine::{Error, ErrorDetail, IdGenerator, SharedIdGenerator};
use gdid_uuid::{
    MAX_BATCH, ManualClock, NodeId, UuidV1Generator, UuidV4Generator, UuidV6Generator,
    UuidV7Generator,
};
use uuid::Uuid;

const THREADS: usize = 4;
const PER_THREAD: usize = 50_000;

/// Calls `generate` `PER_THREAD` times on each of `THREADS` threads; returns each thread's ids.
fn on_threads(generate: impl Fn() -> Uuid + Sync) -> Vec<Vec<Uuid>> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| scope.spawn(|| (0..PER_THREAD).map(|_| generate()).collect::<Vec<_>>()))
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    })
}

fn assert_all_distinct(name: &str, ids: &[Vec<Uuid>]) {
    let distinct: HashSet<Uuid> = ids.iter().flatten().copied().collect();
    assert_eq!(distinct.len(), THREADS * PER_THREAD, "{name}: duplicates");
}

fn assert_each_thread_increases(name: &str, ids: &[Vec<Uuid>]) {
    for mine in ids {
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "{name}: a thread's ids went back"
        );
    }
}

/// Sets the flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[test]
fn v7_stays_strictly_increasing_while_the_clock_jumps_back_and_forth() {
    let start = Duration::from_millis(1_700_000_000_000);
    let clock = ManualClock::new(start);
    let ids = UuidV7Generator::with_clock(clock.clone());
    let done = AtomicBool::new(false);
    let per_thread = std::thread::scope(|scope| {
        // Stops the clock thread however the draws end (a failed draw must fail the test, not
        // leave the scope waiting for the clock forever).
        let _stop_clock = SetOnDrop(&done);
        // The clock: forwards 1 ms, back 5 s, forwards again, while the threads draw.
        scope.spawn(|| {
            let mut step = 0u64;
            while !done.load(Ordering::Relaxed) {
                step += 1;
                let offset = if step % 3 == 0 {
                    Duration::ZERO
                } else {
                    Duration::from_millis(step)
                };
                clock.set(if step % 5 == 0 {
                    start - Duration::from_secs(5)
                } else {
                    start + offset
                });
                std::thread::yield_now();
            }
        });
        on_threads(|| ids.generate().unwrap())
    });
    assert_each_thread_increases("v7", &per_thread);
    assert_all_distinct("v7", &per_thread);
    // Whatever thread made it, a later id is greater than every earlier one.
    let latest = per_thread.iter().flatten().max().unwrap();
    assert!(ids.generate().unwrap() > *latest);
    // No id went below the clock's lowest reading.
    let earliest = per_thread.iter().flatten().min().unwrap();
    let (seconds, _) = earliest.get_timestamp().unwrap().to_unix();
    assert!(seconds >= start.as_secs() - 5);
}

#[test]
fn v6_stays_strictly_increasing_while_the_clock_steps_back() {
    let clock = ManualClock::new(Duration::from_secs(1_700_000_000));
    let ids = UuidV6Generator::with_clock(NodeId::random(), clock.clone());
    let before = on_threads(|| ids.generate().unwrap());
    clock.set(Duration::from_secs(1_600_000_000));
    let after = on_threads(|| ids.generate().unwrap());
    let before_max = before.iter().flatten().max().unwrap();
    assert!(after.iter().flatten().all(|id| id > before_max));
    assert_each_thread_increases("v6", &after);
    let all: Vec<Vec<Uuid>> = before.into_iter().chain(after).collect();
    let distinct: HashSet<Uuid> = all.iter().flatten().copied().collect();
    assert_eq!(distinct.len(), 2 * THREADS * PER_THREAD);
}

#[test]
fn every_generator_is_unique_across_threads_on_the_system_clock() {
    let v4 = UuidV4Generator::new();
    assert_all_distinct("v4", &on_threads(|| v4.generate()));

    let v7 = UuidV7Generator::new();
    let ids = on_threads(|| v7.generate().unwrap());
    assert_each_thread_increases("v7", &ids);
    assert_all_distinct("v7", &ids);

    let process_wide = on_threads(|| UuidV7Generator::process_wide().generate().unwrap());
    assert_each_thread_increases("process-wide v7", &process_wide);
    assert_all_distinct("process-wide v7", &process_wide);

    let v6 = UuidV6Generator::new(NodeId::random());
    let ids = on_threads(|| v6.generate().unwrap());
    assert_each_thread_increases("v6", &ids);
    assert_all_distinct("v6", &ids);

    // v1 does not sort, but its ticks (and so its ids) never repeat.
    let v1 = UuidV1Generator::new(NodeId::random());
    assert_all_distinct("v1", &on_threads(|| v1.generate().unwrap()));
}

#[tokio::test]
async fn batches_come_through_the_trait_in_order_and_counts_are_checked() {
    let v7 = UuidV7Generator::new();
    let first = v7.next_id().await.unwrap();
    let batch: Vec<Uuid> = v7.next_ids(10_000).await.unwrap().iter().collect();
    assert_eq!(batch.len(), 10_000);
    assert!(first < batch[0]);
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    assert!(v7.next_id().await.unwrap() > batch[9_999]);

    let v6 = UuidV6Generator::new(NodeId::random());
    let batch: Vec<Uuid> = v6.next_ids(1_000).await.unwrap().iter().collect();
    assert!(batch.windows(2).all(|w| w[0] < w[1]));

    for n in [0, MAX_BATCH + 1] {
        assert!(matches!(
            v7.next_ids(n).await.map_err(Error::into_detail),
            Err(ErrorDetail::InvalidCount { .. })
        ));
        assert!(matches!(
            v6.next_ids(n).await.map_err(Error::into_detail),
            Err(ErrorDetail::InvalidCount { .. })
        ));
        assert!(matches!(
            UuidV4Generator::new()
                .next_ids(n)
                .await
                .map_err(Error::into_detail),
            Err(ErrorDetail::InvalidCount { .. })
        ));
    }
}

#[tokio::test]
async fn a_strategy_chosen_at_run_time() {
    let node = NodeId::random();
    for (name, ids) in [
        (
            "v4",
            Arc::new(UuidV4Generator::new()) as SharedIdGenerator<Uuid>,
        ),
        ("v7", Arc::new(UuidV7Generator::new())),
        ("v6", Arc::new(UuidV6Generator::new(node))),
        ("v1", Arc::new(UuidV1Generator::new(node))),
    ] {
        let id = ids.next_id().await.unwrap();
        assert_eq!(id.get_version_num().to_string(), name[1..], "{name}");
    }
}
