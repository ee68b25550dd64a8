//! Distributed hi-lo windows with the three dialects as three shards: MariaDB, PostgreSQL and a
//! SQLite file (see `common::urls`).

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use common::{execute, fresh_scope, urls};
use gdid_core::generator::{Error, IdGenerator};
use gdid_sql::{AgentError, SqlStore, SqlWindowGenerator, Window, WindowAgent};

async fn shards() -> Vec<(String, SqlStore)> {
    let mut shards = Vec::new();
    for (dialect, url) in urls() {
        shards.push((dialect.to_owned(), SqlStore::connect(&url).await.unwrap()));
    }
    shards
}

async fn agent(window_size: u64, min_open: u64) -> WindowAgent {
    let mut agent = WindowAgent::new(window_size, min_open).unwrap();
    for (label, store) in shards().await {
        agent.add_shard(&label, store).await.unwrap();
    }
    agent
}

/// No two windows of a sequence, on any shards, share a value.
fn assert_disjoint(windows: &[(String, Window)]) {
    let mut sorted: Vec<&(String, Window)> = windows.iter().collect();
    sorted.sort_by_key(|(_, w)| w.start);
    for pair in sorted.windows(2) {
        assert!(
            pair[0].1.end <= pair[1].1.start,
            "overlap: {:?} on {} and {:?} on {}",
            pair[0].1,
            pair[0].0,
            pair[1].1,
            pair[1].0
        );
    }
}

/// The agent opens windows on every shard; clients use them up without passing a window's end;
/// with none open the error says so; the next run refills.
#[tokio::test]
async fn clients_use_the_windows_the_agent_opens() {
    let sequence = fresh_scope("windows");
    let agent = agent(100, 2).await;
    let report = agent.run_once(&[&sequence]).await.unwrap();
    let shard_count = agent.shards().count();
    assert_eq!(report.created.len(), 2 * shard_count);
    let windows = agent.windows(&sequence).await.unwrap();
    assert_disjoint(&windows);

    let ids = SqlWindowGenerator::new(shards().await, &sequence, 30).unwrap();
    let mut seen = HashSet::new();
    let total = 200 * shard_count as u64;
    for _ in 0..total {
        let id = ids.next_id().await.unwrap();
        assert!(seen.insert(id), "{id} issued twice");
        assert!(
            windows.iter().any(|(_, w)| (w.start..w.end).contains(&id)),
            "{id} outside every window"
        );
    }
    let err = ids.next_id().await.unwrap_err();
    assert!(matches!(err, Error::Exhausted(_)), "{err}");
    assert!(err.to_string().contains("no open window"), "{err}");

    agent.run_once(&[&sequence]).await.unwrap();
    assert!(ids.next_id().await.is_ok());
}

/// Named no sequence, the agent supplies every sequence it finds on the shards.
#[tokio::test]
async fn with_no_sequence_named_the_agent_supplies_every_sequence_found() {
    let dir = std::env::temp_dir().join(format!("gdid-windows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut agent = WindowAgent::new(10, 1).unwrap();
    for name in ["a", "b"] {
        let url = format!("sqlite:{}", dir.join(format!("{name}.sqlite")).display());
        agent
            .add_shard(name, SqlStore::connect(&url).await.unwrap())
            .await
            .unwrap();
    }
    agent.run_once(&["orders", "invoices"]).await.unwrap();
    let mut bigger = WindowAgent::new(10, 3).unwrap();
    for (label, store) in agent.shards() {
        bigger.add_shard(label, store.clone()).await.unwrap();
    }
    let report = bigger.run_once(&[]).await.unwrap();
    let mut per_sequence: Vec<&str> = report.created.iter().map(|(s, _, _)| s.as_str()).collect();
    per_sequence.sort_unstable();
    assert_eq!(
        per_sequence,
        ["invoices"; 4]
            .into_iter()
            .chain(["orders"; 4])
            .collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Many clients on one shard at once: every batch lies inside one window, no value twice, and
/// the windows are used up exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_takes_never_cross_a_window_end() {
    for (dialect, url) in urls() {
        let sequence = fresh_scope("take");
        let store = SqlStore::connect(&url).await.unwrap();
        let mut agent = WindowAgent::new(50, 4).unwrap();
        agent.add_shard(dialect, store.clone()).await.unwrap();
        agent.run_once(&[&sequence]).await.unwrap();
        let windows = agent.windows(&sequence).await.unwrap();
        let ids = Arc::new(
            SqlWindowGenerator::new(vec![(dialect.to_owned(), store)], &sequence, 5).unwrap(),
        );
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let ids = Arc::clone(&ids);
                tokio::spawn(async move {
                    let mut runs = Vec::new();
                    loop {
                        // 5 divides the window size: no batch is cut short at a window's end.
                        match ids.next_ids(5).await {
                            Ok(batch) => runs.extend(batch.runs().iter().map(|r| (r.first, r.len))),
                            Err(Error::Exhausted(_)) => return runs,
                            Err(e) => panic!("{e}"),
                        }
                    }
                })
            })
            .collect();
        let mut values = HashSet::new();
        for task in tasks {
            for (first, len) in task.await.unwrap() {
                assert!(
                    windows
                        .iter()
                        .any(|(_, w)| w.start <= first && first + len <= w.end),
                    "{dialect}: run {first}+{len} crosses a window end"
                );
                for v in first..first + len {
                    assert!(values.insert(v), "{dialect}: {v} issued twice");
                }
            }
        }
        assert_eq!(
            values.len(),
            200,
            "{dialect}: every value of the 4 windows, once"
        );
    }
}

/// Two agents at once, again and again: never an overlapping window.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_agents_at_once_never_create_overlapping_windows() {
    let sequence = fresh_scope("agents");
    let first = Arc::new(agent(10, 1).await);
    for round in 1..=12u64 {
        // The second agent uses another window size: claims must still chain.
        let second = agent(7, round).await;
        let first = Arc::clone(&first);
        let a = {
            let sequence = sequence.clone();
            tokio::spawn(async move { first.run_once(&[&sequence]).await })
        };
        let b = {
            let sequence = sequence.clone();
            tokio::spawn(async move { second.run_once(&[&sequence]).await })
        };
        a.await.unwrap().unwrap();
        b.await.unwrap().unwrap();
    }
    let windows = first.windows(&sequence).await.unwrap();
    assert!(windows.len() >= 12 * first.shards().count());
    assert_disjoint(&windows);
}

/// A shard that does not answer stops the agent before it writes anything.
#[tokio::test]
async fn the_agent_refuses_to_run_with_a_shard_down() {
    let sequence = fresh_scope("down");
    let mut agent = WindowAgent::new(10, 1).unwrap();
    for (label, store) in shards().await {
        agent.add_shard(&label, store).await.unwrap();
    }
    let mut with_down = WindowAgent::new(10, 1).unwrap();
    for (label, store) in shards().await {
        with_down.add_shard(&label, store).await.unwrap();
    }
    let down = SqlStore::connect_lazy("mysql://root@127.0.0.1:1/test").unwrap();
    let err = with_down.add_shard("zz-down", down).await.unwrap_err();
    assert!(matches!(err, AgentError::ShardUnreachable { .. }), "{err}");
    assert!(
        err.to_string().starts_with("shard zz-down is unreachable"),
        "{err}"
    );
    assert!(agent.windows(&sequence).await.unwrap().is_empty());
}

/// Adding a shard is one call; the next run supplies it, after every existing window.
#[tokio::test]
async fn adding_a_shard_is_one_call() {
    let sequence = fresh_scope("grow");
    let all = shards().await;
    let mut agent = WindowAgent::new(25, 2).unwrap();
    let (first_label, first_store) = all[0].clone();
    agent.add_shard(&first_label, first_store).await.unwrap();
    agent.run_once(&[&sequence]).await.unwrap();
    for (label, store) in all.into_iter().skip(1) {
        agent.add_shard(&label, store).await.unwrap();
    }
    let report = agent.run_once(&[&sequence]).await.unwrap();
    assert_eq!(report.created.len(), 2 * (agent.shards().count() - 1));
    let windows = agent.windows(&sequence).await.unwrap();
    assert_eq!(windows.len(), 2 * agent.shards().count());
    assert_disjoint(&windows);
}

/// A window row with its start after its end is an error naming it, never an id: one whose start
/// was moved past its end used to hand out values, one whose end was moved below its start read
/// as "no open window".
#[tokio::test]
async fn a_window_row_with_start_after_end_is_an_error_naming_it() {
    for (dialect, url) in urls() {
        let store = SqlStore::connect(&url).await.unwrap();
        // `window_end` first in the second: MySQL assigns left to right.
        for (field, assignment) in [
            ("window_start", "window_end + 100"),
            (
                "window_end",
                "window_start + 5, window_start = window_start + 50",
            ),
        ] {
            let sequence = fresh_scope("start_after_end");
            let mut agent = WindowAgent::new(100, 1).unwrap();
            agent.add_shard(dialect, store.clone()).await.unwrap();
            agent.run_once(&[&sequence]).await.unwrap();
            let shards = || vec![(dialect.to_owned(), store.clone())];
            SqlWindowGenerator::new(shards(), &sequence, 10)
                .unwrap()
                .next_id()
                .await
                .unwrap();
            execute(
                &store,
                format!(
                    "UPDATE gdid_windows SET {field} = {assignment} \
                     WHERE sequence_name = '{sequence}'"
                ),
            )
            .await;
            let ids = SqlWindowGenerator::new(shards(), &sequence, 10).unwrap();
            for _ in 0..3 {
                let err = ids.next_id().await.unwrap_err();
                let message = err.to_string();
                assert!(matches!(err, Error::Corrupt(_)), "{dialect}: {message}");
                assert!(
                    message.contains("corrupt row")
                        && message.contains(&format!("sequence {sequence:?}"))
                        && message.contains("window_start is after window_end"),
                    "{dialect} {field}: {message}"
                );
            }
            let listed = agent.windows(&sequence).await.unwrap_err().to_string();
            assert!(listed.contains("corrupt row"), "{dialect}: {listed}");
        }
    }
}
