//! `gdid::blocking`: ids without async on every store, from several threads at once, from plain
//! code and from inside a tokio runtime; the background prefetch goes on between calls; the
//! runtime's thread ends when the last handle is dropped.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gdid::Gdid;
use gdid::blocking::{BlockGenerator, Store};
use gdid_testkit::{fresh, sqlite_url};

const THREADS: usize = 4;
const PER_THREAD: usize = 3_000;

/// `THREADS` threads take ids of one generator at once (small blocks: many refills), in the
/// default per-thread order: each thread's ids increase, no id is issued twice, every id carries
/// the store's number; then a one-at-a-time counter counts 1, 2, 3.
fn ids_from_threads(url: &str) {
    let store = Store::open(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let ids = store
        .block_generator("shop", &fresh("threads"))
        .configure(|ids| ids.block_size(16, 256))
        .build()
        .expect("build");
    let per_thread = from_threads(&ids);
    let mut all = HashSet::new();
    for ids in &per_thread {
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "{url}: a thread's ids do not increase"
        );
        for id in ids {
            assert_eq!(Some(id.authority()), store.authority_number(), "{url}");
            assert!(all.insert(*id), "{url}: {id} issued twice");
        }
    }
    assert_eq!(all.len(), THREADS * PER_THREAD);
    let batch = ids.next_ids(1_000).expect("next_ids");
    assert_eq!(batch.len(), 1_000);
    assert!(
        batch.iter().all(|id| all.insert(id)),
        "{url}: a batch repeats"
    );

    let counter = store.one_at_a_time("shop", &fresh("counter"));
    let counted = [(); 3].map(|()| counter.next_id().expect("counter"));
    assert_eq!(counted, [1, 2, 3], "{url}");
}

/// `PER_THREAD` ids from each of `THREADS` threads calling `ids` at once.
fn from_threads(ids: &BlockGenerator) -> Vec<Vec<Gdid>> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                let ids = ids.clone();
                scope.spawn(move || {
                    (0..PER_THREAD)
                        .map(|_| ids.next_id().expect("next_id"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    })
}

/// The default per-thread order from several threads at once: each thread's ids increase and
/// none repeats (threads that exit hand their slices to the threads that come after them).
#[test]
fn per_thread_order_from_threads() {
    for _ in 0..30 {
        let store = Store::open("memory:").expect("open");
        let ids = store
            .block_generator("shop", "orders")
            .configure(|ids| ids.block_size(16, 256))
            .build()
            .expect("build");
        let mut all = HashSet::new();
        for ids in from_threads(&ids) {
            assert!(ids.windows(2).all(|w| w[0] < w[1]));
            assert!(ids.into_iter().all(|id| all.insert(id)), "an id repeats");
        }
    }
}

/// How long a wait for an event may last before the test calls it a hang: far beyond what any
/// of these events takes, so that a loaded machine cannot fail a test.
const HANG: Duration = Duration::from_secs(120);

/// The next block is fetched in the background while no call is made: the runtime runs
/// between calls.
fn prefetch_between_calls(url: &str) {
    let store = Store::open(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let ids = store
        .block_generator("shop", &fresh("prefetch"))
        .configure(|ids| ids.fixed_block_size(100).low_water_mark(0.5))
        .build()
        .expect("build");
    for _ in 0..60 {
        ids.next_id().expect("next_id"); // past the low-water mark: a prefetch starts
    }
    // A guard against a hang, not a measure: the prefetch is waited for, however slow.
    let deadline = Instant::now() + HANG;
    while ids.get_ref().stats().allocations < 2 {
        assert!(
            Instant::now() < deadline,
            "{url}: no prefetch between calls: {:?}",
            ids.get_ref().stats()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ids.get_ref().stats().ids_in_hand > 100, "{url}");
}

gdid_testkit::on_every_store!(blocking ids_from_threads("gdid_blocking"):
    threads_on_sqlite, threads_on_mariadb, threads_on_postgres, threads_on_mongodb);

gdid_testkit::on_every_store!(blocking prefetch_between_calls("gdid_blocking"):
    prefetch_on_sqlite, prefetch_on_mariadb, prefetch_on_postgres, prefetch_on_mongodb);

#[test]
fn threads_on_memory() {
    ids_from_threads("memory:");
}

/// The `/proc` entry of the runtime's worker thread (the thread its tasks run on).
fn worker_thread(store: &Store) -> PathBuf {
    let task = store.block_on(async {
        tokio::spawn(async { std::fs::read_link("/proc/thread-self").expect("/proc/thread-self") })
            .await
            .expect("task")
    });
    PathBuf::from("/proc").join(task)
}

/// Waits for the thread of `task` (a `/proc` entry) to end: `false` if it has not after
/// [`HANG`].
fn ends(task: &std::path::Path) -> bool {
    let deadline = Instant::now() + HANG;
    while task.exists() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// The runtime lives while a generator does, even with its store dropped; dropping the last
/// handle ends its thread (from plain code the drop joins it; its `/proc` entry may outlive
/// the join by a moment).
#[cfg(feature = "sqlite")]
#[test]
fn drop_ends_the_runtime() {
    let store = Store::open(&sqlite_url("gdid_blocking_drop")).expect("open");
    let worker = worker_thread(&store);
    assert!(worker.exists(), "{}", worker.display());
    let name = std::fs::read_to_string(worker.join("comm")).expect("comm");
    assert_eq!(name.trim(), "gdid-blocking");
    let ids = store
        .block_generator("shop", "orders")
        .build()
        .expect("build");
    let first = ids.next_id().expect("next_id");
    drop(store);
    assert!(ids.next_id().expect("the store's runtime is alive") > first);
    drop(ids);
    assert!(
        ends(&worker),
        "the runtime's thread outlives the last handle"
    );
}

/// Inside a current-thread runtime (one thread for everything: the blocking call must not need
/// it), the blocking store works, and its drop ends its thread soon after.
#[tokio::test(flavor = "current_thread")]
async fn works_inside_a_current_thread_runtime() {
    let store = Store::open("memory:").expect("open");
    let ids = store
        .block_generator("shop", "orders")
        .build()
        .expect("build");
    let a = ids.next_id().expect("next_id");
    let b = ids.next_id().expect("next_id");
    assert!(a < b);
    // The async side, awaited on this (other) runtime.
    let c = ids.get_ref().next_id().await.expect("async next_id");
    assert!(b < c);
    let worker = worker_thread(&store);
    drop((store, ids)); // no panic: tokio does not allow waiting here, and it is not waited for
    assert!(ends(&worker), "the runtime's thread does not end");
}

/// Inside a multi-thread runtime too, from a task, on SQLite (sockets and files of the
/// blocking store's runtime, reached from another runtime's thread).
#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_inside_a_multi_thread_runtime() {
    let url = sqlite_url("gdid_blocking_in_runtime");
    let store = tokio::spawn(async move { Store::open(&url) })
        .await
        .unwrap()
        .expect("open");
    let ids = store
        .block_generator("shop", "orders")
        .build()
        .expect("build");
    let got = tokio::spawn(async move { (0..1_000).map(|_| ids.next_id()).collect::<Vec<_>>() })
        .await
        .unwrap();
    let got: Vec<Gdid> = got.into_iter().map(|id| id.expect("next_id")).collect();
    assert!(got.windows(2).all(|w| w[0] < w[1]));
}

/// A blocking call on the store's own runtime thread would wait for itself: it panics, with
/// the reason, instead of hanging.
#[test]
fn a_call_on_the_runtime_thread_panics() {
    let store = Store::open("memory:").expect("open");
    let ids = store
        .block_generator("shop", "orders")
        .build()
        .expect("build");
    let joined = store.block_on(async move { tokio::spawn(async move { ids.next_id() }).await });
    let panic = joined.expect_err("the call returned").into_panic();
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(message.contains("would wait for itself"), "{message}");
}

/// Options reach the store; a bad URL is the async API's typed error.
#[test]
fn options_and_errors() {
    let store = Store::options().authority(5).open("memory:").expect("open");
    assert_eq!(store.authority_number(), Some(5));
    let ids = store
        .block_generator("shop", "orders")
        .build()
        .expect("build");
    assert_eq!(ids.next_id().expect("next_id").authority(), 5);
    let refused = Store::open("nosuch://x").expect_err("an unknown scheme");
    assert!(
        matches!(refused, gdid::StoreError::UnsupportedScheme { .. }),
        "{refused:?}"
    );
    let refused = Store::options()
        .authority(16)
        .open("memory:")
        .expect_err("number 16");
    assert!(
        matches!(refused, gdid::StoreError::AuthorityNumber { .. }),
        "{refused:?}"
    );
}

/// Several SQLite stores opened together without async: numbered as the async `open_all`
/// numbers them (the numbers asked for, recorded in each file), one generator failing over
/// between them, and the numbers kept when the files are opened again in another order.
#[cfg(feature = "sqlite")]
#[test]
fn open_all_numbers_the_stores_and_keeps_their_numbers() {
    let urls = [
        sqlite_url("gdid_blocking_all_a"),
        sqlite_url("gdid_blocking_all_b"),
    ];
    let stores = Store::options()
        .authorities(&[4, 9])
        .open_all(&urls)
        .expect("open_all");
    assert_eq!(stores.numbers(), [Some(4), Some(9)]);
    assert!(stores.left_out().is_empty());
    let ids = stores
        .block_generator("shop", &fresh("all"))
        .build()
        .expect("build");
    assert_eq!(ids.next_id().expect("next").authority(), 4);
    drop((ids, stores));

    let reversed = [urls[1].clone(), urls[0].clone()];
    let again = Store::open_all(&reversed).expect("open_all again");
    assert_eq!(again.numbers(), [Some(9), Some(4)]);
}
