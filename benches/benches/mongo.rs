//! ids per second and MongoDB round trips per 1M ids, on the server of `GDID_MONGODB_URI`, for the
//! one-at-a-time counter, blocks of a fixed 1,000 without prefetch, and the `BlockGenerator` with
//! dynamic size and prefetch, in database `gdid_bench` unless the URI names one. Prints a markdown
//! table.
//!
//! `cargo bench -p gdid-benches --bench mongo` with `GDID_MONGODB_URI` set (`scripts/services.sh`
//! prints it). `MONGO_BENCH_SECONDS` (default 3) sets each measurement's length.

use gdid::Store;
use gdid_benches::{THROUGHPUT_HEADER, listing, measurement_length};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if listing() {
        return;
    }
    let Ok(uri) = std::env::var("GDID_MONGODB_URI") else {
        eprintln!("skipped: GDID_MONGODB_URI is not set");
        return;
    };
    let seconds = measurement_length("MONGO_BENCH_SECONDS");
    let store = Store::options()
        .default_mongodb_database("gdid_bench")
        .open(&uri)
        .await
        .unwrap();
    let scope = format!("bench{}", std::process::id());
    let rows = gdid_benches::strategies(&store, &scope, seconds).await;
    println!("| {THROUGHPUT_HEADER} |");
    println!("|---|---|---|---|");
    for row in &rows {
        println!("| {} |", row.cells(1, &rows[0]));
    }
}
