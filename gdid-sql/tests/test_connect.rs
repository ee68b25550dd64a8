//! A MySQL/MariaDB or PostgreSQL server that refuses the connection is reported with the real
//! cause, not after the pool's 5-second wait as "pool timed out". (The message tells the two
//! apart; no clock is read, so a busy machine cannot fail the test.)

use gdid_sql::SqlStore;

#[tokio::test]
async fn a_refused_connection_is_reported_as_refused_not_as_a_pool_timeout() {
    for (url, built_in) in [
        (
            "postgres://postgres:hunter2@127.0.0.1:1/test",
            cfg!(feature = "postgres"),
        ),
        (
            "mysql://root:hunter2@127.0.0.1:1/test",
            cfg!(feature = "mysql"),
        ),
    ] {
        if !built_in {
            continue; // its driver is not in this build
        }
        let err = SqlStore::connect(url).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("refused"), "{url}: {text}");
        assert!(!text.contains("pool timed out"), "{url}: {text}");
        assert!(!text.contains("hunter2"), "{url}: {text}");
    }
}
