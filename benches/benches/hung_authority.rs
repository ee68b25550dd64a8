//! The longest wait of a caller when one of two authorities hangs mid-run, in real time: two
//! in-memory authorities answering in 1 ms, blocks of 50, 20 ids every millisecond, the first
//! authority hanging from 0.5 s on; each run lasts 1.5 s and reports its longest single
//! `next_id().await`, with hedging (the default: the next authority is asked once the first has
//! not answered within twice its usual latency plus 20 ms) and without (each authority waited
//! for until the 3 s allocation timeout). Criterion's "time" is that longest wait.
//!
//! `cargo bench -p gdid-benches --bench hung_authority`

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use gdid_engine::{
    BlockGenerator, MemoryAuthority,
    testing::{FaultyAuthority, Latency},
};
use tokio::time::{Instant, MissedTickBehavior};

/// How long a run lasts, and when the first authority hangs.
const RUN: Duration = Duration::from_millis(1_500);
const HANG_AT: Duration = Duration::from_millis(500);

/// One run: the longest single wait of a caller, and the hedges sent.
async fn longest_wait(hedge: bool) -> (Duration, u64) {
    let authority = |number| {
        Arc::new(
            FaultyAuthority::new(MemoryAuthority::new(number))
                .latency(Latency::Fixed(Duration::from_millis(1))),
        )
    };
    let (first, second) = (authority(1), authority(2));
    let mut builder = BlockGenerator::builder("bench", "hung")
        .authority(Arc::clone(&first))
        .authority(second)
        .fixed_block_size(50);
    if !hedge {
        builder = builder.hedge_margin(None);
    }
    let ids = builder.build().unwrap();
    let mut pace = tokio::time::interval(Duration::from_millis(1));
    pace.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut longest = Duration::ZERO;
    while started.elapsed() < RUN {
        pace.tick().await;
        if started.elapsed() >= HANG_AT {
            first.set_hang(true);
        }
        for _ in 0..20 {
            let asked = Instant::now();
            ids.next_id().await.expect("no caller error");
            longest = longest.max(asked.elapsed());
        }
    }
    (longest, ids.stats().hedges)
}

fn hung_authority(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("hung_authority");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(40));
    for (name, hedge) in [("hedged", true), ("not_hedged", false)] {
        group.bench_function(name, |b| {
            b.iter_custom(|runs| {
                let mut total = Duration::ZERO;
                for _ in 0..runs {
                    let (longest, hedges) = runtime.block_on(longest_wait(hedge));
                    assert_eq!(hedges > 0, hedge, "hedges sent: {hedges}");
                    total += longest;
                }
                total
            });
        });
    }
    group.finish();
}

criterion_group!(benches, hung_authority);
criterion_main!(benches);
