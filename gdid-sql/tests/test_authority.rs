//! `SqlAuthority` and `SqlCounter` on the real servers: MariaDB (`GDID_MYSQL_URL`), PostgreSQL
//! (`GDID_POSTGRES_URL`) and a SQLite file. Without a URL a dialect is skipped with a message;
//! with `CI=true` it is a failure.

mod common;

use std::collections::HashSet;

use common::{execute, fresh_scope, urls, urls_of_authority};

use gdid_core::COUNTER_MAX;
use gdid_core::generator::{Authority, AuthorityError, Block, BlockGenerator, IdGenerator};
use gdid_sql::{SqlAuthority, SqlCounter};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// 2 pools × 4 tasks allocating blocks of random sizes: the blocks tile 1..=total exactly, with
/// no overlap and nothing lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_allocation_is_disjoint_and_loses_nothing() {
    for (dialect, url) in urls_of_authority(3).await {
        let scope = fresh_scope("concurrent");
        let mut tasks = Vec::new();
        for pool in 0..2 {
            let authority = SqlAuthority::connect(&url, 3).await.unwrap();
            for task in 0..4 {
                let authority = authority.clone();
                let scope = scope.clone();
                tasks.push(tokio::spawn(async move {
                    let mut rng = StdRng::seed_from_u64(pool * 10 + task);
                    let mut blocks = Vec::new();
                    for _ in 0..40 {
                        let size = rng.random_range(1..1_000);
                        blocks.push(authority.allocate(&scope, "seq", size).await.unwrap());
                    }
                    blocks
                }));
            }
        }
        let mut blocks: Vec<Block> = Vec::new();
        for task in tasks {
            blocks.extend(task.await.unwrap());
        }
        blocks.sort_by_key(|b| b.start());
        let mut expected_start = 1;
        for block in &blocks {
            assert_eq!((block.era(), block.authority()), (0, 3), "{dialect}");
            assert_eq!(
                block.start(),
                expected_start,
                "{dialect}: gap or overlap at {block}"
            );
            expected_start = block.end();
        }
        assert_eq!(blocks.len(), 320, "{dialect}");
        let next = SqlAuthority::connect(&url, 3)
            .await
            .unwrap()
            .allocate(&scope, "seq", 1)
            .await
            .unwrap();
        assert_eq!(
            next.start(),
            expected_start,
            "{dialect}: the row holds the exact total"
        );
    }
}

/// A generator dropped and built again (a restart) never repeats an id.
#[tokio::test]
async fn a_restart_never_repeats_an_id() {
    for (dialect, url) in urls_of_authority(1).await {
        let scope = fresh_scope("restart");
        let mut seen = HashSet::new();
        let mut last = gdid_core::Gdid::ZERO;
        for _run in 0..3 {
            let ids = BlockGenerator::builder(&scope, "orders")
                .authority(SqlAuthority::connect(&url, 1).await.unwrap())
                .build()
                .unwrap();
            for _ in 0..500 {
                let id = ids.next_id().await.unwrap();
                assert!(seen.insert(id), "{dialect}: {id} issued twice");
                assert!(
                    id > last,
                    "{dialect}: one authority, one thread: increasing"
                );
                last = id;
            }
        }
    }
}

#[tokio::test]
async fn the_era_rolls_over_at_counter_max() {
    for (dialect, url) in urls_of_authority(2).await {
        let scope = fresh_scope("rollover");
        let authority = SqlAuthority::connect(&url, 2).await.unwrap();
        authority.allocate(&scope, "s", 1).await.unwrap(); // creates the row
        execute(
            authority.store(),
            format!(
                "UPDATE gdid_counters SET era = 7, next_counter = {} \
                 WHERE scope_name = '{scope}' AND sequence_name = 's'",
                COUNTER_MAX - 5
            ),
        )
        .await;
        let last_of_era = authority.allocate(&scope, "s", 6).await.unwrap();
        assert_eq!(
            (
                last_of_era.era(),
                last_of_era.start(),
                last_of_era.last().counter()
            ),
            (7, COUNTER_MAX - 5, COUNTER_MAX),
            "{dialect}"
        );
        let first_of_next = authority.allocate(&scope, "s", 10).await.unwrap();
        assert_eq!(
            (first_of_next.era(), first_of_next.start()),
            (8, 0),
            "{dialect}"
        );
        let then = authority.allocate(&scope, "s", 10).await.unwrap();
        assert_eq!((then.era(), then.start()), (8, 10), "{dialect}");
    }
}

#[tokio::test]
async fn bad_names_and_sizes_are_refused_before_the_store_is_touched() {
    for (dialect, url) in urls_of_authority(1).await {
        let authority = SqlAuthority::connect(&url, 1).await.unwrap();
        for (scope, sequence) in [("", "s"), ("a b", "s"), ("ok", "x'; DROP TABLE t; --")] {
            let err = authority.allocate(scope, sequence, 1).await.unwrap_err();
            assert!(
                matches!(err, AuthorityError::InvalidName(_)),
                "{dialect}: {err}"
            );
        }
        let err = authority.allocate("ok", "ok", 0).await.unwrap_err();
        assert!(
            matches!(err, AuthorityError::InvalidSize(0)),
            "{dialect}: {err}"
        );
    }
}

/// Rows that no authority writes give a typed error, never a block.
#[tokio::test]
async fn corrupt_rows_are_typed_errors() {
    for (dialect, url) in urls_of_authority(1).await {
        let scope = fresh_scope("corrupt");
        let authority = SqlAuthority::connect(&url, 1).await.unwrap();
        for (sequence, era, next) in [("negative-next", 0, -50), ("negative-era", -3, 10)] {
            authority.allocate(&scope, sequence, 1).await.unwrap();
            execute(
                authority.store(),
                format!(
                    "UPDATE gdid_counters SET era = {era}, next_counter = {next} \
                     WHERE scope_name = '{scope}' AND sequence_name = '{sequence}'"
                ),
            )
            .await;
            let err = authority.allocate(&scope, sequence, 5).await.unwrap_err();
            assert!(
                matches!(err, AuthorityError::Corrupt(_)),
                "{dialect} {sequence}: {err}"
            );
        }
    }
}

/// A corrupt row is left as it is and named, field and all, however often it is asked: the
/// update used to move it toward valid-looking values (a counter of -1 became 0, then 1, and id 1
/// was issued again; SQLite read text as 0 and restarted the counter; a counter above 2^60
/// rolled the era over and issued ids).
#[tokio::test]
async fn a_corrupt_row_stays_corrupt_and_names_its_field() {
    for (dialect, url) in urls_of_authority(1).await {
        let scope = fresh_scope("corrupt_again");
        let authority = SqlAuthority::connect(&url, 1).await.unwrap();
        let mut cases = vec![
            ("negative-next", "next_counter", "-1"),
            ("above-range", "next_counter", "4611686018427387904"),
            ("negative-era", "era", "-1"),
        ];
        if dialect == "sqlite" {
            cases.push(("text-next", "next_counter", "'abc'"));
            cases.push(("real-era", "era", "1.5"));
        }
        for (sequence, field, value) in cases {
            authority.allocate(&scope, sequence, 1).await.unwrap();
            execute(
                authority.store(),
                format!(
                    "UPDATE gdid_counters SET {field} = {value} \
                     WHERE scope_name = '{scope}' AND sequence_name = '{sequence}'"
                ),
            )
            .await;
            for _ in 0..3 {
                let err = authority.allocate(&scope, sequence, 1).await.unwrap_err();
                let message = err.to_string();
                assert!(
                    matches!(err, AuthorityError::Corrupt(_)),
                    "{dialect} {sequence}: {message}"
                );
                assert!(
                    message.contains(&format!("sequence {sequence:?}"))
                        && message.contains(&format!("{field} ")),
                    "{dialect} {sequence}: {message}"
                );
            }
        }
    }
}

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

/// The one-at-a-time counter: 4 tasks × 100 ids give exactly 1..=400.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_one_at_a_time_counter_is_continuous_under_concurrency() {
    for (dialect, url) in urls_of_authority(0).await {
        let scope = fresh_scope("counter");
        let counter = SqlCounter::new(SqlAuthority::connect(&url, 0).await.unwrap(), &scope, "n");
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    for _ in 0..100 {
                        got.push(counter.next_id().await.unwrap());
                    }
                    got
                })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            let got = task.await.unwrap();
            assert!(
                got.windows(2).all(|w| w[0] < w[1]),
                "{dialect}: monotonic per task"
            );
            all.extend(got);
        }
        all.sort_unstable();
        assert_eq!(all, (1..=400).collect::<Vec<u64>>(), "{dialect}");
        let batch = counter.next_ids(10).await.unwrap();
        assert_eq!(
            batch.iter().collect::<Vec<_>>(),
            (401..=410).collect::<Vec<_>>()
        );
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
    let err = SqlAuthority::connect("mysql://root:hunter2@127.0.0.1:1/test", 1)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("cannot connect to mysql://root:***@127.0.0.1:1/test"),
        "{text}"
    );
    assert!(!text.contains("hunter2"));
    let err = SqlAuthority::connect("sqlite:/nonexistent-dir/x/ids.sqlite", 1)
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with("cannot connect to sqlite:"),
        "{err}"
    );
}

/// Hole 1 of the uniqueness issue: an authority number belongs to the store. The first use
/// records it; a later caller asking for another number is refused before any block, whichever
/// constructor it uses; a store written before numbers were recorded keeps the number its
/// counters use.
#[tokio::test]
async fn authority_numbers_belong_to_the_store_not_to_the_caller() {
    use gdid_core::generator::numbering::NumberConflict;
    for (dialect, base) in urls() {
        let url = gdid_testkit::database(&base, "gdid_numbering").await;
        // This test's own database: start it afresh (the record of an earlier run goes).
        let setup = gdid_sql::SqlStore::connect(&url).await.unwrap();
        execute(&setup, "DROP TABLE IF EXISTS gdid_authority".into()).await;
        execute(&setup, "DROP TABLE IF EXISTS gdid_counters".into()).await;
        let scope = fresh_scope("numbers");

        let first = SqlAuthority::open(&url).await.unwrap();
        assert_eq!(first.number(), 1, "{dialect}: a fresh store is authority 1");
        let block = first.allocate(&scope, "s", 10).await.unwrap();
        assert_eq!(block.authority(), 1, "{dialect}");
        assert_eq!(
            SqlAuthority::open(&url).await.unwrap().number(),
            1,
            "{dialect}: reopened, the same number"
        );
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
        // A constructor that does not connect is refused at its first block, and issues none.
        let store = gdid_sql::SqlStore::connect(&url).await.unwrap();
        let lazy = SqlAuthority::new(store.clone(), 5, "lazy").unwrap();
        for _ in 0..2 {
            let refused = lazy.allocate(&scope, "s", 10).await.unwrap_err();
            assert!(
                matches!(refused, AuthorityError::Number(_)),
                "{dialect}: {refused}"
            );
        }
        let rows_of_5: i64 = gdid_sql::with_pool!(&store, pool => {
            sqlx::query_scalar("SELECT COUNT(*) FROM gdid_counters WHERE authority = 5")
                .fetch_one(pool)
                .await
        })
        .unwrap();
        assert_eq!(rows_of_5, 0, "{dialect}: authority 5 reserved nothing");

        // A store of before the record: its counters say which authority it was.
        execute(&setup, "DROP TABLE gdid_authority".into()).await;
        execute(&setup, "UPDATE gdid_counters SET authority = 4".into()).await;
        let old = SqlAuthority::open(&url).await.unwrap();
        assert_eq!(old.number(), 4, "{dialect}: the number its counters use");
        let next = old.allocate(&scope, "s", 1).await.unwrap();
        assert_eq!(
            (next.authority(), next.start()),
            (4, 11),
            "{dialect}: continued"
        );
    }
}

/// The one-at-a-time counter belongs to the store too: its values go on whatever number the
/// authority it was made from has.
#[tokio::test]
async fn the_one_at_a_time_counter_does_not_depend_on_the_authority_number() {
    for (dialect, base) in urls() {
        let scope = fresh_scope("counter_key");
        let one = gdid_testkit::database(&base, "gdid_authority_1").await;
        let counter = SqlCounter::new(SqlAuthority::connect(&one, 1).await.unwrap(), &scope, "n");
        assert_eq!(counter.next_id().await.unwrap(), 1, "{dialect}");
        // The same store seen through an authority made with another number (not yet checked).
        let store = gdid_sql::SqlStore::connect(&one).await.unwrap();
        let other = SqlCounter::new(
            SqlAuthority::new(store.clone(), 7, "x").unwrap(),
            &scope,
            "n",
        );
        assert_eq!(other.next_id().await.unwrap(), 2, "{dialect}");

        // A counter of before the key 0, made from authority 1, that handed out 1 to 50: the
        // counter goes on at 51, never at 1.
        execute(
            &store,
            format!(
                "INSERT INTO gdid_counters (authority, scope_name, sequence_name, era, next_counter) \
                 VALUES (1, '{scope}', 'legacy', 0, 51)"
            ),
        )
        .await;
        let legacy = SqlCounter::new(
            SqlAuthority::connect(&one, 1).await.unwrap(),
            &scope,
            "legacy",
        );
        assert_eq!(legacy.next_id().await.unwrap(), 51, "{dialect}");
    }
}
