//! Sequence administration: a floor that moves a counter forward and never back, also while
//! blocks are being allocated; each record listed with its last allocations (and a record of
//! before they were kept as unknown); one spelling per sequence.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use gdid_engine::backend::numbering::COUNTER_KEY;
use gdid_engine::sequences::{self, Sequence};
use gdid_engine::{
    Authority, AuthorityError, CounterState,
    backend::{CounterKey, CounterRow, CounterStore, raise_floor},
};

use super::{Counters, fresh};

/// A store whose authority is the engine's [`CounterStore`]: raising floors and listing records.
pub trait Sequences: Counters<Authority: CounterStore> {}

impl<B: Counters<Authority: CounterStore>> Sequences for B {}

fn key<'a>(number: u8, scope: &'a str, sequence: &'a str) -> CounterKey<'a> {
    CounterKey {
        key: number,
        scope,
        sequence,
    }
}

fn state(era: u32, next: u64) -> CounterState {
    CounterState { era, next }
}

/// The record of (`scope`, `sequence`) of key `number` in `listed`.
fn find<'a>(listed: &'a [Sequence], number: u8, scope: &str, sequence: &str) -> &'a Sequence {
    listed
        .iter()
        .find(|s| s.key == number && s.scope == scope && s.sequence == sequence)
        .unwrap_or_else(|| panic!("no record of ({number}, {scope}, {sequence}) in {listed:?}"))
}

/// A floor above the counter moves it there (the next block starts at it); the same floor again
/// changes nothing; a floor below is [`AuthorityError::FloorBelow`] and moves nothing; a missing
/// record is made at the floor (era and counter); the one-at-a-time counter's floor is its next
/// id; a floor outside the counter space and a bad name are typed errors.
pub async fn a_floor_moves_a_counter_forward_and_never_back<B: Sequences>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(2).await, 2).await;
    let scope = fresh("floor");
    let first = authority.allocate(&scope, "q", 10).await.unwrap();
    assert_eq!(first.start(), 1, "{store}");

    let raised = raise_floor(&authority, key(2, &scope, "q"), state(0, 1_000)).await;
    assert!(raised.unwrap(), "{store}: moved");
    let block = authority.allocate(&scope, "q", 10).await.unwrap();
    assert_eq!((block.era(), block.start()), (0, 1_000), "{store}");
    let again = raise_floor(&authority, key(2, &scope, "q"), state(0, 1_010)).await;
    assert!(!again.unwrap(), "{store}: at the floor already");

    match raise_floor(&authority, key(2, &scope, "q"), state(0, 500)).await {
        Err(AuthorityError::FloorBelow {
            era: 0,
            next: 1_010,
            ..
        }) => {}
        other => panic!("{store}: {other:?} instead of FloorBelow"),
    }
    let before = backend.counter_text(&authority, &scope, "q").await;
    let lower = raise_floor(&authority, key(2, &scope, "q"), state(0, 1_009)).await;
    assert!(lower.is_err(), "{store}");
    assert_eq!(
        backend.counter_text(&authority, &scope, "q").await,
        before,
        "{store}: a refused floor moved the counter"
    );

    let made = raise_floor(&authority, key(2, &scope, "new"), state(3, 77)).await;
    assert!(made.unwrap(), "{store}: made at the floor");
    let block = authority.allocate(&scope, "new", 5).await.unwrap();
    assert_eq!((block.era(), block.start()), (3, 77), "{store}");

    let counter = raise_floor(&authority, key(COUNTER_KEY, &scope, "n"), state(0, 42)).await;
    assert!(counter.unwrap(), "{store}");
    let id = authority.reserve_counter(&scope, "n", 1).await.unwrap();
    assert_eq!(id.start(), 42, "{store}: the one-at-a-time counter's floor");

    for bad in [state(0, 0), state(0, (1 << 60) + 2)] {
        let refused = raise_floor(&authority, key(2, &scope, "q"), bad).await;
        assert!(
            matches!(refused, Err(AuthorityError::InvalidBlock(_))),
            "{store}: {bad:?} gave {refused:?}"
        );
    }
    let refused = raise_floor(&authority, key(2, &scope, "-q"), state(0, 5)).await;
    assert!(
        matches!(refused, Err(AuthorityError::InvalidName(_))),
        "{store}: {refused:?}"
    );
}

/// Four tasks on two connections allocate blocks while a floor is raised: no two blocks overlap,
/// and every block asked for after the floor was raised starts at it or later.
///
/// The floor is raised once the tasks have allocated some blocks, and each task goes on until it
/// has asked for 3 blocks after it: events, not a sleep, order the two, so that a loaded machine
/// cannot raise the floor after every allocation.
pub async fn a_floor_raised_while_allocating_is_never_crossed<B: Sequences>(backend: &B) {
    const FLOOR: u64 = 1_000_000;
    let store = backend.store().to_owned();
    let place = backend.place(3).await;
    let scope = fresh("racing_floor");
    let raised = Arc::new(AtomicBool::new(false));
    let allocated = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let authority = backend.connect(&place, 3).await;
        for _ in 0..2 {
            let (authority, scope, raised) = (authority.clone(), scope.clone(), raised.clone());
            let (store, allocated) = (store.clone(), allocated.clone());
            tasks.push(tokio::spawn(async move {
                let mut blocks = Vec::new();
                let mut after_floor = 0;
                while blocks.len() < 40 || after_floor < 3 {
                    let after = raised.load(Ordering::SeqCst);
                    let block = authority.allocate(&scope, "q", 7).await.unwrap();
                    allocated.fetch_add(1, Ordering::SeqCst);
                    if after {
                        assert!(block.start() >= FLOOR, "{store}: {block} after the floor");
                        after_floor += 1;
                    }
                    blocks.push(block);
                    // A store that answers without waiting (memory) would hold this worker for
                    // good, and the timer the floor's task sleeps on with it.
                    tokio::task::yield_now().await;
                }
                blocks
            }));
        }
    }
    while allocated.load(Ordering::SeqCst) < 8 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let authority = backend.connect(&place, 3).await;
    raise_floor(&authority, key(3, &scope, "q"), state(0, FLOOR))
        .await
        .unwrap_or_else(|e| panic!("{store}: the floor: {e}"));
    raised.store(true, Ordering::SeqCst);
    let mut ids = HashSet::new();
    let (mut blocks, mut above) = (0, 0);
    for task in tasks {
        for block in task.await.unwrap() {
            blocks += 1;
            above += usize::from(block.start() >= FLOOR);
            for id in block.ids() {
                assert!(ids.insert(id), "{store}: {id} issued twice");
            }
        }
    }
    assert_eq!(ids.len(), blocks * 7, "{store}");
    assert!(blocks >= 160, "{store}: {blocks} blocks");
    assert!(above >= 4 * 3, "{store}: {above} blocks after the floor");
    let next = authority.allocate(&scope, "q", 1).await.unwrap();
    assert!(next.start() >= FLOOR, "{store}");
}

/// Each record is listed with its key, era, next counter and the counters used; after two
/// allocations, the time of the last, its size, a rate and a runway. A record written as an
/// older version did (no allocation times) is listed with them unknown, and gets them from its
/// next allocations; a record only raised has no rate.
pub async fn sequences_are_listed_with_their_last_allocations<B: Sequences>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(4).await, 4).await;
    let scope = fresh("listed");
    authority.allocate(&scope, "q", 10).await.unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    authority.allocate(&scope, "q", 20).await.unwrap();
    backend
        .insert_counter(&authority, 4, &scope, "old", 50)
        .await;
    raise_floor(&authority, key(4, &scope, "raised"), state(0, 9))
        .await
        .unwrap();

    let listed = sequences::list(&authority).await.unwrap();
    let q = find(&listed, 4, &scope, "q");
    assert_eq!((q.era, q.next, q.used), (0, 31, 30), "{store}");
    assert_eq!(q.last_size, Some(20), "{store}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let at = u128::try_from(q.last_allocation_ms.expect("a time")).unwrap();
    assert!(
        now.abs_diff(at) < 60_000,
        "{store}: {at} is not now ({now})"
    );
    let rate = q.rate.expect("a rate after two allocations");
    assert!(
        rate > 0.0 && rate < 20.0 * 1_000.0 / 25.0,
        "{store}: {rate}"
    );
    assert!(q.runway.is_some(), "{store}");

    let old = find(&listed, 4, &scope, "old");
    assert_eq!(
        (old.next, old.last_allocation_ms, old.rate),
        (50, None, None)
    );
    let raised = find(&listed, 4, &scope, "raised");
    assert_eq!((raised.next, raised.rate, raised.runway), (9, None, None));

    authority.allocate(&scope, "old", 5).await.unwrap();
    let listed = sequences::list(&authority).await.unwrap();
    let old = find(&listed, 4, &scope, "old");
    assert!(old.last_allocation_ms.is_some(), "{store}");
    assert_eq!(old.rate, None, "{store}: one timed allocation is no rate");
    assert!(listed.windows(2).all(|w| {
        (w[0].key, &w[0].scope, &w[0].sequence) <= (w[1].key, &w[1].scope, &w[1].sequence)
    }));
}

/// A scope or sequence that differs from a stored one only in case is refused, naming the stored
/// spelling, by an allocation, a one-at-a-time counter and a floor alike; the stored spelling
/// goes on.
pub async fn a_second_spelling_of_a_stored_name_is_refused<B: Sequences>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(1).await, 1).await;
    let scope = fresh("Spelling");
    authority.allocate(&scope, "Orders", 10).await.unwrap();
    let lower = scope.to_lowercase();
    for (scope, sequence) in [(&scope, "orders"), (&lower, "Orders"), (&lower, "ORDERS")] {
        match authority.allocate(scope, sequence, 1).await {
            Err(AuthorityError::InvalidName(e)) => {
                assert!(e.reason.contains("differs only in case"), "{store}: {e}")
            }
            other => panic!("{store}: ({scope}, {sequence}) gave {other:?}"),
        }
        let counter = authority.reserve_counter(scope, sequence, 1).await;
        assert!(
            matches!(counter, Err(AuthorityError::InvalidName(_))),
            "{store}: {counter:?}"
        );
        let floor = raise_floor(&authority, key(1, scope, sequence), state(0, 99)).await;
        assert!(
            matches!(floor, Err(AuthorityError::InvalidName(_))),
            "{store}: {floor:?}"
        );
    }
    let next = authority.allocate(&scope, "Orders", 1).await.unwrap();
    assert_eq!(next.start(), 11, "{store}: the stored spelling goes on");
}
