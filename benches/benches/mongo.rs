//! ids per second and MongoDB round trips per 1M ids, on the server of `GDID_MONGODB_URI`, for the
//! one-at-a-time counter, blocks of a fixed 1,000 without prefetch, and the `BlockGenerator` with
//! dynamic size and prefetch. Prints a markdown table.
//!
//! `cargo bench -p gdid-benches --bench mongo` with `GDID_MONGODB_URI` set (`scripts/services.sh`
//! prints it). `MONGO_BENCH_SECONDS` (default 3) sets each measurement's length.

use std::time::{Duration, Instant};

use gdid_core::generator::{BlockGenerator, IdGenerator};
use gdid_mongo::{MongoAuthority, MongoCounter};

struct Row {
    strategy: &'static str,
    ids: u64,
    elapsed: Duration,
    round_trips: u64,
}

async fn one_at_a_time(authority: &MongoAuthority, seconds: Duration) -> Row {
    let counter = MongoCounter::new(authority.clone(), "bench", "one-at-a-time");
    let started = Instant::now();
    let mut ids = 0;
    while started.elapsed() < seconds {
        std::hint::black_box(counter.next_id().await.unwrap());
        ids += 1;
    }
    Row {
        strategy: "one at a time",
        ids,
        elapsed: started.elapsed(),
        round_trips: ids,
    }
}

async fn blocks(authority: &MongoAuthority, seconds: Duration, fixed: bool) -> Row {
    let mut builder = BlockGenerator::builder("bench", if fixed { "fixed" } else { "dynamic" })
        .authority(authority.clone());
    if fixed {
        builder = builder.fixed_block_size(1_000).no_prefetch();
    }
    let generator = builder.build().unwrap();
    let started = Instant::now();
    let mut ids = 0u64;
    while started.elapsed() < seconds {
        for _ in 0..1_000 {
            std::hint::black_box(generator.next_id().await.unwrap());
        }
        ids += 1_000;
    }
    Row {
        strategy: if fixed {
            "blocks of 1,000, no prefetch"
        } else {
            "BlockGenerator (dynamic, prefetch)"
        },
        ids,
        elapsed: started.elapsed(),
        round_trips: generator.stats().allocations,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Ok(uri) = std::env::var("GDID_MONGODB_URI") else {
        eprintln!("skipped: GDID_MONGODB_URI is not set");
        return;
    };
    let seconds = Duration::from_secs(
        std::env::var("MONGO_BENCH_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3),
    );
    let client = mongodb::Client::with_uri_str(&uri).await.unwrap();
    let collection = format!("bench_{}", std::process::id());
    let authority = MongoAuthority::new(&client.database("gdid_bench"), &collection, 1).unwrap();
    let rows = [
        one_at_a_time(&authority, seconds).await,
        blocks(&authority, seconds, true).await,
        blocks(&authority, seconds, false).await,
    ];
    let base = rows[0].ids as f64 / rows[0].elapsed.as_secs_f64();
    println!("| strategy | ids/s | round trips per 1M ids | vs one at a time |");
    println!("|---|---|---|---|");
    for row in &rows {
        let rate = row.ids as f64 / row.elapsed.as_secs_f64();
        println!(
            "| {} | {rate:.0} | {:.2} | {:.0}× |",
            row.strategy,
            row.round_trips as f64 * 1e6 / row.ids as f64,
            rate / base
        );
    }
}
