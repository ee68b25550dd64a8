//! The DDL docs/strategies.md shows is the DDL a store runs: generated from the same code.

use gdid_sql::{Dialect, Schema};

#[test]
fn the_documented_ddl_is_the_ddl_a_store_runs() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/strategies.md"
    ))
    .unwrap();
    let marker = "<!-- generated from gdid-sql's schema module; gdid-sql's test_schema_docs checks it -->\n```sql\n";
    let start = docs.find(marker).expect("the generated DDL block") + marker.len();
    let block = &docs[start..start + docs[start..].find("```").unwrap()];
    assert_eq!(block, Schema::of(Dialect::Sqlite, None).to_string());
    assert_eq!(block, Schema::of(Dialect::Postgres, None).to_string());
}
