//! `gdid verify` as a user runs it: files and stdin, each file a writer or labelled lines, one id
//! in two forms is one id, a repeat names both forms, writers and places (exit 1), ids gone
//! backwards reported (exit 1 with --ordered), a line that is no id named (exit 2). And on the
//! ids of real runs: `gdid next` twice on one SQLite file verifies clean, the same output twice
//! does not.

mod common;

use common::{gdid, gdid_with_stdin, stderr, stdout};
use gdid_testkit::sqlite_url;

/// A temporary file holding `lines`.
fn file(name: &str, lines: &[&str]) -> String {
    let dir = std::env::temp_dir().join(gdid_testkit::fresh("cli-verify"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.display().to_string()
}

#[test]
fn unique_ids_from_two_files_pass_with_a_summary_per_era_and_authority() {
    let a = file("a.txt", &["0:1:1", "0:1:2", "7:2:1"]);
    let b = file("b.txt", &["0:1:3", "", "0:1:4"]);
    let verified = gdid(&["verify", &a, &b]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    let said = stdout(&verified);
    assert!(
        said.starts_with("5 ids from 2 writer(s): 0 repeated, 0 went backwards"),
        "{said}"
    );
    assert!(
        said.contains("era 0 authority 1: 4 ids, 0:1:1 to 0:1:4"),
        "{said}"
    );
    assert!(
        said.contains("era 7 authority 2: 1 ids, 7:2:1 to 7:2:1"),
        "{said}"
    );
}

#[test]
fn one_id_in_two_forms_is_a_repeat_naming_both_forms_writers_and_lines() {
    let id: gdid::Gdid = "1280:2:8902382".parse().unwrap();
    let hex = format!("{id:x}");
    let elink = "AUCKIR-ABASVITILT";
    assert_eq!(gdid::Gdid::parse_any(elink).unwrap(), id);
    let input = format!("svc-a 1280:2:8902382\nsvc-b {hex}\nsvc-c 0:1:1\nsvc-c {elink}\n");
    let verified = gdid_with_stdin(&["verify", "--labelled"], &input);
    assert_eq!(verified.status.code(), Some(1));
    let said = stdout(&verified);
    assert!(
        said.starts_with("4 ids from 3 writer(s): 2 repeated"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "1280:2:8902382 repeated: as \"1280:2:8902382\" by svc-a (stdin:1); as {hex:?} by svc-b \
             (stdin:2); as \"{elink}\" by svc-c (stdin:4)"
        )),
        "{said}"
    );
    assert!(stderr(&verified).contains("2 id(s) issued more than once"));
}

#[test]
fn ids_gone_backwards_are_reported_and_fail_only_with_ordered() {
    let lines = "w 0:1:5\nw 0:1:4\nv 0:1:1\n";
    let loose = gdid_with_stdin(&["verify", "--labelled"], lines);
    assert_eq!(loose.status.code(), Some(0));
    assert!(stdout(&loose).contains("w went backwards: 0:1:4 after 0:1:5"));
    let strict = gdid_with_stdin(&["verify", "--labelled", "--ordered"], lines);
    assert_eq!(strict.status.code(), Some(1));
    assert!(stderr(&strict).contains("1 id(s) went backwards within their writer"));
}

#[test]
fn a_line_that_is_no_id_or_a_missing_file_is_bad_input_named_with_its_place() {
    let bad = file("bad.txt", &["0:1:1", "0:16:1"]);
    let refused = gdid(&["verify", &bad]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(&format!("{bad}:2: \"0:16:1\" is no id")),
        "{}",
        stderr(&refused)
    );
    let unlabelled = gdid_with_stdin(&["verify", "--labelled"], "0:1:1\n");
    assert_eq!(unlabelled.status.code(), Some(2));
    assert!(stderr(&unlabelled).contains("stdin:1: \"0:1:1\" is not `LABEL ID`"));
    let missing = gdid(&["verify", "/nonexistent/ids.txt"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("/nonexistent/ids.txt"));
}

#[test]
fn the_ids_of_two_runs_on_one_store_verify_and_a_replayed_run_does_not() {
    let store = sqlite_url("cli-verify-runs");
    let next = || gdid(&["next", "--store", &store, "--count", "50"]);
    let (first, second) = (next(), next());
    let (first, second) = (stdout(&first).to_owned(), stdout(&second).to_owned());
    let a = file("first.txt", &first.lines().collect::<Vec<_>>());
    let b = file("second.txt", &second.lines().collect::<Vec<_>>());
    let clean = gdid(&["verify", "--ordered", &a, &b]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    assert!(stdout(&clean).starts_with("100 ids from 2 writer(s): 0 repeated"));
    let replayed = gdid(&["verify", &a, &b, &a]);
    assert_eq!(replayed.status.code(), Some(1));
    assert!(stdout(&replayed).starts_with("150 ids from 2 writer(s): 50 repeated"));
}
