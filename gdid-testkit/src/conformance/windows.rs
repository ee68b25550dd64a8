//! Distributed hi-lo windows: an agent opens windows on every shard, clients take from them, and
//! no two windows of a sequence overlap whatever the agents, orders and spellings.

use std::collections::HashSet;
use std::sync::Arc;

use gdid_engine::windows::{AgentError, Window, WindowAgent, WindowGenerator, WindowShard};
use gdid_engine::{Error, ErrorDetail, IdGenerator};

use super::{Windows, assert_fails_naming, fresh};

/// An agent over `shards`.
async fn agent<S: WindowShard + Clone>(
    shards: &[(String, S)],
    window_size: u64,
    min_open: u64,
) -> WindowAgent<S> {
    let mut agent = WindowAgent::new(window_size, min_open).unwrap();
    for (label, shard) in shards {
        agent.add_shard(label, shard.clone()).await.unwrap();
    }
    agent
}

/// No two windows of a sequence, on any shards, share a value.
fn assert_disjoint(store: &str, windows: &[(String, Window)]) {
    let mut sorted: Vec<&(String, Window)> = windows.iter().collect();
    sorted.sort_by_key(|(_, w)| w.start);
    for pair in sorted.windows(2) {
        assert!(
            pair[0].1.end <= pair[1].1.start,
            "{store}: overlap: {:?} on {} and {:?} on {}",
            pair[0].1,
            pair[0].0,
            pair[1].1,
            pair[1].0
        );
    }
}

/// The agent opens 2 windows on each of 3 shards; clients use them up in batches that do not
/// divide the window size, without passing a window's end; with none open the error is
/// [`ErrorDetail::Exhausted`]; every window is used up exactly; the next run refills.
pub async fn clients_use_the_windows_the_agent_opens<B: Windows>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("windows");
    let shards = backend.shards(3).await;
    let agent = agent(&shards, 100, 2).await;
    let report = agent.run_once(&[&sequence]).await.unwrap();
    assert_eq!(report.created.len(), 6, "{store}");
    let windows = agent.windows(&sequence).await.unwrap();
    assert_eq!(windows.len(), 6, "{store}");
    assert_disjoint(store, &windows);

    // 30 does not divide 100: batches are cut short at window ends.
    let ids = WindowGenerator::new(backend.shards(3).await, &sequence, 30).unwrap();
    let mut seen = HashSet::new();
    for _ in 0..600 {
        let id = ids.next_id().await.unwrap();
        assert!(seen.insert(id), "{store}: {id} issued twice");
        assert!(
            windows.iter().any(|(_, w)| (w.start..w.end).contains(&id)),
            "{store}: {id} outside every window"
        );
    }
    let err = ids.next_id().await.unwrap_err();
    assert!(
        matches!(err.detail(), ErrorDetail::Exhausted(_)),
        "{store}: {err}"
    );
    for (_, window) in agent.windows(&sequence).await.unwrap() {
        assert_eq!(
            window.next_hi, window.end,
            "{store}: {window:?} is used up exactly"
        );
    }

    let report = agent.run_once(&[&sequence]).await.unwrap();
    assert_eq!(report.created.len(), 6, "{store}");
    let id = ids.next_id().await.unwrap();
    assert!(id > 600 && !seen.contains(&id), "{store}: {id}");
}

/// 2 clients × 4 tasks on one shard: every batch lies inside one window, no value twice, and the
/// windows are used up exactly.
pub async fn concurrent_takes_never_cross_a_window_end<B: Windows>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("take");
    let agent = agent(&backend.shards(1).await, 50, 4).await;
    agent.run_once(&[&sequence]).await.unwrap();
    let windows = agent.windows(&sequence).await.unwrap();
    let mut tasks = Vec::new();
    for _client in 0..2 {
        let ids = Arc::new(WindowGenerator::new(backend.shards(1).await, &sequence, 5).unwrap());
        for _ in 0..4 {
            let ids = Arc::clone(&ids);
            tasks.push(tokio::spawn(async move {
                let mut runs = Vec::new();
                loop {
                    // 5 divides the window size: no batch is cut short at a window's end, so
                    // none is lost to the exhaustion at the end (a failed batch is a gap).
                    match ids.next_ids(5).await {
                        Ok(batch) => runs.extend(batch.runs().iter().map(|r| (r.first, r.len))),
                        Err(e) if matches!(e.detail(), ErrorDetail::Exhausted(_)) => return runs,
                        Err(e) => panic!("{e}"),
                    }
                }
            }));
        }
    }
    let mut values = HashSet::new();
    for task in tasks {
        for (first, len) in task.await.unwrap() {
            assert!(
                windows
                    .iter()
                    .any(|(_, w)| w.start <= first && first + len <= w.end),
                "{store}: run {first}+{len} crosses a window end"
            );
            for v in first..first + len {
                assert!(values.insert(v), "{store}: {v} issued twice");
            }
        }
    }
    assert_eq!(
        values.len(),
        200,
        "{store}: every value of the 4 windows, once"
    );
}

/// Two agents at once (each with connections of its own, the second with another window size),
/// again and again: never an overlapping window.
pub async fn two_agents_at_once_never_create_overlapping_windows<B: Windows>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("agents");
    let first = Arc::new(agent(&backend.shards(3).await, 10, 1).await);
    for round in 1..=12u64 {
        // The second agent uses another window size: claims must still chain.
        let second = agent(&backend.shards(3).await, 7, round).await;
        let first = Arc::clone(&first);
        let runs = [
            {
                let sequence = sequence.clone();
                tokio::spawn(async move { first.run_once(&[&sequence]).await })
            },
            {
                let sequence = sequence.clone();
                tokio::spawn(async move { second.run_once(&[&sequence]).await })
            },
        ];
        for run in runs {
            let report = run.await.unwrap();
            assert!(report.is_ok(), "{store} round {round}: {report:?}");
        }
    }
    let windows = first.windows(&sequence).await.unwrap();
    assert!(windows.len() >= 12 * 3, "{store}: {}", windows.len());
    assert_disjoint(store, &windows);
}

/// A shard that does not answer stops the agent before it writes anything: one that cannot be
/// reached is refused when added; one that goes down after it was added fails the run before
/// any claim or window is written on the others.
pub async fn the_agent_refuses_to_run_with_a_shard_down<B: Windows>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("down");
    let shards = backend.shards(2).await;
    let mut with_down = agent(&shards, 10, 1).await;
    let err = with_down
        .add_shard("zz-down", backend.unreachable().await)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AgentError::ShardUnreachable { shard, .. } if shard == "zz-down"),
        "{store}: {err}"
    );

    let going = backend.going_down().await;
    with_down
        .add_shard("going-down", going.shard)
        .await
        .unwrap();
    going.stop.await;
    let err = with_down.run_once(&[&sequence]).await.unwrap_err();
    assert!(
        matches!(&err, AgentError::ShardUnreachable { shard, .. } if shard == "going-down"),
        "{store}: {err}"
    );
    // Nothing written: no claim (a window is opened only after its claims, so an empty window
    // list alone would prove nothing).
    for (label, shard) in &shards {
        assert_eq!(
            shard.high_water(&sequence).await.unwrap(),
            0,
            "{store}: claims on {label}"
        );
        assert!(
            shard.windows(&sequence).await.unwrap().is_empty(),
            "{store}: windows on {label}"
        );
    }
}

/// Adding a shard is one call; the next run supplies it, after every existing window.
pub async fn adding_a_shard_is_one_call<B: Windows>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("grow");
    let shards = backend.shards(3).await;
    let mut agent = agent(&shards[..1], 25, 2).await;
    agent.run_once(&[&sequence]).await.unwrap();
    for (label, shard) in &shards[1..] {
        agent.add_shard(label, shard.clone()).await.unwrap();
    }
    let report = agent.run_once(&[&sequence]).await.unwrap();
    assert_eq!(report.created.len(), 2 * 2, "{store}");
    let windows = agent.windows(&sequence).await.unwrap();
    assert_eq!(windows.len(), 2 * 3, "{store}");
    assert_disjoint(store, &windows);
    let first_of_new = report.created.iter().map(|(_, _, w)| w.start).min();
    let old_end = windows
        .iter()
        .filter(|(label, _)| label == &shards[0].0)
        .map(|(_, w)| w.end)
        .max();
    assert!(first_of_new >= old_end, "{store}: {report:?}");
}

/// A window with its start after its end is [`ErrorDetail::Corrupt`] naming it, never an id, and is
/// not touched; the agent's listing is a corrupt-data error too: one whose start was moved past
/// its end used to hand out values (or have them taken, lost, on every call), one whose end was
/// moved below its start read as "no open window".
pub async fn a_window_with_start_after_end_is_an_error_naming_it<B: Windows>(backend: &B) {
    let store = backend.store();
    let shards = backend.shards(1).await;
    for case in 0..2 {
        let sequence = fresh("start_after_end");
        let agent = agent(&shards, 100, 1).await;
        agent.run_once(&[&sequence]).await.unwrap();
        WindowGenerator::new(shards.clone(), &sequence, 10)
            .unwrap()
            .next_id()
            .await
            .unwrap();
        let names = backend.start_after_end(&sequence, case).await;
        let before = backend.windows_text(&sequence).await;
        let ids = WindowGenerator::new(shards.clone(), &sequence, 10).unwrap();
        let what = format!("{store} case {case}");
        let is_corrupt = |e: &Error| matches!(e.detail(), ErrorDetail::Corrupt(_));
        assert_fails_naming(&what, 3, &names, is_corrupt, || ids.next_id()).await;
        assert_eq!(
            backend.windows_text(&sequence).await,
            before,
            "{store} {case}: the corrupt window was updated"
        );
        let listed = agent.windows(&sequence).await.unwrap_err();
        assert!(
            matches!(&listed, AgentError::Shard { source, .. } if B::Shard::is_corrupt(source)),
            "{store} {case}: {listed}"
        );
    }
}

/// Two agents given the same 3 stores in opposite orders, under other URLs and with other
/// window sizes, racing round after round: they used to claim in two orders (labels sorted),
/// which can open overlapping windows or make both lose forever. Now no `Contended`, no error,
/// no two windows overlap, and the first window starts at 1.
pub async fn agents_given_the_shards_in_opposite_orders_and_spellings_never_overlap<B: Windows>(
    backend: &B,
) {
    let store = backend.store();
    let sequence = fresh("orders");
    let rounds = 12;
    for round in 1..=rounds {
        let p = agent(&backend.shards(3).await, 7, round).await;
        let mut reversed = backend.respelled(3).await;
        reversed.reverse();
        let q = agent(&reversed, 13, round).await;
        let runs = [p, q].map(|agent| {
            let sequence = sequence.clone();
            tokio::spawn(async move { agent.run_once(&[&sequence]).await })
        });
        for run in runs {
            let report = run.await.unwrap();
            assert!(report.is_ok(), "{store} round {round}: {report:?}");
        }
    }
    let windows = agent(&backend.shards(3).await, 7, 1)
        .await
        .windows(&sequence)
        .await
        .unwrap();
    assert!(
        windows.len() as u64 >= rounds * 3,
        "{store}: {}",
        windows.len()
    );
    assert_disjoint(store, &windows);
    let first = windows.iter().map(|(_, w)| w.start).min();
    assert_eq!(first, Some(1), "{store}: no window holds 0");
}

/// One store given twice, under two URLs, is refused ([`AgentError::Config`]): it would take
/// claims twice, in an order no other agent shares.
pub async fn one_store_under_two_urls_is_refused<B: Windows>(backend: &B) {
    let store = backend.store();
    let mut agent = agent(&backend.shards(1).await, 10, 1).await;
    let (label, again) = backend.respelled(1).await.remove(0);
    let err = agent.add_shard(&label, again).await.unwrap_err();
    assert!(matches!(err, AgentError::Config(_)), "{store}: {err}");
}

/// Used-up windows are pruned to the `keep` latest per sequence, open windows and the
/// high-water mark are left as they are, and the next windows the agent opens follow the ones
/// pruned (no value twice).
pub async fn used_up_windows_are_pruned_to_the_latest<B: Windows>(backend: &B) {
    let store = backend.store();
    let sequence = fresh("pruned");
    let shards = backend.shards(1).await;
    let agent = agent(&shards, 10, 5).await;
    agent.run_once(&[&sequence]).await.unwrap();
    let ids = WindowGenerator::new(backend.shards(1).await, &sequence, 10).unwrap();
    let mut seen = HashSet::new();
    for _ in 0..30 {
        assert!(seen.insert(ids.next_id().await.unwrap()), "{store}");
    }
    let (_, shard) = &shards[0];
    let high = shard.high_water(&sequence).await.unwrap();
    assert_eq!(shard.prune(&sequence, 1).await.unwrap(), 2, "{store}");
    assert_eq!(
        shard.prune(&sequence, 1).await.unwrap(),
        0,
        "{store}: idempotent"
    );
    let left: Vec<_> = shard.windows(&sequence).await.unwrap();
    let starts: Vec<u64> = left.iter().map(|w| w.start).collect();
    assert_eq!(
        starts,
        [21, 31, 41],
        "{store}: the latest used-up window and the open ones"
    );
    assert_eq!(shard.high_water(&sequence).await.unwrap(), high, "{store}");
    assert_eq!(shard.open_windows(&sequence).await.unwrap(), 2, "{store}");
    agent.run_once(&[&sequence]).await.unwrap();
    for _ in 0..50 {
        let id = ids.next_id().await.unwrap();
        assert!(id > 30 && seen.insert(id), "{store}: {id}");
    }
}
