//! Tests whose workers are OS processes: the test executable run again, filtered to one test,
//! with the store and scope in its environment. The workers start together, each is read on a
//! thread of its own (a worker whose output is not read blocks on a full pipe), and one of them
//! is killed with SIGKILL a third of the way through, while the others run, then replaced.
//!
//! ```no_run
//! use gdid_testkit::processes::{self, Worker};
//!
//! const TEST: &str = "processes_never_repeat_an_id";
//!
//! #[tokio::test]
//! async fn processes_never_repeat_an_id() {
//!     if let Some(worker) = Worker::from_env() {
//!         worker.wait_for_start().await;
//!         for n in 0..processes::PER_PROCESS {
//!             worker.print(n); // ids from the store of `worker.url`
//!         }
//!         return;
//!     }
//!     let ids = processes::run_killed_and_restarted(TEST, "sqlite:ids.sqlite", "scope", "sqlite");
//!     # let _ = ids;
//! }
//! ```

use std::collections::HashSet;
use std::fmt::Display;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Ids each worker prints.
pub const PER_PROCESS: usize = 50_000;

/// What a worker writes before each id.
const PREFIX: &str = "gdid-id ";

/// A worker process: what it was started with.
#[derive(Debug, Clone)]
pub struct Worker {
    /// The store.
    pub url: String,
    /// The scope the workers share.
    pub scope: String,
    start: PathBuf,
}

impl Worker {
    /// The worker this process is, if it was started as one.
    pub fn from_env() -> Option<Worker> {
        Some(Worker {
            url: std::env::var("GDID_WORKER_URL").ok()?,
            scope: std::env::var("GDID_WORKER_SCOPE").ok()?,
            start: std::env::var_os("GDID_WORKER_START")?.into(),
        })
    }

    /// Waits until every worker is spawned, so that they begin together.
    pub async fn wait_for_start(&self) {
        while !self.start.exists() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Prints one id for the test to read (flushed: a killed worker has printed only what it
    /// issued).
    pub fn print(&self, id: impl Display) {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{PREFIX}{id}").expect("writing an id");
        out.flush().expect("flushing an id");
    }
}

/// The test executable again, filtered to `test` alone, its stdout piped and its stderr
/// dropped: a worker process, once its environment is set and it is spawned.
pub fn rerun(test: &str) -> Command {
    let mut worker = Command::new(std::env::current_exe().expect("the test executable"));
    worker
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    worker
}

/// A worker of `test` on `url` and `scope`, waiting for the file `start`.
fn spawn(test: &str, url: &str, scope: &str, start: &Path) -> Child {
    rerun(test)
        .env("GDID_WORKER_URL", url)
        .env("GDID_WORKER_SCOPE", scope)
        .env("GDID_WORKER_START", start)
        .spawn()
        .expect("spawning a worker")
}

/// Reads a worker's ids until it exits (or until `stop_after` ids, then kills it).
fn collect(mut child: Child, stop_after: Option<usize>) -> Vec<String> {
    let stdout = child.stdout.take().expect("a piped stdout");
    let mut ids = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        // The harness prints "test NAME ... " with no newline: the first id may follow it.
        if let Some((_, text)) = line.split_once(PREFIX) {
            ids.push(text.to_owned());
            if stop_after.is_some_and(|n| ids.len() >= n) {
                child.kill().expect("killing a worker"); // SIGKILL
                break;
            }
        }
    }
    child.wait().expect("waiting for a worker");
    ids
}

/// 4 workers of `test` on `url` and `scope`, started together; the first is killed after a
/// third of its ids while the others run, then a fifth takes its place. Asserts every worker
/// printed its count and no id was printed twice; returns every id printed, as text. `what`
/// names the store in messages.
///
/// # Panics
///
/// When a worker stopped early or an id was printed twice (the test fails).
pub fn run_killed_and_restarted(test: &str, url: &str, scope: &str, what: &str) -> Vec<String> {
    let start = std::env::temp_dir().join(format!("{scope}.start"));
    let workers: Vec<Child> = (0..4).map(|_| spawn(test, url, scope, &start)).collect();
    let mut readers = Vec::new();
    for (i, worker) in workers.into_iter().enumerate() {
        let (test, url, scope, start) = (
            test.to_owned(),
            url.to_owned(),
            scope.to_owned(),
            start.clone(),
        );
        readers.push(std::thread::spawn(move || {
            if i > 0 {
                return (collect(worker, None), None);
            }
            let before = collect(worker, Some(PER_PROCESS / 3));
            let after = collect(spawn(&test, &url, &scope, &start), None);
            (before, Some(after))
        }));
    }
    std::fs::write(&start, b"go").expect("writing the start file");
    let mut all = Vec::new();
    for (i, reader) in readers.into_iter().enumerate() {
        let (ids, restarted) = reader.join().expect("a reader thread");
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
    std::fs::remove_file(&start).expect("removing the start file");
    assert_eq!(all.len(), 4 * PER_PROCESS + PER_PROCESS / 3, "{what}");
    let mut seen = HashSet::with_capacity(all.len());
    for id in &all {
        assert!(seen.insert(id.as_str()), "{what}: {id} issued twice");
    }
    all
}
