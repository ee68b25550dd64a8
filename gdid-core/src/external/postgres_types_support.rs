//! postgres-types 0.2 `ToSql`/`FromSql` (feature `postgres-types`), for tokio-postgres and
//! postgres users.
//!
//! A `Gdid` binds and reads as PostgreSQL `BYTEA`, its 12 bytes; `Option<Gdid>` is a nullable
//! column. Byte order is id order, so `ORDER BY` on the column is `Gdid` order. A column value of
//! any other length is an error carrying [`InvalidLength`](crate::InvalidLength) ("expected 12
//! bytes, found N"), never a truncated or padded id; a column of another type is refused by
//! `accepts` before any byte is read.
//!
//! ```
//! use bytes::BytesMut;
//! use gdid_core::Gdid;
//! use postgres_types::{FromSql, IsNull, ToSql, Type};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error + Sync + Send>> {
//! let id: Gdid = "1293:3:57".parse()?;
//! let mut buf = BytesMut::new();
//! assert!(matches!(id.to_sql(&Type::BYTEA, &mut buf)?, IsNull::No));
//! assert_eq!(&buf[..], id.as_bytes());
//! assert_eq!(Gdid::from_sql(&Type::BYTEA, &buf)?, id);
//!
//! let err = Gdid::from_sql(&Type::BYTEA, &buf[..11]).unwrap_err();
//! assert_eq!(err.to_string(), "expected 12 bytes, found 11");
//! assert!(!<Gdid as ToSql>::accepts(&Type::TEXT));
//! # Ok(())
//! # }
//! ```
//!
//! With tokio-postgres (`client.query("SELECT id FROM orders WHERE id > $1 ORDER BY id",
//! &[&id])`, then `row.get::<_, Gdid>(0)`) see `gdid-core/tests/test_orm_postgres_types.rs`.

use std::error::Error;

use bytes::BytesMut;
use postgres_types::{FromSql, IsNull, ToSql, Type, accepts, to_sql_checked};

use crate::Gdid;

impl ToSql for Gdid {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        <&[u8] as ToSql>::to_sql(&self.as_bytes().as_slice(), ty, out)
    }

    accepts!(BYTEA);

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Gdid {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Gdid, Box<dyn Error + Sync + Send>> {
        let bytes = <&[u8] as FromSql>::from_sql(ty, raw)?;
        Ok(Gdid::from_slice(bytes)?)
    }

    accepts!(BYTEA);
}
