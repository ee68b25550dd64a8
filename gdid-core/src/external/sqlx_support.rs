//! sqlx column support (features `sqlx-mysql`, `sqlx-postgres`, `sqlx-sqlite`).
//!
//! A `Gdid` binds and decodes as its 12-byte form: MySQL/MariaDB `BINARY(12)`, PostgreSQL
//! `BYTEA`, SQLite `BLOB`. Byte order is id order, so `ORDER BY` on the column is `Gdid` order.
//! A column value of any other length is a decode error ("expected 12 bytes, found N"), never a
//! truncated or padded id.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Database, Decode, Encode, Type};

use crate::Gdid;

impl<DB: Database> Type<DB> for Gdid
where
    [u8]: Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <[u8] as Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <[u8] as Type<DB>>::compatible(ty)
    }
}

impl<'q, DB: Database> Encode<'q, DB> for Gdid
where
    for<'a> &'a [u8]: Encode<'q, DB>,
{
    fn encode_by_ref(&self, buf: &mut DB::ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <&[u8] as Encode<'q, DB>>::encode(self.as_bytes().as_slice(), buf)
    }

    fn size_hint(&self) -> usize {
        Gdid::SIZE
    }
}

impl<'r, DB: Database> Decode<'r, DB> for Gdid
where
    &'r [u8]: Decode<'r, DB>,
{
    fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
        let bytes = <&'r [u8] as Decode<'r, DB>>::decode(value)?;
        Ok(Gdid::from_slice(bytes)?)
    }
}
