//! `gdid check` as a user runs it: the default store (a SQLite file on disk) is safe and says
//! why (exit 0); a file on a RAM file system and the `memory` store are named at risk (exit 1);
//! several stores are each reported; `--json` is one array; a bad URL exits 2, a server that
//! cannot be reached 1. Every verdict of PostgreSQL and MariaDB is tested on private servers
//! (gdid-faults' `test_check`).

mod common;

use std::path::Path;

use common::{gdid, gdid_in, stderr, stdout};

#[test]
fn the_default_store_is_safe_and_says_why() {
    let dir = std::env::temp_dir().join(gdid_testkit::fresh("cli-check"));
    std::fs::create_dir_all(&dir).unwrap();
    let checked = gdid_in(&dir, &["check"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    let said = stdout(&checked);
    assert!(
        said.starts_with("store: sqlite:gdid.sqlite\nserver: SQLite 3."),
        "{said}"
    );
    for line in [
        "safe             journal_mode = wal",
        "safe             synchronous = FULL",
        "each commit is flushed to disk before it is acknowledged",
        "verdict: safe",
    ] {
        assert!(said.contains(line), "no {line:?} in\n{said}");
    }
    assert!(dir.join("gdid.sqlite").is_file());
}

#[test]
fn a_file_in_memory_and_the_memory_store_are_named_at_risk() {
    let shm = Path::new("/dev/shm");
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    assert!(
        mounts.contains(" /dev/shm tmpfs "),
        "/dev/shm is a tmpfs on every Linux machine this runs on:\n{mounts}"
    );
    let file = shm.join(format!("{}.sqlite", gdid_testkit::fresh("cli-check")));
    let url = format!("sqlite:{}", file.display());
    let checked = gdid(&["check", "--store", &url, "--store", "memory"]);
    for suffix in ["", "-wal", "-shm"] {
        std::fs::remove_file(format!("{}{suffix}", file.display())).ok();
    }
    assert_eq!(checked.status.code(), Some(1), "{}", stdout(&checked));
    let said = stdout(&checked);
    assert!(said.contains("issued again     file = /dev/shm/"), "{said}");
    assert!(said.contains("(tmpfs)"), "{said}");
    assert!(said.contains("\n\nstore: memory\n"), "{said}");
    assert_eq!(
        stderr(&checked).trim(),
        format!("gdid: at risk: {url}: file (issued again), memory: memory (issued again)")
    );
}

#[test]
fn json_is_one_array_of_reports() {
    let checked = gdid(&["check", "--store", "memory", "--json"]);
    assert_eq!(checked.status.code(), Some(1));
    let reports: serde_json::Value = serde_json::from_str(stdout(&checked)).expect("JSON");
    let report = &reports.as_array().expect("an array")[0];
    assert_eq!(report["store"], "memory");
    assert_eq!(report["safe"], false);
    assert_eq!(report["verdict"], "issued again");
    assert_eq!(report["settings"][0]["name"], "memory");
    assert_eq!(report["settings"][0]["verdict"], "issued again");
}

#[test]
fn a_bad_url_exits_2_and_a_server_not_there_1() {
    let bad = gdid(&["check", "--store", "redis://u:hunter2@h"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(!stderr(&bad).contains("hunter2"), "{}", stderr(&bad));
    let gone = gdid(&["check", "--store", "postgres://u:hunter2@127.0.0.1:1/x"]);
    assert_eq!(gone.status.code(), Some(1), "{}", stderr(&gone));
    let said = stderr(&gone);
    assert!(
        said.contains("cannot connect to postgres://u:***@127.0.0.1:1/x"),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");
}
