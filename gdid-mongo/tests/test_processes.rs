//! 4 OS processes issue 50k ids each from the same MongoDB counter document, one is killed with
//! SIGKILL midway and restarted: no id is printed twice.
//!
//! The workers are this test executable run again with `GDID_WORKER_URL` set: the test below then
//! issues ids and prints them instead of orchestrating.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use gdid_core::Gdid;
use gdid_core::generator::BlockGenerator;
use gdid_mongo::MongoAuthority;

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
    let client = mongodb::Client::with_uri_str(url).await.unwrap();
    let authority =
        MongoAuthority::new(&client.database("gdid_test"), "process_counters", 4).unwrap();
    let ids = BlockGenerator::builder(scope, "orders")
        .authority(authority)
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
        assert_eq!(ids.len(), PER_PROCESS, "a worker stopped early");
        all.extend(ids);
    }
    let (before, after) = killed_and_restarted.join().unwrap();
    assert!(before.len() >= PER_PROCESS / 3);
    assert_eq!(after.len(), PER_PROCESS, "the restarted worker");
    all.extend(before);
    all.extend(after);
    let mut seen = HashSet::with_capacity(all.len());
    for id in &all {
        assert!(!id.is_zero());
        assert!(seen.insert(*id), "{id} issued twice");
    }
    eprintln!("mongodb: {} ids from 5 processes, no duplicate", all.len());
}
