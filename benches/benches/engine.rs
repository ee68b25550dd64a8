//! ns per id through each generator's public API, side by side in one run: gdid's
//! `BlockGenerator` (`next_id().await`, per-thread and strict order, the synchronous
//! `try_next_id()`, and `next_ids` amortized) and gdid-uuid's v7, v4 and v6 generators, against
//! uuid v7 and v4, ulid, bson ObjectId and ferroid's snowflake; on 1 thread and on 2. The floor:
//! an uncontended `AtomicU64::fetch_add` (each thread its own counter, on its own cache line), the
//! cost of one atomic read-modify-write.
//!
//! Then `many_sequences`: ids taken round-robin from 1 to 10,000 generators on one thread; and
//! `many_sequences_2_threads`: the same on two threads at once, each round-robin over all the
//! generators (as the two worker threads of a service, where any request, for any sequence, may
//! land on either), ns per id of the whole process. And `ramp_up`: 10,000 new generators with the
//! default block sizing, round-robin on one thread, their first 1,000 ids each (`fresh`: blocks
//! growing from the minimum) against the next 1,000 each (`steady`).
//!
//! `cargo bench -p gdid-benches --bench engine`

use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::MonotonicClock;
use gdid_engine::{BlockGenerator, IdGenerator, IdOrder, MemoryAuthority};
use gdid_uuid::{NodeId, UuidV4Generator, UuidV6Generator, UuidV7Generator};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// A warm generator on an in-memory authority (the store's latency is off the measured path:
/// allocations happen in the background, see the latency benchmark for them).
fn gdid_generator(order: IdOrder) -> BlockGenerator {
    BlockGenerator::builder("bench", "ids")
        .authority(MemoryAuthority::new(1))
        .order(order)
        .build()
        .unwrap()
}

/// Times `iters` calls of `id` on each of `threads` threads started together; returns the wall
/// time divided by `threads`, so that the figure is the time per id of the whole process.
fn on_threads<F>(threads: u32, iters: u64, make: impl Fn() -> F + Sync) -> Duration
where
    F: FnMut(u64),
{
    let barrier = Barrier::new(threads as usize + 1);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut run = make();
                barrier.wait();
                run(iters);
            });
        }
        barrier.wait();
        let started = Instant::now();
        // Scoped threads are joined when the scope ends; time until then.
        started
    })
    .elapsed()
        / threads
}

/// As [`on_threads`], but the clock stops once every thread's run has returned, before the
/// threads exit: a thread that served 10,000 generators hands 10,000 slots back as it exits (its
/// thread-local destructor), which is no id's cost.
///
/// Each run is dropped as soon as it returns, with the runtime it holds: a block allocation that
/// runtime spawned, and that no thread drives any more, goes with it, and the generator's next
/// caller starts another. Kept until the end, it would leave the other thread waiting for it
/// until the request timeout.
fn on_threads_until_done<F>(threads: u32, iters: u64, make: impl Fn() -> F + Sync) -> Duration
where
    F: FnMut(u64),
{
    let start = Barrier::new(threads as usize + 1);
    let done = Barrier::new(threads as usize + 1);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut run = make();
                start.wait();
                run(iters);
                drop(run);
                done.wait();
            });
        }
        start.wait();
        let started = Instant::now();
        done.wait();
        started.elapsed() / threads
    })
}

/// A value alone on its cache lines (128 bytes, as crossbeam's `CachePadded` on x86-64).
#[repr(align(128))]
struct CachePadded<T>(T);

/// Calls `make` `iters` times, keeping each result alive.
fn repeat<T>(iters: u64, mut make: impl FnMut() -> T) {
    for _ in 0..iters {
        black_box(make());
    }
}

/// `next_id().await` on `generator`, `iters` times, in a runtime of the calling thread.
fn next_id_runner<G: IdGenerator>(generator: G) -> impl FnMut(u64) {
    let rt = runtime();
    move |iters| {
        rt.block_on(async {
            for _ in 0..iters {
                black_box(generator.next_id().await.unwrap());
            }
        })
    }
}

/// `BlockGenerator::next_id().await` (the inherent method, which inlines into the caller; the
/// `IdGenerator` impl is a call into gdid-engine that moves the whole future out).
fn gdid_runner(generator: &BlockGenerator) -> impl FnMut(u64) + use<> {
    let generator = generator.clone();
    let rt = runtime();
    move |iters| {
        rt.block_on(async {
            for _ in 0..iters {
                black_box(generator.next_id().await.unwrap());
            }
        })
    }
}

fn per_id(c: &mut Criterion) {
    let per_thread = gdid_generator(IdOrder::PerThread);
    let strict = gdid_generator(IdOrder::Strict);
    let snowflake =
        AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(1, MonotonicClock::default());
    let uuid_v7 = UuidV7Generator::new();
    let uuid_v4 = UuidV4Generator::new();
    let uuid_v6 = UuidV6Generator::new(NodeId::random());

    for threads in [1u32, 2] {
        let mut group = c.benchmark_group(format!("per_id/{threads}_thread"));
        group.throughput(Throughput::Elements(1));
        let id = |name: &str| BenchmarkId::new(name, threads);

        group.bench_function(id("gdid_next_id"), |b| {
            b.iter_custom(|iters| on_threads(threads, iters, || gdid_runner(&per_thread)))
        });
        group.bench_function(id("atomic_fetch_add"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    // One counter per thread: uncontended.
                    let counter = Box::new(CachePadded(AtomicU64::new(0)));
                    move |iters| repeat(iters, || counter.0.fetch_add(1, Ordering::Relaxed))
                })
            })
        });
        group.bench_function(id("gdid_try_next_id"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    let generator = per_thread.clone();
                    let rt = runtime();
                    // Synchronous while a block is in hand; `next_id().await` when it is not.
                    move |iters| {
                        repeat(iters, || match generator.try_next_id() {
                            Some(id) => id,
                            None => rt.block_on(generator.next_id()).unwrap(),
                        })
                    }
                })
            })
        });
        group.bench_function(id("gdid_next_id_strict"), |b| {
            b.iter_custom(|iters| on_threads(threads, iters, || gdid_runner(&strict)))
        });
        group.bench_function(id("gdid_next_ids_1000_per_id"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    let generator = per_thread.clone();
                    let rt = runtime();
                    move |iters: u64| {
                        rt.block_on(async {
                            let mut left = iters;
                            while left > 0 {
                                let n = left.min(1000);
                                black_box(generator.next_ids(n).await.unwrap());
                                left -= n;
                            }
                        })
                    }
                })
            })
        });
        group.bench_function(id("gdid_uuid_v7_generate"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    |iters| repeat(iters, || uuid_v7.generate())
                })
            })
        });
        group.bench_function(id("gdid_uuid_v7_next_id"), |b| {
            b.iter_custom(|iters| on_threads(threads, iters, || next_id_runner(&uuid_v7)))
        });
        group.bench_function(id("gdid_uuid_v4_generate"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    |iters| repeat(iters, || uuid_v4.generate())
                })
            })
        });
        group.bench_function(id("gdid_uuid_v6_generate"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    |iters| repeat(iters, || uuid_v6.generate())
                })
            })
        });
        group.bench_function(id("uuid_now_v7"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || |iters| repeat(iters, uuid::Uuid::now_v7))
            })
        });
        group.bench_function(id("uuid_new_v4"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || |iters| repeat(iters, uuid::Uuid::new_v4))
            })
        });
        group.bench_function(id("ulid_generate"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    |iters| repeat(iters, ulid::Ulid::generate)
                })
            })
        });
        group.bench_function(id("ulid_generator_per_thread"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    let mut generator = ulid::Generator::new();
                    move |iters| repeat(iters, || generator.generate().unwrap())
                })
            })
        });
        group.bench_function(id("bson_object_id_new"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    |iters| repeat(iters, bson::oid::ObjectId::new)
                })
            })
        });
        group.bench_function(id("ferroid_atomic_snowflake"), |b| {
            b.iter_custom(|iters| {
                on_threads(threads, iters, || {
                    |iters| repeat(iters, || snowflake.next_id(|_| std::thread::yield_now()))
                })
            })
        });
        group.finish();
    }
}

/// The numbers of generators `many_sequences` takes ids from.
const SEQUENCES: [usize; 5] = [1, 10, 100, 1_000, 10_000];

/// `next_id().await` `iters` times round-robin over `generators` from `at`, in `rt`; returns
/// where the next call would have been.
async fn round_robin(generators: &[BlockGenerator], mut at: usize, iters: u64) -> usize {
    let count = generators.len();
    for _ in 0..iters {
        black_box(generators[at].next_id().await.unwrap());
        at = if at + 1 == count { 0 } else { at + 1 };
    }
    at
}

/// `next_id().await` round-robin over `count` generators (one sequence each) on one thread,
/// blocks of 2^20 so that refills are rare: what a service issuing ids for many tables at once
/// pays per id, beside the one-sequence figure.
fn many_sequences(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("many_sequences");
    group.throughput(Throughput::Elements(1));
    for count in SEQUENCES {
        let generators = gdid_benches::sequences(count);
        // Each generator has its block, and this thread its slot of each, before the clock runs.
        rt.block_on(async {
            for ids in &generators {
                ids.next_id().await.unwrap();
            }
        });
        group.bench_function(BenchmarkId::new("next_id", count), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let started = Instant::now();
                    round_robin(&generators, 0, iters).await;
                    started.elapsed()
                })
            })
        });
    }
    group.finish();
}

/// `many_sequences` on two threads at once, each round-robin over all the generators, as the two
/// worker threads of a service, either of which may serve any sequence (each thread has its slot
/// of every generator). The second thread starts half-way round, so the two do not walk in step.
/// ns per id of the whole process, as `per_id/2_thread`.
fn many_sequences_2_threads(c: &mut Criterion) {
    const THREADS: u32 = 2;
    let mut group = c.benchmark_group("many_sequences_2_threads");
    group.throughput(Throughput::Elements(1));
    for count in SEQUENCES {
        let generators = gdid_benches::sequences(count);
        group.bench_function(BenchmarkId::new("next_id", count), |b| {
            b.iter_custom(|iters| {
                let started = AtomicUsize::new(0);
                on_threads_until_done(THREADS, iters, || {
                    let rt = runtime();
                    // Each generator has its block, and this thread its slot of each, before
                    // the clock runs.
                    rt.block_on(async {
                        for ids in &generators {
                            ids.next_id().await.unwrap();
                        }
                    });
                    let at = started.fetch_add(1, Ordering::Relaxed) * count / THREADS as usize;
                    let generators = &generators;
                    move |iters| {
                        rt.block_on(round_robin(generators, at, iters));
                    }
                })
            })
        });
    }
    group.finish();
}

/// Generators in `ramp_up`.
const RAMP_GENERATORS: usize = 10_000;
/// Ids each generator serves in one of `ramp_up`'s windows.
const RAMP_IDS_PER_GENERATOR: u64 = 1_000;

/// A service that starts, or adds tenants, builds many generators at once, and each starts with
/// the minimum block: `fresh` times the first 1,000 ids of each of 10,000 new generators (default
/// sizing; the first block is waited for, the next ones grow with the rate), round-robin on one
/// thread; `steady` the next 1,000 of each, once every generator has its rate. One iteration is
/// one such window of 10 million ids (criterion's time is per window; `scripts/bench-report
/// many` divides it by the ids); the generators are built, warmed (`steady`) and closed outside
/// the clock.
fn ramp_up(c: &mut Criterion) {
    let rt = runtime();
    let window = RAMP_IDS_PER_GENERATOR * RAMP_GENERATORS as u64;
    let mut group = c.benchmark_group("ramp_up");
    group
        .throughput(Throughput::Elements(window))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for phase in ["fresh", "steady"] {
        group.bench_function(BenchmarkId::new("next_id", phase), |b| {
            b.iter_custom(|windows| {
                let mut elapsed = Duration::ZERO;
                for _ in 0..windows {
                    let generators = gdid_benches::fresh_sequences(RAMP_GENERATORS);
                    if phase == "steady" {
                        rt.block_on(round_robin(&generators, 0, window));
                    }
                    elapsed += rt.block_on(async {
                        let started = Instant::now();
                        round_robin(&generators, 0, window).await;
                        started.elapsed()
                    });
                    rt.block_on(async {
                        for ids in &generators {
                            ids.close()
                                .await
                                .expect("an in-memory authority takes ids back");
                        }
                    });
                }
                elapsed
            })
        });
    }
    group.finish();
}

criterion_group!(name = engine; config = gdid_benches::criterion(3); targets = per_id, many_sequences, many_sequences_2_threads, ramp_up);
criterion_main!(engine);
