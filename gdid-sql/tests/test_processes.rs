//! 4 OS processes issue 50k ids each from the same database at once, one is killed with SIGKILL
//! midway (while the others run) and restarted: no id is printed twice. On MariaDB, PostgreSQL
//! and a SQLite file. The harness is gdid-testkit's `processes`.

mod common;

use common::{fresh_scope, urls_of_authority};
use gdid_core::Gdid;
use gdid_core::generator::BlockGenerator;
use gdid_sql::SqlAuthority;
use gdid_testkit::processes::{self, PER_PROCESS, Worker};

const TEST_NAME: &str = "processes_killed_and_restarted_never_repeat_an_id";

async fn work(worker: &Worker) {
    let ids = BlockGenerator::builder(&worker.scope, "orders")
        .authority(SqlAuthority::connect(&worker.url, 4).await.unwrap())
        .build()
        .unwrap();
    worker.wait_for_start().await;
    for _ in 0..PER_PROCESS {
        worker.print(ids.next_id().await.unwrap());
    }
}

#[tokio::test]
async fn processes_killed_and_restarted_never_repeat_an_id() {
    if let Some(worker) = Worker::from_env() {
        return work(&worker).await;
    }
    for (dialect, url) in urls_of_authority(4).await {
        let scope = fresh_scope("processes");
        let all = processes::run_killed_and_restarted(TEST_NAME, &url, &scope, dialect);
        for id in &all {
            assert!(!id.parse::<Gdid>().unwrap().is_zero(), "{dialect}: id 0");
        }
        eprintln!(
            "{dialect}: {} ids from 5 processes at once, no duplicate",
            all.len()
        );
    }
}
