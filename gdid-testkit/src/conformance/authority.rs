//! An authority: blocks that tile the counter under concurrency, a restart that repeats nothing,
//! names and sizes checked before the store is touched.

use std::collections::HashSet;

use gdid_core::Gdid;
use gdid_engine::{Authority, AuthorityError, Block, BlockGenerator, Error, ErrorDetail};

use super::{StoreUnderTest, fresh};

/// `shape[0]` connections to authority `number` of `place`, `shape[1]` tasks on each, all at once,
/// each task running `work` with its connection's authority, `scope`, its connection's index and
/// its own: what each task returned.
async fn at_once<B, W, F>(
    backend: &B,
    place: &B::Place,
    number: u8,
    shape: [u64; 2],
    scope: &str,
    work: W,
) -> Vec<F::Output>
where
    B: StoreUnderTest,
    W: Fn(B::Authority, String, u64, u64) -> F,
    F: Future<Output: Send + 'static> + Send + 'static,
{
    let mut tasks = Vec::new();
    for connection in 0..shape[0] {
        let authority = backend.connect(place, number).await;
        for task in 0..shape[1] {
            let work = work(authority.clone(), scope.to_owned(), connection, task);
            tasks.push(tokio::spawn(work));
        }
    }
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

/// A generator of `scope`/`orders` over a connection of its own to authority `number` of `place`:
/// a process starting.
async fn orders_process<B: StoreUnderTest>(
    backend: &B,
    place: &B::Place,
    number: u8,
    scope: &str,
) -> BlockGenerator {
    BlockGenerator::builder(scope, "orders")
        .authority(backend.connect(place, number).await)
        .build()
        .unwrap()
}

/// 2 connections × 4 tasks allocating blocks of varied sizes: the blocks tile 1.. exactly, with
/// no overlap and nothing lost, and the stored counter holds the exact total (the next block
/// starts right after the last).
pub async fn concurrent_allocation_is_disjoint_and_loses_nothing<B: StoreUnderTest>(backend: &B) {
    let store = backend.store().to_owned();
    let place = backend.place(3).await;
    let scope = fresh("concurrent");
    let work = |authority: B::Authority, scope: String, connection: u64, task: u64| async move {
        let mut blocks = Vec::new();
        for i in 0..40u64 {
            let size = 1 + (connection * 31 + task * 7 + i * 13 + i * i) % 999;
            blocks.push(authority.allocate(&scope, "seq", size).await.unwrap());
        }
        blocks
    };
    let per_task = at_once(backend, &place, 3, [2, 4], &scope, work).await;
    let mut blocks: Vec<Block> = per_task.into_iter().flatten().collect();
    blocks.sort_by_key(|b| b.start());
    let mut expected_start = 1;
    for block in &blocks {
        assert_eq!((block.era(), block.authority()), (0, 3), "{store}");
        assert_eq!(
            block.start(),
            expected_start,
            "{store}: gap or overlap at {block}"
        );
        expected_start = block.end();
    }
    assert_eq!(blocks.len(), 320, "{store}");
    let next = backend
        .connect(&place, 3)
        .await
        .allocate(&scope, "seq", 1)
        .await
        .unwrap();
    assert_eq!(
        next.start(),
        expected_start,
        "{store}: the store holds the exact total"
    );
}

/// Many callers on a counter that does not exist yet: all succeed, nothing overlaps.
pub async fn the_first_use_race_on_a_missing_counter<B: StoreUnderTest>(backend: &B) {
    let store = backend.store().to_owned();
    let authority = backend.connect(&backend.place(1).await, 1).await;
    let scope = fresh("first_use");
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (authority, scope) = (authority.clone(), scope.clone());
            tokio::spawn(async move { authority.allocate(&scope, "q", 10).await })
        })
        .collect();
    let mut starts = Vec::new();
    for task in tasks {
        let block = task.await.unwrap();
        starts.push(block.unwrap_or_else(|e| panic!("{store}: {e}")).start());
    }
    starts.sort_unstable();
    assert_eq!(
        starts,
        (0..16).map(|i| 1 + 10 * i).collect::<Vec<u64>>(),
        "{store}"
    );
}

/// A generator dropped and built again (a restart) never repeats an id; one authority, one
/// thread: its ids increase.
pub async fn a_restart_never_repeats_an_id<B: StoreUnderTest>(backend: &B) {
    let store = backend.store();
    let place = backend.place(1).await;
    let scope = fresh("restart");
    let mut seen = HashSet::new();
    let mut last = Gdid::ZERO;
    for _run in 0..3 {
        let ids = orders_process(backend, &place, 1, &scope).await;
        for _ in 0..500 {
            let id = ids.next_id().await.unwrap();
            assert!(seen.insert(id), "{store}: {id} issued twice");
            assert!(id > last, "{store}: one authority, one thread: increasing");
            last = id;
        }
    }
}

/// A generator closed after a few ids gives the rest back: the next generator, on another
/// connection (another process), goes on right after the last id served, and so twice in a row.
pub async fn a_closed_generator_gives_its_tail_back<B: StoreUnderTest>(backend: &B) {
    let store = backend.store();
    let place = backend.place(2).await;
    let scope = fresh("give_back");
    let mut next_expected = 1;
    for _run in 0..2 {
        let ids = orders_process(backend, &place, 2, &scope).await;
        for _ in 0..5 {
            let id = ids.next_id().await.unwrap();
            assert_eq!(
                id.counter(),
                next_expected,
                "{store}: nothing lost between runs"
            );
            next_expected += 1;
        }
        let given = ids.close().await.unwrap();
        assert!(given > 0, "{store}: the unused tail went back");
        assert!(
            matches!(
                ids.next_id().await.map_err(Error::into_detail),
                Err(ErrorDetail::Closed { .. })
            ),
            "{store}: a closed generator allocates nothing"
        );
    }
}

/// A tail is given back only while nothing was reserved after it: a block taken meanwhile (by
/// another process) keeps the tail from going back, and no id is issued twice.
pub async fn a_tail_reserved_after_is_not_given_back<B: StoreUnderTest>(backend: &B) {
    let store = backend.store();
    let place = backend.place(2).await;
    let scope = fresh("give_back_late");
    let ids = orders_process(backend, &place, 2, &scope).await;
    let served = ids.next_id().await.unwrap();
    let other = backend.connect(&place, 2).await;
    let meanwhile = other.allocate(&scope, "orders", 10).await.unwrap();
    assert!(meanwhile.start() > served.counter(), "{store}");
    assert_eq!(
        ids.close().await.unwrap(),
        0,
        "{store}: too late to give back"
    );
    let after = other.allocate(&scope, "orders", 1).await.unwrap();
    assert_eq!(
        after.start(),
        meanwhile.end(),
        "{store}: the counter did not move back"
    );
}

/// 3 connections × 2 tasks, each opening a generator, taking a few ids and closing it (some by
/// dropping it), 15 times over: every id served is served once, and closing gave ids back.
pub async fn generators_closing_at_once_never_repeat_an_id<B: StoreUnderTest>(backend: &B) {
    let store = backend.store().to_owned();
    let place = backend.place(2).await;
    let scope = fresh("give_back_race");
    let work = |authority: B::Authority, scope: String, connection: u64, task: u64| async move {
        let (mut served, mut given) = (Vec::new(), 0);
        for run in 0..15u64 {
            let ids = BlockGenerator::builder(&scope, "orders")
                .authority(authority.clone())
                .build()
                .unwrap();
            let count = 1 + (connection * 7 + task * 5 + run * 3) % 20;
            for _ in 0..count {
                served.push(ids.next_id().await.unwrap());
            }
            if run % 4 == 3 {
                drop(ids); // gives back in a task of its own
            } else {
                given += ids.close().await.unwrap();
            }
        }
        (served, given)
    };
    let (mut all, mut given) = (Vec::new(), 0);
    for (served, back) in at_once(backend, &place, 2, [3, 2], &scope, work).await {
        all.extend(served);
        given += back;
    }
    let count = all.len();
    let unique: HashSet<Gdid> = all.into_iter().collect();
    assert_eq!(unique.len(), count, "{store}: an id was served twice");
    assert!(given > 0, "{store}: no generator gave anything back");
}

/// Bad names (empty, a space, SQL) and a size of 0 are typed errors, before the store is touched.
pub async fn bad_names_and_sizes_are_refused<B: StoreUnderTest>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(1).await, 1).await;
    for (scope, sequence) in [
        ("", "s"),
        ("a b", "s"),
        ("bad name", "q"),
        ("ok", "x'; DROP TABLE t; --"),
        ("ok", "{\"$gt\": 1}"),
    ] {
        let err = authority.allocate(scope, sequence, 1).await.unwrap_err();
        assert!(
            matches!(err, AuthorityError::InvalidName(_)),
            "{store}: {err}"
        );
    }
    let err = authority.allocate("ok", "ok", 0).await.unwrap_err();
    assert!(
        matches!(err, AuthorityError::InvalidSize(0)),
        "{store}: {err}"
    );
}
