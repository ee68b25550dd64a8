//! Telling a corrupt row from a missing one. The statements that move a row forward only match
//! rows whose values an authority could have written ([`integer_guard`] and range conditions), so
//! a corrupt row is never moved toward values that look valid again. When such a statement
//! matches nothing, the row is read back as text ([`described`]) to say which field holds what
//! ([`stored_int`], decoded by the engine's one decoder, `StoredInt::decode`).

use gdid_engine::backend::StoredInt;

use crate::dialect::Dialect;

/// SQL giving `column` as `"<storage class> <value>"`: `integer 42`, and on SQLite, which stores
/// any type in any column, also `text 'abc'`, `real 1.5` or `null NULL`.
pub(crate) fn described(dialect: Dialect, column: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("typeof({column}) || ' ' || quote({column})"),
        Dialect::Postgres => format!("'integer ' || CAST({column} AS TEXT)"),
        Dialect::MySql => format!("CONCAT('integer ', CAST({column} AS CHAR))"),
    }
}

/// A condition (` AND …`) that `columns` hold integers: SQLite only, the other dialects cannot
/// store anything else in a `BIGINT`. SQLite would otherwise read text as 0 in arithmetic, and
/// an update would turn a corrupt value into a small valid-looking one.
pub(crate) fn integer_guard(dialect: Dialect, columns: &[&str]) -> String {
    if dialect != Dialect::Sqlite {
        return String::new();
    }
    columns
        .iter()
        .map(|column| format!(" AND typeof({column}) = 'integer'"))
        .collect()
}

/// A [`described`] column as the engine reads stored integers: `integer 42` is an integer,
/// anything else is described as it is, `NULL` is missing.
pub(crate) fn stored_int(described: Option<&str>) -> StoredInt {
    let Some(described) = described else {
        return StoredInt::Missing;
    };
    match described.split_once(' ') {
        Some(("integer", value)) => value.parse().map_or_else(
            |_| StoredInt::Other(described.to_owned()),
            StoredInt::Integer,
        ),
        _ => StoredInt::Other(described.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn described_values_are_stored_ints() {
        assert_eq!(stored_int(Some("integer -3")), StoredInt::Integer(-3));
        assert_eq!(
            stored_int(Some("text 'abc'")),
            StoredInt::Other("text 'abc'".into())
        );
        assert_eq!(stored_int(None), StoredInt::Missing);
    }

    #[test]
    fn only_sqlite_needs_a_type_guard() {
        assert_eq!(integer_guard(Dialect::Postgres, &["a"]), "");
        assert_eq!(
            integer_guard(Dialect::Sqlite, &["a", "b"]),
            " AND typeof(a) = 'integer' AND typeof(b) = 'integer'"
        );
    }
}
