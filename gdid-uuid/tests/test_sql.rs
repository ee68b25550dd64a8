//! UUIDs in SQL columns through sqlx's `uuid` feature, on the real servers: MariaDB `BINARY(16)`,
//! PostgreSQL `uuid`, SQLite `BLOB`. Every id reads back as written, and `ORDER BY` on the column
//! gives the order v7 and v6 ids were made in.

use gdid_sql::{Dialect, SqlStore, with_pool};
use gdid_testkit::{fresh, server, sqlite_url};
use gdid_uuid::{NodeId, UuidV4Generator, UuidV6Generator, UuidV7Generator};
use rand::seq::SliceRandom;
use sqlx::AssertSqlSafe;
use uuid::Uuid;

const IDS: usize = 1_000;

/// Stores `ids` (in shuffled order, with their index) and returns the indexes and ids as
/// `ORDER BY id` reads them back.
async fn store_and_sort(store: &SqlStore, ids: &[Uuid]) -> Vec<(i64, Uuid)> {
    // Named in its schema on PostgreSQL: the store's connections resolve names in `pg_catalog`
    // alone (`search_path = pg_catalog, pg_temp`).
    let (column, insert, schema) = match store.dialect() {
        Dialect::MySql => ("BINARY(16)", "(?, ?)", ""),
        Dialect::Postgres => ("uuid", "($1, $2)", "public."),
        Dialect::Sqlite => ("BLOB", "(?, ?)", ""),
    };
    let table = format!("{schema}{}", fresh("uuids"));
    let create =
        format!("CREATE TABLE {table} (id {column} NOT NULL PRIMARY KEY, made BIGINT NOT NULL)");
    let insert = format!("INSERT INTO {table} (id, made) VALUES {insert}");
    let select = format!("SELECT made, id FROM {table} ORDER BY id");
    with_pool!(store, pool => sqlx::query(AssertSqlSafe(create)).execute(pool).await.map(drop))
        .unwrap();

    let mut rows: Vec<(i64, Uuid)> = (0..).zip(ids.iter().copied()).collect();
    rows.shuffle(&mut rand::rng());
    for (made, id) in rows {
        with_pool!(store, pool => sqlx::query(AssertSqlSafe(insert.as_str())).bind(id).bind(made).execute(pool).await.map(drop)).unwrap();
    }
    let sorted: Vec<(i64, Uuid)> =
        with_pool!(store, pool => sqlx::query_as(AssertSqlSafe(select)).fetch_all(pool).await)
            .unwrap();
    with_pool!(store, pool => sqlx::query(AssertSqlSafe(format!("DROP TABLE {table}"))).execute(pool).await.map(drop)).unwrap();
    sorted
}

async fn round_trip_and_order(url: &str) {
    let store = SqlStore::connect(url).await.unwrap();
    let dialect = store.dialect();
    let v7 = UuidV7Generator::new();
    let v6 = UuidV6Generator::new(NodeId::random());
    for (name, ids, ordered) in [
        (
            "v7",
            (0..IDS).map(|_| v7.generate().unwrap()).collect::<Vec<_>>(),
            true,
        ),
        (
            "v6",
            (0..IDS).map(|_| v6.generate().unwrap()).collect(),
            true,
        ),
        (
            "v4",
            (0..IDS)
                .map(|_| UuidV4Generator::new().generate())
                .collect(),
            false,
        ),
    ] {
        let sorted = store_and_sort(&store, &ids).await;
        assert_eq!(sorted.len(), IDS, "{dialect:?} {name}");
        for (made, id) in &sorted {
            assert_eq!(
                ids[usize::try_from(*made).unwrap()],
                *id,
                "{dialect:?} {name}: read back"
            );
        }
        if ordered {
            let made: Vec<i64> = sorted.iter().map(|(made, _)| *made).collect();
            let in_order: Vec<i64> = (0..).take(IDS).collect();
            assert_eq!(
                made, in_order,
                "{dialect:?} {name}: ORDER BY id is creation order"
            );
        } else {
            let mut expected = ids.clone();
            expected.sort_unstable();
            let read: Vec<Uuid> = sorted.iter().map(|(_, id)| *id).collect();
            assert_eq!(
                read, expected,
                "{dialect:?} {name}: ORDER BY id is Uuid order"
            );
        }
    }
}

#[tokio::test]
async fn mariadb_binary_16() {
    if let Some(url) = server("GDID_MYSQL_URL") {
        round_trip_and_order(&url).await;
    }
}

#[tokio::test]
async fn postgres_uuid() {
    if let Some(url) = server("GDID_POSTGRES_URL") {
        round_trip_and_order(&url).await;
    }
}

#[tokio::test]
async fn sqlite_blob() {
    round_trip_and_order(&sqlite_url("gdid-uuid")).await;
}
