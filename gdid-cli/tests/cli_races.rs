//! Processes of `gdid next` started at the same moment on one fresh sequence: what one creates,
//! the other finds. Each case spawns both processes before waiting on either, so they race.

use std::collections::HashSet;
use std::process::{Child, Command, Output, Stdio};

use gdid_testkit::{fresh, server, sqlite_url};

/// `gdid next --strategy sharded` on `store`, started and left running.
fn spawn_sharded(store: &str, sequence: &str, ranges: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args([
            "next",
            "--store",
            store,
            "--strategy",
            "sharded",
            "--sequence",
            sequence,
            "--digits",
            "12",
            "--ranges",
            ranges,
            "--count",
            "5",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gdid binary starts")
}

/// The ids `output` printed (none for a failed run).
fn ids(output: &Output) -> Vec<u64> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.parse().expect("an id per line"))
        .collect()
}

/// Two processes asking for 8 and 3 ranges on one fresh sequence of `store`, `rounds` times:
/// exactly one issues its 5 ids, the other exits 2 (a layout refused) having printed nothing,
/// and no id is printed twice. Before layouts were recorded, both processes often exited 0
/// with ranges of both layouts stored, overlapping.
fn racing_layouts_leave_exactly_one(store: &str, rounds: usize) {
    for round in 0..rounds {
        let sequence = fresh("race");
        let eight = spawn_sharded(store, &sequence, "8");
        let three = spawn_sharded(store, &sequence, "3");
        let outputs = [
            eight.wait_with_output().unwrap(),
            three.wait_with_output().unwrap(),
        ];
        let codes: Vec<Option<i32>> = outputs.iter().map(|o| o.status.code()).collect();
        let says = || {
            outputs
                .iter()
                .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                .collect::<Vec<_>>()
                .join(" | ")
        };
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [Some(0), Some(2)],
            "{store} round {round}: exit codes {codes:?}: {}",
            says()
        );
        let mut seen = HashSet::new();
        for output in &outputs {
            let printed = ids(output);
            let expected = if output.status.success() { 5 } else { 0 };
            assert_eq!(printed.len(), expected, "{store} round {round}: {}", says());
            for id in printed {
                assert!(seen.insert(id), "{store} round {round}: {id} printed twice");
            }
        }
        let refused = outputs.iter().find(|o| !o.status.success()).unwrap();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("refused"),
            "{store} round {round}: {stderr}"
        );
    }
}

#[test]
fn racing_layouts_leave_exactly_one_on_sqlite() {
    racing_layouts_leave_exactly_one(&sqlite_url("gdid-cli-race"), 6);
}

#[test]
fn racing_layouts_leave_exactly_one_on_the_servers() {
    for var in ["GDID_POSTGRES_URL", "GDID_MYSQL_URL", "GDID_MONGODB_URI"] {
        if let Some(url) = server(var) {
            racing_layouts_leave_exactly_one(&url, 6);
        }
    }
}
