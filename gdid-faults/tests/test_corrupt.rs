//! Bad stored data in every store: each corrupt row or document gives a typed error naming it,
//! never a panic and never an id.

use gdid_faults::corrupt::{self, Answer};
use gdid_testkit::{server, sqlite_url};

/// Runs every case on `url`, prints what each gave, and checks each was refused.
async fn every_case_is_refused(name: &str, url: &str) {
    let outcomes = corrupt::cases(url).await.unwrap();
    println!("{name}:");
    for outcome in &outcomes {
        println!("{outcome}");
    }
    for outcome in &outcomes {
        assert_eq!(outcome.answers.len(), corrupt::ASKS, "{name}: {outcome}");
        for answer in &outcome.answers {
            assert!(matches!(answer, Answer::Refused(_)), "{name}: {outcome}");
        }
    }
    let row = corrupt::row(name, &outcomes);
    println!("{row}");
    assert_eq!(row.issued, 0, "{row}");
    assert_eq!(row.duplicates, 0, "{row}");
    assert_eq!(
        row.caller_errors,
        u64::try_from(outcomes.len() * corrupt::ASKS).unwrap(),
        "{row}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_sqlite_rows_are_typed_errors() {
    every_case_is_refused("SQLite", &sqlite_url("corrupt")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_mariadb_rows_are_typed_errors() {
    let Some(url) = server("GDID_MYSQL_URL") else {
        return;
    };
    every_case_is_refused("MariaDB", &url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_postgres_rows_are_typed_errors() {
    let Some(url) = server("GDID_POSTGRES_URL") else {
        return;
    };
    every_case_is_refused("PostgreSQL", &url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_mongodb_documents_are_typed_errors() {
    let Some(url) = server("GDID_MONGODB_URI") else {
        return;
    };
    every_case_is_refused("MongoDB", &url).await;
}
