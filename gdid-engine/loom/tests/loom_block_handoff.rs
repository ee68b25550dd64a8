#![cfg(gdid_loom)]
//! The block generator's fast path and refill hand-off, model-checked with loom: every
//! interleaving (within loom's preemption bound) of callers serving ids from their threads'
//! slices, a block delivered by the allocation task, a waiting caller installing the pending
//! block, and a statistics snapshot. The real code runs, on loom's atomics and locks
//! (`gdid-engine/src/sync.rs`).
//!
//! ```text
//! RUSTFLAGS="--cfg gdid_loom" CARGO_TARGET_DIR=target/loom \
//!   cargo test -p gdid-engine-loom --release
//! ```

use std::collections::HashSet;

use gdid_core::Gdid;
use gdid_engine::{Block, BlockGenerator, IdOrder, MemoryAuthority};
use loom::sync::Arc;
use loom::thread;

/// The output of a future that completes without waiting (a `next_block` served from the current
/// block): polled once.
fn now_or_never<F: std::future::Future>(future: F) -> F::Output {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(future).poll(&mut context) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("the future waited"),
    }
}

/// Blocks of 32 ids: slices of 2 (a thread takes 1/16 of a block at a time).
const BLOCK: u64 = 32;
/// Ids of the first block taken before the callers start (one `next_block`), so that the callers
/// use it up in a few steps and need the second one.
const TAKEN_BEFORE: u64 = 28;

fn generator(order: IdOrder) -> BlockGenerator {
    BlockGenerator::builder("loom", "handoff")
        .authority(MemoryAuthority::new(1))
        .fixed_block_size(BLOCK)
        .order(order)
        .build()
        .unwrap()
}

/// The `n`-th block of authority 1 (counting from 0), as `MemoryAuthority` would hand it out.
fn block(n: u64) -> Block {
    Block::new(0, 1, 1 + n * BLOCK, BLOCK).unwrap()
}

/// A caller wanting `n` ids: each is tried from what is in hand; when nothing is, the caller does
/// what it does before waiting (install the pending block) and tries once more, then gives up
/// (it would wait for an allocation).
fn serve(ids: &BlockGenerator, n: usize) -> Vec<Gdid> {
    let mut served = Vec::new();
    for _ in 0..n {
        let id = ids
            .loom_try_next_id()
            .or_else(|| ids.loom_ready().then(|| ids.loom_try_next_id()).flatten());
        match id {
            Some(id) => served.push(id),
            None => break,
        }
    }
    served
}

/// Two callers use up the first block while the allocation task delivers the second and a third
/// thread reads the statistics: no id is served twice, every id of both blocks is served, taken
/// or still in hand, and the statistics never count more than was handed out.
fn refills_race_the_fast_path(order: IdOrder, per_caller: usize) {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(move || {
        let ids = generator(order);
        ids.loom_deliver(block(0));
        let taken = now_or_never(ids.next_block(TAKEN_BEFORE)).unwrap();
        assert_eq!(taken.len(), TAKEN_BEFORE);
        let ids = Arc::new(ids);
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let ids = Arc::clone(&ids);
                thread::spawn(move || serve(&ids, per_caller))
            })
            .collect();
        let allocator = {
            let ids = Arc::clone(&ids);
            thread::spawn(move || ids.loom_deliver(block(1)))
        };
        // A snapshot while all that happens: never more issued than the callers can have
        // claimed (a caller's claim counts as issued from the moment it is made; in per-thread
        // order it claims whole slices of 2), never more in hand than was handed out.
        let during = ids.stats();
        let slice = if order == IdOrder::PerThread { 2 } else { 1 };
        let most_claimed = TAKEN_BEFORE + 2 * (per_caller as u64).div_ceil(slice) * slice;
        assert!(
            during.issued <= most_claimed,
            "issued {} while the callers claimed at most {most_claimed} ids: {during:?}",
            during.issued
        );
        assert!(during.ids_in_hand <= 2 * BLOCK - TAKEN_BEFORE, "{during:?}");

        let mut served = HashSet::new();
        for caller in callers {
            for id in caller.join().unwrap() {
                assert!(
                    id.counter() > TAKEN_BEFORE && id.counter() <= 2 * BLOCK,
                    "{id} is not among the ids left"
                );
                assert!(served.insert(id), "{id} served twice");
            }
        }
        allocator.join().unwrap();
        let after = ids.stats();
        let served = served.len() as u64;
        assert_eq!(after.allocations, 2);
        assert_eq!(after.issued, TAKEN_BEFORE + served, "{after:?}");
        assert_eq!(
            TAKEN_BEFORE + served + after.ids_in_hand,
            2 * BLOCK,
            "ids lost: {served} served, {after:?}"
        );
    });
}

#[test]
fn per_thread_order_refills_race_the_fast_path() {
    refills_race_the_fast_path(IdOrder::PerThread, 2);
}

#[test]
fn strict_order_refills_race_the_fast_path() {
    refills_race_the_fast_path(IdOrder::Strict, 2);
}

/// A caller serves one id of its slice of 2 and exits: as with `thread_local`, its slot, one id
/// left in it, goes to the next thread that takes a slot. Meanwhile a new caller serves ids and
/// the allocation task delivers the next block. The id left is served by the new caller (first,
/// when it got the slot) or still in hand: never served twice, never lost by replacing the slice
/// (`Slot::fill`'s debug assertion once fired there).
#[test]
fn an_exited_threads_slice_goes_to_the_next_thread() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(|| {
        let ids = generator(IdOrder::PerThread);
        ids.loom_deliver(block(0));
        now_or_never(ids.next_block(TAKEN_BEFORE)).unwrap();
        let ids = Arc::new(ids);
        let leaving = {
            let ids = Arc::clone(&ids);
            thread::spawn(move || {
                let served = serve(&ids, 1);
                ids.loom_thread_exit();
                served
            })
        };
        let newcomer = {
            let ids = Arc::clone(&ids);
            thread::spawn(move || serve(&ids, 3))
        };
        let allocator = {
            let ids = Arc::clone(&ids);
            thread::spawn(move || ids.loom_deliver(block(1)))
        };
        let mut served = HashSet::new();
        for caller in [leaving, newcomer] {
            let run = caller.join().unwrap();
            assert!(run.windows(2).all(|w| w[0] < w[1]), "{run:?} not in order");
            for id in run {
                assert!(served.insert(id), "{id} served twice");
            }
        }
        allocator.join().unwrap();
        let after = ids.stats();
        let served = served.len() as u64;
        assert_eq!(after.issued, TAKEN_BEFORE + served, "{after:?}");
        assert_eq!(
            TAKEN_BEFORE + served + after.ids_in_hand,
            2 * BLOCK,
            "ids lost: {served} served, {after:?}"
        );
    });
}
