//! The DDL the docs show is the DDL the stores create, and what `gdid schema print` prints.
//!
//! Every page under `docs/` (and the README) may show a store's DDL in a ```sql block marked by
//! an HTML comment on the line before its fence:
//!
//! ```text
//! <!-- ddl: sqlite -->
//! <!-- ddl: postgres -->                 (names unqualified)
//! <!-- ddl: postgres schema=public -->   (names qualified, as printed for a store of that schema)
//! <!-- ddl: mariadb -->
//! ```
//!
//! Each marked block must equal [`Schema::of`] for its dialect (whitespace aside): the DDL a store
//! runs when its tables are missing, and what `gdid schema apply` runs. Then, for each server
//! configured here (`GDID_MYSQL_URL`, `GDID_POSTGRES_URL`, and a SQLite file of the test's own),
//! what the store prints ([`SqlStore::schema_sql`], behind `gdid schema print`) must be that DDL
//! too. Printing reads only: nothing is created in the servers' databases.

mod common;

use std::path::{Path, PathBuf};

use gdid_sql::{Dialect, Schema, SqlStore};

/// One marked DDL block of a page.
#[derive(Debug)]
struct Block {
    /// Where it is, for the failure message.
    place: String,
    dialect: Dialect,
    /// The PostgreSQL schema its names are qualified with.
    schema: Option<String>,
    sql: String,
}

/// The text with every run of whitespace made one space, and none at either end.
fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every Markdown file under `dir`, in name order.
fn pages(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            pages(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
}

/// The dialect and schema a marker names: `sqlite`, `mariadb` (or `mysql`), `postgres`, and
/// for PostgreSQL an optional `schema=NAME`.
fn marker(comment: &str, place: &str) -> (Dialect, Option<String>) {
    let mut words = comment.split_whitespace();
    let dialect = match words.next() {
        Some("sqlite") => Dialect::Sqlite,
        Some("mariadb" | "mysql") => Dialect::MySql,
        Some("postgres") => Dialect::Postgres,
        other => panic!("{place}: unknown dialect {other:?} in a ddl marker"),
    };
    let schema = words.next().map(|word| {
        let schema = word
            .strip_prefix("schema=")
            .unwrap_or_else(|| panic!("{place}: {word:?} in a ddl marker: expected schema=NAME"));
        assert_eq!(
            dialect,
            Dialect::Postgres,
            "{place}: only PostgreSQL has schemas"
        );
        schema.to_owned()
    });
    (dialect, schema)
}

/// Every marked block of every page.
fn blocks() -> Vec<Block> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    pages(&root.join("docs"), &mut files);
    let mut blocks = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(comment) = line
                .trim()
                .strip_prefix("<!-- ddl:")
                .and_then(|rest| rest.strip_suffix("-->"))
            else {
                continue;
            };
            let place = format!("{name}:{}", i + 1);
            let (dialect, schema) = marker(comment, &place);
            assert_eq!(
                lines.get(i + 1).map(|fence| fence.trim()),
                Some("```sql"),
                "{place}: a ddl marker must be followed by a ```sql fence"
            );
            let end = lines[i + 2..]
                .iter()
                .position(|line| line.trim() == "```")
                .unwrap_or_else(|| panic!("{place}: the ```sql block is not closed"));
            blocks.push(Block {
                place,
                dialect,
                schema,
                sql: lines[i + 2..i + 2 + end].join("\n"),
            });
        }
    }
    blocks
}

#[test]
fn every_ddl_block_of_the_docs_is_the_ddl_a_store_creates() {
    let blocks = blocks();
    for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::MySql] {
        assert!(
            blocks
                .iter()
                .any(|block| block.dialect == dialect
                    && block.place.starts_with("docs/strategies.md")),
            "docs/strategies.md shows no marked DDL block of {dialect:?}"
        );
    }
    for block in &blocks {
        let expected = Schema::of(block.dialect, block.schema.as_deref()).to_string();
        assert_eq!(
            normalized(&block.sql),
            normalized(&expected),
            "{}: the DDL differs from what the store creates; it is:\n{expected}",
            block.place
        );
    }
}

#[tokio::test]
async fn what_gdid_schema_print_prints_is_the_documented_ddl() {
    let blocks = blocks();
    for (name, url) in common::urls() {
        // A SQLite file of this test's own; the servers' databases are only read.
        let store = SqlStore::connect(&url).await.unwrap();
        let printed = store.schema_sql().await.unwrap().to_string();
        let schema = store.schema().await.unwrap();
        let dialect = match name {
            "mysql" => Dialect::MySql,
            "postgres" => Dialect::Postgres,
            _ => Dialect::Sqlite,
        };
        assert_eq!(
            printed,
            Schema::of(dialect, schema.as_deref()).to_string(),
            "{name}"
        );
        let shown: Vec<&Block> = blocks
            .iter()
            .filter(|block| block.dialect == dialect && block.schema == schema)
            .collect();
        if shown.is_empty() {
            eprintln!(
                "{name}: no documented block for schema {schema:?}: compared with Schema::of"
            );
        }
        for block in shown {
            assert_eq!(
                normalized(&block.sql),
                normalized(&printed),
                "{}: differs from what {name}'s store prints",
                block.place
            );
        }
    }
}
