//! What the SQL tests share: the servers to run on, fresh names, raw SQL for set-up.
#![allow(dead_code)] // each test file uses a part

use std::time::{SystemTime, UNIX_EPOCH};

use gdid_sql::SqlStore;

/// One URL per dialect that is configured here.
pub fn urls() -> Vec<(&'static str, String)> {
    let mut urls = Vec::new();
    for (name, var) in [
        ("mysql", "GDID_MYSQL_URL"),
        ("postgres", "GDID_POSTGRES_URL"),
    ] {
        match std::env::var(var) {
            Ok(url) if !url.is_empty() => urls.push((name, url)),
            _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("{var} is not set and CI=true: the server is required")
            }
            _ => eprintln!("skipped {name}: set {var} to run against a real server"),
        }
    }
    let dir = std::env::temp_dir().join(format!("gdid-sql-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    urls.push((
        "sqlite",
        format!("sqlite:{}", dir.join("ids.sqlite").display()),
    ));
    urls
}

/// A scope no earlier run has used, so that runs do not see each other's rows.
pub fn fresh_scope(test: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{test}-{}-{nanos}", std::process::id())
}

/// Runs raw SQL on a store (test set-up only: values are formatted in).
pub async fn execute(store: &SqlStore, sql: String) {
    let sql = sqlx::AssertSqlSafe(sql);
    match store {
        SqlStore::MySql(pool) => sqlx::query(sql).execute(pool).await.map(drop),
        SqlStore::Postgres(pool) => sqlx::query(sql).execute(pool).await.map(drop),
        SqlStore::Sqlite(pool) => sqlx::query(sql).execute(pool).await.map(drop),
    }
    .unwrap();
}
