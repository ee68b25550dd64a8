//! Telling a corrupt row from a missing one. The statements that move a row forward only match
//! rows whose values an authority could have written ([`integer_guard`] and range conditions), so
//! a corrupt row is never moved toward values that look valid again. When such a statement
//! matches nothing, the row is read back as text ([`described`]) to say which field holds what
//! ([`integer_in`]).

use std::ops::RangeInclusive;

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

/// The integer a [`described`] column holds, or what is wrong with it: not an integer, or outside
/// `range`.
pub(crate) fn integer_in(
    field: &str,
    described: Option<&str>,
    range: RangeInclusive<i64>,
) -> Result<i64, String> {
    let Some(described) = described else {
        return Err(format!("{field} is NULL, expected an integer"));
    };
    let (class, value) = described.split_once(' ').unwrap_or(("?", described));
    let integer = (class == "integer")
        .then(|| value.parse::<i64>().ok())
        .flatten()
        .ok_or_else(|| format!("{field} holds {class} {value}, expected an integer"))?;
    if range.contains(&integer) {
        Ok(integer)
    } else {
        Err(format!(
            "{field} is {integer}, expected {} to {}",
            range.start(),
            range.end()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn described_values_say_what_is_wrong() {
        assert_eq!(integer_in("era", Some("integer 3"), 0..=9), Ok(3));
        assert_eq!(
            integer_in("era", Some("integer -1"), 0..=9).unwrap_err(),
            "era is -1, expected 0 to 9"
        );
        assert_eq!(
            integer_in("next_counter", Some("text 'abc'"), 0..=9).unwrap_err(),
            "next_counter holds text 'abc', expected an integer"
        );
        assert_eq!(
            integer_in("next_counter", Some("real 1.5"), 0..=9).unwrap_err(),
            "next_counter holds real 1.5, expected an integer"
        );
        assert_eq!(
            integer_in("next_value", None, 0..=9).unwrap_err(),
            "next_value is NULL, expected an integer"
        );
    }

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
