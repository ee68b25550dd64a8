//! [`Row`]: what one fault scenario did and what callers saw, a line of the table of
//! docs/benchmarks/faults.md; [`Outcome`], a row and what its test judges by besides.

use std::fmt;
use std::time::Duration;

use gdid::Gdid;
use gdid::verify::Ledger;

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
    /// How long service took to come back, and callers' latency: what was measured of them.
    pub timing: Timing,
}

/// The times of a [`Row`], each `None` where the scenario does not measure it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// How long until service was back after the fault ended (or failover took).
    pub recovery: Option<Duration>,
    /// Callers' latency at the 99.9th percentile.
    pub p999: Option<Duration>,
    /// The slowest call.
    pub slowest: Option<Duration>,
}

impl Timing {
    /// Nothing measured: a scenario that times neither service nor callers.
    pub const UNMEASURED: Timing = Timing {
        recovery: None,
        p999: None,
        slowest: None,
    };
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
            time(self.timing.recovery),
            time(self.timing.p999),
            time(self.timing.slowest),
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

/// How many of `ids` repeat an id before them: the count of `gdid verify`'s ledger
/// ([`gdid::verify::Ledger`]), the checker of every scenario.
pub fn duplicates(ids: &[Gdid]) -> u64 {
    let mut ledger = Ledger::new();
    let writer = ledger.writer("scenario");
    for id in ids {
        ledger.record(writer, *id);
    }
    ledger.report().repeated
}

/// A scenario's row, and a count its test judges by besides.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// What happened, for the table.
    pub row: Row,
    /// Calls made while the generator had no id in hand: each waited on the store (or failed).
    /// None may, while the ids in hand cover the fault.
    pub calls_without_ids: u64,
}
