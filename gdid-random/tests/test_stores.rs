//! Random ids with retry against the real stores: 2,000 rows in a range of 3,000 go in without
//! a duplicate and without an error; the range then fills to the last value, and only then comes
//! the typed error, with the ids tried.
//!
//! MariaDB and PostgreSQL from `GDID_MYSQL_URL` / `GDID_POSTGRES_URL`, a SQLite file, and MongoDB
//! from `GDID_MONGODB_URI`; a store that is not configured is skipped, and with `CI=true` that
//! is a failure.

use std::collections::HashSet;
use std::future::Future;

use gdid_random::{IdRange, RandomIdGenerator, RetryError, birthday, insert_with_retry};
use gdid_sql::{SqlStore, with_pool};
use gdid_testkit::{fresh, server, sqlite_url};
use sqlx::AssertSqlSafe;

const RANGE: std::ops::Range<u64> = 1_000..4_000;

/// Fills `RANGE` through `insert` and checks what the store holds with `stored`.
async fn fill_the_range<E, I, Fut, S, SFut>(
    store: &str,
    insert: I,
    is_duplicate: fn(&E) -> bool,
    stored: S,
) where
    E: std::error::Error + 'static,
    I: Fn(u64) -> Fut + Copy,
    Fut: Future<Output = Result<(), E>>,
    S: Fn() -> SFut,
    SFut: Future<Output = Vec<u64>>,
{
    let ids = RandomIdGenerator::new(IdRange::new(RANGE).unwrap());
    // At most 2/3 full: this bound fails with probability below 1e-9 per insert.
    let bound = birthday::attempts_for(2.0 / 3.0, 1e-9);
    for n in 0..2_000 {
        if let Err(e) = insert_with_retry(&ids, bound, insert, is_duplicate).await {
            panic!("{store}: insert {n} of 2,000: {e}");
        }
    }
    let rows = stored().await;
    assert_eq!(rows.len(), 2_000, "{store}");
    assert_eq!(rows.iter().collect::<HashSet<_>>().len(), 2_000, "{store}");

    // The last free values take many draws: a bound that fails with odds below 1e-9 even for
    // the very last one.
    for n in 2_000..3_000 {
        if let Err(e) = insert_with_retry(&ids, 70_000, insert, is_duplicate).await {
            panic!("{store}: insert {n} of 3,000: {e}");
        }
    }
    let mut rows = stored().await;
    rows.sort_unstable();
    assert_eq!(
        rows,
        RANGE.collect::<Vec<_>>(),
        "{store}: every value, once"
    );

    match insert_with_retry(&ids, 25, insert, is_duplicate).await {
        Err(RetryError::Exhausted { tried }) => {
            assert_eq!(tried.len(), 25, "{store}");
            assert!(tried.iter().all(|id| RANGE.contains(id)), "{store}");
        }
        other => panic!("{store}: expected Exhausted, got {other:?}"),
    }
}

async fn execute(store: &SqlStore, sql: &str) {
    with_pool!(store, pool => sqlx::query(AssertSqlSafe(sql)).execute(pool).await.map(drop))
        .unwrap();
}

async fn sql_store(store: SqlStore, name: &str) {
    let mut table = fresh("random_ids");
    // Named in its schema on PostgreSQL: the store's connections resolve names in `pg_catalog`
    // alone (`search_path = pg_catalog, pg_temp`).
    if store.dialect() == gdid_sql::Dialect::Postgres {
        table = format!("public.{table}");
    }
    let create = format!("CREATE TABLE {table} (id BIGINT NOT NULL PRIMARY KEY)");
    let insert_sql = match store.dialect() {
        gdid_sql::Dialect::Postgres => format!("INSERT INTO {table} (id) VALUES ($1)"),
        _ => format!("INSERT INTO {table} (id) VALUES (?)"),
    };
    let select = format!("SELECT id FROM {table}");
    execute(&store, &create).await;
    let insert = |id: u64| {
        let (store, sql) = (&store, &insert_sql);
        async move {
            let id = i64::try_from(id).unwrap();
            with_pool!(store, pool => sqlx::query(AssertSqlSafe(sql.as_str())).bind(id).execute(pool).await.map(drop))
        }
    };
    let stored = || async {
        let ids: Vec<i64> = with_pool!(&store, pool => sqlx::query_scalar(AssertSqlSafe(select.as_str())).fetch_all(pool).await).unwrap();
        ids.into_iter()
            .map(|id| u64::try_from(id).unwrap())
            .collect()
    };
    fill_the_range(name, insert, gdid_sql::is_duplicate_key, stored).await;
    execute(&store, &format!("DROP TABLE {table}")).await;
}

#[tokio::test]
async fn mariadb_fills_a_small_range_without_a_duplicate() {
    let Some(url) = server("GDID_MYSQL_URL") else {
        return;
    };
    sql_store(SqlStore::connect(&url).await.unwrap(), "MariaDB").await;
}

#[tokio::test]
async fn postgres_fills_a_small_range_without_a_duplicate() {
    let Some(url) = server("GDID_POSTGRES_URL") else {
        return;
    };
    sql_store(SqlStore::connect(&url).await.unwrap(), "PostgreSQL").await;
}

#[tokio::test]
async fn sqlite_fills_a_small_range_without_a_duplicate() {
    let url = sqlite_url("gdid-random");
    sql_store(SqlStore::connect(&url).await.unwrap(), "SQLite").await;
}

#[tokio::test]
async fn mongodb_fills_a_small_range_without_a_duplicate() {
    use bson::{Document, doc};
    let Some(uri) = server("GDID_MONGODB_URI") else {
        return;
    };
    let client = mongodb::Client::with_uri_str(&uri).await.unwrap();
    let collection: mongodb::Collection<Document> = client
        .database("gdid_test")
        .collection(&fresh("random_ids"));
    let insert = |id: u64| {
        let collection = &collection;
        async move {
            let id = i64::try_from(id).unwrap();
            collection.insert_one(doc! { "_id": id }).await.map(drop)
        }
    };
    let stored = || async {
        let mut cursor = collection.find(doc! {}).await.unwrap();
        let mut ids = Vec::new();
        while cursor.advance().await.unwrap() {
            let id = cursor
                .deserialize_current()
                .unwrap()
                .get_i64("_id")
                .unwrap();
            ids.push(u64::try_from(id).unwrap());
        }
        ids
    };
    fill_the_range("MongoDB", insert, gdid_mongo::is_duplicate_key, stored).await;
    collection.drop().await.unwrap();
}
