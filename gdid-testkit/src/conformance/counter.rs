//! The one-at-a-time counter (`OneAtATime` over the store's authority).

use gdid_engine::{Authority, Error, ErrorDetail, IdGenerator, OneAtATime};

use super::{Counters, fresh};

/// 4 tasks × 100 ids give exactly 1..=400, increasing within each task; a batch of 10 follows.
pub async fn the_one_at_a_time_counter_is_continuous_under_concurrency<B: Counters>(backend: &B) {
    let store = backend.store();
    let scope = fresh("counter");
    let authority = backend.connect(&backend.place(0).await, 0).await;
    let counter = OneAtATime::new(authority, &scope, "n");
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                for _ in 0..100 {
                    got.push(counter.next_id().await.unwrap());
                }
                got
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        let got = task.await.unwrap();
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "{store}: monotonic per task"
        );
        all.extend(got);
    }
    all.sort_unstable();
    assert_eq!(all, (1..=400).collect::<Vec<u64>>(), "{store}");
    let batch = counter.next_ids(10).await.unwrap();
    assert_eq!(
        batch.iter().collect::<Vec<_>>(),
        (401..=410).collect::<Vec<_>>(),
        "{store}"
    );
}

/// The counter is the store's, not an authority's: its values go on whatever number the
/// authority it is made from has, and a counter of before the key 0, made from authority 1, that
/// handed out 1 to 50 goes on at 51, never at 1.
pub async fn the_one_at_a_time_counter_does_not_depend_on_the_authority_number<B: Counters>(
    backend: &B,
) {
    let store = backend.store();
    let scope = fresh("counter_key");
    let place = backend.place(1).await;
    let one = OneAtATime::new(backend.connect(&place, 1).await, &scope, "n");
    assert_eq!(one.next_id().await.unwrap(), 1, "{store}");
    // The same store seen through an authority made with another number (not yet checked).
    let other = OneAtATime::new(backend.unchecked(&place, 7).await, &scope, "n");
    assert_eq!(other.next_id().await.unwrap(), 2, "{store}");

    backend
        .insert_counter(one.store(), 1, &scope, "legacy", 51)
        .await;
    let legacy = OneAtATime::new(backend.connect(&place, 1).await, &scope, "legacy");
    assert_eq!(legacy.next_id().await.unwrap(), 51, "{store}");
}

/// The one-at-a-time counter (key 0) starts after the sequence's other records: a counter made
/// before it was keyed 0 handed out values from an authority's record. A sibling record that is
/// corrupt says nothing about how far it went, so the counter refuses to start, naming the record
/// and its field, rather than skip it and start below the values it handed out.
pub async fn a_corrupt_sibling_is_named_not_skipped_when_the_counter_starts<B: Counters>(
    backend: &B,
) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(2).await, 2).await;
    for case in backend.counter_corruptions() {
        let scope = fresh("siblings");
        // A counter of before the key 0 handed out 1 to 50 from the authority's record…
        authority.allocate(&scope, "legacy", 50).await.unwrap();
        // …and that record is corrupt.
        let named = backend
            .corrupt_counter(&authority, &scope, "legacy", case)
            .await;
        let counter = OneAtATime::new(authority.clone(), &scope, "legacy");
        match counter.next_id().await.map_err(Error::into_detail) {
            Err(ErrorDetail::Corrupt(message)) => assert!(
                named.iter().all(|name| message.contains(name.as_str())),
                "{store}, {case}: {message:?} does not name {named:?}"
            ),
            other => panic!("{store}, {case}: a corrupt sibling gave {other:?}"),
        }
    }
}
