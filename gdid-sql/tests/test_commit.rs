//! A value is handed out only after the statement that reserved it has committed.
//! SQLite's `UPDATE … RETURNING` gives its row before the statement completes, and in
//! autocommit mode the commit happens at completion: a row read with `fetch_optional` left the
//! statement unfinished, and an error at its commit was lost while the reserved values went out.
//!
//! A commit that fails is made here with a deferred foreign key: a trigger on the table inserts a
//! row that breaks it, which SQLite (and PostgreSQL) check only at commit, so the update itself
//! succeeds and the commit fails and rolls it back. A store that cannot grow would fail earlier,
//! in the update (the row changes in place, in the write-ahead log), not at the commit.

mod common;

use std::collections::HashSet;

use common::{execute, fresh_scope};
use gdid_engine::{Authority, IdGenerator};
use gdid_sql::{Dialect, Pick, RangeLayout, SqlAuthority, SqlShardedCounter, SqlStore};

/// The stores to run on: a fresh SQLite file, and a database of this test's own on PostgreSQL
/// (whose `RETURNING` is read the same way; its own, so that the trigger fails no other test's
/// commits). MySQL has no `RETURNING` and no deferred constraints: its update completes before it
/// answers.
async fn stores() -> Vec<String> {
    let mut urls = Vec::new();
    // Only the drivers this build has: another's URL would be refused.
    if cfg!(feature = "sqlite") {
        urls.push(gdid_testkit::sqlite_url("gdid-commit"));
    }
    let postgres = if cfg!(feature = "postgres") {
        gdid_testkit::server("GDID_POSTGRES_URL")
    } else {
        None
    };
    if let Some(postgres) = postgres {
        urls.push(gdid_testkit::database(&postgres, "gdid_commit_test").await);
    }
    urls
}

/// Makes every commit that follows an update of `table` fail: a trigger inserts a row whose
/// deferred foreign key has no parent. Returns the SQL that removes it again.
async fn fail_commits_after_updates_of(store: &SqlStore, table: &str) -> Vec<String> {
    let tag = fresh_scope("fk");
    let (parent, child, trigger) = (
        format!("{tag}_parent"),
        format!("{tag}_child"),
        format!("{tag}_trigger"),
    );
    execute(
        store,
        format!("CREATE TABLE {parent} (id INTEGER PRIMARY KEY)"),
    )
    .await;
    execute(
        store,
        format!(
            "CREATE TABLE {child} (parent INTEGER \
             REFERENCES {parent} (id) DEFERRABLE INITIALLY DEFERRED)"
        ),
    )
    .await;
    if store.dialect() == Dialect::Postgres {
        // Named with its schema: the trigger runs in the store's connection, whose
        // `search_path` is `pg_catalog, pg_temp`.
        let schema = store.schema().await.unwrap().unwrap().replace('"', "\"\"");
        execute(
            store,
            format!(
                "CREATE FUNCTION {trigger}() RETURNS trigger LANGUAGE plpgsql AS \
                 $$ BEGIN INSERT INTO \"{schema}\".{child} VALUES (42); RETURN NEW; END $$"
            ),
        )
        .await;
        execute(
            store,
            format!(
                "CREATE TRIGGER {trigger} AFTER UPDATE ON {table} \
                 FOR EACH ROW EXECUTE FUNCTION {trigger}()"
            ),
        )
        .await;
        vec![
            format!("DROP TRIGGER {trigger} ON {table}"),
            format!("DROP FUNCTION {trigger}"),
            format!("DROP TABLE {child}"),
            format!("DROP TABLE {parent}"),
        ]
    } else {
        execute(
            store,
            format!(
                "CREATE TRIGGER {trigger} AFTER UPDATE ON {table} \
                 BEGIN INSERT INTO {child} VALUES (42); END"
            ),
        )
        .await;
        vec![
            format!("DROP TRIGGER {trigger}"),
            format!("DROP TABLE {child}"),
            format!("DROP TABLE {parent}"),
        ]
    }
}

async fn undo(store: &SqlStore, statements: Vec<String>) {
    for statement in statements {
        execute(store, statement).await;
    }
}

/// A block whose reservation fails to commit is an error, never a block: the counter did not
/// move, and a block handed out from it would be handed out again.
#[tokio::test]
async fn a_block_whose_commit_failed_is_never_handed_out() {
    for url in stores().await {
        let authority = SqlAuthority::open(&url).await.unwrap();
        let (scope, sequence) = (fresh_scope("commit"), "orders");
        let first = authority.allocate(&scope, sequence, 10).await.unwrap();
        let undo_statements =
            fail_commits_after_updates_of(authority.store(), "gdid_counters").await;
        let mut handed_out = vec![first];
        for _ in 0..3 {
            match authority.allocate(&scope, sequence, 10).await {
                Ok(block) => handed_out.push(block),
                Err(e) => assert!(
                    e.to_string().contains("FOREIGN KEY") || e.to_string().contains("foreign key"),
                    "{url}: {e}"
                ),
            }
        }
        undo(authority.store(), undo_statements).await;
        handed_out.push(authority.allocate(&scope, sequence, 10).await.unwrap());
        let mut counters = HashSet::new();
        for block in &handed_out {
            for counter in block.start()..block.start() + block.len() {
                assert!(
                    counters.insert((block.era(), counter)),
                    "{url}: counter {counter} handed out twice: {handed_out:?}"
                );
            }
        }
        assert_eq!(
            handed_out.len(),
            2,
            "{url}: blocks of failed commits: {handed_out:?}"
        );
    }
}

/// Values of a range whose take fails to commit are an error, never ids.
#[tokio::test]
async fn sharded_values_whose_commit_failed_are_never_handed_out() {
    for url in stores().await {
        let store = SqlStore::connect(&url).await.unwrap();
        let layout = RangeLayout::new(1, 1_000, 1).unwrap();
        let ids =
            SqlShardedCounter::create(store.clone(), &fresh_scope("commit"), layout, Pick::Random)
                .await
                .unwrap();
        let mut handed_out = vec![ids.next_id().await.unwrap()];
        let undo_statements = fail_commits_after_updates_of(&store, "gdid_ranges").await;
        for _ in 0..3 {
            match ids.next_id().await {
                Ok(id) => handed_out.push(id),
                Err(e) => assert!(
                    e.to_string().to_lowercase().contains("foreign key"),
                    "{url}: {e}"
                ),
            }
        }
        undo(&store, undo_statements).await;
        handed_out.push(ids.next_id().await.unwrap());
        let distinct: HashSet<&u64> = handed_out.iter().collect();
        assert_eq!(
            distinct.len(),
            handed_out.len(),
            "{url}: an id handed out twice: {handed_out:?}"
        );
        assert_eq!(
            handed_out.len(),
            2,
            "{url}: ids of failed commits: {handed_out:?}"
        );
    }
}
