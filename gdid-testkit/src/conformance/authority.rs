//! An authority: blocks that tile the counter under concurrency, a restart that repeats nothing,
//! names and sizes checked before the store is touched.

use std::collections::HashSet;

use gdid_core::Gdid;
use gdid_core::generator::{Authority, AuthorityError, Block, BlockGenerator};

use super::{Backend, fresh};

/// 2 connections × 4 tasks allocating blocks of varied sizes: the blocks tile 1.. exactly, with
/// no overlap and nothing lost, and the stored counter holds the exact total (the next block
/// starts right after the last).
pub async fn concurrent_allocation_is_disjoint_and_loses_nothing<B: Backend>(backend: &B) {
    let store = backend.store().to_owned();
    let place = backend.place(3).await;
    let scope = fresh("concurrent");
    let mut tasks = Vec::new();
    for connection in 0..2u64 {
        let authority = backend.connect(&place, 3).await;
        for task in 0..4u64 {
            let authority = authority.clone();
            let scope = scope.clone();
            tasks.push(tokio::spawn(async move {
                let mut blocks = Vec::new();
                for i in 0..40u64 {
                    let size = 1 + (connection * 31 + task * 7 + i * 13 + i * i) % 999;
                    blocks.push(authority.allocate(&scope, "seq", size).await.unwrap());
                }
                blocks
            }));
        }
    }
    let mut blocks: Vec<Block> = Vec::new();
    for task in tasks {
        blocks.extend(task.await.unwrap());
    }
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
pub async fn the_first_use_race_on_a_missing_counter<B: Backend>(backend: &B) {
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
pub async fn a_restart_never_repeats_an_id<B: Backend>(backend: &B) {
    let store = backend.store();
    let place = backend.place(1).await;
    let scope = fresh("restart");
    let mut seen = HashSet::new();
    let mut last = Gdid::ZERO;
    for _run in 0..3 {
        let ids = BlockGenerator::builder(&scope, "orders")
            .authority(backend.connect(&place, 1).await)
            .build()
            .unwrap();
        for _ in 0..500 {
            let id = ids.next_id().await.unwrap();
            assert!(seen.insert(id), "{store}: {id} issued twice");
            assert!(id > last, "{store}: one authority, one thread: increasing");
            last = id;
        }
    }
}

/// Bad names (empty, a space, SQL) and a size of 0 are typed errors, before the store is touched.
pub async fn bad_names_and_sizes_are_refused<B: Backend>(backend: &B) {
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
