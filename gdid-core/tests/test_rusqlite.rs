//! rusqlite (feature `rusqlite`) on a real SQLite file, beside sqlx (feature `sqlx-sqlite`):
//! the same 12-byte `BLOB` either way, `ORDER BY` the column is id order, and a blob of
//! another length or a value of another type is an error.

use gdid_core::Gdid;
use gdid_core::proptest::any_gdid;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use rusqlite::Connection;
use rusqlite::types::FromSqlError;

/// 200 random ids, distinct.
fn random_ids() -> Vec<Gdid> {
    let mut runner = TestRunner::deterministic();
    let mut ids: Vec<Gdid> = (0..200)
        .map(|_| any_gdid().new_tree(&mut runner).unwrap().current())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[tokio::test]
async fn rusqlite_and_sqlx_read_each_others_rows_in_id_order() {
    let url = gdid_testkit::sqlite_url("rusqlite_and_sqlx");
    let path = url.strip_prefix("sqlite:").unwrap();
    let ids = random_ids();
    let (written_by_rusqlite, written_by_sqlx) = ids.split_at(ids.len() / 2);

    let connection = Connection::open(path).unwrap();
    connection
        .execute_batch("CREATE TABLE orders (id BLOB PRIMARY KEY, writer TEXT NOT NULL)")
        .unwrap();
    for id in written_by_rusqlite.iter().rev() {
        connection
            .execute("INSERT INTO orders VALUES (?1, 'rusqlite')", [id])
            .unwrap();
    }

    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    for id in written_by_sqlx {
        sqlx::query("INSERT INTO orders VALUES (?, 'sqlx')")
            .bind(id)
            .execute(&pool)
            .await
            .unwrap();
    }
    let read_by_sqlx: Vec<Gdid> = sqlx::query_scalar("SELECT id FROM orders ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;

    let read_by_rusqlite: Vec<Gdid> = connection
        .prepare("SELECT id FROM orders ORDER BY id")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(read_by_rusqlite, ids, "rusqlite: every row, in id order");
    assert_eq!(read_by_sqlx, ids, "sqlx: every row, in id order");

    let lengths: Vec<i64> = connection
        .prepare("SELECT DISTINCT length(id) FROM orders")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(lengths, [12], "every id is a 12-byte BLOB");
}

#[test]
fn a_blob_of_another_length_or_a_value_of_another_type_is_an_error() {
    let url = gdid_testkit::sqlite_url("rusqlite_errors");
    let connection = Connection::open(url.strip_prefix("sqlite:").unwrap()).unwrap();
    let read = |sql: &str| connection.query_row(sql, [], |row| row.get::<_, Gdid>(0));

    match read("SELECT x'0102030405060708090a0b'") {
        Err(rusqlite::Error::FromSqlConversionFailure(_, _, error)) => {
            match error.downcast_ref::<FromSqlError>() {
                Some(FromSqlError::InvalidBlobSize {
                    expected_size: 12,
                    blob_size: 11,
                }) => {}
                other => panic!("{other:?}"),
            }
        }
        Err(rusqlite::Error::InvalidColumnType(..)) => panic!("a blob is the column's type"),
        other => panic!("an 11-byte blob read as {other:?}"),
    }
    for other_type in ["SELECT '1293:3:57'", "SELECT 57", "SELECT NULL"] {
        assert!(
            matches!(
                read(other_type),
                Err(rusqlite::Error::InvalidColumnType(..))
            ),
            "{other_type}: {:?}",
            read(other_type)
        );
    }
    assert_eq!(
        read("SELECT x'0000050d3000000000000039'").unwrap(),
        Gdid::from_parts(1293, 3, 57).unwrap()
    );
}
