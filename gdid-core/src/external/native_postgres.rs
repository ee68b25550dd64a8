//! [`PgGdid`]: a `Gdid` in a column of the native PostgreSQL type `gdid` (the `gdid` extension,
//! `CREATE EXTENSION gdid`), for sqlx (feature `sqlx-postgres`) and tokio-postgres/postgres
//! (feature `postgres-types`).
//!
//! A plain `Gdid` binds and reads as `BYTEA`, as before; the wrapper is the opt-in for the native
//! type. Both send the same 12 bytes (the type's binary form), so only the type name differs: a
//! `PgGdid` bound to a `BYTEA` parameter, or read from a `BYTEA` column, is refused before any byte
//! is read, and so is a `Gdid` for a `gdid` column.
//!
//! ```
//! use gdid_core::{Gdid, PgGdid};
//!
//! let id: Gdid = "0:1:7".parse().unwrap();
//! let column = PgGdid::from(id); // bind it: `.bind(column)` / `&[&column]`
//! assert_eq!(Gdid::from(column), id);
//! ```
//!
//! With sqlx, `sqlx::query_scalar::<_, PgGdid>("SELECT id FROM orders")`; with tokio-postgres,
//! `row.get::<_, PgGdid>(0)`. `Option<PgGdid>` is a nullable column. See
//! `gdid-faults/tests/test_pg_extension.rs` for both against a server with the extension.

use crate::Gdid;

/// A `Gdid` read from or bound to a column of the PostgreSQL type `gdid` (the `gdid`
/// extension): the same 12 bytes as a `BYTEA`, under the type's name. Convert with `From`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PgGdid(pub Gdid);

/// The name of the extension's type, which both drivers match.
const TYPE_NAME: &str = "gdid";

impl From<Gdid> for PgGdid {
    fn from(id: Gdid) -> PgGdid {
        PgGdid(id)
    }
}

impl From<PgGdid> for Gdid {
    fn from(id: PgGdid) -> Gdid {
        id.0
    }
}

#[cfg(feature = "sqlx-postgres")]
mod sqlx_impls {
    use sqlx::encode::IsNull;
    use sqlx::error::BoxDynError;
    use sqlx::postgres::{PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgValueFormat, PgValueRef};
    use sqlx::{Decode, Encode, Postgres, Type};

    use super::{PgGdid, TYPE_NAME};
    use crate::Gdid;

    impl Type<Postgres> for PgGdid {
        fn type_info() -> PgTypeInfo {
            PgTypeInfo::with_name(TYPE_NAME)
        }
    }

    impl PgHasArrayType for PgGdid {
        fn array_type_info() -> PgTypeInfo {
            PgTypeInfo::with_name("_gdid")
        }
    }

    impl Encode<'_, Postgres> for PgGdid {
        fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
            buf.extend_from_slice(self.0.as_bytes());
            Ok(IsNull::No)
        }

        fn size_hint(&self) -> usize {
            Gdid::SIZE
        }
    }

    impl Decode<'_, Postgres> for PgGdid {
        fn decode(value: PgValueRef<'_>) -> Result<Self, BoxDynError> {
            Ok(PgGdid(match value.format() {
                PgValueFormat::Binary => Gdid::from_slice(value.as_bytes()?)?,
                PgValueFormat::Text => value.as_str()?.parse()?,
            }))
        }
    }
}

#[cfg(feature = "postgres-types")]
mod postgres_types_impls {
    use std::error::Error;

    use bytes::BytesMut;
    use postgres_types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

    use super::{PgGdid, TYPE_NAME};
    use crate::Gdid;

    impl ToSql for PgGdid {
        fn to_sql(
            &self,
            _ty: &Type,
            out: &mut BytesMut,
        ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
            out.extend_from_slice(self.0.as_bytes());
            Ok(IsNull::No)
        }

        fn accepts(ty: &Type) -> bool {
            ty.name() == TYPE_NAME
        }

        to_sql_checked!();
    }

    impl<'a> FromSql<'a> for PgGdid {
        fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<PgGdid, Box<dyn Error + Sync + Send>> {
            Ok(PgGdid(Gdid::from_slice(raw)?))
        }

        fn accepts(ty: &Type) -> bool {
            ty.name() == TYPE_NAME
        }
    }
}
