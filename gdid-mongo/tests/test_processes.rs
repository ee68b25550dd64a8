//! 4 OS processes issue 50k ids each from the same MongoDB counter document, one is killed with
//! SIGKILL midway (while the others run) and restarted: no id is printed twice.
//!
//! The workers are this test executable run again with `GDID_WORKER_URL` set: the test below then
//! issues ids and prints them instead of orchestrating.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use gdid_core::Gdid;
use gdid_core::generator::BlockGenerator;
use gdid_mongo::MongoAuthority;

const PER_PROCESS: usize = 50_000;
const PREFIX: &str = "gdid-id ";
const TEST_NAME: &str = "processes_killed_and_restarted_never_repeat_an_id";

/// A worker of `scope`: this test executable run again, waiting for the file `start` before it
/// issues ids.
fn spawn_worker(url: &str, scope: &str, start: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env("GDID_WORKER_URL", url)
        .env("GDID_WORKER_SCOPE", scope)
        .env("GDID_WORKER_START", start)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Reads a worker's ids until it exits (or until `stop_after` ids, then kills it).
fn collect(mut child: Child, stop_after: Option<usize>) -> Vec<Gdid> {
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

/// Waits for the file `GDID_WORKER_START` + `suffix` (`""`: every worker is spawned), so that the
/// workers begin together.
async fn wait_for(suffix: &str) {
    let file = format!("{}{suffix}", std::env::var("GDID_WORKER_START").unwrap());
    while !Path::new(&file).exists() {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// 4 workers of `scope` started together, each read on a thread of its own (a worker whose
/// output is not read blocks on a full pipe); the first is killed after a third of its ids while
/// the others run, then a fifth takes its place. Returns every id printed.
fn run_workers(url: &str, scope: &str, what: &str) -> Vec<Gdid> {
    let start = std::env::temp_dir().join(format!("{scope}.start"));
    let workers: Vec<Child> = (0..4).map(|_| spawn_worker(url, scope, &start)).collect();
    let mut readers = Vec::new();
    for (i, worker) in workers.into_iter().enumerate() {
        let (url, scope, start) = (url.to_owned(), scope.to_owned(), start.clone());
        readers.push(std::thread::spawn(move || {
            if i > 0 {
                return (collect(worker, None), None);
            }
            let before = collect(worker, Some(PER_PROCESS / 3));
            let again = spawn_worker(&url, &scope, &start);
            let after = collect(again, None);
            (before, Some(after))
        }));
    }
    std::fs::write(&start, b"go").unwrap();
    let mut all = Vec::new();
    for (i, reader) in readers.into_iter().enumerate() {
        let (ids, restarted) = reader.join().unwrap();
        match restarted {
            None => assert_eq!(ids.len(), PER_PROCESS, "{what}: worker {i} stopped early"),
            Some(after) => {
                assert_eq!(
                    ids.len(),
                    PER_PROCESS / 3,
                    "{what}: the victim before its kill"
                );
                assert_eq!(after.len(), PER_PROCESS, "{what}: the restarted worker");
                all.extend(after);
            }
        }
        all.extend(ids);
    }
    std::fs::remove_file(&start).unwrap();
    assert_eq!(all.len(), 4 * PER_PROCESS + PER_PROCESS / 3, "{what}");
    let mut seen = HashSet::with_capacity(all.len());
    for id in &all {
        assert!(!id.is_zero(), "{what}: id 0");
        assert!(seen.insert(*id), "{what}: {id} issued twice");
    }
    all
}

async fn work(url: &str, scope: &str) {
    let client = mongodb::Client::with_uri_str(url).await.unwrap();
    let authority =
        MongoAuthority::new(&client.database("gdid_test"), "process_counters", 4).unwrap();
    let ids = BlockGenerator::builder(scope, "orders")
        .authority(authority)
        .build()
        .unwrap();
    wait_for("").await;
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
    let url = match std::env::var("GDID_MONGODB_URI") {
        Ok(url) if !url.is_empty() => url,
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("GDID_MONGODB_URI is not set and CI=true: the server is required")
        }
        _ => {
            eprintln!("skipped: set GDID_MONGODB_URI (scripts/mongodb-test-server.sh start)");
            return;
        }
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let scope = format!("processes-{}-{nanos}", std::process::id());
    let all = run_workers(&url, &scope, "mongodb");
    eprintln!(
        "mongodb: {} ids from 5 processes at once, no duplicate",
        all.len()
    );
}
