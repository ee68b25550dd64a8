#![cfg(all(
    feature = "sqlx-mysql",
    feature = "sqlx-postgres",
    feature = "sqlx-sqlite"
))]
//! SQL columns on real servers: MariaDB/MySQL `BINARY(12)`, PostgreSQL `BYTEA`, SQLite `BLOB`;
//! `Option<Gdid>` for NULL columns.
//!
//! Reads `GDID_MYSQL_URL` and `GDID_POSTGRES_URL`; without them a test says it is skipped, and
//! with `CI=true` a missing server is a failure. SQLite runs on a temporary file.

use gdid_core::Gdid;
use sqlx::{
    AssertSqlSafe, Database, Decode, Encode, Executor, IntoArguments, Pool, QueryBuilder, Type,
};

mod common;

const ROWS: usize = 1_000;

/// Creates `table` with `columns`, dropping the one a failed run may have left.
async fn create_table<DB>(pool: &Pool<DB>, table: &str, columns: &str)
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    for statement in [
        format!("DROP TABLE IF EXISTS {table}"),
        format!("CREATE TABLE {table} ({columns})"),
    ] {
        pool.execute(AssertSqlSafe(statement)).await.unwrap();
    }
}

/// Ids in `column_type` columns of tables named after `dialect`:
/// - a primary key: the ids inserted read back in `ORDER BY id` order, which must be `Ord` order,
///   every id intact, and one is found by a bound parameter;
/// - an `Option<Gdid>` column: `None` binds as NULL and NULL reads back as `None`, a value as
///   `Some`; `IS NULL` finds the row that has no id.
async fn columns_round_trip_and_sort<DB>(pool: &Pool<DB>, dialect: &str, column_type: &str)
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> DB::Arguments: IntoArguments<DB>,
    Gdid: Type<DB> + for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB>,
    i64: Type<DB> + for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB>,
    Option<Gdid>: for<'q> Encode<'q, DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    // A primary key column.
    let table = &table_name(dialect);
    let ids = common::scrambled_ids(0x6d1d, ROWS);
    let columns = format!("id {column_type} PRIMARY KEY, n BIGINT NOT NULL");
    create_table(pool, table, &columns).await;

    let mut insert = QueryBuilder::<DB>::new(format!("INSERT INTO {table} (id, n) "));
    insert.push_values(ids.iter().enumerate(), |mut row, (n, id)| {
        row.push_bind(*id).push_bind(i64::try_from(n).unwrap());
    });
    insert.build().execute(pool).await.unwrap();

    let rows: Vec<(Gdid, i64)> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT id, n FROM {table} ORDER BY id"
    )))
    .fetch_all(pool)
    .await
    .unwrap();
    let read: Vec<Gdid> = rows.iter().map(|(id, _)| *id).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(read, sorted, "ORDER BY id must be Gdid order");
    for (id, n) in &rows {
        assert_eq!(
            ids[usize::try_from(*n).unwrap()],
            *id,
            "row {n} came back changed"
        );
    }

    // One id looked up by a bound parameter.
    let probe = ids[ROWS / 2];
    let mut select = QueryBuilder::<DB>::new(format!("SELECT n FROM {table} WHERE id = "));
    select.push_bind(probe);
    let n: (i64,) = select.build_query_as().fetch_one(pool).await.unwrap();
    assert_eq!(n.0, i64::try_from(ROWS / 2).unwrap());

    pool.execute(AssertSqlSafe(format!("DROP TABLE {table}")))
        .await
        .unwrap();

    // A nullable column.
    let table = &table_name(&format!("{dialect}_null"));
    let rows: [(i64, Option<Gdid>); 3] = [
        (1, None),
        (2, Some("1293:3:57".parse().unwrap())),
        (3, Some(Gdid::ZERO)),
    ];
    let columns = format!("n BIGINT PRIMARY KEY, parent {column_type} NULL");
    create_table(pool, table, &columns).await;
    let mut insert = QueryBuilder::<DB>::new(format!("INSERT INTO {table} (n, parent) "));
    insert.push_values(rows, |mut row, (n, parent)| {
        row.push_bind(n).push_bind(parent);
    });
    insert.build().execute(pool).await.unwrap();

    let read: Vec<(i64, Option<Gdid>)> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT n, parent FROM {table} ORDER BY n"
    )))
    .fetch_all(pool)
    .await
    .unwrap();
    // The zero id stays a value: NULL, not Gdid::ZERO, is "no id" (Gdid::non_zero asks for Azos's).
    assert_eq!(read, rows);
    let null: Vec<(i64,)> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT n FROM {table} WHERE parent IS NULL"
    )))
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(null, [(1,)]);
    // A NULL read into a plain Gdid is an error, never a made-up id.
    let err = sqlx::query_as::<DB, (Gdid,)>(AssertSqlSafe(format!(
        "SELECT parent FROM {table} WHERE n = 1"
    )))
    .fetch_one(pool)
    .await
    .unwrap_err();
    assert!(err.to_string().contains("unexpected null"), "{err}");

    pool.execute(AssertSqlSafe(format!("DROP TABLE {table}")))
        .await
        .unwrap();
}

/// A column value that is not 12 bytes is a decode error, never a padded or cut id.
async fn wrong_length_is_a_decode_error<DB>(pool: &Pool<DB>, select_11_bytes: &'static str)
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> DB::Arguments: IntoArguments<DB>,
    Gdid: Type<DB> + for<'r> Decode<'r, DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let err = sqlx::query_as::<DB, (Gdid,)>(select_11_bytes)
        .fetch_one(pool)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("expected 12 bytes, found 11"),
        "unexpected error: {err}"
    );
}

fn table_name(dialect: &str) -> String {
    format!("gdid_test_{dialect}_{}", std::process::id())
}

/// A pool on the server `variable` names, or `None` when the test is skipped.
async fn connect<DB: Database>(variable: &str) -> Option<Pool<DB>> {
    Some(
        Pool::connect(&gdid_testkit::server(variable)?)
            .await
            .unwrap(),
    )
}

#[tokio::test]
async fn sqlite_blob_round_trips_and_sorts() {
    gdid_testkit::ran("SQLite");
    let dir = std::env::temp_dir().join(format!("gdid-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("ids.sqlite").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    columns_round_trip_and_sort(&pool, "sqlite", "BLOB").await;
    wrong_length_is_a_decode_error(&pool, "SELECT x'0102030405060708090a0b'").await;
    pool.close().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn mysql_binary_12_round_trips_and_sorts() {
    if let Some(pool) = connect::<sqlx::MySql>("GDID_MYSQL_URL").await {
        columns_round_trip_and_sort(&pool, "mysql", "BINARY(12)").await;
        wrong_length_is_a_decode_error(&pool, "SELECT CAST(REPEAT('a', 11) AS BINARY(11))").await;
    }
}

#[tokio::test]
async fn postgres_bytea_round_trips_and_sorts() {
    if let Some(pool) = connect::<sqlx::Postgres>("GDID_POSTGRES_URL").await {
        columns_round_trip_and_sort(&pool, "pg", "BYTEA").await;
        wrong_length_is_a_decode_error(&pool, "SELECT decode('0102030405060708090a0b', 'hex')")
            .await;
    }
}
