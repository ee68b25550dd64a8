#![cfg(feature = "postgres-types")]
//! postgres-types through tokio-postgres on the real PostgreSQL server: `BYTEA` columns.
//!
//! Round-trips ids and NULLs (`Option<Gdid>`), checks that `ORDER BY id` is `Gdid` order and that
//! a value of 11 bytes is an error carrying `InvalidLength`. Reads `GDID_POSTGRES_URL`; without it
//! the test says it is skipped, and with `CI=true` a missing server is a failure. The table is
//! `TEMPORARY`: it belongs to the test's connection.

use gdid_core::{Gdid, InvalidLength};
use tokio_postgres::NoTls;

mod common;

const ROWS: usize = 500;

#[tokio::test]
async fn tokio_postgres_bytea() {
    let Some(url) = gdid_testkit::server("GDID_POSTGRES_URL") else {
        return;
    };
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
    let connection = tokio::spawn(connection);

    client
        .batch_execute(
            "CREATE TEMPORARY TABLE gdid_orm_pgtypes_orders \
             (id BYTEA NOT NULL PRIMARY KEY, parent BYTEA NULL, n BIGINT NOT NULL)",
        )
        .await
        .unwrap();
    let ids = common::scrambled_ids(0x9e57, ROWS);
    let insert = client
        .prepare("INSERT INTO gdid_orm_pgtypes_orders (id, parent, n) VALUES ($1, $2, $3)")
        .await
        .unwrap();
    for (n, id) in ids.iter().enumerate() {
        let parent: Option<Gdid> = (n % 3 != 0).then(|| ids[n - 1]);
        let n = i64::try_from(n).unwrap();
        client.execute(&insert, &[id, &parent, &n]).await.unwrap();
    }

    // ORDER BY id is Gdid order; every row, NULL parents included, comes back intact.
    let rows = client
        .query(
            "SELECT id, parent, n FROM gdid_orm_pgtypes_orders ORDER BY id",
            &[],
        )
        .await
        .unwrap();
    let read: Vec<Gdid> = rows.iter().map(|row| row.get::<_, Gdid>(0)).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(read, sorted, "ORDER BY id must be Gdid order");
    let mut nulls = 0;
    for row in &rows {
        let n = usize::try_from(row.get::<_, i64>(2)).unwrap();
        assert_eq!(row.get::<_, Gdid>(0), ids[n]);
        let parent: Option<Gdid> = row.get(1);
        assert_eq!(parent, (n % 3 != 0).then(|| ids[n - 1]));
        nulls += usize::from(parent.is_none());
    }
    assert!(nulls > 0);

    // A bound id in a comparison.
    let probe = ids[ROWS / 2];
    let above: i64 = client
        .query_one(
            "SELECT count(*) FROM gdid_orm_pgtypes_orders WHERE id > $1",
            &[&probe],
        )
        .await
        .unwrap()
        .get(0);
    let expected = ids.iter().filter(|id| **id > probe).count();
    assert_eq!(above, i64::try_from(expected).unwrap());

    // 11 bytes are an error carrying InvalidLength, never an id; NULL is None.
    let row = client
        .query_one(
            "SELECT '\\x0102030405060708090a0b'::bytea, NULL::bytea",
            &[],
        )
        .await
        .unwrap();
    let err = row.try_get::<_, Gdid>(0).unwrap_err();
    let cause = std::error::Error::source(&err).expect("the decoding error");
    assert_eq!(
        cause.downcast_ref::<InvalidLength>(),
        Some(&InvalidLength {
            expected: 12,
            found: 11
        }),
        "{err}"
    );
    assert_eq!(row.get::<_, Option<Gdid>>(1), None);
    assert!(row.try_get::<_, Gdid>(1).is_err(), "NULL is not an id");

    // A column of another type is refused before any byte is read.
    let row = client.query_one("SELECT 'text'::text", &[]).await.unwrap();
    assert!(row.try_get::<_, Gdid>(0).is_err());

    drop(client);
    connection.await.unwrap().unwrap();
}
