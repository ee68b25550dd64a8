//! 64 tasks of one process reserving blocks of 1,000 ids of one sequence at once, from an SQL
//! store's authority, each reservation alone (a transaction each) and coalesced (group commit:
//! [`gdid::engine::Coalescing`], what `gdid::Store` hands out): blocks per second and the latency
//! of one reservation. Prints a markdown table.
//!
//! `cargo bench -p gdid-benches --bench group_commit` with `GDID_MYSQL_URL` and
//! `GDID_POSTGRES_URL` set (`scripts/services.sh` prints them); SQLite runs on a temporary file.
//! `GROUP_COMMIT_SECONDS` (default 3) sets each measurement's length, `GROUP_COMMIT_TASKS` (64)
//! the number of tasks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gdid::engine::{Coalescing, DynAuthority};
use gdid_benches::{SQL_SERVERS, configured, fmt_ns, listing, measurement_length};
use gdid_sql::SqlAuthority;
use hdrhistogram::Histogram;

/// The authority number the benchmark's stores are opened as.
const NUMBER: u8 = 1;

/// Reservations of 1,000 by `tasks` tasks at once for `length`: each one's latency.
async fn reserve_at_once(
    authority: Arc<dyn DynAuthority>,
    sequence: &str,
    tasks: usize,
    length: Duration,
) -> (Histogram<u64>, Duration) {
    let started = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let (authority, sequence) = (Arc::clone(&authority), sequence.to_owned());
            tokio::spawn(async move {
                let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
                while started.elapsed() < length {
                    let t0 = Instant::now();
                    authority
                        .allocate_boxed("bench", &sequence, 1_000)
                        .await
                        .unwrap();
                    let took = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    latency.record(took.max(1)).unwrap();
                }
                latency
            })
        })
        .collect();
    let mut all = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    for handle in handles {
        all.add(handle.await.unwrap()).unwrap();
    }
    (all, started.elapsed())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if listing() {
        return;
    }
    let length = measurement_length("GROUP_COMMIT_SECONDS");
    let tasks = std::env::var("GROUP_COMMIT_TASKS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64);
    let dir = std::env::temp_dir().join(format!("gdid-group-commit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut stores = vec![(
        "SQLite",
        format!("sqlite:{}", dir.join("bench.sqlite").display()),
    )];
    stores.extend(configured(&SQL_SERVERS));
    let run = std::process::id();

    println!("| store | {tasks} tasks reserving | blocks/s | p50 | p99 | p99.9 | max |");
    println!("|---|---|---|---|---|---|---|");
    for (name, url) in &stores {
        let alone: Arc<dyn DynAuthority> =
            Arc::new(SqlAuthority::connect(url, NUMBER).await.unwrap());
        let coalesced: Arc<dyn DynAuthority> = Arc::new(Coalescing::new(Arc::clone(&alone)));
        for (how, authority) in [("each alone", alone), ("coalesced", coalesced)] {
            let sequence = format!("group_commit_{run}_{}", how.replace(' ', "_"));
            let (latency, took) = reserve_at_once(authority, &sequence, tasks, length).await;
            println!(
                "| {name} | {how} | {:.0} | {} | {} | {} | {} |",
                latency.len() as f64 / took.as_secs_f64(),
                fmt_ns(latency.value_at_quantile(0.5)),
                fmt_ns(latency.value_at_quantile(0.99)),
                fmt_ns(latency.value_at_quantile(0.999)),
                fmt_ns(latency.max()),
            );
        }
    }
    std::fs::remove_dir_all(dir).ok();
}
