//! diesel 2.3 column support (feature `diesel`).
//!
//! A `Gdid` is a value of the SQL type [`Binary`] (its aliases `Bytea`, `Blob`, `Varbinary`… are
//! the same type) on the MySQL/MariaDB (`BINARY(12)`), PostgreSQL (`BYTEA`) and SQLite (`BLOB`)
//! backends: `ToSql`, `FromSql`, `AsExpression` (so a `Gdid` or `&Gdid` can be bound in a filter
//! or an insert, `Nullable<Binary>` included) and `FromSqlRow` (so it can be a field of a
//! `Queryable`/`Selectable` struct, and `Option<Gdid>` one of a nullable column).
//!
//! Byte order is id order, so `.order(id)` on the column is `Gdid` order. A value of any other
//! length than 12 is a deserialization error carrying [`InvalidLength`](crate::InvalidLength)
//! ("expected 12 bytes, found N"), never a truncated or padded id.
//!
//! The feature enables diesel's `mysql_backend`, `postgres_backend` and `sqlite` only: no client
//! library is linked for MySQL or PostgreSQL. Enable diesel's `mysql`/`postgres` features in your
//! own crate for the connections.
//!
//! ```
//! use diesel::prelude::*;
//! use gdid_core::Gdid;
//!
//! diesel::table! {
//!     orders (id) {
//!         id -> Binary,
//!         parent -> Nullable<Binary>,
//!         total_cents -> BigInt,
//!     }
//! }
//!
//! #[derive(Queryable, Selectable, Insertable, Debug, PartialEq)]
//! #[diesel(table_name = orders)]
//! struct Order {
//!     id: Gdid,
//!     parent: Option<Gdid>,
//!     total_cents: i64,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let id: Gdid = "1293:3:57".parse()?;
//! // The SQL diesel sends, with the id as a bound parameter (12 bytes on the wire).
//! let query = orders::table
//!     .filter(orders::id.ge(id))
//!     .order(orders::id)
//!     .select(Order::as_select());
//! let sql = diesel::debug_query::<diesel::pg::Pg, _>(&query).to_string();
//! assert!(sql.contains(r#"ORDER BY "orders"."id""#), "{sql}");
//! assert!(sql.ends_with(r#"-- binds: [Gdid("1293:3:57")]"#), "{sql}");
//! # Ok(())
//! # }
//! ```

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::mysql::{Mysql, MysqlValue};
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::Binary;
use diesel::sqlite::{Sqlite, SqliteValue};

use crate::Gdid;

/// Gives `Gdid` diesel's `AsExpression<Binary>` (and `Nullable<Binary>`, for `Gdid`, `&Gdid`,
/// `&&Gdid`) and `FromSqlRow`: the derives, written for the foreign type through this stand-in.
#[derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow)]
#[diesel(foreign_derive)]
#[diesel(sql_type = Binary)]
#[allow(dead_code)] // only its derives are used
struct GdidProxy(Gdid);

/// The 12 bytes on every backend whose `[u8]` binds as `Binary`.
impl<DB> ToSql<Binary, DB> for Gdid
where
    DB: Backend,
    [u8]: ToSql<Binary, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        <[u8] as ToSql<Binary, DB>>::to_sql(self.as_bytes().as_slice(), out)
    }
}

/// The column's bytes, which must be exactly 12.
fn decode(bytes: &[u8]) -> deserialize::Result<Gdid> {
    Ok(Gdid::from_slice(bytes)?)
}

impl FromSql<Binary, Mysql> for Gdid {
    fn from_sql(value: MysqlValue<'_>) -> deserialize::Result<Self> {
        decode(value.as_bytes())
    }
}

impl FromSql<Binary, Pg> for Gdid {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        decode(value.as_bytes())
    }
}

impl FromSql<Binary, Sqlite> for Gdid {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        decode(value.read_blob())
    }
}

#[cfg(test)]
mod tests {
    use super::decode;
    use crate::{Gdid, InvalidLength};

    #[test]
    fn twelve_bytes_are_the_id() {
        let id = Gdid::from_parts(1293, 3, 57).unwrap();
        assert_eq!(decode(id.as_bytes()).unwrap(), id);
    }

    #[test]
    fn another_length_is_invalid_length() {
        for bytes in [&[0_u8; 11][..], &[0; 13], &[]] {
            let err = decode(bytes).unwrap_err();
            assert_eq!(
                err.downcast_ref::<InvalidLength>(),
                Some(&InvalidLength {
                    expected: 12,
                    found: bytes.len()
                })
            );
            assert_eq!(
                err.to_string(),
                format!("expected 12 bytes, found {}", bytes.len())
            );
        }
    }
}
