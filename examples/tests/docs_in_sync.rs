//! The Rust blocks of the tutorial and of the web-frameworks guide are parts of compiled
//! examples: each block must appear, verbatim, in the example it comes from, so that what the
//! docs show is what CI builds and tests.

use std::path::Path;

/// The ```rust blocks of a Markdown file, each with the line it starts on.
fn rust_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        match &mut current {
            None if line.trim_end() == "```rust" => current = Some((index + 2, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some((_, block)) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(current.is_none(), "a ```rust block is not closed");
    blocks
}

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fails naming each block of `doc` that is in none of `sources`.
fn check(doc: &str, sources: &[&str]) {
    let markdown = read(doc);
    let texts: Vec<String> = sources.iter().map(|source| read(source)).collect();
    let blocks = rust_blocks(&markdown);
    assert!(!blocks.is_empty(), "{doc} has no ```rust block");
    let missing: Vec<String> = blocks
        .iter()
        .filter(|(_, block)| !texts.iter().any(|text| text.contains(block.as_str())))
        .map(|(line, block)| format!("{doc}:{line}:\n{block}"))
        .collect();
    assert!(
        missing.is_empty(),
        "these blocks are not, verbatim, in {}:\n\n{}",
        sources.join(" or "),
        missing.join("\n")
    );
}

#[test]
fn the_tutorial_shows_the_tutorial_example() {
    check("../docs/tutorial.md", &["tutorial_orders.rs"]);
}

#[test]
fn the_web_frameworks_guide_shows_the_web_examples() {
    check(
        "../docs/how-to/web-frameworks.md",
        &["web_axum.rs", "web_actix.rs"],
    );
}
