//! The hand-off between the shared block and the threads' slices, under contention: many tasks,
//! tiny blocks and prefetching, so that block refills race the fast path. Every id of every block
//! the authority handed out is accounted for: served exactly once, or still in the generator's
//! hand; and the statistics agree with what was served.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use gdid_core::Gdid;
use gdid_engine::{BlockGenerator, CounterState, IdOrder, MemoryAuthority, Stats};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const SCOPE: &str = "app";
const SEQUENCE: &str = "handoff";

/// How the callers of one run behave.
#[derive(Debug, Clone, Copy)]
struct Load {
    tasks: u64,
    ids_per_task: usize,
    block: u64,
    seed: u64,
}

impl Load {
    /// The same load once per seed in `seeds`.
    fn seeded(
        tasks: u64,
        ids_per_task: usize,
        block: u64,
        seeds: std::ops::Range<u64>,
    ) -> impl Iterator<Item = Load> {
        seeds.map(move |seed| Load {
            tasks,
            ids_per_task,
            block,
            seed,
        })
    }
}

/// One task's ids: single ids and small batches mixed, with yields in between so that tasks
/// interleave on each worker thread too (a task that resumes after waiting for a block may land on
/// a thread whose slice another task is still serving).
async fn take_ids(ids: BlockGenerator, want: usize, seed: u64) -> Vec<Gdid> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut mine = Vec::with_capacity(want + 8);
    while mine.len() < want {
        match rng.random_range(0..10) {
            0..=5 => mine.push(ids.next_id().await.unwrap()),
            6..=7 => mine.extend(ids.next_ids(rng.random_range(1..6)).await.unwrap().iter()),
            _ => tokio::task::yield_now().await,
        }
    }
    mine
}

/// The authority's counter and the generator's statistics at one instant when every block the
/// authority gave has reached the generator (no reply still on its way). Waits for that instant:
/// it never asserts on time, only retries until the two sides agree.
async fn settled(ids: &BlockGenerator, authority: &MemoryAuthority) -> (CounterState, Stats) {
    for _ in 0..10_000 {
        let given = authority.allocations();
        let state = authority.state(SCOPE, SEQUENCE).unwrap();
        let stats = ids.stats();
        if authority.allocations() == given && stats.allocations == given {
            return (state, stats);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("the generator never caught up with its authority");
}

/// Runs `load` and checks the accounting: no repeat, no id of a served block lost, `issued` and
/// `ids_in_hand` exact once the callers are done.
async fn run_and_account(load: Load, order: IdOrder) {
    let authority = Arc::new(MemoryAuthority::new(1));
    let ids = BlockGenerator::builder(SCOPE, SEQUENCE)
        .shared_authority(authority.clone())
        .fixed_block_size(load.block)
        .low_water_mark(0.5)
        .order(order)
        .build()
        .unwrap();
    let tasks: Vec<_> = (0..load.tasks)
        .map(|task| {
            tokio::spawn(take_ids(
                ids.clone(),
                load.ids_per_task,
                load.seed * 1_000 + task,
            ))
        })
        .collect();
    let mut served = HashSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(served.insert(id), "{id} served twice ({load:?})");
        }
    }
    let (state, stats) = settled(&ids, &authority).await;
    assert_eq!(state.era, 0, "{load:?}");
    let handed_out = state.next - 1; // counters 1 .. next
    for id in &served {
        assert!(
            id.era() == 0 && id.authority() == 1 && (1..state.next).contains(&id.counter()),
            "{id} was never handed out ({load:?})"
        );
    }
    let served = served.len() as u64;
    assert_eq!(
        served + stats.ids_in_hand,
        handed_out,
        "ids lost: {handed_out} handed out, {served} served, {} in hand ({load:?}, {stats:?})",
        stats.ids_in_hand
    );
    assert_eq!(stats.issued, served, "issued ({load:?}, {stats:?})");
}

/// Many tasks on four worker threads, blocks of 32 ids (slices of 2), prefetch at half a block:
/// refills race the fast path all the time. Repeated with different interleavings.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_id_is_lost_or_repeated_when_refills_race_the_fast_path() {
    for load in Load::seeded(32, 2_000, 32, 0..20) {
        run_and_account(load, IdOrder::PerThread).await;
    }
}

/// The same with larger slices (blocks of 256, slices of 16) and strict order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_id_is_lost_or_repeated_with_larger_slices_and_in_strict_order() {
    for load in Load::seeded(16, 5_000, 256, 0..10) {
        run_and_account(load, IdOrder::PerThread).await;
        run_and_account(load, IdOrder::Strict).await;
    }
}

/// One thread, many tasks: a task that waited for a block resumes on the thread whose slice
/// another task is serving. Deterministic (paused clock, one thread).
#[tokio::test(start_paused = true)]
async fn a_task_resuming_after_a_refill_leaves_the_threads_slice_alone() {
    for load in Load::seeded(8, 500, 64, 0..5) {
        run_and_account(load, IdOrder::PerThread).await;
    }
}
