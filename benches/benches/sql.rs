//! ids per second and database round trips per 1M ids, on each SQL store, for the one-at-a-time
//! counter, blocks of a fixed 1,000 without prefetch, and the `BlockGenerator` with dynamic size and
//! prefetch; then the `BlockGenerator`'s caller latency while the one-at-a-time counter loads the
//! same server. Prints markdown tables.
//!
//! `cargo bench -p gdid-benches --bench sql` with `GDID_MYSQL_URL` and `GDID_POSTGRES_URL` set
//! (`scripts/services.sh` prints them); SQLite runs on a temporary file. `SQL_BENCH_SECONDS`
//! (default 3) sets each measurement's length.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gdid::{IdGenerator, Store};
use gdid_benches::{
    SQL_SERVERS, THROUGHPUT_HEADER, configured, fmt_ns, listing, measurement_length,
};
use hdrhistogram::Histogram;

/// Statements per reservation on the counter table: MySQL reads the result back with a second.
fn round_trips_per_allocation(dialect: &str) -> u64 {
    if dialect == "MariaDB" { 2 } else { 1 }
}

/// The BlockGenerator's per-call latency while a one-at-a-time counter hammers the same server.
async fn latency_under_load(
    store: &Store,
    scope: &str,
    seconds: Duration,
) -> (Histogram<u64>, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let load_ids = Arc::new(AtomicU64::new(0));
    let load = {
        let counter = store.one_at_a_time(scope, "load");
        let (stop, load_ids) = (Arc::clone(&stop), Arc::clone(&load_ids));
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                counter.next_id().await.unwrap();
                load_ids.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let generator = store.block_generator(scope, "under-load").build().unwrap();
    generator.next_id().await.unwrap(); // the first block is always waited for
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    let mut pace = tokio::time::interval(Duration::from_millis(1));
    let started = Instant::now();
    while started.elapsed() < seconds {
        pace.tick().await; // 1,000 ids per ms: 1M ids/s
        for _ in 0..1_000 {
            let t0 = Instant::now();
            std::hint::black_box(generator.next_id().await.unwrap());
            let took = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            latency.record(took.max(1)).unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    load.await.unwrap();
    (latency, load_ids.load(Ordering::Relaxed))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if listing() {
        return;
    }
    let seconds = measurement_length("SQL_BENCH_SECONDS");
    let dir = std::env::temp_dir().join(format!("gdid-sql-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut stores = configured(&SQL_SERVERS);
    stores.push((
        "SQLite",
        format!("sqlite:{}", dir.join("bench.sqlite").display()),
    ));
    let scope = format!("bench{}", std::process::id());

    println!("| store | {THROUGHPUT_HEADER} |");
    println!("|---|---|---|---|---|");
    let mut latencies = Vec::new();
    for (name, url) in &stores {
        let store = Store::open(url).await.unwrap();
        let rows = gdid_benches::strategies(&store, &scope, seconds).await;
        for row in &rows {
            let cells = row.cells(round_trips_per_allocation(name), &rows[0]);
            println!("| {name} | {cells} |");
        }
        latencies.push((name, latency_under_load(&store, &scope, seconds).await));
    }
    println!();
    println!(
        "| store | BlockGenerator at 1M ids/s while one-at-a-time loads the server | p50 | p99 | p99.9 | p99.99 | max | load ids/s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, (h, load_ids)) in latencies {
        println!(
            "| {name} | {} ids | {} | {} | {} | {} | {} | {:.0} |",
            h.len(),
            fmt_ns(h.value_at_quantile(0.5)),
            fmt_ns(h.value_at_quantile(0.99)),
            fmt_ns(h.value_at_quantile(0.999)),
            fmt_ns(h.value_at_quantile(0.9999)),
            fmt_ns(h.max()),
            load_ids as f64 / seconds.as_secs_f64(),
        );
    }
    std::fs::remove_dir_all(dir).ok();
}
