//! rusqlite [`ToSql`] and [`FromSql`] for [`Gdid`] (feature `rusqlite`): a 12-byte `BLOB`, the
//! same bytes sqlx's SQLite form writes, so `ORDER BY` the column is id order and both crates
//! read each other's rows. A blob of another length, or a value that is not a blob, is an error.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::Gdid;

impl ToSql for Gdid {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Blob(self.as_bytes())))
    }
}

impl FromSql for Gdid {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let blob = value.as_blob()?;
        Gdid::from_slice(blob).map_err(|wrong| FromSqlError::InvalidBlobSize {
            expected_size: wrong.expected,
            blob_size: wrong.found,
        })
    }
}
