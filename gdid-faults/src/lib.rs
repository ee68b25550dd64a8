//! The fault suite: ids are never repeated, and a store outage shorter than the cover time is
//! invisible to callers. Each scenario drives real servers (or real `gdid` processes) on
//! 127.0.0.1 and returns a [`Row`] of what happened; the tests assert on the rows, and
//! `cargo run -p gdid-faults --release` prints them as the table of docs/reliability.md.

mod calls;
pub mod corrupt;
pub mod load;
pub mod proxy;
pub mod scenarios;
pub mod server;
pub mod store;

use std::fmt;
use std::time::Duration;

pub use proxy::FaultProxy;

/// What one fault scenario did and what callers saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The fault.
    pub fault: String,
    /// What was done, in a few words.
    pub done: String,
    /// Ids issued to callers.
    pub issued: u64,
    /// Calls that returned an error.
    pub caller_errors: u64,
    /// Ids issued more than once (must be 0).
    pub duplicates: u64,
    /// Counter values reserved and never issued (crashes, abandoned blocks).
    pub lost_to_gaps: u64,
    /// How long until service was back after the fault ended (or failover took), if measured.
    pub recovery: Option<Duration>,
    /// Callers' latency at the 99.9th percentile, if measured.
    pub p999: Option<Duration>,
    /// The slowest call, if measured.
    pub slowest: Option<Duration>,
}

impl Row {
    /// The row as a markdown table line.
    pub fn markdown(&self) -> String {
        let time = |d: Option<Duration>| d.map_or_else(|| "—".to_owned(), |d| format!("{d:.1?}"));
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            self.fault,
            self.done,
            self.issued,
            self.caller_errors,
            self.duplicates,
            self.lost_to_gaps,
            time(self.recovery),
            time(self.p999),
            time(self.slowest),
        )
    }

    /// The header of [`Row::markdown`] lines.
    pub const HEADER: &'static str = "| fault | what was done | ids issued | caller errors | duplicates | ids lost to gaps | recovery | callers' p99.9 | slowest call |\n|---|---|---|---|---|---|---|---|---|";
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.markdown())
    }
}

/// How many of `ids` repeat an id before them (sorts `ids`).
pub fn duplicates<T: Ord>(ids: &mut [T]) -> u64 {
    ids.sort_unstable();
    ids.windows(2)
        .map(|pair| u64::from(pair[0] == pair[1]))
        .sum()
}

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
