//! sea-orm 2.0 column type (feature `sea-orm`).
//!
//! A `Gdid` can be a field of an entity, its primary key included, and `Option<Gdid>` a nullable
//! one: `From<Gdid> for Value` (`Value::Bytes`, the 12 bytes), `TryGetable`, `ValueType`
//! (column type `Binary(12)`: MySQL/MariaDB `BINARY(12)`, PostgreSQL `BYTEA`, SQLite `BLOB`),
//! `Nullable`, and `TryFromU64`, which a primary key needs and which always fails: a GDID key is
//! issued by the application (`auto_increment = false`), never by the database.
//!
//! Byte order is id order, so `order_by_asc(Column::Id)` is `Gdid` order. A column value of any
//! other length than 12 is an error carrying [`InvalidLength`](crate::InvalidLength) ("expected
//! 12 bytes, found N"), never a truncated or padded id.
//!
//! ```
//! use gdid_core::Gdid;
//! use sea_orm::entity::prelude::*;
//! use sea_orm::{DbBackend, QueryOrder, QueryTrait};
//!
//! #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
//! #[sea_orm(table_name = "orders")]
//! pub struct Model {
//!     #[sea_orm(primary_key, auto_increment = false)]
//!     pub id: Gdid,
//!     pub parent: Option<Gdid>,
//!     pub total_cents: i64,
//! }
//!
//! #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
//! pub enum Relation {}
//!
//! impl ActiveModelBehavior for ActiveModel {}
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let id: Gdid = "1293:3:57".parse()?;
//! let query = Entity::find().filter(Column::Id.gte(id)).order_by_asc(Column::Id);
//! assert_eq!(
//!     query.build(DbBackend::MySql).to_string(),
//!     "SELECT `orders`.`id`, `orders`.`parent`, `orders`.`total_cents` FROM `orders` \
//!      WHERE `orders`.`id` >= x'0000050D3000000000000039' ORDER BY `orders`.`id` ASC"
//! );
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, Value, ValueType, ValueTypeErr};
use sea_orm::{ColIdx, DbErr, QueryResult, TryFromU64, TryGetError, TryGetable};

use crate::Gdid;

impl From<Gdid> for Value {
    fn from(id: Gdid) -> Value {
        Value::Bytes(Some(id.to_bytes().to_vec()))
    }
}

impl From<&Gdid> for Value {
    fn from(id: &Gdid) -> Value {
        Value::from(*id)
    }
}

impl Nullable for Gdid {
    fn null() -> Value {
        Value::Bytes(None)
    }
}

impl ValueType for Gdid {
    /// # Errors
    ///
    /// `ValueTypeErr` unless `v` is non-null bytes of length 12.
    fn try_from(v: Value) -> Result<Gdid, ValueTypeErr> {
        match v {
            Value::Bytes(Some(bytes)) => Gdid::from_slice(&bytes).map_err(|_| ValueTypeErr),
            _ => Err(ValueTypeErr),
        }
    }

    fn type_name() -> String {
        "Gdid".to_owned()
    }

    fn array_type() -> ArrayType {
        ArrayType::Bytes
    }

    fn column_type() -> ColumnType {
        ColumnType::Binary(12)
    }
}

impl TryGetable for Gdid {
    /// # Errors
    ///
    /// `TryGetError::Null` for NULL (read an `Option<Gdid>` for a nullable column), and
    /// `DbErr::TryIntoErr` whose source is [`InvalidLength`](crate::InvalidLength) for bytes of
    /// another length than 12.
    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Gdid, TryGetError> {
        let bytes = <Vec<u8> as TryGetable>::try_get_by(res, index)?;
        Gdid::from_slice(&bytes).map_err(|e| {
            TryGetError::DbErr(DbErr::TryIntoErr {
                from: "Vec<u8>",
                into: "Gdid",
                source: Arc::new(e),
            })
        })
    }
}

impl TryFromU64 for Gdid {
    /// # Errors
    ///
    /// Always `DbErr::ConvertFromU64`: a GDID is not a number the database assigns.
    fn try_from_u64(_: u64) -> Result<Gdid, DbErr> {
        Err(DbErr::ConvertFromU64("Gdid"))
    }
}

#[cfg(test)]
mod tests {
    use sea_orm::sea_query::{Nullable, Value, ValueType};

    use crate::Gdid;

    #[test]
    fn value_round_trip() {
        let id = Gdid::from_parts(1293, 3, 57).unwrap();
        let value = Value::from(id);
        assert_eq!(value, Value::Bytes(Some(id.to_bytes().to_vec())));
        assert_eq!(<Gdid as ValueType>::try_from(value).ok(), Some(id));
        assert_eq!(Value::from(None::<Gdid>), <Gdid as Nullable>::null());
    }

    #[test]
    fn value_of_another_length_or_type_is_an_error() {
        for value in [
            Value::Bytes(Some(vec![0; 11])),
            Value::Bytes(Some(vec![0; 13])),
            Value::Bytes(None),
            Value::String(Some("1293:3:57".to_owned())),
        ] {
            assert!(<Gdid as ValueType>::try_from(value).is_err());
        }
    }
}
