//! `gdid sequences list|show|set-floor` on every store (SQLite, and MariaDB, PostgreSQL and
//! MongoDB when their URLs are set), and a floor raised by one process while others issue ids:
//! nothing issued twice, and nothing below the floor from a process started after it.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::gdid;
use gdid_testkit::{fresh, sqlite_url};

mod common;

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The counter of a GDID's text form `era:authority:counter`.
fn counter(id: &str) -> u64 {
    id.rsplit(':').next().unwrap().parse().unwrap()
}

/// Every store configured: a new SQLite file, and a database of these tests' own on each server
/// whose URL is set. `list` reads every record of a store, and other suites leave corrupt
/// records in the servers' shared `test` databases on purpose (the fault suite's corruption
/// scenarios): those are theirs to find, not these tests'.
fn stores() -> Vec<String> {
    gdid_testkit::every_store("gdid_cli_sequences")
}

fn show(store: &str, scope: &str, sequence: &str) -> serde_json::Value {
    let shown = gdid(&[
        "sequences",
        "show",
        "--store",
        store,
        "--scope",
        scope,
        "--sequence",
        sequence,
        "--format",
        "json",
    ]);
    serde_json::from_str(&stdout(&shown)).unwrap()
}

#[test]
fn list_show_and_set_floor_on_every_store() {
    for store in stores() {
        let scope = fresh("cli_seq");
        // `gdid <command…> --store <store> --scope <scope> <more…>`.
        let run = |command: &[&str], more: &[&str]| {
            gdid(&[command, &["--store", &store, "--scope", &scope], more].concat())
        };
        let next = |count: &str| stdout(&run(&["next"], &["--sequence", "q", "--count", count]));
        next("3");
        std::thread::sleep(Duration::from_millis(20));
        next("3");

        let shown = show(&store, &scope, "q");
        let record = &shown.as_array().unwrap()[0];
        assert_eq!(record["kind"], "gdid", "{store}: {record}");
        assert_eq!(record["era"], 0, "{store}");
        let next_counter = record["next"].as_u64().unwrap();
        assert!(next_counter > 6, "{store}: {record}");
        assert!(record["last_allocation_ms"].is_i64(), "{store}: {record}");
        assert!(
            record["last_allocation"].as_str().unwrap().ends_with('Z'),
            "{store}"
        );
        assert!(record["rate_per_second"].is_f64(), "{store}: {record}");
        // Counters used: all before the next one (era 0), as text (it can pass 2^53).
        let used = (next_counter - 1).to_string();
        assert_eq!(
            record["used"].as_str(),
            Some(used.as_str()),
            "{store}: {record}"
        );
        // The runway: the counter space left at the recent rate, far beyond a year here.
        let runway = record["runway_seconds"].as_f64().unwrap_or(0.0);
        assert!(runway > 365.0 * 24.0 * 3600.0, "{store}: {record}");

        let listed = stdout(&gdid(&["sequences", "list", "--store", &store]));
        let header = listed.lines().next().unwrap();
        assert!(header.starts_with("authority  scope"), "{store}: {listed}");
        assert!(
            listed
                .lines()
                .any(|l| l.contains(&scope) && l.contains(" q ")),
            "{store}: {listed}"
        );

        let floor = |at: &str, sequence: &str| {
            run(
                &["sequences", "set-floor"],
                &["--sequence", sequence, "--at", at],
            )
        };
        let raised = stdout(&floor("1000000", "q"));
        assert!(
            raised.contains("raised to era 0, next counter 1000000"),
            "{raised}"
        );
        assert!(counter(next("1").trim()) >= 1_000_000, "{store}");
        assert!(stdout(&floor("1000000", "missing")).contains("raised to"));
        assert_eq!(show(&store, &scope, "missing")[0]["next"], 1_000_000);

        for (at, sequence, says) in [
            ("10", "q", "a floor is never lowered"),
            ("10", "Q", "differs only in case"),
            ("0", "q", "expected a next counter from 1"),
            ("abc", "q", "--at"),
        ] {
            let refused = floor(at, sequence);
            let stderr = String::from_utf8_lossy(&refused.stderr);
            assert_eq!(
                refused.status.code(),
                Some(2),
                "{store} {at} {sequence}: {stderr}"
            );
            assert!(stderr.contains(says), "{store}: {stderr}");
        }
        let none = run(&["sequences", "show"], &["--sequence", "none"]);
        assert_eq!(none.status.code(), Some(2), "{store}");
        // set-floor cannot be undone: no default scope or sequence.
        for missing in [
            &[
                "sequences",
                "set-floor",
                "--store",
                &store,
                "--sequence",
                "q",
                "--at",
                "5",
            ][..],
            &[
                "sequences",
                "set-floor",
                "--store",
                &store,
                "--scope",
                &scope,
                "--at",
                "5",
            ],
        ] {
            let refused = gdid(missing);
            let stderr = String::from_utf8_lossy(&refused.stderr);
            assert_eq!(refused.status.code(), Some(2), "{store}: {stderr}");
            assert!(stderr.contains("required"), "{store}: {stderr}");
        }

        // The one-at-a-time counter's floor is its next id.
        let counter_floor = run(
            &["sequences", "set-floor"],
            &["--sequence", "n", "--counter", "--at", "500"],
        );
        stdout(&counter_floor);
        let one = stdout(&run(
            &["next"],
            &["--sequence", "n", "--strategy", "one-at-a-time"],
        ));
        assert_eq!(one.trim(), "500", "{store}");
    }
}

/// Two processes issue ids (one long run, and a loop of short ones) while a third raises the
/// floor: no id is issued twice; the long run, once past the floor, never goes back below it;
/// and every process started after the floor was raised issues only ids at or above it.
fn floor_raised_while_issuing(store: &str) {
    const FLOOR: u64 = 50_000_000;
    let scope = fresh("cli_floor_race");
    let common = ["--store", store, "--scope", &scope, "--sequence", "q"];
    let mut long = Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args(["next", "--count", "200000"])
        .args(common)
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gdid binary starts");
    let long_out = long.stdout.take().unwrap();
    // How many ids the long run has printed, and how many short runs have ended: the floor is
    // raised once both are under way.
    let long_printed = Arc::new(AtomicUsize::new(0));
    let short_ended = Arc::new(AtomicUsize::new(0));
    let long_reader = {
        let printed = long_printed.clone();
        std::thread::spawn(move || {
            BufReader::new(long_out)
                .lines()
                .map(Result::unwrap)
                .inspect(|_| {
                    printed.fetch_add(1, Ordering::SeqCst);
                })
                .collect::<Vec<_>>()
        })
    };

    let raised = Arc::new(AtomicBool::new(false));
    let short = {
        let (raised, ended) = (raised.clone(), short_ended.clone());
        let common: Vec<String> = common.iter().map(|s| (*s).to_owned()).collect();
        std::thread::spawn(move || {
            // Until three runs started after the floor was raised.
            let mut runs: Vec<(bool, String)> = Vec::new();
            while runs.iter().filter(|(after, _)| *after).count() < 3 {
                let after = raised.load(Ordering::SeqCst);
                let args: Vec<&str> = ["next", "--count", "20"]
                    .into_iter()
                    .chain(common.iter().map(String::as_str))
                    .collect();
                runs.push((after, stdout(&gdid(&args))));
                ended.fetch_add(1, Ordering::SeqCst);
            }
            runs
        })
    };

    let began = std::time::Instant::now();
    while long_printed.load(Ordering::SeqCst) == 0 || short_ended.load(Ordering::SeqCst) == 0 {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "{store}: the long run or the short ones never began"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let at = FLOOR.to_string();
    let args: Vec<&str> = ["sequences", "set-floor", "--at", &at]
        .into_iter()
        .chain(common)
        .collect();
    stdout(&gdid(&args));
    raised.store(true, Ordering::SeqCst);

    let status = long.wait().unwrap();
    assert!(status.success(), "{store}: the long run failed");
    let long_ids = long_reader.join().unwrap();
    let runs = short.join().unwrap();

    let mut seen = HashSet::new();
    let mut past_floor = false;
    for id in &long_ids {
        let counter = counter(id);
        assert!(
            !past_floor || counter >= FLOOR,
            "{store}: {id} below the floor after an id above it"
        );
        past_floor |= counter >= FLOOR;
        assert!(seen.insert(id.clone()), "{store}: {id} issued twice");
    }
    let mut after = 0;
    for (started_after, ids) in &runs {
        for id in ids.lines() {
            assert!(seen.insert(id.to_owned()), "{store}: {id} issued twice");
            if *started_after {
                assert!(counter(id) >= FLOOR, "{store}: {id} below the floor");
            }
        }
        after += usize::from(*started_after);
    }
    assert!(after > 0, "{store}: no process started after the floor");
    assert!(
        after < runs.len(),
        "{store}: no process ended before the floor"
    );
    let next = stdout(&gdid(&[&["next"][..], &common].concat()));
    assert!(counter(next.trim()) >= FLOOR, "{store}");
}

#[test]
fn a_floor_raised_while_other_processes_issue_ids() {
    for store in stores() {
        floor_raised_while_issuing(&store);
    }
}

/// `prune-windows` deletes the used-up windows but the latest, and the windows opened after it
/// follow the ones deleted (no value twice).
#[test]
fn used_up_windows_are_pruned() {
    let store = sqlite_url("cli-prune");
    let agent = ["agent", "--store", &store, "--sequence", "w"];
    let sizes = ["--min-open-windows", "3", "--window-size", "10"];
    stdout(&gdid(&[&agent[..], &sizes].concat()));
    let next = [
        "next",
        "--strategy",
        "window",
        "--store",
        &store,
        "--sequence",
        "w",
    ];
    let first = stdout(&gdid(&[&next[..], &["--count", "25"]].concat()));
    let prune = [
        "sequences",
        "prune-windows",
        "--store",
        &store,
        "--sequence",
        "w",
    ];
    let pruned = stdout(&gdid(&[&prune[..], &["--keep", "1"]].concat()));
    assert!(
        pruned.contains("w: 1 used-up window(s) deleted"),
        "{pruned}"
    );
    stdout(&gdid(&[&agent[..], &sizes].concat()));
    let then = stdout(&gdid(&[&next[..], &["--count", "20"]].concat()));
    let mut seen = HashSet::new();
    for id in first.lines().chain(then.lines()) {
        assert!(seen.insert(id.to_owned()), "{id} issued twice");
    }
    assert_eq!(seen.len(), 45);
}

/// The ids `gdid next` printed, one a line.
fn ids_of(output: &Output) -> Vec<gdid::Gdid> {
    stdout(output)
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

#[test]
fn a_restored_sqlite_file_issues_nothing_twice_after_fence() {
    let store = sqlite_url("cli-fence");
    let file = store.strip_prefix("sqlite:").unwrap().to_owned();
    let next_of = |sequence: &str, count: &str| {
        let args = [
            "next",
            "--store",
            &store,
            "--sequence",
            sequence,
            "--count",
            count,
        ];
        ids_of(&gdid(&args))
    };
    let next = |count: &str| next_of("orders", count);
    let mut issued = next("5");
    // The backup: taken now, before the last allocations; the file and its write-ahead log,
    // when one is left (a process need not checkpoint it when it ends).
    let copy = |from: &str, to: &str| {
        for suffix in ["", "-wal"] {
            let (from, to) = (format!("{from}{suffix}"), format!("{to}{suffix}"));
            match std::fs::copy(&from, &to) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let _ = std::fs::remove_file(&to);
                }
                Err(e) => panic!("{from}: {e}"),
            }
        }
        let _ = std::fs::remove_file(format!("{to}-shm"));
    };
    let backup = format!("{file}.backup");
    copy(&file, &backup);
    issued.extend(next("5"));
    // A sequence made after the backup: the restored file lacks it.
    let late_before = next_of("late", "5");
    // The restore.
    copy(&backup, &file);
    let fenced = gdid(&["sequences", "fence", "--store", &store, "--all"]);
    let said = stdout(&fenced);
    assert!(
        said.contains("default/orders (authority 1): era 0 -> era "),
        "{said}"
    );
    let after = next("5");
    let last_before = *issued.iter().max().unwrap();
    assert!(
        after.iter().all(|id| *id > last_before),
        "{after:?} after {last_before}"
    );
    issued.extend(after);
    let late_after = next_of("late", "5");
    let last_late = *late_before.iter().max().unwrap();
    assert!(
        late_after.iter().all(|id| *id > last_late),
        "a sequence made after the backup starts again: {late_after:?} after {last_late}"
    );
    let distinct: HashSet<_> = issued.iter().collect();
    assert_eq!(
        distinct.len(),
        issued.len(),
        "an id issued twice: {issued:?}"
    );
}

#[test]
fn fence_names_what_it_moves_or_is_refused() {
    let store = sqlite_url("cli-fence-args");
    // Neither --all nor a sequence: a usage error, nothing moved.
    let bare = gdid(&["sequences", "fence", "--store", &store]);
    assert_eq!(bare.status.code(), Some(2));
    let both = gdid(&[
        "sequences",
        "fence",
        "--store",
        &store,
        "--all",
        "--scope",
        "s",
    ]);
    assert_eq!(both.status.code(), Some(2));
    let half = gdid(&["sequences", "fence", "--store", &store, "--scope", "s"]);
    assert_eq!(half.status.code(), Some(2));
    // A u64 counter is named with the command that raises its floor instead.
    let counted = gdid(&[
        "next",
        "--store",
        &store,
        "--strategy",
        "one-at-a-time",
        "--sequence",
        "c",
    ]);
    stdout(&counted);
    let fenced = gdid(&[
        "sequences",
        "fence",
        "--store",
        &store,
        "--scope",
        "default",
        "--sequence",
        "c",
    ]);
    let said = stdout(&fenced);
    assert!(
        said.contains("(one-at-a-time counter): not moved")
            && said.contains("gdid sequences set-floor --counter --scope default --sequence c"),
        "{said}"
    );
}

#[test]
fn skip_ranges_and_skip_windows_move_a_restored_sqlite_file_past_what_it_issued() {
    let store = sqlite_url("cli-skip");
    let sharded = |count: &str| {
        let args = [
            "next",
            "--store",
            &store,
            "--strategy",
            "sharded",
            "--ranges",
            "1",
        ];
        stdout(&gdid(
            &[&args[..], &["--sequence", "sh", "--count", count]].concat(),
        ))
        .to_owned()
    };
    // `gdid sequences <command> --store <store> --sequence <sequence> --by <by>`.
    let skip = |command: &str, sequence: &str, by: &str| {
        let args = [
            "sequences",
            command,
            "--store",
            &store,
            "--sequence",
            sequence,
        ];
        gdid(&[&args[..], &["--by", by]].concat())
    };
    let before: Vec<u64> = sharded("3").lines().map(|id| id.parse().unwrap()).collect();
    let said = stdout(&skip("skip-ranges", "sh", "100")).to_owned();
    assert!(
        said.contains("sh: 1 range(s) moved forward by 100 values"),
        "{said}"
    );
    let after: u64 = sharded("1").trim().parse().unwrap();
    assert_eq!(after, before[2] + 101, "100 values skipped, none repeated");
    // No window open yet: none closed, the high-water mark moved by 500.
    let skipped = skip("skip-windows", "w", "500");
    assert!(
        stdout(&skipped).contains("w: 0 open window(s) closed, 500 values skipped"),
        "{}",
        stdout(&skipped)
    );
    let refused = skip("skip-ranges", "sh", "0");
    assert_eq!(
        refused.status.code(),
        Some(2),
        "a skip of 0 is the caller's mistake"
    );
}

/// The read-only commands create nothing: a SQLite file that does not exist is refused (exit 2,
/// naming it) and not made; a file without gdid tables lists no records and gets none.
#[test]
fn reading_a_store_creates_nothing() {
    let dir = std::env::temp_dir().join(fresh("cli_seq_read"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("typo.sqlite");
    let url = format!("sqlite:{}", file.display());
    for command in [
        &["sequences", "list"][..],
        &["sequences", "show", "--scope", "s", "--sequence", "q"],
        &["check"],
        &["schema", "print"],
    ] {
        let refused = gdid(&[command, &["--store", &url]].concat());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains(&format!("no SQLite file at {}", file.display())),
            "{command:?}: {stderr}"
        );
        assert!(refused.stdout.is_empty(), "{command:?}");
        assert!(!file.exists(), "{command:?} made {}", file.display());
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

    // A SQLite file without gdid tables (an empty file is an empty database): no records, and
    // the file is left as it was.
    let other = dir.join("other.sqlite");
    std::fs::write(&other, b"").unwrap();
    let url = format!("sqlite:{}", other.display());
    let listed = stdout(&gdid(&["sequences", "list", "--store", &url]));
    assert!(listed.contains("(no counter records)"), "{listed}");
    let json = stdout(&gdid(&[
        "sequences",
        "list",
        "--store",
        &url,
        "--format",
        "json",
    ]));
    assert_eq!(json.trim(), "[]");
    gdid(&["check", "--store", &url]);
    assert_eq!(
        std::fs::metadata(&other).unwrap().len(),
        0,
        "the file was written"
    );
    std::fs::remove_dir_all(&dir).ok();
}
