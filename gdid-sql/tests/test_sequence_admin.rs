//! Sequence administration on the SQL stores: a counter table of before the
//! allocation columns gets them when a store is opened, its rows read as unknown until their
//! next allocations; the window tables have the high-water index, used by the query (SQLite's
//! plan checked).

mod common;

use common::execute;
use gdid_engine::sequences;
use gdid_engine::windows::WindowShard;
use gdid_engine::{Authority, backend::CounterStore};
use gdid_sql::{SqlAuthority, SqlStore};

#[tokio::test]
async fn an_old_counter_table_gets_the_allocation_columns() {
    for (dialect, url) in common::urls() {
        let url = gdid_testkit::database(&url, "gdid_old_counters").await;
        let store = SqlStore::connect(&url).await.unwrap();
        execute(&store, "DROP TABLE IF EXISTS gdid_counters".into()).await;
        execute(&store, "DROP TABLE IF EXISTS gdid_authority".into()).await;
        execute(
            &store,
            "CREATE TABLE gdid_counters (authority SMALLINT NOT NULL, \
             scope_name VARCHAR(80) NOT NULL, sequence_name VARCHAR(80) NOT NULL, \
             era BIGINT NOT NULL, next_counter BIGINT NOT NULL, \
             PRIMARY KEY (authority, scope_name, sequence_name))"
                .into(),
        )
        .await;
        execute(
            &store,
            "INSERT INTO gdid_counters VALUES (1, 'old', 'q', 0, 100)".into(),
        )
        .await;
        // Opened twice: the second finds the columns and adds nothing.
        SqlAuthority::open(&url).await.unwrap();
        let authority = SqlAuthority::open(&url).await.unwrap();
        let listed = sequences::list(&authority).await.unwrap();
        let old = &listed[0];
        assert_eq!(
            (old.next, old.last_allocation_ms, old.rate),
            (100, None, None),
            "{dialect}"
        );
        assert_eq!(
            authority.allocate("old", "q", 5).await.unwrap().start(),
            100
        );
        let listed = authority.records().await.unwrap();
        assert!(
            matches!(
                listed[0].allocations[0],
                gdid_engine::backend::StoredInt::Integer(_)
            ),
            "{dialect}: {listed:?}"
        );
    }
}

#[tokio::test]
async fn the_window_tables_have_the_high_water_index() {
    for (dialect, url) in common::urls() {
        let store = SqlStore::connect(&url).await.unwrap();
        store.prepare().await.unwrap();
        store.prepare().await.unwrap(); // idempotent
        let query = match dialect {
            "mysql" => "SELECT COUNT(DISTINCT index_name) FROM information_schema.statistics \
                        WHERE table_schema = DATABASE() \
                        AND index_name IN ('gdid_windows_end', 'gdid_window_claims_end')"
                .to_owned(),
            // The store's connections resolve names in `pg_catalog` alone: the schema by name.
            "postgres" => format!(
                "SELECT COUNT(*) FROM pg_indexes \
                 WHERE indexname IN ('gdid_windows_end', 'gdid_window_claims_end') \
                 AND schemaname = '{}'",
                store.schema().await.unwrap().unwrap()
            ),
            _ => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' \
                  AND name IN ('gdid_windows_end', 'gdid_window_claims_end')"
                .to_owned(),
        };
        let query = sqlx::AssertSqlSafe(query);
        let count: i64 = common::with_pool!(&store, pool => {
            sqlx::query_scalar(query).fetch_one(pool).await
        })
        .unwrap();
        assert_eq!(count, 2, "{dialect}");
        #[cfg(feature = "sqlite")]
        if dialect == "sqlite" {
            #[allow(irrefutable_let_patterns)] // with the SQLite driver alone
            let SqlStore::Sqlite(pool) = &store else {
                unreachable!()
            };
            let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(
                "EXPLAIN QUERY PLAN SELECT MAX(window_end) FROM gdid_window_claims \
                 WHERE sequence_name = 'q'",
            )
            .fetch_all(pool)
            .await
            .unwrap();
            assert!(
                plan.iter()
                    .any(|(.., detail)| detail.contains("gdid_window_claims_end")),
                "{plan:?}"
            );
        }
    }
}
