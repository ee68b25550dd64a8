//! The fault suite: ids are never repeated, and a store outage shorter than the cover time is
//! invisible to callers. Each scenario drives real servers (or real `gdid` processes) on
//! 127.0.0.1 and returns a [`Row`] of what happened; the tests assert on the rows, and
//! `cargo run -p gdid-faults --release` prints them as the table of docs/reliability.md.

mod calls;
pub mod corrupt;
mod error;
pub mod load;
pub mod netns;
pub mod partition;
pub mod proxy;
mod row;
pub mod scenarios;
pub mod server;
pub mod store;
pub mod url;

pub use error::SetupError;
pub use proxy::FaultProxy;
pub use row::{Outcome, Row, Timing, duplicates};

/// The `gdid` binary of this build: `GDID_BIN`, or `gdid` in the target folder of the running
/// executable (`target/<profile>/` for a binary, `target/<profile>/deps/` for a test).
///
/// # Errors
///
/// When it is not there: build it first (`cargo build -p gdid-cli`).
pub fn gdid_binary() -> Result<std::path::PathBuf, String> {
    if let Ok(path) = std::env::var("GDID_BIN") {
        return Ok(path.into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("gdid"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            format!(
                "no gdid binary near {}: build it (cargo build -p gdid-cli) or set GDID_BIN",
                exe.display()
            )
        })
}
