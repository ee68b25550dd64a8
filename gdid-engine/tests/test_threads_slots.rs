//! Per-thread slices (`Slot`s, one per thread and generator, found through the thread-locals of
//! the generator engine, `per_thread.rs`) from plain std threads, each with a current-thread
//! runtime of its own: no id is served twice, each thread's ids increase, and no id is lost
//! (every claimed id is served or still in a slice: `Stats::issued` counts exactly the ids
//! served).
//!
//! Threads also exit while others serve and new threads start: an exiting thread gives its dense
//! index back, and the next thread that takes it gets that index's slot of every generator, with
//! the slice left in it, to serve first: replacing it lost its ids and fired `Slot::fill`'s debug
//! assertion "a slice with ids left is being replaced". Calls made from thread-local destructors,
//! after the thread's index was given back, never reach a slot another live thread uses: they
//! take their ids from the shared block.
//!
//! Run in debug builds too (the assertion is active there):
//! `cargo test -p gdid-engine --test test_threads_slots`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::Scope;
use std::time::Duration;

use gdid_core::Gdid;
use gdid_engine::{BlockGenerator, IdOrder, MemoryAuthority};

/// Threads serving ids at once.
const THREADS: usize = 4;
/// Ids per thread.
const PER_THREAD: usize = 3_000;

/// Small blocks (16 to 256 ids: slices of 1 to 16) over one in-memory authority: many refills.
fn generator(order: IdOrder) -> BlockGenerator {
    BlockGenerator::builder("app", "threads")
        .authority(MemoryAuthority::new(1))
        .block_size(16, 256)
        .order(order)
        .build()
        .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// `n` ids from `ids` on this thread, through a current-thread runtime of its own.
fn take(ids: &BlockGenerator, n: usize) -> Vec<Gdid> {
    runtime().block_on(take_async(ids, n))
}

async fn take_async(ids: &BlockGenerator, n: usize) -> Vec<Gdid> {
    let mut served = Vec::with_capacity(n);
    for _ in 0..n {
        served.push(ids.next_id().await.expect("next_id"));
    }
    served
}

/// The ids served, by thread (or by run of one thread): each run increases, no id is served
/// twice, and the generator counts exactly these as issued (none lost in a replaced slice).
fn check(ids: &BlockGenerator, runs: &[Vec<Gdid>]) {
    let mut all = HashSet::new();
    for run in runs {
        assert!(
            run.windows(2).all(|w| w[0] < w[1]),
            "a thread's ids do not increase: {run:?}"
        );
        for id in run {
            assert!(all.insert(*id), "{id} served twice");
        }
    }
    let stats = ids.stats();
    assert_eq!(
        stats.issued,
        all.len() as u64,
        "ids lost (issued, never served): {stats:?}"
    );
}

/// The report: `THREADS` std threads, each with a current-thread runtime of its own, call one
/// generator at once, many times over.
#[test]
fn threads_with_runtimes_of_their_own() {
    for order in [IdOrder::PerThread, IdOrder::Strict] {
        for _ in 0..40 {
            let ids = generator(order);
            let runs: Vec<Vec<Gdid>> = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..THREADS)
                    .map(|_| scope.spawn(|| take(&ids, PER_THREAD)))
                    .collect();
                workers.into_iter().map(|w| w.join().unwrap()).collect()
            });
            check(&ids, &runs);
        }
    }
}

/// Threads serving many generators in turn, as a service with a generator per table does: each
/// thread finds its slot of each generator in its row, by the generator's number (its one-entry
/// cache holds another generator's), and the generators are replaced between rounds, so that new
/// ones take the numbers, and with them the emptied slots, of dropped ones while the threads'
/// caches still name those numbers: no id served twice, each thread's ids of each generator
/// increase, none lost.
#[test]
fn threads_serving_many_generators_in_turn() {
    const GENERATORS: usize = 40;
    const TURNS: usize = 150;
    let mut generators: Vec<BlockGenerator> = (0..GENERATORS)
        .map(|i| {
            generator(if i % 8 == 7 {
                IdOrder::Strict
            } else {
                IdOrder::PerThread
            })
        })
        .collect();
    // Every run each generator served since it was made: `check` counts them all as issued.
    let mut served: Vec<Vec<Vec<Gdid>>> = vec![Vec::new(); GENERATORS];
    for round in 0..6 {
        // runs[thread][generator]: the ids each thread was served by each generator.
        let runs: Vec<Vec<Vec<Gdid>>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..THREADS)
                .map(|thread| {
                    let generators = &generators;
                    scope.spawn(move || {
                        let mut runs = vec![Vec::new(); GENERATORS];
                        runtime().block_on(async {
                            for turn in 0..TURNS {
                                // Threads go round in different orders.
                                for k in 0..GENERATORS {
                                    let g = (k * (2 * thread + 1) + turn) % GENERATORS;
                                    let id = generators[g].next_id().await.expect("next_id");
                                    runs[g].push(id);
                                }
                            }
                        });
                        runs
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for (g, ids) in generators.iter().enumerate() {
            served[g].extend(runs.iter().map(|by_g| by_g[g].clone()));
            check(ids, &served[g]);
        }
        // Half of them replaced: the new ones take the dropped ones' numbers and slots.
        for g in (round % 2..GENERATORS).step_by(2) {
            generators[g] = generator(generators[g].config().order);
            served[g].clear();
        }
    }
}

/// A thread takes one id (its slice keeps the rest) and exits; the next thread started takes the
/// index it gave back, and with it its slot, slice included. Deterministic but for other tests'
/// threads taking the freed index first: repeated.
#[test]
fn a_new_thread_serves_the_slice_an_exited_thread_left() {
    let ids = generator(IdOrder::PerThread);
    // A first block, so that slices are of 1/16 of it.
    let mut runs = vec![take(&ids, 1)];
    for i in 0..300 {
        let ids = &ids;
        runs.push(std::thread::scope(|scope| {
            scope.spawn(|| take(ids, 1)).join().unwrap()
        }));
        // The next thread takes a batch first (every third) or single ids: either way, the
        // slice found is served before newer ids.
        runs.push(std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    if i % 3 == 0 {
                        let rt = runtime();
                        let batch = rt.block_on(ids.next_ids(5)).expect("next_ids");
                        let mut run: Vec<Gdid> = batch.iter().collect();
                        run.extend(rt.block_on(take_async(ids, 2)));
                        run
                    } else {
                        take(ids, 3)
                    }
                })
                .join()
                .unwrap()
        }));
    }
    check(&ids, &runs);
    assert!(
        ids.stats().ids_in_hand > 0,
        "the slices left are in hand: {:?}",
        ids.stats()
    );
}

/// The runs of ids the threads of a round were served.
type Runs = Mutex<Vec<Vec<Gdid>>>;

/// 20 rounds, each on a new generator: two long-lived threads take `PER_THREAD` ids each while
/// `others` starts more threads in the same scope, each pushing the ids it was served to the
/// runs; then the runs are checked.
fn rounds_beside_long_lived_threads<F>(others: F)
where
    F: for<'scope, 'env> Fn(&'scope Scope<'scope, 'env>, &'scope BlockGenerator, &'scope Runs),
{
    for _ in 0..20 {
        let ids = generator(IdOrder::PerThread);
        let runs = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    let run = take(&ids, PER_THREAD);
                    runs.lock().unwrap().push(run);
                });
            }
            others(scope, &ids, &runs);
        });
        check(&ids, &runs.into_inner().unwrap());
    }
}

/// Long-lived threads serve ids throughout while short-lived ones come and go (each takes a few
/// ids and exits, the next one starting at once and getting its index and slots): threads exit and
/// start mid-run.
#[test]
fn threads_come_and_go() {
    rounds_beside_long_lived_threads(|scope, ids, runs| {
        for chain in 0..2 {
            scope.spawn(move || {
                for i in 0..100 {
                    let n = 1 + (i + chain) % 7;
                    let run = std::thread::spawn({
                        let ids = ids.clone();
                        move || take(&ids, n)
                    })
                    .join()
                    .unwrap();
                    runs.lock().unwrap().push(run);
                }
            });
        }
    });
}

/// What a call made from a thread-local destructor got: ids, an error, or a panic (message).
type Late = Result<Result<Vec<Gdid>, String>, String>;

/// Calls `ids` from its destructor: `n` ids, each from one poll (what is in hand), panics caught.
struct CallsOnExit {
    ids: BlockGenerator,
    n: usize,
    /// Told when the destructor starts (its thread's main function has returned).
    entered: Sender<()>,
    /// Waited on before the calls: the new threads, one of which may have got this thread's
    /// slot, are serving by then.
    go: Option<Receiver<()>>,
    report: Sender<Late>,
}

impl Drop for CallsOnExit {
    fn drop(&mut self) {
        let _ = self.entered.send(());
        if let Some(go) = self.go.take() {
            let _ = go.recv_timeout(Duration::from_secs(5));
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut served = Vec::new();
            for _ in 0..self.n {
                match poll_once(self.ids.next_id()) {
                    Some(Ok(id)) => served.push(id),
                    Some(Err(e)) => return Err(e.to_string()),
                    None => return Err("waited for a block".to_owned()),
                }
            }
            Ok(served)
        }))
        .map_err(|panic| {
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default()
        });
        let _ = self.report.send(outcome);
    }
}

/// The output of `future` if it completes at its first poll.
fn poll_once<F: std::future::Future>(future: F) -> Option<F::Output> {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(future).poll(&mut context) {
        std::task::Poll::Ready(output) => Some(output),
        std::task::Poll::Pending => None,
    }
}

thread_local! {
    static ON_EXIT: RefCell<Option<CallsOnExit>> = const { RefCell::new(None) };
}

/// Threads that call the generator from a thread-local destructor as they exit, registered
/// before the engine's thread-local that holds the thread's index (so run after it gave the index,
/// and with it the thread's slots, back: on Linux thread-local destructors run in the reverse
/// order of registration) or after it (run while the thread holds its slot), while new threads,
/// one of which may have got the exiting thread's index and slot, serve ids: never an id twice,
/// none lost, no panic.
///
/// A call after the hand-off finds no slot and is given none: it takes its ids from the shared
/// block. A call before it serves from the thread's own slice. Either way no slot is shared.
#[test]
fn calls_from_thread_local_destructors() {
    // Ids served by calls from destructors run after / before the hand-off of the slots.
    let mut after_release = 0;
    let mut before_release = 0;
    for round in 0..40 {
        // Blocks large enough that calls without a runtime find ids in hand.
        let ids = BlockGenerator::builder("app", "destructors")
            .authority(MemoryAuthority::new(1))
            .fixed_block_size(1 << 16)
            .build()
            .unwrap();
        // A block in hand, so that calls from destructors (no runtime) find ids.
        let mut runs = vec![take(&ids, 1)];
        let (report, reports) = channel();
        let (go, wait_for_go) = channel();
        let (entered, destructor_entered) = channel();
        // Registered before the engine's slots: its destructor runs after they are handed on.
        let registered_first = round % 2 == 0;
        let exiting = {
            let ids = ids.clone();
            std::thread::spawn(move || {
                let on_exit = CallsOnExit {
                    ids: ids.clone(),
                    n: 8,
                    entered,
                    go: Some(wait_for_go),
                    report,
                };
                if registered_first {
                    ON_EXIT.with(|slot| *slot.borrow_mut() = Some(on_exit));
                    take(&ids, 5)
                } else {
                    let run = take(&ids, 5);
                    ON_EXIT.with(|slot| *slot.borrow_mut() = Some(on_exit));
                    run
                }
            })
        };
        // The exiting thread's destructor has started: its slots are handed on by now if the
        // engine's destructor ran first. New threads ask for slots and may get them.
        destructor_entered.recv().unwrap();
        let barrier = Arc::new(Barrier::new(THREADS + 1));
        let newcomers: Vec<_> = (0..THREADS)
            .map(|_| {
                let ids = ids.clone();
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let first = take(&ids, 2);
                    barrier.wait();
                    let mut run = first;
                    run.extend(take(&ids, 400));
                    run
                })
            })
            .collect();
        // The newcomers serve; then the destructor calls, while they go on.
        barrier.wait();
        let _ = go.send(());
        for newcomer in newcomers {
            runs.push(newcomer.join().unwrap());
        }
        runs.push(exiting.join().unwrap());
        let tally = if registered_first {
            &mut after_release
        } else {
            &mut before_release
        };
        match reports.recv().unwrap() {
            Ok(Ok(late)) => {
                *tally += late.len();
                runs.push(late);
            }
            Ok(Err(error)) => panic!("a call from a destructor failed: {error}"),
            Err(panic) => panic!("a call from a destructor panicked: {panic}"),
        }
        check(&ids, &runs);
    }
    assert!(
        after_release > 0 && before_release > 0,
        "ids served from destructors after the slots were handed on: {after_release}, \
         before: {before_release}"
    );
}

thread_local! {
    static RUNTIME: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

/// Threads keep their runtime in a thread-local and exit with a task still waiting on it and,
/// now and then, the allocation task running on it: the runtime is dropped in a thread-local
/// destructor, its tasks with it. The other threads go on serving (a dropped allocation task
/// lets the next caller start another) and never serve an id twice.
#[test]
fn runtimes_dropped_in_thread_local_destructors() {
    rounds_beside_long_lived_threads(|scope, ids, runs| {
        for i in 0..60 {
            let ids = ids.clone();
            scope.spawn(move || {
                RUNTIME.with(|rt| *rt.borrow_mut() = Some(runtime()));
                let run = RUNTIME.with(|rt| {
                    let rt = rt.borrow();
                    let rt = rt.as_ref().unwrap();
                    let later = ids.clone();
                    rt.spawn(async move {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        let _ = later.next_id().await;
                    });
                    rt.block_on(take_async(&ids, 1 + i % 5))
                });
                runs.lock().unwrap().push(run);
            });
        }
    });
}
