//! Distributed hi-lo windows with the three dialects as three shards: MariaDB, PostgreSQL and a
//! SQLite file (see `common::urls`).

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use common::{execute, fresh_scope, urls};
use gdid_core::generator::windows::WindowShard;
use gdid_core::generator::{Error, IdGenerator};
use gdid_sql::{AgentError, SqlStore, SqlWindowGenerator, Window, WindowAgent};

/// A directory of its own for SQLite files of `test`.
fn temp_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(fresh_scope(&format!("gdid-windows-{test}")));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The same store under another URL: `postgresql://` for `postgres://`, `localhost` for
/// `127.0.0.1`, a `./` in a SQLite path.
fn respelled(url: &str) -> String {
    if let Some(path) = url.strip_prefix("sqlite:") {
        let path = std::path::Path::new(path);
        let (dir, file) = (path.parent().unwrap(), path.file_name().unwrap());
        return format!("sqlite:{}", dir.join(".").join(file).display());
    }
    url.replacen("postgres://", "postgresql://", 1)
        .replacen("127.0.0.1", "localhost", 1)
}

/// An agent over `urls`, each shard labelled by its URL (as `gdid agent` labels them).
async fn agent_over(urls: &[String], window_size: u64, min_open: u64) -> WindowAgent {
    let mut agent = WindowAgent::new(window_size, min_open).unwrap();
    for url in urls {
        let store = SqlStore::connect(url).await.unwrap();
        agent.add_shard(url, store).await.unwrap();
    }
    agent
}

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

/// A shard that does not answer stops the agent before it writes anything: one that cannot be
/// reached is refused when added; one that goes down after it was added fails the run before
/// any claim or window is written on the others.
#[tokio::test]
async fn the_agent_refuses_to_run_with_a_shard_down() {
    let sequence = fresh_scope("down");
    let mut agent = WindowAgent::new(10, 1).unwrap();
    for (label, store) in shards().await {
        agent.add_shard(&label, store).await.unwrap();
    }
    let down = SqlStore::connect_lazy("mysql://root@127.0.0.1:1/test").unwrap();
    let err = agent.add_shard("zz-down", down).await.unwrap_err();
    assert!(matches!(err, AgentError::ShardUnreachable { .. }), "{err}");
    assert!(
        err.to_string().starts_with("shard zz-down is unreachable"),
        "{err}"
    );

    let url = format!("sqlite:{}", temp_dir("down").join("down.sqlite").display());
    let going_down = SqlStore::connect(&url).await.unwrap();
    agent
        .add_shard("going-down", going_down.clone())
        .await
        .unwrap();
    gdid_sql::with_pool!(&going_down, pool => pool.close().await);
    let err = agent.run_once(&[&sequence]).await.unwrap_err();
    assert!(
        matches!(&err, AgentError::ShardUnreachable { shard, .. } if shard == "going-down"),
        "{err}"
    );
    for (label, store) in shards().await {
        assert_eq!(store.high_water(&sequence).await.unwrap(), 0, "{label}");
        assert!(
            store.windows(&sequence).await.unwrap().is_empty(),
            "{label}"
        );
    }
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

/// Two agents given the same stores in opposite orders, under other URLs and with other window
/// sizes, racing round after round: they used to claim in two orders (labels sorted), which can
/// open overlapping windows or make both lose forever. Now no `Contended`, no error, and no two
/// windows of any shard overlap; the first window starts at 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agents_given_the_shards_in_opposite_orders_and_spellings_never_overlap() {
    let sequence = fresh_scope("orders");
    let dir = temp_dir("orders");
    let mut urls: Vec<String> = urls().into_iter().map(|(_, url)| url).collect();
    for file in ["a.sqlite", "b.sqlite"] {
        urls.push(format!("sqlite:{}", dir.join(file).display()));
    }
    let spelled: Vec<String> = urls.iter().rev().map(|url| respelled(url)).collect();
    let rounds = 15;
    for round in 1..=rounds {
        let p = agent_over(&urls, 7, round).await;
        let q = agent_over(&spelled, 13, round).await;
        let runs = [p, q].map(|agent| {
            let sequence = sequence.clone();
            tokio::spawn(async move { agent.run_once(&[&sequence]).await })
        });
        for run in runs {
            let report = run.await.unwrap();
            assert!(report.is_ok(), "round {round}: {}", report.unwrap_err());
        }
    }
    let windows = agent_over(&urls, 7, 1)
        .await
        .windows(&sequence)
        .await
        .unwrap();
    assert!(windows.len() as u64 >= rounds * urls.len() as u64);
    assert_disjoint(&windows);
    let first = windows.iter().map(|(_, w)| w.start).min();
    assert_eq!(first, Some(1), "no window holds 0");
}

/// One store given twice, under two URLs, is refused: it would take claims twice, in an order
/// no other agent shares.
#[tokio::test]
async fn one_store_under_two_urls_is_refused() {
    for (dialect, url) in urls() {
        let mut agent = WindowAgent::new(10, 1).unwrap();
        let store = SqlStore::connect(&url).await.unwrap();
        agent.add_shard(&url, store).await.unwrap();
        let other = respelled(&url);
        let again = SqlStore::connect(&other).await.unwrap();
        let err = agent.add_shard(&other, again).await.unwrap_err();
        assert!(matches!(err, AgentError::Config(_)), "{dialect}: {err}");
        assert!(
            err.to_string().contains("are one store"),
            "{dialect}: {err}"
        );
    }
}

/// SQLite orders text above every integer: a window end stored as text used to be the
/// high-water mark (read as 0). Now it is an error naming the row, for the agent and the
/// listing alike, and nothing is claimed from it.
#[tokio::test]
async fn a_text_window_end_in_sqlite_is_an_error_naming_the_row() {
    let url = format!("sqlite:{}", temp_dir("text").join("ids.sqlite").display());
    let store = SqlStore::connect(&url).await.unwrap();
    for (table, column) in [
        ("gdid_window_claims", "window_end"),
        ("gdid_windows", "window_end"),
        ("gdid_windows", "next_hi"),
    ] {
        let sequence = fresh_scope("text_end");
        let mut agent = WindowAgent::new(10, 1).unwrap();
        agent.add_shard("sqlite", store.clone()).await.unwrap();
        agent.run_once(&[&sequence]).await.unwrap();
        execute(
            &store,
            format!(
                "UPDATE {table} SET {column} = 'x{column}' WHERE sequence_name = '{sequence}' \
                 AND window_start = 1"
            ),
        )
        .await;
        let expected = format!(
            "corrupt row: the {table} row (sequence {sequence:?}, window_start 1): {column} \
             holds text 'x{column}', expected an integer"
        );
        let high = store.high_water(&sequence).await.unwrap_err().to_string();
        assert!(high.contains(&expected), "{high}");
        let mut more = WindowAgent::new(10, 2).unwrap();
        more.add_shard("sqlite", store.clone()).await.unwrap();
        let err = more.run_once(&[&sequence]).await.unwrap_err().to_string();
        assert!(err.contains(&expected), "{err}");
        let listed = agent.windows(&sequence).await.unwrap_err().to_string();
        assert!(listed.contains(&expected), "{listed}");
        let claims =
            format!("SELECT COUNT(*) FROM gdid_window_claims WHERE sequence_name = '{sequence}'");
        let count: i64 = gdid_sql::with_pool!(&store, pool => sqlx::query_scalar(sqlx::AssertSqlSafe(claims)).fetch_one(pool).await).unwrap();
        assert_eq!(
            count, 1,
            "{table}.{column}: nothing claimed after the corrupt row"
        );
    }
}
