//! The README's example is the crate docs' first doc test, line for line (the doc test runs it,
//! in a folder of its own, and checks the id it prints), and the README's install section names
//! what the manifests say: the Rust version `gdid` needs and the sqlx release whose `Gdid`
//! columns `gdid` implements. `scripts/user-program` and `scripts/newcomer` build and run the
//! same text as a user's program.

/// The lines of the first fenced block opened by the line `fence` after the line `marker` in
/// `text`, up to its closing fence.
fn block_after<'a>(text: &'a str, marker: &str, fence: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|line| *line != marker);
    assert!(lines.next().is_some(), "no {marker:?} found");
    let mut block = lines.skip_while(|line| *line != fence);
    assert!(block.next().is_some(), "no {fence:?} after {marker:?}");
    block.take_while(|line| !line.starts_with("```")).collect()
}

const README: &str = include_str!("../../README.md");

#[test]
fn the_readme_example_is_the_doc_tested_one() {
    let lib = include_str!("../src/lib.rs");
    let shown = block_after(README, "## Your first id", "```rust");
    assert!(
        shown.iter().any(|line| line.contains("Store::open")),
        "{shown:?}"
    );
    let doc_lines: Vec<String> = lib
        .lines()
        .map_while(|line| line.strip_prefix("//!"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line).to_owned())
        .collect();
    let doc = doc_lines.join("\n");
    let tested: Vec<&str> = block_after(&doc, "# gdid", "```rust,standalone_crate")
        .into_iter()
        .filter(|line| !line.starts_with("# ") && *line != "#")
        .collect();
    assert_eq!(
        shown, tested,
        "README block vs the crate docs' first example"
    );
    // The output the README shows is the one the doc test checks.
    let output = block_after(README, "## Your first id", "```text");
    assert!(output.contains(&"new id: 0:1:1"), "{output:?}");
    assert!(
        doc.contains(r#"# assert_eq!(id.to_string(), "0:1:1");"#),
        "the doc test no longer checks the id the README shows"
    );
}

/// The value of `key = "…"` (or `key = { version = "…" … }`) on the line of `text` that starts
/// with `key =`.
fn version_of<'a>(text: &'a str, key: &str) -> &'a str {
    let line = text
        .lines()
        .find(|line| line.starts_with(&format!("{key} =")))
        .unwrap_or_else(|| panic!("no {key} line"));
    let rest = &line[line.find('"').unwrap_or_else(|| panic!("{line}")) + 1..];
    &rest[..rest.find('"').unwrap_or_else(|| panic!("{line}"))]
}

#[test]
fn the_readme_names_the_versions_of_the_manifests() {
    let manifest = include_str!("../Cargo.toml");
    let workspace = include_str!("../../Cargo.toml");
    let rust = version_of(manifest, "rust-version");
    assert!(
        README.contains(&format!("You need Rust {rust} or newer")),
        "the README's install section must name gdid's rust-version, {rust}"
    );
    // A user's sqlx must be the release gdid-core implements `Gdid`'s columns for, or
    // `.bind(id)` does not compile.
    let shown = block_after(README, "## Install", "```toml").join("\n");
    assert_eq!(
        version_of(&shown, "sqlx"),
        version_of(workspace, "sqlx"),
        "the README's sqlx vs the workspace's"
    );
    assert!(shown.contains("gdid = { path = "), "{shown}");
}
