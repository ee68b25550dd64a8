//! What is SQL's own about `SqlAuthority` on the real servers: MariaDB (`GDID_MYSQL_URL`),
//! PostgreSQL (`GDID_POSTGRES_URL`) and a SQLite file. The behaviours every store shares (blocks,
//! restarts, eras, corrupt rows, numbers, the one-at-a-time counter) are the conformance suite's
//! (`tests/conformance.rs`). Without a URL a dialect is skipped with a message; with `CI=true` it
//! is a failure.

mod common;

use common::urls_of_authority;
use gdid_engine::AuthorityError;
use gdid_engine::backend::numbering::NumberConflict;
use gdid_sql::SqlAuthority;

#[tokio::test]
async fn creating_the_schema_twice_and_concurrently_is_harmless() {
    for (dialect, url) in urls_of_authority(1).await {
        let authority = SqlAuthority::connect(&url, 1).await.unwrap();
        let runs: Vec<_> = (0..4)
            .map(|_| {
                let authority = authority.clone();
                tokio::spawn(async move { authority.ensure_schema().await })
            })
            .collect();
        for run in runs {
            run.await
                .unwrap()
                .unwrap_or_else(|e| panic!("{dialect}: {e}"));
        }
    }
}

/// Processes that start at once on a database without the tables race to create them: every
/// one succeeds. (PostgreSQL fails the loser of `CREATE TABLE IF NOT EXISTS` with "relation
/// exists", or with "type … already exists" for the table's row type.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_creating_the_tables_at_once_all_succeed() {
    for (dialect, url) in common::urls() {
        // A database of its own, its tables dropped: each round creates them anew.
        let url = gdid_testkit::database(&url, "gdid_schema_race").await;
        for round in 0..20 {
            let store = gdid_sql::SqlStore::connect(&url).await.unwrap();
            for table in ["gdid_counters", "gdid_authority"] {
                common::execute(&store, format!("DROP TABLE IF EXISTS {table}")).await;
            }
            let runs: Vec<_> = (0..16)
                .map(|_| {
                    let url = url.clone();
                    tokio::spawn(async move {
                        // Each its own pool, as separate processes have.
                        SqlAuthority::connect(&url, 1)
                            .await?
                            .ensure_schema()
                            .await?;
                        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                    })
                })
                .collect();
            for run in runs {
                run.await
                    .unwrap()
                    .unwrap_or_else(|e| panic!("{dialect}, round {round}: {e}"));
            }
        }
    }
}

#[tokio::test]
async fn unsupported_and_unreachable_stores_say_so() {
    let err = SqlAuthority::connect("redis://127.0.0.1/", 1)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unsupported store URL \"redis://127.0.0.1/\""),
        "{err}"
    );
    if cfg!(feature = "mysql") {
        let err = SqlAuthority::connect("mysql://root:hunter2@127.0.0.1:1/test", 1)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("cannot connect to mysql://root:***@127.0.0.1:1/test"),
            "{text}"
        );
        assert!(!text.contains("hunter2"));
    }
    if cfg!(feature = "sqlite") {
        let err = SqlAuthority::connect("sqlite:/nonexistent-dir/x/ids.sqlite", 1)
            .await
            .unwrap_err();
        assert!(
            err.to_string().starts_with("cannot connect to sqlite:"),
            "{err}"
        );
    }
}

/// `SqlAuthority::connect` checks the number at once: a store recorded as authority 1 refuses 2
/// with the typed conflict before any block (the constructor that does not connect is refused at
/// its first block, in the suite).
#[tokio::test]
async fn connecting_with_another_number_than_the_recorded_one_is_refused() {
    for (dialect, url) in urls_of_authority(1).await {
        SqlAuthority::connect(&url, 1)
            .await
            .unwrap_or_else(|e| panic!("{dialect}: the recorded number is accepted: {e}"));
        let refused = SqlAuthority::connect(&url, 2).await.unwrap_err();
        assert!(
            matches!(
                &refused,
                gdid_sql::Error::Authority(AuthorityError::Number(NumberConflict::Recorded {
                    recorded: 1,
                    asked: 2,
                    ..
                }))
            ),
            "{dialect}: {refused}"
        );
    }
}
