//! `gdid check` as a user runs it: the default store (a SQLite file on disk) is safe and says
//! why (exit 0); a file on a RAM file system and the `memory` store are named at risk (exit 1);
//! several stores are each reported; `--format json` is one array; a bad URL exits 2, a server
//! that cannot be reached 1. It creates nothing: a SQLite file that does not exist is refused
//! (exit 2) and not made, and an empty PostgreSQL schema or MariaDB database gets no table.
//! Every verdict of PostgreSQL and MariaDB is tested on private servers (gdid-faults'
//! `test_check`).

mod common;

use std::path::Path;

use common::{gdid, gdid_in, stderr, stdout};

#[test]
fn the_default_store_is_safe_and_says_why() {
    let dir = std::env::temp_dir().join(gdid_testkit::fresh("cli-check"));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = gdid_in(&dir, &["check"]);
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("no SQLite file at gdid.sqlite"),
        "{}",
        stderr(&missing)
    );
    assert!(!dir.join("gdid.sqlite").exists());
    let made = gdid_in(&dir, &["next"]);
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let checked = gdid_in(&dir, &["check"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    let said = stdout(&checked);
    assert!(
        said.starts_with("store: sqlite:gdid.sqlite\nserver: SQLite 3."),
        "{said}"
    );
    for line in [
        "safe             journal_mode = wal",
        "safe             synchronous = FULL",
        "each commit is flushed to disk before it is acknowledged",
        "verdict: safe",
    ] {
        assert!(said.contains(line), "no {line:?} in\n{said}");
    }
    assert!(dir.join("gdid.sqlite").is_file());
}

#[test]
fn a_file_in_memory_and_the_memory_store_are_named_at_risk() {
    let shm = Path::new("/dev/shm");
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    assert!(
        mounts.contains(" /dev/shm tmpfs "),
        "/dev/shm is a tmpfs on every Linux machine this runs on:\n{mounts}"
    );
    let file = shm.join(format!("{}.sqlite", gdid_testkit::fresh("cli-check")));
    let url = format!("sqlite:{}", file.display());
    let made = gdid(&["next", "--store", &url]);
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let checked = gdid(&["check", "--store", &url, "--store", "memory"]);
    for suffix in ["", "-wal", "-shm"] {
        std::fs::remove_file(format!("{}{suffix}", file.display())).ok();
    }
    assert_eq!(checked.status.code(), Some(1), "{}", stdout(&checked));
    let said = stdout(&checked);
    assert!(said.contains("issued again     file = /dev/shm/"), "{said}");
    assert!(said.contains("(tmpfs)"), "{said}");
    assert!(said.contains("\n\nstore: memory\n"), "{said}");
    assert_eq!(
        stderr(&checked).trim(),
        format!("gdid: at risk: {url}: file (issued again), memory: memory (issued again)")
    );
}

#[test]
fn json_is_one_array_of_reports() {
    let checked = gdid(&["check", "--store", "memory", "--format", "json"]);
    assert_eq!(checked.status.code(), Some(1));
    let reports: serde_json::Value = serde_json::from_str(stdout(&checked)).expect("JSON");
    let report = &reports.as_array().expect("an array")[0];
    assert_eq!(report["store"], "memory");
    assert_eq!(report["safe"], false);
    assert_eq!(report["verdict"], "issued again");
    assert_eq!(report["settings"][0]["name"], "memory");
    assert_eq!(report["settings"][0]["verdict"], "issued again");
}

#[test]
fn a_bad_url_exits_2_and_a_server_not_there_1() {
    let bad = gdid(&["check", "--store", "redis://u:hunter2@h"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(!stderr(&bad).contains("hunter2"), "{}", stderr(&bad));
    let gone = gdid(&["check", "--store", "postgres://u:hunter2@127.0.0.1:1/x"]);
    assert_eq!(gone.status.code(), Some(1), "{}", stderr(&gone));
    let said = stderr(&gone);
    assert!(
        said.contains("cannot connect to postgres://u:***@127.0.0.1:1/x"),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");
}

/// The tables of `schema` (a PostgreSQL schema or a MariaDB database) on the server of `url`.
async fn tables(url: &str, schema: &str) -> i64 {
    use sqlx::Connection;
    let query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ";
    if url.starts_with("postgres") {
        let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("{query}$1")))
            .bind(schema)
            .fetch_one(&mut connection)
            .await
            .unwrap()
    } else {
        let mut connection = sqlx::MySqlConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("{query}?")))
            .bind(schema)
            .fetch_one(&mut connection)
            .await
            .unwrap()
    }
}

/// Runs `statement` on the server of `url`.
async fn execute(url: &str, statement: &str) {
    use sqlx::Connection;
    let statement = sqlx::AssertSqlSafe(statement.to_owned());
    if url.starts_with("postgres") {
        let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql(statement)
            .execute(&mut connection)
            .await
            .unwrap();
    } else {
        let mut connection = sqlx::MySqlConnection::connect(url).await.unwrap();
        sqlx::raw_sql(statement)
            .execute(&mut connection)
            .await
            .unwrap();
    }
}

/// `gdid check`, `sequences list` and `schema print` on an empty PostgreSQL schema or MariaDB
/// database of this test's own: each answers, and the schema still has no table.
async fn reading_an_empty_store_makes_no_table(server: &str, store: &str, schema: &str) {
    for command in [&["check"][..], &["sequences", "list"], &["schema", "print"]] {
        let done = gdid(&[command, &["--store", store]].concat());
        assert_ne!(
            done.status.code(),
            Some(2),
            "{command:?}: {}",
            stderr(&done)
        );
        if command != ["check"] {
            assert_eq!(
                done.status.code(),
                Some(0),
                "{command:?}: {}",
                stderr(&done)
            );
        }
        assert_eq!(tables(server, schema).await, 0, "{command:?} made a table");
    }
    let listed = gdid(&["sequences", "list", "--store", store]);
    assert!(
        stdout(&listed).contains("(no counter records)"),
        "{}",
        stdout(&listed)
    );
}

#[tokio::test]
async fn an_empty_postgresql_schema_gets_no_table() {
    let Some(server) = gdid_testkit::server("GDID_POSTGRES_URL") else {
        return;
    };
    let schema = gdid_testkit::fresh("cli_check_empty");
    execute(&server, &format!("CREATE SCHEMA {schema}")).await;
    let separator = if server.contains('?') { '&' } else { '?' };
    let store = format!("{server}{separator}schema={schema}");
    reading_an_empty_store_makes_no_table(&server, &store, &schema).await;
    execute(&server, &format!("DROP SCHEMA {schema} CASCADE")).await;
}

#[tokio::test]
async fn an_empty_mariadb_database_gets_no_table() {
    let Some(server) = gdid_testkit::server("GDID_MYSQL_URL") else {
        return;
    };
    let database = gdid_testkit::fresh("cli_check_empty");
    execute(&server, &format!("CREATE DATABASE {database}")).await;
    let store = gdid_testkit::database(&server, &database).await;
    reading_an_empty_store_makes_no_table(&server, &store, &database).await;
    execute(&server, &format!("DROP DATABASE {database}")).await;
}
