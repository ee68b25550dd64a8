//! The generator engine against in-memory authorities with injected latency and faults.
//! Deterministic: tokio's paused clock wherever time matters.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use gdid_core::{COUNTER_MAX, Gdid};
use gdid_engine::{
    Authority, AuthorityError, Block, BlockGenerator, BlockGeneratorBuilder, CounterState, Error,
    ErrorDetail, FailureCause, GdidProvider, IdGenerator, IdOrder, MemoryAuthority, Sequenced,
    SharedIdGenerator,
    testing::{FaultyAuthority, Latency},
};
use tokio::time::Instant;

type Faulty = Arc<FaultyAuthority<MemoryAuthority>>;

fn faulty(number: u8) -> Faulty {
    Arc::new(FaultyAuthority::new(MemoryAuthority::new(number)))
}

/// Authority 1 in memory, answering after `latency_ms`.
fn slow(latency_ms: u64) -> Arc<FaultyAuthority<MemoryAuthority>> {
    let authority = faulty(1);
    authority.set_latency(Latency::Fixed(ms(latency_ms)));
    authority
}

/// Authority `number` in memory, never answering.
fn hanging(number: u8) -> Faulty {
    let authority = faulty(number);
    authority.set_hang(true);
    authority
}

/// What `ids.next_id()` returned, and after how long.
async fn timed_next_id(ids: &BlockGenerator) -> (Result<Gdid, Error>, Duration) {
    let started = Instant::now();
    let id = ids.next_id().await;
    (id, started.elapsed())
}

/// A generator of `app/<sequence>` over (a handle on) `authority`.
fn over<A: Authority>(sequence: &str, authority: &Arc<A>) -> BlockGeneratorBuilder {
    BlockGenerator::builder("app", sequence).authority(Arc::clone(authority))
}

/// A generator of `app/<sequence>` over `authority`, blocks of `block` ids.
fn blocks_of(block: u64, sequence: &str, authority: impl Authority) -> BlockGeneratorBuilder {
    BlockGenerator::builder("app", sequence)
        .authority(authority)
        .fixed_block_size(block)
}

/// [`blocks_of`], built, with no background prefetch: a block is fetched when the previous one
/// is used up.
fn unprefetched(block: u64, sequence: &str, authority: impl Authority) -> BlockGenerator {
    blocks_of(block, sequence, authority)
        .no_prefetch()
        .build()
        .unwrap()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A burst: 100 callers arrive together, blocks of 10,
/// 30 ms per allocation. Without single flight most of each block is wasted.
#[tokio::test(start_paused = true)]
async fn single_flight_wastes_no_block() {
    let authority = slow(30);
    let ids = unprefetched(10, "scala", Arc::clone(&authority));
    let callers: Vec<_> = (0..100)
        .map(|_| {
            let ids = ids.clone();
            tokio::spawn(async move { ids.next_id().await })
        })
        .collect();
    let mut counters = Vec::new();
    for caller in callers {
        counters.push(caller.await.unwrap().unwrap().counter());
    }
    counters.sort_unstable();
    assert_eq!(
        authority.inner().allocations(),
        10,
        "one allocation per block"
    );
    assert_eq!(
        counters,
        (1..=100).collect::<Vec<u64>>(),
        "100 distinct ids, none skipped"
    );
}

/// With the low-water mark, the next block arrives before the current one runs out: a steady
/// caller never waits on the store.
#[tokio::test(start_paused = true)]
async fn prefetch_keeps_callers_off_the_store() {
    let authority = slow(10);
    let ids = blocks_of(100, "steady", Arc::clone(&authority))
        .low_water_mark(0.5)
        .build()
        .unwrap();
    ids.next_id().await.unwrap(); // the first block is always waited for
    let mut previous = Gdid::ZERO;
    for _ in 0..1_000 {
        tokio::time::sleep(ms(1)).await;
        let before = Instant::now();
        let id = ids.next_id().await.unwrap();
        assert_eq!(
            before.elapsed(),
            Duration::ZERO,
            "a caller waited on the store"
        );
        assert!(id > previous);
        previous = id;
    }
    assert!(authority.inner().allocations() >= 10);
}

/// A prefetch that fails is retried with back-off, not given up: once the store is back the
/// generator refills and callers never see the outage.
#[tokio::test(start_paused = true)]
async fn a_failed_prefetch_is_retried() {
    let authority = faulty(1);
    let ids = blocks_of(1_000, "retry", Arc::clone(&authority))
        .backoff(ms(50), ms(200))
        .build()
        .unwrap();
    ids.next_id().await.unwrap();
    authority.set_down(true);
    for _ in 0..600 {
        ids.next_id().await.unwrap(); // passes the low-water mark: the prefetch fails
    }
    tokio::time::sleep(ms(1_000)).await; // several retries, all failing
    let failures_while_down = ids.stats().authorities[0].failures;
    assert!(
        failures_while_down >= 3,
        "retried {failures_while_down} times"
    );
    authority.set_down(false);
    tokio::time::sleep(ms(250)).await; // the next retry succeeds
    for _ in 0..2_000 {
        ids.next_id().await.unwrap();
    }
    assert_eq!(authority.inner().allocations(), 3);
}

/// The block size follows the rate: at 1,000 ids/s with a 60 s cover and the prefetch at half a
/// block, blocks of 120,000.
#[tokio::test(start_paused = true)]
async fn the_block_size_follows_the_consumption_rate() {
    let ids = BlockGenerator::builder("app", "sized")
        .authority(MemoryAuthority::new(1))
        .build()
        .unwrap();
    for _ in 0..20_000 {
        ids.next_id().await.unwrap();
        tokio::time::sleep(ms(1)).await;
    }
    let stats = ids.stats();
    // Threads' slices count as consumed when they are taken, and the estimate follows a rise at
    // once: it reads a little above the true rate, never below.
    let rate = stats.rate.unwrap();
    assert!((1_000.0..=1_300.0).contains(&rate), "rate {rate}");
    assert!(
        (120_000..=156_000).contains(&stats.block_size),
        "block size {}",
        stats.block_size
    );
    let cover = stats.cover_left.unwrap();
    assert!(cover >= Duration::from_secs(60), "cover left {cover:?}");
}

#[tokio::test(start_paused = true)]
async fn next_ids_returns_runs_of_consecutive_ids() {
    let ids = unprefetched(100, "batch", MemoryAuthority::new(2));
    let single = ids.next_id().await.unwrap();
    let batch = ids.next_ids(250).await.unwrap();
    assert_eq!(batch.len(), 250);
    let all: Vec<Gdid> = batch.iter().collect();
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    assert!(!all.contains(&single));
    for run in batch.runs() {
        assert_eq!(run.first.authority(), 2);
    }
    assert!(batch.runs().len() >= 3, "250 ids span three blocks of 100");
    assert!(matches!(
        ids.next_ids(0).await.map_err(Error::into_detail),
        Err(ErrorDetail::InvalidCount { .. })
    ));
    assert!(matches!(
        ids.next_ids(COUNTER_MAX + 2)
            .await
            .map_err(Error::into_detail),
        Err(ErrorDetail::InvalidCount { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn next_block_is_contiguous_and_dedicated_when_the_cache_cannot_hold_it() {
    let authority = faulty(3);
    let ids = unprefetched(100, "contiguous", Arc::clone(&authority));
    let first = ids.next_id().await.unwrap();
    let small = ids.next_block(10).await.unwrap();
    assert_eq!(small.len(), 10);
    assert_eq!(
        authority.inner().allocations(),
        1,
        "served from the current block"
    );
    let big = ids.next_block(1_000).await.unwrap();
    assert_eq!((big.len(), big.authority()), (1_000, 3));
    assert_eq!(ids.stats().dedicated_allocations, 1);
    assert!(!small.contains(first) && !big.contains(first));
    let next = ids.next_id().await.unwrap();
    assert!(!small.contains(next) && !big.contains(next));
    assert_eq!(
        next.counter(),
        first.counter() + 1,
        "the cached block was left alone"
    );
}

/// Authorities are tried in order; a failing one is skipped, and used again after its back-off.
#[tokio::test(start_paused = true)]
async fn failover_and_failback() {
    let preferred = faulty(1);
    let fallback = faulty(2);
    let ids = over("failover", &preferred)
        .authority(Arc::clone(&fallback))
        .fixed_block_size(10)
        .no_prefetch()
        .backoff(Duration::from_secs(1), Duration::from_secs(1))
        .build()
        .unwrap();
    assert_eq!(ids.next_id().await.unwrap().authority(), 1);
    preferred.set_down(true);
    let mut seen = Vec::new();
    for _ in 0..30 {
        seen.push(ids.next_id().await.unwrap().authority());
    }
    assert!(seen.ends_with(&[2; 20]), "{seen:?}");
    assert!(ids.stats().authorities[0].backing_off);
    preferred.set_down(false);
    tokio::time::sleep(Duration::from_secs(2)).await;
    for _ in 0..20 {
        ids.next_id().await.unwrap();
    }
    assert_eq!(
        ids.next_id().await.unwrap().authority(),
        1,
        "used again after its back-off"
    );
}

/// All authorities down and nothing cached: a typed error naming each cause, within the timeout.
#[tokio::test(start_paused = true)]
async fn all_authorities_down_is_a_typed_error_naming_each() {
    let a = faulty(1);
    let b = faulty(2);
    a.set_down(true);
    b.set_down(true);
    let ids = over("down", &a)
        .authority(Arc::clone(&b))
        .request_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = ids.next_id().await.unwrap_err();
    assert!(started.elapsed() <= Duration::from_secs(5));
    let ErrorDetail::Unavailable { causes, .. } = err.detail() else {
        panic!("unexpected {err:?}");
    };
    assert_eq!(
        causes.iter().map(|c| c.authority).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(
        err.to_string(),
        "no id for app/down: authority 1 (faulty memory): store error: injected fault: the store \
         is down; authority 2 (faulty memory): store error: injected fault: the store is down"
    );
    // And the service comes back by itself.
    a.set_down(false);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(ids.next_id().await.unwrap().authority(), 1);
}

/// Without hedging, a hanging authority is abandoned after the allocation timeout; the next one
/// serves.
#[tokio::test(start_paused = true)]
async fn a_hanging_authority_fails_over_within_the_timeout() {
    let ids = over("hang", &hanging(1))
        .authority(faulty(2))
        .hedge_margin(None)
        .allocation_timeout(Duration::from_secs(2))
        .request_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let (id, took) = timed_next_id(&ids).await;
    assert_eq!(id.unwrap().authority(), 2);
    assert_eq!(took, Duration::from_secs(2));
}

/// A store that hangs before it ever answered (at open): the next authority is asked after five
/// hedge margins, not after the allocation timeout.
#[tokio::test(start_paused = true)]
async fn a_store_hanging_from_the_start_is_hedged() {
    let ids = over("hang-at-open", &hanging(1))
        .authority(faulty(2))
        .hedge_margin(Some(ms(20)))
        .build()
        .unwrap();
    let (id, took) = timed_next_id(&ids).await;
    assert_eq!(id.unwrap().authority(), 2);
    assert_eq!(took, ms(100));
    assert_eq!(ids.stats().hedges, 1);
}

/// One of two authorities hangs mid-run: blocks of 50, 1 ms per allocation, 20 ids every
/// millisecond, the first authority hanging from 1 s to 5 s (a hung request lives on until the
/// allocation timeout, 3 s, and the authority is probed again after it). No caller waits more
/// than 100 ms (3,003 ms without hedging), none gets an error, no id repeats, and the late blocks
/// are kept or given back: no id is wasted.
#[tokio::test(start_paused = true)]
async fn a_hung_authority_stalls_no_caller() {
    let (first, second) = (faulty(1), faulty(2));
    for authority in [&first, &second] {
        authority.set_latency(Latency::Fixed(ms(1)));
    }
    let ids = over("hung", &first)
        .authority(Arc::clone(&second))
        .fixed_block_size(50)
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    let mut longest = Duration::ZERO;
    let mut tick = tokio::time::interval(ms(1));
    let started = Instant::now();
    for n in 0..7_000 {
        tick.tick().await;
        match n {
            1_000 => first.set_hang(true),
            5_000 => first.set_hang(false),
            _ => {}
        }
        for _ in 0..20 {
            let (id, took) = timed_next_id(&ids).await;
            let id = id.unwrap_or_else(|e| panic!("at {:?}: {e}", started.elapsed()));
            assert!(seen.insert(id), "{id} issued twice");
            longest = longest.max(took);
        }
    }
    let stats = ids.stats();
    assert!(longest <= ms(100), "a caller waited {longest:?}");
    assert!(stats.hedges >= 2, "{stats:?}"); // at the hang, and at the probe after it
    assert_eq!(stats.hedged_ids_wasted, 0, "{stats:?}");
    assert!(first.attempts() > 0 && second.attempts() > 0);
    println!(
        "longest wait {longest:?}, {} hedges, {} ids wasted",
        stats.hedges, stats.hedged_ids_wasted
    );
}

/// Every authority hangs: the caller gets a timeout error at the request timeout, not a hang.
#[tokio::test(start_paused = true)]
async fn only_hanging_authorities_give_a_timeout_error() {
    let ids = over("hang-all", &hanging(1))
        .allocation_timeout(Duration::from_secs(30))
        .request_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let (err, took) = timed_next_id(&ids).await;
    assert_eq!(took, Duration::from_secs(5));
    let err = err.unwrap_err();
    assert!(
        matches!(err.detail(), ErrorDetail::Timeout { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no id for app/hang-all within 5s: no authority answered"
    );
}

/// 8 tasks × 100k ids on a multi-threaded runtime, random latency and 10 % failures: no duplicate.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_duplicate_under_concurrency_latency_and_failures() {
    let flaky = |n| {
        Arc::new(
            FaultyAuthority::new(MemoryAuthority::new(n))
                .seed(u64::from(n))
                .latency(Latency::Uniform(Duration::ZERO, ms(2)))
                .failure_rate(0.1)
                .lost_reply_rate(0.05),
        )
    };
    let ids = BlockGenerator::builder("app", "stress")
        .authority(flaky(1))
        .authority(flaky(2))
        .block_size(50, 5_000)
        .backoff(ms(1), ms(20))
        .build()
        .unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let ids = ids.clone();
            tokio::spawn(async move {
                let mut mine = Vec::with_capacity(100_000);
                while mine.len() < 100_000 {
                    if task % 2 == 0 {
                        mine.push(ids.next_id().await.unwrap());
                    } else {
                        mine.extend(ids.next_ids(37).await.unwrap().iter());
                    }
                }
                mine
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut total = 0;
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(!id.is_zero());
            total += 1;
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert!(total >= 800_000);
}

/// A steady 100k ids/s with a 60 s cover rides out a 30 s outage with no caller error, even when
/// the outage starts at the worst moment: just as the prefetch at the low-water mark goes out.
#[tokio::test(start_paused = true)]
async fn a_30_second_outage_at_100k_ids_per_second_is_invisible() {
    const PER_MS: u64 = 100;
    let authority = slow(10);
    let ids = over("outage", &authority)
        .cover(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut previous = Gdid::ZERO;
    let mut take = async |ms_of_service: u64| {
        for _ in 0..ms_of_service {
            for _ in 0..PER_MS {
                let id = ids.next_id().await.expect("no caller error");
                assert!(
                    id > previous,
                    "one thread, one authority: strictly increasing"
                );
                previous = id;
            }
            tokio::time::sleep(ms(1)).await;
        }
    };
    // Warm up until blocks are sized for the rate, then serve until the ids in hand fall to the
    // low-water mark: the prefetch for the next block is in flight (10 ms latency) right now.
    take(10_000).await;
    // 100k ids/s × 60 s / 0.5 = 12M; the measured rate wobbles around 100k/s.
    let full_block = ids.stats().block_size;
    assert!(full_block >= 11_500_000, "warm block size {full_block}");
    while ids.stats().ids_in_hand > full_block / 2 {
        take(1).await;
    }
    authority.set_down(true);
    let failures_before = ids.stats().authorities[0].failures;
    take(30_000).await; // 30 s of outage at 100k ids/s
    let failures = ids.stats().authorities[0].failures - failures_before;
    assert!(
        failures >= 3,
        "the prefetch kept retrying through the outage ({failures} failures)"
    );
    authority.set_down(false);
    take(60_000).await; // the store is back: refilled in the background
    let stats = ids.stats();
    assert!(
        stats.cover_left.unwrap() >= Duration::from_secs(60),
        "{stats:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_era_rolls_over_at_counter_max() {
    let near_end = MemoryAuthority::new(1).with_state(
        "app",
        "rollover",
        CounterState {
            era: 5,
            next: COUNTER_MAX - 24,
        },
    );
    let ids = unprefetched(10, "rollover", near_end);
    let all: Vec<Gdid> = ids.next_ids(40).await.unwrap().iter().collect();
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(all[0].to_string(), format!("5:1:{}", COUNTER_MAX - 24));
    assert_eq!(all[19].to_string(), format!("5:1:{}", COUNTER_MAX - 5));
    assert_eq!(
        all[20].to_string(),
        "6:1:0",
        "the 5 counters left could not hold a block"
    );
    assert_eq!(all[39].to_string(), "6:1:19");
}

/// An authority that answers with the blocks it is given, then the last one forever.
struct Scripted {
    blocks: std::sync::Mutex<Vec<Block>>,
}

impl Authority for Scripted {
    fn number(&self) -> u8 {
        1
    }

    fn label(&self) -> String {
        "scripted".into()
    }

    async fn allocate(&self, _: &str, _: &str, _: u64) -> Result<Block, AuthorityError> {
        let mut blocks = self.blocks.lock().unwrap();
        Ok(if blocks.len() > 1 {
            blocks.remove(0)
        } else {
            blocks[0]
        })
    }
}

/// Blocks that would issue ZERO cannot be made (`Block`'s fields are private, its constructors
/// check it); blocks that repeat ids are refused, and never served from.
#[tokio::test(start_paused = true)]
async fn zero_and_repeated_blocks_are_refused() {
    assert!(
        matches!(Block::new(0, 1, 0, 2), Err(AuthorityError::InvalidBlock(_))),
        "a block that would issue ZERO"
    );
    let block = |start| Block::new(0, 1, start, 2).unwrap();
    let ids = BlockGenerator::builder("app", "scripted")
        .authority(Scripted {
            blocks: std::sync::Mutex::new(vec![
                block(1), // fine
                block(2), // overlaps the previous block: the counter went backwards
                block(3), // fine, and then repeated forever
            ]),
        })
        .fixed_block_size(2)
        .no_prefetch()
        .backoff(ms(1), ms(1))
        .request_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let mut counters = Vec::new();
    for _ in 0..2 {
        counters.push(ids.next_id().await.unwrap().counter());
    }
    // A counter that went backwards is the store's to repair: the caller is told at once, not
    // after the request timeout, and the next call asks again.
    let started = Instant::now();
    let backwards = ids.next_id().await.unwrap_err();
    assert_eq!(started.elapsed(), Duration::ZERO, "{backwards}");
    assert_eq!(
        backwards.kind(),
        gdid_engine::ErrorKind::Corrupt,
        "{backwards}"
    );
    tokio::time::sleep(ms(1)).await; // the back-off
    for _ in 0..2 {
        counters.push(ids.next_id().await.unwrap().counter());
    }
    assert_eq!(counters, [1, 2, 3, 4]);
    assert_eq!(ids.stats().authorities[0].failures, 1);
    let err = ids.next_id().await.unwrap_err();
    let ErrorDetail::Unavailable { causes, .. } = err.detail() else {
        panic!("{err:?}")
    };
    assert!(
        matches!(causes[0].cause, FailureCause::WentBackwards { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("counter went backwards"), "{err}");
}

/// Commits at once, then answers after the delay given for that call (in call order).
struct SlowReplies {
    inner: MemoryAuthority,
    delays: std::sync::Mutex<Vec<Duration>>,
}

impl Authority for SlowReplies {
    fn number(&self) -> u8 {
        self.inner.number()
    }

    fn label(&self) -> String {
        format!("slow replies of {}", self.inner.label())
    }

    async fn allocate(&self, scope: &str, seq: &str, size: u64) -> Result<Block, AuthorityError> {
        let block = self.inner.allocate(scope, seq, size).await;
        let delay = {
            let mut delays = self.delays.lock().unwrap();
            if delays.is_empty() {
                Duration::ZERO
            } else {
                delays.remove(0)
            }
        };
        tokio::time::sleep(delay).await;
        block
    }
}

/// A prefetch and a `next_block` in flight together may be answered out of order; both blocks are
/// good and neither may be refused as "went backwards".
#[tokio::test(start_paused = true)]
async fn concurrent_allocations_answered_out_of_order_are_accepted() {
    let ids = BlockGenerator::builder("app", "out-of-order")
        .authority(SlowReplies {
            inner: MemoryAuthority::new(1),
            // initial block, the prefetch (slow), the dedicated block (fast)
            delays: std::sync::Mutex::new(vec![Duration::ZERO, ms(50), ms(1)]),
        })
        .fixed_block_size(10)
        .low_water_mark(0.5)
        .build()
        .unwrap();
    for _ in 0..6 {
        ids.next_id().await.unwrap(); // passes the low-water mark: the prefetch (11..=20) goes out
    }
    tokio::time::sleep(ms(1)).await; // the prefetch task runs: committed, its reply on the way
    let dedicated = ids.next_block(100).await.unwrap(); // committed after it, answered first
    assert_eq!((dedicated.start(), dedicated.len()), (21, 100));
    let rest: Vec<u64> = ids
        .next_ids(14)
        .await
        .unwrap()
        .iter()
        .map(|g| g.counter())
        .collect();
    assert_eq!(rest, (7..=20).collect::<Vec<u64>>());
    assert_eq!(ids.stats().authorities[0].failures, 0);
}

/// A current-thread runtime on tokio's paused clock: timers fire in order of their deadlines
/// however busy the machine is (the clock moves only when every task waits).
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A generator outlives the runtime its allocation ran on (shut down mid-allocation): the next
/// caller, on another runtime, must still get ids instead of waiting on an allocation that died.
#[test]
fn an_allocation_cut_short_by_a_runtime_shutdown_does_not_wedge_the_generator() {
    let authority = slow(200);
    let ids = over("runtimes", &authority)
        .request_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let first = paused_runtime();
    let started = first.block_on(async {
        let ids = ids.clone();
        tokio::time::timeout(ms(50), ids.next_id()).await
    });
    assert!(
        started.is_err(),
        "the caller gave up while the allocation was in flight"
    );
    drop(first); // the allocation task dies with its runtime
    let second = paused_runtime();
    let id = second
        .block_on(ids.next_id())
        .expect("a new allocation on the new runtime");
    assert_eq!(id.authority(), 1);
}

/// A prefetch spawned on a runtime that never polls it (the caller never yields: its ids come from
/// memory) and is then shut down must not leave the next caller waiting on it.
#[test]
fn a_prefetch_never_polled_before_its_runtime_shut_down_does_not_wedge_the_generator() {
    let ids = blocks_of(10, "unpolled", MemoryAuthority::new(1))
        .request_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let first = paused_runtime();
    first.block_on(async {
        for _ in 0..6 {
            ids.next_id().await.unwrap(); // the 6th passes the low-water mark: prefetch spawned
        }
    });
    drop(first); // before the prefetch task was ever polled
    let second = paused_runtime();
    let batch = second
        .block_on(ids.next_ids(10))
        .expect("ids from a new allocation");
    assert_eq!(batch.len(), 10);
}

struct Customer;

impl Sequenced for Customer {
    const SCOPE: &'static str = "shop";
    const SEQUENCE: &'static str = "customer";
}

#[tokio::test(start_paused = true)]
async fn the_provider_keeps_one_generator_per_sequence() {
    let provider = GdidProvider::builder()
        .authority(MemoryAuthority::new(7))
        .build()
        .unwrap();
    let a = provider.next_for::<Customer>().await.unwrap();
    let b = provider.next_id("shop", "customer").await.unwrap();
    let other = provider.next_id("shop", "order").await.unwrap();
    assert_eq!(
        b.counter(),
        a.counter() + 1,
        "the same generator serves both calls"
    );
    assert_eq!(other.counter(), 1, "another sequence has its own counter");
    assert!(matches!(
        provider
            .next_id("shop", "bad name")
            .await
            .map_err(Error::into_detail),
        Err(ErrorDetail::InvalidName(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn strategies_can_be_swapped_at_run_time() {
    async fn take_three(ids: &SharedIdGenerator<Gdid>) -> Vec<Gdid> {
        let mut out = vec![ids.next_id().await.unwrap()];
        out.extend(ids.next_ids(2).await.unwrap().iter());
        out
    }
    let per_thread: SharedIdGenerator<Gdid> = Arc::new(
        BlockGenerator::builder("app", "dyn")
            .authority(MemoryAuthority::new(1))
            .build()
            .unwrap(),
    );
    let strict: SharedIdGenerator<Gdid> = Arc::new(
        BlockGenerator::builder("app", "dyn")
            .authority(MemoryAuthority::new(2))
            .order(IdOrder::Strict)
            .build()
            .unwrap(),
    );
    for (ids, authority) in [(per_thread, 1), (strict, 2)] {
        let got = take_three(&ids).await;
        assert_eq!(
            got.iter().map(|g| g.counter()).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert!(got.iter().all(|g| g.authority() == authority));
    }
}

#[tokio::test(start_paused = true)]
async fn stats_count_what_was_issued() {
    let ids = blocks_of(1_000, "stats", MemoryAuthority::new(1))
        .build()
        .unwrap();
    for _ in 0..1_234 {
        ids.next_id().await.unwrap();
    }
    let stats = ids.stats();
    assert_eq!(stats.issued, 1_234);
    assert_eq!(stats.allocations, 2);
    assert_eq!(stats.ids_in_hand, 2_000 - 1_234);
}

#[test]
fn bad_configurations_are_typed_errors() {
    let err = |b: gdid_engine::BlockGeneratorBuilder| b.build().unwrap_err().to_string();
    assert_eq!(
        err(BlockGenerator::builder("a", "b")),
        "invalid generator configuration: no authority: add at least one"
    );
    assert_eq!(
        err(BlockGenerator::builder("a", "b")
            .authority(MemoryAuthority::new(1))
            .authority(MemoryAuthority::new(1))),
        "invalid generator configuration: authority number 1 is given twice"
    );
    assert_eq!(
        err(BlockGenerator::builder("a", "b")
            .authority(MemoryAuthority::new(1))
            .block_size(10, 5)),
        "invalid generator configuration: block sizes min 10 and max 5 must satisfy 1 <= min <= max"
    );
    assert_eq!(
        err(BlockGenerator::builder("a b", "c").authority(MemoryAuthority::new(1))),
        "invalid scope name \"a b\": ' ' at character 1 is not a letter, digit, '_', '.' or '-'"
    );
}

/// A caller outside any tokio runtime that would wait for another caller's allocation gets the
/// "needs a tokio runtime" error, not a panic in tokio's timer.
#[test]
fn waiting_outside_a_runtime_is_an_error_not_a_panic() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let authority = hanging(1);
    let ids = over("outside", &authority).build().unwrap();
    let waiting = ids.clone();
    // An allocation under way, started by a caller inside the runtime.
    runtime.spawn(async move { waiting.next_id().await });
    let began = Instant::now();
    while authority.attempts() == 0 {
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "no allocation began"
        );
        std::thread::sleep(Duration::from_millis(1));
    }

    let mut call = std::pin::pin!(ids.next_id());
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let polled = std::future::Future::poll(call.as_mut(), &mut context);
    match polled.map_err(Error::into_detail) {
        std::task::Poll::Ready(Err(ErrorDetail::InvalidConfig { reason })) => {
            assert!(reason.contains("tokio runtime"), "{reason}");
        }
        other => panic!("expected the no-runtime error, got {other:?}"),
    }
    runtime.shutdown_background();
}

/// A refusal no authority will change (a second spelling of a stored name) is the caller's
/// error, `InvalidName`, not an outage to wait out.
#[tokio::test]
async fn a_name_the_store_spells_otherwise_is_refused_as_such() {
    let authority = Arc::new(MemoryAuthority::new(1));
    authority.allocate("shop", "Orders", 5).await.unwrap();
    let ids = BlockGenerator::builder("shop", "orders")
        .shared_authority(authority.clone())
        .build()
        .unwrap();
    match ids.next_id().await.map_err(Error::into_detail) {
        Err(ErrorDetail::InvalidName(name)) => {
            assert!(name.reason.contains("differs only in case"), "{name}")
        }
        other => panic!("{other:?}"),
    }
}
