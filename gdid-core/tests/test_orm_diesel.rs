#![cfg(feature = "diesel")]
//! diesel 2.3 on real servers: MariaDB/MySQL `BINARY(12)`, PostgreSQL `BYTEA`, SQLite `BLOB`.
//!
//! Each test inserts ids through diesel's query builder (`Insertable`), reads them back
//! (`Queryable`/`Selectable`, `.order(id)`, `.filter(id.eq(…))`), round-trips a NULL
//! (`Option<Gdid>` in a `Nullable<Binary>` column), and reads a value of 11 bytes, which must be
//! a deserialization error carrying `InvalidLength`.
//!
//! Reads `GDID_MYSQL_URL` and `GDID_POSTGRES_URL`; without them a test says it is skipped, and
//! with `CI=true` a missing server is a failure. SQLite runs on a temporary file. The tables are
//! `TEMPORARY`: each belongs to its connection, so tests running at once (or two runs of the
//! suite on one server) never see each other's rows.
//!
//! The MySQL connection links libmysqlclient (`default-libmysqlclient-dev`; `.ci/run` installs it).

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Binary;
use gdid_core::{Gdid, InvalidLength};

diesel::table! {
    gdid_orm_diesel_orders (id) {
        id -> Binary,
        parent -> Nullable<Binary>,
        n -> BigInt,
    }
}

use gdid_orm_diesel_orders as orders;

#[derive(Queryable, Selectable, Insertable, Debug, Clone, PartialEq)]
#[diesel(table_name = gdid_orm_diesel_orders)]
struct Order {
    id: Gdid,
    parent: Option<Gdid>,
    n: i64,
}

mod common;

const ROWS: usize = 500;

/// Every third row has no parent (NULL); the others point at the row before.
fn orders(ids: &[Gdid]) -> Vec<Order> {
    ids.iter()
        .enumerate()
        .map(|(n, id)| Order {
            id: *id,
            parent: (n % 3 != 0).then(|| ids[n - 1]),
            n: i64::try_from(n).unwrap(),
        })
        .collect()
}

/// The `InvalidLength` among the causes of `err` (diesel wraps a field's error in a
/// `DeserializeFieldError` naming the field).
fn invalid_length(err: &diesel::result::Error) -> Option<&InvalidLength> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(error) = cause {
        if let Some(found) = error.downcast_ref::<InvalidLength>() {
            return Some(found);
        }
        cause = error.source();
    }
    None
}

/// A connection to the server `variable` names, or `None` when the test is skipped.
fn connect<C: Connection>(variable: &str) -> Option<C> {
    Some(C::establish(&gdid_testkit::server(variable)?).unwrap())
}

/// The whole check on one connection: `$binary` is the dialect's type of the id columns (the
/// temporary table is made with it), `$eleven_bytes` a SQL expression of an 11-byte binary value
/// in that dialect.
macro_rules! round_trip_order_and_errors {
    ($conn:expr, $binary:literal, $eleven_bytes:expr) => {{
        let conn = $conn;
        let create = concat!(
            "CREATE TEMPORARY TABLE gdid_orm_diesel_orders (id ",
            $binary,
            " NOT NULL PRIMARY KEY, parent ",
            $binary,
            " NULL, n BIGINT NOT NULL)"
        );
        diesel::sql_query(create).execute(conn).unwrap();

        let ids = common::scrambled_ids(0xd1e5, ROWS);
        let rows = orders(&ids);
        for chunk in rows.chunks(100) {
            diesel::insert_into(orders::table)
                .values(chunk)
                .execute(conn)
                .unwrap();
        }

        // ORDER BY id is Gdid order, and every row comes back intact, NULLs included.
        let read: Vec<Order> = orders::table
            .order(orders::id)
            .select(Order::as_select())
            .load(conn)
            .unwrap();
        let mut expected = rows.clone();
        expected.sort_by_key(|order| order.id);
        assert_eq!(read, expected, "ORDER BY id must be Gdid order");
        assert!(read.iter().any(|order| order.parent.is_none()));

        // A bound id in a filter, and a range.
        let probe = &rows[ROWS / 2];
        let found: Order = orders::table
            .filter(orders::id.eq(probe.id))
            .select(Order::as_select())
            .first(conn)
            .unwrap();
        assert_eq!(&found, probe);
        let above = orders::table
            .filter(orders::id.gt(&probe.id))
            .count()
            .get_result::<i64>(conn)
            .unwrap();
        let expected_above = rows.iter().filter(|order| order.id > probe.id).count();
        assert_eq!(above, i64::try_from(expected_above).unwrap());

        // A NULL parent reads as None; a nullable column bound from Option<Gdid>.
        let orphans: Vec<Gdid> = orders::table
            .filter(orders::parent.is_null())
            .order(orders::id)
            .select(orders::id)
            .load(conn)
            .unwrap();
        let mut expected_orphans: Vec<Gdid> = rows
            .iter()
            .filter(|order| order.parent.is_none())
            .map(|order| order.id)
            .collect();
        expected_orphans.sort();
        assert_eq!(orphans, expected_orphans);
        let child: Option<Gdid> = orders::table
            .filter(orders::parent.eq(Some(rows[1].parent.unwrap())))
            .select(orders::id)
            .first(conn)
            .optional()
            .unwrap();
        assert_eq!(child, Some(rows[1].id));

        // 11 bytes are an error carrying InvalidLength, never an id.
        let err = diesel::select(sql::<Binary>($eleven_bytes))
            .get_result::<Gdid>(conn)
            .unwrap_err();
        assert!(
            matches!(err, diesel::result::Error::DeserializationError(_)),
            "expected a deserialization error, got {err:?}"
        );
        assert_eq!(
            invalid_length(&err),
            Some(&InvalidLength {
                expected: 12,
                found: 11
            }),
            "{err:?}"
        );

        // A NULL of the nullable type is None (into a plain `Gdid` it does not compile).
        let none = diesel::select(sql::<diesel::sql_types::Nullable<Binary>>("NULL"))
            .get_result::<Option<Gdid>>(conn)
            .unwrap();
        assert_eq!(none, None);
    }};
}

#[test]
fn sqlite_blob() {
    let url = gdid_testkit::sqlite_url("orm_diesel");
    let path = url.strip_prefix("sqlite:").unwrap();
    let mut conn = diesel::SqliteConnection::establish(path).unwrap();
    round_trip_order_and_errors!(&mut conn, "BLOB", "X'0102030405060708090a0b'");
}

#[test]
fn mysql_binary_12() {
    if let Some(mut conn) = connect::<diesel::MysqlConnection>("GDID_MYSQL_URL") {
        round_trip_order_and_errors!(&mut conn, "BINARY(12)", "X'0102030405060708090a0b'");
    }
}

#[test]
fn postgres_bytea() {
    if let Some(mut conn) = connect::<diesel::PgConnection>("GDID_POSTGRES_URL") {
        round_trip_order_and_errors!(&mut conn, "BYTEA", "'\\x0102030405060708090a0b'::bytea");
    }
}
