//! OS processes on one store: 4 workers issue ids at once, one is killed with SIGKILL midway and
//! restarted (the harness is [`crate::processes`]).

use gdid_core::Gdid;
use gdid_engine::BlockGenerator;

use super::{StoreUnderTest, fresh};
use crate::processes::{self, PER_PROCESS, Worker};

/// The authority number the workers share.
const NUMBER: u8 = 4;

/// No id is printed twice, none is 0, and every worker prints its count. The store's places are
/// URLs (or names) a worker process reaches. `test` is the test's
/// full name: the workers are the test executable run again on it, and this function does the
/// worker's part when it runs in one.
pub async fn killed_and_restarted_never_repeat_an_id<B>(backend: &B, test: &str)
where
    B: StoreUnderTest<Place = String>,
{
    if let Some(worker) = Worker::from_env() {
        let place = worker.url.clone();
        let ids = BlockGenerator::builder(&worker.scope, "orders")
            .authority(backend.connect(&place, NUMBER).await)
            .build()
            .unwrap();
        worker.wait_for_start().await;
        for _ in 0..PER_PROCESS {
            worker.print(ids.next_id().await.unwrap());
        }
        return;
    }
    let store = backend.store().to_owned();
    let scope = fresh("processes");
    let url = backend.place(NUMBER).await;
    let test = test.to_owned();
    // The workers are started and read on threads: the runtime goes on meanwhile.
    let all = tokio::task::spawn_blocking({
        let store = store.clone();
        move || processes::run_killed_and_restarted(&test, &url, &scope, &store)
    })
    .await
    .unwrap();
    for id in &all {
        assert!(!id.parse::<Gdid>().unwrap().is_zero(), "{store}: id 0");
    }
    eprintln!(
        "{store}: {} ids from 5 processes at once, no duplicate",
        all.len()
    );
}
