//! The block generator's slice hand-off, model-checked with loom: the check is
//! `tests/loom_block_handoff.rs`, run by
//!
//! ```text
//! RUSTFLAGS="--cfg gdid_loom" CARGO_TARGET_DIR=target/loom \
//!   cargo test -p gdid-engine-loom --release
//! ```
//!
//! It is a crate of its own because a test's build takes every dev-dependency of its crate:
//! inside gdid-engine it built the test kit, with every database driver, in release under the
//! flag. This library is empty.
