//! What is SQL's own about hi-lo windows: shards of the three dialects in one agent (MariaDB,
//! PostgreSQL and a SQLite file, see `common::urls`), SQLite's text values, and a run that names
//! no sequence. The behaviours every store shares are the conformance suite's
//! (`tests/conformance.rs`).
// Two tests are SQLite's: without its driver, what only they use is unused.
#![cfg_attr(not(feature = "sqlite"), allow(unused_imports, dead_code))]

mod common;

use std::collections::HashSet;

use common::{execute, fresh_scope, urls};
use gdid_engine::windows::WindowShard;
use gdid_engine::{ErrorDetail, IdGenerator};
use gdid_sql::{SqlStore, SqlWindowGenerator, WindowAgent};

/// A directory of its own for SQLite files of `test`.
fn temp_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(fresh_scope(&format!("gdid-windows-{test}")));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One agent over a shard of each dialect configured here: the windows it opens on the three are
/// disjoint, and a client of the three uses them all up, each id once.
#[tokio::test]
async fn shards_of_the_three_dialects_serve_one_sequence() {
    let sequence = fresh_scope("dialects");
    let mut shards = Vec::new();
    for (dialect, url) in urls() {
        shards.push((dialect.to_owned(), SqlStore::connect(&url).await.unwrap()));
    }
    let mut agent = WindowAgent::new(20, 1).unwrap();
    for (label, store) in &shards {
        agent.add_shard(label, store.clone()).await.unwrap();
    }
    agent.run_once(&[&sequence]).await.unwrap();
    let windows = agent.windows(&sequence).await.unwrap();
    assert_eq!(windows.len(), shards.len());
    let labels: HashSet<&str> = windows.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(labels.len(), shards.len(), "a window on each dialect");
    let ids = SqlWindowGenerator::new(shards.clone(), &sequence, 7).unwrap();
    let mut seen = HashSet::new();
    for _ in 0..20 * shards.len() {
        let id = ids.next_id().await.unwrap();
        assert!(seen.insert(id), "{id} issued twice");
        assert!(
            windows.iter().any(|(_, w)| (w.start..w.end).contains(&id)),
            "{id} outside every window"
        );
    }
    let exhausted = ids.next_id().await.unwrap_err();
    assert!(
        matches!(exhausted.detail(), ErrorDetail::Exhausted(_)),
        "{exhausted}"
    );
}

/// Named no sequence, the agent supplies every sequence it finds on the shards.
#[cfg(feature = "sqlite")]
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

/// SQLite orders text above every integer: a window end stored as text used to be the
/// high-water mark (read as 0). Now it is an error naming the row, for the agent and the
/// listing alike, and nothing is claimed from it.
#[cfg(feature = "sqlite")]
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
            "corrupt row: the {table} row (sequence {sequence:?}, window_start 1): field \
             {column} holds text 'x{column}', expected an integer"
        );
        let high = store.high_water(&sequence).await.unwrap_err().to_string();
        assert!(high.contains(&expected), "{high}");
        let mut more = WindowAgent::new(10, 2).unwrap();
        more.add_shard("sqlite", store.clone()).await.unwrap();
        let err = more.run_once(&[&sequence]).await.unwrap_err().to_string();
        assert!(err.contains(&expected), "{err}");
        let listed = agent.windows(&sequence).await.unwrap_err().to_string();
        assert!(listed.contains(&expected), "{listed}");
        let claims = store.qualify(&format!(
            "SELECT COUNT(*) FROM gdid_window_claims WHERE sequence_name = '{sequence}'"
        ));
        let count: i64 = common::with_pool!(&store, pool => sqlx::query_scalar(sqlx::AssertSqlSafe(claims)).fetch_one(pool).await).unwrap();
        assert_eq!(
            count, 1,
            "{table}.{column}: nothing claimed after the corrupt row"
        );
    }
}
