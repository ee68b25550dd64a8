//! Random ids with retry on duplicate key: inserts per second and attempts per insert at several
//! fill ratios of the id range, on MariaDB (and PostgreSQL when configured). Prints a markdown
//! table.
//!
//! `cargo bench -p gdid-benches --bench random` with `GDID_MYSQL_URL` (and `GDID_POSTGRES_URL`)
//! set (`scripts/services.sh` prints them). `RANDOM_BENCH_SECONDS` (default 3) sets each
//! measurement's length.
//!
//! A table with a `BIGINT` primary key is filled to 0 %, 50 %, 90 % and 99 % of a range of one
//! million ids (with multi-row inserts of values not yet drawn), and at each level one task
//! inserts rows under `RandomIdGenerator` ids with `insert_with_retry` for the set time. The
//! inserts move the fill by well under 1 % of the range.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gdid_benches::{SQL_SERVERS, configured, listing, measurement_length};
use gdid_random::{IdRange, RandomIdGenerator, insert_with_retry};
use gdid_sql::{Dialect, SqlStore, with_pool};
use rand::seq::SliceRandom;
use sqlx::AssertSqlSafe;

const RANGE: u64 = 1_000_000;
/// The fill levels, in thousandths of the range.
const FILLS_PER_MILLE: [u64; 4] = [0, 500, 900, 990];

async fn execute(store: &SqlStore, sql: String) {
    with_pool!(store, pool => sqlx::query(AssertSqlSafe(sql)).execute(pool).await.map(drop))
        .unwrap();
}

struct Level {
    fill: f64,
    inserts: u64,
    attempts: u64,
    elapsed: Duration,
}

async fn measure(store: &SqlStore, table: &str, seconds: Duration) -> Vec<Level> {
    let placeholder = if store.dialect() == Dialect::Postgres {
        "$1"
    } else {
        "?"
    };
    let insert_sql = format!("INSERT INTO {table} (id) VALUES ({placeholder})");
    let ids = RandomIdGenerator::new(IdRange::new(0..RANGE).unwrap());
    let mut planned: Vec<u64> = (0..RANGE).collect();
    planned.shuffle(&mut rand::rng());
    let mut prefilled = 0usize;
    let mut levels = Vec::new();
    for fill in FILLS_PER_MILLE {
        // Bring the table to `fill` with values not planned before (duplicates of the measured
        // inserts are ignored, so the count is read back).
        let target = usize::try_from(RANGE * fill / 1_000).unwrap();
        for chunk in planned[prefilled..target.max(prefilled)].chunks(5_000) {
            let values = chunk
                .iter()
                .map(|id| format!("({id})"))
                .collect::<Vec<_>>()
                .join(",");
            execute(
                store,
                match store.dialect() {
                    Dialect::MySql => format!("INSERT IGNORE INTO {table} (id) VALUES {values}"),
                    _ => format!("INSERT INTO {table} (id) VALUES {values} ON CONFLICT DO NOTHING"),
                },
            )
            .await;
        }
        prefilled = prefilled.max(target);
        let rows: i64 = with_pool!(store, pool => sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}"))).fetch_one(pool).await).unwrap();

        let attempts = AtomicU64::new(0);
        let insert = |id: u64| {
            attempts.fetch_add(1, Ordering::Relaxed);
            let sql = insert_sql.as_str();
            async move {
                let id = i64::try_from(id).unwrap();
                with_pool!(store, pool => sqlx::query(AssertSqlSafe(sql)).bind(id).execute(pool).await.map(drop))
            }
        };
        let started = Instant::now();
        let mut inserts = 0;
        while started.elapsed() < seconds {
            insert_with_retry(&ids, 100_000, insert, gdid_sql::is_duplicate_key)
                .await
                .unwrap();
            inserts += 1;
        }
        levels.push(Level {
            fill: rows as f64 / RANGE as f64,
            inserts,
            attempts: attempts.load(Ordering::Relaxed),
            elapsed: started.elapsed(),
        });
    }
    levels
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if listing() {
        return;
    }
    let seconds = measurement_length("RANDOM_BENCH_SECONDS");
    println!(
        "| store | fill | inserts/s | attempts per insert | expected 1/(1-fill) | duplicate-key errors per insert |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, url) in configured(&SQL_SERVERS) {
        let store = SqlStore::connect(&url).await.unwrap();
        // Named in the store's schema on PostgreSQL: its connections resolve names in
        // `pg_catalog` alone (`search_path = pg_catalog, pg_temp`).
        let table = match store.schema().await.unwrap() {
            Some(schema) => format!(
                "\"{}\".bench_random_{}",
                schema.replace('"', "\"\""),
                std::process::id()
            ),
            None => format!("bench_random_{}", std::process::id()),
        };
        execute(
            &store,
            format!("CREATE TABLE {table} (id BIGINT NOT NULL PRIMARY KEY)"),
        )
        .await;
        for level in measure(&store, &table, seconds).await {
            let per_insert = level.attempts as f64 / level.inserts as f64;
            println!(
                "| {name} | {:.1} % | {:.0} | {per_insert:.2} | {:.2} | {:.2} |",
                level.fill * 100.0,
                level.inserts as f64 / level.elapsed.as_secs_f64(),
                1.0 / (1.0 - level.fill),
                per_insert - 1.0,
            );
        }
        execute(&store, format!("DROP TABLE {table}")).await;
    }
}
