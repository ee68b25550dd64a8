//! Store URLs without argv: `--store-file FILE` (one URL a line, `#` comments) and the
//! `GDID_STORE` environment variable (URLs separated by whitespace), in that order after
//! `--store`, before the default `sqlite:gdid.sqlite`; each URL checked as `--store`'s, and no
//! password in a message.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{gdid_in, stderr, stdout};
use gdid_testkit::fresh;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(fresh(name));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `gdid ARGS` in `dir`, with `GDID_STORE` set to `store` (or unset).
fn gdid_env(dir: &PathBuf, args: &[&str], store: Option<&str>) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_gdid"));
    command.args(args).current_dir(dir).env_remove("GDID_STORE");
    if let Some(store) = store {
        command.env("GDID_STORE", store);
    }
    command.output().expect("the gdid binary runs")
}

fn sqlite(dir: &std::path::Path, name: &str) -> String {
    format!("sqlite:{}", dir.join(name).display())
}

#[test]
fn gdid_store_names_the_stores_separated_by_whitespace() {
    let dir = temp_dir("cli-store-env");
    let (a, b) = (sqlite(&dir, "a.sqlite"), sqlite(&dir, "b.sqlite"));
    let issued = gdid_env(
        &dir,
        &["next", "--count", "2"],
        Some(&format!(" {a}\n\t{b} ")),
    );
    assert!(issued.status.success(), "{}", stderr(&issued));
    assert_eq!(stdout(&issued), "0:1:1\n0:1:2\n");
    // Both are the generator's authorities (numbers recorded in each); no default store here.
    assert!(dir.join("a.sqlite").is_file() && dir.join("b.sqlite").is_file());
    assert!(!dir.join("gdid.sqlite").exists());
    // One store for a command that takes one.
    let many = gdid_env(&dir, &["sequences", "list"], Some(&format!("{a} {b}")));
    assert_eq!(many.status.code(), Some(2), "{}", stderr(&many));
    assert!(
        stderr(&many).contains("2 store URLs in GDID_STORE"),
        "{}",
        stderr(&many)
    );
    let one = gdid_env(&dir, &["sequences", "list"], Some(&a));
    assert!(stdout(&one).contains(" default "), "{}", stdout(&one));
    // --store comes first; a blank GDID_STORE is none.
    let given = gdid_env(&dir, &["next", "--store", "memory"], Some(&a));
    assert_eq!(stdout(&given), "0:1:1\n");
    let blank = gdid_env(&dir, &["next"], Some("  "));
    assert!(blank.status.success(), "{}", stderr(&blank));
    assert!(dir.join("gdid.sqlite").is_file());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_store_file_holds_one_url_a_line() {
    let dir = temp_dir("cli-store-file");
    let file = dir.join("stores");
    let a = sqlite(&dir, "a.sqlite");
    std::fs::write(&file, format!("# the store\n\n  {a}  \n")).unwrap();
    let file = file.display().to_string();
    // Before GDID_STORE.
    let issued = gdid_env(&dir, &["next", "--store-file", &file], Some("memory"));
    assert_eq!(stdout(&issued), "0:1:1\n", "{}", stderr(&issued));
    assert!(dir.join("a.sqlite").is_file());
    for command in [
        &["check", "--store-file", &file][..],
        &["sequences", "list", "--store-file", &file],
        &["schema", "print", "--store-file", &file],
    ] {
        let done = gdid_in(&dir, command);
        assert!(done.status.success(), "{command:?}: {}", stderr(&done));
    }
    // Not both.
    let both = gdid_in(&dir, &["next", "--store", "memory", "--store-file", &file]);
    assert_eq!(both.status.code(), Some(2));
    assert!(
        stderr(&both).contains("cannot be used with"),
        "{}",
        stderr(&both)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_url_is_refused_where_it_was_read_without_its_password() {
    let dir = temp_dir("cli-store-bad");
    let file = dir.join("stores");
    std::fs::write(&file, "memory\nredis://u:hunter2@h\n").unwrap();
    let file = file.display().to_string();
    let from_file = gdid_in(&dir, &["next", "--store-file", &file]);
    assert_eq!(from_file.status.code(), Some(2));
    let said = stderr(&from_file);
    assert!(
        said.contains(&format!("--store-file {file}, line 2")),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");
    let from_env = gdid_env(&dir, &["next"], Some("memory redis://u:hunter2@h"));
    assert_eq!(from_env.status.code(), Some(2));
    let said = stderr(&from_env);
    assert!(said.starts_with("gdid: GDID_STORE: "), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
    let empty = dir.join("empty");
    std::fs::write(&empty, "# none yet\n").unwrap();
    let none = gdid_in(
        &dir,
        &["next", "--store-file", &empty.display().to_string()],
    );
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none).contains("holds no store URL"),
        "{}",
        stderr(&none)
    );
    let missing = gdid_in(&dir, &["next", "--store-file", "no-such-file"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("no-such-file"),
        "{}",
        stderr(&missing)
    );
    assert!(!dir.join("gdid.sqlite").exists());
    std::fs::remove_dir_all(&dir).ok();
}
