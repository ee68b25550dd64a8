//! The exit status of `gdid next` reads the one decision of what a refusal leaves to do: 1 when
//! trying again may help (a store that cannot be reached), 2 when no retry will (the caller's
//! input; a store an operator must repair first: an exhausted sequence, a store that is another
//! authority), at open and at the first block alike. SQLite files and a closed port.

mod common;

use common::{gdid, stderr};

/// A fresh SQLite store in the temporary folder.
fn store(name: &str) -> String {
    let path = std::env::temp_dir().join(format!(
        "gdid-refusals-{name}-{}.sqlite",
        uuid::Uuid::new_v4()
    ));
    format!("sqlite:{}", path.display())
}

#[test]
fn the_caller_s_input_exits_2() {
    let url = store("stop");
    let refused = gdid(&["next", "--store", &url, "--sequence", "a b"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(refused.stdout.is_empty());
}

#[test]
fn a_store_that_cannot_be_reached_exits_1() {
    let refused = gdid(&["next", "--store", "mysql://root@127.0.0.1:1/test"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(refused.stdout.is_empty());
}

/// An exhausted sequence is lasting: exit 2 at once, not a wait for the request timeout.
#[test]
fn an_exhausted_sequence_exits_2_at_once() {
    let url = store("exhausted");
    let first = gdid(&["next", "--store", &url, "--sequence", "s"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let last = (1u64 << 60).to_string();
    let raised = gdid(&[
        "sequences",
        "set-floor",
        "--store",
        &url,
        "--scope",
        "default",
        "--sequence",
        "s",
        "--era",
        &u32::MAX.to_string(),
        "--at",
        &last,
    ]);
    assert_eq!(raised.status.code(), Some(0), "{}", stderr(&raised));
    let started = std::time::Instant::now();
    let refused = gdid(&["next", "--store", &url, "--sequence", "s"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("exhausted"),
        "{}",
        stderr(&refused)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "said at once, not after the request timeout"
    );
}

/// A store that is another authority than asked: exit 2 at open, as at the first block.
#[test]
fn a_store_that_is_another_authority_exits_2() {
    let url = store("number");
    let first = gdid(&["next", "--store", &url, "--authority", "3"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let refused = gdid(&["next", "--store", &url, "--authority", "4"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("is authority 3 (recorded in it), not 4"),
        "{}",
        stderr(&refused)
    );
}
