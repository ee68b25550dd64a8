//! `gdid agent` and `gdid bench` end to end: the real binary against a SQLite file, the real
//! MariaDB, PostgreSQL and MongoDB servers (from `GDID_MYSQL_URL`, `GDID_POSTGRES_URL`,
//! `GDID_MONGODB_URI`), and an in-process store.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use gdid_testkit::{fresh, server, sqlite_url};

mod common;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(fresh(name));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `gdid` in a folder of its own, so that no default store lands in the sources.
fn gdid(args: &[&str]) -> Output {
    common::gdid_in(&temp_dir("gdid-cli-agent"), args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn succeeded(output: &Output) -> String {
    assert!(output.status.success(), "{}", stderr(output));
    stdout(output)
}

/// Exit status `code`, nothing on stdout and exactly one line on stderr.
fn assert_fails_with_one_line(output: &Output, code: i32) -> String {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert_eq!(stdout(output), "");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("gdid: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// A window the agent reports having opened.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Opened {
    shard: String,
    sequence: String,
    start: u64,
    end: u64,
}

/// The `shard sequence start..end` lines of an agent's report, and its summary line.
fn opened(report: &str) -> (Vec<Opened>, String) {
    let mut lines: Vec<&str> = report.lines().collect();
    let summary = lines.pop().expect("a summary line").to_owned();
    let windows = lines
        .into_iter()
        .map(|line| {
            let (rest, range) = line.rsplit_once(' ').expect("shard sequence start..end");
            let (shard, sequence) = rest.rsplit_once(' ').expect("shard sequence");
            let (start, end) = range.split_once("..").expect("start..end");
            Opened {
                shard: shard.to_owned(),
                sequence: sequence.to_owned(),
                start: start.parse().unwrap(),
                end: end.parse().unwrap(),
            }
        })
        .collect();
    (windows, summary)
}

/// `--store` before each URL.
fn store_args(stores: &[&str]) -> Vec<String> {
    stores
        .iter()
        .flat_map(|url| ["--store".to_owned(), (*url).to_owned()])
        .collect()
}

fn agent(stores: &[&str], more: &[&str]) -> Output {
    let mut args = vec!["agent".to_owned()];
    args.extend(store_args(stores));
    args.extend(more.iter().map(|a| (*a).to_owned()));
    gdid(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `count` ids of `sequence` from the windows on `stores`.
fn window_ids(stores: &[&str], sequence: &str, count: u64) -> Vec<u64> {
    let mut args = vec!["next".to_owned(), "--strategy".into(), "window".into()];
    args.extend(store_args(stores));
    args.extend(["--sequence".into(), sequence.into()]);
    args.extend(["--count".into(), count.to_string()]);
    let out = gdid(&args.iter().map(String::as_str).collect::<Vec<_>>());
    succeeded(&out)
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// One agent run of 2 windows of 100 per shard, then 150 ids from them: each id distinct and
/// inside a window opened; windows never overlap; the shards are labelled by their URLs.
fn agent_supplies_next(stores: &[&str], labels: &[&str]) {
    let sequence = fresh("agent");
    let out = agent(
        stores,
        &[
            "--sequence",
            &sequence,
            "--min-open-windows",
            "2",
            "--window-size",
            "100",
        ],
    );
    let (windows, summary) = opened(&succeeded(&out));
    assert_eq!(windows.len(), 2 * stores.len(), "{windows:?}");
    assert_eq!(summary, format!("opened {} windows", windows.len()));
    for label in labels {
        assert_eq!(windows.iter().filter(|w| w.shard == *label).count(), 2);
    }
    let mut ranges: Vec<(u64, u64)> = windows.iter().map(|w| (w.start, w.end)).collect();
    ranges.sort_unstable();
    assert!(ranges.windows(2).all(|pair| pair[0].1 <= pair[1].0));
    assert!(
        windows
            .iter()
            .all(|w| w.sequence == sequence && w.end - w.start == 100)
    );

    let ids = window_ids(stores, &sequence, 150);
    assert_eq!(ids.len(), 150);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 150);
    for id in &ids {
        assert!(
            windows.iter().any(|w| (w.start..w.end).contains(id)),
            "{id} is in no window opened: {windows:?}"
        );
    }
}

#[test]
fn the_agent_once_on_sqlite_opens_windows_that_next_issues_from() {
    let store = sqlite_url("gdid-cli-agent");
    agent_supplies_next(&[&store], &[&store]);
}

#[test]
fn a_second_run_tops_up_what_was_used_and_finds_every_sequence() {
    let store = sqlite_url("gdid-cli-agent-topup");
    let sequence = fresh("topup");
    let sizes = ["--min-open-windows", "2", "--window-size", "100"];
    let first = agent(
        &[&store],
        &[&["--sequence", &sequence][..], &sizes].concat(),
    );
    let (windows, _) = opened(&succeeded(&first));
    assert_eq!(
        windows.iter().map(|w| (w.start, w.end)).collect::<Vec<_>>(),
        [(1, 101), (101, 201)],
        "windows start at 1: the window strategy never issues 0"
    );
    // All of the first window: one stays open.
    assert_eq!(
        window_ids(&[&store], &sequence, 100),
        (1..101).collect::<Vec<_>>()
    );
    // No --sequence: every sequence found on the shard.
    let second = agent(&[&store], &sizes);
    let (windows, summary) = opened(&succeeded(&second));
    assert_eq!(
        windows,
        [Opened {
            shard: store.clone(),
            sequence: sequence.clone(),
            start: 201,
            end: 301
        }]
    );
    assert_eq!(summary, "opened 1 window");
    let third = agent(&[&store], &sizes);
    let (windows, summary) = opened(&succeeded(&third));
    assert!(windows.is_empty());
    assert!(summary.starts_with("opened no window"), "{summary}");
}

/// `--keep-used-windows N` deletes the used-up windows beyond the N latest; the ids after them
/// go on where they were.
#[test]
fn the_agent_deletes_used_up_windows_beyond_those_it_keeps() {
    let store = sqlite_url("gdid-cli-agent-prune");
    let sequence = fresh("prune");
    let run = |more: &[&str]| {
        let sizes = [
            "--sequence",
            &sequence,
            "--min-open-windows",
            "1",
            "--window-size",
            "10",
        ];
        let (windows, summary) =
            opened(&succeeded(&agent(&[&store], &[&sizes[..], more].concat())));
        (windows.len(), summary)
    };
    for round in 0..3 {
        assert_eq!(run(&[]), (1, "opened 1 window".to_owned()));
        let from = 1 + 10 * round;
        assert_eq!(
            window_ids(&[&store], &sequence, 10),
            (from..from + 10).collect::<Vec<_>>()
        );
    }
    assert_eq!(
        run(&["--keep-used-windows", "1"]),
        (1, "opened 1 window; deleted 2 used-up windows".to_owned())
    );
    assert_eq!(
        run(&["--keep-used-windows", "1"]),
        (
            0,
            "opened no window: every shard has 1 open window(s) of each sequence".to_owned()
        )
    );
    assert_eq!(
        window_ids(&[&store], &sequence, 10),
        (31..41).collect::<Vec<_>>()
    );
}

#[test]
fn the_agent_supplies_mariadb_and_postgresql_as_two_shards() {
    let (Some(mysql), Some(postgres)) = (server("GDID_MYSQL_URL"), server("GDID_POSTGRES_URL"))
    else {
        return;
    };
    // The labels are the URLs without their passwords (these have none).
    agent_supplies_next(&[&mysql, &postgres], &[&mysql, &postgres]);
}

#[test]
fn the_agent_supplies_mongodb() {
    let Some(mongodb) = server("GDID_MONGODB_URI") else {
        return;
    };
    agent_supplies_next(&[&mongodb], &[&mongodb]);
}

#[test]
fn watching_runs_a_round_every_second_until_stopped() {
    let store = sqlite_url("gdid-cli-agent-watch");
    let sequence = fresh("watch");
    let child = Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args(["agent", "--store", &store, "--sequence", &sequence])
        .args([
            "--min-open-windows",
            "2",
            "--window-size",
            "10",
            "--watch",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gdid binary runs");
    // Read its report as it comes (one flush a round) until the second round, however long a
    // busy machine makes it take, then stop it: no fixed wait.
    let mut child = child;
    let mut report = String::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    while report.lines().filter(|l| l.starts_with("round ")).count() < 2 {
        if lines.read_line(&mut report).unwrap() == 0 {
            break; // it ended by itself: the assertions below say how
        }
    }
    child.kill().expect("the agent is still running");
    let out = child.wait_with_output().unwrap();
    let rounds: Vec<&str> = report.lines().filter(|l| l.starts_with("round ")).collect();
    assert!(rounds.len() >= 2, "{report}\n{}", stderr(&out));
    assert_eq!(rounds[0], "round 1: opened 2 windows");
    assert!(
        rounds[1].starts_with("round 2: opened no window"),
        "{report}"
    );
    assert!(!stderr(&out).contains("failed"), "{}", stderr(&out));
}

#[test]
fn bad_agent_input_exits_2_with_one_line() {
    let sqlite = "sqlite:never-created.sqlite";
    let sizes = ["--min-open-windows", "2", "--window-size", "100"];
    for (stores, more, message) in [
        (
            &[sqlite, "mongodb://127.0.0.1:1/x"][..],
            &sizes[..],
            "SQL stores or all MongoDB",
        ),
        (&["memory"], &sizes, "--store memory"),
        (
            &[sqlite],
            &["--min-open-windows", "2", "--window-size", "0"],
            "window size 0",
        ),
        (
            &[sqlite],
            &["--min-open-windows", "0", "--window-size", "10"],
            "--min-open-windows 0",
        ),
        (&[sqlite, sqlite], &sizes, "given twice"),
        (
            &[sqlite],
            &[&sizes[..], &["--sequence", "no/slash"]].concat(),
            "invalid sequence name",
        ),
        (
            &[sqlite],
            &[&sizes[..], &["--watch", "0"]].concat(),
            "--watch 0",
        ),
    ] {
        let out = agent(stores, more);
        let line = assert_fails_with_one_line(&out, 2);
        assert!(line.contains(message), "{line}");
    }
}

#[test]
fn an_unreachable_shard_exits_1_without_the_password() {
    let out = agent(
        &["postgres://gdid:hunter2@127.0.0.1:1/test"],
        &["--min-open-windows", "1", "--window-size", "10"],
    );
    let line = assert_fails_with_one_line(&out, 1);
    assert!(!line.contains("hunter2"), "{line}");
}

/// The value of row `name` of a bench table.
fn row<'a>(table: &'a str, name: &str) -> &'a str {
    table
        .lines()
        .find_map(|line| {
            line.strip_prefix(name)
                .filter(|rest| rest.starts_with(' '))
                .map(str::trim)
        })
        .unwrap_or_else(|| panic!("no row {name}: {table}"))
}

fn assert_is_a_bench_table(out: &Output, strategy: &str, store: &str) {
    let table = succeeded(out);
    assert_eq!(row(&table, "strategy"), strategy);
    assert_eq!(row(&table, "store"), store);
    assert_eq!(row(&table, "threads"), "1");
    let ids: u64 = row(&table, "ids").parse().unwrap();
    let per_second: u64 = row(&table, "ids/s").parse().unwrap();
    assert!(ids > 0 && per_second > 0, "{table}");
    for name in ["p50", "p99", "p99.9", "p99.99", "max"] {
        let value = row(&table, name);
        assert!(
            ["ns", "µs", "ms", "s"].contains(&value.rsplit(' ').next().unwrap()),
            "{name}: {value}"
        );
    }
    // Pipes, not a terminal: no progress bar.
    assert_eq!(stderr(out), "");
}

#[test]
fn bench_on_memory_prints_a_table_and_no_progress_bar_on_pipes() {
    let out = gdid(&["bench", "--store", "memory", "--seconds", "1"]);
    assert_is_a_bench_table(&out, "gdid", "memory");
}

#[test]
fn bench_on_a_sqlite_file() {
    let store = sqlite_url("gdid-cli-bench");
    let out = gdid(&["bench", "--store", &store, "--seconds", "1"]);
    assert_is_a_bench_table(&out, "gdid", &store);
}

#[test]
fn bench_json_is_one_object_on_two_threads() {
    let out = gdid(&[
        "bench",
        "--strategy",
        "uuid-v7",
        "--threads",
        "2",
        "--seconds",
        "0.5",
        "--format",
        "json",
    ]);
    let text = succeeded(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["strategy"], "uuid-v7");
    assert_eq!(value["threads"], 2);
    assert_eq!(value["stores"], serde_json::json!([]));
    assert!(value["ids"].as_u64().unwrap() > 0);
    assert!(value["ids_per_second"].as_f64().unwrap() > 0.0);
    let latency = &value["latency_ns"];
    assert!(latency["p50"].as_u64().unwrap() <= latency["max"].as_u64().unwrap());
}

#[test]
fn bench_stops_at_the_first_failed_call_with_exit_1() {
    // No agent ran: the window strategy has no window to issue from.
    let store = sqlite_url("gdid-cli-bench-window");
    let out = gdid(&[
        "bench",
        "--strategy",
        "window",
        "--store",
        &store,
        "--seconds",
        "1",
    ]);
    let line = assert_fails_with_one_line(&out, 1);
    assert!(line.contains("is the agent running?"), "{line}");
}

#[test]
fn bad_bench_input_exits_2_with_one_line() {
    for (args, message) in [
        (
            &["bench", "--store", "memory", "--threads", "0"][..],
            "--threads 0",
        ),
        (
            &["bench", "--store", "memory", "--seconds", "0"],
            "--seconds 0",
        ),
        (
            &["bench", "--store", "memory", "--seconds", "-1"],
            "--seconds -1",
        ),
        (
            &["bench", "--store", "memory", "--strategy", "sharded"],
            "needs a database store",
        ),
    ] {
        let out = gdid(args);
        let line = assert_fails_with_one_line(&out, 2);
        assert!(line.contains(message), "{args:?}: {line}");
    }
}
