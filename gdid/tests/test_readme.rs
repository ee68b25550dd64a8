//! The README's front-door example is the crate docs' first doc test, line for line: the README
//! cannot run it itself (its blocks are gdid-core's doc tests), so this checks they agree.

/// The lines of the first fenced block after `marker` in `text`, up to its closing fence.
fn block_after<'a>(text: &'a str, marker: &str, fence: &str) -> Vec<&'a str> {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} found"));
    let mut lines = text[start..]
        .lines()
        .skip_while(|line| *line != fence)
        .skip(1);
    lines
        .by_ref()
        .take_while(|line| !line.starts_with("```"))
        .collect()
}

#[test]
fn the_readme_example_is_the_doc_tested_one() {
    let readme = include_str!("../../README.md");
    let lib = include_str!("../src/lib.rs");
    let shown = block_after(readme, "## Start here: the `gdid` crate", "```rust,ignore");
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
}
