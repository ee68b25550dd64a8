//! What the benchmarks share: criterion's settings; for the store benchmarks (`benches/sql.rs`,
//! `mongo.rs`, `random.rs`), the servers configured in the environment, each measurement's
//! length, and the ids per second of each strategy on a store opened with [`gdid::Store`]. The
//! benchmarks themselves are in `benches/`.

use std::time::{Duration, Instant};

use gdid::engine::{BlockGenerator, BlockGeneratorBuilder, MemoryAuthority};
use gdid::{IdGenerator, Store};

/// The SQL servers the store benchmarks run on, each when its URL variable is set
/// (`scripts/services.sh` prints them).
pub const SQL_SERVERS: [(&str, &str); 2] = [
    ("MariaDB", "GDID_MYSQL_URL"),
    ("PostgreSQL", "GDID_POSTGRES_URL"),
];

/// Whether cargo only lists the benchmarks (`--list`): nothing is measured then.
pub fn listing() -> bool {
    std::env::args().any(|a| a == "--list")
}

/// Each measurement's length: the variable `var`, in seconds, or 3.
pub fn measurement_length(var: &str) -> Duration {
    let seconds = std::env::var(var).ok().and_then(|s| s.parse().ok());
    Duration::from_secs(seconds.unwrap_or(3))
}

/// Criterion with a warm-up of 1 s and measurements of `seconds` each.
pub fn criterion(seconds: u64) -> criterion::Criterion {
    criterion::Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(seconds))
}

/// A duration in nanoseconds, as the tables print it: ns, µs or ms.
pub fn fmt_ns(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.1} ms", ns as f64 / 1e6)
    }
}

/// The name and URL of each of `servers` (name, URL variable) whose variable is set; the others
/// are said skipped on stderr.
pub fn configured(servers: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    servers
        .iter()
        .filter_map(|&(name, var)| match std::env::var(var) {
            Ok(url) => Some((name, url)),
            Err(_) => {
                eprintln!("skipped {name}: {var} is not set");
                None
            }
        })
        .collect()
}

/// What one strategy did in one measurement.
#[derive(Debug, Clone)]
pub struct Throughput {
    /// The strategy, as the table names it.
    pub strategy: &'static str,
    /// Ids issued.
    pub ids: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Reservations on the store (one a call for the one-at-a-time counter).
    pub allocations: u64,
}

impl Throughput {
    /// Ids a second.
    pub fn rate(&self) -> f64 {
        self.ids as f64 / self.elapsed.as_secs_f64()
    }

    /// The cells of its table line, after the store's: the strategy, ids/s, the store's round
    /// trips per 1M ids (`round_trips` each reservation) and the rate against `baseline`'s.
    pub fn cells(&self, round_trips: u64, baseline: &Throughput) -> String {
        let trips = (self.allocations * round_trips) as f64 * 1e6 / self.ids as f64;
        format!(
            "{} | {:.0} | {trips:.2} | {:.0}×",
            self.strategy,
            self.rate(),
            self.rate() / baseline.rate()
        )
    }
}

/// The header of [`Throughput::cells`] lines, after the store's column.
pub const THROUGHPUT_HEADER: &str = "strategy | ids/s | round trips per 1M ids | vs one at a time";

/// The one-at-a-time counter, blocks of a fixed 1,000 without prefetch, and the
/// `BlockGenerator` with dynamic size and prefetch, in scope `scope` of `store`, each for
/// `length`.
pub async fn strategies(store: &Store, scope: &str, length: Duration) -> [Throughput; 3] {
    [
        one_at_a_time(store, scope, length).await,
        blocks(store, scope, length, true).await,
        blocks(store, scope, length, false).await,
    ]
}

async fn one_at_a_time(store: &Store, scope: &str, length: Duration) -> Throughput {
    let counter = store.one_at_a_time(scope, "one-at-a-time");
    let started = Instant::now();
    let mut ids = 0;
    while started.elapsed() < length {
        std::hint::black_box(counter.next_id().await.unwrap());
        ids += 1;
    }
    Throughput {
        strategy: "one at a time",
        ids,
        elapsed: started.elapsed(),
        allocations: ids,
    }
}

async fn blocks(store: &Store, scope: &str, length: Duration, fixed: bool) -> Throughput {
    let mut builder = store.block_generator(scope, if fixed { "fixed" } else { "dynamic" });
    if fixed {
        builder = builder.fixed_block_size(1_000).no_prefetch();
    }
    let generator = builder.build().unwrap();
    let started = Instant::now();
    let mut ids = 0u64;
    while started.elapsed() < length {
        for _ in 0..1_000 {
            std::hint::black_box(generator.next_id().await.unwrap());
        }
        ids += 1_000;
    }
    Throughput {
        strategy: if fixed {
            "blocks of 1,000, no prefetch"
        } else {
            "BlockGenerator (dynamic, prefetch)"
        },
        ids,
        elapsed: started.elapsed(),
        allocations: generator.stats().allocations,
    }
}

/// `count` generators of sequences of their own, each over an in-memory authority, with blocks
/// of 2^20 so that refills are rare: the many-sequences benchmarks (`engine.rs`,
/// `instructions.rs`).
pub fn sequences(count: usize) -> Vec<BlockGenerator> {
    generators(count, |builder| builder.fixed_block_size(1 << 20))
}

/// `count` new generators as [`sequences`] makes them, but with the default block sizing: each
/// starts from the minimum block and grows its blocks with its rate (the ramp-up benchmark,
/// `engine.rs`).
pub fn fresh_sequences(count: usize) -> Vec<BlockGenerator> {
    generators(count, |builder| builder)
}

/// `count` generators of sequences `sequence_0`, `sequence_1`, … in scope `bench`, each over an
/// in-memory authority of its own, built as `configure` sets them up.
fn generators(
    count: usize,
    configure: impl Fn(BlockGeneratorBuilder) -> BlockGeneratorBuilder,
) -> Vec<BlockGenerator> {
    (0..count)
        .map(|k| {
            let builder = BlockGenerator::builder("bench", &format!("sequence_{k}"))
                .authority(MemoryAuthority::new(1));
            configure(builder).build().expect("an in-memory generator")
        })
        .collect()
}
