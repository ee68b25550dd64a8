//! Authority numbers belong to the stores (hole 1 of the uniqueness issue): `gdid next` reads
//! each store's number from the store, whatever the order or count of `--store`, and refuses a
//! `--authority` that the store's record contradicts before issuing anything.

use std::collections::HashSet;
use std::process::{Child, Command, Output, Stdio};

use common::{gdid, stderr};
use gdid_testkit::{fresh, server, sqlite_url};

mod common;

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gdid binary starts")
}

/// Runs `gdid` with `first` and with `second` at the same moment: both are started before
/// either is waited on, so that they race.
fn race(first: &[&str], second: &[&str]) -> [Output; 2] {
    [spawn(first), spawn(second)].map(|child| child.wait_with_output().unwrap())
}

fn ids(output: &Output) -> Vec<String> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The authority segment of a GDID's text form.
fn authority(id: &str) -> &str {
    id.split(':').nth(1).expect("era:authority:counter")
}

/// `next --count 3` of `scope` on `stores`, in that order.
fn next(stores: &[&str], scope: &str, more: &[&str]) -> Output {
    let mut args = vec!["next", "--scope", scope, "--count", "3"];
    for store in stores {
        args.extend(["--store", store]);
    }
    args.extend_from_slice(more);
    gdid(&args)
}

/// The reproduction on stores `a` and `b`: a store listed in front of `a` takes a number
/// of its own, never `a`'s, and `a` keeps its number in any order.
fn numbers_follow_the_stores(a: &str, b: &str) {
    let scope = fresh("numbers");
    let alone = ids(&next(&[a], &scope, &[]));
    let b_in_front = ids(&next(&[b, a], &scope, &[]));
    let a_in_front = ids(&next(&[a, b], &scope, &[]));
    let all: HashSet<&String> = alone.iter().chain(&b_in_front).chain(&a_in_front).collect();
    assert_eq!(all.len(), 9, "{a} then {b}: an id issued twice: {all:?}");
    let a_number = authority(&alone[0]);
    assert_eq!(authority(&a_in_front[0]), a_number, "{a} kept its number");
    assert_ne!(
        authority(&b_in_front[0]),
        a_number,
        "{b} took a number of its own"
    );

    // A number the store's record contradicts: exit 2, one line, no id.
    let other = if a_number == "7" { "8" } else { "7" };
    let refused = next(&[a], &scope, &["--authority", other]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(refused.stdout.is_empty(), "no id is issued");
    assert!(
        stderr.contains(&format!(
            "is authority {a_number} (recorded in it), not {other}"
        )),
        "{stderr}"
    );
    // The store's own number is accepted.
    ids(&next(&[a], &scope, &["--authority", a_number]));
}

#[test]
fn authority_numbers_follow_the_store_not_the_order_of_store() {
    let dir = std::env::temp_dir().join(fresh("gdid-cli-numbers"));
    std::fs::create_dir_all(&dir).unwrap();
    gdid_testkit::ran("SQLite");
    let sqlite = |name: &str| format!("sqlite:{}", dir.join(name).display());
    numbers_follow_the_stores(&sqlite("a.sqlite"), &sqlite("b.sqlite"));

    // The same file under two spellings is one store: it cannot be two authorities.
    let refused = next(&[&sqlite("a.sqlite"), &sqlite("./a.sqlite")], "twice", &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(refused.stdout.is_empty());

    // A database on each server (the same ones every run: their records stay true).
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if let (Some(mysql), Some(postgres)) = (server("GDID_MYSQL_URL"), server("GDID_POSTGRES_URL")) {
        let (a, b) = runtime.block_on(async {
            (
                gdid_testkit::database(&mysql, "gdid_cli_numbers").await,
                gdid_testkit::database(&postgres, "gdid_cli_numbers").await,
            )
        });
        numbers_follow_the_stores(&a, &b);
    }
}

/// Two processes giving one fresh store two different numbers at the same moment: the first
/// number recorded wins, the other process is refused (exit 2) and prints no id.
#[test]
fn two_processes_numbering_a_fresh_store_at_once_agree_on_one_number() {
    for round in 0..5 {
        let store = sqlite_url("gdid-cli-numbers-race");
        let store = store.as_str();
        let args = |number| {
            [
                "next",
                "--store",
                store,
                "--authority",
                number,
                "--count",
                "5",
            ]
        };
        let outputs = race(&args("3"), &args("4"));
        let won: Vec<&Output> = outputs.iter().filter(|o| o.status.success()).collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: exactly one number is recorded"
        );
        let lost = outputs.iter().find(|o| !o.status.success()).unwrap();
        assert_eq!(lost.status.code(), Some(2), "round {round}");
        assert!(
            lost.stdout.is_empty(),
            "round {round}: the loser issued nothing"
        );
        let issued = ids(won[0]);
        let number = authority(&issued[0]).to_owned();
        assert!(issued.iter().all(|id| authority(id) == number));
        // Afterwards the store is that authority for everyone.
        let again = ids(&gdid(&["next", "--store", store, "--count", "1"]));
        assert_eq!(authority(&again[0]), number, "round {round}");
    }
}

/// Counters that carry no authority number (one-at-a-time, sharded) record none, nor does
/// reading the sequences or moving the ranges: two stores first used for them alone can later be
/// listed together, or be given any number.
fn counters_leave_the_number_free(a: &str, b: &str) {
    let scope = fresh("unnumbered");
    for store in [a, b] {
        ids(&next(&[store], &scope, &["--strategy", "one-at-a-time"]));
        ids(&next(
            &[store],
            &scope,
            &["--strategy", "sharded", "--ranges", "4"],
        ));
        for admin in [
            &["sequences", "list", "--store", store][..],
            &[
                "sequences",
                "skip-ranges",
                "--store",
                store,
                "--sequence",
                "orders",
                "--by",
                "10",
            ],
        ] {
            let output = gdid(admin);
            assert!(output.status.success(), "{admin:?}: {}", stderr(&output));
        }
    }
    // Neither took number 1 (databases kept from an earlier run hold 2 and 5): listed together
    // they are 2 and 5, as asked.
    let issued = ids(&next(
        &[a, b],
        &scope,
        &["--authority", "2", "--authority", "5"],
    ));
    assert_eq!(authority(&issued[0]), "2", "{issued:?}");
    // --authority numbers GDID authorities only: with a counter it is refused, nothing issued.
    for strategy in ["one-at-a-time", "sharded"] {
        let refused = next(&[b], &scope, &["--strategy", strategy, "--authority", "5"]);
        assert_eq!(refused.status.code(), Some(2), "{strategy}");
        assert!(refused.stdout.is_empty(), "{strategy}");
    }
}

#[test]
fn one_at_a_time_and_sharded_counters_record_no_authority_number() {
    counters_leave_the_number_free(
        &sqlite_url("gdid-cli-unnumbered-a"),
        &sqlite_url("gdid-cli-unnumbered-b"),
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (variable, a, b) in [
        (
            "GDID_MYSQL_URL",
            "gdid_cli_unnumbered_a",
            "gdid_cli_unnumbered_b",
        ),
        (
            "GDID_POSTGRES_URL",
            "gdid_cli_unnumbered_a",
            "gdid_cli_unnumbered_b",
        ),
    ] {
        if let Some(url) = server(variable) {
            let (a, b) = runtime.block_on(async {
                (
                    gdid_testkit::database(&url, a).await,
                    gdid_testkit::database(&url, b).await,
                )
            });
            counters_leave_the_number_free(&a, &b);
        }
    }
}

/// Two processes listing the same two fresh stores in opposite orders at the same moment: both
/// number the fresh stores alike (whatever the order given), so both issue ids and the stores
/// end up with two numbers, never both recorded as 1 (which would keep them from ever being
/// listed together again).
#[test]
fn two_processes_listing_fresh_stores_in_opposite_orders_agree_on_their_numbers() {
    for round in 0..20 {
        let (a, b) = (
            sqlite_url("gdid-cli-orders-a"),
            sqlite_url("gdid-cli-orders-b"),
        );
        let ab = ["next", "--store", &a, "--store", &b, "--count", "3"];
        let ba = ["next", "--store", &b, "--store", &a, "--count", "3"];
        for output in race(&ab, &ba) {
            ids(&output);
        }
        let together = ids(&next(&[&a, &b], "after", &[]));
        assert_eq!(authority(&together[0]), "1", "round {round}: a is 1");
        let b_alone = ids(&next(&[&b], "after", &[]));
        assert_eq!(authority(&b_alone[0]), "2", "round {round}: b is 2");
    }
}
