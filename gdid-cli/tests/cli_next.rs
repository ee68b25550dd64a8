//! `gdid next` and `gdid convert` end to end: the real binary against a SQLite file, the real
//! MariaDB, PostgreSQL and MongoDB servers (from `GDID_MYSQL_URL`, `GDID_POSTGRES_URL`,
//! `GDID_MONGODB_URI`), and an in-process store.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Output;

use common::{gdid, gdid_in, gdid_with_stdin};
use gdid_testkit::{fresh, server, sqlite_url};

mod common;

fn lines(output: &Output) -> Vec<String> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Exit status 2 and exactly one line on stderr, nothing on stdout.
fn assert_bad_input(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("gdid: ")).count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(fresh(name));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_default_store_is_a_sqlite_file_here_and_runs_go_on_from_each_other() {
    let dir = temp_dir("gdid-cli-default");
    let first = lines(&gdid_in(&dir, &["next", "--count", "5"]));
    assert_eq!(first, ["0:1:1", "0:1:2", "0:1:3", "0:1:4", "0:1:5"]);
    assert!(dir.join("gdid.sqlite").exists());
    let second = lines(&gdid_in(&dir, &["next", "--count", "5"]));
    assert_eq!(
        second,
        ["0:1:6", "0:1:7", "0:1:8", "0:1:9", "0:1:10"],
        "the first run gave back what it did not print"
    );
    let third = lines(&gdid_in(&dir, &["next", "--count", "3000"]));
    assert_eq!(third.len(), 3000);
    let all: HashSet<&String> = first.iter().chain(&second).chain(&third).collect();
    assert_eq!(
        all.len(),
        3010,
        "a later run repeats no id of an earlier one"
    );
}

/// Two runs of 1,500 ids on `store`: every id distinct; then two runs of 5 go on from each
/// other, nothing lost between them.
fn two_runs_issue_distinct_ids(store: &str) {
    let scope = fresh("cli");
    let run = |count: &str| {
        lines(&gdid(&[
            "next", "--store", store, "--scope", &scope, "--count", count,
        ]))
    };
    let (a, b) = (run("1500"), run("1500"));
    assert_eq!(a.len() + b.len(), 3000);
    let all: HashSet<&String> = a.iter().chain(&b).collect();
    assert_eq!(all.len(), 3000, "{store}");
    let counter = |line: &String| line.rsplit(':').next().unwrap().parse::<u64>().unwrap();
    let (c, d) = (run("5"), run("5"));
    let counters: Vec<u64> = c.iter().chain(&d).map(counter).collect();
    let first = counters[0];
    assert_eq!(
        counters,
        (first..first + 10).collect::<Vec<_>>(),
        "{store}: the first run of 5 gave back what it did not print"
    );
}

#[test]
fn every_store_issues_distinct_ids_across_runs() {
    two_runs_issue_distinct_ids(&sqlite_url("gdid-cli"));
    for var in ["GDID_MYSQL_URL", "GDID_POSTGRES_URL", "GDID_MONGODB_URI"] {
        if let Some(url) = server(var) {
            two_runs_issue_distinct_ids(&url);
        }
    }
}

#[test]
fn a_store_that_is_down_is_failed_over_to_the_next_at_once() {
    // A store that cannot be read has its number in it: it serves only when --authority gives
    // the number (checked when it comes back). A server that refuses connections is known at
    // once, well within the pool's 5 s timeout.
    for dead in [
        "mysql://root@127.0.0.1:1/test",
        "postgres://postgres@127.0.0.1:1/test",
    ] {
        let began = std::time::Instant::now();
        let ids = lines(&gdid(&[
            "next",
            "--store",
            dead,
            "--authority",
            "1",
            "--store",
            &sqlite_url("gdid-cli-failover"),
            "--authority",
            "2",
            "--count",
            "3",
        ]));
        assert_eq!(ids.len(), 3, "{dead}");
        assert!(
            ids.iter().all(|id| id.starts_with("0:2:")),
            "authority 2 served: {ids:?}"
        );
        assert!(
            began.elapsed() < std::time::Duration::from_secs(3),
            "{dead}: {:?} to leave out a server that refuses connections",
            began.elapsed()
        );
    }
}

/// Hole 1 with the first store down: a fresh store listed with a store that cannot be read is
/// given no number (it might take the unread store's), and a store that can be read serves.
#[test]
fn a_store_that_cannot_be_read_never_lends_its_number_to_another() {
    let dead = "mysql://root@127.0.0.1:1/test";
    let fresh_store = sqlite_url("gdid-cli-unseen");
    let both = || {
        gdid(&[
            "next",
            "--store",
            dead,
            "--store",
            &fresh_store,
            "--count",
            "3",
        ])
    };
    let began = std::time::Instant::now();
    let refused = both();
    assert!(
        began.elapsed() < std::time::Duration::from_secs(3),
        "{:?} to find that a server refuses connections",
        began.elapsed()
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(refused.stdout.is_empty(), "no id is issued");
    assert!(stderr.contains("cannot be read now"), "{stderr}");

    // Once the fresh store has its number, the dead one is left out and the other serves.
    let recorded = lines(&gdid(&["next", "--store", &fresh_store, "--count", "1"]));
    let served = both();
    let ids = lines(&served);
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter()
            .all(|id| id.split(':').nth(1) == recorded[0].split(':').nth(1))
    );
    assert!(String::from_utf8_lossy(&served.stderr).contains("left out"));
}

#[test]
fn every_strategy_issues_its_kind_of_id() {
    let store = sqlite_url("gdid-cli-strategies");
    let next = |strategy: &str, extra: &[&str]| {
        let mut args = vec![
            "next",
            "--store",
            &store,
            "--strategy",
            strategy,
            "--count",
            "20",
        ];
        args.extend_from_slice(extra);
        lines(&gdid(&args))
    };
    let counted: Vec<u64> = next("one-at-a-time", &[])
        .iter()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(counted, (1..=20).collect::<Vec<u64>>());

    let sharded = next("sharded", &["--digits", "12", "--ranges", "4"]);
    assert!(sharded.iter().all(|id| id.len() == 12), "{sharded:?}");
    assert_eq!(sharded.iter().collect::<HashSet<_>>().len(), 20);

    let random = next("random", &["--digits", "9"]);
    assert!(
        random
            .iter()
            .all(|id| id.len() == 9 && id.parse::<u64>().is_ok())
    );

    let uuids: Vec<uuid::Uuid> = next("uuid-v7", &[])
        .iter()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(uuids.windows(2).all(|w| w[0] < w[1]));
    assert!(uuids.iter().all(|id| id.get_version_num() == 7));

    let object_ids = next("object-id", &[]);
    assert!(object_ids.iter().all(|id| id.len() == 24));
    assert_eq!(object_ids.iter().collect::<HashSet<_>>().len(), 20);
}

#[test]
fn formats_print_what_they_say() {
    let json = lines(&gdid(&[
        "next", "--store", "memory", "--count", "2", "--format", "json",
    ]));
    let first: serde_json::Value = serde_json::from_str(&json[0]).unwrap();
    assert_eq!(first["text"], "0:1:1");
    assert_eq!(first["compact"], "0011");
    for (form, id) in [
        ("text", "0:1:1"),
        ("hex", "000000001000000000000001"),
        ("leb", "00818080808080808010"),
        ("compact", "0011"),
        ("elink", "ACACBE-AC"),
    ] {
        let printed = lines(&gdid(&["next", "--store", "memory", "--form", form]));
        assert_eq!(printed, [id], "--form {form}");
        // Every form written is read back.
        let read = lines(&gdid(&["convert", "--from", form, "--to", "text", id]));
        assert_eq!(read, ["0:1:1"], "--from {form}");
    }
    // hex is every strategy's.
    let number = lines(&gdid(&[
        "next",
        "--store",
        "memory",
        "--strategy",
        "one-at-a-time",
        "--form",
        "hex",
    ]));
    assert_eq!(number, ["0000000000000001"]);
    let uuid = lines(&gdid(&["next", "--strategy", "uuid-v7", "--form", "hex"]));
    assert_eq!(uuid[0].len(), 32);
}

#[test]
fn bad_input_is_one_line_and_exit_status_2() {
    for args in [
        &["next", "--store", "redis://127.0.0.1"][..],
        &["next", "--store", "memory", "--authority", "16"],
        &[
            "next",
            "--store",
            "memory",
            "--store",
            "memory",
            "--authority",
            "3",
            "--authority",
            "3",
        ],
        &["next", "--store", "memory", "--sequence", "bad name"],
        &["next", "--strategy", "uuid-v7", "--form", "compact"],
        &["next", "--strategy", "uuid-v7", "--form", "leb"],
        &[
            "next",
            "--store",
            "memory",
            "--strategy",
            "one-at-a-time",
            "--form",
            "elink",
        ],
        &["next", "--store", "memory", "--format", "compact"],
        &[
            "next", "--store", "memory", "--form", "hex", "--format", "json",
        ],
        &["next", "--store", "memory", "--json"],
        &["next", "--strategy", "sharded", "--store", "memory"],
        &["next", "--count", "many"],
    ] {
        let output = gdid(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert_bad_input(&gdid(&[
        "next",
        "--store",
        "memory",
        "--sequence",
        "bad name",
    ]));
}

#[test]
fn an_unreachable_store_is_exit_status_1_with_the_url_and_no_password() {
    let output = gdid(&["next", "--store", "mysql://root:secret@127.0.0.1:1/test"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("gdid: cannot connect to mysql://root"),
        "{stderr}"
    );
    assert!(stderr.contains("@127.0.0.1:1/test"), "{stderr}");
    assert!(!stderr.contains("secret"));
}

#[test]
fn a_bad_store_url_is_refused_without_its_password() {
    for url in ["redis://root:hunter2@127.0.0.1/x", "http://u:hunter2@h/x"] {
        for command in ["next", "agent", "bench"] {
            let output = gdid(&[command, "--store", url]);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{command} {url}: {stderr}");
            assert!(!stderr.contains("hunter2"), "{command} {url}: {stderr}");
        }
    }
}

#[test]
fn a_flag_or_value_clap_refuses_is_one_line_too() {
    for args in [
        &["next", "--count", "many"][..],
        &["next", "--strategy", "nope"],
        &["next", "--bogus"],
        &["next", "--store", "memory", "--authority", "16"],
        &["next", "--store", "redis://u:hunter2@h"],
        &["--count", "2", "next"],
        &["inspect"],
    ] {
        let output = gdid(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("gdid: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{args:?}: {stderr}");
    }
    // Help is not an error: on stdout, exit status 0.
    let help = gdid(&["next", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--store <URL>"));
}

#[test]
fn a_url_the_driver_cannot_use_is_bad_input_without_its_password() {
    for url in [
        "postgres://u:hunter2@127.0.0.1:notaport/db",
        "mysql://u:hunter2@127.0.0.1:3306/db?sslmode=bogus",
        "postgres://u:hunter2@127.0.0.1:5432/db?sslmode=bogus",
        "mongodb://u:hunter2@127.0.0.1:99999/",
    ] {
        let output = gdid(&["next", "--store", url]);
        assert_bad_input(&output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("hunter2"), "{url}: {stderr}");
    }
}

#[test]
fn convert_reads_arguments_or_stdin_and_reports_bad_lines() {
    let out = lines(&gdid(&["convert", "--to", "hex", "1293:3:57"]));
    assert_eq!(out, ["0000050d3000000000000039"]);

    let output = gdid_with_stdin(
        &["convert", "--from", "compact", "--to", "text"],
        "8d0a9307\nnot-hex\n0011\n",
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "1293:3:57\n0:1:1\n"
    );
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .starts_with("gdid: line 2: invalid compact value \"not-hex\""),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn memory_stores_are_spelt_memory_or_memory_colon_and_keep_counters_too() {
    for store in ["memory", "memory:", "memory:named"] {
        let ids = lines(&gdid(&["next", "--store", store, "--count", "2"]));
        assert_eq!(ids, ["0:1:1", "0:1:2"], "{store}");
    }
    let counted = lines(&gdid(&[
        "next",
        "--store",
        "memory:",
        "--strategy",
        "one-at-a-time",
        "--count",
        "3",
    ]));
    assert_eq!(counted, ["1", "2", "3"]);
    let refused = gdid(&["next", "--store", "memory:", "--strategy", "window"]);
    assert_bad_input(&refused);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("needs a database store"));
}
