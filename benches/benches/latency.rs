//! Caller latency of `BlockGenerator::next_id` at a steady 1M ids/s against an authority that takes
//! 10 ms per allocation: the default settings (dynamic block size, low-water-mark prefetch); fixed
//! blocks of 100,000 (a block boundary every 0.1 s) with and without the prefetch; and the naive
//! one-allocation-per-id path. Prints a markdown table. The first second (the first block is always
//! waited for) is left out of the figures.
//!
//! `cargo bench -p gdid-benches --bench latency` (`LATENCY_SECONDS`, default 10, sets the run
//! length of the 1M ids/s modes).
//!
//! Each call is timed with two `Instant::now()` reads, whose cost (~25 ns here) is included.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gdid_engine::{
    BlockGenerator, MemoryAuthority,
    testing::{FaultyAuthority, Latency},
};
use hdrhistogram::Histogram;
use tokio::time::MissedTickBehavior;

const AUTHORITY_LATENCY: Duration = Duration::from_millis(10);

struct Mode {
    name: &'static str,
    prefetch: bool,
    /// `None`: dynamic sizing.
    fixed_block: Option<u64>,
}

const WARM_UP_TICKS: u64 = 1_000;

struct Outcome {
    ids: u64,
    elapsed: Duration,
    allocations: u64,
    latency: Histogram<u64>,
}

async fn run(mode: &Mode, seconds: u64) -> Outcome {
    let authority = Arc::new(
        FaultyAuthority::new(MemoryAuthority::new(1)).latency(Latency::Fixed(AUTHORITY_LATENCY)),
    );
    let mut builder = BlockGenerator::builder("bench", "latency").authority(Arc::clone(&authority));
    if !mode.prefetch {
        builder = builder.no_prefetch();
    }
    if let Some(size) = mode.fixed_block {
        builder = builder.fixed_block_size(size);
    }
    let naive = mode.fixed_block == Some(1);
    let ids = builder.build().unwrap();
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    // The naive path cannot reach 1M ids/s (each id waits 10 ms): it runs 500 ids back to back.
    let (warm_up, ticks, per_tick) = if naive {
        (0, 500, 1)
    } else {
        (WARM_UP_TICKS, WARM_UP_TICKS + seconds * 1_000, 1_000)
    };
    let mut pace = tokio::time::interval(Duration::from_millis(1));
    pace.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let mut started = Instant::now();
    let mut allocations_before = 0;
    for tick in 0..ticks {
        if tick == warm_up {
            started = Instant::now();
            allocations_before = authority.inner().allocations();
        }
        if !naive {
            pace.tick().await;
        }
        for _ in 0..per_tick {
            let t0 = Instant::now();
            let id = ids.next_id().await.unwrap();
            let took = t0.elapsed();
            std::hint::black_box(id);
            if tick >= warm_up {
                latency
                    .record(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1))
                    .unwrap();
            }
        }
    }
    Outcome {
        ids: (ticks - warm_up) * per_tick,
        elapsed: started.elapsed(),
        allocations: authority.inner().allocations() - allocations_before,
        latency,
    }
}

fn fmt_ns(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{:.1} ms", ns as f64 / 1e6),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` probes harness=false benches
    }
    let seconds: u64 = std::env::var("LATENCY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let modes = [
        Mode {
            name: "default: dynamic blocks, LWM prefetch",
            prefetch: true,
            fixed_block: None,
        },
        Mode {
            name: "blocks of 100k, LWM prefetch",
            prefetch: true,
            fixed_block: Some(100_000),
        },
        Mode {
            name: "blocks of 100k, prefetch off",
            prefetch: false,
            fixed_block: Some(100_000),
        },
        Mode {
            name: "naive: one allocation per id",
            prefetch: false,
            fixed_block: Some(1),
        },
    ];
    println!(
        "| mode | ids | rate achieved | p50 | p99 | p99.9 | p99.99 | max | calls > 10 µs | stalls (calls ≥ 1 ms) | allocations | allocations per 1M ids |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for mode in &modes {
        let out = rt.block_on(run(mode, seconds));
        let h = &out.latency;
        let rate = out.ids as f64 / out.elapsed.as_secs_f64();
        // A call of 1 ms or more waited for the store (or the thread was descheduled: on a
        // loaded machine, compare with a run of the naive mode).
        let slow = |from: u64| {
            h.iter_recorded()
                .filter(|v| v.value_iterated_to() >= from)
                .map(|v| v.count_at_value())
                .sum::<u64>()
        };
        println!(
            "| {} | {} | {:.0} ids/s | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} |",
            mode.name,
            out.ids,
            rate,
            fmt_ns(h.value_at_quantile(0.5)),
            fmt_ns(h.value_at_quantile(0.99)),
            fmt_ns(h.value_at_quantile(0.999)),
            fmt_ns(h.value_at_quantile(0.9999)),
            fmt_ns(h.max()),
            slow(10_001),
            slow(1_000_000),
            out.allocations,
            out.allocations as f64 * 1e6 / out.ids as f64,
        );
    }
}
