//! 4 OS processes issue 50k ids each from the same database, one is killed with SIGKILL midway
//! and restarted: no id is printed twice. On MariaDB, PostgreSQL and a SQLite file.
//!
//! The workers are this test executable run again with `GDID_WORKER_URL` set: the test below then
//! issues ids and prints them instead of orchestrating.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use common::{fresh_scope, urls};
use gdid_core::Gdid;
use gdid_core::generator::BlockGenerator;
use gdid_sql::SqlAuthority;

const PER_PROCESS: usize = 50_000;
const PREFIX: &str = "gdid-id ";
const TEST_NAME: &str = "processes_killed_and_restarted_never_repeat_an_id";

fn spawn_worker(url: &str, scope: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env("GDID_WORKER_URL", url)
        .env("GDID_WORKER_SCOPE", scope)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Reads a worker's ids until it exits (or until `stop_after` ids, then kills it).
fn collect(child: &mut Child, stop_after: Option<usize>) -> Vec<Gdid> {
    let stdout = child.stdout.take().unwrap();
    let mut ids = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        // The harness prints "test NAME ... " with no newline: the first id may follow it.
        if let Some((_, text)) = line.split_once(PREFIX) {
            ids.push(text.parse().unwrap());
            if stop_after.is_some_and(|n| ids.len() >= n) {
                child.kill().unwrap(); // SIGKILL
                break;
            }
        }
    }
    child.wait().unwrap();
    ids
}

async fn work(url: &str, scope: &str) {
    let ids = BlockGenerator::builder(scope, "orders")
        .authority(SqlAuthority::connect(url, 4).await.unwrap())
        .build()
        .unwrap();
    let stdout = std::io::stdout();
    for _ in 0..PER_PROCESS {
        let id = ids.next_id().await.unwrap();
        let mut out = stdout.lock();
        writeln!(out, "{PREFIX}{id}").unwrap();
        out.flush().unwrap();
    }
}

#[tokio::test]
async fn processes_killed_and_restarted_never_repeat_an_id() {
    if let (Ok(url), Ok(scope)) = (
        std::env::var("GDID_WORKER_URL"),
        std::env::var("GDID_WORKER_SCOPE"),
    ) {
        return work(&url, &scope).await;
    }
    for (dialect, url) in urls() {
        let scope = fresh_scope("processes");
        let mut workers: Vec<Child> = (0..4).map(|_| spawn_worker(&url, &scope)).collect();
        let victim = workers.remove(0);
        let (url_for_thread, scope_for_thread) = (url.clone(), scope.clone());
        let killed_and_restarted = std::thread::spawn(move || {
            let mut victim = victim;
            let before = collect(&mut victim, Some(PER_PROCESS / 3));
            let mut again = spawn_worker(&url_for_thread, &scope_for_thread);
            let after = collect(&mut again, None);
            (before, after)
        });
        let mut all: Vec<Gdid> = Vec::new();
        for mut worker in workers {
            let ids = collect(&mut worker, None);
            assert_eq!(ids.len(), PER_PROCESS, "{dialect}: a worker stopped early");
            all.extend(ids);
        }
        let (before, after) = killed_and_restarted.join().unwrap();
        assert!(before.len() >= PER_PROCESS / 3, "{dialect}");
        assert_eq!(after.len(), PER_PROCESS, "{dialect}: the restarted worker");
        all.extend(before);
        all.extend(after);
        let mut seen = HashSet::with_capacity(all.len());
        for id in &all {
            assert!(!id.is_zero());
            assert!(seen.insert(*id), "{dialect}: {id} issued twice");
        }
        eprintln!(
            "{dialect}: {} ids from 5 processes, no duplicate",
            all.len()
        );
    }
}
