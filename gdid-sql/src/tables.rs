//! The gdid tables, defined once: every column, key and index each has today, the columns added
//! since it was first made, and the DDL that makes them on each dialect ([`Schema`]). What a
//! store does with them (creating what is missing, the probe that lets current tables be) is
//! [`crate::schema`]'s.

use std::fmt;

use crate::dialect::Dialect;

/// One gdid table: its name, every column and key it has today, the columns added since it was
/// first made (each `NULL`able; added to a table of before them), and its indexes.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) name: &'static str,
    /// Columns and key, as in `CREATE TABLE name (…)`.
    pub(crate) columns: &'static str,
    /// Name and SQL type of each column added since the table was first made.
    pub(crate) added: &'static [(&'static str, &'static str)],
    /// Name and columns of each index.
    pub(crate) indexes: &'static [(&'static str, &'static str)],
    /// What the table is for, as the printed DDL says it.
    purpose: &'static str,
}

/// The counters of the block generator and the one-at-a-time counters: one row per (authority,
/// scope, sequence).
pub(crate) const COUNTERS: Table = Table {
    name: "gdid_counters",
    columns: "authority SMALLINT NOT NULL, scope_name VARCHAR(80) NOT NULL, \
              sequence_name VARCHAR(80) NOT NULL, era BIGINT NOT NULL, \
              next_counter BIGINT NOT NULL, allocated_at BIGINT NULL, \
              previous_at BIGINT NULL, allocated_size BIGINT NULL, \
              lineage VARCHAR(200) NULL, fenced_at BIGINT NULL, \
              PRIMARY KEY (authority, scope_name, sequence_name)",
    added: &[
        ("allocated_at", "BIGINT"),
        ("previous_at", "BIGINT"),
        ("allocated_size", "BIGINT"),
        ("lineage", "VARCHAR(200)"),
        ("fenced_at", "BIGINT"),
    ],
    indexes: &[],
    purpose: "block generators and one-at-a-time counters: one row per authority, scope and sequence",
};

/// The store record: the store's authority number, and the lineage and floor era of the server
/// it was last settled on (`crate::lineage`). One row.
pub(crate) const AUTHORITY: Table = Table {
    name: "gdid_authority",
    columns: "id SMALLINT NOT NULL PRIMARY KEY, authority SMALLINT NOT NULL, \
              lineage VARCHAR(200) NULL, floor_era BIGINT NULL, fenced_at BIGINT NULL",
    added: &[
        ("lineage", "VARCHAR(200)"),
        ("floor_era", "BIGINT"),
        ("fenced_at", "BIGINT"),
    ],
    indexes: &[],
    purpose: "the store record: its authority number, and the server it was last settled on (one row)",
};

/// The layout of each sharded counter.
pub(crate) const RANGE_LAYOUTS: Table = Table {
    name: "gdid_range_layouts",
    columns: "sequence_name VARCHAR(80) NOT NULL PRIMARY KEY, \
              base BIGINT NOT NULL, size BIGINT NOT NULL, ranges BIGINT NOT NULL",
    added: &[],
    indexes: &[],
    purpose: "sharded counters: the layout of each sequence",
};

/// The ranges of each sharded counter.
pub(crate) const RANGES: Table = Table {
    name: "gdid_ranges",
    columns: "sequence_name VARCHAR(80) NOT NULL, shard INTEGER NOT NULL, \
              next_value BIGINT NOT NULL, max_value BIGINT NOT NULL, \
              lineage VARCHAR(200) NULL, PRIMARY KEY (sequence_name, shard)",
    added: &[("lineage", "VARCHAR(200)")],
    indexes: &[],
    purpose: "sharded counters: one row per range",
};

/// The hi-lo windows a shard has opened.
pub(crate) const WINDOWS: Table = Table {
    name: "gdid_windows",
    columns: "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
              window_end BIGINT NOT NULL, next_hi BIGINT NOT NULL, \
              lineage VARCHAR(200) NULL, PRIMARY KEY (sequence_name, window_start)",
    added: &[("lineage", "VARCHAR(200)")],
    indexes: &[("gdid_windows_end", "sequence_name, window_end")],
    purpose: "hi-lo windows: the windows this shard opened",
};

/// The windows an agent has claimed on a shard.
pub(crate) const WINDOW_CLAIMS: Table = Table {
    name: "gdid_window_claims",
    columns: "sequence_name VARCHAR(80) NOT NULL, window_start BIGINT NOT NULL, \
              window_end BIGINT NOT NULL, PRIMARY KEY (sequence_name, window_start)",
    added: &[],
    indexes: &[("gdid_window_claims_end", "sequence_name, window_end")],
    purpose: "hi-lo windows: the windows claimed on this shard",
};

/// The shard's identity among an agent's shards.
pub(crate) const WINDOW_STORE: Table = Table {
    name: "gdid_window_store",
    columns: "id SMALLINT NOT NULL PRIMARY KEY, identity VARCHAR(40) NOT NULL",
    added: &[],
    indexes: &[],
    purpose: "hi-lo windows: this shard's identity (one row)",
};

/// Every gdid table, in the order they are made.
pub(crate) const ALL: [&Table; 7] = [
    &COUNTERS,
    &AUTHORITY,
    &RANGE_LAYOUTS,
    &RANGES,
    &WINDOWS,
    &WINDOW_CLAIMS,
    &WINDOW_STORE,
];

/// The names of every gdid table.
#[cfg(feature = "postgres")]
pub(crate) fn table_names() -> impl Iterator<Item = &'static str> {
    ALL.iter().map(|table| table.name)
}

/// The statements that make `table` on `dialect`, each idempotent: the table, then its indexes
/// (MySQL/MariaDB, which has no `CREATE INDEX IF NOT EXISTS` in every version, has them inside
/// the `CREATE TABLE`). `schema` qualifies the names (PostgreSQL).
pub(crate) fn statements(dialect: Dialect, schema: Option<&str>, table: &Table) -> Vec<String> {
    let name = qualified(schema, table.name);
    if dialect == Dialect::MySql {
        let indexes: String = table
            .indexes
            .iter()
            .map(|(index, columns)| format!(", INDEX {index} ({columns})"))
            .collect();
        return vec![format!(
            "CREATE TABLE IF NOT EXISTS {name} ({}{indexes}) ENGINE=InnoDB",
            table.columns
        )];
    }
    let mut statements = vec![format!(
        "CREATE TABLE IF NOT EXISTS {name} ({})",
        table.columns
    )];
    for (index, columns) in table.indexes {
        statements.push(format!(
            "CREATE INDEX IF NOT EXISTS {index} ON {name} ({columns})"
        ));
    }
    statements
}

/// `name`, in `schema` when there is one (both quoted as identifiers).
pub(crate) fn qualified(schema: Option<&str>, name: &str) -> String {
    match schema {
        Some(schema) => format!("{}.{name}", quote_identifier(schema)),
        None => name.to_owned(),
    }
}

/// `text` with every gdid table it names (an identifier of [`ALL`], not already after a `.`)
/// qualified with `schema`, quoted. String literals and quoted identifiers are left as they are.
///
/// A PostgreSQL store's connections resolve names with `search_path = pg_catalog, pg_temp`
/// ([`crate::pg_session`]): a gdid table named without its schema is not found there.
#[cfg(feature = "postgres")]
pub(crate) fn qualify_tables(text: &str, schema: &str) -> String {
    let schema = quote_identifier(schema);
    let mut out = String::with_capacity(text.len() + 8 * schema.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let taken = match c {
            '\'' | '"' => {
                // A literal or quoted identifier up to its closing quote (a doubled quote is
                // one quote inside it), or to the end of a text that never closes it.
                let mut end = rest.len();
                let mut chars = rest.char_indices().skip(1).peekable();
                while let Some((i, next)) = chars.next() {
                    if next == c {
                        if chars.peek().is_some_and(|&(_, after)| after == c) {
                            chars.next();
                        } else {
                            end = i + 1;
                            break;
                        }
                    }
                }
                end
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
                    .unwrap_or(rest.len());
                let word = &rest[..end];
                let after_dot = out.trim_end().ends_with('.');
                if !after_dot && ALL.iter().any(|table| table.name == word) {
                    out.push_str(&schema);
                    out.push('.');
                }
                end
            }
            c => c.len_utf8(),
        };
        out.push_str(&rest[..taken]);
        rest = &rest[taken..];
    }
    out
}

/// `name` as a PostgreSQL identifier: in double quotes, each double quote doubled.
pub(crate) fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The column names of a `CREATE TABLE` column list (its key clause left out).
pub(crate) fn column_names(columns: &str) -> Vec<&str> {
    let columns = columns.split(", PRIMARY KEY").next().unwrap_or(columns);
    columns
        .split(',')
        .filter_map(|column| column.split_whitespace().next())
        .collect()
}

/// The DDL of the gdid tables: [`Display`](fmt::Display) prints it as a DDL script (statements
/// ending in `;`, a comment before each table), [`statements`](Self::statements) gives each
/// statement to run.
#[derive(Debug, Clone)]
pub struct Schema {
    tables: Vec<(&'static str, Vec<String>)>,
}

impl Schema {
    /// The DDL of every gdid table on `dialect`; `schema`, the PostgreSQL schema the names are
    /// qualified with. `SqlStore::schema_sql` gives the one of a store.
    ///
    /// ```
    /// use gdid_sql::{Dialect, Schema};
    ///
    /// let ddl = Schema::of(Dialect::Postgres, Some("ids")).to_string();
    /// assert!(ddl.contains("CREATE TABLE IF NOT EXISTS \"ids\".gdid_counters ("));
    /// ```
    pub fn of(dialect: Dialect, schema: Option<&str>) -> Schema {
        Schema {
            tables: ALL
                .iter()
                .map(|table| (table.purpose, statements(dialect, schema, table)))
                .collect(),
        }
    }

    /// Every statement, in order, each idempotent.
    pub fn statements(&self) -> impl Iterator<Item = &str> {
        self.tables
            .iter()
            .flat_map(|(_, statements)| statements.iter().map(String::as_str))
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (purpose, statements)) in self.tables.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "-- {purpose}")?;
            for statement in statements {
                writeln!(f, "{statement};")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_leave_out_the_key() {
        assert_eq!(
            column_names(COUNTERS.columns),
            [
                "authority",
                "scope_name",
                "sequence_name",
                "era",
                "next_counter",
                "allocated_at",
                "previous_at",
                "allocated_size",
                "lineage",
                "fenced_at"
            ]
        );
        assert_eq!(column_names(RANGE_LAYOUTS.columns)[0], "sequence_name");
    }

    #[test]
    fn every_added_column_is_a_column() {
        for table in ALL {
            let columns = column_names(table.columns);
            for (added, _) in table.added {
                assert!(columns.contains(added), "{}: {added}", table.name);
            }
        }
    }

    #[test]
    fn postgres_names_are_qualified_and_quoted() {
        let ddl = Schema::of(Dialect::Postgres, Some("my \"ids\"")).to_string();
        assert!(ddl.contains("CREATE TABLE IF NOT EXISTS \"my \"\"ids\"\"\".gdid_counters ("));
        assert!(ddl.contains(
            "CREATE INDEX IF NOT EXISTS gdid_windows_end ON \"my \"\"ids\"\"\".gdid_windows"
        ));
    }

    #[test]
    fn mysql_indexes_are_inside_the_table() {
        let ddl = Schema::of(Dialect::MySql, None);
        assert_eq!(ddl.statements().count(), ALL.len());
        assert!(
            ddl.to_string()
                .contains(", INDEX gdid_windows_end (sequence_name, window_end)) ENGINE=InnoDB;")
        );
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn tables_are_qualified_outside_literals_and_after_no_dot() {
        let text = "SELECT 'gdid_windows', w.next_hi FROM gdid_windows w \
                    JOIN \"gdid_counters\" c ON c.x = 1 WHERE gdid_window_claims.id = ga.id \
                    AND x IN (SELECT 1 FROM s.gdid_authority, gdid_authority) \
                    AND gdid_windows_end = 'it''s gdid_counters'";
        assert_eq!(
            qualify_tables(text, "my \"ids\""),
            "SELECT 'gdid_windows', w.next_hi FROM \"my \"\"ids\"\"\".gdid_windows w \
             JOIN \"gdid_counters\" c ON c.x = 1 WHERE \"my \"\"ids\"\"\".gdid_window_claims.id = ga.id \
             AND x IN (SELECT 1 FROM s.gdid_authority, \"my \"\"ids\"\"\".gdid_authority) \
             AND gdid_windows_end = 'it''s gdid_counters'"
        );
    }
}
