//! The fault suite against the real servers: no duplicate under any fault, no caller error while
//! the cover lasts, failover within one allocation timeout.

use std::time::Duration;

use gdid_faults::{gdid_binary, scenarios};
use gdid_testkit::{server, sqlite_url};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_and_flaky_store_is_invisible_to_callers() {
    let Some(url) = server("GDID_MYSQL_URL") else {
        return;
    };
    let row = scenarios::slow_store("MariaDB", &url).await.unwrap();
    println!("{row}");
    assert_eq!(row.duplicates, 0);
    assert_eq!(row.caller_errors, 0);
    assert!(row.issued > 300_000, "{row}");
    assert!(
        !row.done.contains("(9 s: 0 blocks"),
        "no block was fetched while slowest: {row}"
    );
    let p999 = row.p999.unwrap();
    assert!(
        p999 < Duration::from_millis(1),
        "callers waited on the store: {row}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_goes_down_is_failed_over_and_used_again_when_back() {
    let (Some(mysql), Some(postgres)) = (server("GDID_MYSQL_URL"), server("GDID_POSTGRES_URL"))
    else {
        return;
    };
    let row = scenarios::failover(("MariaDB", &mysql), ("PostgreSQL", &postgres))
        .await
        .unwrap();
    println!("{row}");
    assert_eq!(row.duplicates, 0);
    assert_eq!(row.caller_errors, 0);
    assert!(row.recovery.unwrap() < Duration::from_secs(3), "{row}");
    assert!(row.done.contains("back on MariaDB after"), "{row}");
}

#[test]
fn killed_processes_never_print_an_id_twice() {
    let gdid = gdid_binary().unwrap();
    let mut stores = vec![("SQLite", sqlite_url("gdid-faults"))];
    if let Some(url) = server("GDID_MYSQL_URL") {
        stores.push(("MariaDB", url));
    }
    for (name, store) in stores {
        let row = scenarios::crash_loop(&gdid, name, &store).unwrap();
        println!("{row}");
        assert_eq!(row.duplicates, 0, "{row}");
        assert!(row.issued > 0, "{row}");
        // A killed process loses at most its block and the one prefetched, each no larger than
        // the ids it asked for (blocks sized for a long run lost 246M values here before).
        let runs = 4 * 20;
        assert!(
            row.lost_to_gaps <= runs * 2 * scenarios::CRASH_LOOP_COUNT,
            "{row}"
        );
    }
}
