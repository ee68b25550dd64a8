//! sqlx column support (features `sqlx-mysql`, `sqlx-postgres`, `sqlx-sqlite`).
//!
//! A `Gdid` binds and decodes as its 12-byte form: MySQL/MariaDB `BINARY(12)`, PostgreSQL
//! `BYTEA`, SQLite `BLOB`. Byte order is id order, so `ORDER BY` on the column is `Gdid` order.
//! A column value of any other length is a decode error ("expected 12 bytes, found N"), never a
//! truncated or padded id.
//!
//! A nullable column is an `Option<Gdid>` (sqlx's own `Option` support): `None` binds as NULL and
//! NULL reads back as `None`. NULL read into a plain `Gdid` is sqlx's `UnexpectedNullError`, on
//! every database. `Gdid::ZERO` is a value like any other here; [`Gdid::non_zero`] reads it as
//! NFX/Azos's "no id" where that is asked for.

use sqlx::encode::IsNull;
use sqlx::error::{BoxDynError, UnexpectedNullError};
use sqlx::{Database, Decode, Encode, Type, ValueRef};

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
        // SQLite's `&[u8]` reads NULL as no bytes: say NULL rather than "found 0".
        if value.is_null() {
            return Err(Box::new(UnexpectedNullError));
        }
        let bytes = <&'r [u8] as Decode<'r, DB>>::decode(value)?;
        Ok(Gdid::from_slice(bytes)?)
    }
}
