//! 4 OS processes issue 50k ids each from the same MongoDB counter document, one is killed with
//! SIGKILL midway (while the others run) and restarted: no id is printed twice. The harness is
//! gdid-testkit's `processes`.

use gdid_core::Gdid;
use gdid_core::generator::BlockGenerator;
use gdid_mongo::MongoAuthority;
use gdid_testkit::processes::{self, PER_PROCESS, Worker};

const TEST_NAME: &str = "processes_killed_and_restarted_never_repeat_an_id";

async fn work(worker: &Worker) {
    let client = mongodb::Client::with_uri_str(&worker.url).await.unwrap();
    let authority =
        MongoAuthority::new(&client.database("gdid_test"), "process_counters", 4).unwrap();
    let ids = BlockGenerator::builder(&worker.scope, "orders")
        .authority(authority)
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
    let Some(url) = gdid_testkit::server("GDID_MONGODB_URI") else {
        return;
    };
    let scope = gdid_testkit::fresh("processes");
    let all = processes::run_killed_and_restarted(TEST_NAME, &url, &scope, "mongodb");
    for id in &all {
        assert!(!id.parse::<Gdid>().unwrap().is_zero(), "mongodb: id 0");
    }
    eprintln!(
        "mongodb: {} ids from 5 processes at once, no duplicate",
        all.len()
    );
}
